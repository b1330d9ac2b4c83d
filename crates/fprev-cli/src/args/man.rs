//! `fprev man`'s argument.

use clap::Args;

#[derive(Args, Debug)]
pub(crate) struct ManArgs {
    /// The subcommand whose page to print (`fprev man reveal`: fprev-reveal(1))
    /// [default: fprev(1), which lists the subcommands].
    #[arg(value_name = "COMMAND")]
    pub(crate) command: Option<String>,
}
