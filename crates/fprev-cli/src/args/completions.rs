//! `fprev completions`'s argument.

use clap::Args;
use clap_complete::Shell;

#[derive(Args, Debug)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for: load the script it prints from its
    /// startup file (bash: `source <(fprev completions bash)`).
    #[arg(value_enum)]
    pub(crate) shell: Shell,
}
