//! Two tree documents compared: their sizes, whether either varies from
//! call to call, their orders modulo child order, then, where both carry
//! one, their arithmetic models (the first node, from the leaves up, where
//! they part).

use crate::arith::{Arithmetic, Parting};
use crate::document::TreeDocument;
use crate::error::{Error, Result};

/// How two tree documents compare.
#[derive(Clone, Debug, PartialEq)]
pub struct Compared {
    /// Their sizes.
    pub n: [usize; 2],
    /// Each one's arithmetic model (`None`: it carries none).
    pub arithmetic: [Option<Arithmetic>; 2],
    /// Where they part (`None`: they agree).
    pub difference: Option<Difference>,
    /// Which hold the skeleton of a black box whose order varies.
    pub varies: [bool; 2],
}

/// Where two trees part, from the first thing compared.
#[derive(Clone, Debug, PartialEq)]
pub enum Difference {
    /// Different numbers of summands.
    Size,
    /// One document or both hold a varying black box's skeleton: no one
    /// order to be equal. Where both do, the skeletons' trees are
    /// compared, and where they part (`None`: the same skeleton).
    Varies(Option<[Option<String>; 2]>),
    /// Different orders: in each tree, the smallest subtree the other
    /// lacks (`None`: every node of it is in the other).
    Order([Option<String>; 2]),
    /// The same order, but a node (its key, as text) computes differently
    /// in each (what it computes in each).
    Node(String, [String; 2]),
    /// The same order and nodes, but the inputs or the products round
    /// differently: the phrase saying how.
    Leaves(String),
}

impl Compared {
    /// Whether they agree in everything compared.
    pub fn same(&self) -> bool {
        self.difference.is_none()
    }

    /// Whether their orders agree (sizes and variation too).
    pub fn same_order(&self) -> bool {
        !matches!(
            self.difference,
            Some(Difference::Size | Difference::Order(_) | Difference::Varies(_))
        )
    }

    /// Whether both carry an arithmetic model and their orders agree, so
    /// that the models were compared too.
    pub fn arithmetic_compared(&self) -> bool {
        self.arithmetic.iter().all(Option::is_some) && self.same_order()
    }
}

/// Compares `left` and `right`. Fails only where a document's formula
/// gives more nodes than fit in memory, and the two are not one formula's
/// tree with one arithmetic (which agree without a node built).
///
/// ```
/// use fprev::document::TreeDocument;
/// use fprev::workflow::diff::{Difference, diff};
///
/// let a = TreeDocument::new("((0+1)+(2+3))".parse().unwrap());
/// let b = TreeDocument::new("(((0+1)+2)+3)".parse().unwrap());
/// let c = diff(&a, &b).unwrap();
/// assert_eq!(
///     c.difference,
///     Some(Difference::Order([Some("(2+3)".into()), Some("((0+1)+2)".into())]))
/// );
/// assert!(diff(&a, &a).unwrap().same());
/// ```
pub fn diff(left: &TreeDocument, right: &TreeDocument) -> Result<Compared> {
    let varies = [left.varies.is_some(), right.varies.is_some()];
    let of = |difference| Compared {
        n: [left.n(), right.n()],
        arithmetic: [left.arithmetic.clone(), right.arithmetic.clone()],
        difference,
        varies,
    };
    if same_formula(left, right) {
        return Ok(of(None));
    }
    // Trees are compared node by node: a formula may give more nodes than
    // fit.
    for doc in [left, right] {
        doc.buildable().map_err(Error::Input)?;
    }
    let (l, r) = (left.tree(), right.tree());
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
    Ok(of(difference))
}

/// Whether both hold one formula's tree at one size, with the same
/// arithmetic (or none): then they agree, and no node need be built.
fn same_formula(left: &TreeDocument, right: &TreeDocument) -> bool {
    left.same_formula(right)
        && left.arithmetic == right.arithmetic
        && left.varies.is_none()
        && right.varies.is_none()
}
