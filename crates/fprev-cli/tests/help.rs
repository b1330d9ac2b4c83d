//! The help texts as snapshots: `fprev --help`, `fprev -h` and each visible
//! subcommand's `--help`, each a case in tests/cmd/ (the arguments in
//! NAME.toml, the text in NAME.stdout), so that a change to a help text is
//! seen in review. Each case sets COLUMNS=100: its output is no terminal,
//! so clap wraps at COLUMNS, and one width makes CI and local runs agree.
//!
//! After changing a help text, refresh the snapshots and review the diff:
//!
//! ```sh
//! TRYCMD=overwrite cargo test -p fprev-cli --test help
//! ```

#[test]
fn help_texts() {
    trycmd::TestCases::new().case("tests/cmd/*.toml");
}
