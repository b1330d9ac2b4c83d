//! Where output goes: stdout or a file named on the command line, the
//! format a file's extension names, and an atomic write so a failure never
//! leaves a half-written file. Every byte the commands print goes through
//! [`print`]: a reader that hangs up (`fprev probes | head -1`) is not an
//! error, where `println!` would panic.

use std::io::Write;
use std::path::Path;

use fprev::error::{Error, Result};

/// `None` (stdout) for no path or `-`.
pub(crate) fn stdout_or(path: Option<&Path>) -> Option<&Path> {
    path.filter(|p| p.as_os_str() != "-")
}

/// The format of an output: `given` (`--format`), else the one the file's
/// extension names, whatever its case; `None` for stdout or a file without
/// an extension. An extension `formats` does not name is an error without
/// `given` (writing text into `t.png` would only mislead), and one naming
/// another format than `given` always is (DOT text in `t.svg`).
pub(crate) fn format_of<F: Copy + PartialEq>(
    given: Option<F>,
    path: Option<&Path>,
    formats: &[(&str, F)],
    command: &str,
) -> Result<Option<F>> {
    let Some(ext) = path.and_then(|p| p.extension()) else {
        return Ok(given);
    };
    let ext = ext.to_string_lossy().to_lowercase();
    let named = formats.iter().find(|(e, _)| *e == ext).map(|(_, f)| *f);
    let endings = |of: Option<F>| -> String {
        let known: Vec<String> = formats
            .iter()
            .filter(|(_, f)| of.is_none_or(|of| *f == of))
            .map(|(e, _)| format!(".{e}"))
            .collect();
        known.join(", ")
    };
    match (given, named) {
        (Some(g), Some(n)) if g != n => Err(Error::Input(format!(
            "--format contradicts -o {}: a .{ext} file holds another format; drop --format, or \
             name a file ending in {}",
            path.map_or(String::new(), |p| p.display().to_string()),
            endings(Some(g))
        ))),
        (Some(g), _) => Ok(Some(g)),
        (None, Some(n)) => Ok(Some(n)),
        (None, None) => Err(Error::Input(format!(
            "{command} cannot write a .{ext} file: name one ending in {}, or give --format",
            endings(None)
        ))),
    }
}

/// Checks up front that `path` can be written, so a long reveal does not end
/// in an unwritable output.
pub(crate) fn check_writable(path: Option<&Path>) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    if path.is_dir() {
        return Err(Error::Input(format!(
            "cannot write {}: it is a directory (name a file)",
            path.display()
        )));
    }
    if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().readonly()) {
        return Err(Error::Input(format!(
            "cannot write {}: the file is read-only (make it writable, or name another file)",
            path.display()
        )));
    }
    let dir = parent_dir(path);
    if !dir.is_dir() {
        return Err(Error::Input(format!(
            "cannot write {}: the directory {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// The directory `path` is in, `.` for a bare file name.
fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Writes to `path` through a temporary file and a rename, so a failure never
/// leaves a half-written file; `None` writes to stdout. A symlink is written
/// through to its target, and what is not a regular file (`/dev/null`, a
/// pipe) is written directly.
pub(crate) fn write_out(bytes: &[u8], path: Option<&Path>) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;

    let Some(path) = path else {
        return print(bytes);
    };
    check_writable(Some(path))?;
    // The kind only: tempfile's errors name its temporary path.
    let fail =
        |e: std::io::Error| Error::Input(format!("cannot write {}: {}", path.display(), e.kind()));
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if target.exists() && !target.is_file() {
        return std::fs::write(&target, bytes).map_err(fail);
    }
    // A signal while the temporary file exists removes it first.
    let held = crate::guard::hold();
    // Mode 0666 less the umask, as for any new file.
    let mut tmp = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(parent_dir(&target))
        .map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    if held.signal().is_some() {
        drop(tmp);
        held.end();
    }
    tmp.persist(&target).map_err(|e| fail(e.error))?;
    Ok(())
}

/// Writes `bytes` to stdout. A closed pipe (`| head`) counts as written: the
/// reader has all it wanted, and the command's exit status stays its own
/// (Rust ignores SIGPIPE, so the write fails with EPIPE instead of killing
/// fprev). Any other failure (a full disk behind `>`) is an error.
pub(crate) fn print(bytes: &[u8]) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Input(format!(
            "cannot write to stdout: {}",
            e.kind()
        ))),
        _ => Ok(()),
    }
}

/// [`print`] of `line` and a newline: `println!` without its panic.
pub(crate) fn println(line: impl std::fmt::Display) -> Result<()> {
    print(format!("{line}\n").as_bytes())
}
