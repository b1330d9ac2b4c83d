//! The workflows every front end runs: a request in, an outcome out.
//!
//! The `fprev` command and the Python package both call these functions
//! with the same options and get the same documents back; neither strings
//! the steps together itself. What is found on the way (an arithmetic
//! model, a prediction, a proof, an order the replay does not confirm) is
//! told to an [`Observer`] as a [`Note`] while the work goes on, and the
//! front end words it for its users.
//!
//! - [`reveal()`]: reveal a black box's tree (or predict it from smaller
//!   sizes and prove it), confirm it by replay and find each node's
//!   arithmetic, and build the [`TreeDocument`](crate::document::TreeDocument);
//! - [`explain()`]: reveal at several sizes and infer the one formula
//!   behind every tree.
//!
//! An order-independent black box (an exact or pre-rounded sum) is an
//! [`Outcome`], not an error: no tree describes it, and that is the answer.
//!
//! ```
//! use fprev::probe::ProbeOptions;
//! use fprev::workflow::{self, Outcome, Request, Silent};
//!
//! let opts = ProbeOptions { n: Some(16), ..Default::default() };
//! let mut black_box = fprev::open("native:pairwise", &opts).unwrap();
//! let mut other_sizes = |n| fprev::open("native:pairwise", &ProbeOptions { n: Some(n), ..opts.clone() });
//! let outcome = workflow::reveal(&mut black_box, "native:pairwise", &Request::default(),
//!                                &mut other_sizes, &mut Silent).unwrap();
//! let Outcome::Revealed(found) = outcome else { panic!("a pairwise sum has a tree") };
//! assert_eq!(found.document.tree, fprev::Order::Pairwise.tree(16));
//! assert!(found.document.confirmation.unwrap().confirmed());
//! ```

mod confirm;
mod explain;
mod note;
mod predict;
mod reveal;

pub use confirm::{Confirm, Confirmed, Seek, confirm};
pub use explain::{Explained, explain};
pub use note::Note;
pub use predict::{Infer, PREDICT_SIZES, PROVE_UP_TO};
pub use reveal::{Outcome, Request, Revealed, reveal};

use crate::probe::Probe;
use crate::reveal::Observer as RevealObserver;

/// Opens the same black box at another number of summands: the reveals of
/// smaller sizes that an explanation or a prediction rests on.
pub type OpenAt<'a> = dyn FnMut(usize) -> crate::Result<Box<dyn Probe>> + 'a;

/// Watches a workflow: the notes found, as they are found, and the
/// progress of each reveal (a progress bar, a log). Every method does
/// nothing unless implemented.
#[allow(unused_variables)]
pub trait Observer: RevealObserver {
    /// Something worth telling the user was found.
    fn note(&mut self, note: Note) {}

    /// The reveal at size `n` starts, after `done` of `total` sizes (an
    /// explanation, or the reveals a prediction rests on).
    fn revealing(&mut self, n: usize, done: usize, total: usize) {}

    /// The reveals at other sizes are done.
    fn sizes_done(&mut self) {}
}

/// An observer that watches nothing.
pub use crate::reveal::Silent;

impl Observer for Silent {}
