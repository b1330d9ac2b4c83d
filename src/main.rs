fn main() {
    std::process::exit(fprev::cli::main());
}
