//! The `fprev` command line: a thin layer over the library.

mod guard;
mod mpi_job;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};

use fprev::check;
use fprev::document::TreeDocument;
use fprev::error::{Error, Result};
use fprev::format::Format;
use fprev::probe::{self, ProbeOptions};
use fprev::render;
use fprev::reveal::{self, Algorithm, Options, Pivot};
use fprev::sweep::{self, Sizes};

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
comparing with the black box bit for bit (--confirm K trials): masked inputs
only see the order, so a black box that does not add in plain rounded
additions (a compensated sum, a mixed-precision kernel) is revealed an order
it does not follow in its bits. Such a tree is still printed, marked as not
confirmed, and the first input that differs is saved to a file.

Exit status: 0 ok, 1 trees differ or a check failed, 2 usage or bad input,
3 the black box broke an assumption, 4 the black box is order-independent
(the same bits in every order: reported, no tree), 5 the order was revealed
but a replay of it does not reproduce the black box's bits.";

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
  fprev probes                                   what can be revealed here";

#[derive(Parser, Debug)]
#[command(
    name = "fprev",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = EXAMPLES,
    arg_required_else_help = true
)]
struct Cli {
    /// Log what the engine does on stderr (-v: subproblems, -vv: more).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
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
    /// List the probe specs this build knows, and whether each is usable here.
    Probes,
}

#[derive(Args, Debug)]
struct BlackBoxArgs {
    /// Number of summands [default: the tree's size for replay:, else 32].
    #[arg(short, long, allow_hyphen_values = true, value_parser = parse_count)]
    n: Option<usize>,
    #[command(flatten)]
    format: FormatArgs,
    /// GEMV/GEMM shape M,N,K: A is M x K, B is K x N; K (= -n) is revealed,
    /// and each of the M rows answers one query per call [default: N,N,N].
    #[arg(long, value_name = "M,N,K", value_parser = parse_shape)]
    shape: Option<[usize; 3]>,
    /// Worker threads of a black box that takes a count (reduce:…, blas:…)
    /// [default: the black box's own].
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
    #[command(flatten)]
    mpi: MpiArgs,
}

#[derive(Args, Debug, Clone)]
struct MpiArgs {
    /// MPI ranks to run an mpi: black box on: fprev starts `mpirun -np P`
    /// itself (under your own mpirun, the job's size).
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u16).range(1..))]
    ranks: Option<u16>,
    /// Seconds an MPI job started by --ranks may run before it is stopped,
    /// every process of it.
    #[arg(long, value_name = "SECONDS", default_value_t = 600,
          value_parser = clap::value_parser!(u64).range(1..))]
    mpi_timeout: u64,
}

#[derive(Args, Debug)]
struct GuardArgs {
    /// Seconds one call of the black box may run; a call that runs longer
    /// (a hang) stops fprev with exit status 3 [default: no limit].
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    timeout: Option<f64>,
}

impl GuardArgs {
    /// Starts the watchdog when a timeout is given.
    fn start(&self) {
        if let Some(limit) = self.timeout {
            guard::set_timeout(std::time::Duration::from_secs_f64(limit));
        }
    }
}

/// Opens `spec` with its calls guarded (crash line, --timeout).
fn open_guarded(spec: &str, opts: &ProbeOptions) -> Result<Box<dyn probe::Probe>> {
    let inner = fprev::open(spec, opts)?;
    Ok(Box::new(guard::Guarded::new(inner, spec)))
}

/// A count of summands: a whole number of at least 1.
fn parse_count(s: &str) -> std::result::Result<usize, String> {
    match s.trim().parse::<i128>() {
        Ok(n) if n >= 1 => usize::try_from(n).map_err(|_| format!("{s} is too large")),
        Ok(_) => Err(format!("{s} summands: give a whole number of at least 1")),
        Err(_) => Err(format!("'{s}' is not a whole number of summands")),
    }
}

/// A positive number of seconds.
fn parse_seconds(s: &str) -> std::result::Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if t > 0.0 && t.is_finite() && t < 1e9 => Ok(t),
        _ => Err(format!("'{s}' is not a number of seconds above 0")),
    }
}

