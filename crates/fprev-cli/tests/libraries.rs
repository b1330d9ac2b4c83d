//! The Rust-native library black boxes on the real libraries, no mocks:
//! `ndarray:` (the ndarray crate and matrixmultiply), `blas:` (OpenBLAS,
//! BLIS and the Netlib reference BLAS, loaded at run time through CBLAS)
//! and `dylib:` (a C function in a shared library compiled here with `cc`).
//!
//! Every revealed tree is confirmed by replaying it against the library on
//! random inputs, bit for bit (`fprev::check`). Where the order follows from
//! the library's source (ndarray's eightfold unrolled loops, matrixmultiply's
//! blocks of KC = 256, the C functions below), the expected tree is written
//! here from that definition, never taken from an earlier run of fprev.
//! OpenBLAS and BLIS pick their kernels for the CPU at run time, so their
//! trees are only checked for consistency with the library; the reference
//! BLAS adds left to right (its Fortran loops). The facts asserted of
//! OpenBLAS's own kernels are those of its Haswell kernels, which every
//! test here runs ([`OPENBLAS_KERNELS`]) whatever the CPU's newest kernel
//! (an AVX-512 CPU's SkylakeX kernels add in other orders), but one that
//! reads the SkylakeX sdot where the CPU runs it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use fprev::arith::{Arithmetic, NodeArithmetic, Product, Products};
use fprev::document::Stats;
use fprev::document::TreeDocument;
use fprev::error::Kind;
use fprev::probe::ProbeOptions;
use fprev::{Format, Options, Order, Probe, SummationTree, check, reveal};
use tempfile::TempDir;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const SIZES: [usize; 5] = [1, 2, 7, 64, 300];
const FORMATS: [Format; 2] = [Format::F32, Format::F64];

/// The OpenBLAS kernel set these tests run (`OPENBLAS_CORETYPE`, read
/// when OpenBLAS loads): any x86-64 CPU with AVX2 and FMA runs it.
const OPENBLAS_KERNELS: &str = "Haswell";

/// The BLIS kernel set these tests run (`BLIS_ARCH_TYPE`, read when BLIS
/// initialises: 0.9.0's `arch_t` number of Zen 3, whose `dotv` is
/// `bli_dotv_zen_int10.c`): any x86-64 CPU with AVX2 and FMA runs it,
/// where an AVX-512 CPU would otherwise take its SkylakeX kernels.
const BLIS_KERNELS: &str = "6";

/// Pins [`OPENBLAS_KERNELS`] and [`BLIS_KERNELS`] for the black boxes this
/// process loads; every
/// in-process open goes through [`options`] or [`open_err`], which call
/// it first.
fn pin_openblas_kernels() {
    static PIN: std::sync::Once = std::sync::Once::new();
    // SAFETY: set once, before this process loads OpenBLAS (every load
    // follows `options` or `open_err`), while other tests wait on the Once; no other
    // thread of a test process writes the environment.
    PIN.call_once(|| unsafe {
        std::env::set_var("OPENBLAS_CORETYPE", OPENBLAS_KERNELS);
        std::env::set_var("BLIS_ARCH_TYPE", BLIS_KERNELS);
    });
}

fn options(n: usize, format: Format, shape: Option<[usize; 3]>) -> ProbeOptions {
    pin_openblas_kernels();
    ProbeOptions {
        n: Some(n),
        format,
        shape,
        ..Default::default()
    }
}

fn open(spec: &str, n: usize, format: Format, shape: Option<[usize; 3]>) -> Box<dyn Probe> {
    fprev::open(spec, &options(n, format, shape))
        .unwrap_or_else(|e| panic!("{spec} n = {n} {format}: cannot open: {e}"))
}

fn open_err(spec: &str, opts: &ProbeOptions) -> String {
    pin_openblas_kernels();
    match fprev::open(spec, opts) {
        Ok(_) => panic!("{spec} opened, but should not have"),
        Err(e) if e.kind() == Kind::Input => {
            let msg = fprev::error::Report(&e).to_string();
            assert!(!msg.contains('\n'), "not one line: {msg:?}");
            msg
        }
        Err(e) => panic!("{spec}: expected an input error, got {e:?}"),
    }
}

/// Reveals `spec`, confirms the tree by 200 random replays, and returns it
/// with the reveal's cost.
fn reveal_checked(
    spec: &str,
    n: usize,
    format: Format,
    shape: Option<[usize; 3]>,
) -> (SummationTree, Stats) {
    let what = format!("{spec} n = {n} {format} shape {shape:?}");
    let mut probe = open(spec, n, format, shape);
    assert_eq!(probe.n(), n, "{what}");
    assert_eq!(probe.format(), format, "{what}");
    assert_eq!(probe.accumulator(), format, "{what}");
    assert!(!probe.may_fuse(), "{what}");
    let revealed = reveal(&mut probe, &Options::default())
        .unwrap_or_else(|e| panic!("{what}: reveal failed: {e}"))
        .revealed()
        .expect("an order");
    let tree = revealed.tree;
    assert_eq!(tree.n(), n, "{what}");
    assert!(tree.is_binary(), "{what}: {tree}");
    let seed = n as u64 * 31 + format.precision() as u64;
    let report = check::check(&tree, &mut probe, 200, seed)
        .unwrap_or_else(|e| panic!("{what}: check failed: {e}"));
    assert!(
        report.mismatch.is_none(),
        "{what}: the revealed tree does not reproduce the library: {:?}\ntree: {tree}",
        report.mismatch
    );
    assert_eq!(report.trials, 200, "{what}");
    (tree, revealed.stats)
}

/// `a + b` in the canonical text form (the operand holding leaf 0 or the
/// smaller leaf first, as in all the trees built here).
fn add(a: &str, b: &str) -> String {
    format!("({a}+{b})")
}

/// Left to right over `range`.
fn sequential(range: std::ops::Range<usize>) -> String {
    let mut it = range.map(|i| i.to_string());
    let first = it.next().expect("a non-empty range");
    it.fold(first, |s, i| add(&s, &i))
}

/// ndarray's `unrolled_fold` / `unrolled_dot` (numeric_util.rs): eight
/// accumulators p0..p7 over the whole chunks of 8, then
/// `acc = ((((p0+p4)) + (p1+p5)) + (p2+p6)) + (p3+p7)` (the initial
/// `0 + (p0+p4)` is exact), then the last `n % 8` values one by one. Below 8
/// values every accumulator is 0, which leaves a left-to-right sum.
fn unrolled8(n: usize) -> String {
    let whole = n / 8 * 8;
    if whole == 0 {
        return sequential(0..n);
    }
    let lane = |j: usize| {
        let mut it = (j..whole).step_by(8).map(|i| i.to_string());
        let first = it.next().unwrap();
        it.fold(first, |s, i| add(&s, &i))
    };
    let mut acc = add(&lane(0), &lane(4));
    for j in 1..4 {
        acc = add(&acc, &add(&lane(j), &lane(j + 4)));
    }
    for i in whole..n {
        acc = add(&acc, &i.to_string());
    }
    acc
}

/// matrixmultiply's GEMM (gemm.rs, loop 4): `k` is split into blocks of
/// `kc`; each block is summed left to right in the micro-kernel's
/// accumulator and added to C (beta 0 for the first block, 1 after).
fn blocked(n: usize, kc: usize) -> String {
    let mut blocks = (0..n).step_by(kc).map(|b| sequential(b..(b + kc).min(n)));
    let first = blocks.next().unwrap();
    blocks.fold(first, |s, b| add(&s, &b))
}

/// Rows one call carries.
fn rows(n: usize, shape: Option<[usize; 3]>) -> usize {
    shape.map_or(n, |[m, _, _]| m)
}

/// Calls a reveal may spend on things other than queries: finding how many
/// rows of a batched black box sum alike, and checking its accumulator
/// before queries are packed.
const OVERHEAD_CALLS: u64 = fprev::reveal::ROW_TRIALS as u64 + 1;

/// Batching works: a GEMV/GEMM with several rows answers several queries a
/// call.
fn assert_batched(what: &str, stats: &Stats, n: usize, m: usize) {
    if m > 1 && n >= 7 {
        assert!(
            stats.calls - OVERHEAD_CALLS < stats.queries,
            "{what}: {} calls for {} queries with {m} rows a call",
            stats.calls,
            stats.queries
        );
    }
}

/// When every row sums alike: at most one call per `m` queries of each
/// subproblem (at most `n - 1` of them).
fn assert_all_rows_used(what: &str, stats: &Stats, n: usize, m: usize) {
    assert!(
        stats.calls <= stats.queries.div_ceil(m as u64) + n as u64 + OVERHEAD_CALLS,
        "{what}: {stats:?}"
    );
}

/// A black box that sums one input per evaluation: as many calls as
/// inputs, and one more that checks its accumulator where queries are
/// packed (from 32 summands); inputs carry queries of several subproblems.
fn assert_one_input_a_call(what: &str, stats: &Stats, n: usize) {
    let check = u64::from(n >= 32);
    assert_eq!(
        stats.calls,
        stats.inputs + check,
        "{what}: one input a call"
    );
    assert!(stats.inputs <= stats.queries, "{what}: {stats:?}");
}

// ---------------------------------------------------------------------------
// ndarray
// ---------------------------------------------------------------------------

