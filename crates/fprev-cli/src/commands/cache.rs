//! `fprev cache`, and the cache as `explain` and `reveal --infer` use it:
//! the formula kept for a black box is looked up by its key, and kept or
//! forgotten after the real black box has had its say.

use fprev::error::Result;
use fprev::formula::Formula;
use fprev::probe::ProbeOptions;
use fprev::workflow::{About, Caches, FormulaCache, NoCache, cache};
use fprev_present::cache::{cleared_line, listing};

use crate::args::{CacheAction, CacheArgs};
use crate::write;

/// Runs `fprev cache`.
pub(super) fn run(a: CacheArgs) -> Result<i32> {
    match a.action {
        CacheAction::Dir => write::println(format_args!("{}", cache::user()?.dir().display()))?,
        CacheAction::Clear => {
            let (cache, cleared) = cache::clear()?;
            write::println(cleared_line(&cache, &cleared))?;
        }
        CacheAction::List => {
            let (cache, entries) = cache::list()?;
            write::print(listing(&cache, &entries).as_bytes())?;
        }
    }
    Ok(0)
}

/// The formula caches a command's workflow uses: none with `--no-cache`,
/// else the user's, each entry written with the ending signals held.
pub(super) fn caches(no_cache: bool) -> &'static dyn Caches {
    match no_cache {
        true => &NoCache,
        false => &Held,
    }
}

/// The user's cache, written with the ending signals held: a signal while
/// an entry's temporary file exists waits for it.
struct Held;

impl Caches for Held {
    fn of(
        &self,
        label: &str,
        opts: &ProbeOptions,
        about: &mut About,
        row: usize,
    ) -> Result<Box<dyn FormulaCache>> {
        let entry = fprev::workflow::cache::User.of(label, opts, about, row)?;
        Ok(Box::new(HeldEntry(entry)))
    }
}

/// One black box's entry in [`Held`].
struct HeldEntry(Box<dyn FormulaCache>);

impl FormulaCache for HeldEntry {
    fn known(&self) -> Option<(Formula, Vec<usize>, Vec<usize>)> {
        self.0.known()
    }

    fn forget(&self) {
        self.0.forget()
    }

    fn keep(&self, formula: &Formula, from: &[usize], checked: &[usize]) -> Result<()> {
        let _held = crate::guard::hold();
        self.0.keep(formula, from, checked)
    }
}
