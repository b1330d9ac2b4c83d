//! SVG through the `dot` program (Graphviz): the source goes in on stdin,
//! the drawing comes out on stdout.

use std::io::Write as _;
use std::process::{Command, Stdio};

use fprev::error::{Error, Param, Remedy, Result};

/// The SVG that `dot -Tsvg` makes of `source`; an error that says how to
/// install it when `dot` is not on `PATH`.
pub(super) fn run_dot(source: String) -> Result<Vec<u8>> {
    let missing = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::Input(
                "SVG needs the `dot` program from Graphviz, which is not installed \
                 (apt-get install graphviz)"
                    .into(),
            )
            .advise(Remedy::Give(Param::OutputFormat, &["dot"]))
        } else {
            Error::Input(format!("the dot program failed: {e}"))
        }
    };
    let mut child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(missing)?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    // Write from a thread: dot may fill its output pipe before it has read
    // all of a large graph.
    let writer = std::thread::spawn(move || stdin.write_all(source.as_bytes()));
    let output = child.wait_with_output().map_err(missing)?;
    let written = writer.join().expect("the writer does not panic");
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        return Err(Error::Input(format!(
            "the dot program failed ({}): {}",
            output.status,
            said.trim()
        )));
    }
    written.map_err(missing)?;
    Ok(output.stdout)
}