#[test]
fn ndarray_sum_and_dot_are_eightfold_unrolled() {
    for spec in ["ndarray:sum", "ndarray:dot"] {
        for format in FORMATS {
            for n in SIZES.into_iter().chain([8, 9, 15, 16, 17]) {
                let (tree, stats) = reveal_checked(spec, n, format, None);
                assert_eq!(tree.to_text(), unrolled8(n), "{spec} n = {n} {format}");
                assert_one_input_a_call(spec, &stats, n);
            }
        }
    }
}

#[test]
fn ndarray_gemv_is_a_row_dot_and_batches_rows() {
    for format in FORMATS {
        for n in SIZES {
            for shape in [None, Some([3, 1, n]), Some([1, 1, n]), Some([17, 4, n])] {
                let what = format!("ndarray:gemv n = {n} {format} shape {shape:?}");
                let (tree, stats) = reveal_checked("ndarray:gemv", n, format, shape);
                assert_eq!(tree.to_text(), unrolled8(n), "{what}");
                let m = rows(n, shape);
                assert_batched(&what, &stats, n, m);
                assert_all_rows_used(&what, &stats, n, m);
            }
        }
    }
}

#[test]
fn ndarray_gemm_is_blocked_by_matrixmultiply_kc() {
    for format in FORMATS {
        for n in SIZES.into_iter().chain([256, 257, 520]) {
            for shape in [None, Some([5, 3, n]), Some([2, 9, n])] {
                if n >= 256 && shape.is_none() && n != 300 {
                    continue; // n x n x n: slow and adds nothing
                }
                let what = format!("ndarray:gemm n = {n} {format} shape {shape:?}");
                let (tree, stats) = reveal_checked("ndarray:gemm", n, format, shape);
                assert_eq!(tree.to_text(), blocked(n, 256), "{what}");
                let m = rows(n, shape);
                assert_batched(&what, &stats, n, m);
                assert_all_rows_used(&what, &stats, n, m);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// OpenBLAS
// ---------------------------------------------------------------------------

#[test]
fn blas_ddot_reveals_a_tree_that_reproduces_openblas() {
    for n in SIZES.into_iter().chain([32, 33, 1000]) {
        let (tree, stats) = reveal_checked("blas:dot", n, Format::F64, None);
        if n <= 2 {
            assert_eq!(tree.to_text(), sequential(0..n));
        }
        assert_one_input_a_call("blas:dot", &stats, n);
    }
}

/// Sizes at which OpenBLAS's sdot rounds every partial sum to f32: its
/// double-precision tail (below) holds at most one value, or no kernel
/// part precedes a tail of at most two.
#[test]
fn blas_sdot_reveals_a_tree_that_reproduces_openblas() {
    for n in [1, 2, 32, 33, 64, 65, 96, 320, 1024] {
        let (_, stats) = reveal_checked("blas:dot", n, Format::F32, None);
        assert_one_input_a_call("blas:dot", &stats, n);
    }
}

/// OpenBLAS's x86_64 sdot (kernel/x86_64/sdot.c) sums the first
/// `n1 = n & -32` products in its f32 SIMD kernel, then adds the last
/// `n mod 32` one by one into a `double`, adds the kernel's f32 result to
/// that, and rounds once to float. fprev reveals that order; the precision
/// differs between the two parts, so no replay in one accumulator format
/// reproduces its bits when the tail holds two values or more.
#[cfg(target_arch = "x86_64")]
#[test]
fn openblas_sdot_adds_its_tail_in_double() {
    use rand::SeedableRng;
    for n in [7, 31, 34, 100, 300, 1000] {
        let n1 = n & !31;
        let mut probe = open("blas:dot", n, Format::F32, None);
        let tree = reveal(&mut probe, &Options::default())
            .unwrap()
            .revealed()
            .expect("an order")
            .tree;
        let tail = sequential(n1..n);
        if n1 == 0 {
            assert_eq!(tree.to_text(), tail, "n = {n}");
            continue;
        }
        let mut kernel = open("blas:dot", n1, Format::F32, None);
        let kernel_tree = reveal(&mut kernel, &Options::default())
            .unwrap()
            .revealed()
            .expect("an order")
            .tree;
        assert_eq!(
            tree.to_text(),
            add(&kernel_tree.to_text(), &tail),
            "n = {n}"
        );
        // The values, from the definition.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(n as u64);
        for _ in 0..50 {
            let x = fprev::inputs::random_input(Format::F32, n, &mut rng);
            let (mut got, mut head) = ([0.0], [0.0]);
            probe.sum(&x, &mut got).unwrap();
            kernel.sum(&x[..n1], &mut head).unwrap();
            let tail: f64 = x[n1..].iter().fold(0.0, |s, v| s + v);
            let expected = f64::from((tail + head[0]) as f32);
            assert_eq!(got[0].to_bits(), expected.to_bits(), "n = {n}: {x:?}");
        }
    }
}

/// The arithmetic of OpenBLAS's sdot, from its source (above): the kernel's
/// nodes round to f32, the tail's to f64. The arithmetic reveal finds that
/// at every n to 300 and a few beyond, and the model replays its bits.
#[cfg(target_arch = "x86_64")]
#[test]
fn openblas_sdot_arithmetic_is_its_f32_kernel_and_f64_tail() {
    use fprev::arith::{NodeArithmetic, NodeKey, Product};
    use fprev::reveal::arithmetic::{ArithOptions, reveal_arithmetic};
    for n in (2..=300).chain([1000, 4096]) {
        let n1 = n & !31;
        let mut probe = open("blas:dot", n, Format::F32, None);
        let tree = reveal(&mut probe, &Options::default())
            .unwrap()
            .revealed()
            .expect("an order")
            .tree;
        let found = reveal_arithmetic(&mut probe, &tree, &ArithOptions::default())
            .unwrap_or_else(|e| panic!("n = {n}: {e}"));
        let keys = NodeKey::all(&tree);
        for node in tree.post_order() {
            if node == tree.root() {
                continue;
            }
            let key = keys[node.index()];
            let format = if key.first >= n1 {
                Format::F64
            } else {
                Format::F32
            };
            assert_eq!(
                found.model.at(&key),
                NodeArithmetic::ieee(format),
                "n = {n}: {key} ({})",
                found.model
            );
        }
        // The kernel's 32 accumulators start at 0, so each one's first
        // product is rounded to f32 (fma(x, y, 0)) and every later one is
        // fused; the tail forms its products in f32, then adds them in f64.
        let products = found.model.products.as_ref().expect("sdot multiplies");
        for i in 0..n {
            let want = if (32..n1).contains(&i) {
                Product::Exact
            } else {
                Product::Rounded(Format::F32)
            };
            assert_eq!(products.at(i), want, "n = {n}: x{i} ({})", found.model);
        }
        let report = check::check_models(
            &tree,
            std::slice::from_ref(&found.model),
            &mut probe,
            200,
            7,
            0,
        )
        .unwrap()
        .0;
        assert!(report.mismatch.is_none(), "n = {n}: {:?}", report.mismatch);
        assert!(report.model.as_ref().is_some_and(|m| m.products.is_some()));
    }
}

/// The CLI keeps the model in the tree file: `check` replays it, `replay:`
/// evaluates it, and `diff` tells the same order with other arithmetic.
#[test]
fn a_tree_file_carries_its_arithmetic_to_check_replay_and_diff() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &["reveal", "blas:dot", "-n", "100", "-o", "a.json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(dir.path().join("a.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        doc["arithmetic"]["version"],
        fprev::arith::MODEL_VERSION,
        "{doc}"
    );
    assert_eq!(doc["arithmetic"]["default"]["format"], "f32", "{doc}");
    assert!(
        doc["arithmetic"]["nodes"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
    );
    let out = run_in(
        dir.path(),
        &["check", "a.json", "blas:dot", "--trials", "200"],
    );
    assert!(
        assert_ok(&out).contains("nodes adding as f32, "),
        "{}",
        stdout(&out)
    );
    // Its replay is the black box's bits: a check of it against itself and
    // against OpenBLAS passes, and it reveals the same order back.
    let out = run_in(dir.path(), &["reveal", "replay:a.json", "-o", "b.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run_in(dir.path(), &["diff", "a.json", "b.json"]);
    assert!(assert_ok(&out).starts_with("equal:"), "{}", stdout(&out));
    // Without the model the same file is a plain f32 replay, which differs.
    let plain = text.replace(r#""format": "f64""#, r#""format": "f32""#);
    std::fs::write(dir.path().join("c.json"), plain).unwrap();
    let out = run_in(dir.path(), &["diff", "a.json", "c.json"]);
    assert_eq!(out.status.code(), Some(1));
    let said = stdout(&out);
    assert!(
        said.starts_with("same order, different arithmetic"),
        "{said}"
    );
    assert!(
        said.contains("a.json computes f64 and c.json computes f32"),
        "{said}"
    );
    let out = run_in(
        dir.path(),
        &["check", "c.json", "blas:dot", "--trials", "200"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    // --no-arith: the order alone, not confirmed in plain additions (exit 5).
    let out = run_in(
        dir.path(),
        &["reveal", "blas:dot", "-n", "100", "--no-arith"],
    );
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
}

#[test]
fn blas_gemv_reveals_a_tree_that_reproduces_openblas_and_batches_rows() {
    for format in FORMATS {
        for n in SIZES {
            for shape in [None, Some([4, 1, n]), Some([1, 1, n]), Some([13, 2, n])] {
                let what = format!("blas:gemv n = {n} {format} shape {shape:?}");
                let (_, stats) = reveal_checked("blas:gemv", n, format, shape);
                assert_batched(&what, &stats, n, rows(n, shape));
            }
        }
    }
}

#[test]
fn blas_gemm_reveals_a_tree_that_reproduces_openblas_and_batches_rows() {
    for format in FORMATS {
        for n in SIZES {
            for shape in [None, Some([8, 3, n]), Some([1, 1, n]), Some([20, 16, n])] {
                let what = format!("blas:gemm n = {n} {format} shape {shape:?}");
                let (_, stats) = reveal_checked("blas:gemm", n, format, shape);
                assert_batched(&what, &stats, n, rows(n, shape));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Formats, operations and shapes that are refused
// ---------------------------------------------------------------------------

#[test]
fn narrow_formats_are_refused_with_the_supported_ones_named() {
    let mut specs = vec!["ndarray:sum", "ndarray:dot", "ndarray:gemv", "ndarray:gemm"];
    specs.extend(["blas:dot", "blas:gemv", "blas:gemm"]);
    for spec in specs {
        for format in [Format::F16, Format::Bf16, Format::E4m3, Format::E5m2] {
            let msg = open_err(spec, &options(16, format, None));
            assert!(msg.contains(spec), "{msg}");
            assert!(msg.contains(format.name()), "{msg}");
            assert!(msg.contains("f32") && msg.contains("f64"), "{msg}");
        }
    }
}

#[test]
fn unknown_operations_and_disagreeing_shapes_are_bad_input() {
    let opts = options(8, Format::F32, None);
    let msg = open_err("ndarray:mean", &opts);
    assert!(msg.contains("mean") && msg.contains("ndarray:sum"), "{msg}");
    let msg = open_err("ndarray", &opts);
    assert!(msg.contains("ndarray:gemm"), "{msg}");
    let msg = open_err("blas:sum", &opts);
    assert!(msg.contains("blas:dot"), "{msg}");
    let clash = options(8, Format::F32, Some([4, 4, 9]));
    let msg = open_err("ndarray:gemm", &clash);
    assert!(msg.contains("n = 8") && msg.contains("K = 9"), "{msg}");
}

#[test]
fn shape_k_gives_n_and_m_gives_the_batch() {
    let opts = ProbeOptions {
        shape: Some([6, 2, 11]),
        ..Default::default()
    };
    for spec in ["ndarray:gemv", "ndarray:gemm"] {
        let probe = fprev::open(spec, &opts).unwrap();
        assert_eq!((probe.n(), probe.max_batch()), (11, 6), "{spec}");
    }
    let probe = fprev::open("ndarray:gemv", &options(5, Format::F64, None)).unwrap();
    assert_eq!(probe.max_batch(), 5, "M defaults to n");
    let probe = fprev::open("ndarray:sum", &options(5, Format::F64, None)).unwrap();
    assert_eq!(probe.max_batch(), 1);
}

// ---------------------------------------------------------------------------
// dylib
// ---------------------------------------------------------------------------

const C_SOURCE: &str = r#"
#include <fenv.h>
#include <math.h>
#include <stddef.h>

/* Four accumulators over the whole chunks of 4, combined pairwise, then
   the tail left to right. */
float sum4_f32(const float *x, size_t n) {
    float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a0 += x[i];
        a1 += x[i + 1];
        a2 += x[i + 2];
        a3 += x[i + 3];
    }
    float s = (a0 + a1) + (a2 + a3);
    for (; i < n; i++)
        s += x[i];
    return s;
}

/* Left to right when n is odd, right to left when even: no formula. */
float parity_f32(const float *x, size_t n) {
    float s = 0;
    if (n % 2)
        for (size_t i = 0; i < n; i++)
            s += x[i];
    else
        for (size_t i = n; i > 0; i--)
            s += x[i - 1];
    return s;
}

/* Left to right. */
double seq_f64(const double *x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return s;
}

/* Right to left. */
float rev_f32(const float *x, size_t n) {
    float s = 0;
    for (size_t i = n; i > 0; i--)
        s += x[i - 1];
    return s;
}

/* Left to right below 3000 summands, right to left from 3000 on: a switch
   above every size `fprev explain` reveals by default. */
float switch_f32(const float *x, size_t n) {
    float s = 0;
    if (n < 3000) {
        for (size_t i = 0; i < n; i++)
            s += x[i];
    } else {
        for (size_t i = n; i > 0; i--)
            s += x[i - 1];
    }
    return s;
}

/* Kahan's compensated sum, left to right: the order of seq, not its bits. */
float kahan_f32(const float *x, size_t n) {
    volatile float s = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        volatile float y = x[i] - c;
        volatile float t = s + y;
        c = (t - s) - y;
        s = t;
    }
    return s;
}

/* The same, right to left: the running sum is the second child of each
   node in the tree's order (it holds the larger summands). */
float kahan_rev_f32(const float *x, size_t n) {
    volatile float s = 0, c = 0;
    for (size_t i = n; i > 0; i--) {
        volatile float y = x[i - 1] - c;
        volatile float t = s + y;
        c = (t - s) - y;
        s = t;
    }
    return s;
}

/* Left to right, every partial sum rounded toward zero. */
float rz_f32(const float *x, size_t n) {
    int mode = fegetround();
    fesetround(FE_TOWARDZERO);
    volatile float s = 0;
    for (size_t i = 0; i < n; i++)
        s = s + x[i];
    fesetround(mode);
    return s;
}

/* Right to left, every partial sum rounded toward zero. */
double rz_rev_f64(const double *x, size_t n) {
    int mode = fegetround();
    fesetround(FE_TOWARDZERO);
    volatile double s = 0;
    for (size_t i = n; i-- > 0;)
        s = s + x[i];
    fesetround(mode);
    return s;
}

float rz_rev_f32(const float *x, size_t n) {
    int mode = fegetround();
    fesetround(FE_TOWARDZERO);
    volatile float s = 0;
    for (size_t i = n; i-- > 0;)
        s = s + x[i];
    fesetround(mode);
    return s;
}

/* long double accumulators: x87's 64 significant bits on x86-64. */
double x87_sum_f64(const double *x, size_t n) {
    long double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return (double)s;
}

float x87_sum_f32(const float *x, size_t n) {
    long double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return (float)s;
}

/* Four double accumulators, added up and finished in a long double. */
double x87_tail_f64(const double *x, size_t n) {
    double a[4] = {0, 0, 0, 0};
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++)
            a[k] += x[i + k];
    long double s = (long double)a[0] + a[1];
    s += a[2];
    s += a[3];
    for (; i < n; i++)
        s += x[i];
    return (double)s;
}

/* Each product rounded to 64 bits, added in a long double. */
double x87_dot_f64(const double *x, const double *y, size_t n) {
    long double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (long double)x[i] * y[i];
    return (double)s;
}

/* Kahan's loop in double: it keeps bits past f64 as x87 does, yet is a
   chain of compensated steps. */
double kahan_f64(const double *x, size_t n) {
    volatile double s = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        volatile double y = x[i] - c;
        volatile double t = s + y;
        c = (t - s) - y;
        s = t;
    }
    return s;
}

/* A float running sum whose rounding errors are summed apart in double
   and added at the end: a compensated sum no model of fprev's holds. */
float cascade_f32(const float *x, size_t n) {
    volatile float s = 0;
    double e = 0;
    for (size_t i = 0; i < n; i++) {
        volatile float t = s + x[i];
        e += ((double)s + x[i]) - t;
        s = t;
    }
    return (float)(s + e);
}

/* Neumaier's compensated sum: its errors kept apart, added at the end. */
float neumaier_f32(const float *x, size_t n) {
    volatile float s = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        volatile float t = s + x[i];
        if (fabsf(s) >= fabsf(x[i]))
            c += (s - t) + x[i];
        else
            c += (x[i] - t) + s;
        s = t;
    }
    return s + c;
}

/* Reads through a null pointer. */
float crash_f32(const float *x, size_t n) {
    volatile const float *p = 0;
    return *p + x[0] + (float)n;
}

/* Never returns. */
float hang_f32(const float *x, size_t n) {
    volatile size_t k = 0;
    for (;;)
        k += n + (size_t)x[0];
    return 0;
}
"#;

/// A sum that truncates every partial sum, in C: its order comes out
/// sequential, its arithmetic f32 toward zero at every node, and a replay
/// with that model gives its bits (plain additions do not).
#[test]
fn a_c_sum_rounding_toward_zero_is_modelled_so() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "lib");
    let spec = format!("dylib:{}:rz_f32", lib.display());
    for n in [3, 40, 300] {
        let out = run_in(
            dir.path(),
            &["reveal", &spec, "-n", &n.to_string(), "-o", "t.json"],
        );
        assert_eq!(out.status.code(), Some(0), "n = {n}: {}", stderr(&out));
        let doc = fprev::document::TreeDocument::read(&dir.path().join("t.json")).unwrap();
        assert_eq!(doc.tree().to_text(), sequential(0..n));
        let model = doc.arithmetic.expect("a model");
        assert!(model.is_uniform(), "{model}");
        assert_eq!(model.default.format, Format::F32);
        assert_eq!(model.default.rounding, fprev::arith::Rounding::TowardZero);
        let out = run_in(
            dir.path(),
            &["reveal", &spec, "-n", &n.to_string(), "--no-arith"],
        );
        assert_eq!(out.status.code(), Some(5), "n = {n}");
    }
}

/// Right to left under `FE_TOWARDZERO`: the partial sums meet the negative
/// mask, which truncation does not let absorb a unit (each costs it an
/// ulp), so the first masks fit no tree; masks read apart from those losses
/// reveal it, its model comes out toward zero, and a check of 2,000 inputs
/// agrees (it exited 3, "it does not compute a sum of its inputs").
#[test]
fn a_c_sum_rounding_toward_zero_right_to_left_is_revealed_and_modelled() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "lib");
    for (symbol, dtype, format) in [
        ("rz_rev_f64", "f64", Format::F64),
        ("rz_rev_f32", "f32", Format::F32),
    ] {
        let spec = format!("dylib:{}:{symbol}", lib.display());
        for n in [16, 200] {
            let n_text = n.to_string();
            let args = [
                "reveal", &spec, "-n", &n_text, "--dtype", dtype, "-o", "t.json",
            ];
            let out = run_in(dir.path(), &args);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{symbol} n = {n}: {}",
                stderr(&out)
            );
            assert!(
                stderr(&out).contains("round toward zero"),
                "{}",
                stderr(&out)
            );
            let doc = fprev::document::TreeDocument::read(&dir.path().join("t.json")).unwrap();
            assert_eq!(doc.tree().to_text(), reverse(n), "{symbol}");
            let model = doc.arithmetic.expect("a model");
            assert!(model.is_uniform(), "{model}");
            assert_eq!(model.default.format, format);
            assert_eq!(model.default.rounding, fprev::arith::Rounding::TowardZero);
            let out = run_in(dir.path(), &["check", "t.json", &spec, "--trials", "2000"]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{symbol} n = {n}: {}",
                stdout(&out)
            );
        }
    }
}

/// Past the summands masks that hold under truncation reach (2,046 of f32),
/// a sum rounding toward zero is said to appear to truncate, with that
/// reach, never "not a sum" (it was exit 3, "it does not compute a sum of
/// its inputs").
#[test]
fn a_truncating_sum_past_the_masks_reach_is_said_to_truncate_not_to_be_no_sum() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "lib").display().to_string();
    let spec = format!("dylib:{lib}:rz_rev_f32");
    let out = run_in(dir.path(), &["reveal", &spec, "-n", "3000"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let said = stderr(&out);
    assert!(!said.contains("not compute a sum"), "{said}");
    assert!(
        said.contains("appears to sum with additions that round toward zero")
            && said.contains("only up to n = 2046")
            && said.contains("give a smaller -n"),
        "{said}"
    );
}

/// Sums in x87's `long double` (64 significant bits), in C: each node is
/// found to round to x87, the body of f64 nodes is told from its x87 tail,
/// products rounded to 64 bits are told from exact ones, Kahan's loop in
/// double (which keeps bits past f64 too) is told from x87, and the model
/// replays the C function bit for bit where f64 additions in the same
/// order do not.
#[cfg(target_arch = "x86_64")]
#[test]
fn an_x87_accumulator_is_modelled_with_its_64_bits() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "lib").display().to_string();
    let cases = [
        ("dylib", "x87_sum_f64", "f64", 300, "x87"),
        ("dylib", "x87_sum_f32", "f32", 300, "x87"),
        ("dylib", "x87_tail_f64", "f64", 1003, "f64, 6 nodes x87"),
        ("dylib-dot", "x87_dot_f64", "f64", 200, "x87; products x87"),
        (
            "dylib",
            "kahan_f64",
            "f64",
            100,
            "f64 compensated, 1 node f64 compensated dropping its error",
        ),
    ];
    for (kind, symbol, dtype, n, model) in cases {
        let spec = format!("{kind}:{lib}:{symbol}");
        let n = n.to_string();
        let args = ["reveal", &spec, "-n", &n, "--dtype", dtype, "-o", "t.json"];
        let out = run_in(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{symbol}: {}", stderr(&out));
        let file = dir.path().join("t.json");
        let mut doc = TreeDocument::read(&file).unwrap();
        let found = doc.arithmetic.as_ref().expect("a model").to_string();
        assert_eq!(found, model, "{symbol}");
        let check = ["check", "t.json", &spec, "--trials", "200"];
        let out = run_in(dir.path(), &check);
        assert_eq!(out.status.code(), Some(0), "{symbol}: {}", stderr(&out));
        // The same order in f64 additions gives other bits.
        let f64_nodes = NodeArithmetic::ieee(Format::F64);
        let mut plain = Arithmetic::uniform(f64_nodes);
        plain.products = doc
            .arithmetic
            .and_then(|m| m.products)
            .map(|_| Products::from_leaves(&[Product::Rounded(Format::F64)]));
        doc.arithmetic = Some(plain);
        std::fs::write(&file, doc.to_json()).unwrap();
        let out = run_in(dir.path(), &check);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{symbol} in f64: {}",
            stdout(&out)
        );
    }
}

/// Neumaier's sum counts the units a mask swamps (its error term keeps
/// them), so masked answers fit no tree: exit 3, and the error says that
/// it is more accurate than additions, as such a compensated sum is.
#[test]
fn neumaier_s_sum_is_named_compensated_not_revealed() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "lib").display().to_string();
    let out = run_in(
        dir.path(),
        &["reveal", &format!("dylib:{lib}:neumaier_f32"), "-n", "40"],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(
        stderr(&out)
            .contains("a compensated sum that keeps its errors apart (Neumaier's) answers so"),
        "{}",
        stderr(&out)
    );
}

