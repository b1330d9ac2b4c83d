//! The per-user cache of explanations: the formula found for a black box,
//! kept so that the next `explain` or `reveal --infer` of it starts from
//! the formula instead of revealing sixty sizes first. A cached formula
//! is never printed as found: it is a prediction, proven or confirmed
//! again on the real black box at the sizes asked, and dropped where the
//! black box refutes it.
//!
//! An entry is keyed by everything that may change the order: the spec,
//! its number format, accumulator, shape and thread count, what the black
//! box says of itself (a library's build and version), the CPU and its
//! arithmetic features, the environment variables that steer kernels, and
//! this fprev's version. It lives in `$FPREV_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/fprev`, else `~/.cache/fprev`, one JSON file a key.
//!
//! ```
//! use fprev::cache::{Cache, Entry, Key};
//! use fprev::probe::ProbeOptions;
//!
//! let dir = std::env::temp_dir().join(format!("fprev-cache-doc-{}", std::process::id()));
//! let cache = Cache::at(&dir);
//! let key = Key::new("native:pairwise", &ProbeOptions::default(), None);
//! assert!(cache.get(&key).is_none());
//! cache.put(&Entry { key: key.clone(), formula: "pairwise".into(), from: vec![3, 8], checked: vec![] })
//!     .unwrap();
//! assert_eq!(cache.get(&key).unwrap().formula, "pairwise");
//! assert_eq!(cache.clear().unwrap().removed, 1);
//! # std::fs::remove_dir_all(&dir).ok();
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::machine::Machine;
use crate::probe::ProbeOptions;

/// The version of the cache's files this build reads and writes; others
/// are ignored (and replaced when the same key is stored again).
pub const VERSION: u64 = 1;

/// What an explanation is kept under.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    /// The spec, as given.
    pub spec: String,
    /// The input format.
    pub dtype: String,
    /// The accumulator format asked for, if one was.
    pub accumulator: Option<String>,
    /// `M` and `N` of a GEMV's or GEMM's shape (`K` is the size).
    pub shape: Option<[usize; 2]>,
    /// The thread count asked for, if one was.
    pub threads: Option<usize>,
    /// The MPI ranks it ran on, for an `mpi:` black box.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<usize>,
    /// The row of a batched black box explained (a GEMV's row, an MPI
    /// vector's element), other than the first: rows may sum otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<usize>,
    /// Where its input array started past a 64-byte boundary, where not
    /// where NumPy's allocation puts it: an unaligned array may be summed
    /// in another order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<String>,
    /// What the black box says of itself (a library's build and version).
    pub about: Option<String>,
    /// The CPU, its arithmetic features, the steering environment
    /// variables set, and this fprev's version.
    pub machine: String,
}

impl Key {
    /// The key of `spec` opened with `opts` on this machine, `about`
    /// being what the black box says of itself.
    pub fn new(spec: &str, opts: &ProbeOptions, about: Option<String>) -> Self {
        let here = Machine::here();
        let environment: Vec<String> = here
            .environment
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        Key {
            spec: spec.to_string(),
            dtype: opts.format.to_string(),
            accumulator: opts.accumulator.map(|a| a.to_string()),
            shape: opts.shape.map(|[m, n, _]| [m, n]),
            threads: opts.threads,
            ranks: opts.ranks,
            row: None,
            offset: opts.offset.map(|o| o.to_string()),
            about,
            machine: format!(
                "{}; {}; {}; fprev {}",
                here.cpu,
                here.cpu_features.join(" "),
                environment.join(" "),
                here.fprev
            ),
        }
    }

    /// The key of row `row` of the batched black box (row 0 is the key's
    /// own).
    pub fn at_row(self, row: usize) -> Self {
        Key {
            row: (row != 0).then_some(row),
            ..self
        }
    }

    /// The file name of the key: a stable 64-bit hash (FNV-1a) of its JSON.
    fn file_name(&self) -> String {
        let text = serde_json::to_string(self).expect("a key serialises");
        let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        format!("{hash:016x}.json")
    }
}

/// A formula found for a black box.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// What it is kept under.
    pub key: Key,
    /// The formula, as `native:` takes it without the prefix.
    pub formula: String,
    /// The sizes revealed to find it.
    pub from: Vec<usize>,
    /// The sizes past those at which it was checked.
    pub checked: Vec<usize>,
}

