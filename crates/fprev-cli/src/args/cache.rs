//! `fprev cache`'s argument: what it does.

use clap::{Args, ValueEnum};

#[derive(Args, Debug)]
pub(crate) struct CacheArgs {
    /// list: every formula kept, with its black box and the sizes it was
    /// found from; clear: forget them all; dir: where the cache lives
    /// ($FPREV_CACHE_DIR, $XDG_CACHE_HOME/fprev or ~/.cache/fprev).
    #[arg(value_enum, default_value_t = CacheAction::List)]
    pub(crate) action: CacheAction,
}

/// What `fprev cache` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CacheAction {
    /// Every formula kept.
    List,
    /// Forget them all.
    Clear,
    /// Where the cache lives.
    Dir,
}
