//! The command line as clap sees it: every subcommand, option group and
//! value parser, the help texts, and the translation of parsed options into
//! the library's options. Nothing here runs anything (see `commands`).

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};

use fprev::Spec;
use fprev::bounds;
use fprev::check;
use fprev::format::Format;
use fprev::probe::{Offset, ProbeOptions};
use fprev::reveal::{Algorithm, Options, Pivot};
use fprev::sizes::Sizes;
use fprev::workflow::{self, PROVE_UP_TO};

/// The spec `fprev reveal` reveals when given none.
const DEFAULT_SPEC: &str = "native:strided:8";

const ABOUT: &str = "Reveal the order in which a black box adds its floating-point numbers.";

const LONG_ABOUT: &str = "\
Reveal the order in which a black box adds its floating-point numbers.

fprev feeds a summation (a library's sum, dot, GEMV, GEMM, a reduction) masked
all-one inputs (+M at one summand, -M at another, units elsewhere), reads off
how many units survive, and rebuilds the summation tree from the answers.
Every answer is validated: a black box that breaks the method's assumptions is
reported as such, never turned into a tree.

Every reveal ends by replaying the revealed tree on random inputs and
comparing with the black box bit for bit (--confirm K trials). Masked inputs
only see the order, so after it fprev asks what each node computes: the
format its partial sum is rounded to, whether it rounds to nearest or
truncates, and how many bits a fused node keeps (a sample of nodes, three
queries each; --every-node asks them all, --no-arith none). The tree is
confirmed with that model, which the tree file keeps: a mixed-precision
kernel (OpenBLAS's sdot adds its tail in f64) is confirmed, a compensated sum
is named. A dot product, GEMV or GEMM is also asked how it rounds each product
(exact as in an FMA, or to a format first) and replayed on random x and y:
that one replay confirms the order and the model. A
tree no model replays is still printed, marked as not confirmed, and the first
input that differs is saved to a file.

fprev explain names the one formula behind the trees of many sizes
(native:FORMULA, which is also a black box), checks it at larger sizes and
says the largest it checked: a formula speaks for the sizes checked, and
kernels switch past them; reveal --infer predicts the tree
at a size too large to reveal from it, proves it with one masked query per
node where that is cheap (up to --prove-up-to), and confirms it by replay.

Exit status: 0 ok, 1 trees differ, a check failed or no formula explains,
2 usage or bad input,
3 the black box broke an assumption, 4 the black box is order-independent
(the same bits in every order: reported, no tree), 5 the order was revealed
but a replay of it does not reproduce the black box's bits, 6 the black box
answers the same input differently on different calls (it varies: reported
with the spread, and reveal writes its skeleton, the subtrees every call
shares, instead of a tree).";

const EXAMPLES: &str = "\
Examples:
  fprev reveal                                   reveal the built-in default (native:strided:8, n = 32)
  fprev reveal native:pairwise -n 1000 -o t.json save a tree
  fprev reveal native:sequential -n 1000 --dtype f32 --acc bf16
                                                 a sum rounding every partial sum to bf16
  fprev render t.json --format svg -o t.svg      draw it (needs Graphviz's dot)
  fprev check t.json native:pairwise             confirm by replay on random inputs
  fprev diff a.json b.json                       equal modulo child order?
  fprev sweep reduce:binary-tree -n 1..100 --threads 1,2,4
                                                 where does the order change with n, threads?
  fprev explain numpy:sum                        the order as one formula, checked to n = 65,536
  fprev reveal 'native:body(8, interleave(8, sequential, pairwise), then)' -n 100
                                                 the tree a formula gives
  fprev survey -o here                           every library on this machine, explained
  fprev compare ref/survey.json here/survey.json which results change here, and why
  fprev probes                                   what can be revealed here";

const SURVEY_EXAMPLES: &str = "\
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

#[derive(Parser, Debug)]
#[command(
    name = "fprev",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = EXAMPLES,
    arg_required_else_help = true
)]
pub(crate) struct Cli {
    /// Log what the engine does on stderr (-v: subproblems, -vv: more).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(crate) verbose: u8,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Reveal a black box's summation tree and print or save it.
    Reveal(RevealArgs),
    /// Draw a saved tree.
    Render(RenderArgs),
    /// Compare two saved trees modulo child order (exit 1 when they differ).
    Diff(DiffArgs),
    /// Replay a saved tree on random inputs and compare with a black box bit for bit.
    Check(CheckArgs),
    /// Reveal across sizes (and thread counts) and report where the order changes.
    Sweep(SweepArgs),
    /// Reveal at several sizes and name the one formula that gives every
    /// revealed tree, checked at larger sizes (exit 1 when none does).
    Explain(ExplainArgs),
    /// Write a function that reproduces a black box's bits (C, CUDA C,
    /// Rust, Python/NumPy), from its formula and arithmetic; --check
    /// compiles it and runs it against the black box.
    #[command(after_help = EMIT_EXAMPLES)]
    Emit(EmitArgs),
    /// Survey this machine: every black box, op and dtype explained over a
    /// spread of sizes, with its arithmetic and thread counts (survey.json
    /// and a self-contained index.html).
    #[command(after_help = SURVEY_EXAMPLES)]
    Survey(SurveyArgs),
    /// Compare two surveys: which results change between the machines, and
    /// why (exit 1 when some do).
    Compare(CompareArgs),
    /// Reveal one output of a black box under each batch size, output
    /// position, thread count and environment (each environment in a fresh
    /// process) and say what changes its order and what to pin (exit 1
    /// when something does).
    #[command(after_help = INVARIANCE_EXAMPLES)]
    Invariance(InvarianceArgs),
    /// List the probe specs this build knows, and whether each is usable
    /// here; with a family's prefix (`fprev probes mma`), every spec of it
    /// that it can list.
    Probes(ProbesArgs),
    /// The cache of formulas explain and reveal --infer keep: list it,
    /// clear it, or say where it is.
    Cache(CacheArgs),
    /// The bits of a black box's answers to seeded random inputs, as JSON:
    /// what `reveal --processes` asks each fresh process.
    #[command(hide = true)]
    Answers(AnswersArgs),
}

#[derive(Args, Debug)]
pub(crate) struct AnswersArgs {
    pub(crate) spec: Spec,
    #[command(flatten)]
    pub(crate) black_box: BlackBoxArgs,
    /// Random inputs to answer (1 to 64: each is held while answered).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(1..=64))]
    pub(crate) inputs: u8,
    /// Their seed.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    #[command(flatten)]
    pub(crate) guard: GuardArgs,
}

#[derive(Args, Debug)]
pub(crate) struct BlackBoxArgs {
    /// Number of summands [default: the tree's size for replay:, else 32].
    #[arg(short, long, allow_hyphen_values = true, value_parser = parse_count)]
    pub(crate) n: Option<usize>,
    #[command(flatten)]
    pub(crate) format: FormatArgs,
    /// GEMV/GEMM shape M,N,K: A is M x K, B is K x N; K (= -n) is revealed,
    /// and each of the M rows answers one query per call [default: N,N,N].
    #[arg(long, value_name = "M,N,K", value_parser = parse_shape)]
    pub(crate) shape: Option<[usize; 3]>,
    /// The output column of a GEMM whose order is revealed (0 to N-1):
    /// where it falls in the kernel's tiles may change its order
    /// [default: 0].
    #[arg(long, value_name = "J", value_parser = parse_column)]
    pub(crate) column: Option<usize>,
    /// Worker threads of a black box that takes a count (reduce:…, blas:…)
    /// [default: the black box's own].
    #[arg(long, value_name = "T", value_parser = parse_threads)]
    pub(crate) threads: Option<u16>,
    /// Hand the black box its input in an array starting this far past a
    /// 64-byte boundary, in bytes (1B) or elements (1): the order found
    /// holds for that alignment (numpy:…, python:…, jax:…) [default: where
    /// NumPy's allocation puts it, aligned to its values].
    #[arg(long, value_name = "OFFSET", value_parser = parse_offset)]
    pub(crate) offset: Option<Offset>,
    #[command(flatten)]
    pub(crate) mpi: MpiArgs,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct MpiArgs {
    /// MPI ranks to run an mpi: black box on: fprev starts the job itself
    /// with the launcher of the MPI it links, `mpirun -np P` (Open MPI) or
    /// `mpiexec.mpich -n P` (MPICH) (under your own launcher, the job's
    /// size).
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) ranks: Option<u16>,
    /// The MPI implementation this fprev must link: openmpi or mpich
    /// (`fprev probes` says which it does); another is an error saying how
    /// to build for it.
    #[arg(long, value_name = "IMPLEMENTATION")]
    pub(crate) mpi: Option<String>,
    /// Seconds an MPI job started by --ranks may run before it is stopped,
    /// every process of it.
    #[arg(long, value_name = "SECONDS", default_value_t = 600,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) mpi_timeout: u64,
}

#[derive(Args, Debug)]
pub(crate) struct GuardArgs {
    /// Seconds one call of the black box may run; a call that runs longer
    /// (a hang) stops fprev with exit status 3 (at most 10^9) [default: no
    /// limit].
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub(crate) timeout: Option<f64>,
}

#[derive(Args, Debug)]
pub(crate) struct FormatArgs {
    /// Input format: f64, f32, tf32, f16, bf16, e4m3, e5m2 [default: f32 (an mma: instruction's
    /// own), or a tree file's dtype].
    #[arg(long, value_name = "FORMAT")]
    pub(crate) dtype: Option<Format>,
    /// Accumulator format: every partial sum of native: and replay: black
    /// boxes is rounded to it; for library black boxes, the narrowest format
    /// they are known to round partial sums to [default: the input format].
    #[arg(long, value_name = "FORMAT")]
    pub(crate) acc: Option<Format>,
}

impl BlackBoxArgs {
    /// The options to open the black box with; `dtype`, a tree file's
    /// format, stands in for a missing --dtype.
    pub(crate) fn options(&self, dtype: Option<Format>) -> ProbeOptions {
        ProbeOptions {
            n: self.n,
            shape: self.shape,
            column: self.column,
            threads: self.threads.map(usize::from),
            ranks: self.mpi.ranks.map(usize::from),
            offset: self.offset,
            ..self.format.options(dtype)
        }
    }
}

impl FormatArgs {
    /// The input and accumulator formats as probe options, with `dtype`
    /// standing in for a missing --dtype.
    pub(crate) fn options(&self, dtype: Option<Format>) -> ProbeOptions {
        ProbeOptions {
            format: self.dtype.or(dtype).unwrap_or_default(),
            accumulator: self.acc,
            ..Default::default()
        }
    }
}

impl Command {
    /// The MPI options of a command that opens a black box.
    pub(crate) fn mpi(&self) -> Option<&MpiArgs> {
        match self {
            Command::Reveal(a) => Some(&a.black_box.mpi),
            Command::Check(a) => Some(&a.black_box.mpi),
            Command::Sweep(a) => Some(&a.mpi),
            Command::Explain(a) => Some(&a.mpi),
            Command::Survey(a) => Some(&a.mpi),
            // Each environment is a job of its own, started by its process.
            Command::Invariance(a) if a.processes() == 1 && a.env.is_empty() => Some(&a.mpi),
            Command::Invariance(a) if a.one_process => Some(&a.mpi),
            _ => None,
        }
    }
}

#[derive(Args, Debug)]
pub(crate) struct RevealArgs {
    /// The black box, e.g. native:pairwise, replay:tree.json (see `fprev probes`).
    #[arg(default_value = DEFAULT_SPEC)]
    pub(crate) spec: Spec,
    #[command(flatten)]
    pub(crate) black_box: BlackBoxArgs,
    #[command(flatten)]
    pub(crate) engine: EngineArgs,
    #[command(flatten)]
    pub(crate) confirm: ConfirmArgs,
    /// Do not reveal at N: reveal at the sizes of `fprev explain` below N,
    /// infer the formula they follow, predict its tree at N, prove it with
    /// masked inputs up to --prove-up-to, and confirm it there by replay
    /// (else a prediction, labelled so; exit 5 if the replay differs). For
    /// sizes too large to reveal in reasonable time.
    #[arg(long)]
    pub(crate) infer: bool,
    /// With --infer, up to this N also prove the prediction with masked
    /// inputs, one query per node packed into shared inputs: the tree is
    /// then revealed, labelled "predicted, proven by K masked checks" (0:
    /// never; a wrong prediction is revealed in full instead).
    #[arg(long, value_name = "N", default_value_t = PROVE_UP_TO, requires = "infer")]
    pub(crate) prove_up_to: usize,
    /// Reveal afresh: from 1,024 summands a reveal otherwise first replays
    /// the tree of each formula known for a library (NumPy's sum,
    /// OpenBLAS's sdot, …) on two random inputs, and proves the first that
    /// replays with one masked check a node (about n/23 calls) instead of
    /// revealing.
    #[arg(long, conflicts_with = "infer")]
    pub(crate) afresh: bool,
    /// With --infer, neither read nor write the cache of formulas (see
    /// `fprev cache`): infer the formula from reveals at smaller sizes.
    #[arg(long, requires = "infer")]
    pub(crate) no_cache: bool,
    /// Before revealing, look for answers that change from call to call:
    /// sum each of 8 random inputs R times and compare the bits (exit 6 and
    /// the spread, in ulps and against the sum's condition number, when
    /// they differ), then find its skeleton with each masked query asked R
    /// times. Without it, variation is looked for only where a reveal or
    /// its replay fails, at no cost to a deterministic black box, and a
    /// varying one is summarised over 50 calls of each input.
    #[arg(long, value_name = "R", default_value_t = 0, value_parser = parse_runs)]
    pub(crate) runs: usize,
    /// Before revealing, look for an order fixed in each process but
    /// chosen as it starts (a hash seed, a thread pool's start-up, an
    /// allocation's address): the bits of 8 random inputs in this process
    /// and P-1 fresh ones compared (exit 6, nothing written, when they
    /// differ); 2 to 16. --runs looks within this one process.
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u8).range(2..=16))]
    pub(crate) processes: Option<u8>,
    /// Where the black box varies, say so and how much, but do not look
    /// for its skeleton: the subtrees every call shares, found with each
    /// masked query asked R times (or min(50, max(4, 400000/N)) without
    /// --runs), about that many times the calls of a reveal.
    #[arg(long)]
    pub(crate) no_skeleton: bool,
    #[command(flatten)]
    pub(crate) guard: GuardArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Args, Debug)]
