//! Finding a CBLAS library and loading it at run time.
//!
//! Nothing is linked at build time: `blas:OP` loads the first library of
//! [`SEARCH`] that the loader finds, `blas:OP@NAME` a library by its short
//! name ([`KNOWN`]), `blas:OP@PATH` the file at `PATH`; the `FPREV_BLAS`
//! environment variable, a name or a path, replaces the search. Each
//! library is then a black box like any other, so `fprev diff` compares
//! two of them.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::{Path, PathBuf};

use libloading::Library;

use crate::error::{Error, Missing, Param, Remedy, Result};

/// The environment variable naming the library `blas:OP` loads (a short
/// name or a path) instead of searching [`SEARCH`].
pub const ENV: &str = "FPREV_BLAS";

/// A BLAS fprev knows by name: where it lives and what installs it.
#[derive(Clone, Copy, Debug)]
pub struct Known {
    /// The short name of `blas:OP@NAME`.
    pub name: &'static str,
    /// What it is.
    pub about: &'static str,
    /// Files to try, in turn: a bare file name goes through the loader's
    /// search (`ld.so.cache`, `LD_LIBRARY_PATH`), a name with a `/` is
    /// taken relative to each library directory of `library_dirs()`.
    pub files: &'static [&'static str],
    /// The packages that provide it.
    pub install: &'static str,
}

/// The BLAS libraries `blas:OP@NAME` names.
pub const KNOWN: &[Known] = &[
    Known {
        name: "openblas",
        about: "OpenBLAS",
        files: &[
            "libopenblas.so.0",
            "libopenblas.so",
            "openblas-pthread/libopenblas.so.0",
            "openblas-openmp/libopenblas.so.0",
            "openblas-serial/libopenblas.so.0",
        ],
        install: "apt-get install libopenblas0 (Debian, Ubuntu) or dnf install openblas (Fedora)",
    },
    Known {
        name: "blis",
        about: "BLIS",
        files: &[
            "libblis.so.4",
            "libblis.so.3",
            "libblis.so",
            "blis-pthread/libblis.so.4",
            "blis-openmp/libblis.so.4",
            "blis-serial/libblis.so.4",
        ],
        install: "apt-get install libblis4 (Debian, Ubuntu) or dnf install blis (Fedora)",
    },
    Known {
        name: "refblas",
        about: "the Netlib reference BLAS",
        files: &["blas/libblas.so.3"],
        install: "apt-get install libblas3 (Debian, Ubuntu) or dnf install blas (Fedora)",
    },
    Known {
        name: "mkl",
        about: "Intel MKL",
        files: &["libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so"],
        install: "python3 -m pip install mkl (found in the lib folder of the Python that \
                  installed it: python3's on PATH, $VIRTUAL_ENV or $CONDA_PREFIX), or \
                  apt-get install libmkl-rt (Debian non-free, Ubuntu multiverse)",
    },
    Known {
        name: "atlas",
        about: "ATLAS",
        files: &["atlas/libblas.so.3", "libtatlas.so.3", "libsatlas.so.3"],
        install: "apt-get install libatlas3-base (Debian, Ubuntu) or dnf install atlas (Fedora)",
    },
];

/// What `blas:OP` tries, in turn: the libraries by name, with the system's
/// default BLAS (`libblas.so.3`, which Debian's alternatives point at one
/// of them) before the reference BLAS and ATLAS.
pub const SEARCH: &[&str] = &[
    "openblas",
    "mkl",
    "blis",
    "libblas.so.3",
    "refblas",
    "atlas",
];

