//! Reproducible reducers. [`Replay`] evaluates any summation tree, binary or
//! multiway, on any input: a revealed tree becomes an executable
//! specification of the black box it came from. [`binary_tree_sum`] and
//! [`binary_tree_sum_threads`] add in a fixed tree that depends only on `n`:
//! the same bits on any number of threads. [`prerounded_sum`] and
//! [`PreRounded`] do not depend on the order at all: pre-rounded summation
//! gives the same bits for any permutation of the summands and any split
//! into chunks merged in any order, and is more accurate than a plain sum.
//! With the `mpi` feature, `fprev::mpi::binary_tree_allreduce` adds across the ranks
//! of an MPI job in the Binary Tree Reduction's tree: the same bits for any
//! number of ranks.
//!
//! ```
//! use fprev::{Format, SummationTree, reduce::Replay};
//!
//! let tree: SummationTree = "((0+1)+2)".parse().unwrap();
//! let replay = Replay::new(&tree, Format::F32);
//! let big = 2f64.powi(24);
//! // (2^24 + 1) + 1 loses both ones in f32; 2^24 + (1 + 1) would not.
//! assert_eq!(replay.sum(&[big, 1.0, 1.0]), big);
//! ```

mod binary_tree;
mod prerounded;
mod wide;

pub use binary_tree::{Real, binary_tree_sum, binary_tree_sum_on, binary_tree_sum_threads};
pub use prerounded::{
    PreRoundable, PreRounded, prerounded_sum, prerounded_sum_on, prerounded_sum_threads,
};

use petgraph::graph::NodeIndex;

use crate::arith::{Arithmetic, NodeArithmetic, NodeKey, Product, Products, Rounding};
use crate::format::Format;
use crate::formula::Formula;
use crate::order::Adder;
use crate::tree::SummationTree;

/// A tree compiled for evaluation: inner nodes children-first, each reading
/// its operands from a flat value array.
#[derive(Clone, Debug)]
pub struct Replay {
    n: usize,
    acc: Format,
    /// For every inner node in post-order, the slots of its children
    /// (`0..n` are the summands, `n + k` is the k-th inner node): node
    /// `k`'s are `slots[starts[k]..starts[k + 1]]`, flat, as a sum of
    /// millions of summands has millions of nodes.
    slots: Vec<u32>,
    starts: Vec<u32>,
    /// What each inner node computes, in the same order, where an
    /// arithmetic model says (`None`: IEEE additions in `acc` throughout).
    arithmetic: Option<Vec<NodeArithmetic>>,
    /// Where the model has compensated nodes: each inner node's place in
    /// a chain of them.
    steps: Option<Vec<Step>>,
    /// The format inputs are rounded to first, where the model says.
    inputs: Option<Format>,
    /// How the products are rounded, where the model says (`None`:
    /// exactly, as when `y` is ones): the model's own form, a default and
    /// the summands that differ, applied to all at once.
    products: Option<Products>,
    /// Whether a node is wider than `f64` (x87): the replay then carries
    /// every partial sum as an [`Extended`](crate::arith::Extended).
    wide: bool,
    /// The format the result is rounded to, once, from the root's value.
    result: Format,
    /// Where the order is a formula's, run from it as it streams (no node
    /// is held; `slots` and `starts` are empty), and what every node
    /// computes.
    formula: Option<(Formula, NodeArithmetic)>,
}

impl Replay {
    /// Compiles `tree`, to add in the accumulator format `acc` (binary nodes
    /// as IEEE additions, fused nodes by [`fused_sum`](crate::format::fused_sum)).
    ///
    /// # Panics
    /// If the tree has `2^31` summands or more.
    pub fn new(tree: &SummationTree, acc: Format) -> Self {
        Replay::compile(tree, &evaluation_order(tree), acc)
    }

