//! Revealing one black box across sizes and thread counts, and finding the
//! change points: the sizes where its order changes shape, and the sizes
//! where it depends on the thread count (`fprev sweep`).
//!
//! ```
//! use fprev::sweep::{Sizes, sweep};
//! use fprev::{Options, probe::ProbeOptions};
//!
//! let sizes: Sizes = "2..12".parse().unwrap();
//! let s = sweep("native:strided:4", &ProbeOptions::default(), &sizes, &[None], &Options::default())
//!     .unwrap();
//! // Up to 4 summands, 4 lanes of one summand each are pairwise halving.
//! let change = &s.change_points()[0];
//! assert_eq!((change.n, change.to.as_str()), (5, "strided:4"));
//! ```

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::arith::Arithmetic;
use crate::check::{CONFIRM_TRIALS, check_row};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::formula::Formula;
use crate::formula::infer::{Inference, infer};
use crate::order::Order;
use crate::probe::{Probe, ProbeOptions};
use crate::reveal::arithmetic::{ArithOptions, confirm_arithmetic};
use crate::reveal::{Options, Silent, Stats, reveal};
use crate::shape::Shape;
use crate::tree::SummationTree;

/// The sizes a sweep visits: `A..B` (every size from A to B inclusive),
/// `A..B:S` (every S-th), or a comma-separated list of those and of single
/// sizes.
///
/// ```
/// use fprev::sweep::Sizes;
///
/// let s: Sizes = "1..4,10..20:5,64".parse().unwrap();
/// assert_eq!(s.0, [1, 2, 3, 4, 10, 15, 20, 64]);
/// assert!("8..4".parse::<Sizes>().is_err());
/// // At most MAX_SIZES sizes, each one a reveal this machine can hold.
/// assert!("1..1000000000".parse::<Sizes>().is_err());
/// assert!("1..8,1000000000000000".parse::<Sizes>().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes(pub Vec<usize>);

/// The most sizes one list holds: far more than a sweep reveals in a day,
/// and a list that takes no memory to speak of.
pub const MAX_SIZES: usize = 1 << 20;

impl FromStr for Sizes {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = |why: &str| {
            format!("'{s}' is not a list of sizes: {why} (e.g. 1..64, 8..1024:8, 16,32)")
        };
        let number = |t: &str| {
            t.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| bad(&format!("'{t}' is not a whole number of at least 1")))
        };
        let mut out = Vec::new();
        for part in s.split(',') {
            let Some((a, rest)) = part.split_once("..") else {
                out.push(number(part)?);
                continue;
            };
            let (b, step) = match rest.split_once(':') {
                Some((b, step)) => (b, number(step)?),
                None => (rest, 1),
            };
            let (a, b) = (number(a)?, number(b)?);
            if a > b {
                return Err(bad(&format!("the range {a}..{b} is empty")));
            }
            // Counted before it is listed.
            if (b - a) / step >= MAX_SIZES.saturating_sub(out.len()) {
                return Err(bad(&format!(
                    "{a}..{b} holds more than the {MAX_SIZES} sizes a list may"
                )));
            }
            out.extend((a..=b).step_by(step));
        }
        if out.len() > MAX_SIZES {
            return Err(bad(&format!("more than {MAX_SIZES} sizes")));
        }
        out.sort_unstable();
        out.dedup();
        if let Some(&largest) = out.last() {
            crate::memory::check_reveal(largest).map_err(|e| e.to_string())?;
        }
        Ok(Sizes(out))
    }
}

/// What a reveal at one size and thread count found.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// A tree.
    Tree(SummationTree),
    /// The same bits in every order: no tree.
    OrderIndependent,
    /// The black box broke an assumption of the method (the message says
    /// which).
    Broken(String),
    /// A tree was revealed, but its replay gave other bits than the black
    /// box on a random input: the order holds, the arithmetic is not plain
    /// additions, so the sweep names no order for this size.
    Unconfirmed(SummationTree),
}

/// One reveal of a sweep.
#[derive(Clone, Debug)]
pub struct Point {
    /// Summands.
    pub n: usize,
    /// The thread count, where the sweep set one.
    pub threads: Option<usize>,
    /// What was found.
    pub outcome: Outcome,
    /// What it cost (none when the reveal failed).
    pub stats: Option<Stats>,
    /// What each node computes, where plain additions in one format do not
    /// replay the black box's bits and a model confirmed by replay does.
    pub arithmetic: Option<Arithmetic>,
    /// The format in which plain additions replayed the black box's bits,
    /// where they did.
    pub accumulator: Option<Format>,
}

