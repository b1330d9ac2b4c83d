//! Running a survey: each entry's formula inferred from its reveals and
//! checked at the large sizes, what each node computes, whether its
//! answers vary from call to call, then the thread counts compared;
//! entries of an earlier run kept, so a run goes on where it stopped.

use std::time::Instant;

use super::work::{Opener, options_for, threads_settable};
use super::{
    Detail, Entry, ModelCheck, Scope, SizeResult, Status, Survey, ThreadCheck, ThreadVaried,
};
use crate::arith::{Arithmetic, NodeArithmetic};
use crate::check::{CONFIRM_TRIALS, check_models, with_power};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::formula::Formula;
use crate::formula::infer::explain;
use crate::reveal::{Options, Silent, VARIATION_INPUTS};
use crate::sizes::Sizes;
use crate::spec::Spec;
use crate::variation;
use crate::workflow::sweep::{Finding, Point, Sweep, sweep_with};

use crate::tree::SummationTree;

impl Survey {
    /// Keeps the entries of `earlier` that this survey's plan would make
    /// again (same sizes, shape and thread counts, not failed), so a run
    /// goes on where `earlier` stopped; knobs tried are kept too, and
    /// where `earlier` tried none, [`Survey::run_knobs`] tries them; the
    /// facts of libraries `earlier` found and this survey did not are
    /// kept whatever its plan. Returns how many entries were kept.
    pub fn resume_from(&mut self, earlier: Survey) -> usize {
        for (library, facts) in &earlier.machine.libraries {
            self.machine
                .libraries
                .entry(library.clone())
                .or_insert_with(|| facts.clone());
        }
        let same_plan = Scope {
            black_boxes: Vec::new(),
            dtypes: Vec::new(),
            knobs: false,
            ..earlier.scope.clone()
        } == Scope {
            black_boxes: Vec::new(),
            dtypes: Vec::new(),
            knobs: false,
            ..self.scope.clone()
        };
        if !same_plan {
            return 0;
        }
        let Ok(wanted) = self.work() else {
            return 0;
        };
        let kept: Vec<Entry> = earlier
            .entries
            .into_iter()
            .filter(|e| e.status != Status::Failed)
            .filter(|e| {
                wanted
                    .iter()
                    .any(|(s, d)| s.as_str() == e.spec && d.name() == e.dtype)
            })
            .collect();
        let count = kept.len();
        self.seconds += kept.iter().map(|e| e.seconds).sum::<f64>();
        self.entries = kept;
        count
    }

