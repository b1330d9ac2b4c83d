//! Black-box calls per summand, shape by shape: the currency of a reveal.
//!
//! For each shape of the corpus (the built-in orders, a random binary and
//! a random multiway tree replayed, and `numpy:sum`), f32 and f64 inputs,
//! and `n` from 1,024 to 65,536, this bench reveals the tree with
//!
//! - fprev as it ships (`--algo insert`: places read from answers of many
//!   bits, guessed places checked);
//! - FPRev's engine as it shipped before (`--algo fprev`: pivot `ends`,
//!   queries packed into fields, groups' shapes guessed), side by side with
//!   it in every run;
//! - that engine with the `random` and the `min` pivot;
//! - the baseline: the paper's FPRev, min pivot, nothing guessed and one
//!   query per call (`--pivot min --no-guess --no-pack`). Its queries are
//!   those of the same packed (the min pivot is deterministic), so its
//!   calls are known exactly; it is also run, for its wall time, where
//!   that takes under a minute;
//!
//! and reports calls, queries, calls/n and wall times (median of 3 up to
//! `n = 8,192`, one run above), checking every tree against the shape's
//! own definition (the reference orders, the generated random trees) or,
//! for NumPy, by replay against NumPy itself. Where the tree has fused
//! nodes, it also reports the fewest inputs they allow any reveal
//! ([`fused_pair_bound`]).
//!
//! ```text
//! cargo bench --bench calls            # everything (about an hour here)
//! cargo bench --bench calls -- quick   # n = 1,024 and 4,096
//! cargo bench --bench calls -- targets # the targets' sizes only (20 min)
//! cargo bench --bench calls -- write   # also write outputs/calls/
//! cargo bench --bench calls -- shipped f64  # fprev as it ships only, f64 only
//! ```
//!
//! `shipped` reveals each row once with fprev as it ships and with FPRev's
//! engine, and skips the other pivots and the baseline (a check of the
//! calls in minutes, not an hour);
//! `f32` or `f64` keeps one format. Neither writes `outputs/calls/`.
//!
//! With `write`, `outputs/calls/` gets `report.md` (the tables and the
//! targets), `calls.json` (every row) and `calls.svg` (calls/n against n),
//! and `targets.md` and `targets.json`, the rows of the targets' sizes: f32
//! at 16,384 and f64 at 65,536 (with `targets`, only those).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use fprev::check::check;
use fprev::document::Stats;
use fprev::probe::{Probe, ProbeOptions, ReplayProbe};
use fprev::reduce::Replay;
use fprev::reveal::{Algorithm, Pivot, fused_pair_bound};
use fprev::{Format, Options, Order, SummationTree, reveal};
use serde::Serialize;

const SIZES: [usize; 7] = [1_024, 2_048, 4_096, 8_192, 16_384, 32_768, 65_536];
const QUICK_SIZES: [usize; 2] = [1_024, 4_096];

/// Above this, one run instead of three.
const REPEAT_BELOW: usize = 8_192;

/// The baseline is run for its wall time only where that is expected to
/// take less than this.
const BASELINE_SECONDS: f64 = 60.0;

/// Seed of the random trees.
const SEED: u64 = 1;

/// A tree shape of the corpus.
#[derive(Clone, Copy)]
enum Shape {
    Native(&'static str),
    Random { max_width: usize },
    Numpy,
}

impl Shape {
    const ALL: [Shape; 10] = [
        Shape::Native("sequential"),
        Shape::Native("reverse"),
        Shape::Native("pairwise"),
        Shape::Native("strided:8"),
        Shape::Native("blocked:64"),
        Shape::Native("binary-tree"),
        Shape::Native("fused:17"),
        Shape::Random { max_width: 2 },
        Shape::Random { max_width: 6 },
        Shape::Numpy,
    ];

    fn name(self) -> String {
        match self {
            Shape::Native(o) => o.to_string(),
            Shape::Random { max_width: 2 } => "random binary".into(),
            Shape::Random { .. } => "random multiway".into(),
            Shape::Numpy => "numpy:sum".into(),
        }
    }

    fn black_box(self, n: usize, format: Format) -> fprev::Result<Box<dyn Probe>> {
        let opts = ProbeOptions {
            n: Some(n),
            format,
            ..Default::default()
        };
        match self {
            Shape::Native(o) => fprev::open(&format!("native:{o}"), &opts),
            Shape::Random { max_width } => {
                let tree = SummationTree::random(n, max_width, SEED);
                Ok(Box::new(ReplayProbe::new(
                    Replay::new(&tree, format),
                    format,
                )))
            }
            Shape::Numpy => fprev::open("numpy:sum", &opts),
        }
    }

