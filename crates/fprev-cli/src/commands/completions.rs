//! `fprev completions SHELL`: the shell's completion script for every
//! subcommand and flag, generated from the same definitions clap parses.

use clap::CommandFactory;

use fprev::error::Result;

use crate::args::{Cli, CompletionsArgs};
use crate::write;

/// Prints the completion script of `a.shell` on stdout.
pub(crate) fn run(a: CompletionsArgs) -> Result<i32> {
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut Cli::command(), "fprev", &mut script);
    write::print(&script)?;
    Ok(0)
}
