//! # fprev: in what order does this implementation add its numbers?
//!
//! A sum, dot product, GEMV, GEMM or reduction is a black box whose
//! floating-point accumulation order decides its result bits. fprev feeds it
//! masked all-one inputs, reconstructs its **summation tree** (binary for IEEE
//! additions, multiway for fused tensor-core sums), and lets you draw it,
//! compare it with another implementation's, and replay it as a reproducible
//! reducer.
//!
//! ```
//! use fprev::{probe, reveal, Options, Order};
//!
//! // A black box: NumPy-style 8-lane summation of 32 f32 values.
//! let opts = probe::ProbeOptions { n: Some(32), ..Default::default() };
//! let mut black_box = fprev::open("native:strided:8", &opts).unwrap();
//!
//! let revealed = reveal(&mut black_box, &Options::default()).unwrap().revealed().unwrap();
//! assert_eq!(revealed.tree, Order::Strided(8).tree(32));
//! println!("{}", revealed.tree); // ((((0+8)+16)+24)+...
//! ```
//!
//! The pieces, one module each, from the bottom layer up (no module uses
//! one above it: `tests/layers.rs` reads the imports and fails on a circle):
//!
//! - [`tree`]: the [`SummationTree`] (petgraph), canonical form, text and JSON forms, diff;
//! - [`format`](mod@format): the number [`Format`]s, masks `M` and units `u`, fused addition;
//! - [`arith`]: what each node computes (format, rounding, a fused node's window);
//! - [`order`]: reference orders ([`Order`]) as loops and as trees;
//! - [`inputs`]: random inputs whose sums depend on the order;
//! - [`error`]: the [`Error`] type, its [`Kind`](error::Kind) and the
//!   [`Remedy`](error::Remedy) it may carry, in terms of settings;
//! - [`bounds`]: the bound of every whole number a user gives, for every front end;
//! - [`reduce`]: reproducible reducers, starting with tree [`Replay`](reduce::Replay);
//! - [`document`], [`shape`]: saving and summarising trees (drawing them, and every
//!   other text, table and page for people, is the `fprev-present` crate's);
//! - [`memory`]: refusing sizes this machine cannot hold, before allocating;
//! - [`probe`]: the [`Probe`] trait (the black box) and the probes of each library;
//! - [`check`](mod@check): confirming a tree by replay on random inputs;
//! - `mpi` (feature `mpi`): MPI jobs, the `mpi:` probes, the distributed reduction;
//! - [`reveal`](mod@reveal): the engine (FPRev's BuildSubtree, BasicFPRev, NaiveSol) and
//!   the arithmetic reveal;
//! - [`spec`]: probe specs ([`Spec`], parsed once), every family in one table, and [`open`];
//! - [`equivalence`]: asserting orders in a test suite (two black boxes, or a saved snapshot);
//! - [`invariance`](mod@invariance): reveals under each setting (threads, environment
//!   variables) grouped by the order found, and the knobs that change it;
//! - [`sizes`]: lists of sizes (`1..64`, `8..1024:8`) and their runs;
//! - [`variation`]: whether the same input gives other bits on other calls, and by how much;
//!   [`skeleton`](mod@skeleton): what stays fixed where it does (the engine finds it);
//! - [`workflow`]: the application layer every front end runs, one module per command:
//!   reveal (or predict and prove), confirm and find the arithmetic, explain, diff, emit,
//!   invariance, [`sweep`](mod@workflow::sweep) (revealing across sizes and thread counts,
//!   and where the order changes) and [`survey`](mod@workflow::survey) (every black box of
//!   a machine surveyed, two surveys compared: the porting report); notes as data,
//!   order-independence as an outcome.

pub mod arith;
pub mod cache;
pub mod check;
pub mod document;
pub mod emit;
pub mod equivalence;
pub mod error;
pub mod format;
pub mod formula;
pub mod inputs;
pub mod invariance;
pub mod machine;
pub mod memory;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod order;
pub mod probe;
pub mod profile;
pub mod reduce;
pub mod reveal;
pub mod shape;
pub mod sizes;
pub mod skeleton;
pub mod spec;
pub mod tree;
pub mod variation;
pub mod workflow;

pub use error::bounds;

pub use error::{Error, Result};
pub use format::Format;
pub use order::Order;
pub use probe::{Dot, Probe};
pub use reveal::{Found, Options, reveal};
pub use spec::{Spec, open};
pub use tree::SummationTree;
