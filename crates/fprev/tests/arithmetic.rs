//! The arithmetic reveal against black boxes whose arithmetic is known:
//! random trees whose nodes round to random formats, each way, evaluated
//! by the crate's replay of a model drawn here; Kahan's compensated loop
//! and chains of compensated steps between blocks. The model must come
//! back node for node, and a replay with it must match the black box on
//! fresh random inputs.

use fprev::arith::{Arithmetic, NodeArithmetic, NodeKey, Product, Products, Rounding};
use fprev::inputs::Inputs;
use fprev::reduce::Replay;
use fprev::reveal::arithmetic::{ArithOptions, Method, confirm_arithmetic, reveal_arithmetic};
use fprev::{Dot, Format, Options, Probe, SummationTree, reveal};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

mod common;

/// A black box that adds in `tree`'s order, each node as `model` says, and
/// rounds its result to `format`.
struct Modelled {
    replay: Replay,
    format: Format,
    narrowest: Format,
    /// Rows a call, each summed alike (a GEMV's).
    rows: usize,
}

impl Modelled {
    fn new(tree: &SummationTree, model: &Arithmetic, format: Format) -> Self {
        let narrowest = std::iter::once(model.default)
            .chain(model.nodes.values().copied())
            .map(|a| a.format)
            .min_by_key(|f| f.precision())
            .unwrap();
        Modelled {
            replay: Replay::with_arithmetic(tree, model),
            format,
            narrowest,
            rows: 1,
        }
    }
}

impl Probe for Modelled {
    fn n(&self) -> usize {
        self.replay.n()
    }
    fn format(&self) -> Format {
        self.format
    }
    fn accumulator(&self) -> Format {
        self.narrowest
    }
    fn may_fuse(&self) -> bool {
        self.replay.has_fused_nodes()
    }
    fn max_batch(&self) -> usize {
        self.rows
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> fprev::Result<()> {
        for (x, o) in inputs.chunks(self.n()).zip(out) {
            *o = self.format.round(self.replay.sum(x));
        }
        Ok(())
    }
    fn as_dot(&mut self) -> Option<&mut dyn Dot> {
        if self.replay.has_products() {
            Some(self)
        } else {
            None
        }
    }
}

impl Dot for Modelled {
    fn dot(&mut self, rows: &[f64], y: &[f64], out: &mut [f64]) -> fprev::Result<()> {
        for (x, o) in rows.chunks(self.n()).zip(out) {
            *o = self.format.round(self.replay.dot(x, y));
        }
        Ok(())
    }
}

/// How the nodes of a drawn model differ.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// Every node alike.
    Uniform,
    /// Two runs along the post-order: a body, then a tail (a SIMD kernel).
    BodyAndTail,
    /// Each node drawn on its own.
    Scattered,
}

/// A node rounding to one of `formats`, to nearest or toward zero.
fn draw(rng: &mut ChaCha8Rng, formats: [Format; 2]) -> NodeArithmetic {
    NodeArithmetic {
        format: formats[rng.random_range(0..2)],
        rounding: if rng.random_bool(0.5) {
            Rounding::NearestEven
        } else {
            Rounding::TowardZero
        },
        fused_bits: None,
        compensated: false,
        drops_error: false,
        aligns_factors: None,
    }
}

fn model(tree: &SummationTree, layout: Layout, seed: u64) -> Arithmetic {
    model_in(tree, layout, seed, [Format::F32, Format::F64])
}

/// [`model`] with nodes in `formats`.
fn model_in(tree: &SummationTree, layout: Layout, seed: u64, formats: [Format; 2]) -> Arithmetic {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let body = draw(&mut rng, formats);
    let mut tail = draw(&mut rng, formats);
    while tail == body {
        tail = draw(&mut rng, formats);
    }
    let inner = tree.post_order();
    let cut = rng.random_range(0..inner.len().max(1));
    let position: std::collections::HashMap<_, _> =
        inner.iter().enumerate().map(|(k, v)| (*v, k)).collect();
    Arithmetic::from_nodes(tree, |node| match layout {
        Layout::Uniform => body,
        Layout::BodyAndTail if position[&node] < cut => body,
        Layout::BodyAndTail => tail,
        Layout::Scattered => draw(&mut rng, formats),
    })
}

