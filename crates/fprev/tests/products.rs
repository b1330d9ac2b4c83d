//! Black boxes that multiply ([`Probe::as_dot`], [`Dot`]): the dot products,
//! GEMVs and GEMMs of `blas:`, `ndarray:`, `dylib-dot:` (C functions
//! compiled here with `cc`) and the Python libraries, called with a vector
//! `y` other than ones ([`Dot::dot`]), on the real libraries, no mocks.
//!
//! Each is held to what follows from the definition of a dot product:
//! (a) `dot` with `y` = ones is `sum`, bit for bit; (b) with `y` of powers
//! of two the products are exact, so `dot` is `sum` of the products, bit
//! for bit; (c) with random `y` it is within a dot product's error bound of
//! the exact value; (d) `sum` after a `dot` is what it was before (the
//! ones are restored).

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use fprev::probe::ProbeOptions;
use fprev::{Error, Format, Probe};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tempfile::TempDir;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const FORMATS: [Format; 2] = [Format::F32, Format::F64];

fn options(n: usize, format: Format, shape: Option<[usize; 3]>) -> ProbeOptions {
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

/// Whether the family of `prefix` runs here; else says why it is skipped.
fn available(prefix: &str) -> bool {
    let Some(family) = fprev::spec::FAMILIES.iter().find(|f| f.prefix == prefix) else {
        eprintln!("SKIPPED {prefix}: this build has no {prefix}: probes");
        return false;
    };
    match family.available() {
        Ok(()) => true,
        Err(why) => {
            eprintln!("SKIPPED {prefix}: {why}");
            false
        }
    }
}

/// A random value of `format` with every significand bit drawn, and an
/// exponent in `exponents`, either sign.
fn full(format: Format, exponents: RangeInclusive<i32>, rng: &mut ChaCha8Rng) -> f64 {
    let p = format.precision() as i32;
    let fraction = rng.random::<u64>() >> (65 - p);
    let significand = ((1u64 << (p - 1)) | fraction) as f64;
    let sign = if rng.random::<bool>() { -1.0 } else { 1.0 };
    let v = sign * significand * 2f64.powi(rng.random_range(exponents) - (p - 1));
    assert!(format.represents(v), "{v} is not a {format} value");
    v
}

/// `±2^k`, `k` in `-3..=3`: multiplying by it is exact.
fn power_of_two(rng: &mut ChaCha8Rng) -> f64 {
    let sign = if rng.random::<bool>() { -1.0 } else { 1.0 };
    sign * 2f64.powi(rng.random_range(-3..=3))
}

/// `x . y` to about twice f64's precision (products split exactly by an
/// FMA, sums by TwoSum), then rounded once to f64.
fn exact_dot(x: &[f64], y: &[f64]) -> f64 {
    let (mut s, mut tail) = (0.0f64, 0.0f64);
    for (&a, &b) in x.iter().zip(y) {
        let p = a * b;
        let p_err = a.mul_add(b, -p);
        let t = s + p;
        let z = t - s;
        let s_err = (s - (t - z)) + (p - z);
        s = t;
        tail += s_err + p_err;
    }
    s + tail
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Checks (a) to (d) on `probe` with a full batch of random rows.
fn check_products(probe: &mut dyn Probe, what: &str, seed: u64) {
    let probe = probe
        .as_dot()
        .unwrap_or_else(|| panic!("{what}: does not multiply"));
    let n = probe.n();
    let format = probe.format();
    let rows = probe.max_batch();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<f64> = (0..rows * n)
        .map(|_| full(format, -2..=2, &mut rng))
        .collect();
    let mut before = vec![0.0; rows];
    probe.sum(&x, &mut before).unwrap();
    let mut got = vec![0.0; rows];

    // (a) y = ones is the plain sum.
    probe.dot(&x, &vec![1.0; n], &mut got).unwrap();
    assert_eq!(bits(&got), bits(&before), "{what}: dot with ones != sum");

    // (b) Exact products: the dot is the sum of the products.
    let y: Vec<f64> = (0..n).map(|_| power_of_two(&mut rng)).collect();
    let products: Vec<f64> = x
        .chunks_exact(n)
        .flat_map(|row| row.iter().zip(&y).map(|(a, b)| a * b))
        .collect();
    probe.dot(&x, &y, &mut got).unwrap();
    let mut want = vec![0.0; rows];
    probe.sum(&products, &mut want).unwrap();
    assert_eq!(
        bits(&got),
        bits(&want),
        "{what}: dot with powers of two {y:?} != sum of the products"
    );

    // (c) Random y: within the error bound of n + 1 roundings (products
    // and additions) of the exact dot product.
    let y: Vec<f64> = (0..n).map(|_| full(format, -2..=2, &mut rng)).collect();
    probe.dot(&x, &y, &mut got).unwrap();
    let unit = 2f64.powi(-(format.precision() as i32));
    for (r, (row, &g)) in x.chunks_exact(n).zip(&got).enumerate() {
        let exact = exact_dot(row, &y);
        let magnitude: f64 = row.iter().zip(&y).map(|(a, b)| (a * b).abs()).sum();
        let bound = (n as f64 + 2.0) * unit * magnitude;
        assert!(
            (g - exact).abs() <= bound,
            "{what}: row {r}: dot {g} is {} from the exact {exact} (bound {bound})",
            (g - exact).abs()
        );
    }

    // (d) The ones are back for plain sums.
    let mut after = vec![0.0; rows];
    probe.sum(&x, &mut after).unwrap();
    assert_eq!(
        bits(&after),
        bits(&before),
        "{what}: sum changed after a dot"
    );
}

/// Opens and checks `spec` at a few sizes: vectors alone for `dot`, a few
/// rows (and columns of `B`) for `gemv` and `gemm`, and the default shape.
fn check_spec(spec: &str, format: Format) {
    let op = spec.split([':', '@']).nth(1).unwrap_or("");
    let cases: Vec<(usize, Option<[usize; 3]>)> = match op {
        "dot" => [1, 2, 7, 33, 300].map(|n| (n, None)).to_vec(),
        "gemv" => [1, 7, 64, 300]
            .map(|n| (n, Some([5, 1, n])))
            .into_iter()
            .chain([(9, None)])
            .collect(),
        _ => [1, 7, 64, 300]
            .map(|n| (n, Some([5, 3, n])))
            .into_iter()
            .chain([(9, None)])
            .collect(),
    };
    for (k, (n, shape)) in cases.into_iter().enumerate() {
        let mut probe = open(spec, n, format, shape);
        let what = format!("{spec} n = {n} {format} shape {shape:?}");
        check_products(&mut *probe, &what, 1000 * k as u64 + n as u64);
    }
}

/// The one line of an [`Error::Input`].
fn input_error<T>(result: fprev::Result<T>, what: &str) -> String {
    match result {
        Ok(_) => panic!("{what}: accepted, but should not have been"),
        Err(Error::Input(msg)) => {
            assert!(!msg.contains('\n'), "{what}: not one line: {msg:?}");
            msg
        }
        Err(e) => panic!("{what}: expected Error::Input, got {e:?}"),
    }
}

/// A probe that multiplies refuses a `y` or rows of the wrong length.
fn check_lengths(probe: &mut dyn Probe, what: &str) {
    let probe = probe.as_dot().expect("a probe that multiplies");
    let n = probe.n();
    let mut out = [0.0];
    let msg = input_error(probe.dot(&vec![1.0; n], &vec![1.0; n + 1], &mut out), what);
    assert!(msg.contains(&(n + 1).to_string()), "{what}: {msg}");
    input_error(probe.dot(&vec![1.0; n + 1], &vec![1.0; n], &mut out), what);
}

// ---------------------------------------------------------------------------
// ndarray and BLAS
// ---------------------------------------------------------------------------

#[test]
fn ndarray_dot_gemv_gemm_multiply_by_y() {
    for op in ["dot", "gemv", "gemm"] {
        for format in FORMATS {
            check_spec(&format!("ndarray:{op}"), format);
        }
    }
}

#[test]
fn ndarray_sum_does_not_multiply_and_bad_lengths_are_refused() {
    let mut sum = open("ndarray:sum", 8, Format::F32, None);
    assert!(sum.as_dot().is_none());
    for op in ["dot", "gemv", "gemm"] {
        let spec = format!("ndarray:{op}");
        check_lengths(&mut *open(&spec, 8, Format::F64, Some([2, 2, 8])), &spec);
    }
}

/// The libraries scripts/test.sh installs; each is skipped, saying so,
/// where it is missing.
const BLAS_LIBRARIES: [&str; 3] = ["openblas", "blis", "refblas"];

#[test]
fn blas_dot_gemv_gemm_multiply_by_y() {
    if !available("blas") {
        return;
    }
    for op in ["dot", "gemv", "gemm"] {
        for format in FORMATS {
            check_spec(&format!("blas:{op}"), format);
        }
    }
    for lib in BLAS_LIBRARIES {
        let spec = format!("blas:dot@{lib}");
        if let Err(e) = fprev::open(&spec, &options(4, Format::F64, None)) {
            eprintln!("SKIPPED {lib}: {e}");
            continue;
        }
        for op in ["dot", "gemv", "gemm"] {
            for format in FORMATS {
                check_spec(&format!("blas:{op}@{lib}"), format);
            }
        }
    }
    let mut probe = open("blas:gemv", 8, Format::F32, Some([3, 1, 8]));
    check_lengths(&mut *probe, "blas:gemv");
}

// ---------------------------------------------------------------------------
// dylib-dot: C functions
// ---------------------------------------------------------------------------

/// Compiles `tests/c/dots.c` into `dir/libdots.so` and returns its path.
/// `-ffp-contract=off`: the plain dots round each product (no fused
/// multiply-add the source does not ask for).
fn build_dots(dir: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/dots.c");
    let lib = dir.join("libdots.so");
    let status = std::process::Command::new("cc")
        .args(["-O2", "-ffp-contract=off", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&source)
        .arg("-lm")
        .status()
        .expect("a C compiler `cc` on the PATH (apt-get install gcc)");
    assert!(status.success(), "cc failed on {}", source.display());
    lib
}

/// The C function of `symbol` in `lib` as `dylib-dot:`.
fn dot_spec(lib: &Path, symbol: &str) -> String {
    format!("dylib-dot:{}:{symbol}", lib.display())
}

#[test]
fn dylib_dot_calls_the_c_function_with_y() {
    let dir = TempDir::new().unwrap();
    let lib = build_dots(dir.path());
    for (kind, format) in [
        ("fma", Format::F32),
        ("plain", Format::F32),
        ("fma", Format::F64),
        ("plain", Format::F64),
    ] {
        let spec = dot_spec(&lib, &format!("{kind}_dot_{format}"));
        for n in [1, 2, 3, 17, 300] {
            let mut probe = open(&spec, n, format, None);
            assert_eq!(probe.max_batch(), 1);
            check_products(&mut *probe, &format!("{spec} n = {n}"), n as u64);
        }
        check_lengths(&mut *open(&spec, 5, format, None), &spec);
    }
}

/// `x = [-c, a, a]`, `y = [1, b, b]` with `a * b = c + e`, `e` half an ulp
/// of `c`: each rounded product loses `e` (a tie, to the even `c`), so the
/// plain loop gives `c`; the FMA loop keeps it exactly (`-c + (c + e) = e`),
/// then adds the next product to it unrounded: `c + 2e`, one ulp more.
#[test]
fn dylib_dot_tells_a_fused_multiply_add_from_a_plain_one() {
    let dir = TempDir::new().unwrap();
    let lib = build_dots(dir.path());
    // f32: a = b = 1 + 2^-12, a * b = (1 + 2^-11) + 2^-24.
    let a32 = 1.0 + 2f64.powi(-12);
    let c32 = 1.0 + 2f64.powi(-11);
    // f64: a = 1 + 2^-27, b = 1 + 2^-26, a * b = (1 + 2^-26 + 2^-27) + 2^-53.
    let (a64, b64) = (1.0 + 2f64.powi(-27), 1.0 + 2f64.powi(-26));
    let c64 = 1.0 + 2f64.powi(-26) + 2f64.powi(-27);
    for (format, a, b, c, e) in [
        (Format::F32, a32, a32, c32, 2f64.powi(-24)),
        (Format::F64, a64, b64, c64, 2f64.powi(-53)),
    ] {
        assert_eq!(a * b, c + e, "{format}: a * b is exact in f64 here");
        let x = [-c, a, a];
        let y = [1.0, b, b];
        let mut fma = open(
            &dot_spec(&lib, &format!("fma_dot_{format}")),
            3,
            format,
            None,
        );
        let mut plain = open(
            &dot_spec(&lib, &format!("plain_dot_{format}")),
            3,
            format,
            None,
        );
        let (mut f, mut p) = ([0.0], [0.0]);
        fma.as_dot().unwrap().dot(&x, &y, &mut f).unwrap();
        plain.as_dot().unwrap().dot(&x, &y, &mut p).unwrap();
        assert_eq!(p[0], c, "{format}: the plain dot");
        assert_eq!(f[0], c + 2.0 * e, "{format}: the FMA dot");
        // Their sums (y = ones) round nothing away, and agree.
        fma.sum(&x, &mut f).unwrap();
        plain.sum(&x, &mut p).unwrap();
        assert_eq!((f[0], p[0]), (a + a - c, a + a - c), "{format}: sums");
    }
}

/// The arithmetic reveal names what the C source says: the FMA loop rounds
/// its first product (`fma(x0, y0, 0)`) and fuses every other; the plain
/// loop rounds every product to its format. Either way the order is the
/// loop's, and the model replays the C function on random x and y.
#[test]
fn the_arithmetic_reveal_finds_the_fused_multiply_add_in_c() {
    use fprev::arith::{NodeArithmetic, Product};
    use fprev::reveal::arithmetic::{ArithOptions, reveal_arithmetic};
    let dir = TempDir::new().unwrap();
    let lib = build_dots(dir.path());
    for format in FORMATS {
        for n in [2, 3, 17, 100, 1000] {
            for kind in ["fma", "plain"] {
                let spec = dot_spec(&lib, &format!("{kind}_dot_{format}"));
                let what = format!("{spec} n = {n}");
                let mut probe = open(&spec, n, format, None);
                let tree = fprev::reveal(&mut *probe, &fprev::Options::default())
                    .unwrap_or_else(|e| panic!("{what}: {e}"))
                    .revealed()
                    .expect("an order")
                    .tree;
                assert_eq!(tree, fprev::order::Order::Sequential.tree(n), "{what}");
                let found = reveal_arithmetic(&mut *probe, &tree, &ArithOptions::default())
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let model = &found.model;
                assert!(model.is_uniform(), "{what}: {model}");
                assert_eq!(model.default, NodeArithmetic::ieee(format), "{what}");
                assert_eq!(model.inputs, None, "{what}");
                let products = model.products.as_ref().expect("a dot multiplies");
                for i in 0..n {
                    let want = match (kind, i) {
                        ("fma", 1..) => Product::Exact,
                        _ => Product::Rounded(format),
                    };
                    assert_eq!(products.at(i), want, "{what}: x{i} ({model})");
                }
                assert!(found.confirmation.mismatch.is_none(), "{what}");
                assert!(
                    found.products_asked <= 16 + 2 * 10,
                    "{what}: {} products asked",
                    found.products_asked
                );
            }
        }
    }
}

/// A black box that multiplies is confirmed by one replay of its model on
/// random x and y, which replays the order too: the replay in plain
/// additions with y = 1 is not made, and the reveal costs exactly its
/// trials less. Where that model is wrong (a node the sample of nodes did
/// not ask), the reveal starts again, plain replay first, and finds it.
#[test]
fn one_replay_on_random_x_and_y_confirms_a_dot_s_order_and_its_model() {
    use fprev::arith::{NodeArithmetic, NodeKey};
    use fprev::check::{check_models, check_row};
    use fprev::reveal::arithmetic::{ArithOptions, confirm_arithmetic, reveal_arithmetic};
    let dir = TempDir::new().unwrap();
    let lib = build_dots(dir.path());
    let n = 100;
    let tree = fprev::order::Order::Sequential.tree(n);
    let opts = ArithOptions::default();

    let spec = dot_spec(&lib, "fma_dot_f32");
    let mut probe = open(&spec, n, Format::F32, None);
    let one = confirm_arithmetic(&mut *probe, &tree, None, &opts, true).unwrap();
    assert!(one.plain.is_none(), "{spec}: a plain replay was made");
    let found = one.arithmetic.expect("sought").unwrap();
    assert_eq!(found.confirmation.trials, opts.trials);
    assert!(found.confirmation.mismatch.is_none());
    assert!(found.model.products.is_some(), "{}", found.model);
    // The same reveal after a plain replay, as before: the same model, and
    // the plain replay's trials more.
    let plain = check_row(&tree, &mut *probe, opts.trials, 0, 0).unwrap();
    assert!(plain.mismatch.is_none());
    let after = ArithOptions::after(&plain, opts.trials);
    let two = reveal_arithmetic(&mut *probe, &tree, &after).unwrap();
    assert_eq!(two.model, found.model);
    assert_eq!(
        plain.trials as u64 + two.calls,
        found.calls + opts.trials as u64
    );
    // And the model replays the C function on other inputs.
    let (again, matched) = check_models(
        &tree,
        std::slice::from_ref(&found.model),
        &mut *probe,
        200,
        7,
        0,
    )
    .unwrap();
    assert!(matched.is_some(), "{spec}: {:?}", again.mismatch);

    let spec = dot_spec(&lib, "bf16_step_dot_f32");
    let mut probe = open(&spec, n, Format::F32, None);
    let one = confirm_arithmetic(&mut *probe, &tree, None, &opts, true).unwrap();
    let plain = one
        .plain
        .as_ref()
        .expect("the model failed: a plain replay");
    assert!(
        plain.mismatch.is_some(),
        "plain f32 additions replayed {spec}"
    );
    let found = one.arithmetic.expect("sought").unwrap();
    let model = &found.model;
    let bf16 = NodeKey { first: 0, size: 38 };
    for size in 2..=n {
        let key = NodeKey { first: 0, size };
        let want = match key == bf16 {
            true => Format::Bf16,
            false => Format::F32,
        };
        assert_eq!(
            model.at(&key),
            NodeArithmetic::ieee(want),
            "{spec}: {model}"
        );
    }
    assert!(found.confirmation.mismatch.is_none());
    let (again, matched) =
        check_models(&tree, std::slice::from_ref(model), &mut *probe, 200, 7, 0).unwrap();
    assert!(matched.is_some(), "{spec}: {:?}", again.mismatch);
    // Told, wrongly, that plain additions replayed it, the reveal finds no
    // rounding of the products that does, and says so in one line.
    let told = ArithOptions {
        confirmed_plain: Some(Format::F32),
        ..opts
    };
    let error = reveal_arithmetic(&mut *probe, &tree, &told)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("no rounding of its products") && !error.contains("  "),
        "{error}"
    );
}

#[test]
fn dylib_sums_do_not_multiply_and_dylib_dot_errors_are_one_line() {
    let dir = TempDir::new().unwrap();
    let lib = build_dots(dir.path());
    let f32_4 = options(4, Format::F32, None);
    let mut sum = fprev::open(&format!("dylib:{}:sum_f32", lib.display()), &f32_4).unwrap();
    assert!(sum.as_dot().is_none());
    assert!(
        fprev::open(&dot_spec(&lib, "plain_dot_f32"), &f32_4)
            .unwrap()
            .as_dot()
            .is_some()
    );

    let msg = input_error(fprev::open(&dot_spec(&lib, "nothing"), &f32_4), "no symbol");
    assert!(
        msg.contains("no symbol 'nothing'")
            && msg.contains("float nothing(const float *x, const float *y, size_t n)"),
        "{msg}"
    );
    for spec in ["dylib-dot:", "dylib-dot", "dylib-dot::dot"] {
        let msg = input_error(fprev::open(spec, &f32_4), spec);
        assert!(msg.contains("dylib-dot:PATH.so:SYMBOL"), "{spec}: {msg}");
        assert!(msg.contains("const T *y"), "{spec}: {msg}");
    }
    assert!(
        fprev::spec::FAMILIES
            .iter()
            .any(|f| f.pattern == "dylib-dot:PATH.so:SYMBOL")
    );
}

// ---------------------------------------------------------------------------
// Python libraries (fn.weights)
// ---------------------------------------------------------------------------

#[cfg(feature = "python")]
#[test]
fn numpy_dot_gemv_gemm_multiply_by_y() {
    if !available("numpy") {
        return;
    }
    for op in ["dot", "gemv", "gemm"] {
        for format in FORMATS {
            check_spec(&format!("numpy:{op}"), format);
        }
    }
    // The narrow formats travel as their bits, the weights as well.
    for n in [1, 7, 64] {
        let spec = "numpy:dot";
        let mut probe = open(spec, n, Format::F16, None);
        check_products(&mut *probe, &format!("{spec} n = {n} f16"), n as u64);
    }
    if fprev::probe::python::available("ml_dtypes").is_ok() {
        for (spec, shape) in [("numpy:dot", None), ("numpy:gemv", Some([3, 1, 16]))] {
            let mut probe = open(spec, 16, Format::Bf16, shape);
            check_products(&mut *probe, &format!("{spec} bf16"), 16);
        }
    } else {
        eprintln!("SKIPPED numpy bf16: ml_dtypes is not importable");
    }
    let mut sum = open("numpy:sum", 8, Format::F32, None);
    assert!(sum.as_dot().is_none());
    check_lengths(&mut *open("numpy:dot", 8, Format::F32, None), "numpy:dot");
}

#[cfg(feature = "python")]
#[test]
fn jax_dot_gemv_gemm_multiply_by_y() {
    if !available("jax") {
        return;
    }
    for format in FORMATS {
        for n in [1, 7, 64] {
            let mut probe = open("jax:dot", n, format, None);
            check_products(&mut *probe, &format!("jax:dot n = {n} {format}"), n as u64);
        }
        for (op, shape) in [("gemv", [4, 1, 33]), ("gemm", [4, 3, 33])] {
            let spec = format!("jax:{op}");
            let mut probe = open(&spec, 33, format, Some(shape));
            check_products(&mut *probe, &format!("{spec} {format}"), 33);
        }
    }
    assert!(open("jax:sum", 8, Format::F32, None).as_dot().is_none());
}

#[cfg(feature = "python")]
#[test]
fn torch_dot_gemv_gemm_multiply_by_y() {
    if !available("torch") {
        return;
    }
    for format in FORMATS {
        for n in [1, 7, 64] {
            let mut probe = open("torch:dot", n, format, None);
            check_products(
                &mut *probe,
                &format!("torch:dot n = {n} {format}"),
                n as u64,
            );
        }
        for (op, shape) in [("gemv", [4, 1, 33]), ("gemm", [4, 3, 33])] {
            let spec = format!("torch:{op}");
            let mut probe = open(&spec, 33, format, Some(shape));
            check_products(&mut *probe, &format!("{spec} {format}"), 33);
        }
    }
    let mut probe = open("torch:dot", 16, Format::Bf16, None);
    check_products(&mut *probe, "torch:dot bf16", 16);
}
