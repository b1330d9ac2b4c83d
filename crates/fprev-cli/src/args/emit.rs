//! `fprev emit`'s flags and its examples.

use std::path::PathBuf;

use clap::Args;

use fprev::probe::Offset;
use fprev::sizes::Sizes;

use super::parse::{parse_emit_trials, parse_offset, parse_replayed, parse_shape};
use super::{FormatArgs, GuardArgs};

#[derive(Args, Debug)]
pub(crate) struct EmitArgs {
    /// The black box (numpy:sum, blas:dot, …), or a confirmed tree file
    /// (TREE.json) whose formula and arithmetic to write.
    pub(crate) source: String,
    /// The language: c, cuda, rust or python.
    #[arg(long = "lang", value_name = "LANG", default_value = "c")]
    pub(crate) language: fprev::emit::Language,
    /// The function's name [default: the spec's, e.g. numpy_sum_f32].
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// The formula of its order, where it is known (else the cache's, else
    /// `fprev explain`'s, found now), as fprev prints it (`native:fused:17`)
    /// or without `native:`.
    #[arg(long, value_name = "FORMULA")]
    pub(crate) formula: Option<String>,
    /// Compile the code (C and CUDA C with cc/c++, Rust with rustc, Python
    /// with the python3 on PATH) and run it against the black box on random
    /// inputs at every --check-sizes size, bit for bit: nothing is written
    /// where one differs (exit 1).
    #[arg(long)]
    pub(crate) check: bool,
    /// Sizes --check runs [default: 1..1024, the powers of two to 2^20 and
    /// three past each;
    /// a tensor core's chain fused:K, every n to 4(K-1)+1 and the powers of
    /// two from 128 to 4096].
    #[arg(long, value_name = "SIZES", requires = "check", value_parser = parse_replayed)]
    pub(crate) check_sizes: Option<Sizes>,
    /// Random inputs --check runs at each size (at most 1,000).
    #[arg(long, value_name = "K", default_value_t = 3,
          value_parser = parse_emit_trials)]
    pub(crate) trials: u16,
    /// Neither read nor write the cache of formulas.
    #[arg(long)]
    pub(crate) no_cache: bool,
    /// Find the order on an input array starting this far past a 64-byte
    /// boundary, in bytes (1B) or elements (1), as reveal --offset does
    /// (numpy:…, python:…, jax:…): the code matches the black box on such
    /// an input, and --check checks it there [default: a tree file's
    /// offset, else where NumPy's allocation puts it].
    #[arg(long, value_name = "OFFSET", value_parser = parse_offset)]
    pub(crate) offset: Option<Offset>,
    /// GEMV/GEMM shape M,N,K: M rows of A and N columns of B at every size,
    /// K taking each size in turn, where the order is found and --check
    /// runs (as explain --shape) [default: N,N,N at each size N].
    #[arg(long, value_name = "M,N,K", value_parser = parse_shape)]
    pub(crate) shape: Option<[usize; 3]>,
    #[command(flatten)]
    pub(crate) number: FormatArgs,
    /// Write the source to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) guard: GuardArgs,
}

pub(crate) const EMIT_EXAMPLES: &str = "Examples:
  fprev emit numpy:sum --lang c -o numpy_sum.c        NumPy's float32 sum, as C
  fprev emit numpy:sum --dtype f64 --lang python      ... float64, in NumPy, no np.sum
  OPENBLAS_CORETYPE=Haswell fprev emit blas:dot --check
                                                      OpenBLAS's sdot, checked at 1..1024 and 2^k, 2^k+3 to 2^20
  fprev emit tree.json --lang rust                    a confirmed tree file's formula";
