//! What the command line does when a black box misbehaves beyond a wrong
//! answer: it hangs (`--timeout`, in a call or while it is opened), it
//! crashes the process (a signal), or the user interrupts it (Ctrl-C,
//! SIGTERM, SIGHUP, outside an MPI job; held back while the command stops
//! the processes it started, [`hold`]). Each ends with one line saying
//! so, and the exit status of the signal or of a black box that broke an
//! assumption (3);
//! files are written atomically, so none is left half-written. One that
//! ends the process itself is reported by the process supervising this
//! one (`supervisor`), from the [`State`] kept here.
//!
//! A black box runs inside this process (a shared library, the embedded
//! Python), so a crash cannot be caught and survived, only reported: the
//! handler writes its line with `write(2)` (safe in a signal handler) and
//! lets the signal end the process as it would have.

use std::ffi::c_int;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fprev::error::Result;
use fprev::probe::Probe;

/// What the black box is doing: read by the crash and interrupt handlers,
/// the watchdog, and, after this process has ended, by the `fprev` process
/// that supervises it (`supervisor`), through shared memory. Atomics
/// only, so every reader is safe in a signal handler.
#[repr(C)]
pub(crate) struct State {
    /// [`IDLE`], [`OPENING`] or [`CALLING`].
    phase: AtomicU8,
    /// Milliseconds since [`epoch`] when that phase started.
    started: AtomicU64,
    /// The exit status this process ends with on purpose, set just before
    /// it ends; -1 until then.
    finished: AtomicI32,
    /// The black box's spec, for the lines that name it (cut to its
    /// first `SPEC_MAX` bytes).
    spec_len: AtomicUsize,
    spec: [AtomicU8; SPEC_MAX],
}

const SPEC_MAX: usize = 2048;

/// No black box is being opened or called.
pub(crate) const IDLE: u8 = 0;
/// The black box is being opened (a library loaded, a module imported).
pub(crate) const OPENING: u8 = 1;
/// A call of the black box is under way.
pub(crate) const CALLING: u8 = 2;

impl State {
    const fn new() -> Self {
        State {
            phase: AtomicU8::new(IDLE),
            started: AtomicU64::new(0),
            finished: AtomicI32::new(-1),
            spec_len: AtomicUsize::new(0),
            spec: [const { AtomicU8::new(0) }; SPEC_MAX],
        }
    }

    /// What the black box was doing.
    pub(crate) fn phase(&self) -> u8 {
        self.phase.load(Ordering::SeqCst)
    }

    /// The status this process ended with on purpose, if it did.
    pub(crate) fn finished(&self) -> Option<i32> {
        Some(self.finished.load(Ordering::SeqCst)).filter(|&code| code >= 0)
    }

    /// The spec of the last black box named, if any.
    pub(crate) fn spec(&self) -> Option<String> {
        let len = self.spec_len.load(Ordering::SeqCst);
        let bytes: Vec<u8> = self.spec[..len]
            .iter()
            .map(|b| b.load(Ordering::SeqCst))
            .collect();
        (len > 0).then(|| String::from_utf8_lossy(&bytes).into_owned())
    }

    fn enter(&self, phase: u8) {
        self.started
            .store(epoch().elapsed().as_millis() as u64, Ordering::SeqCst);
        self.phase.store(phase, Ordering::SeqCst);
    }
}

/// This process's state when no supervisor shares it.
static LOCAL: State = State::new();
/// The state in use: [`LOCAL`], or one in memory shared with a supervisor.
static STATE: AtomicPtr<State> = AtomicPtr::new(std::ptr::null_mut());

pub(crate) fn state() -> &'static State {
    let shared = STATE.load(Ordering::SeqCst);
    if shared.is_null() {
        &LOCAL
    } else {
        // SAFETY: set once by `share` to a mapping never unmapped.
        unsafe { &*shared }
    }
}

