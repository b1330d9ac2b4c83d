//! The bounds of every whole number a user gives fprev (a count of
//! summands, trials, runs, threads, a row, a seed), in one place: the
//! command line and the Python package both refuse a value outside its
//! [`Bound`] before anything is allocated for it, with an error whose
//! remedy names the [`Param`], which each front end words as its flag or
//! keyword.
//!
//! ```
//! use fprev::bounds;
//! use fprev::error::Report;
//!
//! assert_eq!(bounds::RUNS.parse("20").unwrap(), 20);
//! assert_eq!(bounds::RUNS.parse("0").unwrap(), 0);
//! let e = bounds::RUNS.check(10_000_000_000_000).unwrap_err();
//! assert_eq!(
//!     Report(&e).to_string(),
//!     "10000000000000 is out of range; give the runs from 2 to 1000000, or 0"
//! );
//! assert!(bounds::THREADS.parse("65535").is_err());
//! assert!(bounds::SEED.parse("18446744073709551615").is_ok());
//! ```

use super::{Error, Param, Remedy, Result, abbreviated};

/// The whole numbers a setting takes: `least` to `most`, and 0 too where
/// `or_zero` (0 meaning none: no runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound {
    /// What the number sets.
    pub setting: Param,
    /// The least value.
    pub least: u64,
    /// The largest value.
    pub most: u64,
    /// Whether 0 is taken too, below `least`.
    pub or_zero: bool,
}

/// The largest count of summands, rows, columns or sizes a user may give,
/// and the largest parameter of an order: 2^40, past any a reveal can hold
/// (the memory this machine has refuses far less, [`crate::memory`]).
pub const MOST: u64 = 1 << 40;

/// The most trials one check runs: a million replays take minutes on a
/// fast black box, and a count past it is a slip, not a plan.
pub const MOST_TRIALS: u64 = 1_000_000;

/// Summands, `n`.
pub const N: Bound = Bound::new(Param::N, 1, MOST);

/// A size of a list of sizes (revealed, checked).
pub const SIZE: Bound = Bound::new(Param::Sizes, 1, MOST);

/// A dimension of a product's shape `M,N,K`.
pub const SHAPE: Bound = Bound::new(Param::Shape, 1, MOST);

/// Random inputs a revealed tree is replayed on (0: not confirmed).
pub const CONFIRM: Bound = Bound::new(Param::Confirm, 0, MOST_TRIALS);

/// Random inputs a check replays a tree on.
pub const TRIALS: Bound = Bound::new(Param::Trials, 1, MOST_TRIALS);

/// Random inputs emitted code is checked on at each size: each a compiled
/// run, so fewer than a check's.
pub const EMIT_TRIALS: Bound = Bound::new(Param::Trials, 1, 1000);

/// Calls of each input that look for variation: 0 (none), or 2 and more
/// (one call shows none), as many as a check has trials.
pub const RUNS: Bound = Bound {
    or_zero: true,
    ..Bound::new(Param::Runs, 2, MOST_TRIALS)
};

/// Seconds the search for a varying black box's skeleton may take: 0
/// (its whole sum's first level only) to a day, past which a search is
/// better bounded by a smaller `n`.
pub const SKELETON_SECONDS: Bound = Bound::new(Param::SkeletonTime, 0, 86_400);

/// A thread count: as many as a spec may name (`reduce:…:THREADS`), past
/// any machine's cores; a pool of more takes a minute to start.
pub const THREADS: Bound = Bound::new(Param::Threads, 1, 1024);

/// Rows a call (inputs of a batched black box, a batch size `M`).
pub const BATCH: Bound = Bound::new(Param::Batch, 1, MOST);

/// A row of a batch, from 0.
pub const ROW: Bound = Bound::new(Param::Row, 0, MOST - 1);

/// An output column of a product, from 0.
pub const COLUMN: Bound = Bound::new(Param::Column, 0, MOST - 1);

/// Fresh processes each setting of a study runs in (as many as a reveal
/// compares): enough to see an order drawn per process, few enough that
/// a study of several settings stays within a minute or two.
pub const PROCESSES: Bound = Bound::new(Param::Processes, 1, 16);

/// Processes a reveal compares a black box's answers in: this one and at
/// least one fresh one.
pub const REVEAL_PROCESSES: Bound = Bound::new(Param::Processes, 2, PROCESSES.most);

/// The seed of random inputs: any 64-bit number.
pub const SEED: Bound = Bound::new(Param::Seed, 0, u64::MAX);

impl Bound {
    /// `least` to `most` of `setting`.
    pub const fn new(setting: Param, least: u64, most: u64) -> Self {
        Bound {
            setting,
            least,
            most,
            or_zero: false,
        }
    }

    /// Whether `value` is within the bound.
    pub fn contains(&self, value: u128) -> bool {
        (self.or_zero && value == 0) || (self.least as u128..=self.most as u128).contains(&value)
    }

    /// `value`, where it is within the bound.
    pub fn check(&self, value: u128) -> Result<u64> {
        match self.contains(value) {
            true => Ok(value as u64),
            false => Err(self.refuse(&value.to_string())),
        }
    }

    /// `value` as a count, where it is within the bound.
    pub fn count(&self, value: u128) -> Result<usize> {
        usize::try_from(self.check(value)?).map_err(|_| self.refuse(&value.to_string()))
    }

    /// The whole number `text` gives, where it is within the bound.
    pub fn parse(&self, text: &str) -> Result<usize> {
        match text.trim().parse::<u128>() {
            Ok(value) => self.count(value),
            Err(_) => Err(self.refuse(text)),
        }
    }

    /// The error of `given` (a value as the user wrote it), outside the
    /// bound or not a whole number.
    pub fn refuse(&self, given: &str) -> Error {
        let t = given.trim();
        let digits = t.strip_prefix('-').unwrap_or(t);
        let numeric = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        let what = match numeric {
            true => format!("{} is out of range", abbreviated(t)),
            false => format!("'{}' is not a whole number", abbreviated(t)),
        };
        Error::Input(what).advise(Remedy::Within(*self))
    }

    /// The values in words, after `name` (the setting's name in a front
    /// end): `--runs from 2 to 1000000, or 0`.
    pub fn range(&self, name: &str) -> String {
        let zero = if self.or_zero { ", or 0" } else { "" };
        format!("{name} from {} to {}{zero}", self.least, self.most)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_past_any_integer_and_negatives_are_refused_not_wrapped() {
        for bad in ["-1", "1e3", "", "340282366920938463463374607431768211456"] {
            assert!(N.parse(bad).is_err(), "{bad}");
        }
        assert!(CONFIRM.parse("0").is_ok() && TRIALS.parse("0").is_err());
        assert!(RUNS.parse("1").is_err() && RUNS.parse("2").is_ok());
        let e = N.parse(&"9".repeat(5000)).unwrap_err();
        assert!(crate::error::Report(&e).to_string().len() < 300);
    }
}
