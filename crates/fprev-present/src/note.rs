//! A workflow's notes ([`Note`]) in words: one neutral line each, naming
//! no command's flags (a front end adds its own remedies).

use std::fmt;

use fprev::error::Report;
use fprev::inputs::Inputs;
use fprev::reveal::{Finding, OrderIndependent};
use fprev::sizes::runs;
use fprev::skeleton::Skeleton;
use fprev::variation::{Processes, Variation};
use fprev::workflow::{Note, Unheld};

/// A note said in one line: `format!("fprev: note: {}", Said(&note))`.
pub struct Said<'a>(pub &'a Note);

impl fmt::Display for Said<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Note::Engine(finding) => f.write_str(&engine(finding)),
            Note::Arithmetic {
                model,
                nodes_asked,
                products_asked,
                calls,
                trials,
            } => {
                let (products, inputs) = match products_asked {
                    Some(p) => (format!(", {p} products"), "random x and y"),
                    None => (String::new(), "random inputs"),
                };
                write!(
                    f,
                    "arithmetic: {model} ({nodes_asked} nodes{products} asked, {calls} calls; \
                     replayed on {trials} {inputs}, the same bits)"
                )
            }
            Note::NoArithmetic { why, .. } => write!(f, "arithmetic: {}", Report(why)),
            Note::Streamed {
                n,
                asked_at,
                found,
                holds,
                trials,
            } => match (found, holds) {
                (Some(model), true) => write!(
                    f,
                    "arithmetic: {model} (the nodes asked at n = {asked_at}; replayed at n = {n} \
                     from the formula on {trials} random inputs, no node built, the same bits)"
                ),
                (Some(model), false) => write!(
                    f,
                    "arithmetic: {model} at n = {asked_at}, not claimed at n = {n}: a replay \
                     streamed from the formula does not hold it there (it names nodes or \
                     products, or its bits differ)"
                ),
                (None, _) => write!(
                    f,
                    "arithmetic: none found at n = {asked_at}, so none is claimed at n = {n}"
                ),
            },
            Note::KnownFormula {
                inferred,
                known,
                found_for,
                from,
            } => write!(
                f,
                "native:{inferred} is inferred from reveals at n = {}, and native:{known}, \
                 known for {found_for}, regenerates each of them too: the known one, found \
                 from larger reveals, predicts",
                runs(from)
            ),
            Note::Refitted {
                failed_at,
                formula: Some(formula),
            } => write!(
                f,
                "the formula inferred fails at n = {failed_at}, checked past the sizes \
                 revealed: with that tree, native:{formula} gives every tree"
            ),
            Note::Refitted {
                failed_at,
                formula: None,
            } => write!(
                f,
                "the formula inferred fails at n = {failed_at}, checked past the sizes \
                 revealed, and no formula gives every tree with that one"
            ),
            Note::Predicted {
                n,
                formula,
                from,
                cached: true,
            } => write!(
                f,
                "n = {n} predicted by native:{formula}, the cache's formula, its tree proven \
                 now at n = {}",
                runs(from)
            ),
            Note::Predicted {
                n, formula, from, ..
            } if from.is_empty() => {
                write!(f, "n = {n} predicted by native:{formula}, as given")
            }
            Note::Predicted {
                n, formula, from, ..
            } => write!(
                f,
                "n = {n} predicted by native:{formula}, inferred from reveals at n = {}",
                runs(from)
            ),
            Note::KnownFailed { formula, why } => {
                let at = match why {
                    Unheld::Refuted(n) => {
                        format!(" at n = {n} (the black box's tree there is another)")
                    }
                    Unheld::Unproven(n, why) => format!(" at n = {n} ({why})"),
                    Unheld::NotConfirmed(n, why) => {
                        format!(" at n = {n} ({})", crate::emit::not_confirmed_why(why))
                    }
                    Unheld::Mispredicted => " (it mispredicts)".into(),
                };
                write!(
                    f,
                    "the cache's formula, native:{formula}, does not hold now{at}: a formula is \
                     inferred afresh"
                )
            }
            Note::CacheHolds { formula, from } => write!(
                f,
                "the cache holds native:{formula}, found before from n = {}: its tree is proven \
                 at those sizes below n before it predicts",
                runs(from)
            ),
            Note::CacheDropped {
                formula,
                why: Unheld::Mispredicted,
            } => write!(
                f,
                "native:{formula} is dropped from the cache: it does not hold now"
            ),
            Note::CacheDropped { formula, why } => {
                let why = match why {
                    Unheld::Unproven(n, why) => format!("cannot be proven now at n = {n} ({why})"),
                    Unheld::Refuted(n) => {
                        format!("is refuted at n = {n}: the black box's tree there is another")
                    }
                    Unheld::NotConfirmed(n, why) => format!(
                        "does not hold now (at n = {n}, {})",
                        crate::emit::not_confirmed_why(why)
                    ),
                    Unheld::Mispredicted => "does not hold now".into(),
                };
                write!(
                    f,
                    "the cache's formula, native:{formula}, {why}: dropped from the cache; \
                     explaining afresh"
                )
            }
            Note::Explaining(label) => write!(
                f,
                "finding the order of {label}: explaining it at several sizes first"
            ),
            Note::CacheUnkept(why) => write!(f, "{}", Report(why)),
            Note::NotProven(why) => write!(f, "not proven: {}", Report(why)),
            Note::Described {
                what,
                formula,
                row,
                kept: true,
            } => write!(
                f,
                "{what}, as described, gives output {row} native:{formula}: the revealed tree is it"
            ),
            Note::Described {
                what,
                formula,
                row,
                kept: false,
            } => write!(
                f,
                "{what}, as described, gives output {row} native:{formula}, but the revealed tree \
                 is another: the library departs from its description"
            ),
            Note::ProvenKnown {
                n,
                formula,
                found_for,
                checks,
                calls,
            } => write!(
                f,
                "n = {n} revealed: the tree of native:{formula}, known for {found_for}, is \
                 proven by {checks} masked checks ({calls} calls)"
            ),
            Note::Proven { n, checks, calls } => write!(
                f,
                "n = {n} revealed: the prediction is proven by {checks} masked checks \
                 ({calls} calls)"
            ),
            Note::ProvenNearby { n, checks, calls } => write!(
                f,
                "n = {n}: the tree found nearby is proven by {checks} masked checks ({calls} \
                 calls)"
            ),
            Note::Mispredicted {
                formula,
                n,
                adds,
                calls,
            } => {
                let at = adds
                    .as_ref()
                    .map(|text| format!(": the black box adds {text}, which the formula does not"))
                    .unwrap_or_default();
                write!(
                    f,
                    "native:{formula} mispredicts n = {n}{at}; the tree is revealed in full \
                     ({calls} calls)"
                )
            }
            Note::Unconfirmed {
                label,
                format,
                accumulator,
                trial,
                kind,
                replayed: _,
                black_box,
            } => {
                write!(
                    f,
                    "{label}: the order is revealed, but a replay of it in plain rounded \
                     additions ({accumulator} or wider) differs from the black box on random \
                     input {} ({kind}): ",
                    trial + 1
                )?;
                if format.round(*black_box) != *black_box {
                    write!(
                        f,
                        "its result {black_box:e} is not a {format} value: it returns a wider \
                         result (Python's built-in sum of x.tolist() adds and \
                         returns Python floats, f64); reveal it on f64 inputs"
                    )
                } else if *kind == Inputs::Subnormal {
                    write!(
                        f,
                        "it gave {black_box:e}: it flushes subnormal values (inputs, products \
                         or sums) to zero, which no arithmetic model of fprev's holds (not \
                         modelled)"
                    )
                } else {
                    f.write_str(
                        "it does not add as a tree of plain additions (a compensated sum? \
                         parts in other precisions?)",
                    )
                }
            }
            Note::About { label, about } => write!(f, "{label}: {about}"),
            Note::Processes(seen) => f.write_str(&processes(seen)),
            Note::ProcessesNotCompared => f.write_str(
                "its answers vary within this process, from call to call: processes not compared",
            ),
            Note::Deterministic(v) => write!(
                f,
                "deterministic within this one process: {}; another process may choose another \
                 order as it starts",
                variation(v)
            ),
            Note::Skeleton {
                variation: v,
                effort,
            } => write!(
                f,
                "varies from call to call: {}; looking for the subtrees every call shares for \
                 up to {} s, its masked queries {}",
                variation(v),
                effort.within.as_secs_f64(),
                asks(effort.first, effort.repeats)
            ),
            Note::NoSkeleton(why) => write!(f, "no skeleton: {}", Report(why)),
            Note::NotRevealed(sizes) => {
                let sizes: Vec<String> = sizes
                    .iter()
                    .map(|(n, why)| format!("{n} ({why})"))
                    .collect();
                write!(
                    f,
                    "not revealed, so not explained: n = {}",
                    sizes.join(", ")
                )
            }
        }
    }
}