impl Point {
    /// The reference orders this point's tree matches; `None` when any
    /// order does (one or two summands).
    fn class(&self) -> Class {
        match &self.outcome {
            Outcome::Tree(t) if t.is_forced() => Class::Any,
            Outcome::Tree(t) => match Shape::orders(t) {
                names if names.is_empty() => Class::Unrecognised,
                names => Class::Orders(names),
            },
            Outcome::OrderIndependent => Class::OrderIndependent,
            Outcome::Broken(_) => Class::Other("broken"),
            Outcome::Unconfirmed(_) => Class::Other("not confirmed by replay"),
        }
    }

    /// The tree revealed, confirmed by replay or not.
    pub fn tree(&self) -> Option<&SummationTree> {
        match &self.outcome {
            Outcome::Tree(t) | Outcome::Unconfirmed(t) => Some(t),
            _ => None,
        }
    }
}

/// What an order is known as over a run of sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Class {
    /// One or two summands: every order.
    Any,
    /// The reference orders that fit every size of the run.
    Orders(Vec<Order>),
    /// A tree no reference order fits.
    Unrecognised,
    /// The same bits in every order (as any one or two summands are).
    OrderIndependent,
    /// No tree the black box was seen to follow: `broken` or `not
    /// confirmed by replay`.
    Other(&'static str),
}

impl Class {
    /// The class of a run that goes on with `next`, if the run can.
    fn extend(&self, next: &Class) -> Option<Class> {
        match (self, next) {
            // A forced tree fits every order, but not a size that broke or
            // whose tree was not confirmed.
            (Class::Any, Class::Other(_)) | (Class::Other(_), Class::Any) => None,
            (c, Class::Any) | (Class::Any, c) => Some(c.clone()),
            (Class::Orders(a), Class::Orders(b)) => {
                let common: Vec<Order> = a.iter().filter(|o| b.contains(o)).copied().collect();
                (!common.is_empty()).then_some(Class::Orders(common))
            }
            (a, b) => (a == b).then(|| a.clone()),
        }
    }

    fn name(&self) -> String {
        match self {
            Class::Any => "any order (n <= 2)".into(),
            Class::Orders(names) => names[0].to_string(),
            Class::Unrecognised => "unrecognised".into(),
            Class::OrderIndependent => "order-independent".into(),
            Class::Other(name) => name.to_string(),
        }
    }
}

/// A run of consecutive visited sizes (indices into one thread count's
/// points) that one order name fits.
struct Segment {
    start: usize,
    end: usize,
    class: Class,
}

/// Splits one thread count's points into the longest runs one name fits.
fn segments(run: &[&Point]) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for (i, p) in run.iter().enumerate() {
        let class = p.class();
        match out
            .last_mut()
            .and_then(|s| s.class.extend(&class).map(|c| (s, c)))
        {
            Some((s, c)) => {
                s.end = i;
                s.class = c;
            }
            None => out.push(Segment {
                start: i,
                end: i,
                class,
            }),
        }
    }
    out
}

/// A size where the order's name changes, for one thread count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChangePoint {
    /// The thread count (`None`: the black box's default).
    pub threads: Option<usize>,
    /// The first size with the new order.
    pub n: usize,
    /// The order below `n`.
    pub from: String,
    /// The order from `n` on.
    pub to: String,
}

/// The reveals of a sweep, sizes in increasing order for each thread count.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The black box.
    pub spec: String,
    /// Its input format.
    pub format: Format,
    /// The thread counts visited (`[None]`: the black box's default only).
    pub threads: Vec<Option<usize>>,
    /// Every reveal, thread count by thread count.
    pub points: Vec<Point>,
}

/// Reveals `spec` at every size of `sizes`, for every thread count of
/// `threads` (`[None]` keeps the black box's default). A reveal that finds
/// the black box broken or order-independent is recorded and the sweep goes
/// on; bad input (a spec, or a size the format cannot count to) stops it.
pub fn sweep(
    spec: &str,
    probe_opts: &ProbeOptions,
    sizes: &Sizes,
    threads: &[Option<usize>],
    opts: &Options,
) -> Result<Sweep> {
    sweep_with(
        spec,
        probe_opts,
        sizes,
        threads,
        opts,
        CONFIRM_TRIALS,
        &mut crate::open,
        &mut Silent,
    )
}