pub(crate) struct ConfirmArgs {
    /// Random inputs to replay the revealed tree on, compared with the black
    /// box bit for bit (0: do not confirm; at most 1,000,000).
    #[arg(long, value_name = "K", default_value_t = check::CONFIRM_TRIALS,
          value_parser = parse_confirm)]
    pub(crate) confirm: usize,
    /// After the order, find what each node computes (the format it rounds
    /// to, nearest or toward zero) by asking a sample of nodes, and confirm
    /// that model by replay: the default. The tree file keeps the model.
    #[arg(long, overrides_with = "no_arith")]
    pub(crate) arith: bool,
    /// Reveal and confirm the order only, in plain rounded additions.
    #[arg(long)]
    pub(crate) no_arith: bool,
    /// Ask every node what it computes, not a sample: slower, and exact at
    /// nodes whose arithmetic random inputs seldom show (a truncating f64
    /// node under an f32 result).
    #[arg(long, conflicts_with = "no_arith")]
    pub(crate) every_node: bool,
    #[command(flatten)]
    pub(crate) mismatch: MismatchArgs,
}

#[derive(Args, Debug)]
pub(crate) struct MismatchArgs {
    /// Where the first input whose bits differ is saved (JSON).
    #[arg(long, value_name = "FILE", default_value = "fprev-mismatch.json")]
    pub(crate) mismatch_out: PathBuf,
}

