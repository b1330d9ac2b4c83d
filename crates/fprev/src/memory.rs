//! Whether this machine has the memory a reveal of `n` summands needs, asked
//! before anything is allocated: a reveal that runs out of memory aborts
//! the process (and the Python interpreter or notebook kernel it runs in).
//!
//! ```
//! use fprev::memory;
//!
//! assert!(memory::check_reveal(1_000).is_ok());
//! assert!(memory::check_reveal(1 << 50).is_err());
//! ```

use crate::error::{Error, Param, Remedy, Result};

/// Bytes a reveal holds per summand, with room to spare: the engine's
/// trees, subproblems and inputs came to about 700 bytes a summand for a
/// pairwise sum and 920 for a fused chain at `n = 65,536` (peak resident
/// size less the process's own).
pub const BYTES_PER_SUMMAND: u64 = 1024;

/// Bytes a replay streamed from a formula holds per summand: the input in
/// `f64`, the black box's own copy of it, and room for a lane's copy.
pub const BYTES_PER_REPLAYED_SUMMAND: u64 = 32;

/// Refuses `n` summands when a reveal of them would need more memory than
/// this machine (or the control group the process runs in) has available.
pub fn check_reveal(n: usize) -> Result<()> {
    refuse(too_large(n))
}

/// Refuses `n` summands when a replay of them streamed from a formula (a
/// prediction's confirmation, a check of a formula's tree file) would need
/// more memory than this machine has available.
pub fn check_replay(n: usize) -> Result<()> {
    refuse(short_of(
        &format!("n = {n} summands need"),
        n,
        BYTES_PER_REPLAYED_SUMMAND,
        "replay",
    ))
}

/// Why a size of a list (the sizes emitted code is checked at) is more
/// than this machine has the memory to replay, `None` where it is not.
pub fn size_too_large_to_replay(size: usize) -> Option<String> {
    short_of(
        &format!("a size of {size} needs"),
        size,
        BYTES_PER_REPLAYED_SUMMAND,
        "replay",
    )
}

/// The error of a size this machine is short of memory for, `why`.
fn refuse(why: Option<String>) -> Result<()> {
    match why {
        Some(why) => Err(Error::Input(why).advise(Remedy::Smaller(Param::N))),
        None => Ok(()),
    }
}

/// Why `n` summands are more than this machine can reveal (or hold a tree
/// of), `None` where they are not: [`check_reveal`] without the remedy, for
/// sizes read from elsewhere than `-n` (a survey file).
pub fn too_large(n: usize) -> Option<String> {
    short_of(
        &format!("n = {n} summands need"),
        n,
        BYTES_PER_SUMMAND,
        "reveal",
    )
}

/// Why `n` summands (`subject`, as a message names them with its verb:
/// `n = 9 summands need`) at `bytes` each
/// are more than this machine has available to `what` them.
fn short_of(subject: &str, n: usize, bytes: u64, what: &str) -> Option<String> {
    let needed = (n as u64).saturating_mul(bytes);
    match available() {
        Some(free) if needed > free => Some(format!(
            "{subject} about {} of memory to {what}, and this machine has {} available",
            human(needed),
            human(free)
        )),
        // Without /proc/meminfo, at least refuse what no machine has.
        None if needed > 1 << 50 => Some(format!(
            "{subject} about {} of memory to {what}",
            human(needed)
        )),
        _ => None,
    }
}

/// Bytes available to this process: the kernel's `MemAvailable`, or less
/// where a cgroup v2 limit leaves less; `None` where neither can be read.
pub fn available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    let mut free = kib.saturating_mul(1024);
    let cgroup = |file: &str| -> Option<u64> {
        std::fs::read_to_string(format!("/sys/fs/cgroup/{file}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    if let (Some(max), Some(current)) = (cgroup("memory.max"), cgroup("memory.current")) {
        free = free.min(max.saturating_sub(current));
    }
    Some(free)
}

/// `80 GB`, `512 MB`.
fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.0} {}", UNITS[unit])
}
