//! A sweep as a table (`fprev sweep`'s text): one row per run of sizes,
//! then the change points or the formula, the thread dependence, the
//! modelled arithmetic, the sizes whose answers varied from call to call
//! and the sizes that broke.

use std::fmt;

use fprev::formula::Formula;
use fprev::workflow::sweep::{Finding, Point, Segment, Sweep, segments};

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

fn threads_name(t: Option<usize>) -> String {
    match t {
        Some(t) => format!("{t} thread{}", if t == 1 { "" } else { "s" }),
        None => "default threads".into(),
    }
}

/// The table of a sweep: one row per run of sizes over which, on every
/// thread count, one order name fits and the thread dependence does not
/// change; then the change points and the thread dependence.
///
/// ```
/// use fprev::sizes::Sizes;
/// use fprev::workflow::sweep::sweep;
/// use fprev::{Options, probe::ProbeOptions};
/// use fprev_present::sweep::Table;
///
/// let sizes: Sizes = "2..12".parse().unwrap();
/// let spec = "native:strided:4".parse().unwrap();
/// let s = sweep(&spec, &ProbeOptions::default(), &sizes, &[None], &Options::default()).unwrap();
/// let table = Table(&s).to_string();
/// assert!(table.starts_with("native:strided:4, f32\n"), "{table}");
/// assert!(table.contains("formula: native:"), "{table}");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Table<'a>(pub &'a Sweep);

