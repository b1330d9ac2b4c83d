//! What the command line does when a black box misbehaves beyond a wrong
//! answer: it hangs (`--timeout`), it crashes the process (a signal), or the
//! user interrupts it (Ctrl-C, outside an MPI job). Each ends with one line saying so, and the
//! exit status of the signal or of a black box that broke an assumption
//! (3); files are written atomically, so none is left half-written.
//!
//! A black box runs inside this process (a shared library, the embedded
//! Python), so a crash cannot be caught and survived, only reported: the
//! handler writes its line with `write(2)` (safe in a signal handler) and
//! lets the signal end the process as it would have.

use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fprev::error::Result;
use fprev::format::Format;
use fprev::probe::{Batch, Probe};

/// The black box's spec, for the crash line (leaked once per process).
static SPEC: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static SPEC_LEN: AtomicUsize = AtomicUsize::new(0);
/// Whether a call of the black box is under way.
static IN_CALL: AtomicBool = AtomicBool::new(false);
/// Milliseconds since [`epoch`] when the call under way started.
static CALL_STARTED: AtomicU64 = AtomicU64::new(0);

fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// The signals that end the process with a crash, and their names.
const CRASHES: [(c_int, &str); 5] = [
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
            set(
                libc::SIGINT,
                on_interrupt as *const () as usize,
                std::ptr::null_mut(),
            );
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

/// Names the black box in the crash line.
pub fn name_black_box(spec: &str) {
    let leaked: &'static mut [u8] = spec.as_bytes().to_vec().leak();
    SPEC_LEN.store(leaked.len(), Ordering::SeqCst);
    SPEC.store(leaked.as_mut_ptr(), Ordering::SeqCst);
}

fn write_stderr(bytes: &[u8]) {
    // SAFETY: write(2) on stderr from a valid buffer.
    unsafe {
        libc::write(2, bytes.as_ptr().cast(), bytes.len());
    }
}

fn write_spec() {
    let ptr = SPEC.load(Ordering::SeqCst);
    if ptr.is_null() {
        write_stderr(b"the black box");
    } else {
        // SAFETY: SPEC points at a leaked buffer of SPEC_LEN bytes.
        write_stderr(unsafe { std::slice::from_raw_parts(ptr, SPEC_LEN.load(Ordering::SeqCst)) });
    }
}

extern "C" fn on_crash(signal: c_int) {
    let k = CRASHES.iter().position(|(s, _)| *s == signal).unwrap_or(0);
    // SAFETY: restores the action in place before install (or the default)
    // and re-raises, so the signal ends the process as it would have.
    unsafe {
        if IN_CALL.load(Ordering::SeqCst) {
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

extern "C" fn on_interrupt(signal: c_int) {
    if IN_CALL.load(Ordering::SeqCst) {
        write_stderr(b"\nfprev: interrupted while ");
        write_spec();
        write_stderr(b" ran; nothing was written\n");
    } else {
        write_stderr(b"\nfprev: interrupted; nothing was written\n");
    }
    // SAFETY: _exit ends the process without running anything else.
    unsafe { libc::_exit(128 + signal) }
}

/// A black box whose calls are marked (for the crash line) and timed: a
/// call running longer than the timeout ends the process with one line and
/// exit status 3, since an in-process call cannot be stopped any other way.
pub struct Guarded<P> {
    inner: P,
}

impl<P: Probe> Guarded<P> {
    /// Guards `inner`, named `spec` in the lines above.
    pub fn new(inner: P, spec: &str) -> Self {
        name_black_box(spec);
        Guarded { inner }
    }

    fn call<R>(&mut self, f: impl FnOnce(&mut P) -> R) -> R {
        CALL_STARTED.store(epoch().elapsed().as_millis() as u64, Ordering::SeqCst);
        IN_CALL.store(true, Ordering::SeqCst);
        let r = f(&mut self.inner);
        IN_CALL.store(false, Ordering::SeqCst);
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
    loop {
        std::thread::sleep(tick);
        let started = CALL_STARTED.load(Ordering::SeqCst);
        let now = epoch().elapsed().as_millis() as u64;
        if IN_CALL.load(Ordering::SeqCst) && now.saturating_sub(started) > limit.as_millis() as u64
        {
            write_stderr(b"fprev: error: ");
            write_spec();
            eprintln!(
                ": one call of the black box ran longer than --timeout {} s and was stopped with \
                 fprev; raise --timeout if it is only slow",
                limit.as_secs_f64()
            );
            // SAFETY: _exit ends the process without unwinding the thread
            // stuck in the black box.
            unsafe { libc::_exit(3) }
        }
    }
}

impl<P: Probe> Probe for Guarded<P> {
    fn n(&self) -> usize {
        self.inner.n()
    }
    fn format(&self) -> Format {
        self.inner.format()
    }
    fn accumulator(&self) -> Format {
        self.inner.accumulator()
    }
    fn may_fuse(&self) -> bool {
        self.inner.may_fuse()
    }
    fn max_batch(&self) -> usize {
        self.inner.max_batch()
    }
    fn about(&self) -> Option<String> {
        self.inner.about()
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()> {
        self.call(|p| p.sum(inputs, out))
    }
    fn sum_batch(&mut self, batch: &Batch, out: &mut [f64]) -> Result<()> {
        self.call(|p| p.sum_batch(batch, out))
    }
    fn multiplies(&self) -> bool {
        self.inner.multiplies()
    }
    fn dot(&mut self, rows: &[f64], y: &[f64], out: &mut [f64]) -> Result<()> {
        self.call(|p| p.dot(rows, y, out))
    }
}
