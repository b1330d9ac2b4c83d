//! `fprev sweep`'s flags and its output formats.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use fprev::Spec;
use fprev::check;
use fprev::probe::Offset;
use fprev::sizes::Sizes;

use super::parse::{
    parse_confirm, parse_list, parse_offset, parse_runs, parse_shape, parse_threads,
};
use super::{EngineArgs, FormatArgs, GuardArgs, MpiArgs};

#[derive(Args, Debug)]
pub(crate) struct SweepArgs {
    /// The black box, e.g. numpy:sum, reduce:binary-tree (see `fprev probes`).
    pub(crate) spec: Spec,
    /// Sizes to reveal: A..B (every size), A..B:S (every S-th), or a list: 1..64,128,256.
    #[arg(short = 'n', long = "n", value_name = "SIZES")]
    pub(crate) sizes: Sizes,
    /// Thread counts to reveal each size on, e.g. 1,2,4 (reduce:…, blas:…)
    /// [default: the black box's own].
    #[arg(long, value_name = "T,T,…", value_delimiter = ',',
          value_parser = parse_threads)]
    pub(crate) threads: Vec<u16>,
    /// GEMV/GEMM shape M,N,K: M rows of A and N columns of B at every size,
    /// K taking each size in turn [default: N,N,N at each size N].
    #[arg(long, value_name = "M,N,K", value_parser = parse_shape)]
    pub(crate) shape: Option<[usize; 3]>,
    /// Message sizes of an mpi: black box to sweep instead of sizes, in
    /// elements of its vector, e.g. 1,2,4,8,16,32,64,128,256,512,1024
    /// (every power of two, so that no regime hides between two counts;
    /// at one -n): the first and last elements are revealed at each,
    /// and between two counts whose orders differ the counts between are
    /// revealed by bisection, down to the exact count where the library
    /// switches its algorithm. With --shape M,N,K, M is swept likewise.
    #[arg(long, value_name = "COUNTS", value_parser = parse_list)]
    pub(crate) count: Option<Sizes>,
    /// Hand the black box its input in an array starting this far past a
    /// 64-byte boundary, in bytes (1B) or elements (1), as reveal --offset
    /// does, at every size (numpy:…, python:…, jax:…).
    #[arg(long, value_name = "OFFSET", value_parser = parse_offset)]
    pub(crate) offset: Option<Offset>,
    #[command(flatten)]
    pub(crate) number: FormatArgs,
    #[command(flatten)]
    pub(crate) mpi: MpiArgs,
    #[command(flatten)]
    pub(crate) engine: EngineArgs,
    /// Random inputs to replay each revealed tree on, compared with the
    /// black box bit for bit (0: do not confirm; at most 1,000,000); a size
    /// whose tree is not confirmed gets no order name.
    #[arg(long, value_name = "K", default_value_t = check::CONFIRM_TRIALS,
          value_parser = parse_confirm)]
    pub(crate) confirm: usize,
    /// Before each reveal, look for answers that change from call to call:
    /// sum each of 8 random inputs R times and compare the bits (a size
    /// whose answers differ is "varies", with its spread, and the sweep
    /// exits 6). Without it, variation is looked for only where a reveal or
    /// its replay fails.
    #[arg(long, value_name = "R", default_value_t = 0, value_parser = parse_runs)]
    pub(crate) runs: usize,
    #[command(flatten)]
    pub(crate) guard: GuardArgs,
    /// Output format [default: from the -o extension (.json), else a table].
    #[arg(long, value_enum)]
    pub(crate) format: Option<SweepFormat>,
    /// Write to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SweepFormat {
    Table,
    Json,
}
