//! `fprev invariance`'s flags, its examples and its output formats.

use clap::{Args, ValueEnum};

use fprev::Spec;
use fprev::check;
use fprev::probe::Offset;
use fprev::sizes::Sizes;

use super::parse::{
    parse_column, parse_confirm, parse_count, parse_list, parse_offset, parse_row, parse_shape,
    parse_threads,
};
use super::{FormatArgs, GuardArgs, MpiArgs};

pub(super) const INVARIANCE_EXAMPLES: &str = "\
Examples:
  fprev invariance blas:dot@mkl -n 65536 --threads 1,2
  fprev invariance blas:gemm@blis -n 1000 --shape 16,65,1000 --columns 0,63,64
  fprev invariance numpy:gemm -n 1000 --shape 64,64,1000 --batch 1,8,16,64 --rows first,last
  fprev invariance blas:dot@openblas -n 4096 --env OPENBLAS_CORETYPE=Haswell,SkylakeX,Prescott
  fprev invariance numpy:sum -n 1000 --env OPENBLAS_NUM_THREADS=1,2 --env NPY_DISABLE_CPU_FEATURES=unset,AVX512F";

#[derive(Args, Debug)]
pub(crate) struct InvarianceArgs {
    /// The black box, e.g. numpy:sum, blas:dot@mkl (see `fprev probes`).
    pub(crate) spec: Spec,
    /// Number of summands.
    #[arg(short, long, value_parser = parse_count, default_value_t = 1000)]
    pub(crate) n: usize,
    #[command(flatten)]
    pub(crate) number: FormatArgs,
    /// GEMV/GEMM shape M,N,K, as for reveal.
    #[arg(long, value_name = "M,N,K", value_parser = parse_shape)]
    pub(crate) shape: Option<[usize; 3]>,
    /// Thread counts to reveal under (reduce:…, rayon:…, blas:…, polars:…,
    /// duckdb:…), e.g. 1,2,4.
    #[arg(long, value_name = "T,T,…", value_delimiter = ',',
          value_parser = parse_threads)]
    pub(crate) threads: Vec<u16>,
    /// Batch sizes M of a GEMV or GEMM to reveal at (--shape gives N and
    /// K), e.g. 1..64 or 1,8,16,64: is an output's order the same whether
    /// one row or M rows are sent? Rows first, middle and last are
    /// revealed at each M unless --rows says otherwise.
    #[arg(long, value_name = "SIZES", value_parser = parse_list)]
    pub(crate) batch: Option<Sizes>,
    /// Rows of each batch to reveal: first, middle, last (row 0, M/2,
    /// M-1) or an index, e.g. first,last [default: first,middle,last where
    /// M > 1 or --batch is given].
    #[arg(long, value_name = "WHICH,…", value_delimiter = ',', value_parser = parse_row)]
    pub(crate) rows: Vec<String>,
    /// Output columns of a GEMM to reveal, e.g. 0,17,63 (where a column
    /// falls in the kernel's tiles may change its order) [default: with
    /// --shape, the first 16, the middle and the last].
    #[arg(long, value_name = "J,J,…", value_delimiter = ',', value_parser = parse_column)]
    pub(crate) columns: Vec<usize>,
    /// Where the input array starts past a 64-byte boundary, in bytes
    /// (1B, 4B) or elements (1), e.g. 0,1B,1: a library may sum an
    /// unaligned array in another order (NumPy buffers one in chunks of
    /// 8,192 elements). For black boxes handed a NumPy array (numpy:…,
    /// python:…, jax:…) [default: where NumPy's allocation puts it].
    #[arg(long, value_name = "OFFSET,…", value_delimiter = ',', value_parser = parse_offset)]
    pub(crate) offset: Vec<Offset>,
    /// An environment variable and its values, NAME=V1,V2,… (unset: not
    /// set); repeatable. Each combination runs in a process of its own,
    /// since libraries read these when they load (OPENBLAS_NUM_THREADS,
    /// OPENBLAS_CORETYPE, OMP_NUM_THREADS, NPY_DISABLE_CPU_FEATURES,
    /// MKL_CBWR, MKL_NUM_THREADS, RAYON_NUM_THREADS, …).
    #[arg(long, value_name = "NAME=V1,V2,…")]
    pub(crate) env: Vec<String>,
    /// Fresh processes each setting runs in, repeats compared: an order
    /// that differs between processes of one setting (a hash seed, a
    /// thread pool's start-up) blames no knob, and is said so (1 to 16)
    /// [default: 2 with --env, else 1: the study runs in this process].
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u8).range(1..=16))]
    pub(crate) processes: Option<u8>,
    /// Random inputs each revealed tree is replayed on (as reveal's
    /// --confirm); an order its replay does not confirm supports no claim.
    #[arg(long, value_name = "K", default_value_t = check::CONFIRM_TRIALS, value_parser = parse_confirm)]
    pub(crate) confirm: usize,
    /// text: the outcomes, batch regimes, where they part and the verdict;
    /// json: every case with its tree document (a study file).
    #[arg(long, value_enum, default_value_t = StudyFormat::Text)]
    pub(crate) format: StudyFormat,
    /// Reveal here only the knobs one process turns (the study of one
    /// environment, run by the study of them all).
    #[arg(long, hide = true)]
    pub(crate) one_process: bool,
    #[command(flatten)]
    pub(crate) mpi: MpiArgs,
    #[command(flatten)]
    pub(crate) guard: GuardArgs,
}

/// What `fprev invariance` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum StudyFormat {
    /// For people.
    Text,
    /// A study file, for scripts.
    Json,
}
