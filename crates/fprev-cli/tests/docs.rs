//! The documentation's examples, run: every `console` block of README.md,
//! docs/GUIDE.md and docs/REFERENCE.md (each command's `--help`) must print
//! what it shows.
//!
//! A block is a shell session: `$ COMMAND` lines, each followed by what it
//! prints (stdout and stderr together). Commands run in order, through
//! `bash`, in a fresh directory per document (so one example may read a
//! file an earlier one wrote, and `outputs/` is the repository's), with
//! this build's `fprev` first on `PATH`
//! and a formula cache of their own. A command must exit 0; an example
//! about an exit status shows it as a reader would see it, `...; echo $?`.
//! Times (`0.103 s`, `2 s`) are not compared, and a line holding only `...`
//! stands for any number of lines, so an example may shorten a long
//! output. A fenced block whose info string names a file after its
//! language (```` ```python joins.py ````) is written to that file before
//! the commands after it run. A `console mpi` block runs only in a build
//! with the `mpi` feature.
//!
//! `FPREV_DOCS=overwrite cargo test -p fprev-cli --test docs` rewrites
//! each example's output with what it printed (elisions too: put them back
//! by hand).
//!
//! A runner of its own rather than `trycmd`'s Markdown mode, because the
//! examples are read by people: they use pipes and files, and they show
//! real times, which a comparison masks here rather than in the text.

use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

/// One fenced block of a Markdown document.
struct Block {
    /// The info string after the opening fence, split on spaces.
    info: Vec<String>,
    /// The line number (1-based) of the first line inside the fence.
    first_line: usize,
    /// The lines inside the fence.
    lines: Vec<String>,
}

/// One `$ COMMAND` of a console block and the output it shows.
struct Example {
    command: String,
    expected: Vec<String>,
    /// Where `expected` sits among the document's lines, 0-based: its
    /// start is also the command's line, 1-based.
    span: std::ops::Range<usize>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((fence, line)) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let indent = line.len() - line.trim_start().len();
        let mut block = Block {
            info: info.split_whitespace().map(str::to_string).collect(),
            first_line: fence + 2,
            lines: Vec::new(),
        };
        for (_, line) in lines.by_ref() {
            if line.trim_start().starts_with("```") {
                break;
            }
            block
                .lines
                .push(line.get(indent..).unwrap_or(line.trim_start()).to_string());
        }
        blocks.push(block);
    }
    blocks
}

fn examples(block: &Block) -> Vec<Example> {
    let mut examples: Vec<Example> = Vec::new();
    for (offset, line) in block.lines.iter().enumerate() {
        let at = block.first_line + offset;
        if let Some(command) = line.strip_prefix("$ ") {
            examples.push(Example {
                command: command.to_string(),
                expected: Vec::new(),
                span: at..at,
            });
        } else {
            let example = examples.last_mut().unwrap_or_else(|| {
                panic!("line {at}: a console block starts with `$ COMMAND`, not {line:?}")
            });
            example.expected.push(line.clone());
            example.span.end = at;
        }
    }
    examples
}

