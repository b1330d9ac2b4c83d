//! The revelation engine: from a black box to its summation tree.
//!
//! ```
//! use fprev::{probe, reveal, Options, Format};
//!
//! let opts = probe::ProbeOptions { n: Some(8), ..Default::default() };
//! let mut bb = fprev::open("native:strided:4", &opts).unwrap();
//! let r = reveal(&mut bb, &Options::default()).unwrap().revealed().unwrap();
//! assert_eq!(r.tree.to_text(), "(((0+4)+(1+5))+((2+6)+(3+7)))");
//! assert!(r.stats.queries <= 8 * 7 / 2);
//! ```
//!
//! Three algorithms (docs/ALGORITHMS.md: BasicFPRev, FPRev, Fused nodes,
//! NaiveSol):
//!
//! | [`Algorithm`] | trees | cost in queries |
//! |---|---|---|
//! | `Insert` (default) | binary from 1,024 summands, at most 16 rows a call; else `Fprev` | calls: a fraction of `n` for repeating orders (`n / 8` for pairwise, NumPy's sum `n / 5` in f32), `n - 1` for chains either way, about `2n` for shuffled random trees |
//! | `Fprev` | binary and multiway, any `n` | `n - 1` to `n(n-1)/2`; `n - 1` and `2n - 3` for chains either way with the default pivot |
//! | `Basic` | binary, `n - 2 < 2^p` | `n(n-1)/2` |
//! | `Naive` | binary, `n <= 8` | a handful of random inputs, `(2n-3)!!` candidate trees |
//!
//! Calls of the black box are what a reveal costs. FPRev packs queries of
//! independent subproblems into one input, each in a field of its own
//! (`Options::pack`), and hands a batched black box one input per row:
//! about `2n` calls for a balanced tree in f64 where the paper's FPRev
//! makes `(n/2) log2 n`, and a GEMM of 1,024 rows in a handful of calls.
//! A reveal never needs fewer calls than its longest chain of subproblems,
//! each waiting for its caller's answers: `2n - log2 n` for a balanced
//! tree. Fused nodes need one input per pair of their children, nested
//! ones one after another: [`fused_pair_bound`].

//!
//! FPRev's BuildSubtree is written once (`reveal/subtree.rs`) and scheduled
//! two ways: packed, every known subproblem's queries sharing inputs, where
//! the accumulator counts all `n` units exactly (`reveal/packed.rs`), and
//! one query per input, depth first, where it does not (`reveal/stack.rs`).
//! A reveal tells a [`Watcher`] how far it is ([`reveal_observed`]); it
//! draws nothing.

pub mod arithmetic;
mod basic;
mod insert;
mod masks;
mod naive;
mod oracle;
mod packed;
mod proof;
mod skeleton;
mod stack;
mod subtree;
mod truncation;
mod watcher;

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::arith::{Arithmetic, NodeArithmetic, Rounding};
use crate::document::Stats;
use crate::error::fault::Closer;
use crate::error::{Error, Fault, Param, Remedy, Result, Summands};
use crate::format::Format;
use crate::probe::Probe;
use crate::reduce::Replay;
use crate::tree::SummationTree;
use crate::variation::{self, Variation};
use oracle::Oracle;
pub use skeleton::{Effort, FIRST_ASKS, skeleton};
use watcher::Placement;
pub use watcher::{Progress, Silent, Watcher};

/// Random inputs on which the rows of a batched black box (a GEMM's rows)
/// must agree with the revealed row to share its order: a reveal calls such
/// a black box this many times before its first query (and once more to
/// check its accumulator where it packs queries).
pub const ROW_TRIALS: usize = Oracle::ROW_TRIALS;

/// Random inputs, and calls of each, that tell a black box whose answers
/// vary from call to call from one that breaks the method otherwise: asked
/// only once a reveal has failed, so a deterministic reveal costs nothing
/// more.
pub const VARIATION_INPUTS: usize = 8;
/// See [`VARIATION_INPUTS`]: calls of each input at least, after a failed
/// reveal or a replay that differs.
pub const VARIATION_RUNS: usize = 4;
/// Calls of each input at most after a failed reveal (a tenth of the calls
/// it made, between [`VARIATION_RUNS`] and this), stopping at the first
/// that differs.
pub const MOST_VARIATION_RUNS: usize = 2_500;