/// Compiles `C_SOURCE` into `dir/sub/libsums.so` and returns its path.
fn build_library(dir: &Path, sub: &str) -> PathBuf {
    let out = dir.join(sub);
    std::fs::create_dir_all(&out).unwrap();
    let source = out.join("sums.c");
    std::fs::write(&source, C_SOURCE).unwrap();
    let lib = out.join("libsums.so");
    let status = std::process::Command::new("cc")
        .args(["-O2", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&source)
        .status()
        .expect("a C compiler `cc` on the PATH (apt-get install gcc)");
    assert!(status.success(), "cc failed on {}", source.display());
    lib
}

/// `sum4_f32` from its definition.
fn sum4(n: usize) -> String {
    let whole = n / 4 * 4;
    if whole == 0 {
        return sequential(0..n);
    }
    let lane = |j: usize| {
        let mut it = (j..whole).step_by(4).map(|i| i.to_string());
        let first = it.next().unwrap();
        it.fold(first, |s, i| add(&s, &i))
    };
    let mut s = add(&add(&lane(0), &lane(1)), &add(&lane(2), &lane(3)));
    for i in whole..n {
        s = add(&s, &i.to_string());
    }
    s
}

/// `rev_f32` from its definition: ((n-1) + (n-2)) + ..., in canonical
/// order (the operand holding the smaller leaf first).
fn reverse(n: usize) -> String {
    let mut s = (n - 1).to_string();
    for i in (0..n - 1).rev() {
        s = add(&i.to_string(), &s);
    }
    s
}

#[test]
fn dylib_reveals_c_functions_as_defined() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "lib");
    let lib = lib.display();
    for n in [1, 2, 3, 4, 5, 7, 8, 13, 64, 100] {
        let (tree, _) = reveal_checked(&format!("dylib:{lib}:sum4_f32"), n, Format::F32, None);
        assert_eq!(tree.to_text(), sum4(n), "sum4_f32 n = {n}");
        let (tree, _) = reveal_checked(&format!("dylib:{lib}:seq_f64"), n, Format::F64, None);
        assert_eq!(tree.to_text(), sequential(0..n), "seq_f64 n = {n}");
        let (tree, _) = reveal_checked(&format!("dylib:{lib}:rev_f32"), n, Format::F32, None);
        assert_eq!(tree.to_text(), reverse(n), "rev_f32 n = {n}");
    }
}

