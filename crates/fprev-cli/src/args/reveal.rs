//! `fprev reveal`'s flags.

use clap::Args;

use fprev::Spec;
use fprev::workflow::PROVE_UP_TO;

use super::parse::{parse_runs, parse_skeleton_seconds};
use super::{BlackBoxArgs, ConfirmArgs, DEFAULT_SPEC, EngineArgs, GuardArgs, OutputArgs};

#[derive(Args, Debug)]
pub(crate) struct RevealArgs {
    /// The black box, e.g. native:pairwise, replay:tree.json (see `fprev probes`).
    #[arg(default_value = DEFAULT_SPEC)]
    pub(crate) spec: Spec,
    #[command(flatten)]
    pub(crate) black_box: BlackBoxArgs,
    #[command(flatten)]
    pub(crate) engine: EngineArgs,
    #[command(flatten)]
    pub(crate) confirm: ConfirmArgs,
    /// Do not reveal at N: reveal at the sizes of `fprev explain` below N,
    /// infer the formula they follow, predict its tree at N, prove it with
    /// masked inputs up to --prove-up-to, and confirm it there by replay
    /// (else a prediction, labelled so; exit 5 if the replay differs). For
    /// sizes too large to reveal in reasonable time.
    #[arg(long)]
    pub(crate) infer: bool,
    /// With --infer, up to this N also prove the prediction with masked
    /// inputs, one query per node packed into shared inputs: the tree is
    /// then revealed, labelled "predicted, proven by K masked checks" (0:
    /// never; a wrong prediction is revealed in full instead).
    #[arg(long, value_name = "N", default_value_t = PROVE_UP_TO, requires = "infer")]
    pub(crate) prove_up_to: usize,
    /// Reveal afresh: from 1,024 summands a reveal otherwise first replays
    /// the tree of each formula known for a library (NumPy's sum,
    /// OpenBLAS's sdot, …) on two random inputs, and proves the first that
    /// replays with one masked check a node (about n/23 calls) instead of
    /// revealing.
    #[arg(long, conflicts_with = "infer")]
    pub(crate) afresh: bool,
    /// With --infer, neither read nor write the cache of formulas (see
    /// `fprev cache`): infer the formula from reveals at smaller sizes.
    #[arg(long, requires = "infer")]
    pub(crate) no_cache: bool,
    /// Before revealing, look for answers that change from call to call:
    /// sum each of 8 random inputs R times and compare the bits (exit 6 and
    /// the spread, in ulps and against the sum's condition number, when
    /// they differ), then find its skeleton with each masked query asked
    /// twice, and R times in a part where answers disagree. Without it, variation is looked for only where a reveal or
    /// its replay fails, at no cost to a deterministic black box, and a
    /// varying one is summarised over 50 calls of each input.
    #[arg(long, value_name = "R", default_value_t = 0, value_parser = parse_runs)]
    pub(crate) runs: usize,
    /// Before revealing, look for an order fixed in each process but
    /// chosen as it starts (a hash seed, a thread pool's start-up, an
    /// allocation's address): the bits of 8 random inputs in this process
    /// and P-1 fresh ones compared (exit 6, nothing written, when they
    /// differ); 2 to 16. --runs looks within this one process.
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u8).range(2..=16))]
    pub(crate) processes: Option<u8>,
    /// Where the black box varies, say so and how much, but do not look
    /// for its skeleton: the subtrees every call shares, found with each
    /// masked query asked twice, and R times (or min(50, max(4, 400000/N))
    /// without --runs) in a part where answers disagree.
    #[arg(long)]
    pub(crate) no_skeleton: bool,
    /// Where the black box varies, the seconds its skeleton's search may
    /// take (0 to 86400): once they are spent, no part is looked into
    /// further and no query asked again, and the skeleton says how many
    /// summands it left unexplored. The search ends within about one
    /// subproblem's first asks past them (at n = 100000, seconds).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = fprev::workflow::SKELETON_TIME.as_secs() as usize,
        value_parser = parse_skeleton_seconds,
        conflicts_with = "no_skeleton"
    )]
    pub(crate) skeleton_seconds: usize,
    #[command(flatten)]
    pub(crate) guard: GuardArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}