#[derive(Args, Debug)]
struct FormatArgs {
    /// Input format: f64, f32, f16, bf16, e4m3, e5m2 [default: f32, or a tree file's dtype].
    #[arg(long, value_name = "FORMAT")]
    dtype: Option<Format>,
    /// Accumulator format: every partial sum of native: and replay: black
    /// boxes is rounded to it; for library black boxes, the narrowest format
    /// they are known to round partial sums to [default: the input format].
    #[arg(long, value_name = "FORMAT")]
    acc: Option<Format>,
}

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

impl BlackBoxArgs {
    fn options(&self, dtype: Option<Format>) -> ProbeOptions {
        ProbeOptions {
            n: self.n,
            shape: self.shape,
            threads: self.threads.map(usize::from),
            ranks: self.mpi.ranks.map(usize::from),
            ..self.format.options(dtype)
        }
    }
}

impl FormatArgs {
    fn options(&self, dtype: Option<Format>) -> ProbeOptions {
        ProbeOptions {
            format: self.dtype.or(dtype).unwrap_or_default(),
            accumulator: self.acc,
            ..Default::default()
        }
    }
}

impl Command {
    /// The MPI options of a command that opens a black box.
    fn mpi(&self) -> Option<&MpiArgs> {
        match self {
            Command::Reveal(a) => Some(&a.black_box.mpi),
            Command::Check(a) => Some(&a.black_box.mpi),
            Command::Sweep(a) => Some(&a.mpi),
            _ => None,
        }
    }
}

#[derive(Args, Debug)]
struct RevealArgs {
    /// The black box, e.g. native:pairwise, replay:tree.json (see `fprev probes`).
    #[arg(default_value = DEFAULT_SPEC)]
    spec: String,
    #[command(flatten)]
    black_box: BlackBoxArgs,
    #[command(flatten)]
    engine: EngineArgs,
    #[command(flatten)]
    confirm: ConfirmArgs,
    #[command(flatten)]
    guard: GuardArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct ConfirmArgs {
    /// Random inputs to replay the revealed tree on, compared with the black
    /// box bit for bit (0: do not confirm).
    #[arg(long, value_name = "K", default_value_t = check::CONFIRM_TRIALS)]
    confirm: usize,
    #[command(flatten)]
    mismatch: MismatchArgs,
}

#[derive(Args, Debug)]
struct MismatchArgs {
    /// Where the first input whose bits differ is saved (JSON).
    #[arg(long, value_name = "FILE", default_value = "fprev-mismatch.json")]
    mismatch_out: PathBuf,
}

#[derive(Args, Debug)]
struct EngineArgs {
    /// Revelation algorithm: fprev (any tree), basic (all pairs, binary), naive (n <= 8).
    #[arg(long, default_value = "fprev", value_name = "ALGO")]
    algo: Algorithm,
    /// FPRev pivot rule: ends (smallest leaf, largest after a pivot that hung at the top,
    /// random after both; fewest queries and levels), random (seeded), or min (the paper's).
    #[arg(long, value_enum, default_value = "ends")]
    pivot: PivotRule,
    /// Seed of the random pivot (--pivot random).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Most inputs per call of a batched black box (the rows of a GEMV/GEMM).
    #[arg(long, value_name = "ROWS", value_parser = clap::value_parser!(u64).range(1..))]
    batch: Option<u64>,
    /// The row of a batched black box whose order is revealed (a GEMV/GEMM
    /// row, an element of an MPI vector), with the rows that sum alike.
    #[arg(long, value_name = "K", default_value_t = 0)]
    row: usize,
    /// Ask one query per input, as the paper does, instead of packing queries of
    /// independent subproblems into fields of one input.
    #[arg(long)]
    no_pack: bool,
    /// Build every group, instead of guessing that a group repeats the shape
    /// of a subtree already built (the same summands shifted) and checking
    /// the guess with one query per node.
    #[arg(long)]
    no_guess: bool,
}

impl EngineArgs {
    fn options(&self) -> Options {
        Options {
            algorithm: self.algo,
            pivot: match self.pivot {
                PivotRule::Random => Pivot::Random { seed: self.seed },
                PivotRule::Min => Pivot::Min,
                PivotRule::Ends => Pivot::Ends,
            },
            progress: true,
            batch: self.batch.map(|b| usize::try_from(b).unwrap_or(usize::MAX)),
            pack: !self.no_pack,
            guess: !self.no_guess,
            row: self.row,
        }
    }
}

#[derive(Args, Debug)]
struct SweepArgs {
    /// The black box, e.g. numpy:sum, reduce:binary-tree (see `fprev probes`).
    spec: String,
    /// Sizes to reveal: A..B (every size), A..B:S (every S-th), or a list: 1..64,128,256.
    #[arg(short = 'n', long = "n", value_name = "SIZES")]
    sizes: Sizes,
    /// Thread counts to reveal each size on, e.g. 1,2,4 (reduce:…, blas:…)
    /// [default: the black box's own].
    #[arg(long, value_name = "T,T,…", value_delimiter = ',', value_parser = clap::value_parser!(u16).range(1..))]
    threads: Vec<u16>,
    #[command(flatten)]
    number: FormatArgs,
    #[command(flatten)]
    mpi: MpiArgs,
    #[command(flatten)]
    engine: EngineArgs,
    /// Random inputs to replay each revealed tree on, compared with the
    /// black box bit for bit (0: do not confirm); a size whose tree is not
    /// confirmed gets no order name.
    #[arg(long, value_name = "K", default_value_t = check::CONFIRM_TRIALS)]
    confirm: usize,
    #[command(flatten)]
    guard: GuardArgs,
    /// Output format [default: from the -o extension (.json), else a table].
    #[arg(long, value_enum)]
    format: Option<SweepFormat>,
    /// Write to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum SweepFormat {
    Table,
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum PivotRule {
    Random,
    Min,
    Ends,
}

#[derive(Args, Debug)]
struct OutputArgs {
    /// Output format [default: from the -o extension (.json, .dot, .svg), else text].
    #[arg(long, value_enum)]
    format: Option<OutputFormat>,
    /// Write to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum OutputFormat {
    Text,
    Json,
    Dot,
    Svg,
}

#[derive(Args, Debug)]
struct RenderArgs {
    /// A tree file (JSON, or the text form).
    tree: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct DiffArgs {
    /// First tree file.
    a: PathBuf,
    /// Second tree file.
    b: PathBuf,
}

#[derive(Args, Debug)]
struct CheckArgs {
    /// The tree file to confirm.
    tree: PathBuf,
    /// The black box to compare it with.
    spec: String,
    #[command(flatten)]
    black_box: BlackBoxArgs,
    /// Random inputs to try.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    trials: u64,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// The row of a batched black box to compare with (see reveal --row).
    #[arg(long, value_name = "K", default_value_t = 0)]
    row: usize,
    #[command(flatten)]
    mismatch: MismatchArgs,
    #[command(flatten)]
    guard: GuardArgs,
}

/// Parses the command line, runs it and returns the process exit status.
fn command_line() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return e.exit_code();
        }
        Err(e) => {
            // clap's whole message: what was wrong, the possible values or
            // "did you mean", and the usage line.
            let _ = e.print();
            return e.exit_code();
        }
    };
    init_logging(cli.verbose);
    match run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fprev: error: {e}");
            e.exit_code()
        }
    }
}