#[derive(Args, Debug)]
pub(crate) struct EngineArgs {
    /// Revelation algorithm: fprev (any tree), basic (all pairs, binary), naive (n <= 8).
    #[arg(long, default_value = "fprev", value_name = "ALGO")]
    pub(crate) algo: Algorithm,
    /// FPRev pivot rule: ends (smallest leaf, largest after a pivot that hung at the top,
    /// random after both; fewest queries and levels), random (seeded), or min (the paper's).
    #[arg(long, value_enum, default_value = "ends")]
    pub(crate) pivot: PivotRule,
    /// Seed of the random pivot (--pivot random).
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Most inputs per call of a batched black box (the rows of a GEMV/GEMM).
    #[arg(long, value_name = "ROWS", value_parser = parse_batch)]
    pub(crate) batch: Option<usize>,
    /// The row of a batched black box whose order is revealed (a GEMV/GEMM
    /// row, an element of an MPI vector), with the rows that sum alike.
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub(crate) row: usize,
    /// Ask one query per input, as the paper does, instead of packing queries of
    /// independent subproblems into fields of one input.
    #[arg(long)]
    pub(crate) no_pack: bool,
    /// Build every group, instead of guessing that a group repeats the shape
    /// of a subtree already built (the same summands shifted) and checking
    /// the guess with one query per node.
    #[arg(long)]
    pub(crate) no_guess: bool,
}

