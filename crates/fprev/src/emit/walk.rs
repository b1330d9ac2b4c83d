//! One walk over a plan for every language: which function each part of
//! the formula gets over which values (the inputs, or partial sums), its
//! shape, the functions and helpers each calls and the order they are
//! written in, which parts are refused, how each addition rounds, and
//! where the lanes of a left-to-right loop run in registers. Each function
//! is lowered to code once (`lower.rs`); a [`Backend`] only prints it in
//! its language.
//!
//! Every function takes a strided view of what it sums (element `i` of
//! `n`), the count its body and pieces are cut for (`planned`), and `c`:
//! where its caller continues a compensated chain, the error the chain
//! carries is written there and the sum returned as it stands; otherwise
//! the chain ends here.

use std::collections::{HashMap, HashSet};

use super::code::{Domain, Func, Lane, Reading};
use super::lower::{self, Combine, FoldAddition, Function, Helper, Join, Lanes, Shape};
use super::plan::{Op, Part, Plan, preorder};
use crate::arith::Product;
use crate::format::Format;
use crate::formula::simd::Rest;
use crate::formula::{Formula, Tail};
use crate::order::Order;

/// How a part's addition of two doubles rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rounding {
    /// An f64 addition.
    Double,
    /// An f32 addition of values that are f32 already, which the double
    /// sum rounded to f32 is.
    Narrow,
    /// The exact sum rounded once to f32 (through round-to-odd).
    Once,
}

/// A language emitted code is written in, as the walk calls on it: each
/// function and helper once, callees before their callers, as code
/// (`code.rs`) it prints.
pub(super) trait Backend {
    /// How the language runs the lanes of a left-to-right loop.
    const LANES: Lanes;

    /// `p + q` of doubles `p` and `q`, rounded as each [`Rounding`] does.
    const SUMS: [&'static str; 3];

    /// Why the language does not write `plan`, if it does not.
    fn refuses(&self, _plan: &Plan) -> Result<(), String> {
        Ok(())
    }

    /// The name the module gives function or helper `base` (`p0x`, `a1`).
    fn name(&self, base: &str) -> String {
        base.to_string()
    }

    /// Writes a part's addition `name` of doubles `p` and `q`, returning
    /// `sum`.
    fn addition(&mut self, name: &str, sum: &str);

    /// Writes compensated part `k`'s Kahan step `k` with its addition
    /// `add`, and the end of its chain `e`, which returns `end` (of the
    /// chain's sum `t` and error `e`) where no caller continues the chain.
    fn kahan(&mut self, k: usize, add: &str, end: &str);

    /// Writes a function, after all it calls.
    fn function(&mut self, walk: &Walk, f: &Func);

    /// The module: its comment, what its functions need, the functions
    /// and the public function `name`, reproducing `what`.
    fn finish(self, walk: &Walk, name: &str, what: &str) -> String;

    /// The module of a plan that is one fused chain `fused:K`.
    fn fused_chain(self, plan: &Plan, k: usize, name: &str, what: &str) -> String;
}

/// The source of `plan` in `backend`'s language.
pub(super) fn source<B: Backend>(
    plan: &Plan,
    backend: B,
    name: &str,
    what: &str,
) -> Result<String, String> {
    if let Some(k) = plan.fused_chain() {
        return Ok(backend.fused_chain(plan, k, name, what));
    }
    backend.refuses(plan)?;
    let mut walker = Walker {
        walk: Walk::new(plan),
        backend,
        functions: HashSet::new(),
        helpers: HashSet::new(),
    };
    walker.function(0, Domain::Inputs)?;
    Ok(walker.backend.finish(&walker.walk, name, what))
}

/// A plan as the walk reads it: its parts in preorder.
pub(super) struct Walk<'p> {
    pub plan: &'p Plan,
    pub parts: Vec<&'p Formula>,
    /// An addition written rounds its exact sum once to f32, which the
    /// module's runtime does.
    pub rounds_once: bool,
    ids: HashMap<*const Formula, usize>,
}

