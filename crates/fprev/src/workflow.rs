//! The workflows every front end runs: a request in, an outcome out.
//!
//! The `fprev` command and the Python package both call these functions
//! with the same options and get the same documents back; neither strings
//! the steps together itself. What is found on the way (an arithmetic
//! model, a prediction, a proof, an order the replay does not confirm) is
//! told to an [`Observer`] as a [`Note`] while the work goes on, and the
//! front end words it for its users.
//!
//! - [`reveal()`]: reveal a black box's tree (or predict it from smaller
//!   sizes and prove it), confirm it by replay and find each node's
//!   arithmetic, and build the [`TreeDocument`](crate::document::TreeDocument);
//! - [`explain()`]: reveal at several sizes and infer the one formula
//!   behind every tree;
//! - [`check::check`]: replay a tree file on random inputs against its
//!   black box;
//! - [`diff::diff`]: compare two tree documents: size, variation, order,
//!   then arithmetic;
//! - [`invariance()`]: reveal under each batch size, output position and
//!   thread count, each case starting from its neighbours' findings;
//!   [`study`]: the same under each setting of the environment too, each
//!   in fresh processes of its own.
//!
//! An order-independent black box (an exact or pre-rounded sum) is an
//! [`Outcome`], not an error: no tree describes it, and that is the answer.
//!
//! ```
//! use fprev::probe::ProbeOptions;
//! use fprev::reveal::Silent;
//! use fprev::workflow::{self, NoCache, Outcome, Request, Revealing};
//!
//! let request = Request {
//!     probe: ProbeOptions { n: Some(16), ..Default::default() },
//!     ..Default::default()
//! };
//! let mut open = |o: &ProbeOptions| fprev::open("native:pairwise", o);
//! let found = workflow::reveal("native:pairwise", &request, &mut open, &NoCache, None,
//!                              &mut Silent).unwrap();
//! let Revealing::Outcome(_, Outcome::Revealed(found)) = found else {
//!     panic!("a pairwise sum has a tree")
//! };
//! assert_eq!(*found.document.tree(), fprev::Order::Pairwise.tree(16));
//! assert!(found.document.confirmation.unwrap().confirmed());
//! ```

pub mod cache;
pub mod check;
pub mod compare;
mod confirm;
pub mod diff;
pub mod emit;
mod explain;
mod invariance;
mod note;
mod predict;
mod request;
mod reveal;
mod size;
pub mod survey;
pub mod sweep;
mod varies;

pub use crate::reveal::Outcome;
pub use confirm::{Confirm, Models, Seek};
pub use explain::{
    ExplainSizes, Explained, Explanation, INDEPENDENT_CHECK_UP_TO, INDEPENDENT_RUN, Proof,
    VERIFY_BUDGET, VERIFY_SIZES, explain, explain_cached, prove_known,
};
pub use invariance::{Turned, Varied, bisect, default_columns, invariance, row_at, study};
pub use note::{NotConfirmed, Note, Unheld};
pub use predict::ARITHMETIC_AT;
pub use request::{Infer, PREDICT_SIZES, PROVE_UP_TO, Request, Revealed};
pub use reveal::{Revealing, reveal, reveal_opened};
pub use size::GUESS_KNOWN_FROM;
pub use varies::{SKELETON_CALLS, SKELETON_TIME, SUMMARY_RUNS, characterise, skeleton_repeats};

use crate::formula::Formula;
use crate::probe::{Probe, ProbeOptions};
use crate::reveal::Watcher;

/// Opens the same black box with other options (another size, another
/// thread count): the reveals an explanation, a prediction or a sweep
/// rests on.
pub type Opener<'a> = dyn FnMut(&ProbeOptions) -> crate::Result<Box<dyn Probe>> + 'a;

/// Opens a black box from its spec and options, as
/// [`Spec::open`](crate::spec::Spec::open) does (or one wrapping it, as
/// the `fprev` command's guard does): where the workflow learns the spec
/// on the way (a tree file's, each of a survey's).
pub type OpenSpec<'a> =
    dyn FnMut(&crate::spec::Spec, &ProbeOptions) -> crate::Result<Box<dyn Probe>> + 'a;