impl ConfirmArgs {
    /// How the revealed tree is confirmed.
    pub(crate) fn options(&self) -> workflow::Confirm {
        workflow::Confirm {
            trials: self.confirm,
            arithmetic: if self.no_arith {
                workflow::Seek::Never
            } else {
                workflow::Seek::Always
            },
            every_node: self.every_node,
            models: workflow::Models::default(),
        }
    }
}

impl EngineArgs {
    /// The reveal engine's options.
    pub(crate) fn options(&self) -> Options {
        Options {
            algorithm: self.algo,
            pivot: match self.pivot {
                PivotRule::Random => Pivot::Random { seed: self.seed },
                PivotRule::Min => Pivot::Min,
                PivotRule::Ends => Pivot::Ends,
            },
            batch: self.batch,
            pack: !self.no_pack,
            guess: !self.no_guess,
            row: self.row,
        }
    }
}

const INVARIANCE_EXAMPLES: &str = "\
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

#[derive(Args, Debug)]
pub(crate) struct CacheArgs {
    /// list: every formula kept, with its black box and the sizes it was
    /// found from; clear: forget them all; dir: where the cache lives
    /// ($FPREV_CACHE_DIR, $XDG_CACHE_HOME/fprev or ~/.cache/fprev).
    #[arg(value_enum, default_value_t = CacheAction::List)]
    pub(crate) action: CacheAction,
}

