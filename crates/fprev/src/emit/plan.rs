//! What an emitted function computes: the formula's parts, each with the
//! arithmetic its additions have in a confirmed model, found by running
//! the formula over that model's tree, and checked by evaluating the plan
//! against the model's own replay.
//!
//! The emitted code keeps every value in a `double` (a partial sum of any
//! node, an exact product of two f32 values) and rounds each addition once
//! to its part's format, so a part is all it needs to know: its format,
//! whether it takes Kahan steps, and how the products it reads are
//! rounded: a summand it reads first (the start of a loop, a summand it
//! returns alone) and one it adds to a value.

use std::collections::HashMap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::arith::{Arithmetic, NodeArithmetic, NodeKey, Product, Rounding};
use crate::error::{Error, Param, Remedy, Result};
use crate::format::Format;
use crate::formula::{Formula, Tail};
use crate::inputs::Inputs;
use crate::order::{Adder, Order};
use crate::reduce::Replay;
use crate::tree::SummationTree;

/// What the black box computes of its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `sum(x)`.
    Sum,
    /// `dot(x, y)`: the products `x[i] * y[i]` summed.
    Dot,
}

/// The arithmetic of one part of the formula: every addition it makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// The format each addition rounds to (f32 or f64), to nearest.
    pub format: Format,
    /// Each addition is a step of Kahan's compensated sum.
    pub compensated: bool,
    /// The last step of a compensated chain returns its sum without
    /// taking its error off.
    pub drops_error: bool,
    /// How a product this part reads first is rounded (a loop's first
    /// summand, a summand returned alone, the left one of an addition).
    pub first: Product,
    /// How a product this part adds to a value is rounded.
    pub second: Product,
    /// Every operand of its additions is an f32 value, so they are f32's
    /// own additions (and f32 registers may hold its running sums).
    pub narrow: bool,
    /// Some addition of this part was in a model; a part never seen takes
    /// the model's default, which only the check against the black box
    /// vouches for.
    pub seen: bool,
    /// Of a part whose nodes are fused windows (a tensor core's `fused:K`
    /// chain): how each node keeps, aligns and rounds its terms; `format`
    /// is what it rounds to.
    pub fused: Option<Fused>,
}

/// What each node of a fused part computes ([`NodeArithmetic`]'s fused
/// window): its terms aligned at the largest exponent among them (a
/// product's at its factors' exponents where `aligns_factors` says),
/// each truncated toward zero to `bits` bits below it, added exactly,
/// the sum rounded once as `rounding` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fused {
    /// The bits kept below the largest exponent.
    pub bits: u32,
    /// How the node's sum is rounded to its part's format.
    pub rounding: Rounding,
    /// The format of the factors whose exponents align products.
    pub aligns_factors: Option<Format>,
}

impl Fused {
    /// The node arithmetic of a fused part rounding to `format`.
    pub fn node(self, format: Format) -> NodeArithmetic {
        NodeArithmetic {
            rounding: self.rounding,
            fused_bits: Some(self.bits),
            aligns_factors: self.aligns_factors,
            ..NodeArithmetic::ieee(format)
        }
    }
}

/// A formula and the arithmetic of each of its parts, by preorder index
/// ([`preorder`]): all an emitted function needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The order.
    pub formula: Formula,
    /// The format of the inputs (f32 or f64; f16 or bf16 in a fused
    /// chain).
    pub element: Format,
    /// The format of the result: the element's, or a tensor core's own
    /// (f32 of f16 inputs).
    pub result: Format,
    /// A sum or a dot product.
    pub op: Op,
    /// Each part's arithmetic, by preorder index.
    pub parts: Vec<Part>,
}

/// The parts of `formula` in preorder: a part, then its parts, first to
/// last as written. An emitted function of part `k` is named for `k`.
pub fn preorder(formula: &Formula) -> Vec<&Formula> {
    let mut out = Vec::new();
    let mut stack = vec![formula];
    while let Some(f) = stack.pop() {
        out.push(f);
        stack.extend(children(f).into_iter().rev());
    }
    out
}

