//! `fprev survey`'s flags and its examples.

use std::path::PathBuf;

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};

use fprev::Spec;
use fprev::format::Format;
use fprev::sizes::Sizes;

use super::parse::{parse_pair, parse_runs, parse_threads};
use super::{GuardArgs, MpiArgs};

pub(super) const SURVEY_EXAMPLES: &str = "\
Examples:
  fprev survey                                   everything found, into fprev-survey/
  fprev survey --only numpy,blas --ops sum,dot   two libraries, two ops
  OPENBLAS_CORETYPE=Sandybridge fprev survey -o sandybridge
                                                 the kernels of an older CPU
  fprev compare fprev-survey/survey.json sandybridge/survey.json
  fprev survey --only blas --ops dot --knobs     which settings change OpenBLAS's dot,
                                                 for compare to name and say to pin
  fprev survey --gpu ampere -o a100              a simulated GPU's instructions (MMA-Sim)
  fprev survey --gpu hopper -o h100
  fprev compare a100 h100                        will results change from an A100 to an H100?

A survey is saved after each black box: run the same command again after a
failure or Ctrl-C and it goes on where it stopped (--fresh starts over).
Commit a reference machine's survey.json and let CI run `fprev survey` and
`fprev compare` on every other machine: exit 1 names each result that
would change, and why.";

#[derive(Args, Debug)]
pub(crate) struct SurveyArgs {
    /// Directory to write survey.json and index.html into (created if
    /// missing); a survey.json there is resumed.
    #[arg(short, long, value_name = "DIR", default_value = "fprev-survey")]
    pub(crate) output: PathBuf,
    /// Libraries to survey, e.g. numpy,blas [default: every one found:
    /// numpy, jax, torch, blas (the BLAS blas: loads), blas@NAME (each other
    /// BLAS found), ndarray, rayon]. `blas` also selects every blas@NAME.
    #[arg(long, value_name = "LIB,LIB,…", value_delimiter = ',')]
    pub(crate) only: Vec<String>,
    /// Survey this black box instead of the libraries found (repeat for
    /// several): your own kernels (python:PATH.py:FUNC, dylib:PATH.so:SYMBOL)
    /// or one library op (blas:dot@blis).
    #[arg(long = "spec", value_name = "SPEC", conflicts_with_all = ["only", "ops"])]
    pub(crate) specs: Vec<Spec>,
    /// Survey a simulated GPU instead (MMA-Sim): one matrix instruction of
    /// ARCH for each input type it has (f16, bf16, tf32, f64, e4m3, e5m2;
    /// AMD's f32, xf32, fp8, bf8), its result the wide accumulator, each
    /// chained along K at K = 3..40 with its arithmetic, and the model
    /// checked against the simulator on 1,000 trials; --dtypes keeps the
    /// instructions whose inputs fprev gives in those. ARCH: volta, turing,
    /// ampere, ada, hopper, blackwell, rtx_blackwell, cdna1, cdna2, cdna3.
    /// `fprev compare` of two such surveys matches instructions by their
    /// types and names what changes.
    #[arg(long, value_name = "ARCH", conflicts_with_all = ["only", "specs", "ops", "knobs"])]
    pub(crate) gpu: Option<String>,
    /// Ops to survey.
    #[arg(long, value_name = "OP,OP,…", value_delimiter = ',',
          default_value = "sum,dot,gemv,gemm",
          value_parser = PossibleValuesParser::new(fprev::workflow::survey::OPS))]
    pub(crate) ops: Vec<String>,
    /// Dtypes to survey each op in, each where the library has it (a BLAS
    /// and ndarray: f32 and f64; NumPy, JAX, PyTorch: f16 and bf16 too)
    /// [default: f32,f64,f16,bf16; with --gpu, every input type].
    #[arg(
        long,
        value_name = "FORMAT,…",
        value_delimiter = ',',
        value_parser = PossibleValuesParser::new(Format::ALL.map(Format::name))
            .map(|s| s.parse::<Format>().expect("a listed format"))
    )]
    pub(crate) dtypes: Vec<Format>,
    /// Sizes the formula is inferred from [default: those of `fprev
    /// explain`; with --gpu, 3..40].
    #[arg(short = 'n', long = "n", value_name = "SIZES")]
    pub(crate) sizes: Option<Sizes>,
    /// Sizes revealed past those, for sums, dots and GEMVs, each checked
    /// against the formula (none with --gpu).
    #[arg(long, value_name = "SIZES", default_value = fprev::workflow::survey::LARGE_SIZES,
          conflicts_with_all = ["no_large", "gpu"])]
    pub(crate) large: Sizes,
    /// Reveal no sizes past the formula's.
    #[arg(long)]
    pub(crate) no_large: bool,
    /// M,N of GEMV (M rows) and GEMM; K is the size revealed. M is also
    /// the elements of an mpi: vector (its first is revealed): the message
    /// size, which decides MPI's algorithm.
    #[arg(long, value_name = "M,N", default_value = "64,64", value_parser = parse_pair)]
    pub(crate) shape: [usize; 2],
    /// Thread counts compared for black boxes that take one (blas:)
    /// [default: 1 and the machine's cores].
    #[arg(long, value_name = "T,T,…", value_delimiter = ',',
          value_parser = parse_threads, conflicts_with = "no_threads")]
    pub(crate) threads: Vec<u16>,
    /// Compare no thread counts.
    #[arg(long)]
    pub(crate) no_threads: bool,
    /// Sizes at which thread counts are compared.
    #[arg(long, value_name = "SIZES", default_value = fprev::workflow::survey::THREAD_SIZES)]
    pub(crate) thread_sizes: Sizes,
    /// Look for answers that change from call to call: each of 8 random
    /// inputs summed up to R times at each black box's largest size
    /// revealed (stopping at the first that differs), and R times at each
    /// thread count compared; a black box whose bits change is marked
    /// varies (0: only where a reveal or its replay fails).
    #[arg(long, value_name = "R", default_value_t = fprev::workflow::survey::SURVEY_RUNS,
          value_parser = parse_runs)]
    pub(crate) runs: usize,
    /// Also try each black box's knobs, at its largest size surveyed: the
    /// environment variables its library reads (OPENBLAS_NUM_THREADS,
    /// OPENBLAS_CORETYPE of the core types this CPU runs, MKL_NUM_THREADS,
    /// MKL_CBWR, BLIS_NUM_THREADS, NPY_DISABLE_CPU_FEATURES,
    /// OMP_NUM_THREADS, RAYON_NUM_THREADS), each value in a process of its
    /// own, and its thread count (--threads); survey.json records which
    /// change its order, for compare to name.
    #[arg(long)]
    pub(crate) knobs: bool,
    /// Start over, ignoring a survey.json already in the directory.
    #[arg(long)]
    pub(crate) fresh: bool,
    /// Leave the drawings out of index.html (they need Graphviz's dot).
    #[arg(long)]
    pub(crate) no_draw: bool,
    #[command(flatten)]
    pub(crate) guard: GuardArgs,
    #[command(flatten)]
    pub(crate) mpi: MpiArgs,
}
