//! # fprev-present: what fprev shows people
//!
//! The [`fprev`] library finds trees, formulas, sweeps, checks and
//! surveys, and keeps them as data; this crate turns that data into text,
//! drawings and pages. The `fprev` command and the Python package both
//! print through it, so a tree reads the same from either.
//!
//! One module per output format or concern:
//!
//! - [`alignment`]: which alignment of its input array a finding holds
//!   for;
//! - [`bound`]: a reveal of fused nodes against the fewest inputs any
//!   reveal needs for them;
//! - [`render`]: a tree drawn: its text form with a summary, Graphviz DOT,
//!   and SVG by the `dot` program (one file per form under `render/`, with
//!   the collapsed outline, shapes and legend of large trees);
//! - [`sweep`]: a sweep as a table ([`sweep::Table`]);
//! - [`cache`]: the formulas the cache keeps, and what clearing it did;
//! - [`check`]: a check's outcome in one line ([`check::summary`]), its
//!   JSON and the mismatch file;
//! - [`compare`]: a comparison of two surveys in text ([`compare::text`])
//!   and JSON ([`compare::json`]), its typed reasons and notes in words;
//! - [`diff`]: a comparison of two tree documents in text, one line, and
//!   JSON;
//! - [`formula`]: a formula of the order language in words
//!   ([`formula::sentence`]);
//! - [`explain`]: an explanation: the formula, its sentence, what it was
//!   checked against;
//! - [`invariance`]: an invariance study in text ([`invariance::text`]);
//! - [`note`]: a workflow's notes, one line each ([`note::Said`]);
//! - [`survey`]: a survey's progress, each entry's line, its end and its
//!   failures ([`survey::summary`]);
//! - [`html`]: a survey, and a comparison of two, as one self-contained
//!   HTML page (askama templates under `templates/`).
//!
//! ```
//! use fprev::Order;
//!
//! let t = Order::Pairwise.tree(4);
//! assert_eq!(fprev_present::render::text(&t).lines().next(), Some(t.to_text().as_str()));
//! ```

pub mod alignment;
pub mod bound;
pub mod cache;
pub mod check;
pub mod compare;
pub mod diff;
pub mod emit;
pub mod explain;
pub mod formula;
pub mod front;
pub mod html;
pub mod invariance;
pub mod note;
pub mod render;
pub mod survey;
pub mod sweep;
