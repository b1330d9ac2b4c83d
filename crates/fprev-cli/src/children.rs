//! The processes a command starts (the MPI launcher and its ranks, the
//! fresh `fprev` of each `invariance --env` setting) end with it, on any
//! signal and on any error. Each is started in a process group of its own
//! (a terminal's Ctrl-C reaches fprev alone, which stops the group), its
//! environment marked with a token of its own that every process under it
//! inherits, through process groups and sessions (Hydra's proxies start
//! sessions of their own). Stopping it sends the group a signal (an MPI
//! launcher SIGTERM, an `fprev` the signal fprev got), waits a grace for
//! it to end its own children and files, then kills what is left of the
//! group and every process carrying the token.
//! A child whose fprev is killed outright (SIGKILL) gets SIGTERM from the
//! kernel.

use std::ffi::c_int;
use std::process::{Child, ChildStdout, Command, ExitStatus};
use std::time::{Duration, Instant};

use crate::guard::{self, Held};

/// The environment variable listing the tokens of the processes fprev
/// started that a process is under, comma-separated.
pub(crate) const MARK: &str = "FPREV_STARTED";

/// How long the processes left after the group's leader has ended, or
/// outside its group, may take to end after SIGKILL.
const REAP: Duration = Duration::from_secs(2);

/// How a process fprev started is stopped.
pub(crate) struct Stopping {
    /// The signal it is sent; `None`: the one fprev got (SIGTERM where
    /// none came), for an `fprev` that ends as its parent does.
    pub(crate) signal: Option<c_int>,
    /// How long it may take to end its own processes and files.
    pub(crate) grace: Duration,
}

/// A process fprev started, with everything under it: stopped when
/// dropped.
pub(crate) struct Group {
    child: Child,
    token: String,
    stopping: Stopping,
    /// Whether its status has been taken (its id may be another's since).
    reaped: bool,
}

/// Starts `command` as a [`Group`], stopped as `stopping` says.
pub(crate) fn spawn(command: &mut Command, stopping: Stopping) -> std::io::Result<Group> {
    use std::os::unix::process::CommandExt;
    let token = format!(
        "{}.{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
    );
    let marks = match std::env::var(MARK) {
        Ok(outer) if !outer.is_empty() => format!("{outer},{token}"),
        _ => token.clone(),
    };
    command.env(MARK, marks).process_group(0);
    #[cfg(target_os = "linux")]
    {
        let parent = std::process::id() as i32;
        // SAFETY: prctl and getppid are async-signal-safe, as a closure
        // run between fork and exec must be.
        unsafe {
            command.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                if libc::getppid() != parent {
                    return Err(std::io::Error::other("fprev ended as it started"));
                }
                Ok(())
            });
        }
    }
    Ok(Group {
        child: command.spawn()?,
        token,
        stopping,
        reaped: false,
    })
}

impl Group {
    /// Its exit status, once it has ended.
    pub(crate) fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        let status = self.child.try_wait()?;
        self.reaped |= status.is_some();
        Ok(status)
    }

    /// Waits for it to end; `None` as soon as an ending signal came while
    /// `held`.
    pub(crate) fn wait(&mut self, held: &Held) -> std::io::Result<Option<ExitStatus>> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(Some(status));
            }
            if held.signal().is_some() {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Its stdout, where it was piped.
    pub(crate) fn stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// Whether it has ended, left unreaped: its id, and its group's, stay
    /// its own until it is.
    fn ended(&self) -> bool {
        // SAFETY: waitid(2) on our own child, into a zeroed siginfo_t.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
            let r = libc::waitid(libc::P_PID, self.child.id(), &mut info, flags);
            r != 0 || info.si_pid() != 0
        }
    }

    /// Stops the group with its signal, then SIGKILL after its grace, and
    /// kills every process still carrying the token.
    fn stop(&mut self) {
        if !self.reaped {
            let group = -(self.child.id() as i32);
            if !self.ended() {
                let signal = self
                    .stopping
                    .signal
                    .or_else(guard::pending)
                    .unwrap_or(libc::SIGTERM);
                // SAFETY: kill(2) on the process group this command
                // started, whose leader is not yet reaped.
                unsafe { libc::kill(group, signal) };
                let started = Instant::now();
                while !self.ended() && started.elapsed() < self.stopping.grace {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            // SAFETY: as above.
            unsafe { libc::kill(group, libc::SIGKILL) };
            let _ = self.child.wait();
            self.reaped = true;
        }
        let started = Instant::now();
        loop {
            let left = marked(&self.token);
            if left.is_empty() || started.elapsed() > REAP {
                break;
            }
            for pid in left {
                // SAFETY: kill(2) on a process under one this command
                // started (it carries the token).
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The running processes of this user whose environment carries `token`
/// in [`MARK`] (a zombie's environment reads empty).
#[cfg(target_os = "linux")]
fn marked(token: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id() as i32;
    let prefix = format!("{MARK}=");
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
                return false;
            };
            environ.split(|&b| b == 0).any(|var| {
                std::str::from_utf8(var).is_ok_and(|var| {
                    var.strip_prefix(&prefix)
                        .is_some_and(|tokens| tokens.split(',').any(|t| t == token))
                })
            })
        })
        .collect()
}

#[cfg(not(target_os = "linux"))]
fn marked(_token: &str) -> Vec<i32> {
    Vec::new()
}
