//! `fprev compare`'s flags.

use std::path::PathBuf;

use clap::Args;

use super::ReportArgs;

#[derive(Args, Debug)]
pub(crate) struct CompareArgs {
    /// The reference survey (survey.json, or the directory holding it).
    pub(crate) a: PathBuf,
    /// The survey compared with it.
    pub(crate) b: PathBuf,
    /// Also write the differences as a self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// Leave the drawings out of the HTML page.
    #[arg(long, requires = "html")]
    pub(crate) no_draw: bool,
    #[command(flatten)]
    pub(crate) report: ReportArgs,
}
