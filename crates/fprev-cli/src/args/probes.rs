//! `fprev probes`'s argument.

use clap::Args;

#[derive(Args, Debug)]
pub struct ProbesArgs {
    /// A family's prefix (`mma`): list every spec of it, one a line
    pub family: Option<String>,
}
