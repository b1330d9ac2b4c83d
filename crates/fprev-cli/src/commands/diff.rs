//! `fprev diff`: compare two saved trees modulo child order, and say so as
//! text, as one JSON object (`--format json`) or by the exit status alone
//! (`--quiet`).

use fprev::arith::Parting;
use fprev::document::TreeDocument;
use fprev::error::{Error, Result};
use serde_json::{Value, json};

use crate::args::{DiffArgs, Report};
use crate::write;

/// How two tree files compare: everything the text and the JSON say.
struct Comparison {
    /// The two files' names, as given.
    a: String,
    b: String,
    /// Their sizes.
    n: [usize; 2],
    /// Each file's arithmetic model, as text (`None`: it carries none).
    arithmetic: [Option<String>; 2],
    /// Where they part (`None`: they agree).
    difference: Option<Difference>,
    /// Which files hold the skeleton of a black box whose order varies.
    varies: [bool; 2],
}

/// Where two trees part, from the first thing compared.
enum Difference {
    /// Different numbers of summands.
    Size,
    /// One file or both hold a varying black box's skeleton: no one order
    /// to be equal. Where both do, the skeletons' trees are compared, and
    /// where they part (`None`: the same skeleton).
    Varies(Option<[Option<String>; 2]>),
    /// Different orders: in each tree, the smallest subtree the other lacks
    /// (`None`: every node of it is in the other).
    Order([Option<String>; 2]),
    /// The same order, but a node (its key, as text) computes differently
    /// in each (what it computes in each).
    Node(String, [String; 2]),
    /// The same order and nodes, but the inputs or the products round
    /// differently: the phrase saying how.
    Leaves(String),
}

/// Runs `fprev diff`: 0 when the trees agree, 1 when they differ (with the
/// first subtrees where they part).
pub(super) fn run(a: DiffArgs) -> Result<i32> {
    let (left, right) = (TreeDocument::read(&a.a)?, TreeDocument::read(&a.b)?);
    let c = match same_formula(&left, &right) {
        true => Comparison::of(&a, &left, &right, None),
        false => {
            // Trees are compared node by node: a file's formula may give
            // more nodes than fit.
            for doc in [&left, &right] {
                doc.buildable().map_err(Error::Input)?;
            }
            compare(&a, &left, &right)
        }
    };
    match a.report.report() {
        Report::Quiet => {}
        Report::Json => write::println(format_args!("{:#}", c.json()))?,
        Report::Text => write::print(c.text().as_bytes())?,
    }
    Ok(if c.difference.is_some() { 1 } else { 0 })
}

/// Compares the trees `left` (file `a.a`) and `right` (file `a.b`): the
/// order modulo child order first, then, where both carry one, the
/// arithmetic models (the first node, from the leaves up, where they part).
fn compare(a: &DiffArgs, left: &TreeDocument, right: &TreeDocument) -> Comparison {
    let (l, r) = (left.tree(), right.tree());
    let varies = [left.varies.is_some(), right.varies.is_some()];
    let difference = match l.diff(r) {
        Some(_) if l.n() != r.n() => Some(Difference::Size),
        d if varies.contains(&true) => Some(Difference::Varies(d.map(|d| d.texts(l, r)))),
        Some(d) => Some(Difference::Order(d.texts(l, r))),
        None => match (&left.arithmetic, &right.arithmetic) {
            // Models name nodes by their leaves, so either tree serves.
            (Some(x), Some(y)) => x.parting(y, l).map(|p| match p {
                Parting::Node(key, p, q) => {
                    Difference::Node(key.to_string(), [p.to_string(), q.to_string()])
                }
                Parting::Leaves(what) => Difference::Leaves(what),
            }),
            _ => None,
        },
    };
    Comparison::of(a, left, right, difference)
}

/// Whether both files hold one formula's tree at one size, with the same
/// arithmetic (or none): then they agree, and no node need be built.
fn same_formula(left: &TreeDocument, right: &TreeDocument) -> bool {
    left.same_formula(right)
        && left.arithmetic == right.arithmetic
        && left.varies.is_none()
        && right.varies.is_none()
}

impl Comparison {
    /// The comparison of `left` and `right` that found `difference`.
    fn of(
        a: &DiffArgs,
        left: &TreeDocument,
        right: &TreeDocument,
        difference: Option<Difference>,
    ) -> Self {
        Comparison {
            a: a.a.display().to_string(),
            b: a.b.display().to_string(),
            n: [left.n(), right.n()],
            arithmetic: [&left.arithmetic, &right.arithmetic]
                .map(|m| m.as_ref().map(|m| m.to_string())),
            difference,
            varies: [left.varies.is_some(), right.varies.is_some()],
        }
    }
}

/// Each file's part where two trees part, one line each.
fn parting(a: &str, b: &str, parts: &[Option<String>; 2]) -> String {
    let mut text = String::new();
    for (path, part) in [a, b].into_iter().zip(parts) {
        let part = part
            .as_deref()
            .unwrap_or("(every node is in the other tree)");
        text += &format!("  {path}: {part}\n");
    }
    text
}

impl Comparison {
    /// Whether both files carry an arithmetic model and their orders agree,
    /// so that the models were compared too.
    fn arithmetic_compared(&self) -> bool {
        self.arithmetic.iter().all(Option::is_some)
            && !matches!(
                self.difference,
                Some(Difference::Size | Difference::Order(_) | Difference::Varies(_))
            )
    }

    /// What `fprev diff` prints for people, lines ending in newlines.
    fn text(&self) -> String {
        let (a, b, [n, nb]) = (&self.a, &self.b, self.n);
        match &self.difference {
            Some(Difference::Size) => {
                format!("different: {a} has {n} summands, {b} has {nb}\n")
            }
            Some(Difference::Varies(parts)) => {
                let one = |path: &str, varies: bool| match varies {
                    true => {
                        format!("{path} varies from call to call (the file holds its skeleton)")
                    }
                    false => format!("{path} sums in one order"),
                };
                match (self.varies, parts) {
                    ([true, true], None) => "different: both vary from call to call, with the \
                                             same skeleton (fixed subtrees and varying joins), \
                                             so neither has one order nor the other's bits\n"
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
            None => match &self.arithmetic {
                [Some(model), Some(_)] => format!(
                    "equal: the trees of {n} summands agree modulo child order, and so does their \
                     arithmetic ({model})\n"
                ),
                [None, None] => {
                    format!("equal: the trees of {n} summands agree modulo child order\n")
                }
                [l, _] => format!(
                    "equal: the trees of {n} summands agree modulo child order (only {} carries \
                     an arithmetic model, so their bits were not compared)\n",
                    if l.is_some() { a } else { b }
                ),
            },
        }
    }

    /// What `fprev diff --format json` prints: one object, every key always
    /// there (null where it does not apply), written in alphabetical order
    /// (the order serde_json keeps).
    fn json(&self) -> Value {
        let (differs_in, a_has, b_has, node, detail) = match &self.difference {
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
            "a": self.a,
            "a_has": a_has,
            "arithmetic": self.arithmetic,
            "arithmetic_compared": self.arithmetic_compared(),
            "b": self.b,
            "b_has": b_has,
            "detail": detail,
            "differs_in": differs_in,
            "n": self.n,
            "node": node,
            "same": self.difference.is_none(),
            "same_order": !matches!(
                self.difference,
                Some(Difference::Size | Difference::Order(_) | Difference::Varies(_))
            ),
            "varies": self.varies,
        })
    }
}