/// Watches a sweep ([`sweep_with`]); the `fprev` command draws its progress
/// bar so. Every method does nothing unless implemented.
#[allow(unused_variables)]
pub trait Observer {
    /// The reveal of size `n` starts, after `done` of the sweep's `total`.
    fn revealing(&mut self, n: usize, done: usize, total: usize) {}

    /// Every reveal is done.
    fn finished(&mut self) {}
}

impl Observer for Silent {}

/// Opens a black box from its spec and options, as [`crate::open`] does.
pub type Opener = dyn FnMut(&str, &ProbeOptions) -> Result<Box<dyn Probe>>;

/// [`sweep()`], replaying each revealed tree on `confirm` random inputs (0:
/// none) and opening each black box with `open` (a spec and its options
/// to a probe, [`crate::open`] or one wrapping it), telling `observer`
/// as each reveal starts.
#[allow(clippy::too_many_arguments)]
pub fn sweep_with(
    spec: &str,
    probe_opts: &ProbeOptions,
    sizes: &Sizes,
    threads: &[Option<usize>],
    opts: &Options,
    confirm: usize,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Sweep> {
    let total = sizes.0.len() * threads.len();
    let mut points = Vec::with_capacity(total);
    for &t in threads {
        for &n in &sizes.0 {
            observer.revealing(n, points.len(), total);
            // A GEMV or GEMM keeps its M and N; K is the size swept.
            let po = ProbeOptions {
                n: Some(n),
                threads: t,
                shape: probe_opts.shape.map(|[m, cols, _]| [m, cols, n]),
                ..probe_opts.clone()
            };
            let mut black_box = open(spec, &po)?;
            let mut arithmetic = None;
            let mut accumulator = None;
            let (outcome, stats) = match reveal(&mut black_box, opts) {
                Ok(r) => {
                    let mut stats = r.stats;
                    // Plain additions differ: a model of what each node
                    // computes may still replay the bits. A black box that
                    // multiplies is asked always, its products on random y.
                    let (report, found) = if confirm > 0 && opts.row == 0 {
                        let arith = ArithOptions {
                            trials: confirm,
                            ..ArithOptions::default()
                        };
                        let c = confirm_arithmetic(&mut black_box, &r.tree, None, &arith, false)?;
                        (c.report, c.arithmetic.and_then(|a| a.ok()))
                    } else {
                        let report = check_row(&r.tree, &mut black_box, confirm, 0, opts.row)?;
                        (report, None)
                    };
                    if report.mismatch.is_none() && confirm > 0 {
                        accumulator = report.accumulator;
                    }
                    if let Some(f) = found {
                        stats.arithmetic_calls = f.calls;
                        arithmetic = Some(f.model);
                    }
                    match (report.mismatch, &arithmetic) {
                        (None, _) | (_, Some(_)) => (Outcome::Tree(r.tree), Some(stats)),
                        (Some(_), None) => (Outcome::Unconfirmed(r.tree), Some(stats)),
                    }
                }
                Err(Error::OrderIndependent(_)) => (Outcome::OrderIndependent, None),
                Err(Error::BlackBox(why)) => (Outcome::Broken(why), None),
                Err(e) => return Err(e),
            };
            points.push(Point {
                n,
                threads: t,
                outcome,
                stats,
                arithmetic,
                accumulator,
            });
        }
    }
    observer.finished();
    Ok(Sweep {
        spec: spec.to_string(),
        format: probe_opts.format,
        threads: threads.to_vec(),
        points,
    })
}

impl Sweep {
    /// The points of one thread count, by increasing size.
    fn run(&self, t: Option<usize>) -> impl Iterator<Item = &Point> {
        self.points.iter().filter(move |p| p.threads == t)
    }

    /// Where the order changes shape, for each thread count: the first size
    /// that no reference order fitting the sizes before it also fits (so
    /// that small sizes, where several orders build the same tree, do not
    /// count as changes).
    pub fn change_points(&self) -> Vec<ChangePoint> {
        let mut out = Vec::new();
        for &t in &self.threads {
            let run: Vec<&Point> = self.run(t).collect();
            for pair in segments(&run).windows(2) {
                out.push(ChangePoint {
                    threads: t,
                    n: run[pair[1].start].n,
                    from: pair[0].class.name(),
                    to: pair[1].class.name(),
                });
            }
        }
        out
    }

    /// The sizes whose trees differ between thread counts (modulo child
    /// order), or whose outcomes do.
    pub fn thread_dependent(&self) -> Vec<usize> {
        let Some(&first) = self.threads.first() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for p in self.run(first) {
            let same = |q: &Point| match (p.tree(), q.tree()) {
                (Some(a), Some(b)) => a == b,
                _ => p.class() == q.class(),
            };
            let others = self
                .points
                .iter()
                .filter(|q| q.n == p.n && q.threads != first);
            if !others.into_iter().all(same) {
                out.push(p.n);
            }
        }
        out
    }

    /// The formula of the order language that regenerates every tree of
    /// the first thread count's run ([`crate::formula::infer`]), its
    /// switches between regimes being the order's real rule changes.
    /// `None` when the sweep starts above [`INFER_FROM_AT_MOST`] summands
    /// (a search from large trees only is slow; `fprev explain` chooses its
    /// own sizes) or reveals no tree.
    pub fn formula(&self) -> Option<Inference> {
        let t = *self.threads.first()?;
        let trees: Vec<SummationTree> = self.run(t).filter_map(|p| p.tree().cloned()).collect();
        let smallest = trees.iter().map(SummationTree::n).min()?;
        (smallest <= INFER_FROM_AT_MOST).then(|| infer(&trees))
    }

    /// Whether some revealed tree's replay gave other bits than the black box.
    pub fn any_unconfirmed(&self) -> bool {
        self.points
            .iter()
            .any(|p| matches!(p.outcome, Outcome::Unconfirmed(_)))
    }

    /// Whether some reveal found the black box broken.
    pub fn any_broken(&self) -> bool {
        self.points
            .iter()
            .any(|p| matches!(p.outcome, Outcome::Broken(_)))
    }

    /// The sweep as JSON: every point (size, threads, the name of the order
    /// over its run of sizes, depth, widest node, queries, calls, seconds,
    /// and the problem of a broken one), the change points and the
    /// thread-dependent sizes.
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct PointJson<'a> {
            n: usize,
            threads: Option<usize>,
            order: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            depth: Option<usize>,
            #[serde(skip_serializing_if = "Option::is_none")]
            widest: Option<usize>,
            #[serde(skip_serializing_if = "Option::is_none")]
            stats: Option<Stats>,
            #[serde(skip_serializing_if = "Option::is_none")]
            problem: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            arithmetic: Option<&'a Arithmetic>,
        }
        #[derive(Serialize)]
        struct SweepJson<'a> {
            probe: &'a str,
            dtype: String,
            threads: &'a [Option<usize>],
            points: Vec<PointJson<'a>>,
            change_points: Vec<ChangePoint>,
            #[serde(skip_serializing_if = "Option::is_none")]
            formula: Option<String>,
            thread_dependent: Vec<usize>,
        }
        let mut points = Vec::with_capacity(self.points.len());
        for &t in &self.threads {
            let run: Vec<&Point> = self.run(t).collect();
            for seg in segments(&run) {
                points.extend(run[seg.start..=seg.end].iter().map(|p| PointJson {
                    n: p.n,
                    threads: p.threads,
                    order: seg.class.name(),
                    depth: p.tree().map(SummationTree::depth),
                    widest: p.tree().map(SummationTree::widest),
                    stats: p.stats,
                    problem: match &p.outcome {
                        Outcome::Broken(why) => Some(why),
                        _ => None,
                    },
                    arithmetic: p.arithmetic.as_ref(),
                }));
            }
        }
        serde_json::to_string_pretty(&SweepJson {
            probe: &self.spec,
            dtype: self.format.to_string(),
            threads: &self.threads,
            points,
            change_points: self.change_points(),
            formula: self
                .formula()
                .and_then(|i| i.formula)
                .map(|f| f.to_string()),
            thread_dependent: self.thread_dependent(),
        })
        .expect("a sweep serialises")
    }
}

