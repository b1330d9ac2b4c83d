//! Any C function in a shared library as a black box:
//! `dylib:PATH.so:SYMBOL` loads `PATH.so` at run time (libloading) and calls
//!
//! ```c
//! T SYMBOL(const T *x, size_t n);
//! ```
//!
//! with `T` = `float` for `--dtype f32` and `double` for `--dtype f64`. The
//! spec is split at its last `:`, so `PATH` may itself hold colons.
//!
//! The function is trusted to have that signature, to read only `x[0..n)`
//! and to have no other side effects: fprev cannot check any of this, and a
//! function that breaks it can crash the process. A missing file, a library
//! that does not load, or a missing symbol is a bad input (exit 2).

use std::path::Path;

use libloading::Library;

use crate::error::{Error, Result};
use crate::format::Format;
use crate::probe::linalg::ieee_format;
use crate::probe::{Probe, ProbeOptions, resolve_n};

type SumF32 = unsafe extern "C" fn(*const f32, usize) -> f32;
type SumF64 = unsafe extern "C" fn(*const f64, usize) -> f64;

/// The function, with a buffer of its argument type.
enum Func {
    F32(SumF32, Vec<f32>),
    F64(SumF64, Vec<f64>),
}

/// A C summation function in a shared library.
pub struct DylibProbe {
    n: usize,
    format: Format,
    accumulator: Format,
    func: Func,
    /// Keeps the library loaded while `func` may be called.
    _library: Library,
}

impl std::fmt::Debug for DylibProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DylibProbe")
            .field("n", &self.n)
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}

impl DylibProbe {
    /// Opens `dylib:PATH.so:SYMBOL` (`rest` is the text after `dylib:`).
    pub fn open(spec: &str, rest: &str, opts: &ProbeOptions) -> Result<Self> {
        let usage = || {
            Error::Input(format!(
                "'{spec}': expected dylib:PATH.so:SYMBOL, naming a C function \
                 `T SYMBOL(const T *x, size_t n)` (T = float for f32, double for f64)"
            ))
        };
        let (path, symbol) = rest.rsplit_once(':').ok_or_else(usage)?;
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
        let library = unsafe { Library::new(&file) }.map_err(|e| {
            Error::Input(format!(
                "{spec}: cannot load {path} as a shared library: {}",
                one_line(&e.to_string())
            ))
        })?;
        let missing = |e: libloading::Error| {
            Error::Input(format!(
                "{spec}: {path} has no symbol '{symbol}' ({}): export `{} {symbol}(const {} *x, \
                 size_t n)` with C linkage (extern \"C\" in C++, not static)",
                one_line(&e.to_string()),
                c_type(format),
                c_type(format)
            ))
        };
        // SAFETY: the symbol is trusted to be a function of the documented
        // signature for this format (module documentation).
        let func = unsafe {
            match format {
                Format::F64 => Func::F64(
                    *library.get::<SumF64>(symbol.as_bytes()).map_err(missing)?,
                    vec![0.0; n],
                ),
                _ => Func::F32(
                    *library.get::<SumF32>(symbol.as_bytes()).map_err(missing)?,
                    vec![0.0; n],
                ),
            }
        };
        Ok(DylibProbe {
            n,
            format,
            accumulator: opts.accumulator.unwrap_or(format),
            func,
            _library: library,
        })
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
        let n = self.n;
        if inputs.len() != out.len() * n {
            return Err(Error::Input(format!(
                "dylib probe: {} values for {} rows of n = {n}",
                inputs.len(),
                out.len()
            )));
        }
        for (row, o) in inputs.chunks_exact(n).zip(out.iter_mut()) {
            *o = match &mut self.func {
                Func::F32(f, x) => {
                    for (d, &s) in x.iter_mut().zip(row) {
                        *d = s as f32;
                    }
                    // SAFETY: `x` holds `n` floats; the function is trusted
                    // to read only those (module documentation).
                    f64::from(unsafe { f(x.as_ptr(), n) })
                }
                Func::F64(f, x) => {
                    x.copy_from_slice(row);
                    // SAFETY: as above, with `n` doubles.
                    unsafe { f(x.as_ptr(), n) }
                }
            };
        }
        Ok(())
    }
}
