//! `fprev check`'s flags.

use std::path::PathBuf;

use clap::Args;

use fprev::Spec;

use super::parse::parse_trials;
use super::{BlackBoxArgs, GuardArgs, MismatchArgs, ReportArgs};

#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    /// The tree file to confirm.
    pub(crate) tree: PathBuf,
    /// The black box to compare it with.
    pub(crate) spec: Spec,
    #[command(flatten)]
    pub(crate) black_box: BlackBoxArgs,
    /// Random inputs to try (at most 1,000,000).
    #[arg(long, default_value_t = 1000, value_parser = parse_trials)]
    pub(crate) trials: usize,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// The row of a batched black box to compare with (see reveal --row).
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub(crate) row: usize,
    #[command(flatten)]
    pub(crate) mismatch: MismatchArgs,
    #[command(flatten)]
    pub(crate) guard: GuardArgs,
    #[command(flatten)]
    pub(crate) report: ReportArgs,
}
