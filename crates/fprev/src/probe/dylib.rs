//! Any C function in a shared library as a black box:
//! `dylib:PATH.so:SYMBOL` loads `PATH.so` at run time (libloading) and calls
//!
//! ```c
//! T SYMBOL(const T *x, size_t n);
//! ```
//!
//! and `dylib-dot:PATH.so:SYMBOL` calls a dot product
//!
//! ```c
//! T SYMBOL(const T *x, const T *y, size_t n);
//! ```
//!
//! (`y` = ones for a plain sum, the given `y` in [`Dot::dot`]). `T` is
//! `float` for `--dtype f32` and `double` for `--dtype f64`. The spec is
//! split at its last `:`, so `PATH` may itself hold colons.
//!
//! The function is trusted to have that signature, to read only `x[0..n)`
//! (and `y[0..n)`) and to have no other side effects: fprev cannot check
//! any of this, and a function that breaks it can crash the process. A
//! missing file, a library that does not load, or a missing symbol is a bad
//! input (exit 2).

use std::path::Path;

use libloading::Library;

use crate::error::{Error, Result};
use crate::format::Format;
use crate::probe::linalg::ieee_format;
use crate::probe::{Dot, Probe, ProbeOptions, resolve_n};

/// What the C function computes, which fixes its signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `T SYMBOL(const T *x, size_t n)`: `dylib:`.
    Sum,
    /// `T SYMBOL(const T *x, const T *y, size_t n)`: `dylib-dot:`.
    Dot,
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Kind::Sum => "dylib",
            Kind::Dot => "dylib-dot",
        }
    }

    /// The C declaration of `symbol`, with `T` spelled out.
    fn signature(self, t: &str, symbol: &str) -> String {
        match self {
            Kind::Sum => format!("{t} {symbol}(const {t} *x, size_t n)"),
            Kind::Dot => format!("{t} {symbol}(const {t} *x, const {t} *y, size_t n)"),
        }
    }
}

/// A value type the C function takes: `float` or `double`.
trait Real: Copy + Into<f64> + 'static {
    const ONE: Self;
    fn from_f64(x: f64) -> Self;
}

impl Real for f32 {
    const ONE: Self = 1.0;
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

impl Real for f64 {
    const ONE: Self = 1.0;
    fn from_f64(x: f64) -> Self {
        x
    }
}

/// The function as its kind's signature.
#[derive(Clone, Copy)]
enum Symbol<T> {
    Sum(unsafe extern "C" fn(*const T, usize) -> T),
    Dot(unsafe extern "C" fn(*const T, *const T, usize) -> T),
}

/// The function, with buffers of its argument type.
struct Func<T> {
    symbol: Symbol<T>,
    x: Vec<T>,
    /// `y` of a dot product (empty for a sum): ones unless a dot set it.
    y: Vec<T>,
    /// `y` may differ from ones, so a plain sum must restore them first.
    weighted: bool,
}

impl<T: Real> Func<T> {
    /// Looks `symbol` up in `library` as a function of `kind`'s signature.
    ///
    /// # Safety
    ///
    /// The symbol must be a function of that signature (module
    /// documentation).
    unsafe fn load(
        library: &Library,
        symbol: &str,
        kind: Kind,
        n: usize,
    ) -> std::result::Result<Self, libloading::Error> {
        // SAFETY: the caller vouches for the signature.
        let (symbol, y) = unsafe {
            match kind {
                Kind::Sum => (Symbol::Sum(*library.get(symbol.as_bytes())?), 0),
                Kind::Dot => (Symbol::Dot(*library.get(symbol.as_bytes())?), n),
            }
        };
        Ok(Func {
            symbol,
            x: vec![T::ONE; n],
            y: vec![T::ONE; y],
            weighted: false,
        })
    }

    /// Sums each row of `rows` into `out` (a dot product with `y` = ones).
    fn sum(&mut self, rows: &[f64], out: &mut [f64]) {
        // Ones are restored only after a dot, so plain sums cost what they did.
        if self.weighted {
            self.y.fill(T::ONE);
            self.weighted = false;
        }
        self.call(rows, out);
    }

    /// The dot product of each row of `rows` with `y` into `out`.
    fn dot(&mut self, rows: &[f64], y: &[f64], out: &mut [f64]) {
        for (d, &s) in self.y.iter_mut().zip(y) {
            *d = T::from_f64(s);
        }
        self.weighted = true;
        self.call(rows, out);
    }

