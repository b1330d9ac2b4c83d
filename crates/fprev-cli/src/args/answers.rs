//! `fprev answers`'s flags (a hidden command: what `reveal --processes` runs).

use clap::Args;

use fprev::Spec;

use super::{BlackBoxArgs, GuardArgs};

#[derive(Args, Debug)]
pub(crate) struct AnswersArgs {
    pub(crate) spec: Spec,
    #[command(flatten)]
    pub(crate) black_box: BlackBoxArgs,
    /// Random inputs to answer (1 to 64: each is held while answered).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(1..=64))]
    pub(crate) inputs: u8,
    /// Their seed.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    #[command(flatten)]
    pub(crate) guard: GuardArgs,
}
