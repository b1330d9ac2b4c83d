//! `fprev cache`, and the cache as `explain` and `reveal --infer` use it:
//! the formula kept for a black box is looked up by its key, and kept or
//! forgotten after the real black box has had its say.

use fprev::cache::{Cache, Key};
use fprev::error::{Error, Result};
use fprev::formula::Formula;
use fprev::probe::ProbeOptions;
use fprev::sizes::runs;
use fprev::workflow::FormulaCache;

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

/// The user's cache and the key of row `row` of `spec` opened with `opts`
/// (`about`: what the black box says of itself), unless `skip`
/// (`--no-cache`) or no cache directory is named: what the workflows use
/// as the black box's [`FormulaCache`].
pub(super) fn lookup(
    spec: &str,
    opts: &ProbeOptions,
    about: Option<String>,
    row: usize,
    skip: bool,
) -> Guarded {
    Guarded(match skip {
        true => None,
        false => fprev::cache::lookup(spec, opts, about, row),
    })
}

/// A black box's entry in the user's cache (or none), written with the
/// ending signals held: a signal while the entry's temporary file exists
/// waits for it.
#[derive(Default)]
pub(super) struct Guarded(Option<(Cache, Key)>);

impl FormulaCache for Guarded {
    fn known(&self) -> Option<(Formula, Vec<usize>, Vec<usize>)> {
        self.0.as_ref().known()
    }

    fn forget(&self) {
        self.0.as_ref().forget()
    }

    fn keep(&self, formula: &Formula, from: &[usize], checked: &[usize]) -> Result<()> {
        let _held = crate::guard::hold();
        self.0.as_ref().keep(formula, from, checked)
    }
}