/// The opener of a reveal that predicts nothing ([`Request::infer`] is
/// `None`), which opens no other size: a sweep's and an explanation's
/// reveal of one size.
pub(crate) fn opens_no_other(_: &ProbeOptions) -> crate::Result<Box<dyn Probe>> {
    Err(crate::Error::Input(
        "a reveal of one size opens no other".into(),
    ))
}

/// Answers of one fresh process to the inputs a reveal compares processes
/// on ([`variation::answers`](crate::variation::answers) with
/// [`VARIATION_INPUTS`](crate::reveal::VARIATION_INPUTS), seed 0): the
/// front end starts a process that opens the same black box (`fprev
/// answers`, Python's child), and [`reveal()`] compares them.
pub type Fresh<'a> = dyn FnMut() -> crate::Result<Vec<u64>> + 'a;

/// What a black box says of itself ([`Probe::about`]), asked only where a
/// cache's key needs it (asking may open the black box).
pub type About<'a> = dyn FnMut() -> crate::Result<Option<String>> + 'a;

/// Where a workflow finds the formula cache of a black box: the user's
/// cache ([`cache::User`]), or [`NoCache`]. What the black box says
/// of itself is part of the key.
pub trait Caches {
    /// The cache of `label` opened with `opts`, its output `row`, which
    /// says `about` of itself.
    fn of(
        &self,
        label: &str,
        opts: &ProbeOptions,
        about: &mut About,
        row: usize,
    ) -> crate::Result<Box<dyn FormulaCache>>;
}

/// No formula cache: nothing is known, kept or forgotten (`--no-cache`).
pub struct NoCache;

impl Caches for NoCache {
    fn of(
        &self,
        _: &str,
        _: &ProbeOptions,
        _: &mut About,
        _: usize,
    ) -> crate::Result<Box<dyn FormulaCache>> {
        Ok(Box::new(NoCache))
    }
}

impl FormulaCache for NoCache {
    fn known(&self) -> Option<(Formula, Vec<usize>, Vec<usize>)> {
        None
    }

    fn forget(&self) {}

    fn keep(&self, _: &Formula, _: &[usize], _: &[usize]) -> crate::Result<()> {
        Ok(())
    }
}

/// The formula cache as the workflows use it, for one black box:
/// [`reveal()`] and [`emit::prepare_cached`] prove the formula kept
/// before they predict with it, forget one the black box refutes and keep
/// one found now. [`cache`] implements it for a key of the user's cache
/// (or none); a front end may wrap it (to hold signals while an entry is
/// written).
pub trait FormulaCache {
    /// The formula kept, the sizes it was found from and checked at.
    fn known(&self) -> Option<(Formula, Vec<usize>, Vec<usize>)>;
    /// Forgets the formula kept: the black box refuted it.
    fn forget(&self);
    /// Keeps `formula`, found from `from` and checked at `checked`.
    fn keep(&self, formula: &Formula, from: &[usize], checked: &[usize]) -> crate::Result<()>;
}

/// Watches a workflow or a sweep: the notes found, as they are found, the
/// sizes revealed one after another, and the progress of each reveal (a
/// progress bar, a log). Every method does nothing unless implemented.
#[allow(unused_variables)]
pub trait Observer: Watcher {
    /// Something worth telling the user was found.
    fn note(&mut self, note: Note) {}

    /// The reveal at size `n` starts, after `done` of `total` sizes (a
    /// sweep, an explanation, the reveals a prediction rests on).
    fn revealing(&mut self, n: usize, done: usize, total: usize) {}

    /// Those sizes are revealed.
    fn sizes_done(&mut self) {}

    /// The case of `setting` of an invariance study starts, after `done`
    /// of `total`.
    fn studying(&mut self, setting: &crate::invariance::Setting, done: usize, total: usize) {}

    /// The fresh process of `setting` of a study of environments starts,
    /// after `done` of `total` ([`study`]).
    fn process(&mut self, setting: &crate::invariance::Setting, done: usize, total: usize) {}
}

impl Observer for crate::reveal::Silent {}
