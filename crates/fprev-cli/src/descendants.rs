//! The processes under this one (children, theirs, …), which end with it
//! when it ends on a signal: those `emit --check` starts (a compiler, and
//! the compiler's own) as well as those [`children`](crate::children)
//! starts and stops itself.

use std::time::{Duration, Instant};

/// Stops every process under this one as it ends on a signal (a compiler
/// `emit --check` runs, and the compiler's own): each is first stopped
/// (SIGSTOP), so that none starts another or runs on unseen once its
/// parent has gone, then sent SIGTERM, which it takes as it continues (a
/// compiler removes its temporary files), and SIGKILL if still there after
/// `grace`.
pub(crate) fn end_own(grace: Duration) {
    let mut stopped: Vec<i32> = Vec::new();
    for _ in 0..100 {
        let new: Vec<i32> = under_this()
            .into_iter()
            .filter(|pid| !stopped.contains(pid))
            .collect();
        if new.is_empty() {
            break;
        }
        for &pid in &new {
            // SAFETY: kill(2) on a process under this one.
            unsafe { libc::kill(pid, libc::SIGSTOP) };
        }
        stopped.extend(new);
    }
    for signal in [libc::SIGTERM, libc::SIGCONT] {
        for &pid in &stopped {
            // SAFETY: as above.
            unsafe { libc::kill(pid, signal) };
        }
    }
    let started = Instant::now();
    loop {
        // SAFETY: waitpid(2) without waiting reaps this process's children
        // that have ended; it is ending, so no one else waits for them.
        while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
        let left = under_this();
        if left.is_empty() {
            return;
        }
        if started.elapsed() > grace {
            for pid in left {
                // SAFETY: as above.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The processes under this one (children, theirs, …) that have not ended,
/// where /proc lists them.
#[cfg(target_os = "linux")]
fn under_this() -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    // `pid (name) state ppid …`; the name may hold spaces and ')'.
    let parents: Vec<(i32, i32)> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
            let state = fields.next()?;
            let ppid = fields.next()?.parse().ok()?;
            (state != "Z" && state != "X").then_some((pid, ppid))
        })
        .collect();
    let mut under = vec![std::process::id() as i32];
    let mut next = 0;
    while next < under.len() {
        let parent = under[next];
        under.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(pid, _)| pid),
        );
        next += 1;
    }
    under.remove(0);
    under
}

#[cfg(not(target_os = "linux"))]
fn under_this() -> Vec<i32> {
    Vec::new()
}