/// Looks for answers that vary from call to call after a reveal or its
/// replay failed, having made `calls` calls: [`VARIATION_INPUTS`] random
/// inputs, each called up to a tenth of `calls` times (from
/// [`VARIATION_RUNS`] to [`MOST_VARIATION_RUNS`]), stopping at the first
/// that differs. A pool that seldom regroups needs many calls to show it.
pub fn look_for_variation(probe: &mut dyn Probe, calls: u64) -> Result<Variation> {
    let most_runs =
        (calls as usize / VARIATION_INPUTS / 10).clamp(VARIATION_RUNS, MOST_VARIATION_RUNS);
    variation::look_for(probe, VARIATION_INPUTS, most_runs, 5)
}

/// Which revelation algorithm to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Algorithm {
    /// Insertion (docs/ALGORITHMS.md, Insertion): summands placed one by
    /// one into the tree of those before them, each input's answer read
    /// as many bits, guessed places checked with two bits, the tree
    /// proven where that is cheap. FPRev's engine below 1,024 summands,
    /// for more than 16 rows a call, where inputs hold too few bits
    /// (narrow accumulators, products), and where insertion's answers fit
    /// no binary tree (fused nodes) or its proof fails.
    #[default]
    Insert,
    /// FPRev's BuildSubtree: binary and fused nodes, any size.
    Fprev,
    /// BasicFPRev: all `n(n-1)/2` pairs, then union-find. Binary trees only.
    Basic,
    /// Brute force over every binary tree, `n <= 8`: a baseline.
    Naive,
}

impl Algorithm {
    /// Whether it takes fused nodes in its stride: FPRev's engine, which
    /// insertion falls back on.
    fn takes_fused(self) -> bool {
        matches!(self, Algorithm::Insert | Algorithm::Fprev)
    }
}

impl FromStr for Algorithm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "insert" => Ok(Algorithm::Insert),
            "fprev" => Ok(Algorithm::Fprev),
            "basic" => Ok(Algorithm::Basic),
            "naive" => Ok(Algorithm::Naive),
            _ => Err(format!(
                "unknown algorithm '{s}': expected insert, fprev, basic or naive"
            )),
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Algorithm::Insert => "insert",
            Algorithm::Fprev => "fprev",
            Algorithm::Basic => "basic",
            Algorithm::Naive => "naive",
        })
    }
}

/// How FPRev picks the pivot of each subproblem.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pivot {
    /// The smallest leaf; the largest where the last pivot hung at the top
    /// of its subproblem (its answers left one group of all the other
    /// leaves); a seeded random one where both ends did. `n - 1` queries
    /// for a left-to-right sum, about `2n` for a right-to-left one, fewer
    /// than random on lane and block orders, and few levels (so few calls
    /// of a batched black box). Random in the narrow-accumulator engine.
    #[default]
    Ends,
    /// The smallest leaf, as in the paper: `n - 1` queries for a
    /// left-to-right sum, `n(n-1)/2` for a right-to-left one.
    Min,
    /// A seeded random leaf (repeatable): about `2n` queries for a chain in
    /// either direction.
    Random {
        /// Seed of the pivot sequence.
        seed: u64,
    },
}

impl Pivot {
    fn rng(self) -> Option<ChaCha8Rng> {
        match self {
            Pivot::Min => None,
            Pivot::Random { seed } => Some(ChaCha8Rng::seed_from_u64(seed)),
            Pivot::Ends => Some(ChaCha8Rng::seed_from_u64(0)),
        }
    }
}

/// How to reveal.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// FPRev's pivot rule.
    pub pivot: Pivot,
    /// Most inputs per call of a batched black box (`None`: as many as it
    /// takes and whose rows agree with row 0).
    pub batch: Option<usize>,
    /// Pack queries of independent subproblems into one input, each count
    /// a digit of its own (false: one query per input, as the paper).
    pub pack: bool,
    /// Guess that a group repeats the shape of a subtree already built (the
    /// same summands, shifted), as blocked and pairwise sums do, and check
    /// the guess with one query per node instead of building the group; a
    /// wrong guess costs those queries, and the group is built as usual.
    pub guess: bool,
    /// The row of a batched black box (a GEMM's row, an MPI vector's
    /// element) whose order is revealed, with the rows that sum alike.
    pub row: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            algorithm: Algorithm::default(),
            pivot: Pivot::default(),
            batch: None,
            pack: true,
            guess: true,
            row: 0,
        }
    }
}