/// What `fprev cache` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CacheAction {
    /// Every formula kept.
    List,
    /// Forget them all.
    Clear,
    /// Where the cache lives.
    Dir,
}

/// What `fprev invariance` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum StudyFormat {
    /// For people.
    Text,
    /// A study file, for scripts.
    Json,
}

#[derive(Args, Debug)]
pub(crate) struct SweepArgs {
    /// The black box, e.g. numpy:sum, reduce:binary-tree (see `fprev probes`).
    pub(crate) spec: Spec,
    /// Sizes to reveal: A..B (every size), A..B:S (every S-th), or a list: 1..64,128,256.
    #[arg(short = 'n', long = "n", value_name = "SIZES")]
    pub(crate) sizes: Sizes,
    /// Thread counts to reveal each size on, e.g. 1,2,4 (reduce:…, blas:…)
    /// [default: the black box's own].
    #[arg(long, value_name = "T,T,…", value_delimiter = ',',
          value_parser = parse_threads)]
    pub(crate) threads: Vec<u16>,
    /// GEMV/GEMM shape M,N,K: M rows of A and N columns of B at every size,
    /// K taking each size in turn [default: N,N,N at each size N].
    #[arg(long, value_name = "M,N,K", value_parser = parse_shape)]
    pub(crate) shape: Option<[usize; 3]>,
    /// Message sizes of an mpi: black box to sweep instead of sizes, in
    /// elements of its vector, e.g. 1,2,4,8,16,32,64,128,256,512,1024
    /// (every power of two, so that no regime hides between two counts;
    /// at one -n): the first and last elements are revealed at each,
    /// and between two counts whose orders differ the counts between are
    /// revealed by bisection, down to the exact count where the library
    /// switches its algorithm. With --shape M,N,K, M is swept likewise.
    #[arg(long, value_name = "COUNTS", value_parser = parse_list)]
    pub(crate) count: Option<Sizes>,
    /// Hand the black box its input in an array starting this far past a
    /// 64-byte boundary, in bytes (1B) or elements (1), as reveal --offset
    /// does, at every size (numpy:…, python:…, jax:…).
    #[arg(long, value_name = "OFFSET", value_parser = parse_offset)]
    pub(crate) offset: Option<Offset>,
    #[command(flatten)]
    pub(crate) number: FormatArgs,
    #[command(flatten)]
    pub(crate) mpi: MpiArgs,
    #[command(flatten)]
    pub(crate) engine: EngineArgs,
    /// Random inputs to replay each revealed tree on, compared with the
    /// black box bit for bit (0: do not confirm; at most 1,000,000); a size
    /// whose tree is not confirmed gets no order name.
    #[arg(long, value_name = "K", default_value_t = check::CONFIRM_TRIALS,
          value_parser = parse_confirm)]
    pub(crate) confirm: usize,
    /// Before each reveal, look for answers that change from call to call:
    /// sum each of 8 random inputs R times and compare the bits (a size
    /// whose answers differ is "varies", with its spread, and the sweep
    /// exits 6). Without it, variation is looked for only where a reveal or
    /// its replay fails.
    #[arg(long, value_name = "R", default_value_t = 0, value_parser = parse_runs)]
    pub(crate) runs: usize,
    #[command(flatten)]
    pub(crate) guard: GuardArgs,
    /// Output format [default: from the -o extension (.json), else a table].
    #[arg(long, value_enum)]
    pub(crate) format: Option<SweepFormat>,
    /// Write to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

