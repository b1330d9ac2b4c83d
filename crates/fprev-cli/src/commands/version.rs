//! What `fprev --version` says after clap's lines (the version and the
//! optional features built, known at build time): what it finds at run time
//! at little cost. The MPI linked, the Python it runs inside where that is
//! the fprev package's, the BLAS libraries it can load and the Python
//! packages its black boxes call; `fprev probes` says which black boxes can
//! run.

use fprev::error::Result;
use fprev::probe::blas::library::{Cblas, KNOWN};

use crate::write;

/// Prints the lines `fprev --version` adds to clap's.
pub(crate) fn print_found() -> Result<()> {
    #[cfg(feature = "mpi")]
    write::println(format_args!(
        "mpi: links {} (--mpi {})",
        fprev::mpi::Implementation::version(),
        fprev::mpi::Implementation::linked().name()
    ))?;
    #[cfg(feature = "python")]
    if let Some(exe) = fprev::probe::python::host_interpreter() {
        write::println(format_args!(
            "python: runs inside {} (the fprev package's)",
            exe.display()
        ))?;
    }
    write::println(blas())?;
    #[cfg(feature = "python")]
    write::println(python_packages())?;
    Ok(())
}

/// The BLAS libraries `blas:OP@NAME` can load here, each with its file.
fn blas() -> String {
    let found: Vec<String> = KNOWN
        .iter()
        .filter_map(|k| {
            Cblas::open(Some(k.name))
                .ok()
                .map(|c| format!("{} ({})", k.name, c.path.display()))
        })
        .collect();
    if found.is_empty() {
        "blas: none loadable".into()
    } else {
        format!("blas: {}", found.join(", "))
    }
}

/// Which of the Python packages behind `numpy:`, `jax:` and `torch:` the
/// bridge finds (found, not imported: importing JAX or PyTorch takes
/// seconds).
#[cfg(feature = "python")]
fn python_packages() -> String {
    let said: Vec<String> = ["numpy", "jax", "torch"]
        .iter()
        .map(|module| match fprev::probe::python::available(module) {
            Ok(()) => format!("{module} found"),
            Err(_) => format!("{module} not found"),
        })
        .collect();
    format!("python packages: {}", said.join(", "))
}
