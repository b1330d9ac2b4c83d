//! Surveying a machine (`fprev survey`): every black box it has (NumPy, JAX,
//! PyTorch, each BLAS found at run time, ndarray, Rayon), each op (sum, dot,
//! GEMV, GEMM) and dtype, explained over a spread of sizes: the order's
//! formula and where it changes, what each node computes, whether its
//! answers vary from call to call, and whether the thread count changes
//! the tree; and, asked to ([`Scope::knobs`]), which settings of its
//! library change its order ([`knobs_for`]). Two surveys are compared by
//! [`compare`], which names a recorded knob set differently on the two
//! machines, and, for two simulated GPUs ([`gpu`]), what each matched
//! instruction's arithmetic changes; the `fprev-present` crate draws
//! either as a page.
//!
//! A survey is built entry by entry ([`Survey::run`]), so a caller can save
//! it after each one and a later run goes on where an earlier one stopped;
//! [`survey()`] runs one from what a front end was asked ([`Request`]),
//! kept in the front end's [`Store`].
//!
//! ```
//! use fprev::workflow::survey::{Scope, Survey};
//! use fprev::Format;
//!
//! let plan = Scope {
//!     black_boxes: vec!["native:strided:4".into()],
//!     dtypes: vec![Format::F32],
//!     sizes: "1..24".parse().unwrap(),
//!     ..Scope::default()
//! };
//! let mut survey = Survey::new(plan);
//! survey.run(&mut fprev::Spec::open, &mut |_| {}, &mut |_| Ok(())).unwrap();
//! let entry = &survey.entries[0];
//! assert_eq!(entry.formula.as_deref(), Some("strided:4"));
//! // Every tree comes back from the formula, bit for bit confirmed by replay.
//! assert!(entry.sizes.iter().all(|s| s.arithmetic.is_some()));
//! ```

pub mod compare;
mod file;
pub mod gpu;
mod knobs;
mod library;
mod request;
pub use crate::machine;
mod run;
mod scope;
mod work;

pub use file::{
    Detail, Entry, KnobCheck, ModelCheck, SURVEY_VERSION, SizeResult, Status, Survey, ThreadCheck,
    ThreadVaried,
};
pub use knobs::{CORETYPES, KnobTrial, cpu_runs, knobs_for};
pub use library::{Libraries, Library, facts_of, libraries, selects};
pub use machine::Machine;
pub use request::{Outcome, Request, Store, Surveyed, plan, survey};
pub use run::Step;

pub use scope::{LARGE_SIZES, OPS, SURVEY_RUNS, Scope, THREAD_SIZES};
pub use work::Opener;