pub(crate) use fprev::formula::infer::EXPLAIN_SIZES;

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
          value_parser = PossibleValuesParser::new(fprev::survey::OPS))]
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
    #[arg(long, value_name = "SIZES", default_value = fprev::survey::LARGE_SIZES,
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
    #[arg(long, value_name = "SIZES", default_value = fprev::survey::THREAD_SIZES)]
    pub(crate) thread_sizes: Sizes,
    /// Look for answers that change from call to call: each of 8 random
    /// inputs summed up to R times at each black box's largest size
    /// revealed (stopping at the first that differs), and R times at each
    /// thread count compared; a black box whose bits change is marked
    /// varies (0: only where a reveal or its replay fails).
    #[arg(long, value_name = "R", default_value_t = fprev::survey::SURVEY_RUNS,
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

#[derive(Args, Debug)]
pub(crate) struct CompareArgs {
    /// The reference survey (survey.json, or the directory holding it).
    pub(crate) a: PathBuf,
    /// The survey compared with it.
    pub(crate) b: PathBuf,
    /// Also write the differences as a self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// Leave the drawings out of the HTML page.
    #[arg(long, requires = "html")]
    pub(crate) no_draw: bool,
    #[command(flatten)]
    pub(crate) report: ReportArgs,
}

#[derive(Args, Debug)]
pub(crate) struct ExplainArgs {
    /// The black box, e.g. numpy:sum, blas:dot (see `fprev probes`).
    pub(crate) spec: Spec,
    /// Sizes to reveal and explain: A..B, A..B:S or a list [default:
    /// 1..40 and sizes around 64, 128, 256, 512, 1024, up to 2048].
    #[arg(short = 'n', long = "n", value_name = "SIZES", default_value = EXPLAIN_SIZES,
          hide_default_value = true)]
    pub(crate) sizes: Sizes,
    /// Sizes past those revealed at which the formula's tree is proven with
    /// masked checks (about n/24 calls each; revealed where no proof can be
    /// made) before the formula is claimed; one that fails is inferred
    /// again with that tree. The output names the largest size checked.
    /// [default: 4096,16384,65536, each skipped (and said) where one call
    /// of the black box says its check would take over 30 s]
    #[arg(long, value_name = "SIZES", conflicts_with = "no_verify")]
    pub(crate) verify: Option<Sizes>,
    /// Claim the formula for the sizes revealed only.
    #[arg(long)]
    pub(crate) no_verify: bool,
    /// Neither read nor write the cache of formulas (see `fprev cache`):
    /// reveal every size. With the cache, a formula found before for the
    /// same black box, machine and settings is proven again at the
    /// --verify sizes and 1,000 and 2,048, and kept only if it holds.
    #[arg(long)]
    pub(crate) no_cache: bool,
    /// GEMV/GEMM shape M,N,K: M rows of A and N columns of B at every size,
    /// K taking each size in turn [default: N,N,N at each size N].
    #[arg(long, value_name = "M,N,K", value_parser = parse_shape)]
    pub(crate) shape: Option<[usize; 3]>,
    /// Hand the black box its input in an array starting this far past a
    /// 64-byte boundary, in bytes (1B) or elements (1), as reveal --offset
    /// does: the formula holds for that alignment (numpy:…, python:…,
    /// jax:…).
    #[arg(long, value_name = "OFFSET", value_parser = parse_offset)]
    pub(crate) offset: Option<Offset>,
    #[command(flatten)]
    pub(crate) number: FormatArgs,
    #[command(flatten)]
    pub(crate) mpi: MpiArgs,
    #[command(flatten)]
    pub(crate) engine: EngineArgs,
    /// Random inputs to replay each revealed tree on (0: do not confirm; at
    /// most 1,000,000); a tree whose replay differs still shows the order,
    /// and is used.
    #[arg(long, value_name = "K", default_value_t = check::CONFIRM_TRIALS,
          value_parser = parse_confirm)]
    pub(crate) confirm: usize,
    #[command(flatten)]
    pub(crate) guard: GuardArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SweepFormat {
    Table,
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum PivotRule {
    Random,
    Min,
    Ends,
}

#[derive(Args, Debug)]
pub(crate) struct OutputArgs {
    /// Output format [default: from the -o extension (.json, .dot, .svg), else text].
    #[arg(long, value_enum)]
    pub(crate) format: Option<OutputFormat>,
    /// Write to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Keep the run's wall times in the JSON (stats.seconds,
    /// stats.probe_seconds). Without it a tree file holds only what
    /// describes the tree and deterministic counts: written again for an
    /// unchanged order, it is the same file (golden files).
    #[arg(long)]
    pub(crate) timings: bool,
    /// Write a predicted tree's leaves in the JSON too. Without it a tree a
    /// formula gives is written as that formula and n (its "inferred"
    /// section): a few hundred bytes, read back as the same tree.
    #[arg(long)]
    pub(crate) leaves: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    Text,
    Json,
    Dot,
    Svg,
}

#[derive(Args, Debug)]
pub(crate) struct RenderArgs {
    /// A tree file (JSON, or the text form).
    pub(crate) tree: PathBuf,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Args, Debug)]