#[test]
fn dylib_path_may_hold_colons_and_be_relative() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "with:colon");
    let (tree, _) = reveal_checked(
        &format!("dylib:{}:seq_f64", lib.display()),
        6,
        Format::F64,
        None,
    );
    assert_eq!(tree.to_text(), sequential(0..6));
    // A relative path, with no directory part, is the file in the current
    // directory (not a name for the loader to search for).
    let out = fprev()
        .current_dir(lib.parent().unwrap())
        .args(["reveal", "dylib:libsums.so:sum4_f32", "-n", "8"])
        .output()
        .unwrap();
    assert_eq!(first_line(&assert_ok(&out)), sum4(8));
}

#[test]
fn dylib_bad_specs_are_bad_input_with_one_clear_line() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "lib");
    let lib = lib.display().to_string();
    let f32_8 = options(8, Format::F32, None);

    let missing = dir.path().join("nope.so").display().to_string();
    let msg = open_err(&format!("dylib:{missing}:sum"), &f32_8);
    assert!(
        msg.contains("no such file") && msg.contains(&missing),
        "{msg}"
    );

    let msg = open_err(&format!("dylib:{lib}:no_such_function"), &f32_8);
    assert!(
        msg.contains("no symbol 'no_such_function'") && msg.contains(&lib),
        "{msg}"
    );

    for spec in [
        format!("dylib:{lib}"),
        format!("dylib:{lib}:"),
        "dylib:".to_string(),
        "dylib".to_string(),
        "dylib::sum".to_string(),
    ] {
        let msg = open_err(&spec, &f32_8);
        assert!(msg.contains("dylib:PATH.so:SYMBOL"), "{spec}: {msg}");
    }

    // Not a shared library.
    let text = dir.path().join("text.so");
    std::fs::write(&text, "not ELF").unwrap();
    let msg = open_err(&format!("dylib:{}:sum", text.display()), &f32_8);
    assert!(msg.contains("cannot load"), "{msg}");

    let msg = open_err(
        &format!("dylib:{lib}:sum4_f32"),
        &options(8, Format::F16, None),
    );
    assert!(msg.contains("f16") && msg.contains("f32"), "{msg}");
}

