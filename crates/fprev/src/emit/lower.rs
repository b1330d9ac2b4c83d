//! The shapes a part's function takes (the walk picks one for each) and
//! each as code (`code.rs`): what the function does, statement by
//! statement, the same in every language, with the recursions and helpers
//! it calls.
//!
//! Sums go left to right in lane registers where the walk gives them and
//! the language keeps lanes in registers (`Lanes::Registers`), as arrays
//! a step at a time where it keeps them in arrays; a lane count past
//! [`STACK_LANES`] keeps its sums in an allocated array.

use super::code::{
    Arg, Carry, Domain, Expr, Func, Lane, Place, Stmt, Ty, View, grow, let_, mut_, range, ret, set,
    size, var, when,
};
use crate::format::Format;
use crate::formula::simd::{RegisterSum, Stage};

/// How a language runs the lanes of a left-to-right loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lanes {
    /// Each lane in a register of its format, lane by lane.
    Registers,
    /// All lanes a step at a time, as arrays.
    Arrays,
}

/// The most lanes of an interleave a function keeps on its stack, and so
/// the most a language of fixed-size arrays runs in registers.
pub(super) const STACK_LANES: usize = 256;

/// A helper written once per part, whatever calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Helper {
    /// The part's addition, rounding once to its format; of a compensated
    /// part, its Kahan step `k` and the end of its chain `e` too.
    Addition,
    /// Pairwise halving of partial sums with the part's addition.
    Pairwise,
    /// Recursive doubling of partial sums with the part's addition.
    Doubling,
}

impl Helper {
    /// Its name before the part's number (`a0`, `pw1`, `dbl2`).
    pub(super) fn prefix(self) -> &'static str {
        match self {
            Helper::Addition => "a",
            Helper::Pairwise => "pw",
            Helper::Doubling => "dbl",
        }
    }
}

/// How a split's block sums are added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Combine {
    /// By recursive doubling over the split's ranks (the helper named).
    Doubling(String),
    /// By the outer part's function over partial sums (named).
    Outer(String),
}

/// What the function of a part computes, with the names of the functions
/// and helpers it calls, all written before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Shape<'f> {
    /// Left to right: in `lane`'s registers where it has them, else by the
    /// part's addition (a compensated part has no lane).
    Sequential {
        lane: Option<Lane>,
    },
    /// Right to left.
    Reverse,
    /// Recursive halving at `n / 2`, or at the largest power of two below
    /// `n` (`binary_tree`).
    Halving {
        binary_tree: bool,
    },
    /// Lanes summed left to right, their sums by the `pairwise` helper.
    Strided {
        lanes: usize,
        pairwise: String,
    },
    /// Blocks summed left to right, then the block sums.
    Blocked(usize),
    /// `lanes` lanes each by `inner` (part `inner_part`), their sums by
    /// `outer`; `lane` says how the lanes add where `inner` is a
    /// left-to-right loop.
    Interleave {
        lanes: usize,
        inner: String,
        inner_part: usize,
        outer: String,
        lane: Option<Lane>,
    },
    Blocks {
        size: usize,
        inner: String,
        outer: String,
    },
    /// The largest multiple of the planned count by `body`, the rest added
    /// one by one, or summed by `tail` and added.
    Body {
        multiple: usize,
        body: String,
        tail: Option<String>,
    },
    Halves {
        leaf: usize,
        multiple: usize,
        inner: String,
    },
    /// The first `n mod multiple` summands by `rest`, the others by
    /// `body`, the two sums added in that order.
    Lead {
        multiple: usize,
        body: String,
        rest: String,
    },
    /// Halved at `n / 2`, `depth` levels deep, each piece by `inner`.
    Bisect {
        depth: usize,
        inner: String,
    },
    Below {
        at: usize,
        small: String,
        large: String,
    },
    /// Windows each by `inner`, the window sums by `again`: this part's
    /// function over partial sums.
    Windows {
        width: usize,
        inner: String,
        again: String,
    },
    Split {
        blocks: usize,
        inner: String,
        combine: Combine,
    },
    Doubling {
        doubling: String,
    },
    Fold,
    Fanout(usize),
    Rotate {
        by: usize,
        inner: String,
    },
    /// Where at least `seeds` summands are left over past a multiple of
    /// `every` (and at least `every + seeds` in all), the first `seeds`
    /// start the first lanes of `count` that `lanes` sums over the largest
    /// multiple of `every` after them, through a copy that places each at
    /// the head of its lane; the rest is summed by `tail` and added.
    /// Otherwise `plain` sums them all.
    Peel {
        seeds: usize,
        count: usize,
        every: usize,
        lanes: String,
        tail: String,
        plain: String,
    },
    /// `body(every, interleave(count, inner, outer), first)`: the largest
    /// multiple of `every` in `count` lanes, each summed by `inner`, lane 0
    /// going on through the rest (a copy gathering its own summands and
    /// the rest), the lane sums by `outer`.
    FirstLane {
        every: usize,
        count: usize,
        inner: String,
        outer: String,
    },
    Pieces {
        steps: &'f [usize],
        inner: String,
    },
    KBlocks {
        size: usize,
        unit: Option<usize>,
        inner: String,
    },
    /// A vectorised kernel's stages and merges over lane slots, its fold
    /// (the additions over the `live × width` slots, fixed for every
    /// count, and the term returned), and its rest.
    Simd {
        width: usize,
        stages: &'f [Stage],
        live: usize,
        fold: Vec<FoldAddition>,
        root: usize,
        join: Join,
    },
}

/// How a kernel's rest joins ([`crate::formula::simd::Rest`]), with the
/// function that sums it apart, where one does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Join {
    Then,
    First,
    IntoFirst(String),
    /// The rest's function and its part's addition, which joins them.
    Apart {
        rest: String,
        add: String,
    },
}

/// One addition of a kernel's fold: its two terms (a lane slot's place
/// below the slots live, else addition `t - slots`'s) and the addition of
/// the part that makes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct FoldAddition {
    pub terms: [usize; 2],
    pub add: String,
}

/// A function to write: part `k`'s over `d`, named `name`, its part's
/// addition named `add`; whether the part takes Kahan steps, and whether
/// it reads a first and a second operand alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Function<'f> {
    pub k: usize,
    pub d: Domain,
    pub name: String,
    pub add: String,
    pub shape: Shape<'f>,
    pub compensated: bool,
    pub alike: bool,
    /// The part adds a product it reads second by a fused multiply-add of
    /// the exact product (of f64 inputs).
    pub fma: bool,
}

