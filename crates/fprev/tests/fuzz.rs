//! The parsers of what users write, fuzzed: the formula language, tree
//! files (text and JSON forms, with arithmetic models) and survey files.
//! Whatever the text, a parser answers with a value or an error, never a
//! panic, an allocation sized by a number in the text, or a stack overflow;
//! and what it accepts is usable (a formula's trees, a model's replay, a
//! survey's comparison) and reads back the same once written.
//!
//! Each property runs a fixed number of cases (`CASES`), a few seconds in a
//! debug build.

use std::sync::OnceLock;

use fprev::document::TreeDocument;
use fprev::formula::{Formula, MAX_DEPTH};
use fprev::order::MAX_PARAMETER;
use fprev::reduce::Replay;
use fprev::workflow::survey::compare::compare;
use fprev::workflow::survey::{Scope, Survey};
use fprev::{Format, SummationTree};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Cases each property runs.
const CASES: u32 = 2048;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Numbers as users write them: small ones, the bound and past it, the
/// largest `u64` and past it.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0u64..20).prop_map(|v| v.to_string()),
        1 => any::<u64>().prop_map(|v| v.to_string()),
        1 => prop::sample::select(vec![
            MAX_PARAMETER.to_string(),
            (MAX_PARAMETER + 1).to_string(),
            "9223372036854775808".to_string(),
            "18446744073709551615".to_string(),
            "18446744073709551616".to_string(),
            "99999999999".to_string(),
        ]),
    ]
}

// ---------------------------------------------------------------------------
// The formula language
// ---------------------------------------------------------------------------

/// Text made of the formula language's words, numbers and punctuation in
/// any order: mostly not a formula.
fn formula_soup() -> impl Strategy<Value = String> {
    let word = prop::sample::select(vec![
        "sequential",
        "reverse",
        "pairwise",
        "binary-tree",
        "strided:",
        "blocked:",
        "fused:",
        "doubling",
        "fold",
        "interleave(",
        "blocks(",
        "body(",
        "halves(",
        "bisect(",
        "lead(",
        "below(",
        "windows(",
        "split(",
        "pieces(",
        "kblocks(",
        "peel(",
        "rotate(",
        "fanout(",
        "simd(",
        "[",
        "]",
        "+",
        "first(",
        "then",
        "first",
        "(",
        ")",
        ",",
        ", ",
        "x",
        "…",
    ])
    .prop_map(str::to_string);
    prop::collection::vec(prop_oneof![3 => word, 1 => number()], 0..40)
        .prop_map(|tokens| tokens.concat())
}