/// Sweeps whose smallest size is at most this many summands are explained
/// by a formula.
pub const INFER_FROM_AT_MOST: usize = 256;

/// The sizes where a formula switches between regimes (`below(M, …)`).
fn switches(formula: &Formula) -> Vec<usize> {
    match formula {
        Formula::Below(m, small, large) => {
            let mut out = switches(small);
            out.push(*m);
            out.extend(switches(large));
            out
        }
        _ => Vec::new(),
    }
}

fn threads_name(t: Option<usize>) -> String {
    match t {
        Some(t) => format!("{t} thread{}", if t == 1 { "" } else { "s" }),
        None => "default threads".into(),
    }
}

/// The table: one row per run of sizes over which, on every thread count,
/// one order name fits and the thread dependence does not change; then the
/// change points and the thread dependence.
impl fmt::Display for Sweep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let runs: Vec<Vec<&Point>> = self
            .threads
            .iter()
            .map(|t| self.run(*t).collect())
            .collect();
        let Some(sizes) = runs.first() else {
            return Ok(());
        };
        let segments: Vec<Vec<Segment>> = runs.iter().map(|r| segments(r)).collect();
        let name_at = |k: usize, i: usize| {
            let s = segments[k].iter().find(|s| s.start <= i && i <= s.end);
            s.map(|s| s.class.name()).unwrap_or_default()
        };
        let dependent = self.thread_dependent();
        let dep = |i: usize| dependent.contains(&sizes[i].n);
        let starts = |i: usize| {
            segments
                .iter()
                .any(|segs| segs.iter().any(|s| s.start == i))
        };
        let mut header = vec!["n".to_string()];
        if self.threads == [None] {
            header.push("order".into());
        } else {
            header.extend(self.threads.iter().map(|t| threads_name(*t)));
            header.push("same tree on every thread count".into());
        }
        let mut rows = vec![header];
        let mut start = 0;
        for i in 1..=sizes.len() {
            if i < sizes.len() && !starts(i) && dep(i) == dep(start) {
                continue;
            }
            let (a, b) = (sizes[start].n, sizes[i - 1].n);
            let mut row = vec![if a == b {
                a.to_string()
            } else {
                format!("{a}..{b}")
            }];
            row.extend((0..runs.len()).map(|k| name_at(k, start)));
            if self.threads != [None] {
                row.push(if dep(start) { "no" } else { "yes" }.into());
            }
            rows.push(row);
            start = i;
        }
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
            .collect();
        writeln!(f, "{}, {}", self.spec, self.format)?;
        for row in &rows {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            writeln!(f, "  {}", cells.join("  ").trim_end())?;
        }
        // One formula over every size: its switches are the order's rule
        // changes, and the shape names' changes between them are noise.
        let inference = self.formula();
        if let Some(formula) = inference.as_ref().and_then(|i| i.formula.as_ref()) {
            // The formula speaks for the sizes with a tree only.
            let (with, without): (Vec<&Point>, Vec<&Point>) =
                sizes.iter().copied().partition(|p| p.tree().is_some());
            let (among, all, untreed) = if without.is_empty() {
                (String::new(), "every size visited", String::new())
            } else {
                let n = |ps: &[&Point]| ranges(&ps.iter().map(|p| p.n).collect::<Vec<_>>());
                (
                    format!(" among the sizes revealed, n = {}", n(&with)),
                    "them",
                    format!("; n = {} revealed no tree", n(&without)),
                )
            };
            let switches = switches(formula);
            if switches.is_empty() {
                writeln!(
                    f,
                    "change points: none{among}: one formula over {all}{untreed}"
                )?;
            } else {
                let at: Vec<String> = switches.iter().map(usize::to_string).collect();
                writeln!(
                    f,
                    "change points{among}: n = {}, where the formula switches rule{untreed}",
                    at.join(", ")
                )?;
            }
            writeln!(f, "formula: native:{formula}")?;
        } else {
            let changes = self.change_points();
            if changes.is_empty() {
                writeln!(f, "change points: none: one order over every size visited")?;
            } else {
                writeln!(f, "change points:")?;
                for c in changes {
                    let on = if self.threads.len() > 1 {
                        format!(" ({})", threads_name(c.threads))
                    } else {
                        String::new()
                    };
                    writeln!(f, "  n = {}{on}: {} -> {}", c.n, c.from, c.to)?;
                }
            }
            if let Some((closest, at)) = inference.and_then(|i| i.closest) {
                writeln!(
                    f,
                    "formula: none regenerates every size (the closest, native:{closest}, \
                     fails at n = {at})"
                )?;
            }
        }
        if self.threads.len() > 1 {
            if dependent.is_empty() {
                writeln!(
                    f,
                    "threads: the same tree on every thread count, at every size"
                )?;
            } else {
                writeln!(
                    f,
                    "threads: the tree depends on the thread count at n = {}",
                    ranges(&dependent)
                )?;
            }
        }
        let modelled: Vec<usize> = self
            .points
            .iter()
            .filter(|p| p.arithmetic.is_some())
            .map(|p| p.n)
            .collect();
        if !modelled.is_empty() {
            writeln!(
                f,
                "arithmetic: at n = {} plain additions in one format differ from the black \
                 box, and a model of each node's format and rounding replays its bits (--format \
                 json lists them)",
                ranges(&modelled)
            )?;
        }
        for p in &self.points {
            if let Outcome::Broken(why) = &p.outcome {
                writeln!(
                    f,
                    "broken at n = {} ({}): {why}",
                    p.n,
                    threads_name(p.threads)
                )?;
            }
        }
        Ok(())
    }
}

