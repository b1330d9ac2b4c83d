//! The `fprev` command line, a thin layer over the library: this file is the
//! entry point only (crash guard, MPI session, parsing, exit status).
//! `args` says what the command line means, `commands` runs it, `output`
//! and `write` put its results on stdout or in files, `errors` its errors
//! (in flags) on stderr, with their exit statuses.
//!
//! Two programs run it: the `fprev` binary (`src/main.rs`), and the Python
//! package's `fprev` console script, which calls [`run_main`] inside the
//! interpreter it was installed into, so that `numpy:`, `jax:`, `torch:`
//! and `python:` black boxes are that environment's. Both run it in a
//! child process that [`supervise`] waits for, so that a black box ending
//! the process is reported, never taken for the command's status.

mod args;
mod children;
mod commands;
mod descendants;
mod errors;
mod guard;
mod mismatch;
mod mpi_job;
mod output;
mod progress;
mod supervisor;
mod watch;
mod write;

pub use supervisor::{fork, supervise};

use clap::Parser;

use args::Cli;
use errors::report;

/// Runs the command line `args` (the program's name first, as
/// `std::env::args_os` gives it) and returns the process exit status,
/// inside an MPI job too: there only rank 0 runs it (the other ranks serve
/// its `mpi:` black boxes and exit in [`fprev::mpi::join`]).
pub fn run_main<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    guard::install();
    #[cfg(feature = "mpi")]
    let session = match fprev::mpi::join() {
        Ok(session) => session,
        Err(e) => return report(&e),
    };
    // A panic ends the process too, with Rust's status 101 and its message:
    // recorded as an end on purpose, not as a black box's doing.
    let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| command_line(args)))
        .unwrap_or_else(|panic| {
            guard::finished(101);
            std::panic::resume_unwind(panic)
        });
    guard::finished(code);
    #[cfg(feature = "mpi")]
    if let Some(session) = session {
        session.finish(code);
    }
    code
}

/// Parses the command line, runs it and returns the process exit status.
fn command_line<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // A value the library refused (a spec no family names) is said
            // as the library's other errors are, in one line.
            let refused =
                std::error::Error::source(&e).and_then(|s| s.downcast_ref::<fprev::Error>());
            // A bound is worded in the flag given (`--columns`, not `--column`).
            let given = match e.get(clap::error::ContextKind::InvalidArg) {
                Some(clap::error::ContextValue::String(arg)) if arg.starts_with('-') => {
                    arg.split([' ', '=', ',']).next()
                }
                _ => None,
            };
            match (refused, given) {
                (Some(refused), Some(given)) => return errors::report_given(refused, given),
                (Some(refused), None) => return report(refused),
                (None, _) => {}
            }
            // --help and --version on stdout; a usage error with clap's whole
            // message (what was wrong, the possible values or "did you mean",
            // the usage line) on stderr.
            let _ = e.print();
            // --version's text is of several lines, -V's of one: only
            // --version goes on to what it finds here, which loads libraries.
            if e.kind() == clap::error::ErrorKind::DisplayVersion
                && e.render().to_string().trim_end().contains('\n')
            {
                return commands::print_found().map_or_else(|e| report(&e), |()| 0);
            }
            return e.exit_code();
        }
    };
    init_logging(cli.verbose);
    commands::run(cli.command).unwrap_or_else(|e| report(&e))
}

/// Logs on stderr at `-v` (debug) or `-vv` (trace), or as `RUST_LOG` says
/// (`RUST_LOG=fprev=trace`); colours only on a terminal.
fn init_logging(verbose: u8) {
    use std::io::IsTerminal;
    let from_env = std::env::var("RUST_LOG").ok().filter(|v| !v.is_empty());
    let filter = match (from_env, verbose) {
        (Some(directives), _) => directives,
        (None, 0) => return,
        (None, 1) => "fprev=debug".into(),
        (None, _) => "fprev=trace".into(),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