    /// The tree the black box sums in, where it is known a priori.
    fn expected(self, n: usize) -> Option<SummationTree> {
        match self {
            Shape::Native(o) => Some(o.parse::<Order>().ok()?.tree(n)),
            Shape::Random { max_width } => Some(SummationTree::random(n, max_width, SEED)),
            Shape::Numpy => None,
        }
    }
}

/// One shape, format and size.
#[derive(Clone, Debug, Serialize)]
struct Row {
    shape: String,
    format: String,
    n: usize,
    /// fprev as it ships.
    queries: u64,
    calls: u64,
    calls_per_n: f64,
    seconds: f64,
    /// The fewest inputs the tree's fused nodes allow, where it has any.
    fewest_inputs: Option<u64>,
    /// FPRev's engine (`--algo fprev`), as it shipped before insertion.
    calls_fprev: Option<u64>,
    seconds_fprev: Option<f64>,
    /// Calls with the other pivots (packed).
    calls_random: Option<u64>,
    calls_min: Option<u64>,
    /// The paper's FPRev: its calls (its queries), and its wall time where run.
    baseline_calls: Option<u64>,
    baseline_seconds: Option<f64>,
    /// Every revealed tree equals the known one (or, for NumPy, each other
    /// and replays bit for bit against NumPy).
    tree_ok: bool,
    note: String,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "quick");
    let targets = args.iter().any(|a| a == "targets");
    let shipped = args.iter().any(|a| a == "shipped");
    let only: Option<Format> = args.iter().find_map(|a| a.parse().ok());
    let write = args.iter().any(|a| a == "write") && !shipped && only.is_none();
    let mut rows = Vec::new();
    for format in [Format::F32, Format::F64] {
        if only.is_some_and(|f| f != format) {
            continue;
        }
        let sizes: &[usize] = match (targets, quick, format) {
            (true, _, Format::F32) => &[16_384],
            (true, _, _) => &[65_536],
            (_, true, _) => &QUICK_SIZES,
            _ => &SIZES,
        };
        for shape in Shape::ALL {
            for &n in sizes {
                eprint!("{:<16} {format} n = {n:>6} ... ", shape.name());
                let started = Instant::now();
                let row = measure(shape, format, n, shipped);
                eprintln!(
                    "{} calls ({} with --algo fprev), {} queries, {:.2} calls/n, {:.3} s ({:.0} s \
                     for the row){}",
                    row.calls,
                    row.calls_fprev.map_or("-".into(), |c| c.to_string()),
                    row.queries,
                    row.calls_per_n,
                    row.seconds,
                    started.elapsed().as_secs_f64(),
                    if row.tree_ok { "" } else { "  WRONG TREE" }
                );
                rows.push(row);
            }
        }
    }
    let report = markdown(&rows);
    println!("{report}");
    if write {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../outputs/calls");
        std::fs::create_dir_all(&dir).expect("outputs/calls can be made");
        // The targets' rows: all of them in a targets run, else picked out.
        let at_targets: Vec<Row> = rows
            .iter()
            .filter(|r| matches!((r.format.as_str(), r.n), ("f32", 16_384) | ("f64", 65_536)))
            .cloned()
            .collect();
        if !at_targets.is_empty() {
            save(&dir, "targets.md", "targets.json", &at_targets);
        }
        if !targets {
            save(&dir, "report.md", "calls.json", &rows);
            plot(&rows, &dir.join("calls.svg"));
        }
        println!("written to {}", dir.display());
    }
    if rows.iter().any(|r| !r.tree_ok) {
        eprintln!("error: a revealed tree is wrong");
        std::process::exit(1);
    }
}

/// Writes `rows` as Markdown tables and as JSON.
fn save(dir: &Path, markdown_name: &str, json_name: &str, rows: &[Row]) {
    std::fs::write(dir.join(markdown_name), markdown(rows)).expect("report written");
    let json = serde_json::to_string_pretty(rows).expect("rows serialize");
    std::fs::write(dir.join(json_name), json + "\n").expect("json written");
}

