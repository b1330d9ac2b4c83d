//! How much does a reveal cost, and how much of that is the engine itself?
//!
//! For each built-in order (`native:sequential`, `native:reverse`,
//! `native:pairwise`, `native:strided:8`, `native:fused:17`), each size
//! `n` in 1,024, 4,096 and 16,384, f32 inputs, and three FPRev pivot rules
//! (`Pivot::Ends`, the default, `Pivot::Random { seed: 0 }`, and
//! `Pivot::Min`, the paper's), this bench reveals the black box's summation tree and reports:
//!
//! - black-box calls and queries (`l_{i,j}` values), and queries per summand;
//! - the median wall time of a reveal over 5 repeats (3 at `n = 16,384`);
//! - the engine's overhead as a share of the time spent inside the black box,
//!   `(seconds - probe_seconds) / probe_seconds`, median over the repeats;
//! - whether the queries stay within `n(n-1)/2`, and whether the revealed tree
//!   equals the order's own definition, `Order::tree(n)`.
//!
//! A wrong tree (or a failed reveal) makes the bench exit non-zero, after the
//! table is printed. `Pivot::Min` on `native:reverse` needs `n(n-1)/2`
//! queries of `n`-element sums, so it is skipped from `n = 4,096` on (8.4 million queries, about 3 minutes a repeat).
//!
//! The table goes to stdout as Markdown, the same rows to
//! `target/bench-reveal.json`, and a PASS/FAIL line per target follows.
//!
//! Run it with
//!
//! ```text
//! cargo bench --bench reveal            # everything (minutes)
//! cargo bench --bench reveal -- quick   # n = 1,024 only, a smoke run
//! ```

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use fprev::document::Stats;
use fprev::probe::ProbeOptions;
use fprev::reveal::{Algorithm, Pivot};
use fprev::{Format, Options, Order, SummationTree, reveal};
use serde::Serialize;

/// The black boxes measured.
const SPECS: [&str; 5] = [
    "native:sequential",
    "native:reverse",
    "native:pairwise",
    "native:strided:8",
    "native:fused:17",
];

/// The sizes measured in a full run.
const SIZES: [usize; 3] = [1_024, 4_096, 16_384];

/// The sizes measured with the `quick` argument.
const QUICK_SIZES: [usize; 1] = [1_024];

/// Sizes from here on are "large": fewer repeats, and the overhead target.
const LARGE_N: usize = 4_096;

/// The most engine overhead allowed at `n >= LARGE_N` (random pivot).
const OVERHEAD_TARGET: f64 = 0.10;

/// Why a row was not measured.
const SKIPPED_MIN_REVERSE: &str = "skipped (n(n-1)/2 queries)";

/// One line of the table.
#[derive(Clone, Debug, Serialize)]
struct Row {
    order: &'static str,
    n: usize,
    pivot: &'static str,
    /// Why the row was not measured, if it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<&'static str>,
    #[serde(flatten)]
    measured: Option<Measurement>,
}