impl<'p> Walk<'p> {
    fn new(plan: &'p Plan) -> Walk<'p> {
        let parts = preorder(&plan.formula);
        let ids = parts
            .iter()
            .enumerate()
            .map(|(k, f)| (*f as *const Formula, k))
            .collect();
        Walk {
            plan,
            parts,
            rounds_once: false,
            ids,
        }
    }

    fn id(&self, f: &Formula) -> usize {
        self.ids[&(f as *const Formula)]
    }

    /// Part `k`'s arithmetic.
    pub(super) fn part(&self, k: usize) -> Part {
        self.plan.parts[k]
    }

    /// How part `k` rounds a product it reads as its first operand or its
    /// second.
    pub(super) fn product(&self, k: usize, second: bool) -> Product {
        let part = self.part(k);
        match second {
            true => part.second,
            false => part.first,
        }
    }

    /// How the lanes of part `k`'s left-to-right loop over `d` add: in
    /// registers where its additions are a format's own (f32 additions of
    /// f32 values, f32 fused multiply-adds, f64 additions), else each
    /// rounded once; none of a compensated part.
    pub(super) fn lane(&self, k: usize, d: Domain) -> Option<Lane> {
        let part = self.part(k);
        if part.compensated {
            return None;
        }
        let plan = self.plan;
        let fma = d == Domain::Inputs && plan.op == Op::Dot && part.second == Product::Exact;
        let own = match (d, plan.op) {
            (Domain::Sums, _) => part.narrow,
            (Domain::Inputs, Op::Sum) => plan.element == Format::F32,
            (Domain::Inputs, Op::Dot) => {
                plan.element == Format::F32
                    && part.first == Product::Rounded(Format::F32)
                    && matches!(part.second, Product::Exact | Product::Rounded(Format::F32))
            }
        };
        Some(match part.format {
            Format::F64 => Lane::Registers {
                format: Format::F64,
                fma: self.multiplies_exact(k, d),
            },
            format if own => Lane::Registers { format, fma },
            _ => Lane::Once,
        })
    }

    /// Whether part `k` over `d` adds a product it reads second by a
    /// fused multiply-add of the exact product of two f64 inputs.
    pub(super) fn multiplies_exact(&self, k: usize, d: Domain) -> bool {
        let plan = self.plan;
        d == Domain::Inputs
            && plan.op == Op::Dot
            && plan.element == Format::F64
            && self.part(k).second == Product::Exact
    }

    /// Whether part `k` over `d` reads its first and its second operands
    /// alike: partial sums, inputs, or products rounded one way.
    pub(super) fn reads_alike(&self, k: usize, d: Domain) -> bool {
        d == Domain::Sums
            || self.plan.op == Op::Sum
            || self.product(k, false) == self.product(k, true)
    }

    /// What function `f` reads.
    pub(super) fn reading(&self, f: &Func) -> Reading {
        Reading {
            d: f.d,
            op: self.plan.op,
            first: self.product(f.k, false),
            second: self.product(f.k, true),
        }
    }

    /// Each part in words, for a module's comment: `part K, FORMULA:
    /// ARITHMETIC`.
    pub(super) fn described(&self) -> Vec<String> {
        self.parts
            .iter()
            .zip(&self.plan.parts)
            .enumerate()
            .map(|(k, (f, p))| format!("part {k}, {}: {}", short(f), describe(p, self.plan.op)))
            .collect()
    }
}

/// Walks a plan, writing each function and helper once through `backend`.
struct Walker<'p, B> {
    walk: Walk<'p>,
    backend: B,
    functions: HashSet<(usize, Domain)>,
    helpers: HashSet<(usize, Helper)>,
}