    /// Compiles `tree`, each node computing what `model` says of it.
    pub fn with_arithmetic(tree: &SummationTree, model: &Arithmetic) -> Self {
        let order = evaluation_order(tree);
        let mut replay = Replay::compile(tree, &order, model.default.format);
        let compensated = model.default.compensated || model.nodes.values().any(|a| a.compensated);
        let keys = (!model.is_uniform() || compensated).then(|| NodeKey::all(tree));
        if let Some(keys) = keys.as_ref().filter(|_| !model.is_uniform()) {
            replay.arithmetic = Some(
                order
                    .iter()
                    .map(|node| model.at(&keys[node.index()]))
                    .collect(),
            );
        } else if model.default != NodeArithmetic::ieee(model.default.format) {
            replay.arithmetic = Some(vec![model.default; order.len()]);
        }
        if let Some(keys) = keys.as_ref().filter(|_| compensated) {
            let ends = model.chain_ends(tree, keys);
            let step = |v: NodeIndex| {
                !tree.children(v).is_empty() && model.at(&keys[v.index()]).compensated
            };
            // A chain run right to left has each step's running sum second:
            // the second child is a step and the first is not, or, at the
            // chain's first step, its parent step has it second.
            let running_second = |v: NodeIndex| match tree.children(v) {
                &[first, second] if step(v) => {
                    (step(second) && !step(first))
                        || (!step(first)
                            && !step(second)
                            && tree
                                .parent(v)
                                .is_some_and(|p| step(p) && tree.children(p)[1] == v))
                }
                _ => false,
            };
            replay.steps = Some(
                order
                    .iter()
                    .map(|&v| Step {
                        ends_chain: ends[v.index()],
                        running_second: running_second(v),
                    })
                    .collect(),
            );
        }
        replay.inputs = model.inputs;
        replay.products = model.products.clone();
        replay.wide = replay.wide || model.nodes.values().any(|a| a.format == Format::X87);
        replay
    }

    /// The tree `formula` gives at `n` summands, each node computing what
    /// `model` says, run from the formula as it streams instead of
    /// compiled: no node is held, so a replay of `2^27` summands needs
    /// little beyond its input. `None` where the model needs the nodes: it
    /// names some, compensates, adds in x87 registers or rounds products.
    pub(crate) fn of_formula(formula: &Formula, n: usize, model: &Arithmetic) -> Option<Self> {
        let node = model.default;
        Replay::streams(model).then(|| Replay {
            n,
            acc: node.format,
            slots: Vec::new(),
            starts: vec![0],
            arithmetic: None,
            steps: None,
            inputs: model.inputs,
            products: None,
            wide: false,
            result: Format::F64,
            formula: Some((formula.clone(), node)),
        })
    }

    /// Whether a replay run from a formula holds `model`
    /// ([`Replay::of_formula`]): it names no node, compensates no error,
    /// adds in no x87 register and rounds no product.
    pub(crate) fn streams(model: &Arithmetic) -> bool {
        model.is_uniform()
            && !model.default.compensated
            && model.default.format != Format::X87
            && model.products.is_none()
    }

    /// Rounds the result to `format`, the type the black box returns.
    /// Without it a result is returned in the root's own format, or to
    /// nearest in `f64` from a root wider than that; rounding that to a
    /// narrower format afterwards would round twice.
    ///
    /// ```
    /// use fprev::arith::{Arithmetic, NodeArithmetic};
    /// use fprev::{Format, SummationTree, reduce::Replay};
    ///
    /// let tree: SummationTree = "((0+1)+2)".parse().unwrap();
    /// let x87 = Arithmetic::uniform(NodeArithmetic::ieee(Format::X87));
    /// let replay = Replay::with_arithmetic(&tree, &x87).returning(Format::F32);
    /// // (1 + 2^-24) + 2^-60 is just past the tie between two f32 values:
    /// // an x87 register keeps the 2^-60 and rounds up once; in f64 the
    /// // 2^-60 is lost and the tie goes to even.
    /// let x = [1.0, 2f64.powi(-24), 2f64.powi(-60)];
    /// assert_eq!(replay.sum(&x), 1.0 + 2f64.powi(-23));
    /// assert_eq!(Replay::new(&tree, Format::F64).returning(Format::F32).sum(&x), 1.0);
    /// ```
    pub fn returning(mut self, format: Format) -> Self {
        self.result = format;
        self
    }