/// What the repeats of one reveal measured.
#[derive(Clone, Debug, Serialize)]
struct Measurement {
    repeats: usize,
    queries: u64,
    calls: u64,
    queries_per_n: f64,
    median_wall_s: f64,
    /// `(seconds - probe_seconds) / probe_seconds`, median over repeats.
    overhead: f64,
    /// `queries <= n(n-1)/2`.
    within_bound: bool,
    /// The revealed tree equals `Order::tree(n)` in every repeat.
    tree_ok: bool,
    /// A reveal failed; its error.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

fn main() -> ExitCode {
    // Cargo passes `--bench` (and libtest-style flags) to harness = false
    // benches: only `quick` means anything here.
    let quick = std::env::args().skip(1).any(|a| a == "quick");
    let sizes: &[usize] = if quick { &QUICK_SIZES } else { &SIZES };

    let rows = run_all(sizes);
    println!("{}", markdown(&rows));
    match write_json(&rows) {
        Ok(path) => println!("rows written to {}\n", path.display()),
        Err(e) => eprintln!("could not write the JSON rows: {e}"),
    }
    let targets_met = report_targets(&rows, quick);

    if rows
        .iter()
        .any(|r| r.measured.as_ref().is_some_and(|m| !m.tree_ok))
    {
        eprintln!("error: a revealed tree differs from its order's definition");
        return ExitCode::FAILURE;
    }
    if !targets_met {
        eprintln!("note: some targets were missed (see above)");
    }
    ExitCode::SUCCESS
}

/// Measures every order, size and pivot rule.
fn run_all(sizes: &[usize]) -> Vec<Row> {
    let mut rows = Vec::new();
    for &n in sizes {
        for spec in SPECS {
            for (pivot, name) in [
                (Pivot::Ends, "ends"),
                (Pivot::Random { seed: 0 }, "random"),
                (Pivot::Min, "min"),
            ] {
                eprint!("{spec:<18} n = {n:>6}  pivot = {name:<6} ... ");
                let row = run_row(spec, n, pivot, name);
                eprintln!("{}", progress_note(&row));
                rows.push(row);
            }
        }
    }
    rows
}

/// One row: measured, or skipped when it would take far too long.
fn run_row(spec: &'static str, n: usize, pivot: Pivot, pivot_name: &'static str) -> Row {
    let skipped = (spec == "native:reverse" && pivot == Pivot::Min && n >= LARGE_N)
        .then_some(SKIPPED_MIN_REVERSE);
    Row {
        order: spec,
        n,
        pivot: pivot_name,
        skipped,
        measured: skipped.is_none().then(|| measure(spec, n, pivot)),
    }
}

/// Repeats `n <= LARGE_N` 5 times, larger sizes 3 times.
fn repeats(n: usize) -> usize {
    if n <= LARGE_N { 5 } else { 3 }
}

/// Reveals `spec` at size `n` a few times; checks every tree against the
/// order's own definition.
fn measure(spec: &str, n: usize, pivot: Pivot) -> Measurement {
    let expected = expected_tree(spec, n);
    let options = Options {
        algorithm: Algorithm::Fprev,
        pivot,
        ..Options::default()
    };
    let mut runs: Vec<Stats> = Vec::new();
    let mut tree_ok = true;
    let mut error = None;
    for _ in 0..repeats(n) {
        match reveal_once(spec, n, &options) {
            Ok((tree, stats)) => {
                tree_ok &= tree == expected;
                runs.push(stats);
            }
            Err(e) => {
                tree_ok = false;
                error = Some(e);
                break;
            }
        }
    }
    summarise(n, &runs, tree_ok, error)
}

/// The tree `native:ORDER` must reveal: `Order::tree(n)`.
fn expected_tree(spec: &str, n: usize) -> SummationTree {
    let order: Order = spec
        .strip_prefix("native:")
        .and_then(|o| o.parse().ok())
        .unwrap_or_else(|| panic!("'{spec}' is not a native order"));
    order.tree(n)
}

/// Opens a fresh f32 black box and reveals it once.
fn reveal_once(spec: &str, n: usize, options: &Options) -> Result<(SummationTree, Stats), String> {
    let probe_options = ProbeOptions {
        n: Some(n),
        format: Format::F32,
        accumulator: None,
        ..Default::default()
    };
    let mut black_box = fprev::open(spec, &probe_options).map_err(|e| e.to_string())?;
    let revealed = reveal(&mut black_box, options)
        .map_err(|e| e.to_string())?
        .revealed()
        .ok_or("order-independent")?;
    Ok((revealed.tree, revealed.stats))
}

/// Medians and checks over the repeats of one row.
fn summarise(n: usize, runs: &[Stats], tree_ok: bool, error: Option<String>) -> Measurement {
    let last = runs.last().copied().unwrap_or_default();
    let overheads: Vec<f64> = runs.iter().map(overhead).collect();
    let walls: Vec<f64> = runs.iter().map(|s| s.seconds).collect();
    Measurement {
        repeats: runs.len(),
        queries: last.queries,
        calls: last.calls,
        queries_per_n: last.queries as f64 / n as f64,
        median_wall_s: median(walls),
        overhead: median(overheads),
        within_bound: last.queries <= max_queries(n),
        tree_ok,
        error,
    }
}

/// The engine's time outside the black box, per second inside it.
fn overhead(stats: &Stats) -> f64 {
    (stats.seconds - stats.probe_seconds) / stats.probe_seconds
}

/// `n(n-1)/2`: the queries of BasicFPRev, FPRev's worst case.
fn max_queries(n: usize) -> u64 {
    let n = n as u64;
    n * (n - 1) / 2
}

/// The median (mean of the middle two for an even count); NaN when empty.
fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[mid]
    } else {
        (xs[mid - 1] + xs[mid]) / 2.0
    }
}

/// A short summary of a finished row, for stderr while the bench runs.
fn progress_note(row: &Row) -> String {
    match (&row.measured, row.skipped) {
        (_, Some(why)) => why.to_string(),
        (Some(m), None) => match &m.error {
            Some(e) => format!("FAILED: {e}"),
            None => format!(
                "{:.3} s, {} queries{}",
                m.median_wall_s,
                m.queries,
                if m.tree_ok { "" } else { ", WRONG TREE" }
            ),
        },
        (None, None) => unreachable!("a row is measured or skipped"),
    }
}