/// A revealed tree and what it cost.
#[derive(Clone, Debug)]
pub struct Found {
    /// The black box's summation tree.
    pub tree: SummationTree,
    /// Queries, calls and time.
    pub stats: Stats,
    /// Findings worth telling the user, e.g. rows of a GEMM that sum in
    /// different orders.
    pub notes: Vec<Finding>,
}

/// A finding of the engine worth telling the user, as data
/// (`fprev_present::note` words it).
#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    /// Rows of a batched black box sum in another order than `row`, the
    /// row revealed (the same input in every row gave other results):
    /// its order is revealed with the rows that agree with it.
    RowsDiffer {
        /// The row revealed.
        row: usize,
        /// The rows that differ from it, as ranges, ascending.
        differ: Vec<std::ops::RangeInclusive<usize>>,
        /// The rows that agree with it (itself among them), as ranges.
        agree: Vec<std::ops::RangeInclusive<usize>>,
        /// Rows asked in one call.
        per_call: usize,
    },
    /// The black box summed `units` units to `summed` units where its
    /// declared `accumulator` holds that sum exactly: it rounds to a
    /// narrower format, so each query had an input of its own.
    Unpacked {
        /// The units summed.
        units: u64,
        /// What it gave, in units.
        summed: f64,
        /// The accumulator it declares.
        accumulator: Format,
    },
    /// Masked inputs fit no tree, as a sum whose additions round toward
    /// zero answers them: masks whose units survive such additions gave
    /// the tree, one query per input, and its additions truncating give
    /// the first masks' answers too.
    TowardZero,
}

/// Why a black box has no summation tree: it sums order-independently
/// ([`Outcome::OrderIndependent`]), as data (`fprev_present::note` words
/// it).
#[derive(Clone, Debug, PartialEq)]
pub enum OrderIndependent {
    /// Every order of random inputs gave the same bits at one size.
    At {
        /// Its summands.
        n: usize,
        /// What masked inputs said of it (answers that fit no tree): the
        /// engine's fault.
        masked: Fault,
    },
    /// Every size past two summands an explanation revealed is.
    Sizes {
        /// Those sizes, ascending.
        sizes: Vec<usize>,
        /// The other sizes asked, not revealed once a run of sizes and a
        /// larger one settled it (0: none).
        unrevealed: usize,
        /// The sizes in a row that, with a larger one, settle it.
        run: usize,
    },
    /// As a study file records it, read back: its words.
    Recorded(String),
}

/// What a reveal ends with when nothing failed: the black box's tree (a
/// [`Found`], or a workflow's document of it), or the finding that
/// no tree describes it. Not an error: an exact or pre-rounded sum gives
/// the same bits in every order, and that is the answer.
///
/// ```
/// use fprev::{probe::ProbeOptions, reveal, Options};
///
/// let opts = ProbeOptions { n: Some(16), ..Default::default() };
/// let mut exact = fprev::open("reduce:prerounded", &opts).unwrap();
/// let outcome = reveal(&mut exact, &Options::default()).unwrap();
/// assert!(matches!(outcome, reveal::Outcome::OrderIndependent(_)));
/// ```
#[derive(Clone, Debug)]
pub enum Outcome<T> {
    /// The tree, with what is known of it.
    Revealed(T),
    /// The black box gives the same bits in every order (an exact or
    /// pre-rounded sum): no summation tree describes it. Why.
    OrderIndependent(OrderIndependent),
    /// The black box's answer to one input changes from call to call (it
    /// adds in another order each time): no one tree describes it. What
    /// repeating inputs showed.
    Varies(Variation),
}

impl<T> Outcome<T> {
    /// The tree's revelation, `None` for an order-independent black box.
    pub fn revealed(self) -> Option<T> {
        match self {
            Outcome::Revealed(r) => Some(r),
            Outcome::OrderIndependent(_) | Outcome::Varies(_) => None,
        }
    }

    /// The revelation mapped by `f`; an order-independent outcome stays so.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Outcome<U> {
        match self {
            Outcome::Revealed(r) => Outcome::Revealed(f(r)),
            Outcome::OrderIndependent(why) => Outcome::OrderIndependent(why),
            Outcome::Varies(v) => Outcome::Varies(v),
        }
    }
}