// ---------------------------------------------------------------------------
// The command line
// ---------------------------------------------------------------------------

fn fprev() -> assert_cmd::Command {
    let mut command = assert_cmd::cargo::cargo_bin_cmd!("fprev");
    command.env("OPENBLAS_CORETYPE", OPENBLAS_KERNELS);
    command.env("BLIS_ARCH_TYPE", BLIS_KERNELS);
    command.env("FPREV_CACHE_DIR", common::fresh_cache());
    command
}

fn run(args: &[&str]) -> Output {
    fprev().args(args).output().expect("fprev runs")
}

/// Runs `fprev ARGS` in `dir` (where a mismatch file lands).
fn run_in(dir: &Path, args: &[&str]) -> Output {
    fprev()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("fprev runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}

fn assert_ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        stdout(out),
        stderr(out)
    );
    stdout(out)
}

/// Exit `code`, one `fprev: error: ` line on stderr, no panic; returns it.
fn assert_error(out: &Output, code: i32) -> String {
    let err = stderr(out);
    assert!(!err.contains("panicked"), "panic: {err}");
    assert_eq!(out.status.code(), Some(code), "stderr: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one error line, got: {err:?}");
    assert!(lines[0].starts_with("fprev: error: "), "{err:?}");
    assert!(stdout(out).is_empty(), "stdout on error: {}", stdout(out));
    lines[0].to_string()
}

#[test]
fn cli_reveals_and_checks_library_black_boxes() {
    let out = run(&["reveal", "ndarray:sum", "-n", "20"]);
    assert_eq!(first_line(&assert_ok(&out)), unrolled8(20));
    let out = run(&[
        "reveal",
        "ndarray:gemm",
        "--shape",
        "4,2,300",
        "--dtype",
        "f64",
    ]);
    assert_eq!(first_line(&assert_ok(&out)), blocked(300, 256));
    {
        let dir = TempDir::new().unwrap();
        let tree = dir.path().join("sdot.json");
        let tree = tree.to_str().unwrap();
        let out = run(&[
            "reveal", "blas:dot", "-n", "128", "--format", "json", "-o", tree,
        ]);
        assert_ok(&out);
        let out = run(&["check", tree, "blas:dot", "--trials", "100"]);
        assert_ok(&out);
    }
}

#[test]
fn cli_dylib_errors_exit_2_with_one_line() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "lib");
    let lib = lib.display().to_string();

    let out = run(&["reveal", "dylib:/no/such/dir/libx.so:sum", "-n", "8"]);
    let line = assert_error(&out, 2);
    assert!(
        line.contains("no such file: /no/such/dir/libx.so"),
        "{line}"
    );

    let out = run(&["reveal", &format!("dylib:{lib}:missing_sym"), "-n", "8"]);
    let line = assert_error(&out, 2);
    assert!(line.contains("missing_sym"), "{line}");

    let out = run(&["reveal", &format!("dylib:{lib}"), "-n", "8"]);
    let line = assert_error(&out, 2);
    assert!(line.contains("dylib:PATH.so:SYMBOL"), "{line}");

    let out = run(&["reveal", &format!("dylib:{lib}:sum4_f32"), "-n", "8"]);
    assert_eq!(first_line(&assert_ok(&out)), sum4(8));
}

#[test]
fn cli_narrow_dtypes_exit_2_for_ndarray_and_blas() {
    for spec in ["ndarray:sum", "ndarray:gemm", "blas:dot", "blas:gemv"] {
        let out = run(&["reveal", spec, "-n", "16", "--dtype", "f16"]);
        let line = assert_error(&out, 2);
        assert!(
            line.contains("f16") && line.contains("f32 and f64"),
            "{line}"
        );
    }
}

#[test]
fn cli_probes_lists_the_library_specs() {
    let out = run(&["probes"]);
    let text = assert_ok(&out);
    for pattern in [
        "ndarray:sum|dot|gemv|gemm",
        "blas:dot|gemv|gemm",
        "dylib:PATH.so:SYMBOL",
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(pattern))
            .unwrap_or_else(|| panic!("{pattern} not listed:\n{text}"));
        // The test command installs OpenBLAS, so a blas: library is found.
        assert!(line.trim_end().ends_with("available"), "{line}");
        assert!(!line.contains("unavailable"), "{line}");
    }
}

// ---------------------------------------------------------------------------
// Never exit 0 with an order the black box does not follow
// ---------------------------------------------------------------------------

