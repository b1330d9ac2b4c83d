//! `fprev man [COMMAND]`: a manual page in roff, generated from the same
//! definitions clap parses (so `--help` and the page never disagree): fprev(1)
//! or a subcommand's, fprev-COMMAND(1).

use clap::CommandFactory;

use fprev::error::{Error, Result};

use crate::args::{Cli, ManArgs};
use crate::write;

/// Prints the page `a.command` names on stdout.
pub(crate) fn run(a: ManArgs) -> Result<i32> {
    // Built, the subcommands know their full names (`fprev-reveal`) and the
    // global flags they take; `help` is no subcommand a page describes.
    // The page's VERSION is the version alone: --version's features are
    // those of the build that prints it, not of every build the page is for.
    let mut cli = Cli::command()
        .disable_help_subcommand(true)
        .long_version(None);
    cli.build();
    let page = match &a.command {
        None => cli,
        Some(name) => subcommand(&cli, name)?,
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut roff)
        .map_err(|e| Error::Input(format!("cannot render the page: {e}")))?;
    write::print(ascii(&String::from_utf8_lossy(&roff)).as_bytes())?;
    Ok(0)
}

/// `roff` with each character past ASCII (the help's `…`) as roff's escape
/// of it, `\[u2026]`: a roff reads its input as Latin-1 unless told
/// otherwise (groff without `-k`), and the escape reads the same in all.
fn ascii(roff: &str) -> String {
    roff.chars()
        .map(|c| {
            if c.is_ascii() {
                c.to_string()
            } else {
                format!("\\[u{:04X}]", u32::from(c))
            }
        })
        .collect()
}

/// The visible subcommand `name` of `cli`; another name is bad input,
/// naming those there are.
fn subcommand(cli: &clap::Command, name: &str) -> Result<clap::Command> {
    let visible: Vec<&clap::Command> = cli.get_subcommands().filter(|c| !c.is_hide_set()).collect();
    match visible.iter().find(|c| c.get_name() == name) {
        Some(sub) => Ok((*sub).clone()),
        None => {
            let names: Vec<&str> = visible.iter().map(|c| c.get_name()).collect();
            Err(Error::Input(format!(
                "no subcommand '{name}': the pages are fprev's and those of {}",
                names.join(", ")
            )))
        }
    }
}