/// What repeating random inputs showed, in one clause: the same bits on
/// every call, or how many inputs gave other bits and how far apart.
///
/// ```
/// use fprev::variation::Variation;
///
/// let v = Variation {
///     inputs: 4,
///     runs: 8,
///     varied: 0,
///     most_distinct: 1,
///     spread_ulps: 0.0,
///     spread_relative: 0.0,
///     condition: 1.0,
///     skeleton: None,
/// };
/// assert_eq!(
///     fprev_present::note::variation(&v),
///     "the same bits on every one of 8 calls of each of 4 random inputs"
/// );
/// ```
pub fn variation(v: &Variation) -> String {
    if !v.varies() {
        return format!(
            "the same bits on every one of {} calls of each of {} random inputs",
            v.runs, v.inputs
        );
    }
    format!(
        "{} of {} random inputs gave different bits on {} calls each (up to {} distinct results \
         for one input); the results spread by up to {:.3} ulps ({:.2e} of the sum), on an input \
         of condition number {:.3e}",
        v.varied, v.inputs, v.runs, v.most_distinct, v.spread_ulps, v.spread_relative, v.condition
    )
}

/// How often a skeleton's masked queries were asked, in one clause.
///
/// ```
/// use fprev::skeleton::Skeleton;
///
/// let mut s = Skeleton::new("((0+1)+2)".parse().unwrap(), Vec::new(), 40);
/// (s.first, s.queries, s.calls) = (2, 3, 6);
/// assert_eq!(
///     fprev_present::note::skeleton_asked(&s),
///     "3 masked queries (6 calls), each asked 2 times, 40 times in a subproblem where \
///      answers disagree and at a level not kept"
/// );
/// ```
pub fn skeleton_asked(s: &Skeleton) -> String {
    let mut said = format!(
        "{} masked queries ({} calls), {}",
        s.queries,
        s.calls,
        asks(s.first, s.repeats)
    );
    if s.short > 0 {
        said += &format!(
            " (but {} of those were asked fewer times: the time ran out)",
            s.short
        );
    }
    said
}