/// The code of one function and the recursions it calls, written first.
pub(super) struct Lowered {
    pub recursions: Vec<Func>,
    pub function: Func,
}

/// Lowers the functions of one part over one domain; `name` gives a
/// helper's name in the module.
struct Lower<'a> {
    k: usize,
    d: Domain,
    add: String,
    name: &'a dyn Fn(&str) -> String,
    /// The part reads a first and a second operand alike.
    alike: bool,
    /// The part takes Kahan steps.
    compensated: bool,
    /// The part adds a product it reads second by a fused multiply-add.
    fma: bool,
    recursions: Vec<Func>,
}

/// The array `lanes` of `k` lane sums, on the stack where `count` lanes
/// fit there ([`STACK_LANES`]).
fn lanes_array(count: usize) -> Stmt {
    Stmt::Array {
        name: "lanes",
        ty: Ty::Real,
        len: var("k"),
        fixed: (count <= STACK_LANES).then_some(count),
    }
}

/// A size declared, not to change.
fn let_size(name: &'static str, value: Expr) -> Stmt {
    let_(name, Ty::Size, value)
}

/// A value declared, not to change.
fn let_real(name: &'static str, value: Expr) -> Stmt {
    let_(name, Ty::Real, value)
}

/// A size declared to change.
fn mut_size(name: &'static str, value: Expr) -> Stmt {
    mut_(name, Ty::Size, value)
}

/// A value declared to change.
fn mut_real(name: &'static str, value: Expr) -> Stmt {
    mut_(name, Ty::Real, value)
}

fn flag(v: bool) -> Expr {
    Expr::Flag(v)
}

/// `value` returned, computed before the arrays `arrays` end.
fn release(value: Expr, arrays: &'static [&'static str]) -> Stmt {
    Stmt::Release { value, arrays }
}

fn fin(value: Expr) -> Expr {
    Expr::Fin(Box::new(value))
}

/// `for var in (from..to).step_by(step)`.
fn stepping(var: &'static str, from: Expr, to: Expr, step: Expr, body: Vec<Stmt>) -> Stmt {
    Stmt::For {
        var,
        from,
        to,
        step,
        reverse: false,
        body,
    }
}

/// The view's stride applied to index `i`.
fn strided(i: Expr) -> Expr {
    i * var("s")
}

/// The lowered function of `f`, part `f.k`'s over `f.d`.
pub(super) fn function(f: &Function, lanes: Lanes, name: &dyn Fn(&str) -> String) -> Lowered {
    let mut lower = Lower {
        k: f.k,
        d: f.d,
        add: f.add.clone(),
        name,
        alike: f.alike,
        compensated: f.compensated,
        fma: f.fma,
        recursions: vec![],
    };
    let body = lower.body(&f.shape, lanes);
    Lowered {
        recursions: lower.recursions,
        function: Func {
            name: f.name.clone(),
            k: f.k,
            d: f.d,
            extra: vec![("planned", Ty::Size)],
            carries: true,
            body,
        },
    }
}

/// Part `k`'s pairwise or doubling helper over partial sums, named `name`.
pub(super) fn helper(k: usize, helper: Helper, name: &str, add: &str) -> Func {
    let lower = Lower {
        k,
        d: Domain::Sums,
        add: add.to_string(),
        name: &|s| s.to_string(),
        alike: true,
        compensated: false,
        fma: false,
        recursions: vec![],
    };
    let (extra, body) = match helper {
        Helper::Pairwise => (vec![], lower.pairwise(name)),
        Helper::Doubling => (vec![("ranks", Ty::Size)], lower.doubling()),
        Helper::Addition => unreachable!("a language's own"),
    };
    Func {
        name: name.to_string(),
        k,
        d: Domain::Sums,
        extra,
        carries: false,
        body,
    }
}

