//! What fprev says of itself: the completion scripts of `fprev completions`
//! (each shell's own syntax check passes, every subcommand named), the
//! manual pages of `fprev man` (roff that renders without a warning, naming
//! every subcommand, and every flag of `reveal` on its page), and `fprev
//! --version` (the first line `fprev X.Y.Z`, the features built, each BLAS
//! named loadable). The subcommands and flags expected are read from
//! `--help`, which clap prints from the same definitions by another path.

use std::io::Write;
use std::process::{Command, Stdio};

mod common;
use common::{assert_code, assert_error, assert_ok, run};

/// The visible subcommands, as `fprev --help` lists them (`help` aside).
fn subcommands() -> Vec<String> {
    let help = assert_ok(&run(&["--help"]));
    let listed = help
        .split("Commands:\n")
        .nth(1)
        .expect("--help lists the commands");
    listed
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The long flags `fprev reveal --help` lists.
fn reveal_flags() -> Vec<String> {
    let help = assert_ok(&run(&["reveal", "--help"]));
    let mut flags: Vec<String> = help
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .filter_map(|l| {
            l.split([' ', ',', '=', '.'])
                .find(|w| w.starts_with("--") && w.len() > 2)
                .map(str::to_string)
        })
        .collect();
    flags.dedup();
    flags
}

/// Whether `program` runs here.
fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Runs `program ARGS` on `input` and returns its status, stdout and stderr.
fn pipe(program: &str, args: &[&str], input: &str) -> (bool, String, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} starts: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn completion_scripts_name_every_subcommand_and_pass_their_shells_check() {
    let names = subcommands();
    assert!(
        names.len() > 10 && names.contains(&"reveal".to_string()),
        "{names:?}"
    );
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = assert_ok(&run(&["completions", shell]));
        for name in &names {
            assert!(
                script.contains(name.as_str()),
                "{shell}'s script lacks {name}"
            );
        }
        // Elvish and PowerShell have no check that parses without running.
        if !["bash", "zsh", "fish"].contains(&shell) {
            continue;
        }
        if !have(shell) {
            println!("SKIPPED {shell} -n: {shell} is not installed (apt-get install {shell})");
            continue;
        }
        let dir = tempfile::TempDir::new().unwrap();
        let file = dir.path().join("fprev.completion");
        std::fs::write(&file, &script).unwrap();
        let checked = Command::new(shell).arg("-n").arg(&file).output().unwrap();
        assert!(
            checked.status.success(),
            "{shell} -n refuses the script: {}",
            String::from_utf8_lossy(&checked.stderr)
        );
    }
}

#[test]
fn a_shell_completions_does_not_know_is_a_usage_error() {
    let out = run(&["completions", "tcsh"]);
    assert_code(&out, 2);
}

/// `page` rendered by groff as text, wide and unhyphenated so that a flag
/// stays one word; panics on any warning.
fn rendered(page: &str, name: &str) -> String {
    let (ok, text, warnings) = pipe(
        "groff",
        &["-man", "-Tutf8", "-ww", "-rLL=300n", "-rHY=0", "-P-cbou"],
        page,
    );
    assert!(
        ok && warnings.is_empty(),
        "groff warns on {name}'s page: {warnings}"
    );
    // Some man macros render `\-` as a Unicode hyphen or minus.
    text.replace(['\u{2010}', '\u{2212}'], "-")
}

#[test]
fn man_pages_render_and_name_every_subcommand_and_reveal_flag() {
    let page = assert_ok(&run(&["man"]));
    assert!(page.contains(".TH fprev 1"), "{page}");
    assert!(page.is_ascii(), "the page escapes what is past ASCII");
    let version = format!(".SH VERSION\nv{}\n", env!("CARGO_PKG_VERSION"));
    assert!(
        page.contains(&version),
        "the version alone, not this build's features: {page}"
    );
    if !have("groff") {
        println!(
            "SKIPPED rendering the pages: groff is not installed (apt-get install groff-base)"
        );
        return;
    }
    let text = rendered(&page, "fprev");
    for name in subcommands() {
        assert!(
            text.contains(&format!("fprev-{name}(1)")),
            "fprev(1) lacks {name}:\n{text}"
        );
        let sub = assert_ok(&run(&["man", &name]));
        assert!(sub.contains(&format!(".TH fprev-{name} 1")), "{sub}");
        rendered(&sub, &name);
    }
    let reveal = rendered(&assert_ok(&run(&["man", "reveal"])), "reveal");
    for flag in reveal_flags() {
        assert!(
            reveal.contains(&flag),
            "fprev-reveal(1) lacks {flag}:\n{reveal}"
        );
    }
}

#[test]
fn a_page_no_subcommand_has_is_bad_input() {
    let err = assert_error(&run(&["man", "nope"]), 2);
    assert!(
        err.contains("no subcommand 'nope'") && err.contains("reveal"),
        "{err}"
    );
}

#[test]
fn the_version_names_the_features_built_and_loadable_blas_libraries() {
    let first = format!("fprev {}", env!("CARGO_PKG_VERSION"));
    let short = assert_ok(&run(&["-V"]));
    assert_eq!(short, format!("{first}\n"));
    let long = assert_ok(&run(&["--version"]));
    let lines: Vec<&str> = long.lines().collect();
    assert_eq!(lines[0], first, "{long}");
    let features = lines
        .iter()
        .find_map(|l| l.strip_prefix("features: "))
        .unwrap_or_else(|| panic!("no features line: {long}"));
    assert_eq!(
        features.starts_with("python ("),
        cfg!(feature = "python"),
        "{long}"
    );
    assert_eq!(
        features.split(", ").any(|f| f == "mpi"),
        cfg!(feature = "mpi"),
        "{long}"
    );
    assert_eq!(
        features == "none",
        cfg!(not(any(feature = "python", feature = "mpi"))),
        "{long}"
    );
    assert_eq!(
        lines.iter().any(|l| l.starts_with("mpi: links ")),
        cfg!(feature = "mpi"),
        "{long}"
    );
    assert_eq!(
        lines.iter().any(|l| l.starts_with("python packages: ")),
        cfg!(feature = "python"),
        "{long}"
    );
    let blas = lines
        .iter()
        .find_map(|l| l.strip_prefix("blas: "))
        .unwrap_or_else(|| panic!("no blas line: {long}"));
    if blas != "none loadable" {
        for library in blas.split("), ") {
            let (name, path) = library
                .trim_end_matches(')')
                .split_once(" (")
                .unwrap_or_else(|| panic!("not NAME (PATH): {library}"));
            let loaded = fprev::probe::blas::library::Cblas::open(Some(path))
                .unwrap_or_else(|e| panic!("{name} at {path} is named but does not load: {e}"));
            assert_eq!(loaded.path.to_str(), Some(path));
        }
    }
}