/// A formula as [`Formula`]'s `Display` writes it, any part with any
/// numbers the language allows.
fn formula_text() -> impl Strategy<Value = String> {
    let count = || {
        prop_oneof![
            8 => 1usize..40,
            1 => Just(MAX_PARAMETER),
            1 => 1usize..=MAX_PARAMETER,
        ]
    };
    let leaf = prop_oneof![
        Just("sequential".to_string()),
        Just("reverse".to_string()),
        Just("pairwise".to_string()),
        Just("binary-tree".to_string()),
        Just("doubling".to_string()),
        Just("fold".to_string()),
        count().prop_map(|k| format!("strided:{k}")),
        count().prop_map(|k| format!("blocked:{k}")),
        count().prop_map(|k| format!("fused:{}", k.max(2))),
        count().prop_map(|k| format!("fanout({})", k.max(2))),
    ];
    leaf.prop_recursive(6, 48, 3, move |inner| {
        prop_oneof![
            (count(), inner.clone(), inner.clone()).prop_map(|(k, a, b)| format!(
                "{}({k}, {a}, {b})",
                ["interleave", "blocks", "split"][k % 3]
            )),
            (count(), inner.clone(), inner.clone())
                .prop_map(|(m, a, b)| format!("below({m}, {a}, {b})")),
            (count(), inner.clone(), inner.clone(), any::<bool>()).prop_map(|(m, a, b, then)| {
                match then {
                    true => format!("body({m}, {a}, then)"),
                    false => format!("body({m}, {a}, {b})"),
                }
            }),
            (count(), count(), inner.clone())
                .prop_map(|(l, m, a)| format!("halves({l}, {m}, {a})")),
            (count(), inner.clone()).prop_map(|(w, a)| format!("windows({}, {a})", w.max(2))),
            (1usize..8, inner.clone()).prop_map(|(d, a)| format!("bisect({d}, {a})")),
            (count(), inner.clone(), inner.clone())
                .prop_map(|(m, a, b)| format!("lead({m}, {a}, {b})")),
            (count(), count(), inner.clone()).prop_map(|(q, u, a)| {
                let (q, u) = (q.max(u), q.min(u));
                format!("kblocks({q}, {u}, {a})")
            }),
            (prop::collection::btree_set(1usize..40, 1..4), inner.clone()).prop_map(
                |(steps, a)| {
                    let steps: Vec<String> = steps.iter().rev().map(usize::to_string).collect();
                    format!("pieces({}, {a})", steps.join(", "))
                }
            ),
            (2usize..9, inner.clone(), inner.clone())
                .prop_map(|(k, a, b)| format!("peel({}, interleave({k}, {a}, {b}))", k - 1)),
            (count(), inner.clone()).prop_map(|(k, a)| format!("rotate({k}, {a})")),
            // A kernel of two stages, its first merged into the second's
            // registers or kept, its rest apart or into the first lane.
            (
                1usize..17,
                2usize..9,
                any::<bool>(),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(w, u, merge, fold, rest)| {
                    let merged = match merge {
                        true => format!(
                            "[{}]",
                            (0..u).map(|r| r.to_string()).collect::<Vec<_>>().join("+")
                        ),
                        false => String::new(),
                    };
                    let second = if merge { 1 } else { u - 1 };
                    format!("simd({w}, {u}{merged}, {second}, {fold}, first({rest}))")
                }),
        ]
    })
}

/// What is asked of every formula read: it writes back as it reads, and
/// its trees at small sizes hold their summands.
fn formula_is_usable(f: &Formula) {
    let again: Formula = f.to_string().parse().expect("a formula reads back");
    assert_eq!(&again, f);
    for n in [1, 2, 3, 5, 8, 17, 33] {
        let tree = f.tree(n);
        assert_eq!(tree.n(), n, "{f} at {n}");
        assert!(f.parts(&tree).is_some(), "{f} at {n}");
    }
}

/// `text` with a few edits at random places: a token of `token` put in, a
/// character taken out, a number replaced: mostly near a valid text.
fn mutated(
    text: impl Strategy<Value = String>,
    token: impl Strategy<Value = String> + Clone,
) -> impl Strategy<Value = String> {
    let edit = (any::<prop::sample::Index>(), 0u8..3, token);
    (text, prop::collection::vec(edit, 0..4)).prop_map(|(mut text, edits)| {
        for (at, kind, token) in edits {
            let numbers = digit_runs(&text);
            let bounds: Vec<usize> = (0..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .collect();
            let i = bounds[at.index(bounds.len())];
            match kind {
                0 => text.insert_str(i, &token),
                1 if i < text.len() => {
                    let next = bounds
                        .iter()
                        .find(|&&j| j > i)
                        .copied()
                        .unwrap_or(text.len());
                    text.replace_range(i..next, "");
                }
                _ if !numbers.is_empty() => {
                    let (start, end) = numbers[at.index(numbers.len())];
                    let digits: String = token.chars().filter(char::is_ascii_digit).collect();
                    text.replace_range(start..end, if digits.is_empty() { "0" } else { &digits });
                }
                _ => {}
            }
        }
        text
    })
}

fn formula_token() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        prop::sample::select(vec![
            "(",
            ")",
            ",",
            "then",
            "first",
            "fused:",
            "windows(2,",
            "simd(8, 4[0+1, 2+3], 2, ",
            "[",
            "+",
            "x"
        ])
        .prop_map(str::to_string),
        number(),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_text_reads_as_a_formula_or_an_error(
        text in prop_oneof![formula_soup(), mutated(formula_text(), formula_token())]
    ) {
        if let Ok(f) = text.parse::<Formula>() {
            formula_is_usable(&f);
        }
    }

    #[test]
    fn every_formula_of_the_language_reads_and_runs(text in formula_text()) {
        let f: Formula = text.parse().map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        formula_is_usable(&f);
    }

    #[test]
    fn nesting_is_bounded_whether_closed_or_not(depth in 1usize..3000, closed in any::<bool>()) {
        let text = format!(
            "{}sequential{}",
            "windows(2, ".repeat(depth),
            if closed { ")".repeat(depth) } else { String::new() }
        );
        let read = text.parse::<Formula>();
        prop_assert_eq!(read.is_ok(), closed && depth < MAX_DEPTH, "{:?}", read.err());
    }
}

