//! Running a sweep: a reveal at every size and thread count, each tree
//! confirmed by replay, and the observer told as each reveal starts.

use super::{Finding, Point, Sweep};
use crate::check::CONFIRM_TRIALS;
use crate::error::Result;
use crate::probe::ProbeOptions;
use crate::reveal::{Options, Silent};
use crate::sizes::Sizes;
use crate::spec::Spec;
use crate::workflow;

/// Reveals `spec` at every size of `sizes`, for every thread count of
/// `threads` (`[None]` keeps the black box's default). A reveal that finds
/// the black box broken, order-independent or varying from call to call
/// is recorded and the sweep goes on; bad input (a spec, or a size the
/// format cannot count to) stops it. Variation is looked for where a
/// reveal fails or its replay differs.
pub fn sweep(
    spec: &Spec,
    probe_opts: &ProbeOptions,
    sizes: &Sizes,
    threads: &[Option<usize>],
    opts: &Options,
) -> Result<Sweep> {
    sweep_with(
        spec.as_str(),
        probe_opts,
        sizes,
        threads,
        opts,
        CONFIRM_TRIALS,
        0,
        &mut |po| spec.open(po),
        &mut Silent,
    )
}

/// [`sweep()`] of the black box `name`, replaying each revealed tree on
/// `confirm` random inputs (0: none), looking for answers that vary from
/// call to call at each size on purpose first where `runs` is 2 or more
/// ([`workflow::Request::runs`]), and opening the black box with `open`
/// at each size, telling `observer` as each reveal starts.
#[allow(clippy::too_many_arguments)]
pub fn sweep_with(
    name: &str,
    probe_opts: &ProbeOptions,
    sizes: &Sizes,
    threads: &[Option<usize>],
    opts: &Options,
    confirm: usize,
    runs: usize,
    open: &mut workflow::Opener<'_>,
    observer: &mut dyn workflow::Observer,
) -> Result<Sweep> {
    // A black box that multiplies has its products explained always, one
    // that adds only where plain additions do not replay it.
    let request = workflow::Request {
        probe: probe_opts.clone(),
        engine: *opts,
        confirm: workflow::Confirm {
            trials: confirm,
            arithmetic: workflow::Seek::WhereNeeded,
            every_node: false,
            models: workflow::Models::default(),
        },
        infer: None,
        runs,
        skeleton: None,
        nearby: Vec::new(),
        afresh: false,
    };
    let total = sizes.0.len() * threads.len();
    let mut points = Vec::with_capacity(total);
    for &t in threads {
        for &n in &sizes.0 {
            observer.revealing(n, points.len(), total);
            // A GEMV or GEMM keeps its M and N; K is the size swept.
            let po = ProbeOptions {
                threads: t,
                ..probe_opts.at(n)
            };
            let mut black_box = open(&po)?;
            let revealed = workflow::reveal_opened(
                &mut black_box,
                name,
                &request,
                &mut workflow::opens_no_other,
                &mut Silent,
            );
            let (outcome, stats, arithmetic, accumulator) = match revealed {
                Ok(workflow::Outcome::Revealed(r)) => {
                    let doc = r.document;
                    // The replay that matched every trial: the model's or
                    // plain additions'.
                    let accumulator = doc
                        .confirmation
                        .as_ref()
                        .filter(|c| c.confirmed() && c.trials > 0)
                        .and_then(|c| c.accumulator.as_deref()?.parse().ok());
                    let (stats, arithmetic) = (doc.stats, doc.arithmetic.clone());
                    let outcome = match r.mismatch {
                        None => Finding::Tree(doc.into_tree()),
                        Some(_) => Finding::Unconfirmed(doc.into_tree()),
                    };
                    (outcome, stats, arithmetic, accumulator)
                }
                Ok(workflow::Outcome::Varies(v)) => (Finding::Varies(v), None, None, None),
                Ok(workflow::Outcome::OrderIndependent(_)) => {
                    (Finding::OrderIndependent, None, None, None)
                }
                Err(e) if e.of_black_box() => (Finding::Broken(e.to_string()), None, None, None),
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
    observer.sizes_done();
    Ok(Sweep {
        spec: name.to_string(),
        format: probe_opts.format,
        offset: probe_opts.offset,
        threads: threads.to_vec(),
        points,
    })
}
