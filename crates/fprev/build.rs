//! With the embedded Python bridge, link libpython with an rpath to the
//! directory of the interpreter found at build time, so that the binary
//! loads that libpython at run time, not whichever one the loader finds first.

fn main() {
    if std::env::var_os("CARGO_FEATURE_PYTHON").is_some() {
        pyo3_build_config::add_libpython_rpath_link_args();
    }
}
