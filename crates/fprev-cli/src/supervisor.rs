//! A black box that ends the process itself (`exit(0)` in a C function,
//! `os._exit(0)` in Python) would hand its exit status to the command, and
//! `reveal` or `check` would end silently with it, a CI check passing.
//! So the command runs in a child process, forked before any thread starts,
//! and the `fprev` process only waits for it. The child records the status
//! it ends with on purpose (`guard::finished`, in memory both share) just
//! before it ends: after a normal end, the timeout and Ctrl-C. The parent
//! then ends with that status; with the signal that ended a child that
//! crashed (the child's handler has said why); or, when the child ended
//! with no status recorded, with one line naming the black box and exit
//! status 3. An `atexit` hook would miss `_exit`; this catches every end.
//!
//! Not inside an MPI rank, which its `mpirun` starts and watches.

use std::ffi::c_int;
use std::sync::atomic::{AtomicI32, Ordering};

use fprev::error::fault::Phase;
use fprev::error::{Error, Fault};

use crate::guard::{self, CALLING, OPENING, State};

/// The child's process id, for [`forward`].
static CHILD: AtomicI32 = AtomicI32::new(0);

/// Runs the command in a child process made by `fork` (which returns 0 in
/// the child, the child's id in the parent, `None` when it fails), and
/// waits for it. Returns `None` in the child, and where nothing was forked
/// (an MPI rank, a failed fork): run the command there with
/// [`run_main`](crate::run_main). In the parent, returns the exit status to
/// end with, or ends the process with the signal that ended the child.
///
/// Call it first, while the process has one thread: `fork` copies only
/// the calling thread.
pub fn supervise(fork: impl FnOnce() -> Option<i32>) -> Option<i32> {
    #[cfg(feature = "mpi")]
    if fprev::mpi::in_job() {
        return None;
    }
    let state = guard::share()?;
    // A SIGCHLD ignored by whoever started fprev would reap the child
    // before waitpid could see how it ended: the parent waits with the
    // default action, the command runs with the one it was given.
    // SAFETY: setting and restoring the action of SIGCHLD.
    let sigchld = unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    let restore = || unsafe { libc::signal(libc::SIGCHLD, sigchld) };
    let parent = std::process::id() as i32;
    match fork() {
        None => {
            restore();
            None
        }
        Some(0) => {
            restore();
            end_with_parent(parent);
            None
        }
        Some(child) => {
            let code = wait_for(child, state);
            restore();
            Some(code)
        }
    }
}

/// Ends the child when the parent dies (killed by SIGKILL, say), as the
/// command would have ended with it.
fn end_with_parent(parent: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl and kill on this process.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = parent;
}

/// Waits for `child` to end, passing the signals of [`guard::ENDING`] on to
/// it, and returns the status to end with.
fn wait_for(child: i32, state: &State) -> i32 {
    CHILD.store(child, Ordering::SeqCst);
    // SAFETY: handlers that only call kill(2), restored below.
    let previous = guard::ENDING.map(|signal| unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = forward as *const () as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        let mut previous: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, &action, &mut previous);
        previous
    });
    let mut status = 0;
    let waited = loop {
        // SAFETY: waitpid on our own child.
        let r = unsafe { libc::waitpid(child, &mut status, 0) };
        if r == child {
            break Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            break Err(e);
        }
    };
    for (signal, action) in guard::ENDING.iter().zip(&previous) {
        // SAFETY: restores the action saved above.
        unsafe { libc::sigaction(*signal, action, std::ptr::null_mut()) };
    }
    if let Err(e) = waited {
        return crate::report(&Error::System {
            what: "cannot wait for the process running the command".into(),
            source: e.into(),
        });
    }
    let spec = state.spec();
    match (state.finished(), ended(status)) {
        (Some(code), end) => {
            if end != Ended::Exit(code) {
                eprintln!(
                    "fprev: note: {}: the process ended ({end}) after the command finished \
                     with exit status {code}; that status stands",
                    spec.as_deref().unwrap_or("a black box")
                );
            }
            code
        }
        // The child's handler names a crash; any other signal (SIGKILL
        // from the out-of-memory killer, a SIGTERM) is named here.
        (None, Ended::Signal(signal)) => {
            if !guard::CRASHES.iter().any(|(crash, _)| *crash == signal) {
                // The black box it ran, where one was: `fprev` is said once.
                let whose = spec
                    .as_deref()
                    .map(|s| format!("{s}: "))
                    .unwrap_or_default();
                eprintln!(
                    "fprev: error: {whose}the process running the command was ended by signal \
                     {signal} ({}){}",
                    signal_name(signal),
                    if signal == libc::SIGKILL {
                        "; the system's out-of-memory killer sends it: if memory ran short, \
                         give a smaller -n"
                    } else {
                        ""
                    }
                );
            }
            end_by(signal)
        }
        (None, Ended::Exit(code)) => {
            let during = match state.phase() {
                CALLING => Phase::Calling,
                OPENING => Phase::Opening,
                _ => Phase::Between,
            };
            crate::report(&Error::BlackBox(Fault::Ended {
                spec,
                status: code,
                during,
            }))
        }
    }
}

/// The system's name of `signal` ("Killed", "Terminated").
fn signal_name(signal: c_int) -> String {
    // SAFETY: strsignal returns a string the C library owns, read at once.
    unsafe {
        let name = libc::strsignal(signal);
        if name.is_null() {
            return format!("signal {signal}");
        }
        std::ffi::CStr::from_ptr(name)
            .to_string_lossy()
            .into_owned()
    }
}

/// How a process ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ended {
    Exit(i32),
    Signal(c_int),
}

fn ended(status: c_int) -> Ended {
    if libc::WIFSIGNALED(status) {
        Ended::Signal(libc::WTERMSIG(status))
    } else {
        Ended::Exit(libc::WEXITSTATUS(status))
    }
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::Exit(code) => write!(f, "exit status {code}"),
            Ended::Signal(signal) => write!(f, "signal {signal}"),
        }
    }
}

extern "C" fn forward(signal: c_int) {
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill(2), async-signal-safe, on our own child.
        unsafe { libc::kill(child, signal) };
    }
}

/// Ends this process with `signal`, as the child ended, without a second
/// core dump; returns the shell's `128 + signal` should it not end it.
fn end_by(signal: c_int) -> i32 {
    // SAFETY: setrlimit, signal, sigprocmask and raise on this process.
    unsafe {
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &none);
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signal);
    }
    128 + signal
}

/// `fork(2)`, for [`supervise`] in a program that has not started a
/// thread (the `fprev` binary's `main`): the child's 0, the child's id, or
/// `None` when it fails.
pub fn fork() -> Option<i32> {
    // SAFETY: the caller has one thread (see `supervise`).
    match unsafe { libc::fork() } {
        -1 => None,
        pid => Some(pid),
    }
}
