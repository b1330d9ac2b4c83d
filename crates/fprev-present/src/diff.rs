//! Two tree documents' comparison ([`fprev::workflow::diff`]) in words:
//! the lines `fprev diff` prints, its JSON object, and the one line the
//! Python package's `fprev.diff` returns.

use fprev::workflow::diff::{Compared, Difference};
use serde_json::{Value, json};

/// Each document's part where two trees part, one line each.
fn parting(a: &str, b: &str, parts: &[Option<String>; 2]) -> String {
    let mut text = String::new();
    for (name, part) in [a, b].into_iter().zip(parts) {
        text += &format!("  {name}: {}\n", part_of(part));
    }
    text
}

/// A part where two trees part, or that there is none.
fn part_of(part: &Option<String>) -> &str {
    part.as_deref()
        .unwrap_or("(every node is in the other tree)")
}

/// The comparison of documents named `a` and `b`, for people: lines
/// ending in newlines, the first saying `equal` or `different` or `same
/// order, different arithmetic`.
pub fn text(c: &Compared, a: &str, b: &str) -> String {
    let [n, nb] = c.n;
    match &c.difference {
        Some(Difference::Size) => format!("different: {a} has {n} summands, {b} has {nb}\n"),
        Some(Difference::Varies(parts)) => {
            let one = |name: &str, varies: bool| match varies {
                true => format!("{name} varies from call to call (the file holds its skeleton)"),
                false => format!("{name} sums in one order"),
            };
            match (c.varies, parts) {
                ([true, true], None) => "different: both vary from call to call, with the same \
                                         skeleton (fixed subtrees and varying joins), so neither \
                                         has one order nor the other's bits\n"
                    .to_string(),
                ([true, true], Some(parts)) => {
                    "different: both vary from call to call, and their skeletons part at\n"
                        .to_string()
                        + &parting(a, b, parts)
                }
                ([x, y], _) => format!("different: {}; {}\n", one(a, x), one(b, y)),
            }
        }
        Some(Difference::Order(parts)) => {
            "different: the trees part at\n".to_string() + &parting(a, b, parts)
        }
        Some(Difference::Node(key, [x, y])) => format!(
            "same order, different arithmetic: the trees of {n} summands agree modulo child \
             order, but at {key} {a} computes {x} and {b} computes {y}\n"
        ),
        Some(Difference::Leaves(what)) => format!(
            "same order, different arithmetic: the trees of {n} summands agree modulo child \
             order, and so do their nodes, but {what} ({a} against {b})\n"
        ),
        None => match &c.arithmetic {
            [Some(model), Some(_)] => format!(
                "equal: the trees of {n} summands agree modulo child order, and so does their \
                 arithmetic ({model})\n"
            ),
            [None, None] => format!("equal: the trees of {n} summands agree modulo child order\n"),
            [l, _] => format!(
                "equal: the trees of {n} summands agree modulo child order (only {} carries an \
                 arithmetic model, so their bits were not compared)\n",
                if l.is_some() { a } else { b }
            ),
        },
    }
}

/// Where documents named `a` and `b` part, in one line (`None`: they
/// agree): `a has (2+3), b has ((0+1)+2)` where their orders part.
///
/// ```
/// use fprev::document::TreeDocument;
/// use fprev::workflow::diff::diff;
///
/// let a = TreeDocument::new("((0+1)+(2+3))".parse().unwrap());
/// let b = TreeDocument::new("(((0+1)+2)+3)".parse().unwrap());
/// let line = fprev_present::diff::line(&diff(&a, &b).unwrap(), "a", "b");
/// assert_eq!(line.as_deref(), Some("a has (2+3), b has ((0+1)+2)"));
/// ```
pub fn line(c: &Compared, a: &str, b: &str) -> Option<String> {
    Some(match c.difference.as_ref()? {
        Difference::Order(parts) => {
            format!(
                "{a} has {}, {b} has {}",
                part_of(&parts[0]),
                part_of(&parts[1])
            )
        }
        _ => text(c, a, b).replace("\n  ", "; ").trim_end().to_string(),
    })
}

/// The comparison as one JSON object, every key always there (null where
/// it does not apply), in alphabetical order (the order serde_json keeps).
pub fn json(c: &Compared, a: &str, b: &str) -> Value {
    let (differs_in, a_has, b_has, node, detail) = match &c.difference {
        None => (None, None, None, None, None),
        Some(Difference::Size) => (Some("size"), None, None, None, None),
        Some(Difference::Varies(parts)) => {
            let [x, y] = parts.clone().unwrap_or_default();
            (Some("varies"), x, y, None, None)
        }
        Some(Difference::Order([x, y])) => (Some("order"), x.clone(), y.clone(), None, None),
        Some(Difference::Node(key, [x, y])) => (
            Some("arithmetic"),
            Some(x.clone()),
            Some(y.clone()),
            Some(key.clone()),
            None,
        ),
        Some(Difference::Leaves(what)) => {
            (Some("arithmetic"), None, None, None, Some(what.clone()))
        }
    };
    json!({
        "a": a,
        "a_has": a_has,
        "arithmetic": c.arithmetic.each_ref().map(|m| m.as_ref().map(|m| m.to_string())),
        "arithmetic_compared": c.arithmetic_compared(),
        "b": b,
        "b_has": b_has,
        "detail": detail,
        "differs_in": differs_in,
        "n": c.n,
        "node": node,
        "same": c.same(),
        "same_order": c.same_order(),
        "varies": c.varies,
    })
}
