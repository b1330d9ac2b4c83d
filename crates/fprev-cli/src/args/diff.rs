//! `fprev diff`'s flags.

use std::path::PathBuf;

use clap::Args;

use super::ReportArgs;

#[derive(Args, Debug)]
pub(crate) struct DiffArgs {
    /// First tree file.
    pub(crate) a: PathBuf,
    /// Second tree file.
    pub(crate) b: PathBuf,
    #[command(flatten)]
    pub(crate) report: ReportArgs,
}