    /// Surveys every `(black box, dtype)` of the plan not yet done, opening
    /// black boxes with `open`: first each one's formula, arithmetic and
    /// large sizes, then the thread counts (a BLAS's thread count is the
    /// library's own setting, so it is changed only once every other
    /// reveal is done). `progress` hears each step; `save` gets the survey
    /// after each, and its error stops the run.
    pub fn run(
        &mut self,
        open: &mut Opener,
        progress: &mut dyn FnMut(Step<'_>),
        save: &mut dyn FnMut(&Survey) -> Result<()>,
    ) -> Result<()> {
        let work = self.work()?;
        let total = work.len();
        for (k, (spec, dtype)) in work.iter().enumerate() {
            if self.entry(spec.as_str(), dtype.name()).is_some() {
                continue;
            }
            progress(Step::Starting {
                done: k,
                total,
                spec,
                dtype: *dtype,
            });
            let entry = survey_one(spec, *dtype, &self.scope, open);
            progress(Step::Finished {
                done: k + 1,
                total,
                entry: &entry,
            });
            self.seconds += entry.seconds;
            self.entries.push(entry);
            // In the plan's order, entries kept from an earlier run included.
            self.entries.sort_by_key(|e| {
                work.iter()
                    .position(|(s, d)| s.as_str() == e.spec && d.name() == e.dtype)
            });
            save(self)?;
        }
        if self.scope.threads.len() < 2 {
            return Ok(());
        }
        for k in 0..self.entries.len() {
            let e = &self.entries[k];
            // An entry of the plan: its spec parsed as the plan's did.
            let Some((spec, _)) = work.iter().find(|(s, _)| s.as_str() == e.spec) else {
                continue;
            };
            if e.threads.is_some() || e.status == Status::Failed || !threads_settable(spec) {
                continue;
            }
            let spec = spec.clone();
            let format: Format = e.dtype.parse().map_err(Error::Input)?;
            progress(Step::Threads {
                spec: &spec,
                dtype: format,
                counts: &self.scope.threads,
            });
            let started = Instant::now();
            // A failure here leaves the entry's order as found.
            self.entries[k].threads = Some(
                compare_threads(&spec, format, &self.scope, open).unwrap_or_else(|e| ThreadCheck {
                    counts: self.scope.threads.clone(),
                    sizes: Vec::new(),
                    dependent: Vec::new(),
                    detail: Vec::new(),
                    error: Some(e.to_string()),
                    varies: Vec::new(),
                }),
            );
            if !self.entries[k].variations().is_empty() {
                self.entries[k].status = Status::Varies;
            }
            let spent = started.elapsed().as_secs_f64();
            self.entries[k].seconds += spent;
            self.seconds += spent;
            progress(Step::Threaded {
                entry: &self.entries[k],
                seconds: spent,
            });
            save(self)?;
        }
        Ok(())
    }
}

/// A step of [`Survey::run`], for progress.
#[derive(Debug)]
pub enum Step<'a> {
    /// An earlier survey of this machine goes on: `kept` of its entries
    /// are not surveyed again ([`survey`](super::survey)).
    Resumed {
        /// Entries kept.
        kept: usize,
    },
    /// The black box `spec` in `dtype` starts, after `done` of `total`.
    Starting {
        /// Entries before it.
        done: usize,
        /// Entries in the plan.
        total: usize,
        /// The black box.
        spec: &'a Spec,
        /// Its dtype.
        dtype: Format,
    },
    /// It is done.
    Finished {
        /// Entries done.
        done: usize,
        /// Entries in the plan.
        total: usize,
        /// What it found.
        entry: &'a Entry,
    },
    /// Its thread counts are compared.
    Threads {
        /// The black box.
        spec: &'a Spec,
        /// Its dtype.
        dtype: Format,
        /// The counts.
        counts: &'a [usize],
    },
    /// They were, in `seconds`: the entry holds what was found.
    Threaded {
        /// The entry, its `threads` filled in.
        entry: &'a Entry,
        /// Time spent on the thread counts.
        seconds: f64,
    },
    /// One of its knobs is tried ([`Survey::run_knobs`]).
    Knob {
        /// The black box.
        spec: &'a Spec,
        /// Its dtype.
        dtype: Format,
        /// The knob and its values.
        knob: &'a crate::invariance::Knob,
        /// The size tried at.
        n: usize,
    },
    /// It was, in `seconds`.
    Knobbed {
        /// What was found.
        check: &'a super::KnobCheck,
        /// Time spent on it.
        seconds: f64,
    },
}

/// Reveals `spec` in `dtype` at `sizes`, at each thread count of
/// `threads`, looking for answers that vary from call to call first with
/// `runs` calls of each random input where `runs` is 2 or more.
fn reveal_at(
    spec: &Spec,
    dtype: Format,
    plan: &Scope,
    sizes: &[usize],
    threads: &[Option<usize>],
    runs: usize,
    open: &mut Opener,
) -> Result<Sweep> {
    sweep_with(
        spec.as_str(),
        &options_for(spec, dtype, plan),
        &Sizes(sizes.to_vec()),
        threads,
        &Options::default(),
        CONFIRM_TRIALS,
        runs,
        &mut |po| open(spec, po),
        &mut Silent,
    )
}

/// One entry: the formula from the plan's sizes (narrowing its switches),
/// then the large sizes, each checked against it. An error becomes a
/// failed entry.
fn survey_one(spec: &Spec, dtype: Format, plan: &Scope, open: &mut Opener) -> Entry {
    let started = Instant::now();
    let mut entry = Entry {
        spec: spec.to_string(),
        dtype: dtype.name().to_string(),
        status: Status::Failed,
        formula: None,
        closest: None,
        uncertain: Vec::new(),
        sizes: Vec::new(),
        threads: None,
        knobs: None,
        check: None,
        error: None,
        calls: 0,
        seconds: 0.0,
    };
    let found = explain_entry(&mut entry, spec, dtype, plan, open)
        .and_then(|()| check_model(&mut entry, spec, dtype, plan, open));
    if let Err(e) = found {
        entry.status = Status::Failed;
        entry.error = Some(e.to_string());
    }
    entry.calls += entry.sizes.iter().map(|s| s.calls).sum::<u64>();
    entry.seconds = started.elapsed().as_secs_f64();
    entry
}