/// Reveals one shape, format and size with every engine.
fn measure(shape: Shape, format: Format, n: usize, shipped: bool) -> Row {
    let expected = shape.expected(n);
    let mut row = Row {
        shape: shape.name(),
        format: format.to_string(),
        n,
        queries: 0,
        calls: 0,
        calls_per_n: f64::NAN,
        seconds: f64::NAN,
        fewest_inputs: expected.as_ref().map(fused_pair_bound).filter(|&b| b > 0),
        calls_fprev: None,
        seconds_fprev: None,
        calls_random: None,
        calls_min: None,
        baseline_calls: None,
        baseline_seconds: None,
        tree_ok: true,
        note: String::new(),
    };
    let mut trees: Vec<SummationTree> = Vec::new();
    let mut once = |options: &Options, row: &mut Row| -> Option<Stats> {
        match reveal_once(shape, format, n, options, trees.is_empty()) {
            Ok((tree, stats, checked)) => {
                row.tree_ok &= checked;
                trees.push(tree);
                Some(stats)
            }
            Err(e) => {
                row.note = e;
                row.tree_ok = false;
                None
            }
        }
    };
    // fprev as it ships.
    let repeats = if n <= REPEAT_BELOW && !shipped { 3 } else { 1 };
    let mut seconds = Vec::new();
    for _ in 0..repeats {
        let Some(stats) = once(&Options::default(), &mut row) else {
            return row;
        };
        seconds.push(stats.seconds);
        row.queries = stats.queries;
        row.calls = stats.calls;
    }
    seconds.sort_by(f64::total_cmp);
    row.seconds = seconds[seconds.len() / 2];
    row.calls_per_n = row.calls as f64 / n as f64;
    let fprev = Options {
        algorithm: Algorithm::Fprev,
        ..Options::default()
    };
    if let Some(stats) = once(&fprev, &mut row) {
        row.calls_fprev = Some(stats.calls);
        row.seconds_fprev = Some(stats.seconds);
    }
    let per_call = row.seconds_fprev.unwrap_or(row.seconds)
        / row.calls_fprev.unwrap_or(row.calls).max(1) as f64;
    if !shipped {
        other_engines(shape, n, per_call, &mut row, &mut once);
    }
    row.tree_ok &= match (&expected, trees.first()) {
        (Some(want), _) => trees.iter().all(|t| t == want),
        (None, Some(first)) => trees.iter().all(|t| t == first),
        (None, None) => false,
    };
    row
}

/// FPRev's engine with the other pivots, and the paper's FPRev with and
/// without packing.
fn other_engines(
    shape: Shape,
    n: usize,
    per_call: f64,
    row: &mut Row,
    once: &mut impl FnMut(&Options, &mut Row) -> Option<Stats>,
) {
    // The other pivots.
    let packed = |pivot| Options {
        pivot,
        algorithm: Algorithm::Fprev,
        ..Options::default()
    };
    row.calls_random = once(&packed(Pivot::Random { seed: 0 }), row).map(|s| s.calls);
    // The paper's FPRev: min pivot, nothing guessed.
    let paper = Options {
        pivot: Pivot::Min,
        guess: false,
        algorithm: Algorithm::Fprev,
        ..Options::default()
    };
    // The min pivot asks n(n-1)/2 queries right to left.
    let paper_queries = if matches!(shape, Shape::Native("reverse")) {
        row.note = "min pivot: n(n-1)/2 queries, by its formula".into();
        Some((n * (n - 1) / 2) as u64)
    } else {
        row.calls_min = once(&packed(Pivot::Min), row).map(|s| s.calls);
        once(&paper, row).map(|s| s.queries)
    };
    // One query per call.
    row.baseline_calls = paper_queries;
    if let Some(q) = paper_queries
        && (q as f64) * per_call < BASELINE_SECONDS
    {
        let baseline = Options {
            pack: false,
            batch: Some(1),
            ..paper
        };
        if let Some(s) = once(&baseline, row) {
            debug_assert_eq!(s.calls, q);
            row.baseline_seconds = Some(s.seconds);
        }
    }
}

/// One reveal; NumPy's first tree is also replayed against NumPy.
fn reveal_once(
    shape: Shape,
    format: Format,
    n: usize,
    options: &Options,
    first: bool,
) -> Result<(SummationTree, Stats, bool), String> {
    let mut bb = shape
        .black_box(n, format)
        .map_err(|e| format!("not run: {e}"))?;
    let r = reveal(&mut bb, options)
        .map_err(|e| e.to_string())?
        .revealed()
        .ok_or("order-independent")?;
    let checked = !(first && matches!(shape, Shape::Numpy))
        || check(&r.tree, &mut bb, 20, 1).is_ok_and(|k| k.mismatch.is_none());
    Ok((r.tree, r.stats, checked))
}