// ---------------------------------------------------------------------------
// Tree files
// ---------------------------------------------------------------------------

/// Text made of both tree forms' characters and numbers.
fn tree_soup() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        3 => prop::sample::select(vec!["(", ")", "+", "[", "]", ",", " "]).prop_map(str::to_string),
        2 => number(),
    ];
    prop::collection::vec(token, 0..40).prop_map(|t| t.concat())
}

fn tree_token() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        prop::sample::select(vec!["(", ")", "+", "[", "]", ","]).prop_map(str::to_string),
        number(),
    ]
}

/// A random tree's JSON form with, now and then, one leaf index replaced
/// by `leaf`.
fn tree_json() -> impl Strategy<Value = (usize, String)> {
    (
        1usize..12,
        any::<u64>(),
        prop::option::of((any::<prop::sample::Index>(), number())),
    )
        .prop_map(|(n, seed, swap)| {
            let text = SummationTree::random(n, 4, seed).to_json_tree();
            let text = match swap {
                Some((at, leaf)) => {
                    let numbers: Vec<(usize, usize)> = digit_runs(&text);
                    let (start, end) = numbers[at.index(numbers.len())];
                    format!("{}{leaf}{}", &text[..start], &text[end..])
                }
                None => text,
            };
            (n, text)
        })
}

