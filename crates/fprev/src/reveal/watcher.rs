//! Watching a reveal: the engine tells an [`Watcher`] where it stands, and
//! draws nothing itself (the `fprev` command draws a progress bar with it).

use super::oracle::Counters;

/// Where a reveal stands, told each time a summand gets its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// The summand just placed: a pivot, or the lone leaf of a group.
    pub leaf: usize,
    /// Summands placed so far, each counted once (after a wrong guess of a
    /// group's shape, the group's summands are placed again).
    pub placed: usize,
    /// Summands in all.
    pub n: usize,
    /// Queries answered so far.
    pub queries: u64,
    /// Calls of the black box so far, the checks before the queries
    /// included.
    pub calls: u64,
}

/// Watches a reveal ([`reveal_observed`](super::reveal_observed)). Every
/// method does nothing unless implemented.
///
/// Counting the summands placed:
///
/// ```
/// use fprev::probe::ProbeOptions;
/// use fprev::reveal::{Watcher, Options, Progress, reveal_observed};
///
/// #[derive(Default)]
/// struct Count {
///     n: usize,
///     placed: usize,
///     finished: bool,
/// }
///
/// impl Watcher for Count {
///     fn started(&mut self, n: usize) {
///         self.n = n;
///     }
///     fn placed(&mut self, progress: &Progress) {
///         self.placed = progress.placed;
///     }
///     fn finished(&mut self) {
///         self.finished = true;
///     }
/// }
///
/// let opts = ProbeOptions { n: Some(64), ..Default::default() };
/// let mut black_box = fprev::open("native:pairwise", &opts).unwrap();
/// let mut count = Count::default();
/// reveal_observed(&mut black_box, &Options::default(), &mut count).unwrap();
/// assert_eq!((count.n, count.placed, count.finished), (64, 64, true));
/// ```
#[allow(unused_variables)]
pub trait Watcher {
    /// The queries of a reveal of `n` summands start (after the black box's
    /// checks: its rows, its accumulator).
    fn started(&mut self, n: usize) {}

    /// A summand has its place in the tree being built.
    fn placed(&mut self, progress: &Progress) {}

    /// The tree is built, or the reveal failed: nothing more comes.
    fn finished(&mut self) {}
}

/// Watches nothing: [`reveal`](super::reveal()) reveals with it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Watcher for Silent {}

/// Tells an watcher which summands have their place, each counted once.
pub(super) struct Placement<'o> {
    watcher: &'o mut dyn Watcher,
    placed: Vec<bool>,
    count: usize,
}

impl<'o> Placement<'o> {
    /// Placement of `n` summands, told to `watcher`.
    pub(super) fn new(n: usize, watcher: &'o mut dyn Watcher) -> Self {
        Placement {
            watcher,
            placed: vec![false; n],
            count: 0,
        }
    }

    /// Notes that `leaf` has its place, the work so far being `counters`.
    pub(super) fn place(&mut self, leaf: usize, counters: &Counters) {
        if !std::mem::replace(&mut self.placed[leaf], true) {
            self.count += 1;
        }
        self.watcher.placed(&Progress {
            leaf,
            placed: self.count,
            n: self.placed.len(),
            queries: counters.queries,
            calls: counters.calls,
        });
    }
}