/// The parts directly inside `f`, as written.
pub fn children(f: &Formula) -> Vec<&Formula> {
    match f {
        Formula::Order(_) | Formula::Doubling | Formula::Fold | Formula::Fanout(_) => vec![],
        Formula::Interleave(_, a, b)
        | Formula::Blocks(_, a, b)
        | Formula::Below(_, a, b)
        | Formula::Lead(_, a, b)
        | Formula::Split(_, a, b)
        | Formula::Body(_, a, Tail::Apart(b)) => vec![a, b],
        Formula::Body(_, a, _)
        | Formula::Halves { inner: a, .. }
        | Formula::Bisect(_, a)
        | Formula::Windows(_, a)
        | Formula::Pieces(_, a)
        | Formula::KBlocks(_, _, a)
        | Formula::Peel(_, a)
        | Formula::Rotate(_, a) => vec![a],
        Formula::Simd(s) => std::iter::once(&s.fold).chain(s.rest.formula()).collect(),
    }
}

/// Each part's address (what [`Adder::enter`] is told) and its preorder
/// index.
fn indices(formula: &Formula) -> HashMap<usize, usize> {
    preorder(formula)
        .into_iter()
        .enumerate()
        .map(|(k, f)| (f as *const Formula as usize, k))
        .collect()
}

impl Plan {
    /// The plan of `formula` whose parts add as in the confirmed `models`,
    /// each of its tree (the formula's tree at that size). Refused, saying
    /// why, where a part's additions differ from each other, or the
    /// arithmetic is one emitted code does not write (fused nodes outside
    /// one `fused:K` chain, IEEE additions toward zero, formats other than
    /// f32 and f64 outside such a chain, rounded inputs, exact products of
    /// f64 values where no fused multiply-add takes them); then checked: the plan evaluated
    /// on random inputs must give each model's replay's bits.
    ///
    /// ```
    /// use fprev::arith::{Arithmetic, NodeArithmetic};
    /// use fprev::emit::{Op, Plan};
    /// use fprev::Format;
    ///
    /// let f: fprev::formula::Formula = "interleave(8, sequential, pairwise)".parse().unwrap();
    /// let model = Arithmetic::uniform(NodeArithmetic::ieee(Format::F32));
    /// let plan = Plan::new(&f, Format::F32, Op::Sum, &[(f.tree(100), model)]).unwrap();
    /// assert!(plan.parts.iter().all(|p| p.format == Format::F32 && p.narrow));
    /// ```
    pub fn new(
        formula: &Formula,
        element: Format,
        op: Op,
        models: &[(SummationTree, Arithmetic)],
    ) -> Result<Plan> {
        Plan::with_result(formula, element, element, op, models)
    }

    /// [`Plan::new`] for a black box that returns `result` (a tensor
    /// core's f32 of f16 inputs): refused, besides, where its inputs are
    /// f16 or bf16 and it is not a fused chain ([`Plan::fused_chain`]).
    pub fn with_result(
        formula: &Formula,
        element: Format,
        result: Format,
        op: Op,
        models: &[(SummationTree, Arithmetic)],
    ) -> Result<Plan> {
        element_ok(element)?;
        element_ok(result)?;
        let count = preorder(formula).len();
        let default = models
            .first()
            .map(|(_, m)| m.default)
            .unwrap_or(NodeArithmetic::ieee(element));
        let product = models
            .first()
            .and_then(|(_, m)| m.products.as_ref())
            .map_or(Product::Exact, |p| p.default);
        let mut recorder = Recorder {
            element,
            op,
            indices: indices(formula),
            entered: Vec::new(),
            seen: vec![Seen::default(); count],
            model: None,
            fault: None,
        };
        for (tree, model) in models {
            if formula.tree(tree.n()) != *tree {
                return Err(Error::Input(format!(
                    "the formula does not give the tree of n = {} it is to take the arithmetic \
                     of",
                    tree.n()
                )));
            }
            if let Some(inputs) = model.inputs {
                return Err(Error::Input(format!(
                    "the black box rounds its inputs to {inputs} first; emitted code does not"
                )));
            }
            recorder.model = Some(model);
            let leaves: Vec<Rv> = (0..tree.n())
                .map(|i| Rv {
                    first: i,
                    size: 1,
                    raw: true,
                    narrow: true,
                })
                .collect();
            formula.run(&leaves, &mut recorder);
            if let Some(fault) = recorder.fault.take() {
                return Err(Error::Input(fault));
            }
        }
        let mut parts = recorder
            .seen
            .iter()
            .map(|s| s.part(default, product, element, op))
            .collect::<std::result::Result<Vec<_>, String>>()
            .map_err(Error::Input)?;
        narrow_at_every_size(formula, &mut parts, element, op);
        let plan = Plan {
            formula: formula.clone(),
            element,
            result,
            op,
            parts,
        };
        plan.fused_chain_ok(models)?;
        plan.multiply_adds_ok()?;
        for (tree, model) in models {
            plan.agrees_with(tree, model)?;
        }
        Ok(plan)
    }

