//! `fprev sweep`: reveal across sizes and thread counts, and report where
//! the order changes, as a table or JSON.

use fprev::error::{Error, Result};
use fprev::probe::ProbeOptions;
use fprev::sizes::Sizes;
use fprev::workflow::sweep;
use fprev::workflow::{self, Request, Turned};
use fprev_present::sweep::Table;

use super::invariance::{self, Subject};
use super::{alignment, open_guarded};
use crate::args::{SweepArgs, SweepFormat};
use crate::progress::{StudyBar, SweepBar};
use crate::write::{check_writable, format_of, stdout_or, write_out};

/// Runs `fprev sweep`: 0, 3 when a size broke an assumption, else 6 when a
/// size's answers varied from call to call, else 5 when a size's tree was
/// not confirmed.
pub(super) fn run(a: SweepArgs) -> Result<i32> {
    if let Some(counts) = &a.count {
        return counts_sweep(&a, counts);
    }
    let output = stdout_or(a.output.as_deref());
    let formats = [("json", SweepFormat::Json), ("txt", SweepFormat::Table)];
    let json = format_of(a.format, output, &formats, "sweep")? == Some(SweepFormat::Json);
    check_writable(output)?;
    let threads: Vec<Option<usize>> = if a.threads.is_empty() {
        vec![None]
    } else {
        a.threads.iter().map(|t| Some(usize::from(*t))).collect()
    };
    a.guard.start();
    let s = sweep::sweep_with(
        a.spec.as_str(),
        &ProbeOptions {
            shape: a.shape,
            offset: a.offset,
            ..a.number.options(a.spec.default_dtype())
        },
        &a.sizes,
        &threads,
        &a.engine.options(),
        a.confirm,
        a.runs,
        &mut |po| open_guarded(&a.spec, po),
        &mut SweepBar::default(),
    )?;
    let text = if json {
        s.to_json() + "\n"
    } else {
        Table(&s).to_string()
    };
    write_out(text.as_bytes(), output)?;
    if let Some(line) = alignment(&a.spec, a.offset, s.format) {
        eprintln!("fprev: note: {line}");
    }
    Ok(if s.any_broken() {
        3
    } else if s.any_varies() {
        6
    } else if s.any_unconfirmed() {
        5
    } else {
        0
    })
}

/// `fprev sweep SPEC --count COUNTS`: the message sizes (an MPI vector's
/// elements, a product's `M`) swept at one `n`, the first and last
/// elements revealed at each, every switch bisected to the exact count; the
/// report and the exit status are `fprev invariance`'s (0 one order at
/// every count, 1 not, 3 a case failed).
fn counts_sweep(a: &SweepArgs, counts: &Sizes) -> Result<i32> {
    let [n] = a.sizes.0[..] else {
        return Err(Error::Input(
            "--count sweeps message sizes at one size: give one -n".into(),
        ));
    };
    if !a.threads.is_empty() || a.runs > 0 || a.offset.is_some() {
        return Err(Error::Input(
            "--count sweeps message sizes alone: leave out --threads, --runs and --offset".into(),
        ));
    }
    // Two elements revealed at each count, as one study's cases.
    let most = fprev::invariance::MAX_REVEALS / 2;
    if counts.0.len() > most {
        return Err(Error::Input(format!(
            "--count: {} message sizes, more than the {most} one sweep reveals: give fewer",
            counts.0.len()
        )));
    }
    let output = stdout_or(a.output.as_deref());
    let formats = [("json", SweepFormat::Json), ("txt", SweepFormat::Table)];
    let json = format_of(a.format, output, &formats, "sweep")? == Some(SweepFormat::Json);
    check_writable(output)?;
    let [_, cols, _] = a.shape.unwrap_or([1, 1, n]);
    // The first and the last element: a ring's chunks start at ranks 0
    // and P - 1 there at every count, so what changes is the algorithm.
    let turned = Turned {
        batch: Some(counts.0.clone()),
        rows: vec!["first".into(), "last".into()],
        ..Turned::default()
    };
    let knobs = turned.knobs(a.spec.op(), Some([1, cols, n]))?;
    let subject = Subject {
        spec: &a.spec,
        n,
        shape: Some([1, cols, n]),
        dtype: a.number.dtype,
        acc: a.number.acc,
        confirm: a.confirm,
        timeout: a.guard.timeout,
        mpi: a.mpi.ranks.map(|p| (p, a.mpi.mpi_timeout)),
        processes: 1,
    };
    let request = Request {
        engine: a.engine.options(),
        ..invariance::request(&subject)
    };
    a.guard.start();
    let label = a.spec.as_str();
    let mut open = |o: &ProbeOptions| open_guarded(&a.spec, o);
    let mut bar = StudyBar::default();
    let mut study = workflow::invariance(label, &knobs, &request, &mut open, &mut bar)?;
    workflow::bisect(
        &mut study, "batch", label, &knobs, &request, &mut open, &mut bar,
    )?;
    let text = if json {
        fprev_present::invariance::json(&study) + "\n"
    } else {
        fprev_present::invariance::text(
            &study,
            &fprev_present::invariance::title(label, n, Some([1, cols, n])),
        )
    };
    write_out(text.as_bytes(), output)?;
    Ok(invariance::exit_code(&study))
}
