//! `fprev reveal`: reveal a black box's tree, confirm it by replay, and
//! print or save it: the library's reveal workflow, its notes said on
//! stderr, the differing input saved.

use fprev::Spec;
use fprev::document::TreeDocument;
use fprev::error::{Error, Fault, Result};
use fprev::reveal::VARIATION_INPUTS;
use fprev::variation;
use fprev::workflow::{self, Infer, Outcome, Request, Revealed, Revealing};

use super::cache;
use super::{alignment, open_guarded, order_independent, varies, varies_line};
use crate::args::GuardArgs;
use crate::args::{AnswersArgs, BlackBoxArgs, FormatArgs, OutputFormat, RevealArgs};
use crate::mismatch::{save_mismatch, saved_to};
use crate::watch::Watch;
use crate::write::{self, check_writable};
use fprev_present::front::FrontEnd;
use fprev_present::note::{Said, varies_between_processes};

/// Runs `fprev reveal`: 0, 4 (order-independent), 5 (not confirmed) or
/// 6 (it varies, between calls or between processes).
pub(super) fn run(a: RevealArgs) -> Result<i32> {
    if a.processes.is_some() && a.black_box.mpi.ranks.is_some() {
        return Err(Error::Input(
            "--processes with --ranks: an MPI job's ranks are processes of one job, which \
             --processes cannot start afresh; reveal it again to compare jobs"
                .into(),
        ));
    }
    // Validate the output before spending time on the reveal.
    let format = a.output.resolve()?;
    check_writable(a.output.path())?;
    if a.confirm.confirm > 0 {
        check_writable(Some(&a.confirm.mismatch.mismatch_out))?;
    }
    let request = Request {
        probe: a.black_box.options(a.spec.default_dtype()),
        engine: a.engine.options(),
        confirm: a.confirm.options(),
        infer: a.infer.then_some(Infer {
            sizes: None,
            prove_up_to: a.prove_up_to,
            known: None,
        }),
        runs: a.runs,
        skeleton: (!a.no_skeleton)
            .then(|| std::time::Duration::from_secs(a.skeleton_seconds as u64)),
        nearby: Vec::new(),
        afresh: a.afresh,
    };
    a.guard.start();
    let mut watch = Watch::default();
    let mut fresh = || fresh_answers(&a.spec, &a.black_box, &a.guard);
    let revealing = workflow::reveal(
        a.spec.as_str(),
        &request,
        &mut |o| open_guarded(&a.spec, o),
        cache::caches(a.no_cache),
        a.processes
            .map(|p| (usize::from(p), &mut fresh as &mut workflow::Fresh)),
        &mut watch,
    );
    let (format_of_box, outcome) = match revealing {
        Ok(Revealing::Outcome(f, outcome)) => (f, outcome),
        Ok(Revealing::VariesBetweenProcesses(seen)) => {
            write::println(format_args!(
                "varies: {}: {}",
                a.spec,
                varies_between_processes(&seen)
            ))?;
            return Ok(6);
        }
        Err(e) if matches!(e.plain(), Error::BlackBox(_)) && !a.infer => {
            return Ok(crate::errors::report_hinted(
                &e,
                &format_hint(&a.spec, &a.black_box.format),
            ));
        }
        Err(e) => return Err(e),
    };
    let revealed = match outcome {
        Outcome::Revealed(r) => r,
        Outcome::OrderIndependent(why) => return order_independent(&a.spec, &why),
        Outcome::Varies(v) => {
            // The skeleton is written as any tree; a JSON, DOT or SVG
            // document on stdout keeps stdout to itself.
            let alone = a.output.path().is_none() && format != OutputFormat::Text;
            let code = match v.skeleton.is_some() && alone {
                true => {
                    eprintln!("fprev: {}", varies_line(&a.spec, &v));
                    6
                }
                false => varies(&a.spec, &v)?,
            };
            if let Some(document) = TreeDocument::of_skeleton(v, a.spec.as_str(), format_of_box) {
                a.output.write(&document, format)?;
            }
            return Ok(code);
        }
    };
    // 5: the order is revealed, its replay differs from the black box.
    let code = if revealed.confirmed() { 0 } else { 5 };
    let Revealed {
        mut document,
        mismatch,
    } = *revealed;
    if let (Some(m), Some(c)) = (&mismatch, document.confirmation.as_mut()) {
        let file = &a.confirm.mismatch.mismatch_out;
        let saved = save_mismatch(
            file,
            &a.spec,
            request.probe.offset,
            format_of_box,
            request.engine.row,
            m,
        );
        c.mismatch_file = saved.then(|| file.display().to_string());
        if let Some(warning) = watch.unconfirmed.take() {
            eprintln!(
                "fprev: warning: {}; {}",
                Said(&warning),
                saved_to(saved.then_some(file))
            );
        }
    }
    // Said with a tree only: a failure finds nothing to hold.
    if let Some(line) = alignment(&a.spec, document.offset, format_of_box) {
        eprintln!("fprev: note: {line}");
    }
    a.output.write(&document, format)?;
    Ok(code)
}