#[test]
fn a_compensated_sum_is_modelled_or_named_but_never_confirmed_as_plain() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "lib").display().to_string();
    // Kahan's loop left to right: its order, and each node a compensated
    // step, the last one returning its sum with its error dropped; right to
    // left too, each step's running sum its second child.
    for (symbol, order) in [
        ("kahan_f32", sequential(0..40)),
        ("kahan_rev_f32", reverse(40)),
    ] {
        let out = run_in(
            dir.path(),
            &["reveal", &format!("dylib:{lib}:{symbol}"), "-n", "40"],
        );
        let text = assert_ok(&out);
        assert_eq!(first_line(&text), order, "{symbol}");
        assert!(
            text.contains(
                "# arithmetic: f32 compensated, 1 node f32 compensated dropping its error\n"
            ),
            "{symbol}: {text}"
        );
    }
    // Errors summed apart in double: its arithmetic is named, not modelled.
    let kahan = format!("dylib:{lib}:cascade_f32");
    let out = run_in(dir.path(), &["reveal", &kahan, "-n", "40", "-o", "k0.json"]);
    assert_eq!(out.status.code(), Some(5));
    assert!(
        stderr(&out).contains("a compensated (Kahan, Neumaier)"),
        "{}",
        stderr(&out)
    );
    // Masked inputs see its order: left to right.
    let out = run_in(dir.path(), &["reveal", &kahan, "-n", "40"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(first_line(&text), sequential(0..40));
    assert!(text.contains("# NOT CONFIRMED"), "{text}");
    assert!(
        stderr(&out).contains("not add as a tree of plain additions"),
        "{}",
        stderr(&out)
    );
    // The first input whose bits differ, and both results, in a file.
    let saved: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("fprev-mismatch.json")).unwrap(),
    )
    .unwrap();
    let input: Vec<f64> = serde_json::from_value(saved["input"].clone()).unwrap();
    assert_eq!(input.len(), 40);
    let mut probe = open(&kahan, 40, Format::F32, None);
    let mut got = [0.0];
    probe.sum(&input, &mut got).unwrap();
    assert_eq!(got[0], saved["black_box"].as_f64().unwrap());
    // The replay that lasted longest, adding left to right in its format.
    let left_to_right = match saved["accumulator"].as_str().unwrap() {
        "f32" => f64::from(input.iter().fold(0f32, |s, v| s + *v as f32)),
        "f64" => f64::from(input.iter().fold(0f64, |s, v| s + v) as f32),
        other => panic!("replayed in {other}"),
    };
    assert_eq!(left_to_right, saved["replayed"].as_f64().unwrap());
    // The saved input is the one the confirmation stopped at.
    let out = run_in(
        dir.path(),
        &["reveal", &kahan, "-n", "40", "--format", "json"],
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let trials = doc["confirmation"]["trials"].as_u64().unwrap();
    assert_eq!(saved["trial"].as_u64().unwrap() + 1, trials);
    assert_ne!(got[0], saved["replayed"].as_f64().unwrap());
    // The JSON records it; --confirm 0 skips it and says so.
    let json = dir.path().join("k.json");
    let out = run_in(
        dir.path(),
        &["reveal", &kahan, "-n", "40", "-o", json.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(5));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let c = &doc["confirmation"];
    assert_eq!(
        c["passed"].as_u64().unwrap() + 1,
        c["trials"].as_u64().unwrap(),
        "{doc}"
    );
    let out = run_in(
        dir.path(),
        &["reveal", &kahan, "-n", "40", "--confirm", "0"],
    );
    assert!(assert_ok(&out).contains("# not confirmed by replay (--confirm 0)"));
    // A plain right-to-left sum is confirmed with its arithmetic, f32 at
    // every node, and records all its trials; without the arithmetic, in
    // plain additions in f32.
    let seq = format!("dylib:{lib}:rev_f32");
    let out = run_in(dir.path(), &["reveal", &seq, "-n", "40", "--confirm", "30"]);
    let text = assert_ok(&out);
    assert!(text.contains("# arithmetic: f32\n"), "{text}");
    assert!(
        text.contains("# confirmed: replayed with its arithmetic on 30 random inputs"),
        "{text}"
    );
    let out = run_in(
        dir.path(),
        &["reveal", &seq, "-n", "40", "--confirm", "30", "--no-arith"],
    );
    let text = assert_ok(&out);
    assert!(!text.contains("# arithmetic"), "{text}");
    assert!(
        text.contains("# confirmed: replayed (adding in f32) on 30 random inputs"),
        "{text}"
    );
    // A sweep names no order for the sizes it cannot confirm.
    let out = run_in(dir.path(), &["sweep", &kahan, "-n", "8..12"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("not confirmed by replay"),
        "{}",
        stdout(&out)
    );
}

/// A GEMV swept with a --shape keeps its rows at every size, K taking each
/// size in turn (a K that disagreed with -n was an error).
#[test]
fn a_sweep_keeps_the_shape_of_a_gemv() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "sweep",
            "blas:gemv",
            "-n",
            "20,37",
            "--shape",
            "8,1,999",
            "-o",
            "s.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let swept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("s.json")).unwrap()).unwrap();
    let sizes: Vec<u64> = swept["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["n"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [20, 37], "{swept}");
}

/// Kahan's sum as a Rust black box: the order of a left-to-right sum.
struct Kahan(usize);

impl Probe for Kahan {
    fn n(&self) -> usize {
        self.0
    }
    fn format(&self) -> Format {
        Format::F32
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> fprev::Result<()> {
        for (x, o) in inputs.chunks(self.0).zip(out) {
            let (mut s, mut c) = (0f32, 0f32);
            for &v in x {
                let y = v as f32 - c;
                let t = s + y;
                c = (t - s) - y;
                s = t;
            }
            *o = f64::from(s);
        }
        Ok(())
    }
}

#[test]
fn same_order_is_not_passed_by_a_compensated_and_a_plain_sum() {
    use fprev::equivalence::{Differ, check_order, same_order};
    let mut sequential = open("native:sequential", 64, Format::F32, None);
    let differ = same_order(&mut Kahan(64), &mut sequential)
        .unwrap()
        .unwrap_err();
    assert!(matches!(differ, Differ::Bits(_)), "{differ}");
    assert!(
        differ.to_string().contains("same order, different bits"),
        "{differ}"
    );
    let result = std::panic::catch_unwind(|| {
        let mut sequential = open("native:sequential", 64, Format::F32, None);
        fprev::equivalence::assert_same_order(&mut Kahan(64), &mut sequential)
    });
    assert!(result.is_err());
    // A snapshot of the order does not pass either: its bits are not the
    // order's replay.
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("seq.json");
    std::fs::write(&path, format!("{}\n", sequential_text_json(64))).unwrap();
    let differ = check_order(&mut Kahan(64), &path).unwrap().unwrap_err();
    assert!(matches!(differ, Differ::Bits(_)), "{differ}");
    assert!(
        check_order(&mut open("native:sequential", 64, Format::F32, None), &path)
            .unwrap()
            .is_ok()
    );
}

fn sequential_text_json(n: usize) -> String {
    format!("{{\"n\": {n}, \"tree\": {}}}", {
        let mut s = "0".to_string();
        for i in 1..n {
            s = format!("[{s}, {i}]");
        }
        s
    })
}

// ---------------------------------------------------------------------------
// Black boxes that crash, hang, are interrupted, or take other values
// ---------------------------------------------------------------------------

#[test]
fn a_crashing_black_box_is_named_with_its_signal() {
    use std::os::unix::process::ExitStatusExt;
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "lib").display().to_string();
    let out = run_in(
        dir.path(),
        &["reveal", &format!("dylib:{lib}:crash_f32"), "-n", "8"],
    );
    assert_eq!(out.status.signal(), Some(11), "{:?}", out.status);
    let err = stderr(&out);
    assert!(
        err.contains("crash_f32: the black box crashed (SIGSEGV"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_hanging_black_box_is_stopped_by_timeout() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "lib").display().to_string();
    let out_file = dir.path().join("t.json");
    let started = std::time::Instant::now();
    let out = run_in(
        dir.path(),
        &[
            "reveal",
            &format!("dylib:{lib}:hang_f32"),
            "-n",
            "8",
            "--timeout",
            "0.5",
            "-o",
            out_file.to_str().unwrap(),
        ],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let line = assert_error(&out, 3);
    assert!(line.contains("ran longer than --timeout 0.5 s"), "{line}");
    assert!(!out_file.exists());
}

#[test]
fn an_interrupt_exits_130_and_writes_nothing() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "lib").display().to_string();
    let out_file = dir.path().join("t.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("fprev"))
        .args(["reveal", &format!("dylib:{lib}:hang_f32"), "-n", "8", "-o"])
        .arg(&out_file)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: kill(2) on the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{:?}", out.status);
    let err = stderr(&out);
    assert!(err.contains("interrupted while dylib:"), "{err}");
    assert!(!err.contains("KeyboardInterrupt"), "{err}");
    assert!(!out_file.exists());
}

#[test]
fn a_double_function_revealed_as_float_gets_a_dtype_hint() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "lib").display().to_string();
    let out = run_in(
        dir.path(),
        &["reveal", &format!("dylib:{lib}:seq_f64"), "-n", "16"],
    );
    let line = assert_error(&out, 3);
    assert!(line.contains("give --dtype f64"), "{line}");
}

// ---------------------------------------------------------------------------
// BLAS libraries loaded at run time: OpenBLAS, BLIS, the reference BLAS
// ---------------------------------------------------------------------------

/// The libraries scripts/test.sh installs.
const BLAS_LIBRARIES: [&str; 3] = ["openblas", "blis", "refblas"];

#[test]
fn each_blas_library_reveals_dot_gemv_gemm_trees_that_reproduce_it() {
    for lib in BLAS_LIBRARIES {
        for op in ["dot", "gemv", "gemm"] {
            for format in FORMATS {
                for n in [1, 7, 64, 300] {
                    // OpenBLAS's sdot adds its tail in double (below).
                    let tail = n % 32;
                    if lib == "openblas" && op == "dot" && format == Format::F32 && tail >= 2 {
                        continue;
                    }
                    let spec = format!("blas:{op}@{lib}");
                    let shape = (op != "dot").then_some([13, 2, n]);
                    let (tree, _) = reveal_checked(&spec, n, format, shape);
                    // Netlib's loops (ddot.f, dgemv.f, dgemm.f) add left to
                    // right, whatever the unrolling.
                    if lib == "refblas" {
                        assert_eq!(tree.to_text(), sequential(0..n), "{spec} n = {n} {format}");
                    }
                }
            }
        }
    }
}

#[test]
fn cli_names_the_loaded_blas_and_diffs_two_libraries() {
    let dir = TempDir::new().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    for lib in BLAS_LIBRARIES {
        let spec = format!("blas:dot@{lib}");
        let out = run_in(
            dir.path(),
            &[
                "reveal",
                &spec,
                "-n",
                "64",
                "--dtype",
                "f64",
                "-o",
                &path(&format!("{lib}.json")),
            ],
        );
        assert_ok(&out);
        let note = stderr(&out);
        assert!(
            note.starts_with(&format!("fprev: note: {spec}: /")),
            "{note}"
        );
        let out = run_in(
            dir.path(),
            &[
                "check",
                &path(&format!("{lib}.json")),
                &spec,
                "--trials",
                "100",
            ],
        );
        assert_ok(&out);
    }
    // OpenBLAS's 32 lanes against the reference's left to right.
    let out = run(&["diff", &path("openblas.json"), &path("refblas.json")]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let out = run(&["diff", &path("refblas.json"), &path("refblas.json")]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_blas_that_is_not_installed_names_its_package() {
    let out = run(&["reveal", "blas:dot@libnosuchblas.so.9"]);
    let line = assert_error(&out, 2);
    assert!(
        line.contains("no CBLAS library found: libnosuchblas.so.9"),
        "{line}"
    );
    let out = run(&["reveal", "blas:dot@nosuch"]);
    let line = assert_error(&out, 2);
    assert!(
        line.contains("openblas, blis, refblas, mkl, atlas"),
        "{line}"
    );
    for (lib, package) in [("mkl", "libmkl-rt"), ("atlas", "libatlas3-base")] {
        let out = run(&["reveal", &format!("blas:dot@{lib}")]);
        if out.status.success() {
            eprintln!("{lib} is installed here: its not-installed message is not tested");
            continue;
        }
        let line = assert_error(&out, 2);
        assert!(
            line.contains(&format!("apt-get install {package}")),
            "{line}"
        );
    }
}

// ---------------------------------------------------------------------------
// Explain and predict
// ---------------------------------------------------------------------------

/// The tree of `spec` at `n` that a reveal finds.
fn revealed_tree(spec: &str, n: usize, format: Format, shape: Option<[usize; 3]>) -> SummationTree {
    let mut probe = open(spec, n, format, shape);
    reveal(&mut probe, &Options::default())
        .unwrap()
        .revealed()
        .expect("an order")
        .tree
}

/// The formula `fprev explain` prints for `spec` (its first line), parsed.
fn explained(spec: &str) -> fprev::formula::Formula {
    let out = run(&["explain", spec]);
    let said = assert_ok(&out);
    let first = first_line(&said);
    let formula = first
        .strip_prefix("native:")
        .unwrap_or_else(|| panic!("{spec}: {said}"));
    assert!(
        said.contains("# regenerates the revealed tree of"),
        "{said}"
    );
    formula
        .parse()
        .unwrap_or_else(|e| panic!("{spec}: {first}: {e}"))
}

/// The formula of each library is the one its source code gives, checked
/// at sizes explain never revealed against trees written from the source
/// (sum4 in C) or revealed (the libraries).
#[test]
fn explain_names_the_formula_of_each_library() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "explain");
    let sum4_spec = format!("dylib:{}:sum4_f32", lib.display());
    let formula = explained(&sum4_spec);
    for n in [41, 99, 1001, 4099] {
        assert_eq!(formula.tree(n).to_text(), sum4(n), "{formula} at n = {n}");
    }
    // blas:gemv peels 4 summands for alignment, peel(4, …), in blocks of
    // 4,096 columns: its formula holds up to there.
    for (spec, sizes) in [
        ("blas:dot", [3000, 5001]),
        ("ndarray:sum", [3000, 5001]),
        ("blas:gemv", [3000, 4093]),
    ] {
        let formula = explained(spec);
        for n in sizes {
            let tree = revealed_tree(spec, n, Format::F32, None);
            // Trees of thousands of summands are not printed.
            assert!(formula.tree(n) == tree, "{spec}: {formula} at n = {n}");
        }
    }
}

/// OpenBLAS's SGEMV past 4,096 summands: blocks of 4,096 over the largest
/// multiple of 4, each block summed as the kernel sums a short row (4
/// lanes below 16, else 8 lanes with 4 summands peeled where 4 to 7 are
/// left over), the last 0 to 3 summands apart. Written out from reveals at
/// 5,001 and 5,004; checked at sizes of every kind up to 12,290.
#[test]
fn openblas_sgemv_works_in_blocks_of_4096() {
    let formula: fprev::formula::Formula = "body(4, blocks(4096, below(16, body(4, \
        interleave(4, sequential, pairwise), sequential), peel(4, body(8, interleave(8, \
        sequential, interleave(4, pairwise, pairwise)), sequential))), sequential), sequential)"
        .parse()
        .unwrap();
    for n in [31, 4100, 5007, 8197, 12290] {
        let tree = revealed_tree("blas:gemv", n, Format::F32, Some([16, 1, n]));
        assert!(formula.tree(n) == tree, "{formula} at n = {n}");
    }
}

/// OpenBLAS's SGEMM (row 0, 16 rows and columns) as its source code says:
/// blocks of K of GEMM_Q = 320, a rest below 640 halved to a multiple of
/// 8, each block in two lanes of the K loop with the rest of 8 joining
/// lane 0; against reveals at sizes of each kind (one block, a halved
/// rest, full blocks and a halved rest). Past 4 x 65,536 multiply-adds
/// (K = 1,025 here) OpenBLAS threads, and its threaded driver cuts a rest
/// in its larger half first, unrounded: 1,025 is 320, 320, 193, 192.
#[test]
fn openblas_sgemm_is_blocks_of_k() {
    let formula: fprev::formula::Formula = "below(1025, \
        kblocks(320, 8, body(8, interleave(2, sequential, sequential), first)), \
        kblocks(320, body(8, interleave(2, sequential, sequential), first)))"
        .parse()
        .unwrap();
    for n in [77, 300, 333, 555, 700, 1000, 1025, 1150] {
        let tree = revealed_tree("blas:gemm", n, Format::F32, Some([16, 16, n]));
        assert!(formula.tree(n) == tree, "{formula} at n = {n}");
    }
}

/// With square operands (M = N = K = n) OpenBLAS's SGEMM takes a kernel of
/// 16 lanes from 12 to 16 summands, else the two lanes of K in blocks of
/// 320: the known formula (found by `fprev explain blas:gemm`) against
/// reveals on both sides of each switch and past one block.
#[test]
fn openblas_sgemm_with_square_operands_is_its_known_formula() {
    let known = fprev::formula::known::KNOWN
        .iter()
        .find(|k| k.found_for.contains("square operands"))
        .expect("a known formula for square GEMM");
    let formula: fprev::formula::Formula = known.formula.parse().unwrap();
    for n in [11, 12, 16, 17, 45, 333, 650] {
        let tree = revealed_tree("blas:gemm", n, Format::F32, None);
        assert!(formula.tree(n) == tree, "{formula} at n = {n}");
    }
}

/// BLIS's sdotv for AVX2 as its source says (libblis4 0.9.0,
/// `kernels/zen/1/bli_dotv_zen_int10.c` lines 108-218): loops of 80, 40,
/// 16 and 8 summands into ten registers of eight lanes, after each loop
/// the registers folded into fewer (`rhov[r] += rhov[r + 5]`; then 2 and
/// 4 into 0, 3 into 1; then 1 into 0), the rest added one by one into a
/// scalar that is added to the lanes added left to right. `fprev explain`
/// reads it from the trees alone: the same formula, and both give the
/// black box's trees at sizes explain never revealed.
#[test]
fn explain_reads_blis_sdotv_as_its_source_builds_it() {
    let formula = source_and_explain_give_its_trees(
        "blas:dot@blis",
        "simd(8, 10[0+5, 1+6, 2+7, 3+8, 4+9], 5[(0+2)+4, 1+3], 2[0+1], 1, sequential, sequential)",
        &[87, 133, 1103, 5007],
    );
    assert_eq!(
        formula.to_string(),
        "simd(8, 10[0+5, 1+6, 2+7, 3+8, 4+9], 5[(0+2)+4, 1+3], 2[0+1], 1, sequential, sequential)"
    );
}

/// Checks that `source` (a formula written from a library's source code)
/// and the formula `fprev explain` finds for `spec` both give the black
/// box's trees at `sizes` (sizes explain never revealed); explain's.
fn source_and_explain_give_its_trees(
    spec: &str,
    source: &str,
    sizes: &[usize],
) -> fprev::formula::Formula {
    let source: fprev::formula::Formula = source.parse().unwrap();
    // The explaining child process reads the core type pinned here.
    pin_openblas_kernels();
    let formula = explained(spec);
    for &n in sizes {
        let tree = revealed_tree(spec, n, Format::F32, None);
        assert!(source.tree(n) == tree, "{source} at n = {n}");
        assert!(formula.tree(n) == tree, "{formula} at n = {n}");
    }
    formula
}

/// OpenBLAS's sdot for Haswell as its source says
/// (`kernel/x86_64/sdot_microk_haswell-2.c` lines 39-77, `sdot.c` lines
/// 96-125): four registers of eight lanes take 32 summands a loop; each
/// register's high half is added to its low half, the registers pairwise,
/// the four lanes pairwise (two `vhaddps`); the rest is added one by one
/// into a double, to which the kernel's sum is added. Explain's formula
/// (written in the older parts of the language) and the source's give the
/// black box's trees at sizes explain never revealed.
#[test]
fn explain_s_formula_of_openblas_sdot_is_its_source_s() {
    source_and_explain_give_its_trees(
        "blas:dot@openblas",
        "simd(8, 4, interleave(4, pairwise, pairwise), sequential)",
        &[61, 95, 1103, 5007],
    );
}

/// OpenBLAS's sdot for AVX-512 as its source says
/// (`kernel/x86_64/sdot_microk_skylakex-2.c` lines 38-97, `sdot.c` lines
/// 96-129): four registers of sixteen lanes take 64 summands a loop; each
/// one's two halves are added (low + high) into four registers of eight
/// lanes, which take 32 summands a loop; those are added left to right,
/// each one's high half to its low half, and the four lanes pairwise (two
/// `vhaddps`); the rest is added one by one into a double, to which the
/// kernel's sum is added. Explain reads it from the trees alone (its
/// neighbouring merge), and both give the black box's trees at sizes
/// explain never revealed, past each loop's step. Runs where the CPU has
/// AVX-512, which the kernel needs.
#[test]
fn explain_reads_openblas_sdot_for_avx512_as_its_source_builds_it() {
    if !avx512() {
        return;
    }
    let source: fprev::formula::Formula = "simd(8, 8[0+1, 2+3, 4+5, 6+7], 4, interleave(8, \
        sequential, interleave(4, sequential, pairwise)), sequential)"
        .parse()
        .unwrap();
    let formula = skylakex_explained(&["explain", "blas:dot@openblas"]);
    for n in [61, 95, 161, 1103, 5007] {
        let tree = skylakex_tree(&["blas:dot@openblas", "-n", &n.to_string()]);
        assert!(source.tree(n) == tree, "{source} at n = {n}");
        assert!(formula.tree(n) == tree, "{formula} at n = {n}");
    }
}

/// OpenBLAS's SGEMM for AVX-512 along K with 16 rows and columns, as its
/// source says (lines of its tree of October 2024; Debian's 0.3.21 runs
/// here): `interface/gemm.c` calls the small-matrix kernel
/// where `sgemm_small_kernel_permit_skylakex.c` (lines 30-35) permits it,
/// up to `M·N·K = 10^6` (K = 3,906 here), whose loop over K adds each
/// product left to right; past it, the driver takes panels of `GEMM_Q =
/// 448` while at least two remain and halves a rest below two, each panel
/// summed by the kernel's loop and added to C left to right: on two cores
/// or more the threaded driver (`gemm.c` lines 590-596 thread past `M·N·K
/// = 4 · 65,536`; `level3_thread.c` lines 318-322 halve the rest, its
/// larger half first), on one `level3.c` (lines 294-301: half rounded up
/// to `GEMM_UNROLL_M = 16`). Explain finds the switch exactly, by
/// bisection past the sizes it revealed, and both formulas give the black
/// box's trees at sizes explain never revealed.
#[test]
fn explain_reads_openblas_sgemm_for_avx512_as_its_source_builds_it() {
    if !avx512() {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let unit = if cores >= 2 { "" } else { "16, " };
    let source: fprev::formula::Formula =
        format!("below(3907, sequential, kblocks(448, {unit}sequential))")
            .parse()
            .unwrap();
    let formula = skylakex_explained(&["explain", "blas:gemm@openblas", "--shape", "16,16,1"]);
    for n in [1500, 3906, 3907, 4001, 5003] {
        let k = n.to_string();
        let shape = format!("16,16,{n}");
        let tree = skylakex_tree(&["blas:gemm@openblas", "-n", &k, "--shape", &shape]);
        assert!(source.tree(n) == tree, "{source} at n = {n}");
        assert!(formula.tree(n) == tree, "{formula} at n = {n}");
    }
}

/// Whether this CPU runs OpenBLAS's SkylakeX kernels (AVX-512), saying
/// why a test is skipped where it does not.
fn avx512() -> bool {
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        eprintln!("skipped: no /proc/cpuinfo to tell whether this CPU runs AVX-512");
        return false;
    };
    let runs = info.contains(" avx512f") && info.contains(" avx512dq");
    if !runs {
        eprintln!("skipped: this CPU has no AVX-512, which OpenBLAS's SkylakeX kernels need");
    }
    runs
}

/// `fprev ARGS` with OpenBLAS's SkylakeX kernels.
fn skylakex(args: &[&str]) -> Output {
    fprev()
        .env("OPENBLAS_CORETYPE", "SkylakeX")
        .args(args)
        .output()
        .expect("fprev runs")
}

/// The formula `fprev explain` prints (`args`) with the SkylakeX kernels.
fn skylakex_explained(args: &[&str]) -> fprev::formula::Formula {
    let said = assert_ok(&skylakex(args));
    first_line(&said)
        .strip_prefix("native:")
        .unwrap_or_else(|| panic!("{said}"))
        .parse()
        .unwrap()
}

/// The tree `fprev reveal ARGS` finds with the SkylakeX kernels.
fn skylakex_tree(args: &[&str]) -> SummationTree {
    let dir = TempDir::new().unwrap();
    let file = dir.path().join("t.json");
    let mut all = vec!["reveal"];
    all.extend(args);
    all.extend(["-o", file.to_str().unwrap()]);
    assert_ok(&skylakex(&all));
    TreeDocument::read(&file).unwrap().tree().clone()
}

/// NumPy's pairwise sum as its source says
/// (`numpy/_core/src/umath/loops_utils.h.src` lines 81-143): fewer than 8
/// summands added one by one; up to 128, eight accumulators seeded with the
/// first eight and taking eight a loop, combined `((r0+r1)+(r2+r3)) +
/// ((r4+r5)+(r6+r7))`, the rest added one by one; past 128, halved at half
/// the count rounded down to a multiple of 8. Explain's formula and the
/// source's give NumPy's trees at sizes explain never revealed.
#[test]
fn explain_s_formula_of_numpy_s_sum_is_its_source_s() {
    source_and_explain_give_its_trees(
        "numpy:sum",
        "halves(128, 8, simd(8, 1, pairwise, then))",
        &[5, 61, 133, 1103, 5007],
    );
}

/// Rayon's `par_iter().sum()` on one thread as its source says
/// (rayon 1.12, `src/iter/plumbing/mod.rs`: `Splitter::new` lines 260-264
/// allows as many splits as threads, `try_split` lines 267-283 halves them
/// at each split unless a job was stolen, `helper` lines 407-408 cuts at
/// `len / 2`, each piece folded left to right): one thread cuts once, in
/// halves rounded down. Explain's formula and the source's give Rayon's
/// trees at sizes explain never revealed.
#[test]
fn explain_s_formula_of_rayon_s_sum_on_one_thread_is_its_source_s() {
    source_and_explain_give_its_trees("rayon:sum:1", "bisect(1, sequential)", &[3, 61, 1103]);
}

/// Polars' `Series.sum()` of floats as its source says
/// (`crates/polars-compute/src/float_sum.rs`: `FloatSum::sum` sums the
/// first `n mod 128` summands (`PAIRWISE_RECURSION_LIMIT`) apart, left to
/// right, and adds them to the others' sum; `pairwise_sum` cuts those at
/// `(blocks / 2) * 128` down to blocks of 128; `sum_block_vectorized`
/// adds a block in 16 lanes (`STRIPE`) and `vector_horizontal_sum` folds
/// the lanes in halves, lane `j + 8` into lane `j`, down to four, then
/// `(v0 + v2) + (v1 + v3)`). Explain's formula and the source's give
/// Polars' trees at sizes explain never revealed.
#[test]
fn explain_s_formula_of_polars_s_sum_is_its_source_s() {
    source_and_explain_give_its_trees(
        "polars:sum:1",
        "lead(128, halves(128, 128, interleave(16, sequential, fold)), sequential)",
        &[61, 1103, 5007],
    );
}

/// A sum whose order no formula gives is not explained (exit 1), and the
/// closest formula is named as failing where it does.
#[test]
fn explain_says_when_no_formula_fits() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "parity");
    let spec = format!("dylib:{}:parity_f32", lib.display());
    let out = run(&["explain", &spec, "-n", "1..12"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(said.starts_with("# not explained:"), "{said}");
    assert!(said.contains("the closest, native:"), "{said}");
    // --infer then predicts nothing, and says so.
    let out = run(&["reveal", &spec, "-n", "5000", "--infer"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing predicts n = 5000"),
        "{}",
        stderr(&out)
    );
}

/// A prediction the black box does not follow is caught by its proof: the
/// tree is revealed in full, and no formula is claimed for it.
#[test]
fn reveal_infer_reveals_in_full_where_the_formula_mispredicts() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path(), "switch");
    let spec = format!("dylib:{}:switch_f32", lib.display());
    let out = run_in(
        dir.path(),
        &["reveal", &spec, "-n", "5000", "--infer", "-o", "t.json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("native:sequential mispredicts n = 5000"),
        "{}",
        stderr(&out)
    );
    let text = std::fs::read_to_string(dir.path().join("t.json")).unwrap();
    assert!(!text.contains("inferred"), "{text}");
    let tree = TreeDocument::read(&dir.path().join("t.json"))
        .unwrap()
        .into_tree();
    assert_eq!(tree, Order::Reverse.tree(5000));
    // Without the proof, the replay catches it: exit 5, not a wrong tree.
    let out = run_in(
        dir.path(),
        &[
            "reveal",
            &spec,
            "-n",
            "5000",
            "--infer",
            "--prove-up-to",
            "0",
        ],
    );
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
}

/// --infer predicts a tree from smaller sizes, proves it with one masked
/// query per node and confirms it by replay: where the size can also be
/// revealed, the prediction is the reveal.
#[test]
fn reveal_infer_predicts_the_revealed_tree() {
    let dir = TempDir::new().unwrap();
    for spec in ["blas:dot", "ndarray:sum", "ndarray:dot"] {
        let out = run_in(
            dir.path(),
            &[
                "reveal",
                spec,
                "-n",
                "9000",
                "--infer",
                "-o",
                "predicted.json",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{spec}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("predicted by native:"),
            "{}",
            stderr(&out)
        );
        // Too deep for serde_json's default recursion limit: read as text.
        let text = std::fs::read_to_string(dir.path().join("predicted.json")).unwrap();
        assert!(text.contains(r#""inferred": {"#), "{spec}");
        assert!(text.contains(r#""formula": ""#), "{spec}");
        assert!(text.contains(r#""proven": 8999"#), "{spec}");
        let out = run_in(
            dir.path(),
            &["reveal", spec, "-n", "9000", "-o", "revealed.json"],
        );
        assert_eq!(out.status.code(), Some(0), "{spec}: {}", stderr(&out));
        let out = run_in(dir.path(), &["diff", "predicted.json", "revealed.json"]);
        assert!(
            assert_ok(&out).starts_with("equal:"),
            "{spec}: {}",
            stdout(&out)
        );
    }
}

/// Where no reference order gives a revealed tree, its summary line names
/// the formula found for a real library that gives it, node for node:
/// NumPy's sum and OpenBLAS's sdot at 1,000 summands.
#[test]
fn the_summary_names_the_known_formula_that_gives_the_tree() {
    for (spec, found_for) in [
        ("numpy:sum", "found for numpy:sum"),
        ("blas:dot", "(OpenBLAS's sdot)"),
    ] {
        let out = run(&["reveal", spec, "-n", "1000"]);
        assert_eq!(out.status.code(), Some(0), "{spec}: {}", stderr(&out));
        let said = stdout(&out);
        let line = said.lines().nth(1).unwrap_or_default();
        assert!(
            line.starts_with("# formula native:") && line.contains(found_for),
            "{spec}: {line}"
        );
    }
}

/// Intel MKL from the package index (`pip install mkl`, as the test script
/// does): `blas:dot@mkl` finds `libmkl_rt` in the lib folder of the Python
/// that installed it, reveals a tree its replay confirms, and MKL's thread
/// count changes the order of a long dot product (each thread its half).
#[test]
fn mkl_from_the_package_index_is_found_and_its_threads_change_the_order() {
    let dir = TempDir::new().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let out = run_in(dir.path(), &["reveal", "blas:dot@mkl", "-n", "1000"]);
    let text = assert_ok(&out);
    assert!(text.contains("# confirmed"), "{text}");
    assert!(stderr(&out).contains("libmkl_rt.so"), "{}", stderr(&out));
    for threads in ["1", "2"] {
        let out = run_in(
            dir.path(),
            &[
                "reveal",
                "blas:dot@mkl",
                "-n",
                "65536",
                "--threads",
                threads,
                "-o",
                &path(&format!("t{threads}.json")),
            ],
        );
        assert_ok(&out);
    }
    let out = run(&["diff", "-q", &path("t1.json"), &path("t2.json")]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
}