    /// The plan of a formula whose every node adds alike: `node`, and
    /// products (of a dot) rounded as `product` says.
    pub fn uniform(
        formula: &Formula,
        element: Format,
        op: Op,
        node: NodeArithmetic,
        product: Product,
    ) -> Result<Plan> {
        let mut model = Arithmetic::uniform(node);
        if op == Op::Dot {
            model.products = Some(crate::arith::Products {
                default: product,
                leaves: Default::default(),
            });
        }
        // One size at which every part adds is enough to find them all.
        let tree = formula.tree(1000);
        Plan::new(formula, element, op, &[(tree, model)])
    }

    /// The bits the emitted function returns for `x` (and `y`, of a dot):
    /// the plan evaluated as the emitted code evaluates it.
    ///
    /// # Panics
    /// If `x` is empty, or `y` is shorter than `x` in a dot.
    pub fn evaluate(&self, x: &[f64], y: &[f64]) -> f64 {
        let mut adder = Evaluator {
            plan: self,
            x,
            y,
            indices: indices(&self.formula),
            entered: Vec::new(),
        };
        let leaves: Vec<Ev> = (0..x.len()).map(Ev::summand).collect();
        let root = self.formula.run(&leaves, &mut adder);
        let root = adder.load(root, true);
        self.result.round(adder.finish(root))
    }

    /// Refuses exact products of f64 values (which enter their additions
    /// as fused multiply-adds) anywhere but added, as a second operand, to
    /// a value an f64 addition rounds: a double cannot hold such a product
    /// alone, so a part that reads one first (a lane's start, a summand it
    /// returns alone) or adds in f32 or in Kahan steps is not written.
    fn multiply_adds_ok(&self) -> Result<()> {
        if self.op != Op::Dot || self.element != Format::F64 {
            return Ok(());
        }
        for (f, part) in preorder(&self.formula).into_iter().zip(&self.parts) {
            let fused = part.format == Format::F64 && !part.compensated;
            if part.first == Product::Exact || (part.second == Product::Exact && !fused) {
                return Err(Error::Input(format!(
                    "its products of f64 values enter its part {f}'s additions exact (fused \
                     multiply-adds) where emitted code cannot fuse them: it writes an exact \
                     product only as the second operand of an f64 addition, not read first or \
                     alone, nor in f32 or Kahan steps"
                )));
            }
        }
        Ok(())
    }

    /// The group width `K` of a plan that is one fused chain (`fused:K`
    /// whose nodes are fused windows): the one plan of fused nodes emitted
    /// code writes.
    pub fn fused_chain(&self) -> Option<usize> {
        match (&self.formula, self.parts.as_slice()) {
            (Formula::Order(Order::Fused(k)), [part]) if part.fused.is_some() => Some(*k),
            _ => None,
        }
    }