/// The fewest masked inputs that can reveal `tree`, counting only what its
/// fused nodes force: the most, over paths from the root to a leaf, of
/// `k(k-1)/2` summed over the fused nodes of `k` children on the path (0
/// for a binary tree).
///
/// Why: let `A` and `B` be children of a fused node `F`, and `T'` the tree
/// that adds `A` and `B` first, then the rest of `F`. Only a mask pair with
/// an end in `A` and one in `B` meets lower in `T'` than in the tree, so an
/// input without one answers alike in both (a unit counts exactly when it
/// is under no pair's meeting node). With one, the units of `F`'s other
/// children survive in `T'` only if no other kind of pair meets at `F` or
/// above: such a pair swamps them in both trees. So one input tells the
/// tree from at most one such `T'` along a path (one pair of children, at
/// one fused node). A reveal of the tree asks an input telling it from
/// each `T'`, or it would return the same tree for `T'`.
///
/// A tensor-core chain of 17-way nodes needs `8.5n` inputs, whatever the
/// engine:
///
/// ```
/// use fprev::{Order, reveal::fused_pair_bound};
///
/// let chain = Order::Fused(17).tree(1_024);
/// assert_eq!(fused_pair_bound(&chain), 15 * 16 / 2 + 63 * (16 * 17 / 2));
/// assert_eq!(fused_pair_bound(&Order::Pairwise.tree(1_024)), 0);
/// ```
pub fn fused_pair_bound(tree: &SummationTree) -> u64 {
    let mut most = vec![0u64; tree.graph().node_count()];
    for node in tree.post_order() {
        let children = tree.children(node);
        let k = children.len() as u64;
        let own = if k > 2 { k * (k - 1) / 2 } else { 0 };
        let below = children.iter().map(|c| most[c.index()]).max();
        most[node.index()] = own + below.unwrap_or(0);
    }
    most[tree.root().index()]
}

/// Reveals the summation tree of `probe`.
///
/// Every answer is validated; a black box that breaks the method's
/// assumptions yields [`Error::BlackBox`], never a tree, and one whose bits
/// do not depend on the order at all (an exact or pre-rounded sum) is
/// [`Outcome::OrderIndependent`].
pub fn reveal(probe: &mut dyn Probe, opts: &Options) -> Result<Outcome<Found>> {
    reveal_observed(probe, opts, &mut Silent)
}

/// [`reveal()`], telling `watcher` when the queries start, each time a
/// summand gets its place, and when the tree is built (or the reveal
/// failed); the `fprev` command draws its progress bar so.
pub fn reveal_observed(
    probe: &mut dyn Probe,
    opts: &Options,
    watcher: &mut dyn Watcher,
) -> Result<Outcome<Found>> {
    reveal_with(probe, opts, watcher, None)
}