/// One file of the cache.
#[derive(Serialize, Deserialize)]
struct File {
    fprev_cache: u64,
    #[serde(flatten)]
    entry: Entry,
}

/// The cache in one directory.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// The cache in `dir` (made when an entry is first stored).
    pub fn at(dir: &Path) -> Self {
        Cache {
            dir: dir.to_path_buf(),
        }
    }

    /// The user's cache: `$FPREV_CACHE_DIR`, `$XDG_CACHE_HOME/fprev` or
    /// `~/.cache/fprev`; `None` where no such place is named.
    pub fn user() -> Option<Self> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let dir = var("FPREV_CACHE_DIR")
            .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("fprev")))
            .or_else(|| var("HOME").map(|d| d.join(".cache").join("fprev")))?;
        Some(Cache::at(&dir))
    }

    /// Where the cache lives.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entry of `key`, where one of this version is stored for exactly
    /// that key.
    pub fn get(&self, key: &Key) -> Option<Entry> {
        let text = std::fs::read_to_string(self.dir.join(key.file_name())).ok()?;
        let file: File = serde_json::from_str(&text).ok()?;
        (file.fprev_cache == VERSION && file.entry.key == *key).then_some(file.entry)
    }

    /// Stores `entry`, replacing its key's, through a temporary file so
    /// that no reader sees half an entry.
    pub fn put(&self, entry: &Entry) -> Result<()> {
        let fail = |e: std::io::Error| {
            Error::Input(format!(
                "cannot write the cache in {}: {e} (fprev can run without it)",
                self.dir.display()
            ))
        };
        std::fs::create_dir_all(&self.dir).map_err(fail)?;
        let file = File {
            fprev_cache: VERSION,
            entry: entry.clone(),
        };
        let text = serde_json::to_string_pretty(&file).expect("an entry serialises");
        let path = self.dir.join(entry.key.file_name());
        let temporary = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&temporary, text + "\n").map_err(fail)?;
        std::fs::rename(&temporary, &path).map_err(fail)
    }

    /// Forgets `key`'s entry, if any.
    pub fn remove(&self, key: &Key) {
        std::fs::remove_file(self.dir.join(key.file_name())).ok();
    }

    /// Every entry this build reads, by spec.
    pub fn list(&self) -> Vec<Entry> {
        let mut out: Vec<Entry> = self
            .files()
            .into_iter()
            .filter_map(|p| {
                let file: File = serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()?;
                (file.fprev_cache == VERSION).then_some(file.entry)
            })
            .collect();
        out.sort_by(|a, b| a.key.spec.cmp(&b.key.spec));
        out
    }

    /// Removes every entry (of any version), and only entries: a file is
    /// one where fprev wrote it, named by the hash of its key and holding
    /// the `fprev_cache` marker (this version's entries: the key that
    /// hashes to that name), or an interrupted write's temporary copy of
    /// one. The directory's other files stay, and are said.
    pub fn clear(&self) -> Result<Cleared> {
        let mut cleared = Cleared::default();
        let Ok(listing) = std::fs::read_dir(&self.dir) else {
            return Ok(cleared);
        };
        let mut paths: Vec<PathBuf> = listing
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| !p.is_dir())
            .collect();
        paths.sort();
        for path in paths {
            if is_entry(&path) {
                std::fs::remove_file(&path)
                    .map_err(|e| Error::Input(format!("cannot remove {}: {e}", path.display())))?;
                cleared.removed += 1;
            } else {
                cleared.kept.push(path);
            }
        }
        Ok(cleared)
    }

    /// The cache's JSON files.
    fn files(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect()
    }
}

/// What [`Cache::clear`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cleared {
    /// How many entries it removed.
    pub removed: usize,
    /// The directory's files that are not entries, left as they were.
    pub kept: Vec<PathBuf>,
}