    /// Refuses, saying why, a plan emitted code does not write for its
    /// fused nodes or its narrow formats: fused nodes anywhere but in one
    /// `fused:K` chain; f16 or bf16 values or results outside one; a chain
    /// whose products are rounded, or whose window's integer sum could
    /// pass 63 bits.
    fn fused_chain_ok(&self, models: &[(SummationTree, Arithmetic)]) -> Result<()> {
        let fused = self.parts.iter().any(|p| p.fused.is_some());
        let narrow = |f: Format| !matches!(f, Format::F32 | Format::F64);
        let Some(k) = self.fused_chain() else {
            if fused {
                return Err(Error::Input(format!(
                    "it adds in fused nodes within native:{}; emitted code writes fused nodes \
                     only as one chain fused:K",
                    self.formula
                )));
            }
            if narrow(self.element) || narrow(self.result) {
                return Err(Error::Input(format!(
                    "emitted code takes {} values and returns {} only in a fused chain (a \
                     tensor core's); other orders take f32 or f64 values",
                    self.element, self.result
                ))
                .advise(Remedy::Give(Param::Dtype, &["f32", "f64"])));
            }
            return Ok(());
        };
        if self.result == Format::Bf16 {
            return Err(Error::Input(
                "it returns bf16 values; emitted fused chains return f32, f16 or f64".into(),
            ));
        }
        if self.element == Format::F64 {
            return Err(Error::Input(
                "its fused nodes add f64 values; emitted fused nodes take f32, f16 or bf16 \
                 values, whose products a double holds exactly"
                    .into(),
            ));
        }
        let rounded = models.iter().find_map(|(_, m)| {
            let p = m.products.as_ref()?;
            std::iter::once(&p.default)
                .chain(p.leaves.values())
                .find(|p| **p != Product::Exact)
                .copied()
        });
        if let (Op::Dot, Some(p)) = (self.op, rounded) {
            return Err(Error::Input(format!(
                "its fused nodes take products rounded {p}; emitted fused nodes take them exact"
            )));
        }
        let bits = self.parts[0].fused.map_or(0, |f| f.bits);
        // Each term is below 2^(bits + 2) in units of the window's last
        // bit (a product aligned at its factors' exponents reaches 4).
        let width = bits + 2 + usize::BITS - (k - 1).leading_zeros();
        if width > 62 {
            return Err(Error::Input(format!(
                "its fused nodes keep {bits} bits of {k} terms, more than a 64-bit integer sum \
                 holds; emitted fused nodes keep at most {} bits of {k}",
                bits + 62 - width
            )));
        }
        Ok(())
    }

    /// Checks the plan against a model's replay on random inputs.
    fn agrees_with(&self, tree: &SummationTree, model: &Arithmetic) -> Result<()> {
        let replay = Replay::with_arithmetic(tree, model);
        let mut rng = ChaCha8Rng::seed_from_u64(0x656d6974);
        for trial in 0..24 {
            let kind = Inputs::ALL[trial % Inputs::ALL.len()];
            let x = kind.draw(self.element, tree.n(), &mut rng);
            let (want, got) = match self.op {
                Op::Sum => (replay.sum(&x), self.evaluate(&x, &[])),
                Op::Dot => {
                    let y = kind.draw(self.element, tree.n(), &mut rng);
                    (replay.dot(&x, &y), self.evaluate(&x, &y))
                }
            };
            // The black box returns its element type, as a replay's root
            // is compared.
            let want = self.result.round(want);
            if want.to_bits() != got.to_bits() && !(want.is_nan() && got.is_nan()) {
                return Err(Error::Input(format!(
                    "the model's arithmetic does not follow the formula's parts at n = {} \
                     (a part's additions would have to differ from each other): emitted code \
                     would give {got:e} where the model gives {want:e}",
                    tree.n()
                )));
            }
        }
        Ok(())
    }
}

/// Whether emitted code takes values of `format`: f32 and f64, and f16
/// and bf16 in a fused chain (a tensor core's; [`Plan::with_result`]
/// refuses them elsewhere).
pub fn element_ok(format: Format) -> Result<()> {
    match format {
        Format::F32 | Format::F64 | Format::F16 | Format::Bf16 => Ok(()),
        other => Err(Error::Input(format!(
            "emitted code takes f32 or f64 values (f16 or bf16 in a tensor core's fused chain), \
             not {other}"
        ))
        .advise(Remedy::Give(Param::Dtype, &["f32", "f64"]))),
    }
}

