//! `fprev check`: replay a saved tree on random inputs against a black box,
//! and save the first input on which they differ (reveal's confirmation
//! saves its mismatch the same way).

use std::path::PathBuf;

use fprev::check;
use fprev::document::TreeDocument;
use fprev::error::{Error, Result};
use fprev_present::check::summary;
use serde_json::json;

use super::{alignment, open_guarded};
use crate::args::{CheckArgs, Report};
use crate::mismatch::{against, save_mismatch, saved_to};
use crate::write::{self, check_writable};

/// Runs `fprev check`: 0 when every replay gives the black box's bits, 1
/// when one differs (its input saved, in every --format and with --quiet).
pub(super) fn run(a: CheckArgs) -> Result<i32> {
    let doc = TreeDocument::read(&a.tree)?;
    if doc.varies.is_some() {
        return Err(Error::Input(format!(
            "{} is the skeleton of a black box whose order varies from call to call: its \
             varying joins have no one order to replay; `fprev reveal SPEC --runs R` asks \
             whether SPEC varies",
            a.tree.display()
        )));
    }
    check_writable(Some(&a.mismatch.mismatch_out))?;
    let mut opts = a.black_box.options(doc.dtype.or(a.spec.default_dtype()));
    opts.n = opts.n.or(Some(doc.n()));
    // A tree found at an offset is checked at that offset, unless told.
    if opts.offset.is_none() && a.spec.takes_offset() {
        opts.offset = doc.offset;
        if let Some(line) = doc.offset.and(alignment(&a.spec, doc.offset, opts.format)) {
            eprintln!("fprev: note: as the tree file was found: {line}");
        }
    }
    a.guard.start();
    let mut black_box = open_guarded(&a.spec, &opts)?;
    let report = check::check_document(&doc, &mut black_box, a.trials, a.seed, a.row)?;
    let file = &a.mismatch.mismatch_out;
    let saved = match &report.mismatch {
        Some(m) => {
            save_mismatch(file, &a.spec, opts.offset, black_box.format(), a.row, m).then_some(file)
        }
        None => None,
    };
    let tree = a.tree.display().to_string();
    match a.report.report() {
        Report::Quiet => {}
        Report::Text => {
            let (format, declared) = (black_box.format(), black_box.accumulator());
            write::println(summary(&report, &tree, a.spec.as_str(), format, declared))?;
            if report.mismatch.is_some() {
                write::println(saved_to(saved.map(PathBuf::as_path)))?;
            }
        }
        Report::Json => {
            let mismatch = report.mismatch.as_ref().map(|m| {
                json!({
                    "accumulator": m.accumulator.name(),
                    "against": against(m),
                    "black_box": m.black_box,
                    "input_file": saved.map(|f| f.display().to_string()),
                    "kind": m.kind.to_string(),
                    "replayed": m.replayed,
                    "trial": m.trial,
                })
            });
            let words = |ms: Option<&Vec<check::Alternative>>| -> Vec<String> {
                ms.into_iter().flatten().map(ToString::to_string).collect()
            };
            let power = report.power.as_ref();
            // Keys in alphabetical order, the order serde_json keeps.
            let mut json = json!({
                "accumulator": report.accumulator.map(|f| f.name()),
                "distinguished_from": words(power.map(|p| &p.distinguished)),
                "dtype": black_box.format().name(),
                "mismatch": mismatch,
                "model": report.model.as_ref().map(ToString::to_string),
                "not_distinguished_from": words(power.map(|p| &p.undistinguished)),
                "ok": report.mismatch.is_none(),
                "passed": report.passed(),
                "row": a.row,
                "seed": a.seed,
                "spec": a.spec.as_str(),
                "tree": tree,
                "trials": report.trials,
            });
            if let Some(o) = opts.offset {
                json["offset"] = json!(o.to_string());
            }
            write::println(format_args!("{json:#}"))?;
        }
    }
    Ok(if report.mismatch.is_some() { 1 } else { 0 })
}