impl<B: Backend> Walker<'_, B> {
    /// Part `k`'s `helper`, written the first time it is asked for.
    fn helper(&mut self, k: usize, helper: Helper) -> String {
        let name = self.backend.name(&format!("{}{k}", helper.prefix()));
        if self.helpers.insert((k, helper)) {
            match helper {
                Helper::Addition => {
                    let part = self.walk.part(k);
                    let how = match part.format {
                        Format::F64 => Rounding::Double,
                        _ if part.narrow => Rounding::Narrow,
                        _ => Rounding::Once,
                    };
                    self.walk.rounds_once |= how == Rounding::Once;
                    self.backend.addition(&name, B::SUMS[how as usize]);
                    if part.compensated {
                        let end = match part.drops_error {
                            true => "t".to_string(),
                            false => format!("{name}(t, -e)"),
                        };
                        self.backend.kahan(k, &name, &end);
                    }
                }
                _ => {
                    let add = self.helper(k, Helper::Addition);
                    let f = lower::helper(k, helper, &name, &add);
                    self.backend.function(&self.walk, &f);
                }
            }
        }
        name
    }

    /// The function of part `k` over `d`, written the first time it is
    /// asked for, after those it calls.
    fn function(&mut self, k: usize, d: Domain) -> Result<String, String> {
        let name = self.backend.name(&format!("p{k}{}", d.letter()));
        if !self.functions.insert((k, d)) {
            return Ok(name);
        }
        let f = self.walk.parts[k];
        writable(self.walk.plan, f, self.walk.part(k), d)?;
        let shape = self.shape(k, d, f)?;
        let add = self.backend.name(&format!("a{k}"));
        let function = Function {
            k,
            d,
            name: name.clone(),
            add,
            shape,
            compensated: self.walk.part(k).compensated,
            alike: self.walk.reads_alike(k, d),
            fma: self.walk.multiplies_exact(k, d),
        };
        let backend = &self.backend;
        let lowered = lower::function(&function, B::LANES, &|s| backend.name(s));
        for f in lowered.recursions.iter().chain([&lowered.function]) {
            self.backend.function(&self.walk, f);
        }
        Ok(name)
    }

    /// What part `k`'s function over `d` computes, the functions and
    /// helpers it calls written first.
    fn shape<'f>(&mut self, k: usize, d: Domain, f: &'f Formula) -> Result<Shape<'f>, String> {
        let id = |w: &Self, f: &Formula| w.walk.id(f);
        Ok(match f {
            Formula::Order(Order::Sequential) => {
                let lane = self
                    .walk
                    .lane(k, d)
                    .filter(|_| B::LANES == Lanes::Registers);
                if !matches!(lane, Some(Lane::Registers { .. })) {
                    self.helper(k, Helper::Addition);
                }
                Shape::Sequential { lane }
            }
            Formula::Order(order) => {
                self.helper(k, Helper::Addition);
                match *order {
                    Order::Reverse => Shape::Reverse,
                    Order::Pairwise => Shape::Halving { binary_tree: false },
                    Order::BinaryTree => Shape::Halving { binary_tree: true },
                    Order::Strided(lanes) => Shape::Strided {
                        lanes,
                        pairwise: self.helper(k, Helper::Pairwise),
                    },
                    Order::Blocked(size) => Shape::Blocked(size),
                    Order::Sequential | Order::Fused(_) => unreachable!("refused by writable"),
                }
            }
            Formula::Interleave(lanes, inner, outer) => {
                let i = id(self, inner);
                let inner_fn = self.function(i, d)?;
                let outer = self.function(id(self, outer), Domain::Sums)?;
                let lane = match **inner {
                    Formula::Order(Order::Sequential) => self.walk.lane(i, d),
                    _ => None,
                };
                Shape::Interleave {
                    lanes: *lanes,
                    inner: inner_fn,
                    inner_part: i,
                    outer,
                    lane,
                }
            }
            Formula::Blocks(size, inner, outer) => Shape::Blocks {
                size: *size,
                inner: self.function(id(self, inner), d)?,
                outer: self.function(id(self, outer), Domain::Sums)?,
            },
            Formula::Body(every, lanes, Tail::First) => {
                let Formula::Interleave(count, inner, outer) = &**lanes else {
                    unreachable!("refused by writable");
                };
                Shape::FirstLane {
                    every: *every,
                    count: *count,
                    inner: self.function(id(self, inner), d)?,
                    outer: self.function(id(self, outer), Domain::Sums)?,
                }
            }
            Formula::Peel(seeds, peeled) => {
                let (lanes, tail) = peeled_lanes(peeled).expect("refused by writable");
                let Formula::Interleave(count, ..) = lanes else {
                    unreachable!("peeled_lanes gives lanes");
                };
                let lanes_fn = self.function(id(self, lanes), d)?;
                self.helper(k, Helper::Addition);
                let tail = self.function(id(self, tail), d)?;
                Shape::Peel {
                    seeds: *seeds,
                    count: *count,
                    every: peeled.lane_count().expect("peel's formula has lanes"),
                    lanes: lanes_fn,
                    tail,
                    plain: self.function(id(self, peeled), d)?,
                }
            }
            Formula::Body(multiple, body, tail) => {
                let body = self.function(id(self, body), d)?;
                self.helper(k, Helper::Addition);
                let tail = match tail {
                    Tail::Apart(t) => Some(self.function(id(self, t), d)?),
                    _ => None,
                };
                Shape::Body {
                    multiple: *multiple,
                    body,
                    tail,
                }
            }
            Formula::Bisect(depth, inner) => {
                let inner = self.function(id(self, inner), d)?;
                self.helper(k, Helper::Addition);
                Shape::Bisect {
                    depth: *depth,
                    inner,
                }
            }
            Formula::Halves {
                leaf,
                multiple,
                inner,
            } => {
                let inner = self.function(id(self, inner), d)?;
                self.helper(k, Helper::Addition);
                Shape::Halves {
                    leaf: (*leaf).max(1),
                    multiple: *multiple,
                    inner,
                }
            }
            Formula::Lead(multiple, body, rest) => {
                let body = self.function(id(self, body), d)?;
                let rest = self.function(id(self, rest), d)?;
                self.helper(k, Helper::Addition);
                Shape::Lead {
                    multiple: *multiple,
                    body,
                    rest,
                }
            }
            Formula::Below(at, small, large) => Shape::Below {
                at: *at,
                small: self.function(id(self, small), d)?,
                large: self.function(id(self, large), d)?,
            },
            Formula::Windows(width, inner) => Shape::Windows {
                width: *width,
                inner: self.function(id(self, inner), d)?,
                again: self.function(k, Domain::Sums)?,
            },
            Formula::Split(blocks, inner, outer) => {
                let inner = self.function(id(self, inner), d)?;
                let combine = match **outer {
                    // The split's own addition, over its ranks.
                    Formula::Doubling => {
                        self.helper(k, Helper::Addition);
                        Combine::Doubling(self.helper(k, Helper::Doubling))
                    }
                    _ => Combine::Outer(self.function(id(self, outer), Domain::Sums)?),
                };
                Shape::Split {
                    blocks: *blocks,
                    inner,
                    combine,
                }
            }
            Formula::Doubling => {
                self.helper(k, Helper::Addition);
                Shape::Doubling {
                    doubling: self.helper(k, Helper::Doubling),
                }
            }
            Formula::Fold => {
                self.helper(k, Helper::Addition);
                Shape::Fold
            }
            Formula::Fanout(fan) => {
                self.helper(k, Helper::Addition);
                Shape::Fanout(*fan)
            }
            Formula::Simd(simd) => {
                self.helper(k, Helper::Addition);
                let fused = |f: &&Formula| matches!(f, Formula::Order(Order::Fused(_)));
                if preorder(&simd.fold).iter().any(fused) {
                    return Err(FUSED.into());
                }
                let sketch = simd.fold_sketch().ok_or(FUSED)?;
                let mut fold = Vec::with_capacity(sketch.additions.len());
                for (terms, part) in sketch.additions {
                    // The fold's tree is written out: each addition in the
                    // arithmetic of the fold's part that makes it.
                    let p = self.walk.ids[&(part as *const Formula)];
                    if self.walk.part(p).compensated {
                        return Err(format!(
                            "the part {} of the kernel's fold takes compensated steps; emitted \
                             code writes them only in a left-to-right loop and a body's last \
                             addition",
                            self.walk.parts[p]
                        ));
                    }
                    let add = self.helper(p, Helper::Addition);
                    fold.push(FoldAddition { terms, add });
                }
                let join = match &simd.rest {
                    Rest::Then => Join::Then,
                    Rest::First => Join::First,
                    Rest::IntoFirst(t) => Join::IntoFirst(self.function(id(self, t), d)?),
                    Rest::Apart(t) => {
                        let k = id(self, t);
                        if self.walk.part(k).compensated {
                            return Err(format!(
                                "the rest {t} of the kernel takes compensated steps; emitted \
                                 code joins a kernel's rest to its sum in plain additions"
                            ));
                        }
                        Join::Apart {
                            rest: self.function(k, d)?,
                            add: self.helper(k, Helper::Addition),
                        }
                    }
                };
                Shape::Simd {
                    width: simd.width,
                    stages: &simd.stages,
                    live: simd.live(),
                    fold,
                    root: sketch.root,
                    join,
                }
            }
            Formula::Rotate(by, inner) => Shape::Rotate {
                by: *by,
                inner: self.function(id(self, inner), d)?,
            },
            Formula::Pieces(steps, inner) => {
                let inner = self.function(id(self, inner), d)?;
                self.helper(k, Helper::Addition);
                Shape::Pieces { steps, inner }
            }
            Formula::KBlocks(size, unit, inner) => {
                let inner = self.function(id(self, inner), d)?;
                self.helper(k, Helper::Addition);
                Shape::KBlocks {
                    size: *size,
                    unit: *unit,
                    inner,
                }
            }
        })
    }
}