/// The rows as a Markdown table.
fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| order | n | pivot | queries | calls | queries/n | median wall s | overhead % \
         | queries <= n(n-1)/2 | tree ok |\n\
         |---|---:|---|---:|---:|---:|---:|---:|---|---|\n",
    );
    for row in rows {
        let head = format!(
            "| {} | {} | {} ",
            row.order,
            thousands(row.n as u64),
            row.pivot
        );
        let tail = match (&row.measured, row.skipped) {
            (Some(m), None) => measured_cells(m),
            _ => format!("| {} | | | | | | |", row.skipped.unwrap_or("not run")),
        };
        let _ = writeln!(out, "{head}{tail}");
    }
    out
}

/// The table cells after `order | n | pivot` for a measured row.
fn measured_cells(m: &Measurement) -> String {
    if let Some(e) = &m.error {
        return format!("| reveal failed: {e} | | | | | | no |");
    }
    format!(
        "| {} | {} | {:.2} | {:.3} | {:.1} | {} | {} |",
        thousands(m.queries),
        thousands(m.calls),
        m.queries_per_n,
        m.median_wall_s,
        m.overhead * 100.0,
        yes_no(m.within_bound),
        yes_no(m.tree_ok),
    )
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// `1234567` as `1,234,567`.
fn thousands(x: u64) -> String {
    let digits = x.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Writes the rows to `target/bench-reveal.json`, returning the path.
fn write_json(rows: &[Row]) -> std::io::Result<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-reveal.json");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let json = serde_json::to_string_pretty(rows).map_err(std::io::Error::other)?;
    std::fs::write(&path, json + "\n")?;
    Ok(path)
}

/// Prints a PASS/FAIL line per target; true when none failed.
fn report_targets(rows: &[Row], quick: bool) -> bool {
    let results = [
        overhead_target(rows, quick),
        bound_target(rows),
        reverse_target(rows, quick),
    ];
    for (name, verdict) in &results {
        println!("{verdict}: {name}");
    }
    results.iter().all(|(_, v)| !v.starts_with("FAIL"))
}

/// Measured rows, with their measurements.
fn measured(rows: &[Row]) -> impl Iterator<Item = (&Row, &Measurement)> {
    rows.iter()
        .filter_map(|r| r.measured.as_ref().map(|m| (r, m)))
}

/// Engine overhead under 10% of the black-box time, per random-pivot row at
/// `n >= LARGE_N`.
fn overhead_target(rows: &[Row], quick: bool) -> (String, String) {
    let name = format!(
        "engine overhead < {:.0}% at n >= {} (every random-pivot row)",
        OVERHEAD_TARGET * 100.0,
        thousands(LARGE_N as u64)
    );
    if quick {
        return (name, "SKIP (quick run: n = 1,024 only)".into());
    }
    let misses: Vec<String> = measured(rows)
        .filter(|(r, _)| r.n >= LARGE_N && r.pivot == "random")
        .filter(|(_, m)| m.error.is_some() || m.overhead.is_nan() || m.overhead >= OVERHEAD_TARGET)
        .map(|(r, m)| format!("{} n = {}: {:.1}%", r.order, r.n, m.overhead * 100.0))
        .collect();
    (name, verdict(&misses))
}

/// No measured row asks more than `n(n-1)/2` queries.
fn bound_target(rows: &[Row]) -> (String, String) {
    let misses: Vec<String> = measured(rows)
        .filter(|(_, m)| !m.within_bound)
        .map(|(r, m)| format!("{} n = {} {}: {}", r.order, r.n, r.pivot, m.queries))
        .collect();
    ("no row exceeds n(n-1)/2 queries".into(), verdict(&misses))
}

/// `native:reverse` at the largest size is revealed, correctly.
fn reverse_target(rows: &[Row], quick: bool) -> (String, String) {
    let n = SIZES[SIZES.len() - 1];
    let name = format!("native:reverse at n = {} finishes", thousands(n as u64));
    if quick {
        return (name, "SKIP (quick run: n = 1,024 only)".into());
    }
    let done = measured(rows).any(|(r, m)| {
        r.order == "native:reverse"
            && r.n == n
            && r.pivot == "random"
            && m.error.is_none()
            && m.tree_ok
    });
    let misses = if done {
        Vec::new()
    } else {
        vec!["no correct reveal".to_string()]
    };
    (name, verdict(&misses))
}

fn verdict(misses: &[String]) -> String {
    if misses.is_empty() {
        "PASS".into()
    } else {
        format!("FAIL ({})", misses.join("; "))
    }
}