/// Moves the state into memory shared with the processes forked after it,
/// and returns it; `None` when no such memory can be mapped.
pub(crate) fn share() -> Option<&'static State> {
    // SAFETY: a fresh anonymous mapping, large enough for a State; zeroed
    // memory is a valid State but for `finished`, stored below.
    unsafe {
        let map = libc::mmap(
            std::ptr::null_mut(),
            std::mem::size_of::<State>(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if map == libc::MAP_FAILED {
            return None;
        }
        let shared = map.cast::<State>();
        (*shared).finished.store(-1, Ordering::SeqCst);
        STATE.store(shared, Ordering::SeqCst);
    }
    Some(state())
}

/// Records that this process ends now, on purpose, with `code`, for the
/// supervisor (async-signal-safe: one atomic store).
pub(crate) fn finished(code: i32) {
    state().finished.store(code, Ordering::SeqCst);
}

fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// The signals that end the process with a crash, and their names.
pub(crate) const CRASHES: [(c_int, &str); 5] = [
    (libc::SIGSEGV, "SIGSEGV, an invalid memory access"),
    (libc::SIGBUS, "SIGBUS, a bad memory access"),
    (libc::SIGILL, "SIGILL, an illegal instruction"),
    (libc::SIGFPE, "SIGFPE, an arithmetic fault"),
    (libc::SIGABRT, "SIGABRT, an abort"),
];

/// The handlers in place before [`install`], restored for a crash outside
/// the black box (Rust's own stack-overflow report, say).
static PREVIOUS: [AtomicPtr<libc::sigaction>; 5] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; 5];

/// Installs the crash and interrupt handlers. Call once, early.
pub fn install() {
    epoch();
    // SAFETY: sigaction with handlers that only call async-signal-safe
    // functions (write, sigaction, raise, _exit) and read atomics.
    unsafe {
        for (k, (signal, _)) in CRASHES.iter().enumerate() {
            let previous = Box::into_raw(Box::new(std::mem::zeroed::<libc::sigaction>()));
            if set(*signal, on_crash as *const () as usize, previous) {
                PREVIOUS[k].store(previous, Ordering::SeqCst);
            }
        }
        // A rank of an MPI job is stopped by its mpirun, which reports why.
        #[cfg(feature = "mpi")]
        let in_job = fprev::mpi::in_job();
        #[cfg(not(feature = "mpi"))]
        let in_job = false;
        if !in_job {
            static ENDER_STARTED: std::sync::Once = std::sync::Once::new();
            ENDER_STARTED.call_once(start_ender);
            for signal in ENDING {
                set(
                    signal,
                    on_ending as *const () as usize,
                    std::ptr::null_mut(),
                );
            }
        }
    }
}

/// Sets `handler` for `signal`, on the alternate stack where there is one
/// (a stack overflow still gets its line); saves the old action.
unsafe fn set(signal: c_int, handler: usize, previous: *mut libc::sigaction) -> bool {
    // SAFETY: a zeroed sigaction is valid; the caller's handler is an
    // `extern "C" fn(c_int)`.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler;
        action.sa_flags = libc::SA_ONSTACK;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, previous) == 0
    }
}

/// Names the black box in the lines that report it.
fn name_black_box(spec: &str) {
    let state = state();
    let bytes = &spec.as_bytes()[..spec.len().min(SPEC_MAX)];
    state.spec_len.store(0, Ordering::SeqCst);
    for (to, from) in state.spec.iter().zip(bytes) {
        to.store(*from, Ordering::SeqCst);
    }
    state.spec_len.store(bytes.len(), Ordering::SeqCst);
}

fn write_stderr(bytes: &[u8]) {
    // SAFETY: write(2) on stderr from a valid buffer.
    unsafe {
        libc::write(2, bytes.as_ptr().cast(), bytes.len());
    }
}

fn write_spec() {
    let state = state();
    let len = state.spec_len.load(Ordering::SeqCst);
    if len == 0 {
        write_stderr(b"the black box");
    }
    let mut bytes = [0u8; SPEC_MAX];
    for (to, from) in bytes.iter_mut().zip(&state.spec[..len]) {
        *to = from.load(Ordering::SeqCst);
    }
    write_stderr(&bytes[..len]);
}