/// Why emitted code does not write part `f` (of arithmetic `part`) over
/// `d`, if it does not.
fn writable(plan: &Plan, f: &Formula, part: Part, d: Domain) -> Result<(), String> {
    let compensable = matches!(f, Formula::Order(Order::Sequential) | Formula::Body(..));
    if part.compensated && !compensable {
        return Err(format!(
            "the part {f} takes compensated steps; emitted code writes them only in a \
             left-to-right loop and a body's last addition"
        ));
    }
    let roles_agree = part.first == part.second || plan.op == Op::Sum || d == Domain::Sums;
    // A part that reads no summand itself passes its view on to parts that
    // read them.
    let reads_summands = matches!(
        f,
        Formula::Order(_)
            | Formula::Doubling
            | Formula::Fold
            | Formula::Fanout(_)
            | Formula::Body(..)
            | Formula::Simd(_)
    );
    let role_aware = !reads_summands
        || matches!(
            f,
            Formula::Order(
                Order::Sequential
                    | Order::Reverse
                    | Order::Pairwise
                    | Order::BinaryTree
                    | Order::Blocked(_)
            ) | Formula::Fold
                | Formula::Fanout(_)
                | Formula::Body(..)
                | Formula::Simd(_)
        );
    if !roles_agree && !role_aware {
        return Err(format!(
            "the part {f} reads products rounded two ways ({} first, {} after); emitted code \
             does so only in loops, blocks, halvings, bodies and vectorised kernels",
            part.first, part.second
        ));
    }
    match f {
        Formula::Body(every, lanes, Tail::First) if !matches!(**lanes, Formula::Interleave(count, ..) if every % count == 0) => {
            Err(format!(
                "the part {f} takes its rest into a first lane; emitted code writes that only \
                 of a body of whole rows of lanes"
            ))
        }
        Formula::Peel(_, peeled) if peeled_lanes(peeled).is_none() => Err(format!(
            "the part {f} starts lanes with summands of its own; emitted code writes a peel of \
             a body of whole rows of lanes, each summed in one order, whose rest is summed apart"
        )),
        Formula::Order(Order::Fused(_)) => Err(FUSED.into()),
        Formula::Simd(simd) if simd.live() * simd.width > MAX_FOLD => Err(format!(
            "the part {f} folds {} lane slots; emitted code writes a kernel's fold out, for at \
             most {MAX_FOLD}",
            simd.live() * simd.width
        )),
        _ => Ok(()),
    }
}