/// `text` with every time (`0.103 s`, `2 s`, `1.5 ms`) replaced by `TIME`,
/// the one part of an output that changes from run to run.
fn without_times(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        let after_word = rest[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '.');
        let len = rest[start..]
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len() - start);
        let number = &rest[start..start + len];
        let tail = &rest[start + len..];
        let unit = ["s", "ms", "us"].into_iter().find(|unit| {
            tail.strip_prefix(' ')
                .and_then(|t| t.strip_prefix(unit))
                .is_some_and(|t| !t.starts_with(|c: char| c.is_alphanumeric()))
        });
        out.push_str(&rest[..start]);
        if unit.is_some() && !after_word && !number.ends_with('.') {
            out.push_str("TIME");
        } else {
            out.push_str(number);
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// Whether `actual` is what `expected` shows: line by line, times aside,
/// a `...` line standing for any number of lines.
fn shows(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "..." => {
            (0..=actual.len()).any(|skip| shows(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual.split_first().is_some_and(|(line, after)| {
            without_times(first).trim_end() == without_times(line).trim_end() && shows(rest, after)
        }),
    }
}

fn fprev_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_fprev"))
        .parent()
        .expect("the binary has a directory")
        .to_path_buf()
}

/// Runs every example of `document` (relative to the repository's root)
/// and fails listing each one that printed something else.
fn run_document(document: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = root.join(document);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{document}: {e}"));
    let dir = TempDir::new().unwrap();
    // The examples read the repository's committed outputs as a reader at
    // its root does, and write nowhere in it.
    std::os::unix::fs::symlink(root.join("outputs"), dir.path().join("outputs")).unwrap();
    let path_var = format!(
        "{}:{}",
        fprev_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    let mut exits = Vec::new();
    let mut rewrites: Vec<(std::ops::Range<usize>, Vec<String>)> = Vec::new();
    for block in blocks(&text) {
        match block.info.as_slice() {
            [lang, file, ..] if lang != "console" => {
                std::fs::write(dir.path().join(file), block.lines.join("\n") + "\n").unwrap();
                continue;
            }
            [lang, ..] if lang == "console" => {}
            _ => continue,
        }
        if block.info.iter().any(|tag| tag == "mpi") && !cfg!(feature = "mpi") {
            eprintln!(
                "{document}:{}: skipped: an MPI example, and this build has no `mpi` feature",
                block.first_line
            );
            continue;
        }
        for example in examples(&block) {
            let output = Command::new("bash")
                .arg("-c")
                .arg(format!("exec 2>&1\n{}", example.command))
                .current_dir(dir.path())
                .env("PATH", &path_var)
                .env("FPREV_CACHE_DIR", dir.path().join(".fprev-cache"))
                .env("COLUMNS", "100")
                .output()
                .expect("bash runs");
            let printed = String::from_utf8_lossy(&output.stdout);
            let actual: Vec<String> = printed.lines().map(str::to_string).collect();
            if !output.status.success() {
                exits.push(format!(
                    "{document}:{}: `{}` exited with {} (an example shows a failure with `; echo $?`):\n{printed}",
                    example.span.start, example.command, output.status
                ));
            } else if !shows(&example.expected, &actual) {
                failures.push(format!(
                    "{document}:{}: `{}` printed\n{printed}\nwhere the document shows\n{}\n",
                    example.span.start,
                    example.command,
                    example.expected.join("\n")
                ));
                rewrites.push((example.span.clone(), actual));
            }
        }
    }
    assert!(exits.is_empty(), "{}", exits.join("\n"));
    if std::env::var("FPREV_DOCS").as_deref() == Ok("overwrite") && !rewrites.is_empty() {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for (span, actual) in rewrites.into_iter().rev() {
            lines.splice(span.start..span.end, actual);
        }
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        return;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_readmes_examples_print_what_they_show() {
    run_document("README.md");
}

#[test]
fn the_guides_examples_print_what_they_show() {
    run_document("docs/GUIDE.md");
}

#[test]
fn the_references_help_texts_are_what_fprev_prints() {
    run_document("docs/REFERENCE.md");
}

#[test]
fn times_are_masked_and_nothing_else() {
    assert_eq!(
        without_times("54 calls, 0.103 s (0.014 s in the black box), up to 20 s"),
        "54 calls, TIME s (TIME s in the black box), up to TIME s"
    );
    assert_eq!(
        without_times("n = 1.5 x, v1.25 s, 2.5 ms, 3 sizes."),
        "n = 1.5 x, v1.25 s, TIME ms, 3 sizes."
    );
    let lines = |s: &str| s.lines().map(str::to_string).collect::<Vec<_>>();
    assert!(shows(&lines("a\n...\nd"), &lines("a\nb\nc\nd")));
    assert!(shows(&lines("a\n...\nd"), &lines("a\nd")));
    assert!(!shows(&lines("a\n...\nd"), &lines("a\nb")));
    assert!(shows(&lines("in 1 s"), &lines("in 2 s")));
    assert!(!shows(&lines("a 1 x"), &lines("a 2 x")));
}
