//! Predictions past the sizes proven: the tree stays its formula and `n`,
//! and is confirmed by a replay run straight from the formula, no node
//! built. The black boxes here are compiled replays of the formula's tree
//! (built node by node, evaluated slot by slot): a path apart from the
//! streamed one, which must agree with it bit for bit, and must tell
//! another formula's tree from it.

use fprev::Format;
use fprev::check::{check_document, check_formula};
use fprev::document::TreeDocument;
use fprev::formula::Formula;
use fprev::probe::{Probe, ProbeOptions, ReplayProbe};
use fprev::reduce::Replay;
use fprev::reveal::Silent;
use fprev::workflow::{self, Infer, Outcome, Request};

/// Formulas of real kernels and of the language's parts, each with one
/// that differs from it at the sizes used here.
const FORMULAS: [(&str, &str); 6] = [
    (
        "halves(128, 8, body(8, interleave(8, sequential, pairwise), then))",
        "halves(128, 8, body(8, interleave(8, sequential, sequential), then))",
    ),
    (
        "blocks(64, sequential, pairwise)",
        "blocks(32, sequential, pairwise)",
    ),
    ("windows(32, sequential)", "windows(16, sequential)"),
    ("kblocks(448, 16, sequential)", "kblocks(448, sequential)"),
    (
        "interleave(16, sequential, fold)",
        "interleave(16, sequential, pairwise)",
    ),
    ("fanout(2)", "fanout(3)"),
];

/// The black box whose tree `formula` gives at `n`, compiled from its nodes.
fn compiled(formula: &Formula, n: usize, format: Format) -> ReplayProbe {
    ReplayProbe::new(Replay::new(&formula.tree(n), format), format)
}

#[test]
fn a_streamed_replay_agrees_with_the_compiled_tree_and_tells_another_formula() {
    for (n, format) in [
        (70_001, Format::F32),
        (100_003, Format::F64),
        (5_001, Format::F16),
    ] {
        for (right, wrong) in FORMULAS {
            let (right, wrong): (Formula, Formula) =
                (right.parse().unwrap(), wrong.parse().unwrap());
            let mut black_box = compiled(&right, n, format);
            let report = check_formula(&right, &[], &mut black_box, 12, 7, 0).unwrap();
            assert!(
                report.mismatch.is_none(),
                "{right} at n = {n} in {format}: {report:?}"
            );
            let report = check_formula(&wrong, &[], &mut black_box, 12, 7, 0).unwrap();
            assert!(
                report.mismatch.is_some(),
                "{wrong} passed for {right} at n = {n} in {format}"
            );
        }
    }
}

/// `reveal --infer` past `prove_up_to`: the document holds the formula,
/// its confirmation is the streamed replay's, and the arithmetic asked of
/// a smaller tree is claimed only because that replay held it.
#[test]
fn a_prediction_past_the_proof_is_confirmed_streamed_from_its_formula() {
    let n = 300_001;
    for (right, wrong) in FORMULAS {
        let (right, wrong): (Formula, Formula) = (right.parse().unwrap(), wrong.parse().unwrap());
        for (known, holds) in [(&right, true), (&wrong, false)] {
            let mut black_box = compiled(&right, n, Format::F32);
            let request = Request {
                // Known with no size to prove it at (a cached formula is
                // proven at the sizes it claims first): the streamed replay
                // past the proof alone tells a wrong one.
                infer: Some(Infer {
                    known: Some((known.clone(), Vec::new())),
                    prove_up_to: 1_000,
                    ..Infer::default()
                }),
                ..Request::default()
            };
            let mut open = |o: &ProbeOptions| -> fprev::Result<Box<dyn Probe>> {
                Ok(Box::new(compiled(&right, o.n.unwrap(), Format::F32)))
            };
            let outcome = workflow::reveal_opened(
                &mut black_box,
                "compiled",
                &request,
                &mut open,
                &mut Silent,
            )
            .unwrap();
            let Outcome::Revealed(found) = outcome else {
                panic!("{known}: no document")
            };
            let doc = &found.document;
            assert_eq!(doc.formula(), Some(known));
            assert_eq!(doc.n(), n);
            let confirmed = doc.confirmation.as_ref().unwrap().confirmed();
            assert_eq!(confirmed, holds, "{known} for {right}");
            assert_eq!(found.mismatch.is_none(), holds);
            match holds {
                true => assert_eq!(
                    doc.arithmetic.as_ref().map(ToString::to_string).as_deref(),
                    Some("f32")
                ),
                false => assert!(doc.arithmetic.is_none(), "{:?}", doc.arithmetic),
            }
            // The file holds the formula, not the leaves, and reads back as
            // the formula's tree, which a check streams again.
            let json = doc.to_json();
            assert!(json.len() < 4096 && !json.contains("\"tree\""), "{json}");
            let again = TreeDocument::parse(&json).unwrap();
            assert_eq!(again.formula(), Some(known));
            let report = check_document(&again, &mut black_box, 6, 3, 0).unwrap();
            assert_eq!(report.mismatch.is_none(), holds, "{known} for {right}");
        }
    }
}

/// A file may name more summands than this machine can build a tree of:
/// it reads, writes and compares as its formula, and only what needs the
/// nodes refuses, in one line; more than a replay can hold is refused as
/// it is read.
#[test]
fn a_formula_file_too_large_to_build_reads_and_refuses_only_the_nodes() {
    let n: usize = 1 << 28;
    let text = format!(
        r#"{{"n": {n}, "dtype": "f32", "inferred": {{"formula": "blocked:8", "from": [8, 16]}}}}"#
    );
    match TreeDocument::parse(&text) {
        Ok(doc) => {
            assert_eq!(doc.n(), n);
            let json = doc.to_json();
            assert!(json.len() < 1024 && !json.contains("\"tree\""), "{json}");
            let again = TreeDocument::parse(&json).unwrap();
            assert_eq!((again.n(), again.formula()), (n, doc.formula()));
            if fprev::memory::too_large(n).is_some() {
                let why = doc.buildable().unwrap_err();
                assert!(why.contains("of memory to reveal"), "{why}");
            }
        }
        // A machine with less than 9 GB free: refused as read, for the replay.
        Err(e) => assert!(e.to_string().contains("of memory to replay"), "{e}"),
    }
    let text = text.replace(&n.to_string(), &(1usize << 52).to_string());
    let err = TreeDocument::parse(&text).unwrap_err().to_string();
    assert!(err.contains("of memory to replay"), "{err}");
}
