//! The `fprev` binary: the command line of [`fprev_cli`] on this process's
//! arguments, run in a child process this one supervises.

fn main() {
    let code = fprev_cli::supervise(fprev_cli::fork)
        .unwrap_or_else(|| fprev_cli::run_main(std::env::args_os()));
    std::process::exit(code);
}