extern "C" fn on_crash(signal: c_int) {
    let k = CRASHES.iter().position(|(s, _)| *s == signal).unwrap_or(0);
    // SAFETY: restores the action in place before install (or the default)
    // and re-raises, so the signal ends the process as it would have.
    unsafe {
        if state().phase() != IDLE {
            write_stderr(b"fprev: error: ");
            write_spec();
            write_stderr(b": the black box crashed (");
            write_stderr(CRASHES[k].1.as_bytes());
            write_stderr(
                b"): fprev runs it in its own process and ends with it; run the black box \
                  alone (or under gdb) to see why\n",
            );
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(signal, &default, std::ptr::null_mut());
        } else {
            let previous = PREVIOUS[k].load(Ordering::SeqCst);
            if previous.is_null() {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, std::ptr::null_mut());
            } else {
                libc::sigaction(signal, previous, std::ptr::null_mut());
            }
        }
        // A fault re-faults on return; an abort or a sent signal does not.
        if signal == libc::SIGABRT || signal == libc::SIGFPE {
            libc::raise(signal);
        }
    }
}

/// The signals that end a command on purpose (Ctrl-C, `kill` and
/// `timeout`, a closed terminal, SIGQUIT): the supervisor passes them on,
/// and a command holding them ([`hold`]) ends the processes it started
/// first.
pub(crate) const ENDING: [c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// How many [`Held`]s live, and the first ending signal that came while
/// one did (0: none).
static HOLDS: AtomicUsize = AtomicUsize::new(0);
static PENDING: AtomicI32 = AtomicI32::new(0);

/// Holds the ending signals back while it lives: one that comes is kept
/// for [`Held::signal`] to see (a wait loop stops the processes it started
/// and removes their files), and delivered when the last `Held` is
/// dropped, so that the command still ends with it.
pub(crate) struct Held(());

/// Holds the ending signals back (see [`Held`]).
pub(crate) fn hold() -> Held {
    HOLDS.fetch_add(1, Ordering::SeqCst);
    Held(())
}

impl Held {
    /// The signal that came while signals were held, if one did.
    pub(crate) fn signal(&self) -> Option<c_int> {
        pending()
    }

    /// Ends the process with the signal held back (call it once what it
    /// started is stopped and removed), or with status 130 if none was.
    pub(crate) fn end(self) -> ! {
        std::mem::forget(self);
        HOLDS.store(0, Ordering::SeqCst);
        // SAFETY: raise(3) runs the handler, which ends the process; _exit
        // is reached only if no signal was held.
        unsafe {
            let signal = PENDING.swap(0, Ordering::SeqCst);
            if signal != 0 {
                libc::raise(signal);
            }
            libc::_exit(128 + libc::SIGINT)
        }
    }
}

/// The signal that came while signals were held, if one did.
pub(crate) fn pending() -> Option<c_int> {
    Some(PENDING.load(Ordering::SeqCst)).filter(|&s| s != 0)
}

impl Drop for Held {
    fn drop(&mut self) {
        if HOLDS.fetch_sub(1, Ordering::SeqCst) == 1 {
            let signal = PENDING.swap(0, Ordering::SeqCst);
            if signal != 0 {
                // SAFETY: raise(3) on this thread runs the handler, which
                // ends the process as the signal would have.
                unsafe { libc::raise(signal) };
            }
        }
    }
}

/// The write end of the pipe on which the handler hands an ending signal
/// to the thread that ends the process ([`start_ender`]); -1 where none
/// runs.
static ENDER: AtomicI32 = AtomicI32::new(-1);

/// Starts the thread that ends the process on an ending signal no [`Held`]
/// holds back: it first stops this process's children (1 s, then
/// SIGKILL) and removes the temporary directories the library made
/// (`emit --check`'s), which takes more than a signal handler may call,
/// then ends the process as [`end`] does.
fn start_ender() {
    let mut fds: [c_int; 2] = [-1; 2];
    // SAFETY: pipe2(2) into a two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    let [read, write] = fds;
    let started = std::thread::Builder::new()
        .name("fprev-signals".into())
        .spawn(move || {
            let mut bytes = [0u8; 4];
            // SAFETY: blocks the ending signals in this thread alone, so
            // that none is handled (and waits) here; read(2) into a buffer.
            unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                for signal in ENDING {
                    libc::sigaddset(&mut set, signal);
                }
                libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                while libc::read(read, bytes.as_mut_ptr().cast(), bytes.len()) != 4 {
                    // Another error leaves the ending to the handler.
                    if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                        ENDER.store(-1, Ordering::SeqCst);
                        return;
                    }
                }
            }
            crate::descendants::end_own(Duration::from_secs(1));
            fprev::emit::check::Scratch::remove_all();
            end(c_int::from_ne_bytes(bytes))
        });
    if started.is_ok() {
        ENDER.store(write, Ordering::SeqCst);
    }
}