    /// The replay of `tree`'s inner nodes in `order`, adding in `acc`.
    fn compile(tree: &SummationTree, order: &[NodeIndex], acc: Format) -> Self {
        let n = tree.n();
        assert!(n < 1 << 31, "a replay of at most 2^31 - 1 summands");
        let mut slot = vec![0u32; tree.graph().node_count()];
        for i in 0..n {
            slot[tree.leaf(i).index()] = i as u32;
        }
        let mut slots = Vec::with_capacity(2 * order.len());
        let mut starts = Vec::with_capacity(order.len() + 1);
        starts.push(0);
        for (k, node) in order.iter().enumerate() {
            slot[node.index()] = (n + k) as u32;
            slots.extend(tree.children(*node).iter().map(|c| slot[c.index()]));
            starts.push(slots.len() as u32);
        }
        Replay {
            n,
            acc,
            slots,
            starts,
            arithmetic: None,
            steps: None,
            inputs: None,
            products: None,
            wide: acc == Format::X87,
            result: Format::F64,
            formula: None,
        }
    }

    /// Whether the model says how products are rounded: a replay for
    /// [`Replay::dot`] rather than [`Replay::sum`].
    pub fn has_products(&self) -> bool {
        self.products.is_some()
    }

    /// Number of summands.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Whether the tree has a fused node (one of three or more terms).
    pub fn has_fused_nodes(&self) -> bool {
        if let Some((formula, _)) = &self.formula {
            return formula.may_fuse();
        }
        self.starts.windows(2).any(|w| w[1] - w[0] > 2)
    }

    /// The accumulator format (the default of an arithmetic model).
    pub fn accumulator(&self) -> Format {
        self.acc
    }

    /// The narrowest format any node rounds to.
    pub fn narrowest(&self) -> Format {
        self.arithmetic
            .iter()
            .flatten()
            .map(|a| a.format)
            .chain([self.acc])
            .min_by_key(|f| f.precision())
            .expect("one format at least")
    }

    /// Sums `x` (which must hold `n` values) in the tree's order.
    ///
    /// # Panics
    /// If `x.len() != n`.
    pub fn sum(&self, x: &[f64]) -> f64 {
        let mut values = Vec::new();
        self.sum_with(x, &mut values)
    }

    /// Like [`Replay::sum`], reusing `values` as scratch space.
    pub fn sum_with(&self, x: &[f64], values: &mut Vec<f64>) -> f64 {
        assert_eq!(x.len(), self.n, "replay of an {}-leaf tree", self.n);
        if let (Some(formula), None) = (&self.formula, self.inputs) {
            // Straight from the input: at 2^27 summands a copy is a GiB.
            return self.result.round(run_formula(formula, x));
        }
        values.clear();
        match self.inputs {
            Some(f) => values.extend(x.iter().map(|v| f.round(*v))),
            None => values.extend_from_slice(x),
        }
        self.add_up(values, &[], &[])
    }

    /// `sum x_i y_i` in the tree's order, each product rounded as the
    /// model says (exactly when it says nothing). An exact product enters
    /// its addition whole: with `f64` inputs, as a fused multiply-add.
    ///
    /// ```
    /// use fprev::arith::{Arithmetic, NodeArithmetic, Product, Products};
    /// use fprev::{Format, SummationTree, reduce::Replay};
    ///
    /// let tree: SummationTree = "(0+1)".parse().unwrap();
    /// let mut model = Arithmetic::uniform(NodeArithmetic::ieee(Format::F32));
    /// let a = 1.0 + 2f64.powi(-12);
    /// let (x, y) = ([a, -(1.0 + 2f64.powi(-11))], [a, 1.0]);
    /// // a * a = 1 + 2^-11 + 2^-24: rounded to f32 first, the 2^-24 is lost.
    /// model.products = Some(Products::from_leaves(&[Product::Rounded(Format::F32); 2]));
    /// assert_eq!(Replay::with_arithmetic(&tree, &model).dot(&x, &y), 0.0);
    /// model.products = Some(Products::from_leaves(&[Product::Exact; 2]));
    /// assert_eq!(Replay::with_arithmetic(&tree, &model).dot(&x, &y), 2f64.powi(-24));
    /// ```
    ///
    /// # Panics
    /// If `x` or `y` does not hold `n` values.
    pub fn dot(&self, x: &[f64], y: &[f64]) -> f64 {
        self.dot_with(x, y, &mut Vec::new())
    }