/// [`reveal_observed()`] that guesses the whole tree is `predicted` (say,
/// by a formula inferred at other sizes) and checks that guess with one
/// masked query per node, packed as any other query, instead of building
/// the tree: about `n - 1` queries where a reveal asks up to `n log n`.
/// One answer off and the tree is built as usual, so the tree returned is
/// the black box's either way: equal to `predicted` when the prediction
/// was right.
///
/// Fails with [`Error::Unprovable`] where queries are not packed (every
/// count must be exact with all `n` summands live: f32 below 2^24
/// summands), where the black box's inputs cannot be masked, and for a
/// prediction of another size. A prediction with fused nodes is not
/// guessed: the tree is revealed as [`reveal_observed()`] does.
///
/// ```
/// use fprev::{probe, reveal, Order, Options};
///
/// let opts = probe::ProbeOptions { n: Some(1_000), ..Default::default() };
/// let mut bb = fprev::open("native:pairwise", &opts).unwrap();
/// let predicted = Order::Pairwise.tree(1_000);
/// let r = reveal::reveal_predicted(&mut bb, &Options::default(), &predicted, &mut reveal::Silent)
///     .unwrap()
///     .revealed()
///     .unwrap();
/// assert_eq!(r.tree, predicted);
/// assert_eq!(r.stats.queries, 999);
/// ```
pub fn reveal_predicted(
    probe: &mut dyn Probe,
    opts: &Options,
    predicted: &SummationTree,
    watcher: &mut dyn Watcher,
) -> Result<Outcome<Found>> {
    // Whatever stops the checks before they start makes the prediction
    // unprovable here, not the black box wrong.
    let unprovable = |e: Error| match e.kind() {
        crate::error::Kind::Input => Error::Unprovable(Box::new(e)),
        _ => e,
    };
    if predicted.n() != probe.n() {
        return Err(unprovable(Error::Summands(Summands {
            predicted: true,
            tree: predicted.n(),
            black_box: probe.n(),
        })));
    }
    let masks = masks::Masks::for_probe(probe).map_err(unprovable)?;
    if !counts_exactly(probe.n(), &masks) {
        return Err(unprovable(Error::Input(format!(
            "a prediction at n = {} cannot be checked with masked queries: {} counts that \
             many summands exactly only one query at a time; confirm it by replay",
            probe.n(),
            probe.accumulator()
        ))));
    }
    let binary = predicted.is_binary() && opts.algorithm.takes_fused() && opts.guess;
    if !binary {
        return reveal_with(probe, opts, watcher, None);
    }
    let started = Instant::now();
    let (proven, notes, spent) = {
        let mut oracle = Oracle::new(probe).map_err(unprovable)?;
        let notes: Vec<Finding> = oracle
            .calibrate_rows(opts.batch, opts.row)
            .map_err(unprovable)?
            .into_iter()
            .collect();
        watcher.started(oracle.n());
        // The checks count many units in one input: a black box that
        // rounds such counts (narrower than it declares) is revealed.
        let proven = match oracle.calibrate_packing().map_err(unprovable)? {
            None => proof::prove(&mut oracle, predicted)?,
            Some(_) => false,
        };
        watcher.finished();
        (proven, notes, oracle.counters)
    };
    if proven {
        return Ok(Outcome::Revealed(Found {
            tree: predicted.clone(),
            stats: stats(&spent, started),
            notes,
        }));
    }
    // Wrong somewhere, and most likely right in most places: the guess of
    // a reveal, whose tree is the black box's either way.
    let outcome = reveal_with(probe, opts, watcher, Some(predicted))?;
    Ok(outcome.map(|mut r| {
        r.stats.inputs += spent.inputs;
        r.stats.calls += spent.calls;
        r.stats.probe_seconds += spent.in_probe.as_secs_f64();
        r.stats.seconds = started.elapsed().as_secs_f64();
        r
    }))
}