/// The directories a library name with a `/` is looked up in: the
/// multiarch and usual library directories of this system.
fn library_dirs() -> Vec<PathBuf> {
    let arch = std::env::consts::ARCH;
    [
        format!("/usr/lib/{arch}-linux-gnu"),
        "/usr/lib64".into(),
        "/usr/lib".into(),
        format!("/usr/local/lib/{arch}-linux-gnu"),
        "/usr/local/lib".into(),
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect()
}

/// The `lib` folders of the Python installations about: `$VIRTUAL_ENV`,
/// `$CONDA_PREFIX`, and the prefixes of the `python3` on `PATH` (asked
/// once, only when a library is not found elsewhere).
fn python_lib_dirs() -> Vec<PathBuf> {
    static DIRS: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    DIRS.get_or_init(|| {
        let mut prefixes: Vec<PathBuf> = ["VIRTUAL_ENV", "CONDA_PREFIX"]
            .iter()
            .filter_map(std::env::var_os)
            .map(PathBuf::from)
            .collect();
        let asked = std::process::Command::new("python3")
            .args([
                "-c",
                "import sys; print(sys.prefix); print(sys.base_prefix)",
            ])
            .stderr(std::process::Stdio::null())
            .output();
        if let Some(out) = asked.ok().filter(|o| o.status.success()) {
            prefixes.extend(
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .map(PathBuf::from),
            );
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        for dir in prefixes.into_iter().map(|p| p.join("lib")) {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        dirs
    })
    .clone()
}

type Dot<T> = unsafe extern "C" fn(c_int, *const T, c_int, *const T, c_int) -> T;
#[rustfmt::skip]
type Gemv<T> = unsafe extern "C" fn(
    c_int, c_int, c_int, c_int, T, *const T, c_int, *const T, c_int, T, *mut T, c_int,
);
#[rustfmt::skip]
type Gemm<T> = unsafe extern "C" fn(
    c_int, c_int, c_int, c_int, c_int, c_int, T, *const T, c_int, *const T, c_int, T, *mut T, c_int,
);

/// CBLAS's `CblasRowMajor`.
pub const ROW_MAJOR: c_int = 101;
/// CBLAS's `CblasNoTrans`.
pub const NO_TRANS: c_int = 111;

/// The CBLAS routines of one precision.
#[derive(Clone, Copy)]
pub struct Routines<T> {
    /// `cblas_?dot`.
    pub dot: Dot<T>,
    /// `cblas_?gemv`.
    pub gemv: Gemv<T>,
    /// `cblas_?gemm`.
    pub gemm: Gemm<T>,
}

/// How a library sets its thread count.
#[derive(Clone, Copy)]
enum Threads {
    /// `openblas_set_num_threads(int)`.
    OpenBlas(unsafe extern "C" fn(c_int)),
    /// `bli_thread_set_num_threads(dim_t)`.
    Blis(unsafe extern "C" fn(i64)),
    /// `MKL_Set_Num_Threads(int)`.
    Mkl(unsafe extern "C" fn(c_int)),
}

/// A loaded CBLAS library.
pub struct Cblas {
    /// The file that was loaded.
    pub path: PathBuf,
    /// `cblas_sdot`, `cblas_sgemv`, `cblas_sgemm`.
    pub single: Routines<f32>,
    /// `cblas_ddot`, `cblas_dgemv`, `cblas_dgemm`.
    pub double: Routines<f64>,
    threads: Option<Threads>,
    /// The library's own description of its build, where it has one.
    pub version: Option<String>,
    /// Keeps the library loaded while the routines may be called.
    _library: Library,
}

impl std::fmt::Debug for Cblas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cblas")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl Cblas {
    /// Loads the library `choice` names (a short name of [`KNOWN`], a
    /// file name, or a path), or searches [`SEARCH`] (after [`ENV`]) when
    /// it is `None`. Not found: [`Error::Missing`] naming what provides it.
    pub fn open(choice: Option<&str>) -> Result<Self> {
        let env = std::env::var(ENV).ok().filter(|v| !v.is_empty());
        match choice.or(env.as_deref()) {
            Some(choice) => Self::open_one(choice),
            None => {
                let mut tried = Vec::new();
                for choice in SEARCH {
                    match Self::open_one(choice) {
                        Ok(lib) => return Ok(lib),
                        Err(Error::Missing(_)) => tried.push(*choice),
                        Err(e) => return Err(e),
                    }
                }
                Err(Error::Missing(Missing::Blas {
                    tried,
                    install: KNOWN[0].install,
                }))
            }
        }
    }

    /// Loads one library: a short name, a path (it has a `/`) or a file
    /// name the loader searches for.
    fn open_one(choice: &str) -> Result<Self> {
        if let Some(known) = KNOWN.iter().find(|k| k.name == choice) {
            let library =
                known
                    .files
                    .iter()
                    .find_map(|file| load(file).ok())
                    .ok_or(Error::Missing(Missing::KnownBlas {
                        about: known.about,
                        install: known.install,
                    }))?;
            return Self::from_library(library, known.about);
        }
        if choice.contains('/') {
            if !Path::new(choice).is_file() {
                return Err(Error::Input(format!(
                    "no such file: {choice} (give a CBLAS library's path, or one of the names {})",
                    names()
                )));
            }
        } else if !choice.starts_with("lib") || !choice.contains(".so") {
            return Err(Error::Input(format!(
                "unknown BLAS '{choice}': expected one of {}, a library file name \
                 (libcblas.so.3) or a path",
                names()
            )));
        }
        let library = load(choice).map_err(|why| {
            if choice.contains('/') {
                Error::Input(format!("cannot load {choice}: {why}"))
            } else {
                Error::Missing(Missing::BlasFile {
                    file: choice.to_string(),
                    why: why.to_string(),
                })
            }
        })?;
        Self::from_library(library, choice)
    }

    fn from_library(library: Library, name: &str) -> Result<Self> {
        let missing = |symbol: &str| {
            Error::Input(format!(
                "{name} has no {symbol}: it is not a CBLAS library (a Fortran-only BLAS \
                 exports sdot_, not cblas_sdot); name one that has the C interface, e.g. \
                 blas:OP@openblas"
            ))
        };
        // SAFETY: each symbol is CBLAS's routine of that name, whose C
        // signature the types above spell out.
        let routines = unsafe {
            macro_rules! get {
                ($name:literal) => {
                    *library
                        .get(concat!($name, "\0").as_bytes())
                        .map_err(|_| missing($name))?
                };
            }
            (
                Routines {
                    dot: get!("cblas_sdot"),
                    gemv: get!("cblas_sgemv"),
                    gemm: get!("cblas_sgemm"),
                },
                Routines {
                    dot: get!("cblas_ddot"),
                    gemv: get!("cblas_dgemv"),
                    gemm: get!("cblas_dgemm"),
                },
            )
        };
        // SAFETY: thread setters and version getters as their libraries
        // document them; a library lacking one simply has no such symbol.
        let (threads, version) = unsafe {
            let sym = |name: &[u8]| library.get::<*const c_void>(name).ok().map(|s| *s);
            let threads = if let Some(f) = sym(b"openblas_set_num_threads\0") {
                Some(Threads::OpenBlas(std::mem::transmute::<
                    *const c_void,
                    unsafe extern "C" fn(c_int),
                >(f)))
            } else if let Some(f) = sym(b"bli_thread_set_num_threads\0") {
                Some(Threads::Blis(std::mem::transmute::<
                    *const c_void,
                    unsafe extern "C" fn(i64),
                >(f)))
            } else {
                sym(b"MKL_Set_Num_Threads\0").map(|f| {
                    Threads::Mkl(std::mem::transmute::<
                        *const c_void,
                        unsafe extern "C" fn(c_int),
                    >(f))
                })
            };
            let version = [&b"openblas_get_config\0"[..], b"bli_info_get_version_str\0"]
                .into_iter()
                .find_map(sym)
                .and_then(|f| {
                    let get = std::mem::transmute::<
                        *const c_void,
                        unsafe extern "C" fn() -> *const c_char,
                    >(f);
                    let s = get();
                    (!s.is_null()).then(|| CStr::from_ptr(s).to_string_lossy().trim().to_string())
                });
            (threads, version)
        };
        let path = file_of(routines.0.dot as *const c_void).unwrap_or_else(|| name.into());
        Ok(Cblas {
            path,
            single: routines.0,
            double: routines.1,
            threads,
            version,
            _library: library,
        })
    }

    /// Whether fprev can set the library's thread count (OpenBLAS, BLIS,
    /// MKL); the reference BLAS runs on one thread.
    pub fn controls_threads(&self) -> bool {
        self.threads.is_some()
    }

    /// Sets the library's thread count, or says it has no control of it.
    pub fn set_threads(&self, threads: usize) -> Result<()> {
        let too_many = || Error::Input(format!("{threads} threads are too many"));
        // SAFETY: plain setters of the library's thread count, safe to call
        // between BLAS calls.
        match self.threads {
            Some(Threads::OpenBlas(f)) | Some(Threads::Mkl(f)) => unsafe {
                f(c_int::try_from(threads).map_err(|_| too_many())?)
            },
            Some(Threads::Blis(f)) => unsafe { f(i64::try_from(threads).map_err(|_| too_many())?) },
            None => {
                return Err(Error::Input(format!(
                    "{} has no thread control fprev knows (OpenBLAS's, BLIS's, MKL's)",
                    self.path.display()
                ))
                .advise(Remedy::Or(
                    Box::new(Remedy::Drop(Param::Threads)),
                    "set the library's own environment variable",
                )));
            }
        }
        Ok(())
    }

    /// The file and, where the library says, its version and build.
    pub fn describe(&self) -> String {
        match &self.version {
            Some(v) => format!("{} ({v})", self.path.display()),
            None => self.path.display().to_string(),
        }
    }
}

fn names() -> String {
    let names: Vec<&str> = KNOWN.iter().map(|k| k.name).collect();
    names.join(", ")
}

/// Loads `file`: a path as it is, a bare file name through the loader's
/// search and then from the `lib` folders of the Python installations
/// about ([`python_lib_dirs`]: `pip install mkl` puts MKL there), a
/// relative name with a `/` from each of [`library_dirs`].
fn load(file: &str) -> std::result::Result<Library, String> {
    let candidates: Vec<PathBuf> = if file.contains('/') && !file.starts_with(['/', '.']) {
        library_dirs().into_iter().map(|d| d.join(file)).collect()
    } else if file.contains('/') {
        vec![PathBuf::from(file)]
    } else {
        let beside_python = python_lib_dirs().into_iter().map(|d| d.join(file));
        std::iter::once(PathBuf::from(file))
            .chain(beside_python)
            .collect()
    };
    let mut why = String::from("not found");
    for path in candidates {
        if path.components().count() > 1 && !path.is_file() {
            continue;
        }
        // SAFETY: loading runs the library's initialisers; a BLAS library's
        // are safe to run.
        match unsafe { crate::probe::dylib::load(&path) } {
            Ok(lib) => return Ok(lib),
            Err(e) => {
                why = e
                    .to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        }
    }
    Err(why)
}

/// The file the loader took `symbol` from.
fn file_of(symbol: *const c_void) -> Option<PathBuf> {
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    // SAFETY: dladdr only reads the loader's tables and fills `info`.
    let found = unsafe { libc::dladdr(symbol, info.as_mut_ptr()) } != 0;
    // SAFETY: dladdr filled `info` when it returned non-zero.
    let name = unsafe { info.assume_init() }.dli_fname;
    if !found || name.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated string owned by the loader.
    let name = unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned();
    Some(std::fs::canonicalize(&name).unwrap_or_else(|_| PathBuf::from(name)))
}
