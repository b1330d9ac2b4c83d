//! The formula cache in words: `fprev cache list` and `clear`.

use fprev::cache::{Cache, Cleared, Entry};
use fprev::sizes::runs;

/// `fprev cache list`: each formula kept, with the sizes it was found
/// from and checked at, one entry to two lines; a line saying none is.
pub fn listing(cache: &Cache, entries: &[Entry]) -> String {
    if entries.is_empty() {
        return format!("no formulas kept in {}\n", cache.dir().display());
    }
    let mut out = String::new();
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
        out += &format!(
            "{} {}{shape}{threads}: native:{}\n    found from n = {}{}\n",
            k.spec,
            k.dtype,
            e.formula,
            runs(&e.from),
            match e.checked.as_slice() {
                [] => String::new(),
                checked => format!(", checked at n = {}", runs(checked)),
            }
        );
    }
    out
}

/// `fprev cache clear`: how many entries went, and the files it left.
pub fn cleared_line(cache: &Cache, cleared: &Cleared) -> String {
    format!(
        "cleared {} entries from {}{}",
        cleared.removed,
        cache.dir().display(),
        kept(&cleared.kept)
    )
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