fn reveal_with(
    probe: &mut dyn Probe,
    opts: &Options,
    watcher: &mut dyn Watcher,
    prediction: Option<&SummationTree>,
) -> Result<Outcome<Found>> {
    let started = Instant::now();
    crate::memory::check_reveal(probe.n())?;
    if opts.batch == Some(0) {
        return Err(
            Error::Input("a batch of 0 inputs a call reveals nothing".into())
                .advise(Remedy::AtLeast(Param::Batch, 1)),
        );
    }
    let mut oracle = Oracle::new(probe)?;
    oracle.watch_repeats();
    let mut notes: Vec<Finding> = oracle
        .calibrate_rows(opts.batch, opts.row)?
        .into_iter()
        .collect();
    watcher.started(oracle.n());
    let mut placement = Placement::new(oracle.n(), watcher);
    let tree = build(&mut oracle, opts, &mut notes, &mut placement, prediction);
    watcher.finished();
    let may_fuse = oracle.probe().may_fuse();
    let tree = tree.and_then(|t| match t.widest() {
        terms if terms > 2 && !may_fuse => Err(Error::BlackBox(Fault::FusedNode { terms })),
        _ => Ok(t),
    });
    // One input seen to give other bits: no tree's, whatever rounds, and
    // looked for as long as it takes.
    let unrepeatable = matches!(
        tree.as_ref().err().and_then(Error::fault),
        Some(Fault::Unrepeatable { .. })
    );
    // Answers that fit no tree from a black box that answers one input
    // differently on different calls: another order each time.
    if let Err(e) = &tree
        && matches!(e.plain(), Error::BlackBox(_))
    {
        let calls = match unrepeatable {
            true => u64::MAX,
            false => oracle.counters.calls,
        };
        let v = look_for_variation(oracle.probe(), calls)?;
        if v.varies() {
            return Ok(Outcome::Varies(v));
        }
    }
    // Answers that fit no tree where additions truncate: a unit meeting a
    // negative mask is not absorbed. Masks whose answers hold under every
    // rounding are asked once more, one pair an input.
    let tree = match tree {
        Err(e)
            if !unrepeatable
                && matches!(e.plain(), Error::BlackBox(_))
                && opts.algorithm.takes_fused() =>
        {
            match reveal_toward_zero(&mut oracle, opts.pivot)? {
                Some(t) => {
                    notes.push(Finding::TowardZero);
                    Ok(t)
                }
                // Past the sizes those masks reach, a truncating sum is said
                // to be one, never "not a sum".
                None => match truncation::past_reach(&mut oracle, opts.pivot, opts.row)? {
                    Some(said) => return Err(said),
                    None => Err(e),
                },
            }
        }
        tree => tree,
    };
    let tree = match tree {
        Err(e) => match e.fault().cloned() {
            // Only FPRev tells a fused node (itself order-independent) from
            // an order-independent sum; the binary-only algorithms say so.
            Some(fault) if opts.algorithm.takes_fused() && oracle.order_independent()? => {
                return Ok(Outcome::OrderIndependent(OrderIndependent::At {
                    n: oracle.n(),
                    masked: fault,
                }));
            }
            Some(fault) => {
                // FPRev takes fused nodes in its stride: answers that fit no
                // tree there, from a black box more accurate than additions,
                // are those of a compensated sum.
                let closer = match opts.algorithm.takes_fused() {
                    true => arithmetic::closer_than_plain(oracle.probe())?,
                    false => None,
                }
                .map(|(error, plain)| Closer {
                    error,
                    plain,
                    accumulator: oracle.probe().accumulator(),
                    // A black box that multiplies operands fprev chooses is a
                    // matrix instruction, whose exact groups are a known case.
                    exact_groups: oracle.probe().operands().is_some(),
                });
                let said = Error::BlackBox(Fault::with_causes(fault, closer, oracle.rows() > 1));
                // An exception the black box raised stays with what is said of it.
                Err(match e.raised() {
                    Some(raised) => Error::Raised {
                        error: Box::new(said),
                        raised,
                    },
                    None => said,
                })
            }
            None => Err(e),
        },
        tree => tree,
    }?;
    Ok(Outcome::Revealed(Found {
        tree,
        stats: stats(&oracle.counters, started),
        notes,
    }))
}