/// Runs the command line, inside an MPI job too: there only rank 0 runs it
/// (the other ranks serve its `mpi:` black boxes and exit in
/// [`fprev::mpi::join`]).
fn run_main() -> i32 {
    guard::install();
    #[cfg(feature = "mpi")]
    let session = match fprev::mpi::join() {
        Ok(session) => session,
        Err(e) => {
            eprintln!("fprev: error: {e}");
            return e.exit_code();
        }
    };
    let code = command_line();
    #[cfg(feature = "mpi")]
    if let Some(session) = session {
        session.finish(code);
    }
    code
}

/// Logs on stderr at `-v` (debug) or `-vv` (trace), or as `RUST_LOG` says
/// (`RUST_LOG=fprev=trace`); colours only on a terminal.
fn init_logging(verbose: u8) {
    use std::io::IsTerminal;
    let from_env = std::env::var("RUST_LOG").ok().filter(|v| !v.is_empty());
    let filter = match (from_env, verbose) {
        (Some(directives), _) => directives,
        (None, 0) => return,
        (None, 1) => "fprev=debug".into(),
        (None, _) => "fprev=trace".into(),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

fn run(command: Command) -> Result<i32> {
    if let Some(mpi) = command.mpi()
        && let Some(ranks) = mpi.ranks
        && let Some(code) = mpi_job::run(usize::from(ranks), mpi.mpi_timeout)?
    {
        return Ok(code);
    }
    match command {
        Command::Reveal(a) => reveal_cmd(a),
        Command::Render(a) => {
            let doc = TreeDocument::read(&a.tree)?;
            emit(&doc, &a.output)?;
            Ok(0)
        }
        Command::Diff(a) => diff_cmd(a),
        Command::Check(a) => check_cmd(a),
        Command::Sweep(a) => sweep_cmd(a),
        Command::Probes => {
            for family in fprev::spec::FAMILIES {
                let status = match family.available() {
                    Ok(()) => "available".to_string(),
                    Err(why) => format!("unavailable: {why}"),
                };
                println!("{:<32} {:<50} {status}", family.pattern, family.about);
            }
            Ok(0)
        }
    }
}

fn reveal_cmd(a: RevealArgs) -> Result<i32> {
    // Validate the output before spending time on the reveal.
    let format = a.output.resolve()?;
    check_writable(a.output.path())?;
    let opts = a.black_box.options(None);
    a.guard.start();
    let mut black_box = open_guarded(&a.spec, &opts)?;
    if let Some(about) = black_box.about() {
        eprintln!("fprev: note: {}: {about}", a.spec);
    }
    let options = a.engine.options();
    let r = match reveal::reveal(&mut black_box, &options) {
        Err(Error::OrderIndependent(why)) => {
            println!("order-independent: {}: {why}", a.spec);
            return Ok(4);
        }
        Err(Error::BlackBox(why)) => {
            return Err(Error::BlackBox(
                why + &format_hint(&a.spec, &a.black_box.format),
            ));
        }
        r => r?,
    };
    for note in &r.notes {
        eprintln!("fprev: note: {note}");
    }
    tracing::info!("revealed: {}", r.stats);
    let confirmation = (a.confirm.confirm > 0)
        .then(|| {
            let report =
                check::check_row(&r.tree, &mut black_box, a.confirm.confirm, 0, options.row)?;
            let mut confirmation = check::Confirmation::from(&report);
            if let Some(m) = &report.mismatch {
                let file = &a.confirm.mismatch.mismatch_out;
                save_mismatch(file, &a.spec, black_box.format(), options.row, m)?;
                confirmation.mismatch_file = Some(file.display().to_string());
                let format = black_box.format();
                let why = if format.round(m.black_box) != m.black_box {
                    format!(
                        "its result {:e} is not a {format} value: it returns a wider result than \
                         its inputs (Python's built-in sum of x.tolist() adds and returns \
                         Python floats, f64); give --dtype f64 to reveal it on f64 inputs",
                        m.black_box
                    )
                } else {
                    "it does not add as a tree of plain additions (a compensated sum? parts in \
                     other precisions?)"
                        .to_string()
                };
                eprintln!(
                    "fprev: warning: {}: the order is revealed, but a replay of it in plain \
                     rounded additions ({} or wider) differs from the black box on random input \
                     {} ({}): {why}; the input is saved to {}",
                    a.spec,
                    black_box.accumulator(),
                    m.trial + 1,
                    m.kind,
                    file.display()
                );
            }
            Ok::<_, Error>(confirmation)
        })
        .transpose()?;
    let code = match &confirmation {
        Some(c) if !c.confirmed() => 5,
        _ => 0,
    };
    let doc = TreeDocument {
        tree: r.tree,
        dtype: Some(black_box.format()),
        probe: Some(a.spec.clone()),
        stats: Some(r.stats),
        confirmation,
    };
    write_out(&render_doc(&doc, format)?, a.output.path())?;
    Ok(code)
}

/// What to try when a black box of arbitrary code answered nonsense: its
/// values may not be of the format it was given (a C function taking
/// `double` fed floats), or it may add in a wider format than its inputs
/// (Python's built-in `sum` of float32 values adds Python floats).
fn format_hint(spec: &str, given: &FormatArgs) -> String {
    let arbitrary = spec.starts_with("dylib:") || spec.starts_with("python:");
    if !arbitrary {
        return String::new();
    }
    let mut hints = Vec::new();
    if given.dtype.is_none() {
        hints.push(
            "if it takes double (float64) values, give --dtype f64 (the default is f32)"
                .to_string(),
        );
    }
    if given.acc.is_none() {
        hints.push(
            "if it adds in a wider format than its inputs (Python's built-in sum adds Python \
             floats, f64), declare it with --acc f64"
                .to_string(),
        );
    }
    if hints.is_empty() {
        String::new()
    } else {
        format!("; hint: {}", hints.join("; "))
    }
}

/// Saves the input on which a replay and the black box `spec` differ, with
/// both results, as JSON.
fn save_mismatch(
    path: &Path,
    spec: &str,
    format: Format,
    row: usize,
    m: &check::Mismatch,
) -> Result<()> {
    let json = serde_json::json!({
        "probe": spec,
        "dtype": format.name(),
        "n": m.input.len(),
        "row": row,
        "trial": m.trial,
        "kind": m.kind.to_string(),
        "replayed": m.replayed,
        "accumulator": m.accumulator.name(),
        "black_box": m.black_box,
        "input": m.input,
    });
    write_out(format!("{json}\n").as_bytes(), Some(path))
}

fn diff_cmd(a: DiffArgs) -> Result<i32> {
    let left = TreeDocument::read(&a.a)?.tree;
    let right = TreeDocument::read(&a.b)?.tree;
    let Some(d) = left.diff(&right) else {
        println!(
            "equal: the trees of {} summands agree modulo child order",
            left.n()
        );
        return Ok(0);
    };
    if left.n() != right.n() {
        println!(
            "different: {} has {} summands, {} has {}",
            a.a.display(),
            left.n(),
            a.b.display(),
            right.n()
        );
        return Ok(1);
    }
    println!("different: the trees part at");
    for (path, tree, node) in [(&a.a, &left, d.left), (&a.b, &right, d.right)] {
        match node {
            Some(node) => println!("  {}: {}", path.display(), tree.subtree_text(node)),
            None => println!("  {}: (every node is in the other tree)", path.display()),
        }
    }
    Ok(1)
}

fn check_cmd(a: CheckArgs) -> Result<i32> {
    let doc = TreeDocument::read(&a.tree)?;
    let mut opts = a.black_box.options(doc.dtype);
    opts.n = opts.n.or(Some(doc.tree.n()));
    a.guard.start();
    let mut black_box = open_guarded(&a.spec, &opts)?;
    let trials = usize::try_from(a.trials).unwrap_or(usize::MAX);
    let report = check::check_row(&doc.tree, &mut black_box, trials, a.seed, a.row)?;
    println!(
        "{}",
        report.summary(
            &a.tree.display().to_string(),
            &a.spec,
            black_box.format(),
            black_box.accumulator()
        )
    );
    match report.mismatch {
        None => Ok(0),
        Some(m) => {
            let file = &a.mismatch.mismatch_out;
            save_mismatch(file, &a.spec, black_box.format(), a.row, &m)?;
            println!("the input is saved to {}", file.display());
            Ok(1)
        }
    }
}

fn sweep_cmd(a: SweepArgs) -> Result<i32> {
    let output = stdout_or(a.output.as_deref());
    let json = match a.format {
        Some(f) => f == SweepFormat::Json,
        None => {
            let named = format_of(output, &[("json", true), ("txt", false)], "sweep")?;
            named.unwrap_or(false)
        }
    };
    check_writable(output)?;
    let threads: Vec<Option<usize>> = if a.threads.is_empty() {
        vec![None]
    } else {
        a.threads.iter().map(|t| Some(usize::from(*t))).collect()
    };
    a.guard.start();
    let s = sweep::sweep_with(
        &a.spec,
        &a.number.options(None),
        &a.sizes,
        &threads,
        &a.engine.options(),
        a.confirm,
        &mut open_guarded,
    )?;
    let text = if json {
        s.to_json() + "\n"
    } else {
        s.to_string()
    };
    write_out(text.as_bytes(), output)?;
    Ok(if s.any_broken() {
        3
    } else if s.any_unconfirmed() {
        5
    } else {
        0
    })
}

/// `None` (stdout) for no path or `-`.
fn stdout_or(path: Option<&Path>) -> Option<&Path> {
    path.filter(|p| p.as_os_str() != "-")
}

/// The format an output file's extension names, whatever its case; `None`
/// for stdout or a file without an extension. An extension `formats` does
/// not name is an error: writing text into `t.png` would only mislead.
fn format_of<F: Copy>(
    path: Option<&Path>,
    formats: &[(&str, F)],
    command: &str,
) -> Result<Option<F>> {
    let Some(ext) = path.and_then(|p| p.extension()) else {
        return Ok(None);
    };
    let ext = ext.to_string_lossy().to_lowercase();
    match formats.iter().find(|(e, _)| *e == ext) {
        Some((_, f)) => Ok(Some(*f)),
        None => {
            let known: Vec<String> = formats.iter().map(|(e, _)| format!(".{e}")).collect();
            Err(Error::Input(format!(
                "{command} cannot write a .{ext} file: name one ending in {}, or give --format",
                known.join(", ")
            )))
        }
    }
}

impl OutputArgs {
    /// The file to write, `None` for stdout.
    fn path(&self) -> Option<&Path> {
        stdout_or(self.output.as_deref())
    }

    fn resolve(&self) -> Result<OutputFormat> {
        if let Some(f) = self.format {
            return Ok(f);
        }
        let formats = [
            ("json", OutputFormat::Json),
            ("dot", OutputFormat::Dot),
            ("gv", OutputFormat::Dot),
            ("svg", OutputFormat::Svg),
            ("txt", OutputFormat::Text),
        ];
        Ok(format_of(self.path(), &formats, "fprev")?.unwrap_or(OutputFormat::Text))
    }
}

fn emit(doc: &TreeDocument, out: &OutputArgs) -> Result<()> {
    let format = out.resolve()?;
    write_out(&render_doc(doc, format)?, out.path())
}

fn render_doc(doc: &TreeDocument, format: OutputFormat) -> Result<Vec<u8>> {
    Ok(match format {
        OutputFormat::Json => (doc.to_json() + "\n").into_bytes(),
        OutputFormat::Dot => (render::dot(&doc.tree) + "\n").into_bytes(),
        OutputFormat::Svg => render::svg(&doc.tree)?,
        OutputFormat::Text => {
            let mut s = render::text(&doc.tree);
            if let (Some(p), Some(d)) = (&doc.probe, doc.dtype) {
                s += &format!("# {p}, n = {}, {d}", doc.tree.n());
                if let Some(st) = doc.stats {
                    s += &format!(
                        ": {st}, {:.3} s ({:.3} s in the black box)",
                        st.seconds, st.probe_seconds
                    );
                }
                s.push('\n');
                s += &match &doc.confirmation {
                    None => "# not confirmed by replay (--confirm 0)\n".to_string(),
                    Some(c) if c.confirmed() => format!(
                        "# confirmed: replayed (adding in {}) on {} random inputs, the same bits\n",
                        c.accumulator.as_deref().unwrap_or("?"),
                        c.trials
                    ),
                    Some(c) => format!(
                        "# NOT CONFIRMED: the order is revealed, but its replay gave other bits \
                         than the black box on random input {} (the first {} matched); that \
                         input is in {}\n",
                        c.trials,
                        c.passed,
                        c.mismatch_file.as_deref().unwrap_or("no file")
                    ),
                };
            }
            s.into_bytes()
        }
    })
}

/// Checks up front that `path` can be written, so a long reveal does not end
/// in an unwritable output.
fn check_writable(path: Option<&Path>) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().readonly()) {
        return Err(Error::Input(format!(
            "cannot write {}: the file is read-only (make it writable, or name another file)",
            path.display()
        )));
    }
    let dir = parent_dir(path);
    if !dir.is_dir() {
        return Err(Error::Input(format!(
            "cannot write {}: the directory {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    Ok(())
}

fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Writes to `path` through a temporary file and a rename, so a failure never
/// leaves a half-written file; `None` writes to stdout. A symlink is written
/// through to its target, and what is not a regular file (`/dev/null`, a
/// pipe) is written directly.
fn write_out(bytes: &[u8], path: Option<&Path>) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;

    let Some(path) = path else {
        let mut stdout = std::io::stdout().lock();
        // A closed pipe (`| head`) is not an error worth reporting.
        let _ = stdout.write_all(bytes).and_then(|_| stdout.flush());
        return Ok(());
    };
    check_writable(Some(path))?;
    // The kind only: tempfile's errors name its temporary path.
    let fail =
        |e: std::io::Error| Error::Input(format!("cannot write {}: {}", path.display(), e.kind()));
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if target.exists() && !target.is_file() {
        return std::fs::write(&target, bytes).map_err(fail);
    }
    // Mode 0666 less the umask, as for any new file.
    let mut tmp = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(parent_dir(&target))
        .map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    tmp.persist(&target).map_err(|e| fail(e.error))?;
    Ok(())
}

fn main() {
    std::process::exit(run_main());
}
