//! The formula cache (`fprev cache`, and the cache `explain`, `reveal
//! --infer` and `emit` use): the user's cache as the workflows find a
//! black box's entry in it ([`User`]), and what the `cache` command shows
//! and clears.

use crate::cache::{Cache, Cleared, Entry, Key, forget, keep, known, lookup};
use crate::error::{Error, Result};
use crate::formula::Formula;
use crate::probe::ProbeOptions;

use super::{About, Caches, FormulaCache};

/// The user's cache ([`Cache::user`]) as the workflows find a black box's
/// entry in it: none where no cache directory is named.
///
/// ```
/// use fprev::probe::ProbeOptions;
/// use fprev::workflow::Caches;
///
/// let dir = tempfile::tempdir().unwrap();
/// unsafe { std::env::set_var("FPREV_CACHE_DIR", dir.path()) };
/// let entry = fprev::workflow::cache::User
///     .of("native:pairwise", &ProbeOptions::default(), &mut || Ok(None), 0)
///     .unwrap();
/// assert!(entry.known().is_none());
/// entry.keep(&"pairwise".parse().unwrap(), &[3, 4], &[]).unwrap();
/// assert_eq!(entry.known().unwrap().1, [3, 4]);
/// ```
pub struct User;

impl Caches for User {
    fn of(
        &self,
        label: &str,
        opts: &ProbeOptions,
        about: &mut About,
        row: usize,
    ) -> Result<Box<dyn FormulaCache>> {
        Ok(Box::new(lookup(label, opts, about()?, row)))
    }
}

/// The formula kept under the key, for the workflows.
impl FormulaCache for Option<(Cache, Key)> {
    fn known(&self) -> Option<(Formula, Vec<usize>, Vec<usize>)> {
        known(self.as_ref())
    }

    fn forget(&self) {
        forget(self.as_ref())
    }

    fn keep(&self, formula: &Formula, from: &[usize], checked: &[usize]) -> Result<()> {
        keep(self.as_ref(), formula, from, checked)
    }
}

/// The user's cache, or why there is none.
pub fn user() -> Result<Cache> {
    Cache::user().ok_or_else(|| {
        Error::Input("no cache directory: set FPREV_CACHE_DIR, XDG_CACHE_HOME or HOME".into())
    })
}

/// The user's cache and the formulas it keeps.
pub fn list() -> Result<(Cache, Vec<Entry>)> {
    let cache = user()?;
    let entries = cache.list();
    Ok((cache, entries))
}

/// Clears the user's cache of the entries fprev wrote.
pub fn clear() -> Result<(Cache, Cleared)> {
    let cache = user()?;
    let cleared = cache.clear()?;
    Ok((cache, cleared))
}