/// How often each masked query is asked: `first` times, `repeats` in a
/// subproblem whose answers disagree.
fn asks(first: usize, repeats: usize) -> String {
    match first == repeats {
        true => format!("each asked {repeats} times"),
        false => format!(
            "each asked {first} times, {repeats} times in a subproblem where answers disagree \
             and at a level not kept"
        ),
    }
}

/// What comparing fresh processes' answers showed, in one clause.
///
/// ```
/// use fprev::variation::{Processes, Variation};
///
/// let same = Processes::compare(&[vec![1, 2], vec![1, 2]]);
/// assert_eq!(
///     fprev_present::note::processes(&same),
///     "the same bits in each of 2 processes on each of 2 random inputs"
/// );
/// ```
pub fn processes(p: &Processes) -> String {
    match p.varies() {
        false => format!(
            "the same bits in each of {} processes on each of {} random inputs",
            p.processes, p.inputs
        ),
        true => format!(
            "{} of {} random inputs gave different bits in {} processes (up to {} distinct \
             results for one input)",
            p.varied, p.inputs, p.processes, p.most_distinct
        ),
    }
}

/// Why a black box whose answers differ between fresh processes has no
/// one tree, and what the processes showed (after its name).
pub fn varies_between_processes(p: &Processes) -> String {
    format!(
        "its answer to the same input changes from process to process (an order chosen as each \
         process starts), so no one tree describes it: {}",
        processes(p)
    )
}

/// A finding of the reveal engine, in one line.
pub fn engine(finding: &Finding) -> String {
    match finding {
        Finding::RowsDiffer {
            row,
            differ,
            agree,
            per_call,
        } => format!(
            "rows {} of this black box sum in a different order from row {row} (the same \
             input in every row gave different results); this is row {row}'s order, revealed \
             with rows {} ({per_call} per call; asking for row K reveals row K's)",
            row_ranges(differ),
            row_ranges(agree),
        ),
        Finding::Unpacked {
            units,
            summed,
            accumulator,
        } => format!(
            "this black box summed {units} units to {summed}, but a {accumulator} accumulator \
             holds that sum exactly: it rounds to a narrower format, so each query had an input \
             of its own (declaring its accumulator packs them)"
        ),
        Finding::TowardZero => "masked inputs fit no tree, as a sum whose additions round toward \
             zero answers them (a unit meeting the negative mask is not absorbed); masks whose \
             units survive such additions gave this one, one query per input, and its additions \
             truncating give the first masks' answers too (n - 1 inputs)"
            .into(),
    }
}

/// `6-11, 18-23, 30-35, …`: rows as ranges, at most four.
fn row_ranges(ranges: &[std::ops::RangeInclusive<usize>]) -> String {
    let shown: Vec<String> = ranges
        .iter()
        .take(4)
        .map(|r| match r.start() == r.end() {
            true => r.start().to_string(),
            false => format!("{}-{}", r.start(), r.end()),
        })
        .collect();
    shown.join(", ") + if ranges.len() > 4 { ", …" } else { "" }
}

