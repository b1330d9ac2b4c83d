//! `fprev render`'s flags.

use std::path::PathBuf;

use clap::Args;

use super::OutputArgs;

#[derive(Args, Debug)]
pub(crate) struct RenderArgs {
    /// A tree file (JSON, or the text form).
    pub(crate) tree: PathBuf,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}