/// What to try when a black box of arbitrary code (`dylib:`, `python:`)
/// answered nonsense, in the flags not given (`fprev_present::front`).
fn format_hint(spec: &Spec, given: &FormatArgs) -> String {
    match spec.prefix() {
        "dylib" | "python" => fprev_present::front::format_hint(
            FrontEnd::Cli,
            given.dtype.is_some(),
            given.acc.is_some(),
        ),
        _ => String::new(),
    }
}

/// The answers of one fresh process (the hidden `fprev answers`) opening
/// the black box as `given` says to the random inputs a reveal compares
/// processes on.
fn fresh_answers(spec: &Spec, given: &BlackBoxArgs, guard: &GuardArgs) -> Result<Vec<u64>> {
    let mut cmd = super::invariance::rerun()?;
    cmd.args(["answers", spec.as_str()])
        .args(["--inputs", &VARIATION_INPUTS.to_string()]);
    if let Some(n) = given.n {
        cmd.args(["-n", &n.to_string()]);
    }
    if let Some(d) = given.format.dtype {
        cmd.args(["--dtype", &d.to_string()]);
    }
    if let Some(acc) = given.format.acc {
        cmd.args(["--acc", &acc.to_string()]);
    }
    if let Some([m, n, k]) = given.shape {
        cmd.args(["--shape", &format!("{m},{n},{k}")]);
    }
    if let Some(c) = given.column {
        cmd.args(["--column", &c.to_string()]);
    }
    if let Some(t) = given.threads {
        cmd.args(["--threads", &t.to_string()]);
    }
    if let Some(o) = given.offset {
        cmd.args(["--offset", &o.to_string()]);
    }
    if let Some(t) = guard.timeout {
        cmd.args(["--timeout", &t.to_string()]);
    }
    let out = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| Error::Input(format!("cannot run fprev again in a fresh process: {e}")))?;
    if out.status.code() != Some(0) {
        return Err(Error::BlackBox(Fault::Process {
            what: format!("a fresh process asked {spec}'s answers"),
            status: out.status.code(),
        }));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| Error::Json {
        context: "the answers of a fresh process".into(),
        source: e,
    })
}

/// Runs the hidden `fprev answers`: the bits of the black box's answers to
/// seeded random inputs, a JSON list on stdout.
pub(super) fn answers(a: AnswersArgs) -> Result<i32> {
    let opts = a.black_box.options(a.spec.default_dtype());
    a.guard.start();
    let mut black_box = open_guarded(&a.spec, &opts)?;
    let bits = variation::answers(&mut black_box, a.inputs.into(), a.seed)?;
    write::println(format_args!(
        "{}",
        serde_json::to_string(&bits).expect("numbers serialise")
    ))?;
    Ok(0)
}