/// Checks the revealed model against the truth: every node below the root
/// alike, and a replay with it equal to the black box on fresh inputs (the
/// root's rounding can hide behind the final rounding to the input format).
/// Masked inputs assume rounding to nearest, so the order is revealed
/// first only where every node does; otherwise the true tree is given.
fn assert_revealed(tree: &SummationTree, truth: &Arithmetic, format: Format, layout: Layout) {
    let mut black_box = Modelled::new(tree, truth, format);
    let nearest = std::iter::once(truth.default)
        .chain(truth.nodes.values().copied())
        .all(|a| a.rounding == Rounding::NearestEven);
    if nearest {
        let order = reveal(&mut black_box, &Options::default())
            .unwrap_or_else(|e| panic!("order of {tree} under {truth}: {e}"))
            .revealed()
            .expect("an order");
        assert_eq!(&order.tree, tree);
    }
    // Every node asked where the nodes differ one by one: a sample then
    // replays alike on random inputs without being right at every node.
    let options = ArithOptions {
        every_node: matches!(layout, Layout::Scattered),
        ..ArithOptions::default()
    };
    let found = reveal_arithmetic(&mut black_box, tree, &options)
        .unwrap_or_else(|e| panic!("{layout:?} {truth} on {tree}: {e}"));
    let keys = NodeKey::all(tree);
    for node in tree.post_order() {
        if node == tree.root() {
            continue;
        }
        let key = keys[node.index()];
        assert_eq!(
            found.model.at(&key),
            truth.at(&key),
            "{key} of {tree}: revealed {}, truth {truth}",
            found.model
        );
    }
    if !matches!(layout, Layout::Scattered) && tree.post_order().len() > 40 {
        // Runs need a sample and the bisections of their boundary only.
        assert_eq!(found.method, Method::Sampled, "{truth}");
        assert!(
            found.nodes_asked <= 16 + 2 * 8,
            "{} nodes asked",
            found.nodes_asked
        );
    }
    let replay = Replay::with_arithmetic(tree, &found.model);
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut out = [0.0];
    for trial in 0..200 {
        let kind = Inputs::ALL[trial % 3];
        let x = kind.draw(format, tree.n(), &mut rng);
        black_box.sum(&x, &mut out).unwrap();
        let replayed = format.round(replay.sum(&x));
        assert_eq!(
            replayed.to_bits(),
            out[0].to_bits(),
            "trial {trial} ({kind})"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn uniform_models_come_back(n in 3usize..200, seed in 0u64..1_000, ordered in any::<bool>()) {
        let tree = common::random_tree(n, 2, ordered, seed);
        let truth = model(&tree, Layout::Uniform, seed);
        assert_revealed(&tree, &truth, Format::F32, Layout::Uniform);
    }

    #[test]
    fn a_body_and_a_tail_come_back(n in 3usize..300, seed in 0u64..1_000, ordered in any::<bool>()) {
        let tree = common::random_tree(n, 2, ordered, seed);
        let truth = model(&tree, Layout::BodyAndTail, seed);
        assert_revealed(&tree, &truth, Format::F32, Layout::BodyAndTail);
    }

    #[test]
    fn scattered_models_come_back(n in 3usize..120, seed in 0u64..1_000) {
        let tree = common::random_tree(n, 2, false, seed);
        let truth = model(&tree, Layout::Scattered, seed);
        assert_revealed(&tree, &truth, Format::F32, Layout::Scattered);
    }

    /// x87 accumulators (64 bits) over f64 inputs: alone, beside f64
    /// nodes in a body and a tail, or scattered; to nearest or truncating.
    #[test]
    fn x87_accumulators_come_back(n in 3usize..150, seed in 0u64..1_000, layout in 0usize..3) {
        let layout = [Layout::Uniform, Layout::BodyAndTail, Layout::Scattered][layout];
        let tree = common::random_tree(n, 2, false, seed);
        let truth = model_in(&tree, layout, seed, [Format::X87, Format::F64]);
        assert_revealed(&tree, &truth, Format::F64, layout);
    }
}

/// An x87 root above f64 nodes (a loop whose last addition stays in a
/// register, as `long double` code spills its running sum to a double):
/// the root has no sibling to ask against, so only a replay with it finds
/// it, each rounding, over nodes of either rounding. Proptest's case
/// `n = 4, seed = 399` is the first: `((0+(1+2))+3)`, f64 nodes toward
/// zero and an x87 root toward zero.
#[test]
fn an_x87_root_above_f64_nodes_comes_back() {
    for text in ["((0+(1+2))+3)", "(0+(1+2))", "(((0+3)+1)+(2+4))"] {
        let tree: SummationTree = text.parse().unwrap();
        for (below, root) in [Rounding::TowardZero, Rounding::NearestEven]
            .into_iter()
            .flat_map(|b| Rounding::ALL.map(|r| (b, r)))
        {
            let truth = Arithmetic::from_nodes(&tree, |v| NodeArithmetic {
                rounding: if v == tree.root() { root } else { below },
                ..NodeArithmetic::ieee(if v == tree.root() {
                    Format::X87
                } else {
                    Format::F64
                })
            });
            assert_revealed(&tree, &truth, Format::F64, Layout::Scattered);
        }
    }
}

/// A kernel whose f64 steps (joining each lane's blocks of 16) alternate
/// with f32 ones every 16 nodes along the post-order: a sample and its
/// runs miss them, and every node is asked; by the formula's parts, a
/// few nodes of each part are, and the model comes back node for node.
#[test]
fn a_formula_s_parts_are_asked_a_few_nodes_each() {
    let formula: fprev::formula::Formula =
        "interleave(8, blocks(16, sequential, sequential), pairwise)"
            .parse()
            .unwrap();
    let n = 8 * 16 * 5;
    let tree = formula.tree(n);
    // The steps joining a lane's blocks are its nodes of 32 to 80 summands.
    let truth = Arithmetic::from_nodes(&tree, |v| {
        let size = tree.node(v).size;
        NodeArithmetic::ieee(if size > 16 && size <= 80 {
            Format::F64
        } else {
            Format::F32
        })
    });
    let parts = formula.parts(&tree).unwrap();
    let mut black_box = Modelled::new(&tree, &truth, Format::F32);
    let by_parts = fprev::reveal::arithmetic::reveal_arithmetic_by_parts(
        &mut black_box,
        &tree,
        &parts,
        &ArithOptions::default(),
    )
    .unwrap();
    let every = reveal_arithmetic(&mut black_box, &tree, &ArithOptions::default()).unwrap();
    let keys = NodeKey::all(&tree);
    for v in tree.post_order().into_iter().filter(|&v| v != tree.root()) {
        let key = keys[v.index()];
        assert_eq!(by_parts.model.at(&key), truth.at(&key), "{key}");
    }
    assert!(by_parts.confirmation.mismatch.is_none());
    assert!(
        by_parts.nodes_asked < 50,
        "{} nodes asked",
        by_parts.nodes_asked
    );
    assert_eq!(
        every.nodes_asked,
        n - 2,
        "without parts every node is asked"
    );
}

/// A tensor-core-like chain of fused nodes of `k` terms (each the running
/// sum and `k - 1` summands): terms aligned to the largest, truncated to the
/// accumulator's 23 fraction bits plus `extra` bits, added, rounded once.
fn tensor_core(n: usize, k: usize, extra: u32, rounding: Rounding) -> (SummationTree, Arithmetic) {
    let tree = fprev::Order::Fused(k).tree(n);
    let fused = NodeArithmetic {
        rounding,
        fused_bits: Some(23 + extra),
        ..NodeArithmetic::ieee(Format::F32)
    };
    let model = Arithmetic::from_nodes(&tree, |node| match tree.children(node).len() {
        2 => NodeArithmetic::ieee(Format::F32),
        _ => fused,
    });
    (tree, model)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn tensor_core_fused_nodes_come_back_with_their_extra_bits(
        n in 20usize..200,
        wide in any::<bool>(),
        extra in 1u32..6,
    ) {
        let k = if wide { 17 } else { 9 };
        let (tree, truth) = tensor_core(n, k, extra, Rounding::NearestEven);
        assert_revealed(&tree, &truth, Format::F32, Layout::Uniform);
        let (tree, truth) = tensor_core(n, k, extra, Rounding::TowardZero);
        assert_revealed(&tree, &truth, Format::F32, Layout::Uniform);
    }
}

/// Kahan's compensated sum, left to right, in f32.
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

/// Kahan's loop is a chain of compensated steps, the last dropping its
/// error: the model says so node for node and replays the loop's bits.
#[test]
fn a_kahan_sum_is_modelled_as_compensated_steps() {
    let mut kahan = Kahan(64);
    let order = reveal(&mut kahan, &Options::default())
        .unwrap()
        .revealed()
        .expect("an order");
    assert_eq!(order.tree, fprev::Order::Sequential.tree(64));
    let found = reveal_arithmetic(&mut kahan, &order.tree, &ArithOptions::default()).unwrap();
    let keys = NodeKey::all(&order.tree);
    for node in order.tree.post_order() {
        let a = found.model.at(&keys[node.index()]);
        let root = node == order.tree.root();
        assert!(
            a.compensated && a.drops_error == root,
            "{}: {a}",
            keys[node.index()]
        );
    }
    let replay = Replay::with_arithmetic(&order.tree, &found.model);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut out = [0.0];
    for trial in 0..300 {
        let x = Inputs::ALL[trial % 3].draw(Format::F32, 64, &mut rng);
        kahan.sum(&x, &mut out).unwrap();
        assert_eq!(replay.sum(&x).to_bits(), out[0].to_bits(), "trial {trial}");
    }
}

/// XLA's sum on CPU in small: blocks of `b` summed left to right, their
/// sums added by Kahan's compensated steps, the last step's error taken
/// off at the end; the chain's nodes are those above one block.
fn kahan_chain(n: usize, b: usize) -> (SummationTree, Arithmetic) {
    let formula: fprev::formula::Formula = format!("blocks({b}, sequential, sequential)")
        .parse()
        .unwrap();
    let tree = formula.tree(n);
    let keys = NodeKey::all(&tree);
    let model = Arithmetic::from_nodes(&tree, |node| NodeArithmetic {
        compensated: keys[node.index()].size > b,
        ..NodeArithmetic::ieee(Format::F32)
    });
    (tree, model)
}

/// The same sum written out as a loop, apart from the crate's replay.
fn kahan_loop(x: &[f64], b: usize) -> f64 {
    let blocks: Vec<f32> = x
        .chunks(b)
        .map(|block| block.iter().fold(0f32, |s, &v| s + v as f32))
        .collect();
    let (mut s, mut c) = (blocks[0], 0f32);
    for &v in &blocks[1..] {
        let y = v - c;
        let t = s + y;
        c = (t - s) - y;
        s = t;
    }
    f64::from(s - c)
}

#[test]
fn a_compensated_chain_replays_kahan_s_steps() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for (n, b) in [(64, 8), (640, 64), (100, 16)] {
        let (tree, model) = kahan_chain(n, b);
        let replay = Replay::with_arithmetic(&tree, &model);
        let plain = Replay::new(&tree, Format::F32);
        let mut differs = 0;
        for trial in 0..300 {
            let x = Inputs::ALL[trial % 3].draw(Format::F32, n, &mut rng);
            let want = kahan_loop(&x, b);
            assert_eq!(
                replay.sum(&x).to_bits(),
                want.to_bits(),
                "n = {n}, trial {trial}"
            );
            differs += usize::from(plain.sum(&x) != want);
        }
        // Compensation shows: plain additions in the same order differ often.
        assert!(
            differs > 30,
            "n = {n}: plain additions differ {differs} times in 300"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Kahan's steps between blocks come back as compensated nodes, the
    /// last step of the chain too, and the model replays the black box.
    /// A chain of one step, at the root (two blocks), answers every query
    /// as a plain addition; it is tried by replay where nothing else
    /// replays the black box.
    #[test]
    fn compensated_chains_come_back(blocks in 2usize..12, b in 2usize..40, rest in 0usize..8) {
        let n = blocks * b + rest.min(b - 1);
        let (tree, truth) = kahan_chain(n, b);
        assert_revealed(&tree, &truth, Format::F32, Layout::Scattered);
    }
}

/// Two blocks joined by one compensated step, the root: no query asks
/// the root, so the step is found by replay, the last model tried.
#[test]
fn a_chain_of_one_step_at_the_root_is_found_by_replay() {
    for b in [2, 3, 7, 16, 33] {
        for rest in [0, 1] {
            let (tree, truth) = kahan_chain(2 * b + rest.min(b - 1), b);
            assert_revealed(&tree, &truth, Format::F32, Layout::Scattered);
        }
    }
}

/// One box of each kind, the model built in and the model found side by
/// side (`cargo test -p fprev --test arithmetic -- --nocapture` prints them).
#[test]
fn one_box_of_each_kind_built_in_and_found() {
    let sequential = fprev::Order::Sequential.tree(100);
    let pairwise = fprev::Order::Pairwise.tree(100);
    let ieee = NodeArithmetic::ieee;
    let with_products = |model: Arithmetic, per_leaf: Vec<Product>| Arithmetic {
        products: Some(Products::from_leaves(&per_leaf)),
        ..model
    };
    let truncating = |format| NodeArithmetic {
        rounding: Rounding::TowardZero,
        ..ieee(format)
    };
    let body_and_tail = Arithmetic::from_nodes(&sequential, |node| {
        let first_tail = 96;
        let leaves_from = fprev::arith::NodeKey::all(&sequential)[node.index()];
        if leaves_from.size > first_tail {
            ieee(Format::F64)
        } else {
            ieee(Format::F32)
        }
    });
    let boxes: Vec<(&str, SummationTree, Arithmetic)> = vec![
        (
            "pairwise, f32",
            pairwise.clone(),
            Arithmetic::uniform(ieee(Format::F32)),
        ),
        (
            "pairwise, f64 truncating",
            pairwise.clone(),
            Arithmetic::uniform(truncating(Format::F64)),
        ),
        (
            "sequential, f32 body, f64 tail",
            sequential.clone(),
            body_and_tail,
        ),
        (
            "sequential, f32 truncating",
            sequential.clone(),
            Arithmetic::uniform(truncating(Format::F32)),
        ),
        (
            "tensor core 9-way, 3 extra bits",
            tensor_core(100, 9, 3, Rounding::NearestEven).0,
            tensor_core(100, 9, 3, Rounding::NearestEven).1,
        ),
        (
            "tensor core 17-way, 3 extra bits, truncating",
            tensor_core(100, 17, 3, Rounding::TowardZero).0,
            tensor_core(100, 17, 3, Rounding::TowardZero).1,
        ),
        (
            "sequential FMA dot, f32",
            sequential.clone(),
            with_products(
                Arithmetic::uniform(ieee(Format::F32)),
                (0..100)
                    .map(|i| match i {
                        0 => Product::Rounded(Format::F32),
                        _ => Product::Exact,
                    })
                    .collect(),
            ),
        ),
        (
            "pairwise dot, products rounded to f32, f64 nodes",
            pairwise.clone(),
            with_products(
                Arithmetic::uniform(ieee(Format::F64)),
                vec![Product::Rounded(Format::F32); 100],
            ),
        ),
        (
            "sequential dot, inputs rounded to bf16, exact products",
            sequential.clone(),
            Arithmetic {
                inputs: Some(Format::Bf16),
                ..with_products(
                    Arithmetic::uniform(ieee(Format::F32)),
                    vec![Product::Exact; 100],
                )
            },
        ),
    ];
    for (name, tree, truth) in boxes {
        let mut black_box = Modelled::new(&tree, &truth, Format::F32);
        let options = ArithOptions {
            every_node: true,
            ..ArithOptions::default()
        };
        let found = reveal_arithmetic(&mut black_box, &tree, &options).unwrap();
        println!(
            "{name}: built in {truth}; found {} ({} calls)",
            found.model, found.calls
        );
        let keys = NodeKey::all(&tree);
        for node in tree.post_order().into_iter().filter(|v| *v != tree.root()) {
            let key = keys[node.index()];
            assert_eq!(found.model.at(&key), truth.at(&key), "{name}: {key}");
        }
        assert_eq!(found.model.inputs, truth.inputs, "{name}");
        assert_eq!(found.model.products, truth.products, "{name}");
    }
    let mut kahan = Kahan(100);
    let found = reveal_arithmetic(
        &mut kahan,
        &fprev::Order::Sequential.tree(100),
        &ArithOptions::default(),
    )
    .unwrap();
    println!("Kahan, f32: found {}", found.model);
}

/// Products drawn for `n` summands whose values have `format`'s bits: two
/// runs along the summands, each exact or rounded to a format no wider
/// than the inputs (an FMA kernel's first product per accumulator is
/// rounded, the rest fused).
fn products(n: usize, format: Format, seed: u64) -> Products {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let narrower: Vec<Format> = [Format::Bf16, Format::F16, Format::F32, Format::F64]
        .into_iter()
        .filter(|f| f.precision() <= format.precision())
        .collect();
    let mut pick = || {
        if rng.random_bool(0.4) {
            Product::Exact
        } else {
            Product::Rounded(narrower[rng.random_range(0..narrower.len())])
        }
    };
    let (body, tail) = (pick(), pick());
    let cut = rng.random_range(0..n);
    let per_leaf: Vec<Product> = (0..n).map(|i| if i < cut { body } else { tail }).collect();
    Products::from_leaves(&per_leaf)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A dot product's products, exact or rounded in runs, come back
    /// summand for summand, and its inputs' rounding too.
    #[test]
    fn products_and_input_rounding_come_back(
        n in 2usize..150,
        seed in 0u64..1_000,
        wide in any::<bool>(),
        rounds_inputs in any::<bool>(),
    ) {
        let format = if wide { Format::F64 } else { Format::F32 };
        let tree = common::random_tree(n, 2, false, seed);
        let mut truth = model(&tree, Layout::Uniform, seed);
        truth.default.rounding = Rounding::NearestEven;
        truth.default.format = format;
        // bf16 shares f32's exponent range; f64's masks would overflow it.
        truth.inputs = (rounds_inputs && !wide).then_some(Format::Bf16);
        truth.products = Some(products(n, truth.inputs.unwrap_or(format), seed));
        let mut black_box = Modelled::new(&tree, &truth, format);
        let order = reveal(&mut black_box, &Options::default()).unwrap().revealed().expect("an order");
        prop_assert_eq!(&order.tree, &tree);
        let found = reveal_arithmetic(&mut black_box, &tree, &ArithOptions::default())
            .unwrap_or_else(|e| panic!("{truth} on {tree}: {e}"));
        prop_assert_eq!(found.model.inputs, truth.inputs);
        let (want, got) = (truth.products.as_ref().unwrap(), found.model.products.as_ref().unwrap());
        for i in 0..n {
            prop_assert_eq!(want.at(i), got.at(i), "x{} of {}: revealed {}, truth {}", i, &tree, &found.model, &truth);
        }
        prop_assert!(found.confirmation.mismatch.is_none());
    }
}

/// A blocked FMA kernel, OpenBLAS's SGEMV in small: blocks of 64, each in
/// 8 lanes that start with a rounded product. Its 640 summands that start
/// an accumulator repeat with the blocks, where a sample of them would
/// alias; they are all asked, many a call when the black box has rows.
#[test]
fn a_blocked_fma_kernel_has_each_block_s_first_products_found() {
    let n = 64 * 40;
    let formula: fprev::formula::Formula =
        "blocks(64, interleave(8, sequential, pairwise), sequential)"
            .parse()
            .unwrap();
    let tree = formula.tree(n);
    let per_leaf: Vec<Product> = (0..n)
        .map(|i| {
            if i % 64 < 8 {
                Product::Rounded(Format::F32)
            } else {
                Product::Exact
            }
        })
        .collect();
    let mut truth = Arithmetic::uniform(NodeArithmetic::ieee(Format::F32));
    truth.products = Some(Products::from_leaves(&per_leaf));
    let mut calls = Vec::new();
    for rows in [1, 16] {
        let mut black_box = Modelled::new(&tree, &truth, Format::F32);
        black_box.rows = rows;
        let found = reveal_arithmetic(&mut black_box, &tree, &ArithOptions::default())
            .unwrap_or_else(|e| panic!("{rows} rows: {e}"));
        let products = found.model.products.unwrap();
        for (i, want) in per_leaf.iter().enumerate() {
            assert_eq!(products.at(i), *want, "x{i}, {rows} rows");
        }
        assert!(
            found.products_asked < n,
            "{rows} rows: asked {}",
            found.products_asked
        );
        calls.push(found.calls);
    }
    // 640 products asked (960 questions): blocks and lanes apart, a row
    // holds eight questions a call, and 16 rows 128.
    assert!(calls[0] < 300, "one row: {} calls", calls[0]);
    assert!(
        calls[1] + 80 < calls[0],
        "16 rows: {} calls, one row {}",
        calls[1],
        calls[0]
    );
}

/// A dot product laid out as NumPy's (64 lanes, each a chain, their sums
/// added pairwise) at 16,384 summands: its product questions share inputs
/// (one a lane), and each product comes back as built in, exact or
/// rounded, under nodes that round to nearest or truncate; an FMA chain's
/// in at most 160 calls for the whole arithmetic and its confirmation.
#[test]
fn packed_product_questions_come_back_one_by_one() {
    let n = 1 << 14;
    let tree = "interleave(64, sequential, pairwise)"
        .parse::<fprev::formula::Formula>()
        .unwrap()
        .tree(n);
    // Each lane's first product rounded, as an FMA chain from 0 has it.
    let fma = |format| {
        move |i: usize| match i < 64 {
            true => Product::Rounded(format),
            false => Product::Exact,
        }
    };
    // Products rounded to one format where each lane starts (the summands
    // added to another) and to another past it, each asked about several
    // precisions (a bisection): one question a call would take at least
    // two calls a product.
    let starts = |first, rest| {
        move |i: usize| match i < 128 {
            true => Product::Rounded(first),
            false => Product::Rounded(rest),
        }
    };
    type Leaves = Box<dyn Fn(usize) -> Product>;
    let boxes: [(Format, Rounding, Leaves, bool); 4] = [
        (
            Format::F32,
            Rounding::NearestEven,
            Box::new(fma(Format::F32)),
            true,
        ),
        (
            Format::F64,
            Rounding::NearestEven,
            Box::new(fma(Format::F64)),
            true,
        ),
        (
            Format::F32,
            Rounding::TowardZero,
            Box::new(starts(Format::Bf16, Format::F16)),
            false,
        ),
        (
            Format::F64,
            Rounding::NearestEven,
            Box::new(starts(Format::F32, Format::F64)),
            false,
        ),
    ];
    for (format, rounding, product, fma_like) in boxes {
        let per_leaf: Vec<Product> = (0..n).map(&product).collect();
        let mut truth = Arithmetic::uniform(NodeArithmetic {
            rounding,
            ..NodeArithmetic::ieee(format)
        });
        truth.products = Some(Products::from_leaves(&per_leaf));
        let mut black_box = Modelled::new(&tree, &truth, format);
        // As `fprev reveal` confirms a dot: one replay on random x and y.
        let confirmed =
            confirm_arithmetic(&mut black_box, &tree, None, &ArithOptions::default(), true)
                .unwrap_or_else(|e| panic!("{truth}: {e}"));
        let found = confirmed.arithmetic.expect("sought").unwrap();
        assert!(found.confirmation.mismatch.is_none(), "{truth}");
        assert_eq!(found.model.default, truth.default, "{truth}");
        let products = found.model.products.as_ref().unwrap();
        for (i, want) in per_leaf.iter().enumerate() {
            assert_eq!(
                products.at(i),
                *want,
                "x{i} of {truth}: found {}",
                found.model
            );
        }
        let asked = found.products_asked as u64;
        match fma_like {
            true => assert!(found.calls <= 160, "{truth}: {} calls", found.calls),
            false => assert!(
                found.calls < 2 * asked,
                "{truth}: {} calls, {asked} products asked",
                found.calls
            ),
        }
    }
}

/// Above a fused node, whose window truncates what it aligns, product
/// questions are asked one an input, and come back all the same.
#[test]
fn products_below_a_fused_node_come_back() {
    let tree: SummationTree = "((0+1)+(2+3)+((4+5)+(6+7)))".parse().unwrap();
    let mut truth = Arithmetic::from_nodes(&tree, |node| match tree.children(node).len() {
        2 => NodeArithmetic::ieee(Format::F32),
        _ => NodeArithmetic {
            fused_bits: Some(26),
            ..NodeArithmetic::ieee(Format::F32)
        },
    });
    let per_leaf: Vec<Product> = (0..8)
        .map(|i| match i % 3 {
            0 => Product::Exact,
            1 => Product::Rounded(Format::F32),
            _ => Product::Rounded(Format::Bf16),
        })
        .collect();
    truth.products = Some(Products::from_leaves(&per_leaf));
    let mut black_box = Modelled::new(&tree, &truth, Format::F32);
    let options = ArithOptions {
        every_node: true,
        ..ArithOptions::default()
    };
    let found = reveal_arithmetic(&mut black_box, &tree, &options)
        .unwrap_or_else(|e| panic!("{truth}: {e}"));
    let products = found.model.products.as_ref().unwrap();
    for (i, want) in per_leaf.iter().enumerate() {
        assert_eq!(products.at(i), *want, "x{i}: found {}", found.model);
    }
}

/// An FMA loop, `s = fma(x_i, y_i, s)` from `s = 0`: the first product is
/// rounded, every other enters its addition exactly.
#[test]
fn an_fma_loop_is_told_from_rounded_products() {
    for format in [Format::F32, Format::F64] {
        let n = 40;
        let tree = fprev::order::Order::Sequential.tree(n);
        let mut per_leaf = vec![Product::Exact; n];
        per_leaf[0] = Product::Rounded(format);
        let mut truth = Arithmetic::uniform(NodeArithmetic::ieee(format));
        truth.products = Some(Products::from_leaves(&per_leaf));
        let mut black_box = Modelled::new(&tree, &truth, format);
        let found = reveal_arithmetic(&mut black_box, &tree, &ArithOptions::default()).unwrap();
        let products = found.model.products.unwrap();
        assert_eq!(products.default, Product::Exact, "{format}");
        assert_eq!(
            products.leaves,
            std::collections::BTreeMap::from([(0, Product::Rounded(format))]),
            "{format}"
        );
        assert!(
            found.products_asked < n,
            "{format}: asked {}",
            found.products_asked
        );
    }
}

/// A V100-style chain of fused additions: the running sum and up to 4 new
/// summands a step (the last step takes what is left), the terms aligned
/// to the largest exponent, each truncated toward zero to 26 bits below
/// it, added exactly and rounded once to f32 (to nearest).
struct V100(usize);

impl V100 {
    fn step(terms: &[f64]) -> f64 {
        let Some(emax) = terms
            .iter()
            .filter(|t| **t != 0.0)
            .map(|t| t.abs().log2().floor() as i32)
            .max()
        else {
            return 0.0;
        };
        let quantum = 2f64.powi(emax - 26);
        let sum: i128 = terms.iter().map(|t| (t / quantum).trunc() as i128).sum();
        f64::from((sum as f64 * quantum) as f32)
    }
}

impl Probe for V100 {
    fn n(&self) -> usize {
        self.0
    }
    fn format(&self) -> Format {
        Format::F32
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> fprev::Result<()> {
        for (x, o) in inputs.chunks(self.0).zip(out) {
            let mut s = 0.0;
            for group in x.chunks(4) {
                let terms: Vec<f64> = std::iter::once(s).chain(group.iter().copied()).collect();
                s = V100::step(&terms);
            }
            *o = s;
        }
        Ok(())
    }
}

/// The last step takes 1 to 4 summands (n = 21: one, a fused step of two
/// terms at the root); every one is modelled, and replays the chain.
#[test]
fn a_v100_chain_is_modelled_whatever_its_last_group() {
    for n in [21, 22, 23, 64, 7] {
        let mut bb = V100(n);
        let r = reveal(&mut bb, &Options::default())
            .unwrap_or_else(|e| panic!("n = {n}: {e}"))
            .revealed()
            .expect("an order");
        let found = reveal_arithmetic(&mut bb, &r.tree, &ArithOptions::default())
            .unwrap_or_else(|e| panic!("n = {n}: {} {e}", r.tree));
        let root = found.model.at(&NodeKey { first: 0, size: n });
        assert_eq!(root.fused_bits, Some(26), "n = {n}: {}", found.model);
        let replay = Replay::with_arithmetic(&r.tree, &found.model);
        let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
        let mut out = [0.0];
        for trial in 0..300 {
            let x = Inputs::ALL[trial % Inputs::ALL.len()].draw(Format::F32, n, &mut rng);
            bb.sum(&x, &mut out).unwrap();
            assert_eq!(
                replay.sum(&x).to_bits(),
                out[0].to_bits(),
                "n = {n}, trial {trial}: {}",
                found.model
            );
        }
    }
}

/// Summands of f32 with exponents in -40..40 are whole multiples of 2^-63,
/// and every sum of a few of them fits an `i128` of such: exact.
const QUANTUM_EXP: i32 = 63;

fn fixed(x: f64) -> i128 {
    (x * 2f64.powi(QUANTUM_EXP)) as i128
}

/// The exact value `v` (in 2^-63) truncated to f32's 24 bits, as integers.
fn f32_toward_zero(v: i128) -> f64 {
    let magnitude = v.unsigned_abs();
    let bits = 128 - magnitude.leading_zeros();
    let dropped = bits.saturating_sub(24);
    let kept = ((magnitude >> dropped) << dropped) as f64 * 2f64.powi(-QUANTUM_EXP);
    if v < 0 { -kept } else { kept }
}

/// Random f32 summands whose exponents lie 0 to 80 binades apart, so that
/// many additions lose bits even in f64 (more than 29 binades apart).
fn spread_f32(n: usize, rng: &mut ChaCha8Rng) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let m = rng.random_range(1u32 << 23..1 << 24) as f64;
            let sign = if rng.random_bool(0.5) { -1.0 } else { 1.0 };
            sign * m * 2f64.powi(rng.random_range(-40..40) - 23)
        })
        .collect()
}

/// A toward-zero replay is the exact sum truncated, at every node: checked
/// against sums of whole multiples of 2^-63 truncated with integers, left
/// to right and pairwise, where additions far apart lose bits in f64. A
/// black box that adds in f64 to nearest and then steps toward zero when
/// the f32 value rounded away rounds twice, and is not this.
#[test]
fn a_toward_zero_replay_truncates_the_exact_sum_of_every_node() {
    fn pairwise(x: &[f64]) -> f64 {
        match x {
            [v] => *v,
            _ => {
                let (l, r) = x.split_at(x.len() / 2);
                f32_toward_zero(fixed(pairwise(l)) + fixed(pairwise(r)))
            }
        }
    }
    let toward_zero = Arithmetic::uniform(NodeArithmetic {
        rounding: Rounding::TowardZero,
        ..NodeArithmetic::ieee(Format::F32)
    });
    let n = 64;
    let sequential = Replay::with_arithmetic(&fprev::Order::Sequential.tree(n), &toward_zero);
    let halves = Replay::with_arithmetic(&fprev::Order::Pairwise.tree(n), &toward_zero);
    let mut rng = ChaCha8Rng::seed_from_u64(35);
    let mut twice_differs = 0;
    for trial in 0..2000 {
        let x = spread_f32(n, &mut rng);
        let (mut exact, mut twice) = (0.0, 0f32);
        for &v in &x {
            exact = f32_toward_zero(fixed(exact) + fixed(v));
            let t = f64::from(twice) + v;
            let mut r = t as f32;
            if f64::from(r).abs() > t.abs() {
                r = f32::from_bits(r.to_bits() - 1);
            }
            twice = r;
        }
        assert_eq!(
            sequential.sum(&x).to_bits(),
            exact.to_bits(),
            "trial {trial}"
        );
        assert_eq!(
            halves.sum(&x).to_bits(),
            pairwise(&x).to_bits(),
            "trial {trial}"
        );
        twice_differs += usize::from(f64::from(twice) != exact);
    }
    assert!(twice_differs > 0, "the double rounding never showed");
}
