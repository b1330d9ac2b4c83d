//! `fprev cache`, and the cache as `explain` and `reveal --infer` use it:
//! the formula kept for a black box is looked up by its key, and kept or
//! forgotten after the real black box has had its say.

use fprev::cache::Cache;
use fprev::error::{Error, Result};
use fprev::formula::Formula;
use fprev::probe::ProbeOptions;
use fprev::sizes::runs;
use fprev::workflow::{About, Caches, FormulaCache, NoCache};

use crate::args::{CacheAction, CacheArgs};
use crate::write;

/// Runs `fprev cache`.
pub(super) fn run(a: CacheArgs) -> Result<i32> {
    let cache = Cache::user().ok_or_else(|| {
        Error::Input("no cache directory: set FPREV_CACHE_DIR, XDG_CACHE_HOME or HOME".into())
    })?;
    match a.action {
        CacheAction::Dir => write::println(format_args!("{}", cache.dir().display()))?,
        CacheAction::Clear => {
            let cleared = cache.clear()?;
            write::println(format_args!(
                "cleared {} entries from {}{}",
                cleared.removed,
                cache.dir().display(),
                kept(&cleared.kept)
            ))?;
        }
        CacheAction::List => {
            let entries = cache.list();
            if entries.is_empty() {
                write::println(format_args!(
                    "no formulas kept in {}",
                    cache.dir().display()
                ))?;
            }
            for e in entries {
                let k = &e.key;
                let shape = k
                    .shape
                    .map(|[m, n]| format!(", shape {m},{n},K"))
                    .unwrap_or_default();
                let threads = k
                    .threads
                    .map(|t| format!(", {t} threads"))
                    .unwrap_or_default();
                write::println(format_args!(
                    "{} {}{shape}{threads}: native:{}\n    found from n = {}{}",
                    k.spec,
                    k.dtype,
                    e.formula,
                    runs(&e.from),
                    match e.checked.as_slice() {
                        [] => String::new(),
                        checked => format!(", checked at n = {}", runs(checked)),
                    }
                ))?;
            }
        }
    }
    Ok(0)
}

/// What `cache clear` says of the files it left: `; kept 2 files that are
/// not fprev's cache entries: a.json, b.toml` (the first few named).
fn kept(files: &[std::path::PathBuf]) -> String {
    const NAMED: usize = 5;
    if files.is_empty() {
        return String::new();
    }
    let names: Vec<String> = files
        .iter()
        .take(NAMED)
        .map(|f| {
            f.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let more = files.len().saturating_sub(NAMED);
    format!(
        "; kept {} file{} that {} not fprev's cache entries: {}{}",
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        if files.len() == 1 { "is" } else { "are" },
        names.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
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
        let entry = fprev::cache::User.of(label, opts, about, row)?;
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