/// Where the numbers of `text` are: `(start, end)` byte ranges.
fn digit_runs(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (c.is_ascii_digit(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// An arithmetic model, some of it sensible, some of it not.
fn model(n: usize) -> impl Strategy<Value = Value> {
    let format = prop::sample::select(vec!["f16", "bf16", "f32", "f64", "x87", "e4m3", "nope"]);
    let rounding = prop::sample::select(vec!["nearest-even", "toward-zero"]);
    let bits = prop::option::of(prop_oneof![0u32..70, any::<u32>()]);
    let index = move || prop_oneof![4 => 0..n + 2, 1 => any::<usize>()];
    let node = (
        index(),
        index(),
        format.clone(),
        rounding.clone(),
        bits.clone(),
    )
        .prop_map(|(first, size, format, rounding, bits)| {
            let mut node = json!({"first": first, "size": size, "format": format,
                                  "rounding": rounding});
            if let Some(b) = bits {
                node["fused_bits"] = json!(b);
            }
            node
        });
    let product = prop::sample::select(vec!["exact", "f32", "bf16", "f64"]);
    let products = prop::option::of((
        product.clone(),
        prop::collection::btree_map(index(), product, 0..3),
    ));
    (
        prop_oneof![0u32..6, any::<u32>()],
        format,
        rounding,
        bits,
        prop::collection::vec(node, 0..3),
        products,
    )
        .prop_map(|(version, format, rounding, bits, nodes, products)| {
            let mut m = json!({
                "version": version,
                "default": {"format": format, "rounding": rounding},
                "nodes": nodes,
            });
            if let Some(b) = bits {
                m["default"]["fused_bits"] = json!(b);
            }
            if let Some((default, leaves)) = products {
                let leaves: serde_json::Map<String, Value> = leaves
                    .into_iter()
                    .map(|(i, p)| (i.to_string(), json!(p)))
                    .collect();
                m["products"] = json!({"default": default, "leaves": leaves});
            }
            m
        })
}

fn tree_document() -> impl Strategy<Value = String> {
    tree_json().prop_flat_map(|(n, tree)| {
        (
            Just(tree),
            prop::option::of(model(n)),
            prop::option::of(prop_oneof![Just(n), 0..n + 3, any::<usize>()]),
        )
            .prop_map(|(tree, model, count)| {
                let mut fields = vec![];
                if let Some(c) = count {
                    fields.push(format!("\"n\": {c}"));
                }
                fields.push(format!("\"tree\": {tree}"));
                if let Some(m) = model {
                    fields.push(format!("\"arithmetic\": {m}"));
                }
                format!("{{{}}}", fields.join(", "))
            })
    })
}

/// What is asked of every tree read: its leaves are `0..n`, it writes
/// back as it reads.
fn tree_is_usable(tree: &SummationTree) {
    assert!(tree.n() >= 1);
    assert_eq!(&tree.to_text().parse::<SummationTree>().unwrap(), tree);
    assert_eq!(
        &SummationTree::from_json_tree(&tree.to_json_tree()).unwrap(),
        tree
    );
    let ones = vec![1.0; tree.n()];
    assert_eq!(Replay::new(tree, Format::F64).sum(&ones), tree.n() as f64);
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_text_reads_as_a_tree_or_an_error(
        text in prop_oneof![
            tree_soup(),
            mutated(tree_json().prop_map(|(_, t)| t), tree_token()),
            mutated(
                (1usize..12, any::<u64>()).prop_map(|(n, seed)| SummationTree::random(n, 4, seed).to_text()),
                tree_token(),
            ),
        ]
    ) {
        for tree in [text.parse::<SummationTree>(), SummationTree::from_json_tree(&text)]
            .into_iter()
            .flatten()
        {
            tree_is_usable(&tree);
        }
    }

    #[test]
    fn tree_files_read_whole_or_not_at_all(text in tree_document()) {
        let Ok(doc) = TreeDocument::parse(&text) else {
            return Ok(());
        };
        tree_is_usable(doc.tree());
        let n = doc.n();
        if let Some(model) = &doc.arithmetic {
            // The replay a model is read for runs, sums and dots.
            let replay = Replay::with_arithmetic(doc.tree(), model);
            let x: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
            let _ = replay.sum(&x);
            let _ = replay.dot(&x, &x);
        }
        let again = TreeDocument::parse(&doc.to_json()).expect("a tree file reads back");
        prop_assert_eq!(again.tree(), doc.tree());
        prop_assert_eq!(again.arithmetic, doc.arithmetic);
    }
}

// ---------------------------------------------------------------------------
// Survey files
// ---------------------------------------------------------------------------

/// A real survey: two native black boxes at sizes 1 to 12, one kept
/// explained by its formula, the other with every tree written out.
fn base_survey() -> &'static Value {
    static BASE: OnceLock<Value> = OnceLock::new();
    BASE.get_or_init(|| {
        let mut survey = Survey::new(Scope {
            black_boxes: vec!["native:strided:4".into(), "native:pairwise".into()],
            dtypes: vec![Format::F32],
            sizes: "1..12".parse().unwrap(),
            large: fprev::sizes::Sizes(Vec::new()),
            ..Scope::default()
        });
        survey
            .run(&mut fprev::Spec::open, &mut |_| {}, &mut |_| Ok(()))
            .unwrap();
        let mut value: Value =
            serde_json::from_str(&survey.to_json(&|f| f.to_string(), &detail_words)).unwrap();
        let formula: Formula = "pairwise".parse().unwrap();
        let entry = &mut value["entries"][1];
        entry["formula"] = Value::Null;
        for size in entry["sizes"].as_array_mut().unwrap() {
            let n = size["n"].as_u64().unwrap() as usize;
            size["tree"] = json!(formula.tree(n).to_text());
        }
        value
    })
}

/// Every place in `value`, as JSON pointers.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(m) => {
            for (k, v) in m {
                pointers(v, format!("{at}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                pointers(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// A number to write in a survey's place of a number.
fn survey_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        number().prop_map(|v| serde_json::from_str(&v).unwrap_or(json!(0))),
        Just(json!(0)),
        Just(json!(13)),
        Just(json!(1_000_000_000_000u64)),
    ]
}

/// A string to write in a survey's place of a string: a formula, a tree,
/// an outcome, near valid or not.
fn survey_string() -> impl Strategy<Value = Value> {
    prop_oneof![
        mutated(formula_text(), formula_token()),
        mutated(
            (1usize..14, any::<u64>())
                .prop_map(|(n, seed)| SummationTree::random(n, 3, seed).to_text()),
            tree_token(),
        ),
        prop::sample::select(vec![
            "tree",
            "unconfirmed",
            "broken",
            "skipped",
            "order-independent",
            "((0+0)+1)",
            "((0+1)+(2+18446744073709551615))",
            "f64",
            "toward-zero",
        ])
        .prop_map(str::to_string),
    ]
    .prop_map(Value::from)
}

/// A model to write in a size's place of one.
fn survey_object() -> impl Strategy<Value = Value> {
    (1usize..14).prop_flat_map(model)
}

#[derive(Clone, Debug)]
enum Edit {
    /// The place's value replaced by one of its kind: a number, a string
    /// or (of a size's `arithmetic`) a model.
    Set(Value, Value, Value),
    /// The place (an array's item, or an object's optional key) removed.
    Remove,
    /// The place's array item written twice.
    Twice,
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        6 => (survey_number(), survey_string(), survey_object())
            .prop_map(|(n, s, o)| Edit::Set(n, s, o)),
        1 => Just(Edit::Remove),
        1 => Just(Edit::Twice),
    ]
}

fn apply(value: &mut Value, at: &str, edit: &Edit) {
    if let Edit::Set(number, string, object) = edit {
        let Some(place) = value.pointer_mut(at) else {
            return;
        };
        *place = match place {
            Value::Number(_) => number.clone(),
            Value::String(_) => string.clone(),
            Value::Object(_) if at.ends_with("/arithmetic") => object.clone(),
            _ => return,
        };
        return;
    }
    let Some((parent, key)) = at.rsplit_once('/') else {
        return;
    };
    match value.pointer_mut(parent) {
        // Only what a survey may leave out: a key it requires gives
        // serde's own error, and is not worth a case.
        Some(Value::Object(m)) if ["tree", "arithmetic", "formula"].contains(&key) => {
            m.remove(key);
        }
        Some(Value::Array(a)) => {
            let i: usize = key.parse().unwrap();
            match edit {
                Edit::Remove => {
                    a.remove(i);
                }
                _ => {
                    let item = a[i].clone();
                    a.insert(i, item);
                }
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn survey_files_read_whole_or_not_at_all(
        edits in prop::collection::vec((any::<prop::sample::Index>(), edit()), 1..4)
    ) {
        let base = base_survey();
        let mut text = base.clone();
        for (at, e) in &edits {
            // The entries, where the survey's sizes, trees and models are,
            // and the layout's version.
            let mut places = vec!["/fprev_survey".to_string()];
            pointers(&text["entries"], "/entries".into(), &mut places);
            let place = places[at.index(places.len())].clone();
            apply(&mut text, &place, e);
        }
        let Ok(survey) = Survey::parse(&text.to_string()) else {
            return Ok(());
        };
        // What reads compares, with itself and with the survey it came from.
        let original = Survey::parse(&base.to_string()).unwrap();
        let _ = compare(&survey, &original);
        let _ = compare(&original, &survey);
        let same = compare(&survey, &survey);
        prop_assert_eq!(same.entries.len(), survey.entries.len());
        let again = Survey::parse(&survey.to_json(&|f| f.to_string(), &detail_words)).expect("a survey reads back");
        prop_assert_eq!(again, survey);
    }
}

/// A thread check's line in words, in these tests: what a file recorded as
/// it was (a survey read back is written the same).
fn detail_words(d: &fprev::workflow::survey::Detail) -> String {
    match d {
        fprev::workflow::survey::Detail::Recorded(words) => words.clone(),
        other => format!("{other:?}"),
    }
}