pub(crate) struct DiffArgs {
    /// First tree file.
    pub(crate) a: PathBuf,
    /// Second tree file.
    pub(crate) b: PathBuf,
    #[command(flatten)]
    pub(crate) report: ReportArgs,
}

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
    /// Sizes --check runs [default: 1..1024 and the powers of two to 2^20;
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
                                                      OpenBLAS's sdot, checked at 1..1024 and 2^11..2^20
  fprev emit tree.json --lang rust                    a confirmed tree file's formula";

#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    /// The tree file to confirm.
    pub(crate) tree: PathBuf,
    /// The black box to compare it with.
    pub(crate) spec: Spec,
    #[command(flatten)]
    pub(crate) black_box: BlackBoxArgs,
    /// Random inputs to try (at most 1,000,000).
    #[arg(long, default_value_t = 1000, value_parser = parse_trials)]
    pub(crate) trials: usize,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// The row of a batched black box to compare with (see reveal --row).
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub(crate) row: usize,
    #[command(flatten)]
    pub(crate) mismatch: MismatchArgs,
    #[command(flatten)]
    pub(crate) guard: GuardArgs,
    #[command(flatten)]
    pub(crate) report: ReportArgs,
}

/// How `diff` and `check` report their answer: the text for people, one
/// JSON object for machines, or only the exit status for scripts.
#[derive(Args, Debug)]
pub(crate) struct ReportArgs {
    /// Output format: text for people, or json: one JSON object on stdout, for machines.
    #[arg(long, value_name = "FORMAT", default_value = "text",
          value_parser = PossibleValuesParser::new(["text", "json"])
              .map(|s| OutputFormat::from_str(&s, false).expect("a listed value")))]
    pub(crate) format: OutputFormat,
    /// Print nothing on stdout: the exit status alone gives the answer (not with --format).
    #[arg(short, long, conflicts_with = "format")]
    pub(crate) quiet: bool,
}

/// What [`ReportArgs`] asks `diff` and `check` to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Report {
    Text,
    Json,
    Quiet,
}

impl ReportArgs {
    /// What to print.
    pub(crate) fn report(&self) -> Report {
        match (self.quiet, self.format) {
            (true, _) => Report::Quiet,
            (false, OutputFormat::Json) => Report::Json,
            (false, _) => Report::Text,
        }
    }
}

// Each whole number is bounded where the library says (`fprev::bounds`),
// as the Python package's are; a refusal is the library's error, worded in
// the flag given.

/// A count of summands.
fn parse_count(s: &str) -> Result<usize, fprev::Error> {
    bounds::N.parse(s)
}