/// The tree the answers to [`masks::Masks::toward_zero`] give, where such
/// masks fit the black box, its answers fit a tree, and that tree with
/// truncating additions also gives the answers of the first masks
/// ([`explains_first_masks`]); the oracle then asks with its first masks
/// again. Only an error of the black box's own (not a broken assumption)
/// is returned.
fn reveal_toward_zero(oracle: &mut Oracle, pivot: Pivot) -> Result<Option<SummationTree>> {
    let probe = oracle.probe();
    let (n, format, acc, may_fuse) = (
        probe.n(),
        probe.format(),
        probe.accumulator(),
        probe.may_fuse(),
    );
    let Some(masks) = masks::Masks::toward_zero(n, format, acc, may_fuse) else {
        return Ok(None);
    };
    let first = oracle.masks().clone();
    oracle.use_masks(masks);
    let mut silent = Silent;
    let mut placement = Placement::new(n, &mut silent);
    let tree = stack::build(oracle, pivot, &mut placement);
    oracle.use_masks(first);
    match tree {
        Ok(t) if t.widest() <= 2 || may_fuse => Ok(explains_first_masks(oracle, &t)?.then_some(t)),
        Ok(_) => Ok(None),
        Err(e) if matches!(e.plain(), Error::BlackBox(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether the black box answers the oracle's masks (the first ones, whose
/// answers fit no tree) as `tree` does with additions that round toward
/// zero in its accumulator: one input a pair of children of each node of
/// `tree`, which meet there, the masks on them and a unit on every other
/// summand, and its answer bit for bit that of the replay. The second
/// masks alone cannot tell a truncating sum from a black box that answers
/// masks of one size otherwise (its order depends on the values, or it
/// adds noise): such a one fails here, and its first error stands.
fn explains_first_masks(oracle: &mut Oracle, tree: &SummationTree) -> Result<bool> {
    let (m, u, n) = (oracle.masks().m, oracle.masks().u, oracle.n());
    let probe = oracle.probe();
    let truncating = Arithmetic::uniform(NodeArithmetic {
        rounding: Rounding::TowardZero,
        ..NodeArithmetic::ieee(probe.accumulator())
    });
    let replay = Replay::with_arithmetic(tree, &truncating).returning(probe.result());
    // A leaf of each node, and for each node a leaf of its first child
    // with one of each other child.
    let mut leaf = vec![0; tree.graph().node_count()];
    for i in 0..n {
        leaf[tree.leaf(i).index()] = i;
    }
    let mut pairs = Vec::with_capacity(n.saturating_sub(1));
    for v in tree.post_order() {
        if let [first, rest @ ..] = tree.children(v) {
            leaf[v.index()] = leaf[first.index()];
            pairs.extend(rest.iter().map(|c| [leaf[first.index()], leaf[c.index()]]));
        }
    }
    let base = vec![u; n];
    let mut x = base.clone();
    let mut scratch = Vec::new();
    let mut edits = oracle::Edits::default();
    let per_call = if oracle.probe().max_batch() <= 1 {
        pairs.len().max(1)
    } else {
        oracle.rows()
    };
    for chunk in pairs.chunks(per_call) {
        // Each input puts the masks back to units where the one before
        // had them.
        edits.clear();
        let mut expected = Vec::with_capacity(chunk.len());
        let mut last: Option<[usize; 2]> = None;
        for &[i, j] in chunk {
            for k in last.replace([i, j]).into_iter().flatten() {
                edits.set(k, u);
            }
            edits.set(i, m);
            edits.set(j, -m);
            edits.end_input();
            (x[i], x[j]) = (m, -m);
            expected.push(replay.sum_with(&x, &mut scratch));
            (x[i], x[j]) = (u, u);
        }
        let answers = oracle.sum_inputs(&base, &edits, false)?;
        if answers
            .iter()
            .zip(&expected)
            .any(|(a, e)| a.to_bits() != e.to_bits())
        {
            return Ok(false);
        }
    }
    oracle.counters.queries += pairs.len() as u64;
    Ok(true)
}

/// A reveal's stats from its oracle's counters, timed from `started`.
fn stats(c: &oracle::Counters, started: Instant) -> Stats {
    Stats {
        queries: c.queries,
        inputs: c.inputs,
        calls: c.calls,
        seconds: started.elapsed().as_secs_f64(),
        probe_seconds: c.in_probe.as_secs_f64(),
        arithmetic_calls: 0,
    }
}

/// Runs the algorithm of `opts`, adding its findings to `notes`.
fn build(
    oracle: &mut Oracle,
    opts: &Options,
    notes: &mut Vec<Finding>,
    placement: &mut Placement,
    prediction: Option<&SummationTree>,
) -> Result<SummationTree> {
    match opts.algorithm {
        // Every count exact with all summands live: queries packed.
        Algorithm::Insert | Algorithm::Fprev if counts_exactly(oracle.n(), oracle.masks()) => {
            let pack = opts.pack && packed::worth_packing(oracle.n()) && {
                let note = oracle.calibrate_packing()?;
                let exact = note.is_none();
                notes.extend(note);
                exact
            };
            let mut refuted = None;
            if opts.algorithm == Algorithm::Insert && pack && insert::applies(oracle) {
                match insert::build(oracle, placement)? {
                    insert::Inserted::Found(tree) => return Ok(tree),
                    insert::Inserted::Refuted(tree) => refuted = Some(tree),
                    insert::Inserted::Aside => {}
                }
            }
            let guess = prediction.or(refuted.as_ref());
            packed::build(oracle, opts.pivot, placement, pack, opts.guess, guess)
        }
        Algorithm::Insert | Algorithm::Fprev => stack::build(oracle, opts.pivot, placement),
        Algorithm::Basic => basic::build(oracle),
        Algorithm::Naive => naive::build(oracle),
    }
}

/// Whether the accumulator counts every unit of `n` summands exactly with a
/// mask pair among them: then FPRev's queries are packed.
fn counts_exactly(n: usize, masks: &masks::Masks) -> bool {
    (n as u64) < masks.capacity(1) + 2
}