    /// Like [`Replay::dot`], reusing `values` as scratch space.
    pub fn dot_with(&self, x: &[f64], y: &[f64], values: &mut Vec<f64>) -> f64 {
        assert!(
            x.len() == self.n && y.len() == self.n,
            "dot replay of an {}-leaf tree",
            self.n
        );
        // Copies only where the model rounds the inputs: this runs once a
        // trial of every confirmation.
        let rounded: Option<(Vec<f64>, Vec<f64>)> = self.inputs.map(|f| {
            let round = |v: &[f64]| v.iter().map(|a| f.round(*a)).collect();
            (round(x), round(y))
        });
        let (x, y) = match &rounded {
            Some((x, y)) => (x.as_slice(), y.as_slice()),
            None => (x, y),
        };
        values.clear();
        values.extend(x.iter().zip(y).map(|(a, b)| a * b));
        let exact = Products::from_leaves(&[]);
        let products = self.products.as_ref().unwrap_or(&exact);
        // Most exact products fit an f64 (every product of f32 inputs
        // does): what one does not is kept beside it, when there is any.
        let mut rest = Vec::new();
        let mut keep = |i: usize| {
            let (_, low) = Product::Exact.of(x[i], y[i]);
            if low != 0.0 {
                rest.resize(self.n, 0.0);
                rest[i] = low;
            }
        };
        // An x87 product keeps 64 of the exact product's bits: the exact
        // product goes to the wide replay, which rounds it so.
        let exact = |p: Product| matches!(p, Product::Exact | Product::Rounded(Format::X87));
        match products.default {
            Product::Rounded(format) if format != Format::X87 => {
                round_all(format, values);
                for (&i, _) in products.leaves.iter().filter(|(_, p)| exact(**p)) {
                    values[i] = x[i] * y[i];
                    keep(i);
                }
            }
            // Products of f32 values (48 bits at most, well inside f64's
            // range) are all exact in f64: that is checked in a loop the
            // compiler vectorises, the split of each product is not.
            _ if is_f32(x) && is_f32(y) => {}
            _ => (0..self.n).for_each(&mut keep),
        }
        for (&i, &p) in &products.leaves {
            if let Product::Rounded(format) = p
                && !exact(p)
            {
                values[i] = format.round(x[i] * y[i]);
                if let Some(r) = rest.get_mut(i) {
                    *r = 0.0;
                }
            }
        }
        self.add_up(values, &rest, &[x, y])
    }

    /// Evaluates the inner nodes on the summands in `values`; `rest[i]` is
    /// what summand `i`'s exact product has beyond its `f64` value, and
    /// `xy` its factors (both empty when every summand is exact in `f64`).
    fn add_up(&self, values: &mut Vec<f64>, rest: &[f64], xy: &[&[f64]]) -> f64 {
        if let Some(formula) = &self.formula {
            // Formula replays are made for sums, whose products are none.
            debug_assert!(rest.is_empty() && xy.is_empty());
            return self.result.round(run_formula(formula, values));
        }
        if self.wide {
            let node = |k| self.node(k);
            let (slots, starts, steps) = (&self.slots, &self.starts, self.steps.as_deref());
            return wide::evaluate(values, rest, slots, starts, node, steps, self.result);
        }
        // IEEE additions in f32 of f32 values are f32's own additions, a
        // fraction of the cost of rounding exactly in software.
        let f32_only = self.arithmetic.is_none()
            && self.acc == Format::F32
            && rest.is_empty()
            && values.iter().all(|v| Format::F32.round(*v) == *v);
        let root = if f32_only {
            self.evaluate(values, rest, xy, |_, a, b| (a as f32 + b as f32) as f64)
        } else if self.arithmetic.is_none() && self.acc == Format::F32 {
            // Exact products into f32 additions: the format known here
            // makes the rounding a few instructions.
            self.evaluate(values, rest, xy, |_, a, b| {
                Rounding::NearestEven.add(Format::F32, a, b)
            })
        } else {
            self.evaluate(values, rest, xy, |node, a, b| node.sum(&[a, b]))
        };
        self.result.round(root)
    }

    /// What inner node `k` (in evaluation order) computes.
    #[inline(always)]
    fn node(&self, k: usize) -> NodeArithmetic {
        match &self.arithmetic {
            Some(nodes) => nodes[k],
            None => NodeArithmetic::ieee(self.acc),
        }
    }

