//! With the embedded Python bridge, link libpython with an rpath to the
//! directory of the interpreter found at build time, so that the binary
//! loads that libpython at run time, not whichever one the loader finds
//! first. The library's build script cannot do this for the binary: link
//! arguments do not travel from a library to the programs that use it.

fn main() {
    #[cfg(feature = "python")]
    pyo3_build_config::add_libpython_rpath_link_args();
}