    /// Calls the function on each row of `rows` into `out`.
    fn call(&mut self, rows: &[f64], out: &mut [f64]) {
        let n = self.x.len();
        for (row, o) in rows.chunks_exact(n).zip(out.iter_mut()) {
            for (d, &s) in self.x.iter_mut().zip(row) {
                *d = T::from_f64(s);
            }
            // SAFETY: `x` (and `y`, for a dot) hold `n` values; the
            // function is trusted to read only those (module documentation).
            *o = match self.symbol {
                Symbol::Sum(f) => unsafe { f(self.x.as_ptr(), n) },
                Symbol::Dot(f) => unsafe { f(self.x.as_ptr(), self.y.as_ptr(), n) },
            }
            .into();
        }
    }
}

/// [`Func`] in the format's type.
enum Funcs {
    F32(Func<f32>),
    F64(Func<f64>),
}

/// A C summation or dot-product function in a shared library.
pub struct DylibProbe {
    n: usize,
    format: Format,
    accumulator: Format,
    kind: Kind,
    func: Funcs,
    /// Keeps the library loaded while `func` may be called.
    _library: Library,
}

impl std::fmt::Debug for DylibProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DylibProbe")
            .field("n", &self.n)
            .field("format", &self.format)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl DylibProbe {
    /// Opens `dylib:PATH.so:SYMBOL` (`PATH.so` and `SYMBOL` as the spec
    /// splits them, `None` where it could not).
    pub fn open(
        spec: &str,
        path_symbol: Option<(&str, &str)>,
        opts: &ProbeOptions,
    ) -> Result<Self> {
        Self::open_kind(spec, path_symbol, opts, Kind::Sum)
    }

    /// Opens `dylib-dot:PATH.so:SYMBOL`.
    pub fn open_dot(
        spec: &str,
        path_symbol: Option<(&str, &str)>,
        opts: &ProbeOptions,
    ) -> Result<Self> {
        Self::open_kind(spec, path_symbol, opts, Kind::Dot)
    }

    /// Opens `PREFIX:PATH.so:SYMBOL`, a function of `kind`'s signature.
    fn open_kind(
        spec: &str,
        path_symbol: Option<(&str, &str)>,
        opts: &ProbeOptions,
        kind: Kind,
    ) -> Result<Self> {
        let usage = || {
            Error::Input(format!(
                "'{spec}': expected {}:PATH.so:SYMBOL, naming a C function `{}` (T = float \
                 for f32, double for f64)",
                kind.prefix(),
                kind.signature("T", "SYMBOL")
            ))
        };
        let (path, symbol) = path_symbol.ok_or_else(usage)?;
        if path.is_empty() || symbol.is_empty() {
            return Err(usage());
        }
        let n = resolve_n(spec, opts)?;
        let format = ieee_format(spec, opts.format)?;
        if !Path::new(path).is_file() {
            return Err(Error::Input(format!(
                "{spec}: no such file: {path} (give the path of a shared library, e.g. \
                 ./libmysum.so built with `cc -shared -fPIC`)"
            )));
        }
        // An absolute path, so that the loader opens this file rather than
        // searching its library directories for the name.
        let file = std::fs::canonicalize(path).map_err(|e| Error::file("open", path, e))?;
        // SAFETY: loading runs the library's initialisers; naming it is the
        // user's statement that it is safe to load.
        let library = unsafe { load(&file) }.map_err(|e| {
            Error::Input(format!(
                "{spec}: cannot load {path} as a shared library: {}",
                one_line(&e.to_string())
            ))
        })?;
        let missing = |e: libloading::Error| {
            Error::Input(format!(
                "{spec}: {path} has no symbol '{symbol}' ({}): export `{}` with C linkage \
                 (extern \"C\" in C++, not static)",
                one_line(&e.to_string()),
                kind.signature(c_type(format), symbol)
            ))
        };
        // SAFETY: the symbol is trusted to be a function of the documented
        // signature for this kind and format (module documentation).
        let func = unsafe {
            match format {
                Format::F64 => Funcs::F64(Func::load(&library, symbol, kind, n).map_err(missing)?),
                _ => Funcs::F32(Func::load(&library, symbol, kind, n).map_err(missing)?),
            }
        };
        Ok(DylibProbe {
            n,
            format,
            accumulator: opts.accumulator.unwrap_or(format),
            kind,
            func,
            _library: library,
        })
    }

    /// Refuses a batch `inputs` that is not `out.len()` rows of `n`.
    fn check_rows(&self, inputs: &[f64], out: &[f64]) -> Result<()> {
        if inputs.len() != out.len() * self.n {
            return Err(Error::Input(format!(
                "{} probe: {} values for {} rows of n = {}",
                self.kind.prefix(),
                inputs.len(),
                out.len(),
                self.n
            )));
        }
        Ok(())
    }
}

fn c_type(format: Format) -> &'static str {
    if format == Format::F64 {
        "double"
    } else {
        "float"
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Probe for DylibProbe {
    fn n(&self) -> usize {
        self.n
    }
    fn format(&self) -> Format {
        self.format
    }
    fn accumulator(&self) -> Format {
        self.accumulator
    }
    fn may_fuse(&self) -> bool {
        false
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()> {
        self.check_rows(inputs, out)?;
        match &mut self.func {
            Funcs::F32(f) => f.sum(inputs, out),
            Funcs::F64(f) => f.sum(inputs, out),
        }
        Ok(())
    }
    fn as_dot(&mut self) -> Option<&mut dyn Dot> {
        if self.kind == Kind::Dot {
            Some(self)
        } else {
            None
        }
    }
}

impl Dot for DylibProbe {
    fn dot(&mut self, rows: &[f64], y: &[f64], out: &mut [f64]) -> Result<()> {
        if self.kind != Kind::Dot {
            return Err(Error::Input(
                "dylib probe: a sum function does not multiply; open it as dylib-dot: to \
                 give it y"
                    .into(),
            ));
        }
        self.check_rows(rows, out)?;
        if y.len() != self.n {
            return Err(Error::Input(format!(
                "dylib-dot probe: a vector y of {} values for n = {}",
                y.len(),
                self.n
            )));
        }
        match &mut self.func {
            Funcs::F32(f) => f.dot(rows, y, out),
            Funcs::F64(f) => f.dot(rows, y, out),
        }
        Ok(())
    }
}

/// Loads the shared library at `path` for the rest of the process: it is
/// never unloaded (`RTLD_NODELETE`), because a library that started
/// threads (an OpenMP kernel, OpenBLAS's pool) crashes the process when
/// unloaded under them, and a sweep opens and drops a black box at every
/// size.
///
/// # Safety
/// Loading runs the library's initialisers.
pub(crate) unsafe fn load(path: &Path) -> std::result::Result<Library, libloading::Error> {
    use libloading::os::unix;
    let flags = unix::RTLD_NOW | unix::RTLD_LOCAL | libc::RTLD_NODELETE;
    // SAFETY: as the caller promises.
    unsafe { unix::Library::open(Some(path), flags) }.map(Library::from)
}