/// What the additions of one part were seen to do.
#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    node: Option<NodeArithmetic>,
    drops_error: bool,
    first: Option<Product>,
    second: Option<Product>,
    wide_operand: bool,
}

impl Seen {
    /// The part, taking the model's `default` arithmetic and `product`
    /// where no addition or product of it was seen.
    fn part(
        &self,
        default: NodeArithmetic,
        product: Product,
        element: Format,
        op: Op,
    ) -> std::result::Result<Part, String> {
        let node = self.node.unwrap_or(default);
        emittable(&node)?;
        let fused = node.fused_bits.map(|bits| Fused {
            bits,
            rounding: node.rounding,
            aligns_factors: node.aligns_factors,
        });
        // A sum's summands are the inputs themselves.
        let nominal = match op {
            Op::Sum => Product::Rounded(element),
            Op::Dot => product,
        };
        // A part seen reading no first product reads one, at other sizes,
        // as a chain starts: an exact product of f64 values only a fused
        // multiply-add makes, from the product rounded.
        let start = match nominal {
            Product::Exact if op == Op::Dot && element == Format::F64 => Product::Rounded(element),
            p => p,
        };
        let first = self.first.unwrap_or(start);
        let second = self.second.unwrap_or(nominal);
        let narrow_summand = |p: Product| match op {
            Op::Sum => element == Format::F32,
            Op::Dot => p == Product::Rounded(Format::F32),
        };
        Ok(Part {
            format: node.format,
            compensated: node.compensated,
            drops_error: self.drops_error || (self.node.is_none() && default.drops_error),
            first,
            second,
            narrow: node.format == Format::F32
                && !self.wide_operand
                && (self.first.is_none() || narrow_summand(first))
                && (self.second.is_none() || narrow_summand(second)),
            seen: self.node.is_some(),
            fused,
        })
    }
}

/// Keeps a part narrow only where its operands are f32 values at every
/// size, not only at the sizes of the models: at a size where a part
/// reads a summand alone (a lane of one, a body with no whole multiple),
/// the summand reaches the parts above it as it was read (an f64 input,
/// an exact product), and a part whose additions no model made (a
/// body's rest at a multiple) reads summands as its default says.
fn narrow_at_every_size(formula: &Formula, parts: &mut [Part], element: Format, op: Op) {
    let narrow_summand = |p: Product| match op {
        Op::Sum => element == Format::F32,
        Op::Dot => p == Product::Rounded(Format::F32),
    };
    let all = preorder(formula);
    let index: HashMap<*const Formula, usize> = all
        .iter()
        .enumerate()
        .map(|(k, f)| (*f as *const Formula, k))
        .collect();
    // Whether every value part k returns is an f32 value; children come
    // after their part in preorder.
    let mut returns_narrow = vec![false; all.len()];
    for (k, f) in all.iter().enumerate().rev() {
        let part = parts[k];
        let reads_summands = matches!(
            f,
            Formula::Order(_) | Formula::Doubling | Formula::Fold | Formula::Fanout(_)
        ) || matches!(f, Formula::Body(..) | Formula::Peel(..));
        let summands =
            !reads_summands || (narrow_summand(part.first) && narrow_summand(part.second));
        let inner = children(f)
            .iter()
            .all(|c| returns_narrow[index[&(*c as *const Formula)]]);
        returns_narrow[k] = part.format == Format::F32 && summands && inner;
        parts[k].narrow &= summands && inner;
    }
}

/// Whether emitted code writes a node's arithmetic, else why not: IEEE
/// additions to nearest in f32 or f64, or a fused window (any term count,
/// its bits known) rounding to f64, f32, f16 or bf16.
fn emittable(node: &NodeArithmetic) -> std::result::Result<(), String> {
    if node.fused_bits.is_some() {
        if node.compensated {
            return Err("its fused nodes take compensated steps; emitted code does not".into());
        }
        return match element_ok(node.format) {
            Ok(()) => Ok(()),
            Err(_) => Err(format!(
                "its fused nodes round to {}; emitted fused nodes round to f64, f32, f16 or bf16",
                node.format
            )),
        };
    }
    if !matches!(node.format, Format::F32 | Format::F64) {
        return Err(format!(
            "its additions round to {}; emitted code adds in f32 and f64 only",
            node.format
        ));
    }
    if node.rounding != Rounding::NearestEven {
        return Err(format!(
            "its additions round {}; emitted code rounds to nearest",
            node.rounding
        ));
    }
    Ok(())
}