/// Whether `path` is an entry fprev wrote ([`Cache::clear`]): its name a
/// key's hash (`.json`, or `.tmpPID` where a write stopped before its
/// rename), its text an object marked `fprev_cache`, and one of this
/// version the entry of the key its name is the hash of.
fn is_entry(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let Some((hash, extension)) = name.split_once('.') else {
        return false;
    };
    let named = hash.len() == 16
        && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        && (extension == "json"
            || extension
                .strip_prefix("tmp")
                .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())));
    if !named {
        return false;
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Ok(serde_json::Value::Object(object)) = serde_json::from_str(&text) else {
        return false;
    };
    match object
        .get("fprev_cache")
        .and_then(serde_json::Value::as_u64)
    {
        Some(VERSION) => serde_json::from_value::<File>(serde_json::Value::Object(object))
            .is_ok_and(|file| file.entry.key.file_name() == format!("{hash}.json")),
        Some(_) => true,
        None => false,
    }
}

/// The user's cache and the key of row `row` of `spec` opened with `opts`
/// (`about`: what the black box says of itself); `None` where no cache
/// directory is named.
pub fn lookup(
    spec: &str,
    opts: &ProbeOptions,
    about: Option<String>,
    row: usize,
) -> Option<(Cache, Key)> {
    Some((Cache::user()?, Key::new(spec, opts, about).at_row(row)))
}

/// The formula kept under `at`'s key, the sizes it was found from and
/// those it was checked at.
pub fn known(
    at: Option<&(Cache, Key)>,
) -> Option<(crate::formula::Formula, Vec<usize>, Vec<usize>)> {
    let (cache, key) = at?;
    let entry = cache.get(key)?;
    let formula = entry.formula.parse().ok()?;
    Some((formula, entry.from, entry.checked))
}

/// Keeps `formula` (found from `from`, checked at `checked`) under `at`'s
/// key, where there is one.
pub fn keep(
    at: Option<&(Cache, Key)>,
    formula: &crate::formula::Formula,
    from: &[usize],
    checked: &[usize],
) -> Result<()> {
    let Some((cache, key)) = at else {
        return Ok(());
    };
    cache.put(&Entry {
        key: key.clone(),
        formula: formula.to_string(),
        from: from.to_vec(),
        checked: checked.to_vec(),
    })
}

/// Forgets the formula kept under `at`'s key: the black box refuted it.
pub fn forget(at: Option<&(Cache, Key)>) {
    if let Some((cache, key)) = at {
        cache.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_and_rows_key_entries_of_their_own_and_other_keys_read_as_before() {
        let on = |ranks| {
            let opts = ProbeOptions {
                ranks,
                ..ProbeOptions::default()
            };
            Key::new("mpi:allreduce", &opts, None)
        };
        // Written without them, a key hashes as it did before they were.
        let text = serde_json::to_string(&on(None)).unwrap();
        assert!(!text.contains("ranks") && !text.contains("row"), "{text}");
        assert_ne!(on(Some(4)).file_name(), on(Some(5)).file_name());
        assert_ne!(on(Some(4)).at_row(63).file_name(), on(Some(4)).file_name());
        assert_eq!(on(Some(4)).at_row(0), on(Some(4)));
    }

    #[test]
    fn clear_removes_only_the_entries_fprev_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path());
        let key = Key::new("native:pairwise", &ProbeOptions::default(), None);
        let entry = Entry {
            key: key.clone(),
            formula: "pairwise".into(),
            from: vec![3],
            checked: vec![],
        };
        cache.put(&entry).unwrap();
        let text = std::fs::read_to_string(dir.path().join(key.file_name())).unwrap();
        // An entry's copy under another name, an interrupted write's
        // temporary copy, a user's tree and settings, and JSON with the
        // marker but not a hash's name.
        let other = "0123456789abcdef.json";
        let temporary = key.file_name().replace(".json", ".tmp77");
        let files = [
            (other, text.as_str()),
            (temporary.as_str(), text.as_str()),
            ("tree.json", r#"{"fprev_tree": 1, "n": 2}"#),
            ("config.toml", "a = 1"),
            ("mine.json", r#"{"fprev_cache": 1}"#),
        ];
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let cleared = cache.clear().unwrap();
        assert_eq!(cleared.removed, 2, "{cleared:?}");
        let kept: Vec<_> = cleared
            .kept
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(kept, [other, "config.toml", "mine.json", "tree.json"]);
        assert!(cleared.kept.iter().all(|p| p.exists()));
        assert!(cache.get(&key).is_none());
    }
}
