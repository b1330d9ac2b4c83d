//! Running a sweep: a reveal at every size and thread count, each tree
//! confirmed by replay, and the observer told as each reveal starts.

use super::{Outcome, Point, Sizes, Sweep};
use crate::check::{CONFIRM_TRIALS, check_row};
use crate::error::{Error, Result};
use crate::probe::{Probe, ProbeOptions};
use crate::reveal::arithmetic::{ArithOptions, confirm_arithmetic};
use crate::reveal::{Options, Silent, reveal};

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