impl Lower<'_> {
    /// Element `i` as a first or second operand.
    fn val(&self, i: Expr, second: bool) -> Expr {
        Expr::Val {
            second,
            at: Box::new(strided(i)),
        }
    }

    fn v(&self, i: Expr) -> Expr {
        self.val(i, false)
    }

    fn w(&self, i: Expr) -> Expr {
        self.val(i, true)
    }

    /// The part's addition of two values: a fused multiply-add where the
    /// second is a product the part reads exact.
    fn a(&self, p: Expr, q: Expr) -> Expr {
        match q {
            Expr::Val { second: true, at } if self.fma => Expr::Fma {
                at,
                onto: Box::new(p),
            },
            q => Expr::Call(self.add.clone(), vec![Arg::Value(p), Arg::Value(q)]),
        }
    }

    /// A call of a function of a part over `view`: `n` elements, `planned`,
    /// the chain carried to `carry`.
    fn call(&self, f: &str, view: View, n: Expr, planned: Expr, carry: Carry) -> Expr {
        Expr::Call(
            f.to_string(),
            vec![
                Arg::View(view),
                Arg::Value(n),
                Arg::Value(planned),
                Arg::Carry(carry),
            ],
        )
    }

    /// A call of a recursion or helper over `view` with `args` after its
    /// view.
    fn recur(&self, f: &str, view: View, args: Vec<Expr>) -> Expr {
        let mut all = vec![Arg::View(view)];
        all.extend(args.into_iter().map(Arg::Value));
        Expr::Call(f.to_string(), all)
    }

    /// A recursion of this part, named `prefix`, the part and the domain's
    /// letter, with parameters `extra` after `n`.
    fn recursion(&mut self, prefix: &str, extra: Vec<(&'static str, Ty)>, body: Vec<Stmt>) {
        let name = self.rec_name(prefix);
        self.recursions.push(Func {
            name,
            k: self.k,
            d: self.d,
            extra,
            carries: false,
            body,
        });
    }

    fn rec_name(&self, prefix: &str) -> String {
        (self.name)(&format!("{prefix}{}{}", self.k, self.d.letter()))
    }

    /// A lone summand `at` read as the second operand where `second`: the
    /// flag named `_second` where both read alike, which then goes unused.
    fn lone(&self, at: Expr, second: Expr) -> (&'static str, Expr) {
        let (v, w) = (self.v(at.clone()), self.w(at));
        match self.alike {
            true => ("_second", v),
            false => ("second", second.then(w, v)),
        }
    }

    fn body(&mut self, shape: &Shape, lanes: Lanes) -> Vec<Stmt> {
        let (n, planned) = (var("n"), var("planned"));
        let a = |l: &Self, p, q| l.a(p, q);
        match shape {
            Shape::Sequential { .. } if self.compensated => vec![
                mut_real("t", self.v(size(0))),
                mut_("e", Ty::Error, Expr::Zero),
                range(
                    "i",
                    size(1),
                    n,
                    vec![Stmt::Kahan {
                        part: self.k,
                        t: "t",
                        e: "e",
                        value: self.w(var("i")),
                    }],
                ),
                ret(self.end("t")),
            ],
            Shape::Sequential {
                lane: Some(Lane::Registers { format, fma }),
            } if lanes == Lanes::Registers => vec![
                mut_(
                    "acc",
                    Ty::Reg(*format),
                    Expr::Reg {
                        format: *format,
                        at: Box::new(size(0)),
                    },
                ),
                range(
                    "i",
                    size(1),
                    n,
                    vec![Stmt::Step {
                        acc: Place::Var("acc"),
                        format: *format,
                        fma: *fma,
                        at: strided(var("i")),
                    }],
                ),
                ret(fin(Expr::Widen(*format, Box::new(var("acc"))))),
            ],
            Shape::Sequential { .. } => vec![
                mut_real("acc", self.v(size(0))),
                range(
                    "i",
                    size(1),
                    n,
                    vec![set("acc", a(self, var("acc"), self.w(var("i"))))],
                ),
                ret(fin(var("acc"))),
            ],
            Shape::Reverse => vec![
                when(n.clone().eq(size(1)), vec![ret(fin(self.v(size(0))))]),
                // The last two first, so that a fused multiply-add takes
                // the last product exact.
                mut_real(
                    "acc",
                    a(
                        self,
                        self.v(n.clone() - size(2)),
                        self.w(n.clone() - size(1)),
                    ),
                ),
                Stmt::For {
                    var: "i",
                    from: size(0),
                    to: n - size(2),
                    step: size(1),
                    reverse: true,
                    body: vec![set("acc", a(self, self.v(var("i")), var("acc")))],
                },
                ret(fin(var("acc"))),
            ],
            Shape::Halving { binary_tree } => {
                let mut before = vec![when(
                    n.clone().eq(size(2)),
                    vec![ret(a(self, self.v(size(0)), self.w(size(1))))],
                )];
                before.extend(match binary_tree {
                    false => vec![let_size("h", n.clone() / size(2))],
                    true => vec![
                        mut_size("h", size(1)),
                        Stmt::While(
                            (size(2) * var("h")).lt(n.clone()),
                            vec![set("h", var("h") * size(2))],
                        ),
                    ],
                });
                self.two_halves(
                    before,
                    (View::same(), var("h")),
                    (View::from(var("h")), n - var("h")),
                )
            }
            Shape::Strided { lanes, pairwise } => {
                let kk = size(*lanes);
                vec![
                    let_size("m", n.clone().min(kk.clone())),
                    array("sums", var("m")),
                    range(
                        "r",
                        size(0),
                        var("m"),
                        vec![
                            mut_real("acc", self.v(var("r"))),
                            stepping(
                                "i",
                                var("r") + kk.clone(),
                                n,
                                kk,
                                vec![set("acc", a(self, var("acc"), self.w(var("i"))))],
                            ),
                            Stmt::Set(Place::Item("sums", var("r")), var("acc")),
                        ],
                    ),
                    release(
                        fin(self.recur(pairwise, View::Array("sums"), vec![var("m")])),
                        &["sums"],
                    ),
                ]
            }
            Shape::Blocked(block) => {
                let bs = size(*block);
                vec![
                    mut_real("total", Expr::Zero),
                    stepping(
                        "b",
                        size(0),
                        n.clone(),
                        bs.clone(),
                        vec![
                            let_size("end", var("b") + (n - var("b")).min(bs)),
                            // A last block of one summand is read as the
                            // total's second operand, as the order reads it.
                            Stmt::If(
                                var("b").gt(size(0)).and(var("end").eq(var("b") + size(1))),
                                vec![set("total", a(self, var("total"), self.w(var("b"))))],
                                vec![
                                    mut_real("acc", self.v(var("b"))),
                                    range(
                                        "i",
                                        var("b") + size(1),
                                        var("end"),
                                        vec![set("acc", a(self, var("acc"), self.w(var("i"))))],
                                    ),
                                    set(
                                        "total",
                                        var("b")
                                            .eq(size(0))
                                            .then(var("acc"), a(self, var("total"), var("acc"))),
                                    ),
                                ],
                            ),
                        ],
                    ),
                    ret(fin(var("total"))),
                ]
            }
            Shape::Interleave {
                lanes: count,
                inner,
                inner_part,
                outer,
                lane,
            } => self.interleave(*count, inner, *inner_part, outer, *lane, lanes),
            Shape::Blocks {
                size: block,
                inner,
                outer,
            } => {
                let bs = size(*block);
                self.blocks(
                    vec![let_size("m", (n.clone() - size(1)) / bs.clone() + size(1))],
                    vec![
                        let_size("at", var("j") * bs.clone()),
                        let_size("take", (n - var("at")).min(bs)),
                        self.sum_of(inner, View::from(var("at")), var("take")),
                    ],
                    self.outer(outer),
                )
            }
            Shape::Body {
                multiple,
                body,
                tail,
            } => self.body_of(*multiple, body, tail.as_deref()),
            Shape::Peel {
                seeds,
                count,
                every,
                lanes,
                tail,
                plain,
            } => {
                let (p, k, m) = (size(*seeds), size(*count), size(*every));
                let past = n.clone() - p.clone();
                let cut = past.clone() - past % m.clone();
                // Lane r < seeds starts with summand r, then takes its
                // own from `seeds` on; the others take theirs as they are.
                let i = var("i");
                let own = (i.clone() % k.clone())
                    .lt(p.clone())
                    .then(p.clone() + i.clone() - k, p.clone() + i.clone());
                let mut b = vec![
                    when(
                        n.clone()
                            .lt(m.clone() + p.clone())
                            .or((n.clone() % m).lt(p.clone())),
                        vec![ret(self.whole(plain))],
                    ),
                    let_size("len", cut + p.clone()),
                    Stmt::Gathered {
                        index: i.clone().lt(p).then(i, own),
                        len: var("len"),
                    },
                    mut_real(
                        "total",
                        self.call(lanes, View::Gathered, var("len"), var("len"), Carry::Ends),
                    ),
                ];
                b.push(when(
                    var("len").lt(n.clone()),
                    vec![set(
                        "total",
                        a(
                            self,
                            var("total"),
                            self.call(
                                tail,
                                View::from(var("len")),
                                n.clone() - var("len"),
                                n - var("len"),
                                Carry::Ends,
                            ),
                        ),
                    )],
                ));
                b.push(release(fin(var("total")), &["gathered"]));
                b
            }
            Shape::FirstLane {
                every,
                count,
                inner,
                outer,
            } => {
                let rows = var("rows");
                // Lane 0: its own summands, every `count`-th, then the rest.
                self.recursion(
                    "l",
                    vec![("rows", Ty::Size), ("k", Ty::Size)],
                    vec![
                        Stmt::Gathered {
                            index: var("i").lt(rows.clone()).then(
                                var("i") * var("k"),
                                var("i") - rows.clone() + rows.clone() * var("k"),
                            ),
                            len: n.clone() - rows.clone() * var("k") + rows.clone(),
                        },
                        release(
                            self.call(
                                inner,
                                View::Gathered,
                                n.clone() - rows.clone() * var("k") + rows.clone(),
                                n.clone() - rows.clone() * var("k") + rows.clone(),
                                Carry::Ends,
                            ),
                            &["gathered"],
                        ),
                    ],
                );
                let lane0 = self.rec_name("l");
                let cut = n.clone() - n.clone() % size(*every);
                vec![
                    let_size(
                        "k",
                        cut.clone()
                            .eq(size(0))
                            .then(size(1), cut.clone().min(size(*count))),
                    ),
                    let_size("rows", cut / var("k")),
                    lanes_array(*count),
                    Stmt::Set(
                        Place::Item("lanes", size(0)),
                        self.recur(&lane0, View::same(), vec![n, var("rows"), var("k")]),
                    ),
                    self.each_lane(inner, 1, var("rows"), var("rows")),
                    self.lanes_summed(outer),
                ]
            }
            Shape::Lead {
                multiple,
                body,
                rest,
            } => {
                let lead = var("lead");
                vec![
                    let_size("lead", n.clone() % size(*multiple)),
                    when(lead.clone().eq(size(0)), vec![ret(self.whole(body))]),
                    when(lead.clone().ge(n.clone()), vec![ret(self.whole(rest))]),
                    let_real(
                        "r",
                        self.call(rest, View::same(), lead.clone(), lead.clone(), Carry::Ends),
                    ),
                    let_real(
                        "b",
                        self.call(
                            body,
                            View::from(lead.clone()),
                            n.clone() - lead.clone(),
                            n.clone() - lead,
                            Carry::Ends,
                        ),
                    ),
                    ret(fin(a(self, var("r"), var("b")))),
                ]
            }
            Shape::Halves {
                leaf,
                multiple,
                inner,
            } => {
                let rec = self.rec_name("h");
                let leaf = size(*leaf);
                let half = var("half");
                let body = vec![
                    self.whole_when(n.clone().le(leaf.clone()), inner, Carry::Ends),
                    let_size("half", n.clone() / size(2)),
                    mut_size("cut", half.clone() - half.clone() % size(*multiple)),
                    when(var("cut").eq(size(0)), vec![set("cut", half)]),
                    let_real("l", self.recur(&rec, View::same(), vec![var("cut")])),
                    let_real(
                        "r",
                        self.recur(&rec, View::from(var("cut")), vec![n.clone() - var("cut")]),
                    ),
                    ret(a(self, var("l"), var("r"))),
                ];
                self.recursion("h", vec![], body);
                vec![
                    self.whole_when(n.clone().le(leaf), inner, Carry::Caller),
                    ret(fin(self.recur(&rec, View::same(), vec![n]))),
                ]
            }
            Shape::Bisect { depth, inner } => {
                let rec = self.rec_name("b");
                let (half, depth_left) = (var("half"), var("depth"));
                let body = vec![
                    self.whole_when(
                        depth_left.clone().eq(size(0)).or(n.clone().lt(size(2))),
                        inner,
                        Carry::Ends,
                    ),
                    let_size("half", n.clone() / size(2)),
                    let_real(
                        "l",
                        self.recur(
                            &rec,
                            View::same(),
                            vec![half.clone(), depth_left.clone() - size(1)],
                        ),
                    ),
                    let_real(
                        "r",
                        self.recur(
                            &rec,
                            View::from(half.clone()),
                            vec![n.clone() - half, depth_left - size(1)],
                        ),
                    ),
                    ret(a(self, var("l"), var("r"))),
                ];
                self.recursion("b", vec![("depth", Ty::Size)], body);
                vec![
                    self.whole_when(n.clone().lt(size(2)), inner, Carry::Caller),
                    ret(fin(self.recur(&rec, View::same(), vec![n, size(*depth)]))),
                ]
            }
            Shape::Below { at, small, large } => vec![
                when(n.clone().lt(size(*at)), vec![ret(self.whole(small))]),
                ret(self.whole(large)),
            ],
            Shape::Windows {
                width,
                inner,
                again,
            } => {
                let ww = size(*width);
                self.blocks(
                    vec![
                        when(n.clone().le(ww.clone()), vec![ret(self.whole(inner))]),
                        let_size("m", (n.clone() - size(1)) / ww.clone() + size(1)),
                        let_size("low", (var("m") * ww.clone() - n.clone()) / size(2)),
                    ],
                    vec![
                        let_size(
                            "at",
                            (var("j") * ww.clone())
                                .ge(var("low"))
                                .then(var("j") * ww.clone() - var("low"), size(0)),
                        ),
                        let_size("end", ((var("j") + size(1)) * ww - var("low")).min(n)),
                        self.sum_of(inner, View::from(var("at")), var("end") - var("at")),
                    ],
                    self.outer(again),
                )
            }
            Shape::Split {
                blocks,
                inner,
                combine,
            } => {
                let pp = size(*blocks);
                let out = match combine {
                    Combine::Doubling(dbl) => {
                        fin(self.recur(dbl, View::Array("sums"), vec![var("m"), pp.clone()]))
                    }
                    Combine::Outer(outer) => self.outer(outer),
                };
                self.blocks(
                    vec![
                        let_size("m", n.clone().min(pp.clone())),
                        let_size("len", n.clone() / pp.clone()),
                        let_size("longer", n % pp),
                        mut_size("at", size(0)),
                    ],
                    vec![
                        let_size(
                            "take",
                            var("len") + var("j").lt(var("longer")).then(size(1), size(0)),
                        ),
                        self.sum_of(inner, View::from(var("at")), var("take")),
                        grow("at", var("take")),
                    ],
                    out,
                )
            }
            Shape::Doubling { doubling } => vec![
                array("vals", n.clone()),
                range(
                    "i",
                    size(0),
                    n.clone(),
                    vec![Stmt::Set(Place::Item("vals", var("i")), self.v(var("i")))],
                ),
                release(
                    fin(self.recur(doubling, View::Array("vals"), vec![n.clone(), n])),
                    &["vals"],
                ),
            ],
            Shape::Fold => {
                let step = |from| View::At {
                    from: size(from),
                    step: size(2),
                };
                self.two_halves(
                    vec![],
                    (step(0), (n.clone() + size(1)) / size(2)),
                    (step(1), n / size(2)),
                )
            }
            Shape::Fanout(fan) => {
                let rec = self.rec_name("r");
                let ff = size(*fan);
                // A value with no children is added to its parent's.
                let (second, first) = self.lone(
                    var("r"),
                    var("second").and(var("stride").ge(n.clone() - var("r"))),
                );
                let body = vec![
                    let_size(
                        "below",
                        Expr::MulAdd(
                            Box::new(var("stride")),
                            Box::new(ff.clone()),
                            Box::new(size(0)),
                        ),
                    ),
                    mut_real("total", first),
                    Stmt::For {
                        var: "i",
                        from: size(1),
                        to: ff + size(1),
                        step: size(1),
                        reverse: false,
                        body: vec![
                            let_size(
                                "child",
                                Expr::MulAdd(
                                    Box::new(var("stride")),
                                    Box::new(var("i")),
                                    Box::new(var("r")),
                                ),
                            ),
                            when(var("child").ge(n.clone()), vec![Stmt::Break]),
                            set(
                                "total",
                                a(
                                    self,
                                    var("total"),
                                    self.recur(
                                        &rec,
                                        View::same(),
                                        vec![n.clone(), var("child"), var("below"), flag(true)],
                                    ),
                                ),
                            ),
                        ],
                    },
                    ret(var("total")),
                ];
                self.recursion(
                    "r",
                    vec![("r", Ty::Size), ("stride", Ty::Size), (second, Ty::Flag)],
                    body,
                );
                vec![ret(fin(self.recur(
                    &rec,
                    View::same(),
                    vec![n, size(0), size(1), flag(false)],
                )))]
            }
            Shape::Rotate { by, inner } => vec![
                let_size("start", size(*by).lt(n.clone()).then(size(*by), size(0))),
                Stmt::Gathered {
                    index: (var("start") + var("i")) % n.clone(),
                    len: n.clone(),
                },
                release(
                    self.call(inner, View::Gathered, n.clone(), n, Carry::Caller),
                    &["gathered"],
                ),
            ],
            Shape::Pieces { steps, inner } => {
                let mut b = vec![
                    mut_size("at", size(0)),
                    mut_real("total", Expr::Zero),
                    mut_("some", Ty::Flag, flag(false)),
                ];
                for step in *steps {
                    let st = size(*step);
                    let mut piece = self.piece(inner, st.clone());
                    piece.push(grow("at", st.clone()));
                    b.push(Stmt::While(
                        var("at")
                            .lt(planned.clone())
                            .and((planned.clone() - var("at")).ge(st)),
                        piece,
                    ));
                }
                let mut last = self.piece(inner, n.clone() - var("at"));
                last.pop();
                b.push(when(var("at").lt(n), last));
                b.push(ret(fin(var("total"))));
                b
            }
            Shape::Simd {
                width,
                stages,
                live,
                fold,
                root,
                join,
            } => self.simd(*width, stages, *live, fold, *root, join),
            Shape::KBlocks {
                size: block,
                unit,
                inner,
            } => {
                let qq = size(*block);
                let left = var("left");
                let half = match unit {
                    Some(u) => (left.clone() / size(2) + size(u - 1)) / size(*u) * size(*u),
                    None => (left.clone() + size(1)) / size(2),
                };
                let mut piece = vec![
                    let_size("left", n.clone() - var("at")),
                    let_size(
                        "take",
                        left.clone()
                            .ge(size(2) * qq.clone())
                            .then(qq.clone(), left.clone().gt(qq).then(half, left)),
                    ),
                ];
                piece.extend(self.piece(inner, var("take")));
                piece.push(grow("at", var("take")));
                vec![
                    mut_size("at", size(0)),
                    mut_real("total", Expr::Zero),
                    mut_("some", Ty::Flag, flag(false)),
                    Stmt::While(var("at").lt(n), piece),
                    ret(fin(var("total"))),
                ]
            }
        }
    }

    /// A vectorised kernel ([`crate::formula::simd::Simd::run`]): its
    /// lane slots in `slot`, after them room for the additions of a merge
    /// or of the fold, each with a flag in `held`. A slot never filled is
    /// empty: a first summand taken into it is its value, and an addition
    /// with an empty side is the other side, so empties drop out exactly.
    fn simd(
        &mut self,
        width: usize,
        stages: &[Stage],
        live: usize,
        fold: &[FoldAddition],
        root: usize,
        join: &Join,
    ) -> Vec<Stmt> {
        let n = var("n");
        let chunks: Vec<usize> = stages.iter().map(|s| s.registers * width).collect();
        let slots = chunks.iter().copied().max().unwrap_or(0);
        let room = stages
            .iter()
            .filter_map(|s| s.merge.as_ref())
            .map(|m| m.iter().map(made).sum::<usize>() * width)
            .chain([fold.len()])
            .max()
            .unwrap_or(0);
        let len = slots + room;
        let last = chunks.last().copied().unwrap_or(0);
        // Fewer summands than the last stage takes: no stage runs, and the
        // rest is every summand.
        let none = match join {
            Join::IntoFirst(rest) | Join::Apart { rest, .. } => vec![ret(self.whole(rest))],
            // Left to right, by the kernel's own addition.
            Join::Then | Join::First => self.body(&Shape::Sequential { lane: None }, Lanes::Arrays),
        };
        let fixed = (len <= STACK_LANES).then_some(len);
        let mut b = vec![when(n.clone().lt(size(last)), none)];
        for (name, ty) in [("slot", Ty::Real), ("held", Ty::Flag)] {
            b.push(Stmt::Array {
                name,
                ty,
                len: size(len),
                fixed,
            });
        }
        b.push(range(
            "i",
            size(0),
            size(slots),
            vec![
                Stmt::Set(item("slot", var("i")), Expr::Zero),
                Stmt::Set(item("held", var("i")), flag(false)),
            ],
        ));
        b.push(mut_size("at", size(0)));
        for (stage, chunk) in stages.iter().zip(&chunks) {
            b.push(Stmt::While(
                (n.clone() - var("at")).ge(size(*chunk)),
                vec![
                    range(
                        "i",
                        size(0),
                        size(*chunk),
                        self.take(var("i"), var("at") + var("i")),
                    ),
                    grow("at", size(*chunk)),
                ],
            ));
            if let Some(merge) = &stage.merge {
                b.extend(self.merge(merge, width, slots));
            }
        }
        match join {
            Join::First => b.push(range(
                "i",
                var("at"),
                n.clone(),
                self.take(size(0), var("i")),
            )),
            Join::IntoFirst(rest) => b.push(when(
                var("at").lt(n.clone()),
                vec![
                    let_real("r", self.rest(rest)),
                    // The flag is read only where the fold adds.
                    self.take_value(size(0), (var("r"), var("r")), !fold.is_empty()),
                ],
            )),
            Join::Then | Join::Apart { .. } => {}
        }
        // The fold's terms past the slots live are its additions, written
        // from the room after all slots.
        let place = |t: usize| match t < live * width {
            true => t,
            false => slots + t - live * width,
        };
        // A flag no later addition reads is not written: the root's is
        // always held, as some stage ran.
        let read = |t: usize| fold.iter().any(|a| a.terms.contains(&t));
        for (j, addition) in fold.iter().enumerate() {
            let [p, q] = addition.terms.map(|t| size(place(t)));
            let mut sum = held_sum(size(slots + j), p, q, &addition.add);
            if !read(live * width + j) {
                sum.pop();
            }
            b.extend(sum);
        }
        let total = slot(size(place(root)));
        b.push(match join {
            Join::Then | Join::Apart { .. } => mut_real("total", total),
            Join::First | Join::IntoFirst(_) => let_real("total", total),
        });
        match join {
            Join::Then => b.push(range(
                "i",
                var("at"),
                n.clone(),
                vec![set("total", self.a(var("total"), self.w(var("i"))))],
            )),
            Join::Apart { rest, add } => b.push(when(
                var("at").lt(n),
                vec![set(
                    "total",
                    Expr::Call(
                        add.clone(),
                        vec![Arg::Value(var("total")), Arg::Value(self.rest(rest))],
                    ),
                )],
            )),
            Join::First | Join::IntoFirst(_) => {}
        }
        b.push(release(fin(var("total")), &["slot", "held"]));
        b
    }

    /// Summand `at` taken into slot `i`: added to it, or its first value.
    fn take(&self, i: Expr, at: Expr) -> Vec<Stmt> {
        vec![self.take_value(i, (self.v(at.clone()), self.w(at)), true)]
    }

    /// A value taken into slot `i`, as it is read first or added: added
    /// to the slot's, or the slot's first, its flag then set where `flags`.
    fn take_value(&self, i: Expr, (first, second): (Expr, Expr), flags: bool) -> Stmt {
        let mut alone = vec![Stmt::Set(item("slot", i.clone()), first)];
        if flags {
            alone.push(Stmt::Set(item("held", i.clone()), flag(true)));
        }
        Stmt::If(
            Expr::Item("held", Box::new(i.clone())),
            vec![Stmt::Set(item("slot", i.clone()), self.a(slot(i), second))],
            alone,
        )
    }

    /// The summands from `at` on summed apart by `rest`.
    fn rest(&self, rest: &str) -> Expr {
        let left = var("n") - var("at");
        self.call(rest, View::from(var("at")), left.clone(), left, Carry::Ends)
    }

    /// A merge of `width`-lane registers held in the slots, lane by lane:
    /// each register sum's additions (then, for a sum of one register, a
    /// copy) written into the room after the `slots`, then each sum
    /// copied into its register's slots, so that no sum reads a register
    /// another has overwritten.
    fn merge(&self, merge: &[RegisterSum], width: usize, slots: usize) -> Vec<Stmt> {
        let ww = size(width);
        let lane = |r: usize| size(r * width) + var("l");
        let mut sums = vec![];
        let mut made = 0;
        let mut roots = vec![];
        for sum in merge {
            let root = match sum {
                RegisterSum::Register(r) => {
                    let to = lane(slots / width + made);
                    made += 1;
                    sums.extend(copy(to.clone(), lane(*r)));
                    to
                }
                sum => self.register_sum(sum, width, slots, &mut made, &mut sums),
            };
            roots.push(root);
        }
        let back = roots
            .into_iter()
            .enumerate()
            .flat_map(|(q, root)| copy(lane(q), root))
            .collect();
        vec![
            range("l", size(0), ww.clone(), sums),
            range("l", size(0), ww, back),
        ]
    }

    /// Lane `l` of register sum `sum`'s additions written into the room
    /// after the `slots` from addition `made` on; where its value is.
    fn register_sum(
        &self,
        sum: &RegisterSum,
        width: usize,
        slots: usize,
        made: &mut usize,
        out: &mut Vec<Stmt>,
    ) -> Expr {
        let lane = |r: usize| size(r * width) + var("l");
        match sum {
            RegisterSum::Register(r) => lane(*r),
            RegisterSum::Add(x, y) => {
                let x = self.register_sum(x, width, slots, made, out);
                let y = self.register_sum(y, width, slots, made, out);
                let to = lane(slots / width + *made);
                *made += 1;
                out.extend(held_sum(to.clone(), x, y, &self.add));
                to
            }
        }
    }

    /// A recursion `r` of two halves, `left` and `right` (each a view and
    /// its count), added, after `before`; a lone summand read as the
    /// second operand where it is the right half. Its call.
    fn two_halves(
        &mut self,
        before: Vec<Stmt>,
        left: (View, Expr),
        right: (View, Expr),
    ) -> Vec<Stmt> {
        let rec = self.rec_name("r");
        let (second, lone) = self.lone(size(0), var("second"));
        let mut body = vec![when(var("n").eq(size(1)), vec![ret(lone)])];
        body.extend(before);
        body.extend([
            let_real("l", self.recur(&rec, left.0, vec![left.1, flag(false)])),
            let_real("r", self.recur(&rec, right.0, vec![right.1, flag(true)])),
            ret(self.a(var("l"), var("r"))),
        ]);
        self.recursion("r", vec![(second, Ty::Flag)], body);
        vec![ret(fin(self.recur(
            &rec,
            View::same(),
            vec![var("n"), flag(false)],
        )))]
    }

    /// After `head`, which counts the blocks `m`, each block's sum in
    /// `sums[j]` by `each`; the sums added by `out`, which is returned.
    fn blocks(&self, mut head: Vec<Stmt>, each: Vec<Stmt>, out: Expr) -> Vec<Stmt> {
        head.extend([
            array("sums", var("m")),
            range("j", size(0), var("m"), each),
            release(out, &["sums"]),
        ]);
        head
    }

    /// A call of `f` over the function's view, its count and `c`.
    /// `if cond { return f(all n) }`, carrying as `carry` says.
    fn whole_when(&self, cond: Expr, f: &str, carry: Carry) -> Stmt {
        let n = var("n");
        when(
            cond,
            vec![ret(self.call(f, View::same(), n.clone(), n, carry))],
        )
    }

    fn whole(&self, f: &str) -> Expr {
        self.call(f, View::same(), var("n"), var("n"), Carry::Caller)
    }

    /// `sums[j]`: the sum by `inner` of `take` elements of `view`.
    fn sum_of(&self, inner: &str, view: View, take: Expr) -> Stmt {
        Stmt::Set(
            Place::Item("sums", var("j")),
            self.call(inner, view, take.clone(), take, Carry::Ends),
        )
    }

    /// The sums added by `outer`, a function over partial sums.
    fn outer(&self, outer: &str) -> Expr {
        self.array_summed(outer, "sums", "m")
    }

    /// The array `name` of `len` partial sums added by `outer`.
    fn array_summed(&self, outer: &str, name: &'static str, len: &'static str) -> Expr {
        self.call(outer, View::Array(name), var(len), var(len), Carry::Caller)
    }

    /// A piece of `take` elements from `at` summed by `inner` and added to
    /// `total`, the first piece its start; then `some` set.
    fn piece(&self, inner: &str, take: Expr) -> Vec<Stmt> {
        vec![
            let_real(
                "p",
                self.call(
                    inner,
                    View::from(var("at")),
                    take.clone(),
                    take,
                    Carry::Ends,
                ),
            ),
            set(
                "total",
                var("some").then(self.a(var("total"), var("p")), var("p")),
            ),
            set("some", flag(true)),
        ]
    }

    /// The chain's end: its sum `t` and error `e` written where the
    /// caller continues it, else the sum with the error added.
    fn end(&self, t: &'static str) -> Expr {
        Expr::Call(
            (self.name)(&format!("e{}", self.k)),
            vec![
                Arg::Carry(Carry::Caller),
                Arg::Value(var(t)),
                Arg::Value(var("e")),
            ],
        )
    }

    /// `body(multiple, …)`: the largest multiple of the planned count by
    /// `body`, the rest by `tail` or one by one.
    fn body_of(&self, multiple: usize, body: &str, tail: Option<&str>) -> Vec<Stmt> {
        let (n, planned) = (var("n"), var("planned"));
        let compensated = self.compensated;
        let carry = match compensated {
            true => Carry::Local,
            false => Carry::Ends,
        };
        let mut b = vec![let_size(
            "cut",
            planned.clone() - planned.clone() % size(multiple),
        )];
        let error = mut_("e", Ty::Error, Expr::Zero);
        let whole = when(
            var("cut").ge(n.clone()),
            vec![ret(self.call(
                body,
                View::same(),
                n.clone(),
                var("cut"),
                Carry::Caller,
            ))],
        );
        let add = |total: &'static str, v: Expr| match compensated {
            true => Stmt::Kahan {
                part: self.k,
                t: total,
                e: "e",
                value: v,
            },
            false => set(total, self.a(var(total), v)),
        };
        let ended = match compensated {
            true => self.end("total"),
            false => fin(var("total")),
        };
        match tail {
            Some(tail) => {
                b.push(when(
                    var("cut").eq(size(0)),
                    vec![ret(self.call(
                        tail,
                        View::same(),
                        n.clone(),
                        planned.clone(),
                        Carry::Caller,
                    ))],
                ));
                b.push(whole);
                if compensated {
                    b.push(error);
                }
                b.push(mut_real(
                    "total",
                    self.call(body, View::same(), var("cut"), var("cut"), carry),
                ));
                b.push(let_real(
                    "r",
                    self.call(
                        tail,
                        View::from(var("cut")),
                        n - var("cut"),
                        planned - var("cut"),
                        Carry::Ends,
                    ),
                ));
                b.push(add("total", var("r")));
            }
            None => {
                // Where the body takes every summand, the chain ends as its
                // last step, the body's, ends it.
                b.push(whole);
                if compensated {
                    b.push(error);
                }
                let none = var("cut").eq(size(0));
                b.push(mut_real(
                    "total",
                    none.clone().then(
                        self.v(size(0)),
                        self.call(body, View::same(), var("cut"), var("cut"), carry),
                    ),
                ));
                b.push(range(
                    "i",
                    none.then(size(1), var("cut")),
                    n,
                    vec![add("total", self.w(var("i")))],
                ));
            }
        }
        b.push(ret(ended));
        b
    }

    /// `interleave(count, inner, outer)`: lanes in registers or arrays
    /// where the walk and the language give them, else each lane by the
    /// inner function; their sums by `outer`.
    fn interleave(
        &self,
        count: usize,
        inner: &str,
        part: usize,
        outer: &str,
        lane: Option<Lane>,
        lanes: Lanes,
    ) -> Vec<Stmt> {
        let (n, k) = (var("n"), var("k"));
        let small = count <= STACK_LANES;
        let take = (n.clone() - var("r") + k.clone() - size(1)) / k.clone();
        let each = vec![self.each_lane(inner, 0, take, var("shortest"))];
        let fill = match (lane, lanes) {
            (Some(Lane::Registers { format, fma }), Lanes::Registers) if small => {
                let mut registers = vec![Stmt::Array {
                    name: "acc",
                    ty: Ty::Reg(format),
                    len: size(count),
                    fixed: Some(count),
                }];
                let unit = self.registers(count, format, fma, false);
                let strided = self.registers(count, format, fma, true);
                registers.push(Stmt::If(var("s").eq(size(1)), unit, strided));
                registers.push(range(
                    "r",
                    size(0),
                    size(count),
                    vec![Stmt::Set(
                        Place::Item("lanes", var("r")),
                        Expr::Widen(format, Box::new(Expr::Item("acc", Box::new(var("r"))))),
                    )],
                ));
                vec![Stmt::If(k.clone().eq(size(count)), registers, each)]
            }
            (Some(lane), Lanes::Arrays) => vec![Stmt::If(
                k.clone().eq(size(count)),
                vec![set("lanes", Expr::Lanes { part, lane })],
                each,
            )],
            _ => each,
        };
        let mut b = vec![
            let_size("k", n.clone().min(size(count))),
            let_size("shortest", n / k),
            lanes_array(count),
        ];
        b.extend(fill);
        b.push(self.lanes_summed(outer));
        b
    }

    /// The `k` lane sums added by `outer`, returned as their array ends.
    fn lanes_summed(&self, outer: &str) -> Stmt {
        release(self.array_summed(outer, "lanes", "k"), &["lanes"])
    }

    /// `lanes[r]` for each lane `r` from `first` below `k`: the sum by
    /// `inner` of `take` elements, every `k`-th from element `r`, planned
    /// for `planned`.
    fn each_lane(&self, inner: &str, first: usize, take: Expr, planned: Expr) -> Stmt {
        let view = View::At {
            from: var("r"),
            step: var("k"),
        };
        range(
            "r",
            size(first),
            var("k"),
            vec![Stmt::Set(
                Place::Item("lanes", var("r")),
                self.call(inner, view, take, planned, Carry::Ends),
            )],
        )
    }

    /// Each of `count` lanes summed left to right in a register of
    /// `format`, the view's stride 1 unless `strided`.
    fn registers(&self, count: usize, format: Format, fma: bool, strided: bool) -> Vec<Stmt> {
        let at = |i: Expr| match strided {
            true => i * var("s"),
            false => i,
        };
        let kk = size(count);
        let acc = || Place::Item("acc", var("r"));
        let step = |i: Expr| Stmt::Step {
            acc: acc(),
            format,
            fma,
            at: at(i),
        };
        let full = var("shortest") * kk.clone();
        vec![
            range(
                "r",
                size(0),
                kk.clone(),
                vec![Stmt::Set(
                    acc(),
                    Expr::Reg {
                        format,
                        at: Box::new(at(var("r"))),
                    },
                )],
            ),
            range(
                "i",
                size(1),
                var("shortest"),
                vec![range(
                    "r",
                    size(0),
                    kk.clone(),
                    vec![step(var("i") * kk + var("r"))],
                )],
            ),
            range(
                "r",
                size(0),
                var("n") - full.clone(),
                vec![step(full + var("r"))],
            ),
        ]
    }

    /// Pairwise halving of the view's `n` partial sums.
    fn pairwise(&self, name: &str) -> Vec<Stmt> {
        let n = var("n");
        vec![
            when(n.clone().eq(size(1)), vec![ret(self.v(size(0)))]),
            let_size("h", n.clone() / size(2)),
            ret(self.a(
                self.recur(name, View::same(), vec![var("h")]),
                self.recur(name, View::from(var("h")), vec![n - var("h")]),
            )),
        ]
    }

    /// Recursive doubling over `ranks` ranks of the view's `n` partial
    /// sums: ranks past the largest power of two first folded pairwise
    /// into those below it, then pairs added until one is left.
    fn doubling(&self) -> Vec<Stmt> {
        let (n, ranks, count) = (var("n"), var("ranks"), var("count"));
        let w = |i: Expr| Expr::Item("w", Box::new(i));
        let pair = |limit: Expr, first: Expr, second: Expr, lone: Expr| {
            (var("i") + size(1))
                .lt(limit)
                .then(self.a(first, second), lone)
        };
        let fold = pair(
            var("folded"),
            self.v(var("i")),
            self.v(var("i") + size(1)),
            self.v(var("i")),
        );
        let halve = pair(
            count.clone(),
            w(var("i")),
            w(var("i") + size(1)),
            w(var("i")),
        );
        vec![
            mut_size("pow", size(1)),
            Stmt::While(
                var("pow").le(ranks.clone() / size(2)),
                vec![set("pow", var("pow") * size(2))],
            ),
            let_size("folded", (size(2) * (ranks - var("pow"))).min(n.clone())),
            array("w", n.clone()),
            mut_size("count", size(0)),
            stepping(
                "i",
                size(0),
                var("folded"),
                size(2),
                vec![
                    Stmt::Set(Place::Item("w", count.clone()), fold),
                    grow("count", size(1)),
                ],
            ),
            range(
                "i",
                var("folded"),
                n,
                vec![
                    Stmt::Set(Place::Item("w", count.clone()), self.v(var("i"))),
                    grow("count", size(1)),
                ],
            ),
            Stmt::While(
                count.clone().gt(size(1)),
                vec![
                    mut_size("j", size(0)),
                    stepping(
                        "i",
                        size(0),
                        count,
                        size(2),
                        vec![
                            Stmt::Set(Place::Item("w", var("j")), halve),
                            grow("j", size(1)),
                        ],
                    ),
                    set("count", var("j")),
                ],
            ),
            release(w(size(0)), &["w"]),
        ]
    }
}

