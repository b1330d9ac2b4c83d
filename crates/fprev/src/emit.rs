//! Code that reproduces a black box's bits anywhere: a formula of the
//! order language and the arithmetic of each of its parts ([`Plan`]),
//! written as a self-contained function in C, CUDA C, Rust or
//! Python/NumPy.
//!
//! The function is the formula's loops, not an unrolled tree, so it holds
//! for every `n` the formula does. Every value is kept in a `double` (any
//! partial sum, an exact product of two f32 values) and each addition is
//! rounded once, to its part's format; lanes of a loop whose additions are
//! the format's own (f32 additions of f32 values, f32 fused multiply-adds)
//! run in registers of that format, lane by lane, which compilers
//! vectorise.
//!
//! ```
//! use fprev::emit::{self, Language, Op, Plan};
//! use fprev::arith::{NodeArithmetic, Product};
//! use fprev::Format;
//!
//! let numpy = "halves(128, 8, body(8, interleave(8, sequential, pairwise), then))".parse().unwrap();
//! let plan = Plan::uniform(&numpy, Format::F32, Op::Sum,
//!                          NodeArithmetic::ieee(Format::F32), Product::Exact).unwrap();
//! let c = emit::source(&plan, Language::C, "numpy_sum_f32", "numpy:sum").unwrap();
//! assert!(c.contains("float numpy_sum_f32(const float *x, size_t n)"));
//! // The plan is what the function computes, evaluated here.
//! let x: Vec<f64> = (0..300).map(|i| 1.0 / (i as f64 + 1.0)).map(|v| v as f32 as f64).collect();
//! let want = numpy.tree(300);
//! let replay = fprev::reduce::Replay::new(&want, Format::F32);
//! assert_eq!(plan.evaluate(&x, &[]), replay.sum(&x));
//! ```

mod c;
pub mod check;
mod code;
mod fused;
mod lower;
mod names;
pub mod plan;
mod python;
mod rust;
mod walk;

pub use names::valid_name;
pub use plan::{Op, Part, Plan, children, element_ok, preorder};

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A language emitted code is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Language {
    /// C99 (`cc -std=c99 -O3`): a function of `const float *x, size_t n`.
    C,
    /// CUDA C: the C function as a `__device__` function, and a one-thread
    /// kernel that calls it.
    Cuda,
    /// Python with NumPy: a function of a 1-D array `x` (and `y`, of a
    /// dot) returning a NumPy scalar, vectorised where lanes of the order
    /// allow.
    Python,
    /// Rust: `pub fn NAME(x: &[f32]) -> f32` (`x, y` of a dot) and its
    /// C-ABI wrapper `NAME_c(x, n)`, a module that depends on no crate.
    Rust,
}

impl Language {
    /// Every language, as `--lang` names them.
    pub const ALL: [Language; 4] = [
        Language::C,
        Language::Cuda,
        Language::Python,
        Language::Rust,
    ];

    /// Its name: `c`, `cuda`, `python`, `rust`.
    pub fn name(self) -> &'static str {
        match self {
            Language::C => "c",
            Language::Cuda => "cuda",
            Language::Python => "python",
            Language::Rust => "rust",
        }
    }

    /// The extension of a file of it, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Language::C => "c",
            Language::Cuda => "cu",
            Language::Python => "py",
            Language::Rust => "rs",
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Language {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Language::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Language::ALL.iter().map(|l| l.name()).collect();
                format!("unknown language '{s}': expected {}", names.join(", "))
            })
    }
}

/// The name emitted code gives its function by default: the spec's
/// family and operation and the element type, `numpy:sum` in f32 being
/// `numpy_sum_f32`.
///
/// ```
/// assert_eq!(fprev::emit::default_name("blas:dot@openblas", fprev::Format::F32), "blas_dot_f32");
/// ```
pub fn default_name(spec: &str, element: crate::Format) -> String {
    let base: String = spec
        .split(['@', '/'])
        .next()
        .unwrap_or(spec)
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() {
            true => c,
            false => '_',
        })
        .collect();
    let base = base.trim_matches('_');
    match base.chars().next() {
        Some(c) if c.is_ascii_alphabetic() => format!("{base}_{element}"),
        _ => format!("f_{base}_{element}"),
    }
}

/// The source of a function `name` computing what `plan` does, in
/// `language`; `what` says in its comment what it reproduces (a spec).
/// Refused where `name` is not an identifier, or the plan holds a part
/// emitted code does not write (`peel`, a body whose rest joins its
/// first lane, compensated steps outside a left-to-right loop, a kernel's
/// fold of more than 4,096 lane slots).
pub fn source(plan: &Plan, language: Language, name: &str, what: &str) -> Result<String> {
    valid_name(name, language)?;
    match language {
        Language::C => c::source(plan, name, what, false),
        Language::Cuda => c::source(plan, name, what, true),
        Language::Python => python::source(plan, name, what),
        Language::Rust => rust::source(plan, name, what),
    }
    .map_err(Error::Input)
}