fn explain_entry(
    entry: &mut Entry,
    spec: &Spec,
    dtype: Format,
    plan: &Scope,
    open: &mut Opener,
) -> Result<()> {
    let mut points: Vec<Point> = Vec::new();
    let (found, trees) = explain(&plan.sizes.0, |sizes| {
        let more = reveal_at(spec, dtype, plan, sizes, &[None], 0, open)?.points;
        let trees = more.iter().filter_map(|p| p.tree().cloned()).collect();
        points.extend(more);
        Ok(trees)
    })?;
    let formula = found.formula.clone();
    // Past the sizes explained: sums, dots and GEMVs (a GEMM's K there
    // costs minutes).
    let large: Vec<usize> = plan
        .large
        .0
        .iter()
        .copied()
        .filter(|n| !points.iter().any(|p| p.n == *n))
        .collect();
    // A large size the dtype cannot count to (f16 past 2,048) is left out,
    // saying why; the sizes explained stand.
    let mut skipped = Vec::new();
    if spec.op() != Some("gemm") {
        for n in large {
            match reveal_at(spec, dtype, plan, &[n], &[None], 0, open) {
                Ok(more) => points.extend(more.points),
                Err(e) if e.kind() == crate::error::Kind::Input => skipped.push(SizeResult {
                    n,
                    outcome: "skipped".into(),
                    tree: None,
                    arithmetic: None,
                    problem: Some(e.to_string()),
                    variation: None,
                    calls: 0,
                }),
                Err(e) => return Err(e),
            }
        }
    }
    points.sort_by_key(|p| p.n);
    look_for_variation(&mut points, spec, dtype, plan, open)?;
    // Trees of one or two summands are forced: they reveal no order.
    let revealed = trees.iter().any(|t| !t.is_forced());
    entry.status = match (&formula, !revealed) {
        _ if points.iter().any(|p| p.variation().is_some()) => Status::Varies,
        (_, true) => Status::NotRevealed,
        (Some(_), false) => Status::Explained,
        (None, false) => Status::NotExplained,
    };
    if let Some(f) = &formula {
        entry.formula = Some(f.to_string());
    }
    entry.closest = found.closest.map(|(f, at)| (f.to_string(), at));
    entry.uncertain = found.gaps;
    entry.sizes = points
        .iter()
        .map(|p| size_result(p, formula.as_ref()))
        .chain(skipped)
        .collect();
    entry.sizes.sort_by_key(|s| s.n);
    Ok(())
}

/// Checks the model of `entry`'s largest size with one against the black
/// box on [`Scope::check`] random trials, then on inputs built to tell it
/// from its nearest alternatives, as `fprev check` does: a reveal's own
/// confirmation, on a few dozen random inputs, can pass a model that
/// such inputs refute (a simulated GPU's two-stage sum); its calls are
/// added to the entry's.
fn check_model(
    entry: &mut Entry,
    spec: &Spec,
    dtype: Format,
    plan: &Scope,
    open: &mut Opener,
) -> Result<()> {
    if plan.check == 0 {
        return Ok(());
    }
    let Some((n, model)) = entry
        .sizes
        .iter()
        .rev()
        .find_map(|s| Some((s.n, s.arithmetic.clone()?)))
    else {
        return Ok(());
    };
    let Some(tree) = entry.tree_at(n) else {
        return Ok(());
    };
    let mut black_box = open(spec, &options_for(spec, dtype, plan).at(n))?;
    let (report, _) = check_models(&tree, &[model], black_box.as_mut(), plan.check, 1, 0)?;
    let report = with_power(report, &tree, black_box.as_mut(), 1, 0)?;
    let words = |list: Option<&Vec<crate::check::Alternative>>| {
        list.into_iter().flatten().map(|a| a.to_string()).collect()
    };
    // A mismatch on an input built for power counts those calls already.
    let passed = report.mismatch.is_none();
    let power_calls = report.power.as_ref().map_or(0, |p| p.calls);
    let trials = report.trials + if passed { power_calls } else { 0 };
    entry.calls += trials as u64;
    entry.check = Some(ModelCheck {
        n,
        trials,
        passed,
        mismatch: report
            .mismatch
            .as_ref()
            .map(|m| (m.trial, m.kind.to_string())),
        distinguished: words(report.power.as_ref().map(|p| &p.distinguished)),
        undistinguished: words(report.power.as_ref().map(|p| &p.undistinguished)),
    });
    Ok(())
}