const FUSED: &str = "fused nodes are not emitted: emitted code makes IEEE additions";

/// Of a peel's formula that emitted code writes, its lanes and the tail
/// that sums the body's rest apart: a body of lanes, a whole number of
/// rows of them (so the seeded lanes, one summand longer, and the others
/// lie in rows of a copy), each summed by one order (which sums a lane
/// by its own length alone, as a seeded lane is), its rest summed apart.
fn peeled_lanes(peeled: &Formula) -> Option<(&Formula, &Formula)> {
    match peeled {
        Formula::Body(multiple, lanes, Tail::Apart(tail)) => match &**lanes {
            Formula::Interleave(count, inner, _)
                if multiple % count == 0 && matches!(**inner, Formula::Order(_)) =>
            {
                Some((&**lanes, &**tail))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The most lane slots a kernel's fold, written out addition by addition,
/// sums.
const MAX_FOLD: usize = 4096;

/// A part's formula, cut short for a comment.
fn short(f: &Formula) -> String {
    let text = f.to_string();
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// A part's arithmetic in words.
fn describe(p: &Part, op: Op) -> String {
    let mut s = format!("{} additions", p.format);
    if p.compensated {
        s += ", Kahan steps";
        if p.drops_error {
            s += " (the last drops its error)";
        }
    }
    if op == Op::Dot {
        s += &format!("; products {} first, {} after", p.first, p.second);
    }
    if !p.seen {
        s += " (not seen in the model: its default)";
    }
    s
}