/// Why a black box has no summation tree, as it sums order-independently:
/// what the CLI and Python say (after its name), and an invariance study
/// keeps.
///
/// ```
/// use fprev::reveal::OrderIndependent;
///
/// let at = OrderIndependent::Sizes { sizes: vec![3, 4, 5], unrevealed: 0, run: 3 };
/// assert!(fprev_present::note::order_independent(&at)
///     .starts_with("the black box sums order-independently at n = "));
/// ```
pub fn order_independent(why: &OrderIndependent) -> String {
    match why {
        OrderIndependent::At { n, masked } => format!(
            "the black box sums its {n} summands order-independently: every order of random \
             inputs gave the same bits (an exact or pre-rounded sum), so no summation tree \
             describes it; masked inputs said: {masked}"
        ),
        OrderIndependent::Sizes {
            sizes,
            unrevealed,
            run,
        } => {
            let stopped = match unrevealed {
                0 => String::new(),
                k => format!(
                    "; the {k} other sizes asked were not revealed: {run} sizes in a row and a \
                     larger one settle it"
                ),
            };
            format!(
                "the black box sums order-independently at n = {}: every order of random inputs \
                 gave the same bits (an exact or pre-rounded sum), so no formula describes \
                 it{stopped}",
                runs(sizes)
            )
        }
        OrderIndependent::Recorded(words) => words.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fprev::Format;

    #[test]
    fn rows_that_differ_are_named_as_ranges_at_most_four() {
        let rows = Finding::RowsDiffer {
            row: 0,
            differ: vec![6..=11, 18..=23, 30..=35, 42..=42, 50..=51],
            agree: vec![0..=5, 12..=17],
            per_call: 12,
        };
        assert_eq!(
            engine(&rows),
            "rows 6-11, 18-23, 30-35, 42, … of this black box sum in a different order from \
             row 0 (the same input in every row gave different results); this is row 0's \
             order, revealed with rows 0-5, 12-17 (12 per call; asking for row K reveals row \
             K's)"
        );
        let unpacked = Finding::Unpacked {
            units: 16777215,
            summed: 16777216.0,
            accumulator: Format::F32,
        };
        assert!(engine(&unpacked).starts_with(
            "this black box summed 16777215 units to 16777216, but a f32 accumulator"
        ));
    }

    /// A variation as a reveal measures it: 3 of 4 inputs varied.
    fn seen() -> Variation {
        Variation {
            inputs: 4,
            runs: 8,
            varied: 3,
            most_distinct: 2,
            spread_ulps: 1.5,
            spread_relative: 3e-8,
            condition: 12.25,
            skeleton: None,
        }
    }

    #[test]
    fn a_study_file_keeps_order_independence_and_variation_as_worded_here() {
        use fprev::error::Fault;
        use fprev::invariance::{Case, Observed, Setting, Study, Varying};
        let v = seen();
        for why in [
            OrderIndependent::At {
                n: 16,
                masked: Fault::FusedNode { terms: 16 },
            },
            OrderIndependent::Sizes {
                sizes: vec![3, 4, 5, 6, 128],
                unrevealed: 53,
                run: 4,
            },
        ] {
            let case = |observed| Case {
                setting: Setting(Vec::new()),
                observed,
                proven: false,
                seconds: 0.0,
            };
            let study = Study {
                cases: vec![
                    case(Observed::OrderIndependent(why.clone())),
                    case(Observed::Varies(Varying::Measured(Box::new(v.clone())))),
                ],
            };
            let text = crate::invariance::json(&study);
            let back = Study::parse(&text).unwrap();
            match &back.cases[0].observed {
                Observed::OrderIndependent(r @ OrderIndependent::Recorded(_)) => {
                    assert_eq!(order_independent(r), order_independent(&why));
                }
                other => panic!("read back as {other:?}"),
            }
            match &back.cases[1].observed {
                Observed::Varies(Varying::Recorded(words)) => assert_eq!(*words, variation(&v)),
                other => panic!("read back as {other:?}"),
            }
            // Written again, the words read back are kept as they were.
            assert_eq!(crate::invariance::json(&back), text);
        }
    }

    #[test]
    fn a_varying_black_box_is_worded_in_full() {
        let v = seen();
        assert_eq!(
            variation(&v),
            "3 of 4 random inputs gave different bits on 8 calls each (up to 2 distinct results \
             for one input); the results spread by up to 1.500 ulps (3.00e-8 of the sum), on an \
             input of condition number 1.225e1"
        );
        let same = Variation { varied: 0, ..v };
        assert_eq!(
            variation(&same),
            "the same bits on every one of 8 calls of each of 4 random inputs"
        );
    }
}
