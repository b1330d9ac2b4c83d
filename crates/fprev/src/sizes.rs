//! Lists of sizes (what a sweep visits, what an explanation reveals): the size list (`1..64`, `8..1024:8`, `16,32`)
//! and its parser, and ascending sizes written back as runs.

use std::str::FromStr;

use crate::error::{abbreviated, bounds};

/// The sizes a sweep visits: `A..B` (every size from A to B inclusive),
/// `A..B:S` (every S-th), or a comma-separated list of those and of single
/// sizes.
///
/// ```
/// use fprev::sizes::Sizes;
///
/// let s: Sizes = "1..4,10..20:5,64".parse().unwrap();
/// assert_eq!(s.0, [1, 2, 3, 4, 10, 15, 20, 64]);
/// assert!("8..4".parse::<Sizes>().is_err());
/// // At most MAX_SIZES sizes, each one a reveal this machine can hold.
/// assert!("1..1000000000".parse::<Sizes>().is_err());
/// assert!("1..8,1000000000000000".parse::<Sizes>().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes(pub Vec<usize>);

/// The most sizes one list holds: far more than a sweep reveals in a day,
/// and a list that takes no memory to speak of.
pub const MAX_SIZES: usize = 1 << 20;

/// Summands revealed at each size: a list of [`Sizes::list`], whose largest
/// this machine has the memory to reveal.
impl FromStr for Sizes {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let sizes = Sizes::list(s)?;
        if let Some(&largest) = sizes.0.last() {
            crate::memory::check_reveal(largest).map_err(|e| e.to_string())?;
        }
        Ok(sizes)
    }
}

impl Sizes {
    /// A list of sizes that are not summands to reveal (batch sizes, an
    /// MPI vector's elements), each at most [`bounds::SIZE`] and at most
    /// [`MAX_SIZES`] of them, counted before any is listed; sorted, each
    /// once.
    ///
    /// ```
    /// use fprev::sizes::Sizes;
    ///
    /// assert_eq!(Sizes::list("4,1..2,2").unwrap().0, [1, 2, 4]);
    /// assert!(Sizes::list("1..10000000").is_err());
    /// ```
    pub fn list(s: &str) -> Result<Sizes, String> {
        let bad = |why: &str| {
            format!(
                "'{}' is not a list of sizes: {why} (e.g. 1..64, 8..1024:8, 16,32)",
                abbreviated(s)
            )
        };
        let number = |t: &str| {
            bounds::SIZE.parse(t).map_err(|_| {
                bad(&format!(
                    "'{}' is not a size from 1 to {}",
                    abbreviated(t.trim()),
                    bounds::SIZE.most
                ))
            })
        };
        let mut out = Vec::new();
        for part in s.split(',') {
            let Some((a, rest)) = part.split_once("..") else {
                out.push(number(part)?);
                if out.len() > MAX_SIZES {
                    return Err(bad(&format!("more than {MAX_SIZES} sizes")));
                }
                continue;
            };
            let (b, step) = match rest.split_once(':') {
                Some((b, step)) => (b, number(step)?),
                None => (rest, 1),
            };
            let (a, b) = (number(a)?, number(b)?);
            if a > b {
                return Err(bad(&format!("the range {a}..{b} is empty")));
            }
            // Counted before it is listed.
            if (b - a) / step >= MAX_SIZES.saturating_sub(out.len()) {
                return Err(bad(&format!(
                    "{a}..{b} holds more than the {MAX_SIZES} sizes a list may"
                )));
            }
            out.extend((a..=b).step_by(step));
        }
        out.sort_unstable();
        out.dedup();
        Ok(Sizes(out))
    }

    /// [`Sizes::list`] of the sizes a replay runs at (emitted code checked
    /// against its black box), whose largest this machine has the memory
    /// to replay.
    pub fn replayed(s: &str) -> Result<Sizes, String> {
        let sizes = Sizes::list(s)?;
        match sizes
            .0
            .last()
            .and_then(|&n| crate::memory::size_too_large_to_replay(n))
        {
            Some(why) => Err(why),
            None => Ok(sizes),
        }
    }
}

/// Ascending sizes as runs, as `-n` takes them.
///
/// ```
/// assert_eq!(fprev::sizes::runs(&[1, 2, 3, 7, 8, 10]), "1..3,7,8,10");
/// ```
pub fn runs(sizes: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut k = 0;
    while k < sizes.len() {
        let mut end = k;
        while end + 1 < sizes.len() && sizes[end + 1] == sizes[end] + 1 {
            end += 1;
        }
        out.push(match end - k {
            0 => sizes[k].to_string(),
            1 => format!("{},{}", sizes[k], sizes[end]),
            _ => format!("{}..{}", sizes[k], sizes[end]),
        });
        k = end + 1;
    }
    out.join(",")
}
