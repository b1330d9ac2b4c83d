//! The command line as clap sees it: every subcommand, option group and
//! value parser, the help texts, and the translation of parsed options into
//! the library's options. Nothing here runs anything (see `commands`).
//!
//! This file holds the top level (`Cli`, `Command`) and the flag groups
//! several commands share; each command's own flags are in
//! `args/COMMAND.rs`, the value parsers in `args/parse.rs`.

mod answers;
mod cache;
mod check;
mod compare;
mod completions;
mod diff;
mod emit;
mod explain;
mod invariance;
mod man;
mod parse;
mod probes;
mod render;
mod reveal;
mod survey;
mod sweep;

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};

use fprev::format::Format;
use fprev::probe::{Offset, ProbeOptions};
use fprev::reveal::{Algorithm, Options, Pivot};
use fprev::workflow;

pub(crate) use answers::AnswersArgs;
pub(crate) use cache::{CacheAction, CacheArgs};
pub(crate) use check::CheckArgs;
pub(crate) use compare::CompareArgs;
pub(crate) use completions::CompletionsArgs;
pub(crate) use diff::DiffArgs;
pub(crate) use emit::{EMIT_EXAMPLES, EmitArgs};
pub(crate) use explain::ExplainArgs;
use invariance::INVARIANCE_EXAMPLES;
pub(crate) use invariance::{InvarianceArgs, StudyFormat};
pub(crate) use man::ManArgs;
use parse::{
    parse_batch, parse_column, parse_confirm, parse_count, parse_offset, parse_seconds,
    parse_shape, parse_threads,
};
pub(crate) use probes::ProbesArgs;
pub(crate) use render::RenderArgs;
pub(crate) use reveal::RevealArgs;
use survey::SURVEY_EXAMPLES;
pub(crate) use survey::SurveyArgs;
pub(crate) use sweep::{SweepArgs, SweepFormat};

/// The spec `fprev reveal` reveals when given none.
const DEFAULT_SPEC: &str = "native:strided:8";

/// `--version`'s text after `fprev `: the version and the optional
/// features built (`-V`: the version alone); what it finds at run time
/// follows (`commands::print_found`), asked only then.
const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\n", env!("FPREV_FEATURES"));

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

#[derive(Parser, Debug)]
#[command(
    name = "fprev",
    version,
    long_version = LONG_VERSION,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = EXAMPLES,
    arg_required_else_help = true,
    disable_version_flag = true
)]
pub(crate) struct Cli {
    /// Log what the engine does on stderr (-v: subproblems, -vv: more).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(crate) verbose: u8,
    /// Print the version (--version: also the features built, the BLAS
    /// libraries loadable here and the Python packages found).
    #[arg(short = 'V', long, action = clap::ArgAction::Version)]
    version: (),
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
    /// Print a shell's completion script for fprev's subcommands and flags.
    Completions(CompletionsArgs),
    /// Print fprev's manual page, or a subcommand's, in roff (`fprev man |
    /// man -l -`).
    Man(ManArgs),
    /// The bits of a black box's answers to seeded random inputs, as JSON:
    /// what `reveal --processes` asks each fresh process.
    #[command(hide = true)]
    Answers(AnswersArgs),
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
pub(crate) struct ConfirmArgs {
    /// Random inputs to replay the revealed tree on, compared with the black
    /// box bit for bit (0: do not confirm; at most 1,000,000).
    #[arg(long, value_name = "K", default_value_t = fprev::check::CONFIRM_TRIALS,
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
    /// Revelation algorithm: insert (places read from answers of many bits, guessed
    /// places checked; FPRev's engine where it does not apply), fprev (FPRev's
    /// BuildSubtree, packed queries: what insert falls back on), basic (all pairs,
    /// binary), naive (n <= 8).
    #[arg(long, default_value = "insert", value_name = "ALGO")]
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