impl fmt::Display for Table<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sweep = self.0;
        let runs: Vec<Vec<&Point>> = sweep
            .threads
            .iter()
            .map(|t| sweep.run(*t).collect())
            .collect();
        let Some(sizes) = runs.first() else {
            return Ok(());
        };
        let segments: Vec<Vec<Segment>> = runs.iter().map(|r| segments(r)).collect();
        let name_at = |k: usize, i: usize| {
            let s = segments[k].iter().find(|s| s.start <= i && i <= s.end);
            s.map(|s| s.name()).unwrap_or_default()
        };
        let dependent = sweep.thread_dependent();
        let dep = |i: usize| dependent.contains(&sizes[i].n);
        let starts = |i: usize| {
            segments
                .iter()
                .any(|segs| segs.iter().any(|s| s.start == i))
        };
        let mut header = vec!["n".to_string()];
        if sweep.threads == [None] {
            header.push("order".into());
        } else {
            header.extend(sweep.threads.iter().map(|t| threads_name(*t)));
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
            if sweep.threads != [None] {
                row.push(if dep(start) { "no" } else { "yes" }.into());
            }
            rows.push(row);
            start = i;
        }
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
            .collect();
        write!(f, "{}, {}", sweep.spec, sweep.format)?;
        if sweep.offset.is_some() {
            let placed = crate::alignment::placement(sweep.offset, sweep.format);
            write!(f, ", its input in {placed}")?;
        }
        writeln!(f)?;
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
        let inference = sweep.formula();
        if let Some(formula) = inference.as_ref().and_then(|i| i.formula.as_ref()) {
            // The formula speaks for the sizes with a tree only.
            let (with, without): (Vec<&Point>, Vec<&Point>) =
                sizes.iter().copied().partition(|p| p.tree().is_some());
            let (among, all, untreed) = if without.is_empty() {
                (String::new(), "every size visited", String::new())
            } else {
                let n = |ps: &[&Point]| ranges(&ps.iter().map(|p| p.n).collect::<Vec<_>>());
                // A size that varied follows no order: a switch next to it
                // lies somewhere between the sizes revealed around it.
                let varied: Vec<&Point> = without
                    .iter()
                    .copied()
                    .filter(|p| p.variation().is_some())
                    .collect();
                let varied = match varied.is_empty() {
                    true => String::new(),
                    false => format!(
                        " (n = {} varied from call to call: no order there)",
                        n(&varied)
                    ),
                };
                (
                    format!(" among the sizes revealed, n = {}", n(&with)),
                    "them",
                    format!("; n = {} revealed no tree{varied}", n(&without)),
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
            let changes = sweep.change_points();
            let mut varied: Vec<usize> = sweep
                .points
                .iter()
                .filter(|p| p.variation().is_some())
                .map(|p| p.n)
                .collect();
            varied.sort_unstable();
            varied.dedup();
            if changes.is_empty() && !varied.is_empty() {
                writeln!(
                    f,
                    "change points: none claimed: n = {} follow no one order",
                    ranges(&varied)
                )?;
            } else if changes.is_empty() {
                writeln!(f, "change points: none: one order over every size visited")?;
            } else {
                writeln!(f, "change points:")?;
                for c in changes {
                    let on = if sweep.threads.len() > 1 {
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
        if sweep.threads.len() > 1 {
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
        let modelled: Vec<usize> = sweep
            .points
            .iter()
            .filter(|p| p.arithmetic.is_some())
            .map(|p| p.n)
            .collect();
        if !modelled.is_empty() {
            writeln!(
                f,
                "arithmetic: at n = {} plain additions in one format differ from the black \
                 box, and a model of each node's format and rounding replays its bits (the \
                 JSON form lists them)",
                ranges(&modelled)
            )?;
        }
        for p in &sweep.points {
            if let Finding::Varies(v) = &p.outcome {
                writeln!(
                    f,
                    "varies at n = {} ({}): its answer to the same input changes from call to \
                     call, so no one tree describes it: {}",
                    p.n,
                    threads_name(p.threads),
                    crate::note::variation(v)
                )?;
            }
        }
        for p in &sweep.points {
            if let Finding::Broken(why) = &p.outcome {
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

#[cfg(test)]
mod tests {
    use super::*;
    use fprev::{Format, Order};

    fn point(n: usize, threads: usize, outcome: Finding) -> Point {
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
    fn the_table_names_the_thread_dependence_and_what_broke() {
        // At 4 summands one thread goes left to right and two split them
        // into halves; at 5 the second breaks.
        let points = vec![
            point(4, 1, Finding::Tree(Order::Sequential.tree(4))),
            point(5, 1, Finding::OrderIndependent),
            point(4, 2, Finding::Tree(Order::Pairwise.tree(4))),
            point(5, 2, Finding::Broken("NaN".into())),
        ];
        let s = Sweep {
            offset: None,
            spec: "test".into(),
            format: Format::F64,
            threads: vec![Some(1), Some(2)],
            points,
        };
        let table = Table(&s).to_string();
        assert!(
            table.contains("depends on the thread count at n = 4..5"),
            "{table}"
        );
        assert!(
            table.contains("broken at n = 5 (2 threads): NaN"),
            "{table}"
        );
    }

    #[test]
    fn a_size_that_varies_is_named_so_and_no_change_is_claimed_across_it() {
        let varied = fprev::variation::Variation {
            inputs: 8,
            runs: 4,
            varied: 2,
            most_distinct: 2,
            spread_ulps: 3.0,
            spread_relative: 2e-7,
            condition: 40.0,
            skeleton: None,
        };
        let points = vec![
            point(4, 4, Finding::Tree(Order::Sequential.tree(4))),
            point(5, 4, Finding::Varies(varied)),
            point(6, 4, Finding::Tree(Order::Pairwise.tree(6))),
        ];
        let s = Sweep {
            offset: None,
            spec: "test".into(),
            format: Format::F32,
            threads: vec![Some(4)],
            points,
        };
        let table = Table(&s).to_string();
        assert!(table.contains("  5  varies"), "{table}");
        assert!(
            table.contains("varies at n = 5 (4 threads): its answer to the same input changes"),
            "{table}"
        );
        assert!(table.contains("3.000 ulps"), "{table}");
        assert!(!table.contains("->"), "{table}");
        assert!(
            table.contains("n = 5 revealed no tree (n = 5 varied from call to call"),
            "{table}"
        );
    }
}