    /// [`Replay::add_up`] with `add(node, a, b)` adding two values that
    /// are not products.
    #[inline(always)]
    fn evaluate(
        &self,
        values: &mut Vec<f64>,
        rest: &[f64],
        xy: &[&[f64]],
        add: impl Fn(NodeArithmetic, f64, f64) -> f64,
    ) -> f64 {
        let inner = self.starts.len() - 1;
        let node = |k: usize| self.node(k);
        values.reserve(inner);
        // A node aligning products at their factors reads them, where it
        // has them: the general case's.
        let aligns = !xy.is_empty()
            && self
                .arithmetic
                .iter()
                .flatten()
                .any(|a| a.aligns_factors.is_some());
        if rest.is_empty() && self.slots.len() == 2 * inner && self.steps.is_none() && !aligns {
            // Every node adds two values: the loop a replay spends its
            // time in, kept free of the general case's branches.
            for (k, ops) in self.slots.chunks_exact(2).enumerate() {
                let v = add(node(k), values[ops[0] as usize], values[ops[1] as usize]);
                values.push(v);
            }
            return values.last().copied().unwrap_or(0.0);
        }
        let mut terms = Vec::new();
        // What each compensated node carries to its parent (0 for others).
        let mut carried = match self.steps {
            Some(_) => vec![0.0; values.len() + inner],
            None => Vec::new(),
        };
        for (k, w) in self.starts.windows(2).enumerate() {
            let node = node(k);
            let ops = &self.slots[w[0] as usize..w[1] as usize];
            let v = match *ops {
                [a, b] if node.compensated => {
                    let step = Step::at(self.steps.as_deref(), k);
                    let (s, x) = step.operands([a, b]);
                    let (v, error) = compensated_step(
                        (values[s], carried[s]),
                        values[x],
                        step.ends_chain && !node.drops_error,
                        |p, q| node.rounding.add(node.format, p, q),
                    );
                    carried[values.len()] = error;
                    v
                }
                // A tensor core's window, aligned at its products' factors.
                [a, b] if node.aligns_factors.is_some() && xy.len() == 2 => node.sum_of_products(
                    &[values[a as usize], values[b as usize]],
                    ops,
                    [xy[0], xy[1]],
                ),
                [a, b] => {
                    let (a, b) = (a as usize, b as usize);
                    let inexact = |o: usize| o < rest.len() && rest[o] != 0.0;
                    match (inexact(a), inexact(b)) {
                        (false, false) => add(node, values[a], values[b]),
                        // An f64 product `f64` cannot hold: a fused
                        // multiply-add, which rounds once to nearest in f64.
                        (true, false) => fused(node, xy, a, values[b]),
                        (false, true) => fused(node, xy, b, values[a]),
                        (true, true) => {
                            let partial = fused(node, xy, a, values[b]);
                            node.rounding.add(node.format, partial, rest[b])
                        }
                    }
                }
                _ => {
                    terms.clear();
                    terms.extend(ops.iter().map(|&o| values[o as usize]));
                    match xy {
                        [x, y] => node.sum_of_products(&terms, ops, [x, y]),
                        _ => node.sum(&terms),
                    }
                }
            };
            values.push(v);
        }
        values.last().copied().unwrap_or(0.0)
    }
}

/// The sum of `x` in the order of `formula`, every node computing `node`.
fn run_formula((formula, node): &(Formula, NodeArithmetic), x: &[f64]) -> f64 {
    if *node == NodeArithmetic::ieee(Format::F32) && x.iter().all(|v| Format::F32.round(*v) == *v) {
        formula.run(x, &mut Ieee32)
    } else if *node == NodeArithmetic::ieee(Format::F64) {
        formula.run(x, &mut Ieee64)
    } else {
        formula.run(x, &mut Nodes(*node))
    }
}

/// f32 additions of f32 values: f32's own, as the compiled replay's loop
/// does them.
struct Ieee32;

impl Adder for Ieee32 {
    type Value = f64;
    fn add(&mut self, a: f64, b: f64) -> f64 {
        (a as f32 + b as f32) as f64
    }
    fn fused(&mut self, terms: &[f64]) -> f64 {
        NodeArithmetic::ieee(Format::F32).sum(terms)
    }
}

/// f64 additions.
struct Ieee64;