/// The tables and the targets, as Markdown.
fn markdown(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Calls per summand (calls/n) of fprev as it ships (`--algo insert`: places read from \
         answers of many bits, guessed places checked), of FPRev's engine beside it \
         (`--algo fprev`: pivot `ends`, packed queries, guessed shapes; the default before \
         insertion), of that engine with the `random` and `min` pivots, and of the paper's \
         FPRev (min pivot, nothing guessed, one query per call) as baseline. Wall times: median of 3 up to n = 8,192, \
         one run above; the baseline's where it was run (under a minute). Fewest inputs: \
         what the tree's fused nodes force on any reveal with masked inputs, one input per \
         pair of a fused node's children along a path (`fused_pair_bound`). Every tree was \
         checked (see calls.json).\n"
    );
    for format in ["f32", "f64"] {
        let _ = writeln!(s, "## {format}\n");
        let _ = writeln!(
            s,
            "| shape | n | queries | calls | calls/n | fewest inputs/n | s | --algo fprev calls/n | \
             --algo fprev s | fprev calls / calls | random pivot calls/n | \
             min pivot calls/n | baseline calls/n | baseline s | baseline calls / calls | \
             baseline s / s |"
        );
        let _ = writeln!(
            s,
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        for r in rows.iter().filter(|r| r.format == format) {
            let per_n =
                |c: Option<u64>| c.map_or("-".into(), |c| format!("{:.2}", c as f64 / r.n as f64));
            let secs = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.3}"));
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {:.2} | {} | {:.3} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.shape,
                r.n,
                r.queries,
                r.calls,
                r.calls_per_n,
                per_n(r.fewest_inputs),
                r.seconds,
                per_n(r.calls_fprev),
                secs(r.seconds_fprev),
                r.calls_fprev.map_or("-".into(), |b| format!(
                    "{:.2}x",
                    b as f64 / r.calls.max(1) as f64
                )),
                per_n(r.calls_random),
                per_n(r.calls_min),
                per_n(r.baseline_calls),
                secs(r.baseline_seconds),
                r.baseline_calls.map_or("-".into(), |b| format!(
                    "{:.1}x",
                    b as f64 / r.calls.max(1) as f64
                )),
                r.baseline_seconds
                    .map_or("-".into(), |b| format!("{:.1}x", b / r.seconds)),
            );
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "## Targets\n");
    let target = |format: &str, n: usize, most: f64| {
        let over: Vec<String> = rows
            .iter()
            .filter(|r| r.format == format && r.n == n && r.calls_per_n > most)
            .map(|r| match r.fewest_inputs {
                Some(b) if b as f64 > most * r.n as f64 => format!(
                    "{} ({:.2}n; its fused nodes allow no fewer than {:.2}n inputs)",
                    r.shape,
                    r.calls_per_n,
                    b as f64 / r.n as f64
                ),
                _ => format!("{} ({:.2}n)", r.shape, r.calls_per_n),
            })
            .collect();
        match (
            rows.iter().any(|r| r.format == format && r.n == n),
            over.is_empty(),
        ) {
            (false, _) => "not measured".to_string(),
            (true, true) => "met by every shape".to_string(),
            (true, false) => format!("over: {}", over.join(", ")),
        }
    };
    let _ = writeln!(
        s,
        "- calls <= 2n at n = 65,536 in f64: {}",
        target("f64", 65_536, 2.0)
    );
    let _ = writeln!(
        s,
        "- calls <= 3n at n = 16,384 in f32: {}",
        target("f32", 16_384, 3.0)
    );
    let within = |format: &str, n: usize, shapes: &[&str], most: f64| {
        let rows: Vec<&Row> = rows
            .iter()
            .filter(|r| r.format == format && r.n == n && shapes.contains(&r.shape.as_str()))
            .collect();
        let over: Vec<String> = rows
            .iter()
            .filter(|r| r.calls_per_n > most)
            .map(|r| format!("{} ({:.3}n)", r.shape, r.calls_per_n))
            .collect();
        match (rows.is_empty(), over.is_empty()) {
            (true, _) => "not measured".to_string(),
            (false, true) => format!(
                "met: {}",
                rows.iter()
                    .map(|r| format!("{} {:.3}n", r.shape, r.calls_per_n))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (false, false) => format!("over: {}", over.join(", ")),
        }
    };
    let structured = [
        "pairwise",
        "strided:8",
        "blocked:64",
        "binary-tree",
        "numpy:sum",
    ];
    let _ = writeln!(
        s,
        "- structured orders and NumPy's f32 sum at n = 16,384 in <= n/4 calls: {}",
        within("f32", 16_384, &structured, 0.25)
    );
    let _ = writeln!(
        s,
        "- a random binary tree in <= 0.8n calls in f32 (16,384): {}; in <= 0.4n in f64 \
         (65,536): {}",
        within("f32", 16_384, &["random binary"], 0.8),
        within("f64", 65_536, &["random binary"], 0.4)
    );
    if let Some(r) = rows
        .iter()
        .find(|r| r.shape == "numpy:sum" && r.format == "f32" && r.n == 16_384)
    {
        let _ = writeln!(
            s,
            "- NumPy f32 sum at n = 16,384 in <= 0.1 s: {:.3} s ({} calls)",
            r.seconds, r.calls
        );
    }
    s
}

