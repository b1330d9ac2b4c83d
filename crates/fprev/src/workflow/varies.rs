//! What a black box whose order varies is reported with: its results
//! summarised over many calls, and its fixed skeleton (the subtrees every
//! call shares, the joins that vary).

use std::time::Duration;

use crate::probe::Probe;
use crate::reveal::{Effort, VARIATION_INPUTS};
use crate::variation::{self, Variation};

use super::{Note, Observer};

/// Calls of each random input that summarise a varying black box where the
/// request gives no `runs`.
pub const SUMMARY_RUNS: usize = 50;

/// Calls of each masked query its skeleton asks where the request gives
/// no `runs`: up to [`SUMMARY_RUNS`], fewer for large `n` so that finding
/// it takes about [`SKELETON_CALLS`] calls for a skeleton of chains
/// (`n` queries), and at least 4.
pub fn skeleton_repeats(n: usize) -> usize {
    (SKELETON_CALLS / n.max(1)).clamp(4, SUMMARY_RUNS)
}

/// See [`skeleton_repeats`].
pub const SKELETON_CALLS: usize = 400_000;

/// The time a skeleton's search may take where the request gives none: a
/// default `fprev reveal rayon:sum -n 100000 --threads 2` first spends
/// about 45 s on the reveal that fails (on a loaded 2-core machine), so
/// with this it ends in about a minute.
pub const SKELETON_TIME: Duration = Duration::from_secs(20);

/// `v` (which varies), summarised over `runs` calls of each input (or
/// [`SUMMARY_RUNS`]) where it was seen over fewer, with the skeleton of
/// `black_box` found within the time `skeleton` gives (none: not looked
/// for), each masked query asked [`FIRST_ASKS`](crate::reveal::FIRST_ASKS)
/// times and `runs` times (or [`skeleton_repeats`]) in a subproblem where
/// answers disagree. The summary is told to `observer` before the search
/// ([`Note::Skeleton`]), so it is known however long the search takes.
///
/// ```
/// use fprev::{Format, Probe, reveal::Silent, variation, workflow};
///
/// /// Two halves, joined to a third part first on odd calls.
/// struct Swaps(bool);
/// impl Probe for Swaps {
///     fn n(&self) -> usize { 24 }
///     fn format(&self) -> Format { Format::F32 }
///     fn sum(&mut self, x: &[f64], out: &mut [f64]) -> fprev::Result<()> {
///         self.0 = !self.0;
///         let part = |r: std::ops::Range<usize>| fprev::Order::Sequential.sum(&x[r], Format::F32);
///         let (a, b, c) = (part(0..8), part(8..16), part(16..24));
///         let f = |u, v| Format::F32.add(u, v);
///         out[0] = if self.0 { f(f(a, b), c) } else { f(a, f(b, c)) };
///         Ok(())
///     }
/// }
///
/// let seen = variation::measure(&mut Swaps(false), 8, 4, 1).unwrap();
/// let within = Some(workflow::SKELETON_TIME);
/// let v = workflow::characterise(&mut Swaps(false), seen, 20, within, &mut Silent).unwrap();
/// let skeleton = v.skeleton.unwrap();
/// assert_eq!(
///     skeleton.describe(),
///     vec!["3 runs of 8 consecutive summands, each left to right, joined in an order that varies"]
/// );
/// ```
pub fn characterise(
    black_box: &mut dyn Probe,
    v: Variation,
    runs: usize,
    skeleton: Option<Duration>,
    observer: &mut dyn Observer,
) -> crate::Result<Variation> {
    let summary_runs = if runs > 1 { runs } else { SUMMARY_RUNS };
    let mut v = match v.runs < summary_runs {
        true => {
            let more = variation::measure(black_box, VARIATION_INPUTS, summary_runs, 6)?;
            // A black box that seldom regroups may show nothing in these
            // runs: what was seen stands.
            if more.varies() { more } else { v }
        }
        false => v,
    };
    if let Some(within) = skeleton {
        let repeats = if runs > 1 {
            runs
        } else {
            skeleton_repeats(black_box.n())
        };
        let effort = Effort::new(repeats, within);
        observer.note(Note::Skeleton {
            variation: v.clone(),
            effort,
        });
        match crate::reveal::skeleton(black_box, &effort, observer) {
            Ok(s) => v.skeleton = Some(Box::new(s)),
            // The finding stands without it.
            Err(e) => observer.note(Note::NoSkeleton(e)),
        }
    }
    Ok(v)
}