/// What each part of `formula` does at `n` summands, by preorder index: a
/// bit each for reading a summand first (a lane's start, one returned
/// alone), reading one second, and adding two partial sums. A model shows
/// a part's arithmetic only where it does these, so a plan wants sizes
/// whose runs together show every one a part does at any size.
///
/// ```
/// use fprev::emit::plan::roles;
///
/// let f: fprev::formula::Formula = "body(8, interleave(8, sequential, pairwise), then)".parse().unwrap();
/// // At 16 the body only adds its lanes' sum; at 19 it adds its rest too.
/// assert!(roles(&f, 19)[0] > roles(&f, 16)[0]);
/// ```
pub fn roles(formula: &Formula, n: usize) -> Vec<u8> {
    struct Roles {
        indices: HashMap<usize, usize>,
        entered: Vec<usize>,
        seen: Vec<u8>,
    }
    impl Roles {
        fn mark(&mut self, bit: u8) {
            let k = *self.entered.last().expect("additions happen inside a part");
            self.seen[k] |= bit;
        }
    }
    impl Adder for Roles {
        // A summand not read yet.
        type Value = bool;
        fn add(&mut self, a: bool, b: bool) -> bool {
            let bits = (u8::from(a) * FIRST) | (u8::from(b) * SECOND);
            self.mark(if bits == 0 { SUMS } else { bits });
            false
        }
        fn fused(&mut self, _: &[bool]) -> bool {
            self.mark(FIRST | SECOND | SUMS);
            false
        }
        fn enter(&mut self, part: usize) {
            self.entered.push(self.indices[&part]);
        }
        fn leave(&mut self) {
            self.entered.pop();
        }
        fn returned(&mut self, sum: bool) -> bool {
            if sum {
                self.mark(FIRST);
            }
            false
        }
        fn loaded(&mut self, v: bool) -> bool {
            self.returned(v)
        }
    }
    const FIRST: u8 = 1;
    const SECOND: u8 = 2;
    const SUMS: u8 = 4;
    let mut roles = Roles {
        indices: indices(formula),
        entered: Vec::new(),
        seen: vec![0; preorder(formula).len()],
    };
    formula.run(&vec![true; n], &mut roles);
    roles.seen
}

/// A value as [`Plan::new`] follows it: the node it is, whether it is a
/// summand not read yet, whether it is an f32 value.
#[derive(Clone, Copy, Debug)]
struct Rv {
    first: usize,
    size: usize,
    raw: bool,
    narrow: bool,
}

/// Runs the formula over a model's tree, recording each part's additions.
struct Recorder<'m> {
    element: Format,
    op: Op,
    indices: HashMap<usize, usize>,
    entered: Vec<usize>,
    seen: Vec<Seen>,
    model: Option<&'m Arithmetic>,
    fault: Option<String>,
}