/// Ten colours apart from one another, one per shape.
const COLORS: [plotters::style::RGBColor; 10] = [
    plotters::style::RGBColor(31, 119, 180),
    plotters::style::RGBColor(255, 127, 14),
    plotters::style::RGBColor(44, 160, 44),
    plotters::style::RGBColor(214, 39, 40),
    plotters::style::RGBColor(148, 103, 189),
    plotters::style::RGBColor(140, 86, 75),
    plotters::style::RGBColor(227, 119, 194),
    plotters::style::RGBColor(127, 127, 127),
    plotters::style::RGBColor(188, 189, 34),
    plotters::style::RGBColor(23, 190, 207),
];

/// calls/n against n, one panel per format: fprev solid, baseline dashed.
fn plot(rows: &[Row], path: &Path) {
    use plotters::prelude::*;
    let root = SVGBackend::new(path, (1200, 520)).into_drawing_area();
    root.fill(&WHITE).expect("svg");
    let panels = root.split_evenly((1, 2));
    let shapes: Vec<String> = Shape::ALL.iter().map(|s| s.name()).collect();
    for (panel, (format, target)) in panels.iter().zip([("f32", 3.0), ("f64", 2.0)]) {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.format == format).collect();
        // log2 n on the axis, labelled as n.
        let x = |r: &Row| (r.n as f64).log2();
        let (lo, hi) = mine
            .iter()
            .fold((f64::MAX, 1f64), |(lo, hi), r| (lo.min(x(r)), hi.max(x(r))));
        let top = 10.0;
        let mut chart = ChartBuilder::on(panel)
            .caption(
                format!("{format}: black-box calls per summand"),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(45)
            .build_cartesian_2d(lo..hi, 0f64..top)
            .expect("chart");
        chart
            .configure_mesh()
            .x_desc("n (summands)")
            .y_desc("calls / n")
            .x_labels((hi - lo) as usize + 1)
            .x_label_formatter(&|x| format!("{}", 2f64.powf(*x).round() as u64))
            .draw()
            .expect("mesh");
        chart
            .draw_series(LineSeries::new(
                [(lo, target), (hi, target)],
                BLACK.mix(0.5).stroke_width(1),
            ))
            .expect("target")
            .label(format!("target: {target}n"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK.mix(0.5)));
        for (k, shape) in shapes.iter().enumerate() {
            let color = COLORS[k % COLORS.len()].to_rgba();
            let points: Vec<(f64, f64)> = mine
                .iter()
                .filter(|r| &r.shape == shape && r.calls > 0)
                .map(|r| (x(r), r.calls_per_n.min(top)))
                .collect();
            let baseline: Vec<(f64, f64)> = mine
                .iter()
                .filter(|r| &r.shape == shape)
                .filter_map(|r| Some((x(r), (r.baseline_calls? as f64 / r.n as f64).min(top))))
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
                .expect("line")
                .label(shape.as_str())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 18, y)], color.stroke_width(2))
                });
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .expect("points");
            chart
                .draw_series(DashedLineSeries::new(baseline, 4, 4, color.stroke_width(1)))
                .expect("baseline");
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .label_font(("sans-serif", 11))
            .draw()
            .expect("legend");
    }
    root.titled(
        "solid: fprev (pivot ends, packed queries); dashed: the paper's FPRev (min pivot, nothing guessed, one query per call), capped at 10",
        ("sans-serif", 13),
    )
    .expect("title");
    root.present().expect("svg written");
}