/// The values a merge makes of register sum `sum`, lane by lane: its
/// additions, or the copy of its one register.
fn made(sum: &RegisterSum) -> usize {
    fn additions(sum: &RegisterSum) -> usize {
        match sum {
            RegisterSum::Register(_) => 0,
            RegisterSum::Add(x, y) => additions(x) + additions(y) + 1,
        }
    }
    additions(sum).max(1)
}

/// Element `at` of array `name`, written.
fn item(name: &'static str, at: Expr) -> Place {
    Place::Item(name, at)
}

/// Slot `at`'s value.
fn slot(at: Expr) -> Expr {
    Expr::Item("slot", Box::new(at))
}

/// Slot `to` set to slot `from`, held or not.
fn copy(to: Expr, from: Expr) -> Vec<Stmt> {
    vec![
        Stmt::Set(item("slot", to.clone()), slot(from.clone())),
        Stmt::Set(item("held", to), Expr::Item("held", Box::new(from))),
    ]
}

/// Slot `to` set to slots `p` and `q` added by `add`, where both are
/// held; else to the one held, if either is.
fn held_sum(to: Expr, p: Expr, q: Expr, add: &str) -> Vec<Stmt> {
    let held = |i: &Expr| Expr::Item("held", Box::new(i.clone()));
    let sum = Expr::Call(
        add.to_string(),
        vec![Arg::Value(slot(p.clone())), Arg::Value(slot(q.clone()))],
    );
    vec![
        Stmt::Set(
            item("slot", to.clone()),
            held(&p)
                .and(held(&q))
                .then(sum, held(&p).then(slot(p.clone()), slot(q.clone()))),
        ),
        Stmt::Set(item("held", to), held(&p).or(held(&q))),
    ]
}

/// An allocated array of `len` doubles.
fn array(name: &'static str, len: Expr) -> Stmt {
    Stmt::Array {
        name,
        ty: Ty::Real,
        len,
        fixed: None,
    }
}