extern "C" fn on_ending(signal: c_int) {
    if HOLDS.load(Ordering::SeqCst) > 0 {
        let _ = PENDING.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
        return;
    }
    let ender = ENDER.load(Ordering::SeqCst);
    if ender >= 0 {
        // The ender ends the process; this thread waits here meanwhile, so
        // that nothing more is written. Should it not within 10 s, the
        // handler does.
        // SAFETY: write(2) and nanosleep(2), both async-signal-safe.
        unsafe {
            libc::write(ender, signal.to_ne_bytes().as_ptr().cast(), 4);
            let tick = libc::timespec {
                tv_sec: 0,
                tv_nsec: 10_000_000,
            };
            for _ in 0..1000 {
                libc::nanosleep(&tick, std::ptr::null_mut());
            }
        }
    }
    end(signal)
}

/// Ends the process on an ending signal: SIGINT with its line and status
/// 130, any other as its default action does (async-signal-safe).
fn end(signal: c_int) -> ! {
    if signal == libc::SIGINT {
        if state().phase() != IDLE {
            write_stderr(b"\nfprev: interrupted while ");
            write_spec();
            write_stderr(b" ran; nothing was written\n");
        } else {
            write_stderr(b"\nfprev: interrupted; nothing was written\n");
        }
        finished(128 + signal);
    }
    // SAFETY: the default action, the signal unblocked in this thread and
    // raised, ends the process as it would have without a handler; _exit
    // ends it without running anything else.
    unsafe {
        if signal != libc::SIGINT {
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(signal, &default, std::ptr::null_mut());
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(signal);
        }
        libc::_exit(128 + signal)
    }
}

/// A black box whose calls are marked (for the crash line) and timed: a
/// call running longer than the timeout ends the process with one line and
/// exit status 3, since an in-process call cannot be stopped any other way.
pub struct Guarded<P> {
    inner: P,
}

/// Opens the black box `spec` with `open`, guarded as its calls are (the
/// crash line, the timeout: a library's constructor or a module's import
/// runs arbitrary code too).
pub fn open<P: Probe>(spec: &str, open: impl FnOnce() -> Result<P>) -> Result<Guarded<P>> {
    name_black_box(spec);
    state().enter(OPENING);
    let inner = open();
    state().enter(IDLE);
    Ok(Guarded { inner: inner? })
}

impl<P: Probe> Guarded<P> {
    fn call<R>(&mut self, f: impl FnOnce(&mut P) -> R) -> R {
        state().enter(CALLING);
        let r = f(&mut self.inner);
        state().enter(IDLE);
        r
    }
}

/// Starts the watchdog that ends the process when one call of a guarded
/// black box runs longer than `limit`.
pub fn set_timeout(limit: Duration) {
    std::thread::spawn(move || watch(limit));
}

fn watch(limit: Duration) {
    let tick = (limit / 10).clamp(Duration::from_millis(10), Duration::from_millis(200));
    let state = state();
    loop {
        std::thread::sleep(tick);
        let phase = state.phase();
        let started = state.started.load(Ordering::SeqCst);
        let now = epoch().elapsed().as_millis() as u64;
        if phase != IDLE && now.saturating_sub(started) > limit.as_millis() as u64 {
            let what = if phase == OPENING {
                "opening the black box took"
            } else {
                "one call of the black box ran"
            };
            write_stderr(b"fprev: error: ");
            write_spec();
            eprintln!(
                ": {what} longer than --timeout {} s and was stopped with fprev; raise \
                 --timeout if it is only slow",
                limit.as_secs_f64()
            );
            finished(3);
            // SAFETY: _exit ends the process without unwinding the thread
            // stuck in the black box.
            unsafe { libc::_exit(3) }
        }
    }
}

fprev::forward_probe!([P: Probe] Guarded<P>, |g| g.inner, through call);
