//! `fprev explain`'s flags.

use clap::Args;

use fprev::Spec;
use fprev::check;
use fprev::formula::infer::EXPLAIN_SIZES;
use fprev::probe::Offset;
use fprev::sizes::Sizes;

use super::parse::{parse_confirm, parse_offset, parse_shape};
use super::{EngineArgs, FormatArgs, GuardArgs, MpiArgs};

#[derive(Args, Debug)]
pub(crate) struct ExplainArgs {
    /// The black box, e.g. numpy:sum, blas:dot (see `fprev probes`).
    pub(crate) spec: Spec,
    /// Sizes to reveal and explain: A..B, A..B:S or a list [default:
    /// 1..40 and sizes around 64, 128, 256, 512, 1024, up to 2048].
    #[arg(short = 'n', long = "n", value_name = "SIZES", default_value = EXPLAIN_SIZES,
          hide_default_value = true)]
    pub(crate) sizes: Sizes,
    /// Sizes past those revealed at which the formula's tree is proven with
    /// masked checks (about n/24 calls each; revealed where no proof can be
    /// made) before the formula is claimed; one that fails is inferred
    /// again with that tree. The output names the largest size checked.
    /// [default: 4096,16384,65536, each skipped (and said) where one call
    /// of the black box says its check would take over 30 s]
    #[arg(long, value_name = "SIZES", conflicts_with = "no_verify")]
    pub(crate) verify: Option<Sizes>,
    /// Claim the formula for the sizes revealed only.
    #[arg(long)]
    pub(crate) no_verify: bool,
    /// Neither read nor write the cache of formulas (see `fprev cache`):
    /// reveal every size. With the cache, a formula found before for the
    /// same black box, machine and settings is proven again at the
    /// --verify sizes and 1,000 and 2,048, and kept only if it holds.
    #[arg(long)]
    pub(crate) no_cache: bool,
    /// GEMV/GEMM shape M,N,K: M rows of A and N columns of B at every size,
    /// K taking each size in turn [default: N,N,N at each size N].
    #[arg(long, value_name = "M,N,K", value_parser = parse_shape)]
    pub(crate) shape: Option<[usize; 3]>,
    /// Hand the black box its input in an array starting this far past a
    /// 64-byte boundary, in bytes (1B) or elements (1), as reveal --offset
    /// does: the formula holds for that alignment (numpy:…, python:…,
    /// jax:…).
    #[arg(long, value_name = "OFFSET", value_parser = parse_offset)]
    pub(crate) offset: Option<Offset>,
    #[command(flatten)]
    pub(crate) number: FormatArgs,
    #[command(flatten)]
    pub(crate) mpi: MpiArgs,
    #[command(flatten)]
    pub(crate) engine: EngineArgs,
    /// Random inputs to replay each revealed tree on (0: do not confirm; at
    /// most 1,000,000); a tree whose replay differs still shows the order,
    /// and is used.
    #[arg(long, value_name = "K", default_value_t = check::CONFIRM_TRIALS,
          value_parser = parse_confirm)]
    pub(crate) confirm: usize,
    #[command(flatten)]
    pub(crate) guard: GuardArgs,
}