/// Sums each of a few random inputs up to [`Scope::runs`] times at the
/// largest size of `points` with a tree, as [`variation::look_for`] does,
/// and marks that size as varying where the bits changed: work shared
/// out between threads is regrouped most at large sizes (Rayon's sum on
/// two threads regroups at 16,384 summands on most calls, at 1,000 on few).
fn look_for_variation(
    points: &mut [Point],
    spec: &Spec,
    dtype: Format,
    plan: &Scope,
    open: &mut Opener,
) -> Result<()> {
    let largest = points
        .iter_mut()
        .filter(|p| p.tree().is_some())
        .max_by_key(|p| p.n);
    let Some(p) = largest.filter(|_| plan.runs > 1) else {
        return Ok(());
    };
    let mut black_box = open(spec, &options_for(spec, dtype, plan).at(p.n))?;
    let v = variation::look_for(black_box.as_mut(), VARIATION_INPUTS, plan.runs, 5)?;
    if let Some(stats) = &mut p.stats {
        stats.calls += (v.inputs * v.runs) as u64;
    }
    if v.varies() {
        p.outcome = Finding::Varies(v);
        p.arithmetic = None;
        p.accumulator = None;
    }
    Ok(())
}

/// A point as the survey keeps it: its tree only where `formula` does not
/// give it.
fn size_result(p: &Point, formula: Option<&Formula>) -> SizeResult {
    let (outcome, problem) = match &p.outcome {
        Finding::Tree(_) => ("tree", None),
        Finding::Unconfirmed(_) => ("unconfirmed", None),
        Finding::OrderIndependent => ("order-independent", None),
        Finding::Broken(why) => ("broken", Some(why.clone())),
        Finding::Varies(_) => ("varies", None),
    };
    let tree = p
        .tree()
        .filter(|t| formula.is_none_or(|f| f.tree(t.n()) != **t))
        .map(SummationTree::to_text);
    let arithmetic = match (&p.outcome, &p.arithmetic, p.accumulator) {
        (Finding::Tree(_), Some(model), _) => Some(model.clone()),
        (Finding::Tree(_), None, Some(acc)) => Some(Arithmetic::uniform(NodeArithmetic::ieee(acc))),
        _ => None,
    };
    SizeResult {
        n: p.n,
        outcome: outcome.to_string(),
        tree,
        arithmetic,
        problem,
        variation: p.variation().cloned(),
        calls: p.stats.as_ref().map_or(0, |s| s.calls + s.arithmetic_calls),
    }
}

/// Reveals `spec` at the plan's thread sizes on each of its thread counts
/// and names the sizes whose tree depends on the count.
fn compare_threads(
    spec: &Spec,
    dtype: Format,
    plan: &Scope,
    open: &mut Opener,
) -> Result<ThreadCheck> {
    let sizes: Vec<usize> = plan
        .thread_sizes
        .0
        .iter()
        .copied()
        .filter(|&n| spec.op() != Some("gemm") || n <= 2048)
        .collect();
    let counts: Vec<Option<usize>> = plan.threads.iter().map(|&t| Some(t)).collect();
    let revealed = reveal_at(spec, dtype, plan, &sizes, &counts, plan.runs, open)?;
    let dependent = revealed.thread_dependent();
    // Where the first count's tree and each other count's part.
    let first = counts[0];
    let at =
        |n: usize, t: Option<usize>| revealed.points.iter().find(|p| p.n == n && p.threads == t);
    let mut detail = Vec::new();
    for &n in &dependent {
        // A count whose answers varied has no tree to set against another.
        let varying: Vec<(&Point, &variation::Variation)> = counts
            .iter()
            .filter_map(|&t| at(n, t))
            .filter_map(|p| Some((p, p.variation()?)))
            .collect();
        for (p, v) in &varying {
            detail.push(Detail::Varies {
                n,
                threads: p.threads.unwrap_or(1),
                variation: Box::new((*v).clone()),
            });
        }
        if !varying.is_empty() {
            continue;
        }
        for &t in &counts[1..] {
            let (Some(p), Some(q)) = (at(n, first), at(n, t)) else {
                continue;
            };
            match (p.tree(), q.tree()) {
                (Some(a), Some(b)) => {
                    if let Some(d) = a.diff(b) {
                        detail.push(Detail::Parts {
                            n,
                            counts: [first.unwrap_or(1), t.unwrap_or(1)],
                            sides: d.texts(a, b),
                        });
                    }
                }
                _ => detail.push(Detail::Outcomes { n }),
            }
        }
    }
    let varies = revealed
        .points
        .iter()
        .filter_map(|p| {
            Some(ThreadVaried {
                threads: p.threads?,
                n: p.n,
                variation: p.variation()?.clone(),
            })
        })
        .collect();
    Ok(ThreadCheck {
        counts: plan.threads.clone(),
        sizes,
        dependent,
        detail,
        error: None,
        varies,
    })
}