/// `--column`, `--columns`: a whole number from 0 (checked against the
/// shape's N when the black box opens).
fn parse_column(s: &str) -> Result<usize, fprev::Error> {
    bounds::COLUMN.parse(s)
}

/// A thread count.
fn parse_threads(s: &str) -> Result<u16, fprev::Error> {
    let t = bounds::THREADS.parse(s)?;
    u16::try_from(t).map_err(|_| bounds::THREADS.refuse(s))
}

/// `--batch`: most rows a call.
fn parse_batch(s: &str) -> Result<usize, fprev::Error> {
    bounds::BATCH.parse(s)
}

/// `emit --trials`.
fn parse_emit_trials(s: &str) -> Result<u16, fprev::Error> {
    let k = bounds::EMIT_TRIALS.parse(s)?;
    u16::try_from(k).map_err(|_| bounds::EMIT_TRIALS.refuse(s))
}

/// `--batch`, `--count`: sizes that are not summands revealed.
fn parse_list(s: &str) -> Result<Sizes, fprev::Error> {
    Sizes::list(s).map_err(fprev::Error::Input)
}

/// `--check-sizes`: sizes emitted code is replayed at.
fn parse_replayed(s: &str) -> Result<Sizes, fprev::Error> {
    Sizes::replayed(s).map_err(fprev::Error::Input)
}

/// A row of a batch: first, middle, last or an index.
fn parse_row(s: &str) -> std::result::Result<String, String> {
    let s = s.trim();
    match s {
        "first" | "middle" | "last" => Ok(s.to_string()),
        _ => match s.parse::<u128>() {
            Ok(r) => bounds::ROW
                .count(r)
                .map(|r| r.to_string())
                .map_err(|e| e.to_string()),
            Err(_) => Err(format!(
                "'{s}' is not a row: give first, middle, last or an index"
            )),
        },
    }
}

/// Two positive whole numbers M,N.
fn parse_pair(s: &str) -> std::result::Result<[usize; 2], String> {
    let dims: Vec<usize> = s.split(',').filter_map(|p| p.trim().parse().ok()).collect();
    match dims.as_slice() {
        [m, n] if s.split(',').count() == 2 && *m > 0 && *n > 0 => Ok([*m, *n]),
        _ => Err(format!("'{s}' is not M,N: two positive whole numbers")),
    }
}

/// The longest `--timeout`: about 31 years, past any wait one means.
const MOST_SECONDS: f64 = 1e9;

/// A positive number of seconds, at most [`MOST_SECONDS`].
fn parse_seconds(s: &str) -> std::result::Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if t > 0.0 && t.is_finite() && t <= MOST_SECONDS => Ok(t),
        Ok(t) if t > MOST_SECONDS => Err(format!(
            "'{s}' seconds is too large: a timeout is at most {MOST_SECONDS:.0} seconds"
        )),
        _ => Err(format!("'{s}' is not a number of seconds above 0")),
    }
}

/// `--offset`: bytes (`1B`) or elements (`1`), bounded.
fn parse_offset(s: &str) -> std::result::Result<Offset, String> {
    s.parse().map_err(|e: fprev::Error| e.to_string())
}

/// `check --trials`.
fn parse_trials(s: &str) -> Result<usize, fprev::Error> {
    bounds::TRIALS.parse(s)
}

/// `--confirm`: 0 does not confirm.
fn parse_confirm(s: &str) -> Result<usize, fprev::Error> {
    bounds::CONFIRM.parse(s)
}

/// Calls of each input `--runs` asks: 0 (none), or 2 and more.
fn parse_runs(s: &str) -> Result<usize, fprev::Error> {
    bounds::RUNS.parse(s)
}

/// A GEMV/GEMM shape M,N,K: three positive whole numbers.
fn parse_shape(s: &str) -> std::result::Result<[usize; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    let dims: Vec<usize> = parts.iter().filter_map(|p| p.trim().parse().ok()).collect();
    match dims.as_slice() {
        [m, n, k] if parts.len() == 3 && dims.iter().all(|d| *d > 0) => Ok([*m, *n, *k]),
        _ => Err(format!(
            "'{s}' is not a shape: expected M,N,K, three positive whole numbers"
        )),
    }
}

#[derive(Args, Debug)]
pub struct ProbesArgs {
    /// A family's prefix (`mma`): list every spec of it, one a line
    pub family: Option<String>,
}