impl Adder for Ieee64 {
    type Value = f64;
    fn add(&mut self, a: f64, b: f64) -> f64 {
        a + b
    }
    fn fused(&mut self, terms: &[f64]) -> f64 {
        NodeArithmetic::ieee(Format::F64).sum(terms)
    }
}

/// Every node computing alike, as a model says.
struct Nodes(NodeArithmetic);

impl Adder for Nodes {
    type Value = f64;
    fn add(&mut self, a: f64, b: f64) -> f64 {
        self.0.sum(&[a, b])
    }
    fn fused(&mut self, terms: &[f64]) -> f64 {
        self.0.sum(terms)
    }
}

/// A compensated node's place in its chain.
#[derive(Clone, Copy, Debug, Default)]
struct Step {
    /// It ends the chain: it returns its sum less its error.
    ends_chain: bool,
    /// Its running sum is its second child (a loop run right to left).
    running_second: bool,
}

impl Step {
    /// Inner node `k`'s place, of `steps` (none: a step alone).
    fn at(steps: Option<&[Step]>, k: usize) -> Step {
        steps.map_or(Step::default(), |steps| steps[k])
    }

    /// The slots of the step's running sum and of its new term.
    fn operands(self, [a, b]: [u32; 2]) -> (usize, usize) {
        match self.running_second {
            true => (b as usize, a as usize),
            false => (a as usize, b as usize),
        }
    }
}

/// One step of Kahan's compensated sum, in any value type: the running
/// sum `s` and the error `c` its chain carries, the new term `x`; with
/// `add` rounding as the node does. Returns the step's value (its sum less
/// its error where it `takes_error_off`, as the last step of a chain
/// does) and the error it carries on.
fn compensated_step<T: Copy + std::ops::Neg<Output = T>>(
    (s, c): (T, T),
    x: T,
    takes_error_off: bool,
    add: impl Fn(T, T) -> T,
) -> (T, T) {
    let y = add(x, -c);
    let t = add(s, y);
    let error = add(add(t, -s), -y);
    match takes_error_off {
        true => (add(t, -error), error),
        false => (t, error),
    }
}

/// Whether every value of `v` is an f32 value.
fn is_f32(v: &[f64]) -> bool {
    v.iter().fold(true, |all, &a| all & (a as f32 as f64 == a))
}

/// Rounds every value to `format`, the format chosen once for them all.
fn round_all(format: Format, values: &mut [f64]) {
    match format {
        Format::F32 => values.iter_mut().for_each(|v| *v = *v as f32 as f64),
        Format::F64 => {}
        _ => values.iter_mut().for_each(|v| *v = format.round(*v)),
    }
}

/// The inner nodes of `tree` by height (in post-order within one height),
/// so the root comes last. Each node then follows the nodes it reads, and
/// the nodes of one height are independent: the additions of a kernel's
/// separate accumulators overlap in the processor instead of each waiting
/// for the one before, as they would in post-order (a chain at a time).
fn evaluation_order(tree: &SummationTree) -> Vec<NodeIndex> {
    let post = tree.post_order();
    let mut height = vec![0u32; tree.graph().node_count()];
    let mut count: Vec<usize> = Vec::new();
    for &v in &post {
        let h = 1 + tree
            .children(v)
            .iter()
            .map(|c| height[c.index()])
            .max()
            .unwrap_or(0);
        height[v.index()] = h;
        if count.len() <= h as usize {
            count.resize(h as usize + 1, 0);
        }
        count[h as usize] += 1;
    }
    // A counting sort: a sum of millions of summands has millions of nodes.
    let mut at: Vec<usize> = count
        .iter()
        .scan(0, |start, &c| {
            let here = *start;
            *start += c;
            Some(here)
        })
        .collect();
    let mut order = vec![tree.root(); post.len()];
    for &v in &post {
        let h = height[v.index()] as usize;
        order[at[h]] = v;
        at[h] += 1;
    }
    order
}

/// `x_i * y_i + other` as node `node` computes it: one rounding to nearest
/// in f64, then (rarely) to the node's own format.
fn fused(node: NodeArithmetic, xy: &[&[f64]], i: usize, other: f64) -> f64 {
    let v = xy[0][i].mul_add(xy[1][i], other);
    node.format.round(v)
}