impl Recorder<'_> {
    /// Records fused node `key` (of arithmetic `node`) as part `k`'s.
    fn window(&mut self, k: usize, key: NodeKey, node: NodeArithmetic) -> Rv {
        if let Err(why) = emittable(&node) {
            self.fail(why);
        }
        match self.seen[k].node {
            Some(was) if was != node => self.fail(format!(
                "{key} adds in {node}, and others of its part in {was}: its part's additions \
                 differ"
            )),
            _ => self.seen[k].node = Some(node),
        }
        Rv {
            first: key.first,
            size: key.size,
            raw: false,
            narrow: false,
        }
    }

    fn part(&self) -> usize {
        *self.entered.last().expect("additions happen inside a part")
    }

    fn fail(&mut self, why: String) {
        self.fault.get_or_insert(why);
    }

    /// Reads summand `v` as part `k`'s `first` or second operand.
    fn read(&mut self, v: Rv, k: usize, first: bool) -> Rv {
        if !v.raw {
            return v;
        }
        let model = self.model.expect("a model while running");
        let product = match self.op {
            Op::Sum => Product::Rounded(self.element),
            Op::Dot => model
                .products
                .as_ref()
                .map_or(Product::Exact, |p| p.at(v.first)),
        };
        if self.op == Op::Dot {
            match product {
                Product::Rounded(f) if !matches!(f, Format::F32 | Format::F64) => {
                    self.fail(format!(
                        "its products are rounded to {f}; emitted code rounds them to f32 or f64"
                    ))
                }
                _ => {}
            }
        }
        let slot = match first {
            true => &mut self.seen[k].first,
            false => &mut self.seen[k].second,
        };
        match slot {
            Some(p) if *p != product => {
                let (was, is) = (*p, product);
                self.fail(format!(
                    "summand {}'s product is rounded {is} where others the same part reads \
                     alike are {was}",
                    v.first
                ));
            }
            _ => *slot = Some(product),
        }
        let narrow = match self.op {
            Op::Sum => self.element == Format::F32,
            Op::Dot => product == Product::Rounded(Format::F32),
        };
        Rv {
            raw: false,
            narrow,
            ..v
        }
    }
}

impl Adder for Recorder<'_> {
    type Value = Rv;

    fn add(&mut self, a: Rv, b: Rv) -> Rv {
        let k = self.part();
        let a = self.read(a, k, true);
        let b = self.read(b, k, false);
        let key = NodeKey {
            first: a.first.min(b.first),
            size: a.size + b.size,
        };
        let node = self.model.expect("a model while running").at(&key);
        if node.fused_bits.is_some() {
            // A fused window of two terms (a chain's last step of one).
            return self.window(k, key, node);
        }
        if let Err(why) = emittable(&node) {
            self.fail(why);
        }
        let seen = &mut self.seen[k];
        let plain = NodeArithmetic {
            drops_error: false,
            ..node
        };
        match seen.node {
            Some(was) if was != plain => {
                self.fail(format!(
                    "{key} adds in {node}, and others of its part in {was}: its part's \
                     additions differ"
                ));
            }
            _ => seen.node = Some(plain),
        }
        let seen = &mut self.seen[k];
        seen.drops_error |= node.drops_error;
        seen.wide_operand |= !(a.narrow && b.narrow);
        Rv {
            first: key.first,
            size: key.size,
            raw: false,
            narrow: node.format == Format::F32,
        }
    }

    fn fused(&mut self, terms: &[Rv]) -> Rv {
        let k = self.part();
        for (j, t) in terms.iter().enumerate() {
            self.read(*t, k, j == 0);
        }
        let key = NodeKey {
            first: terms.iter().map(|t| t.first).min().unwrap_or(0),
            size: terms.iter().map(|t| t.size).sum(),
        };
        let node = self.model.expect("a model while running").at(&key);
        if node.fused_bits.is_none() {
            self.fail(format!(
                "{key} is a fused node the model gives no window of; emitted code writes fused \
                 nodes whose bits are known"
            ));
        }
        self.window(k, key, node)
    }

    fn enter(&mut self, part: usize) {
        self.entered.push(self.indices[&part]);
    }

    fn leave(&mut self) {
        self.entered.pop();
    }

    fn returned(&mut self, sum: Rv) -> Rv {
        let k = self.part();
        self.read(sum, k, true)
    }

    fn loaded(&mut self, v: Rv) -> Rv {
        self.returned(v)
    }
}

/// A value as the emitted code holds it: a summand not read yet, or a
/// number with the error its compensated chain carries.
#[derive(Clone, Copy, Debug)]
struct Ev {
    summand: Option<usize>,
    v: f64,
    /// Of a compensated step's sum: the error it carries, its format and
    /// whether its chain drops its error at the end.
    chain: Option<(f64, Format, bool)>,
}

