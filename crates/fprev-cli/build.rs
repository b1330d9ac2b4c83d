//! With the embedded Python bridge, link libpython with an rpath to the
//! directory of the interpreter found at build time, so that the binary
//! loads that libpython at run time, not whichever one the loader finds
//! first. The library's build script cannot do this for the binary: link
//! arguments do not travel from a library to the programs that use it.
//!
//! `fprev --version` names the optional features built and that
//! interpreter, which only this script knows: it hands them to the crate
//! as `FPREV_FEATURES`.

fn main() {
    #[cfg(feature = "python")]
    pyo3_build_config::add_libpython_rpath_link_args();
    let mpi = cfg!(feature = "mpi").then(|| "mpi".to_string());
    let features: Vec<String> = [python(), mpi].into_iter().flatten().collect();
    let features = if features.is_empty() {
        "none".to_string()
    } else {
        features.join(", ")
    };
    println!("cargo:rustc-env=FPREV_FEATURES=features: {features}");
}

/// The Python bridge as `--version` names it: the interpreter pyo3 builds
/// for, and the libpython linked.
fn python() -> Option<String> {
    #[cfg(not(feature = "python"))]
    return None;
    #[cfg(feature = "python")]
    {
        let config = pyo3_build_config::get();
        let (implementation, version) = (config.implementation(), config.version());
        // maturin builds the Python package's extension module so: it runs
        // inside the interpreter that imports it, and links no libpython.
        println!("cargo:rerun-if-env-changed=PYO3_BUILD_EXTENSION_MODULE");
        let python = if std::env::var_os("PYO3_BUILD_EXTENSION_MODULE").is_some() {
            format!("an extension module for {implementation} {version} or later")
        } else {
            match (config.lib_name(), config.lib_dir()) {
                (Some(name), Some(dir)) => {
                    format!("{implementation} {version}, lib{name} in {dir}")
                }
                (Some(name), None) => format!("{implementation} {version}, lib{name}"),
                _ => format!("{implementation} {version}"),
            }
        };
        Some(format!("python ({python})"))
    }
}