/// `1, 2, 3, 7` as `1..3, 7`.
fn ranges(sizes: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sizes.len() {
        let mut j = i;
        while j + 1 < sizes.len() && sizes[j + 1] == sizes[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            sizes[i].to_string()
        } else {
            format!("{}..{}", sizes[i], sizes[j])
        });
        i = j + 1;
    }
    out.join(", ")
}

/// Ascending sizes as runs, as `-n` takes them.
///
/// ```
/// assert_eq!(fprev::sweep::runs(&[1, 2, 3, 7, 8, 10]), "1..3,7,8,10");
/// ```
pub fn runs(sizes: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut k = 0;
    while k < sizes.len() {
        let mut end = k;
        while end + 1 < sizes.len() && sizes[end + 1] == sizes[end] + 1 {
            end += 1;
        }
        out.push(match end - k {
            0 => sizes[k].to_string(),
            1 => format!("{},{}", sizes[k], sizes[end]),
            _ => format!("{}..{}", sizes[k], sizes[end]),
        });
        k = end + 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(n: usize, threads: usize, outcome: Outcome) -> Point {
        Point {
            n,
            threads: Some(threads),
            outcome,
            stats: None,
            arithmetic: None,
            accumulator: None,
        }
    }

    #[test]
    fn a_tree_that_changes_with_the_thread_count_is_found() {
        // Two threads split 6 summands into halves; one thread goes left
        // to right; both are sequential below 4.
        let mut points = Vec::new();
        for t in [1, 2] {
            for n in 3..=6 {
                let order = if t == 2 && n >= 4 {
                    Order::Pairwise
                } else {
                    Order::Sequential
                };
                points.push(point(n, t, Outcome::Tree(order.tree(n))));
            }
        }
        points.push(point(7, 1, Outcome::OrderIndependent));
        points.push(point(7, 2, Outcome::Broken("NaN".into())));
        let s = Sweep {
            spec: "test".into(),
            format: Format::F64,
            threads: vec![Some(1), Some(2)],
            points,
        };
        assert_eq!(s.thread_dependent(), [4, 5, 6, 7]);
        let changes: Vec<(Option<usize>, usize, &str)> = s
            .change_points()
            .iter()
            .map(|c| {
                (
                    c.threads,
                    c.n,
                    if c.to == "pairwise" { "p" } else { "other" },
                )
            })
            .collect();
        // On two threads, 3 and 4 summands still fit one order (the binary
        // tree reduction), so the change shows at 5.
        assert_eq!(
            changes,
            [
                (Some(1), 7, "other"),
                (Some(2), 5, "p"),
                (Some(2), 7, "other")
            ]
        );
        assert!(s.any_broken());
        let table = s.to_string();
        assert!(
            table.contains("depends on the thread count at n = 4..7"),
            "{table}"
        );
        assert!(
            table.contains("broken at n = 7 (2 threads): NaN"),
            "{table}"
        );
    }
}