impl Ev {
    fn summand(i: usize) -> Ev {
        Ev {
            summand: Some(i),
            v: 0.0,
            chain: None,
        }
    }

    fn number(v: f64) -> Ev {
        Ev {
            summand: None,
            v,
            chain: None,
        }
    }
}

/// Evaluates a plan as emitted code does.
struct Evaluator<'p> {
    plan: &'p Plan,
    x: &'p [f64],
    y: &'p [f64],
    indices: HashMap<usize, usize>,
    entered: Vec<usize>,
}

impl Evaluator<'_> {
    fn current(&self) -> Part {
        self.plan.parts[*self.entered.last().expect("inside a part")]
    }

    /// Reads a summand as the current part's first or second operand.
    fn load(&self, v: Ev, first: bool) -> Ev {
        let Some(i) = v.summand else { return v };
        let value = match self.plan.op {
            Op::Sum => self.x[i],
            Op::Dot => {
                let part = self.entered.last().map(|&k| self.plan.parts[k]);
                let product = part.map_or(Product::Exact, |p| match first {
                    true => p.first,
                    false => p.second,
                });
                let p = self.x[i] * self.y[i];
                match product {
                    Product::Rounded(f) => f.round(p),
                    // Exact in f64: products of f32 values (the plan has
                    // no exact products of f64 values).
                    Product::Exact => p,
                }
            }
        };
        Ev::number(value)
    }

    /// A value as a part that does not continue its chain reads it.
    fn finish(&self, v: Ev) -> f64 {
        match v.chain {
            Some((c, format, false)) => Rounding::NearestEven.add(format, v.v, -c),
            _ => v.v,
        }
    }
}

impl Adder for Evaluator<'_> {
    type Value = Ev;

    fn add(&mut self, a: Ev, b: Ev) -> Ev {
        let part = self.current();
        if part.fused.is_some() {
            return self.fused(&[a, b]);
        }
        // An exact product of f64 values added to a running f64 sum: a
        // fused multiply-add (the plan allows no other).
        if let (Some(i), Op::Dot, Format::F64, Product::Exact) =
            (b.summand, self.plan.op, self.plan.element, part.second)
        {
            let a = self.finish(self.load(a, true));
            return Ev::number(self.x[i].mul_add(self.y[i], a));
        }
        let a = self.load(a, true);
        let b = self.load(b, false);
        let add = |p: f64, q: f64| Rounding::NearestEven.add(part.format, p, q);
        if part.compensated {
            let (s, c) = match a.chain {
                Some((c, ..)) => (a.v, c),
                None => (a.v, 0.0),
            };
            let x = self.finish(b);
            let y = add(x, -c);
            let t = add(s, y);
            let e = add(add(t, -s), -y);
            return Ev {
                summand: None,
                v: t,
                chain: Some((e, part.format, part.drops_error)),
            };
        }
        Ev::number(add(self.finish(a), self.finish(b)))
    }

    /// A fused node, as the model's own evaluation computes it: a dot's
    /// summands are products, aligned at their factors where the node
    /// says; a running sum (an operand past the summands) at its own
    /// leading bit.
    fn fused(&mut self, terms: &[Ev]) -> Ev {
        let part = self.current();
        let node = part
            .fused
            .expect("fused nodes only in a fused part")
            .node(part.format);
        let values: Vec<f64> = terms.iter().map(|t| self.load(*t, true).v).collect();
        let v = match self.plan.op {
            Op::Sum => node.sum(&values),
            Op::Dot => {
                let past = self.x.len() as u32;
                let operands: Vec<u32> = terms
                    .iter()
                    .map(|t| t.summand.map_or(past, |i| i as u32))
                    .collect();
                node.sum_of_products(&values, &operands, [self.x, self.y])
            }
        };
        Ev::number(v)
    }

    fn enter(&mut self, part: usize) {
        self.entered.push(self.indices[&part]);
    }

    fn leave(&mut self) {
        self.entered.pop();
    }

    fn returned(&mut self, sum: Ev) -> Ev {
        self.load(sum, true)
    }

    fn loaded(&mut self, v: Ev) -> Ev {
        self.load(v, true)
    }
}
