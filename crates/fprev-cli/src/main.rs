//! The `fprev` binary: the command line of [`fprev_cli`] on this process's
//! arguments.

fn main() {
    std::process::exit(fprev_cli::run_main(std::env::args_os()));
}
