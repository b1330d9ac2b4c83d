//! A fused chain `fused:K` in every language: the words of its comment,
//! the numbers of the formats its helpers round to, and its helpers and
//! loop as code (`code.rs`), written once: terms aligned and truncated
//! with integer and exponent maths, added exactly, rounded once.

use super::code::{
    Expr, Math, Place, Routine, Stmt, Ty, grow, let_, mut_, range, ret, set, size, var, when,
};
use super::plan::{Op, Plan};
use crate::arith::Rounding;
use crate::format::Format;

/// A binary format's numbers, as emitted code spells them: its precision
/// `p`, the exponent of its least normal value, its largest finite value
/// (a literal that reads back exactly), and, of a 16-bit one, its
/// fraction bits and exponent bias.
pub(super) struct Numbers {
    pub p: u32,
    pub emin: i32,
    pub max: String,
    pub fraction: u32,
    pub bias: i32,
}

impl Numbers {
    pub(super) fn of(f: Format) -> Numbers {
        let emin = crate::format::leading_exponent(f.min_normal());
        Numbers {
            p: f.precision(),
            emin,
            max: format!("{:e}", f.max_finite()),
            fraction: f.precision() - 1,
            bias: 1 - emin,
        }
    }
}

/// The lines of a fused chain's module comment: what it reproduces, its
/// order in words, how to compile it where it is compiled, who wrote it.
pub(super) fn comment(plan: &Plan, k: usize, what: &str, compile: Option<&str>) -> Vec<String> {
    let mut lines: Vec<String> = what.lines().map(str::to_string).collect();
    lines.push(String::new());
    lines.push(format!(
        "The order: native:{}: {}.",
        plan.formula,
        words(plan, k)
    ));
    if let Some(compile) = compile {
        lines.push(String::new());
        lines.extend(compile.lines().map(str::to_string));
    }
    lines.push(format!("Written by fprev {}.", env!("CARGO_PKG_VERSION")));
    lines
}

/// What a chain's public function computes, and, where it reads or
/// returns 16-bit values as their bits, says so.
pub(super) fn computes(plan: &Plan) -> (&'static str, String) {
    let bits = |f: Format| match f {
        Format::F16 | Format::Bf16 => " bits",
        _ => "",
    };
    let what = match plan.op {
        Op::Sum => "sum",
        Op::Dot => "dot product",
    };
    let types = match (plan.element, plan.result) {
        (Format::F32, Format::F32) => String::new(),
        (e, r) => format!(" ({e}{}; the result {r}{})", bits(e), bits(r)),
    };
    (what, types)
}

/// What a fused chain's comment says of its nodes and its functions'
/// types: the window, the alignment, the rounding.
fn words(plan: &Plan, k: usize) -> String {
    let part = plan.parts[0];
    let fused = part.fused.expect("a fused chain");
    format!(
        "groups of {} summands, the first alone and each later one with the running \
         sum, each group one fused node: its terms aligned at the largest exponent \
         among them ({}), each truncated toward zero to {} bits below it, added exactly \
         in a 64-bit integer, the sum rounded once to {} {}; the result returned as {}",
        k - 1,
        match (plan.op, fused.aligns_factors) {
            (Op::Dot, Some(f)) => format!(
                "a product's at the sum of its {f} factors' exponents, a subnormal factor's \
                 taken as {}; the running sum's at its leading bit",
                Numbers::of(f).emin
            ),
            _ => "each term's at its leading bit".into(),
        },
        fused.bits,
        part.format,
        fused.rounding,
        plan.result,
    )
}

/// A fused chain as code: its helpers, callees first, and the body of its
/// public function, which reads `x` (and `y`) and `n` and returns the
/// result.
pub(super) struct Chain {
    pub helpers: Vec<Routine>,
    pub body: Vec<Stmt>,
}

/// `f(args)` of the maths.
fn math(f: Math, args: Vec<Expr>) -> Expr {
    Expr::Math(f, args)
}

fn int(v: i64) -> Expr {
    Expr::Int(v)
}

fn real(v: &str) -> Expr {
    Expr::Real(v.into())
}

fn cast(ty: Ty, e: Expr) -> Expr {
    Expr::Cast(ty, Box::new(e))
}

fn call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Call(
        name.into(),
        args.into_iter().map(super::code::Arg::Value).collect(),
    )
}

fn ldexp(v: Expr, e: Expr) -> Expr {
    math(Math::Ldexp, vec![v, e])
}

fn not(e: Expr) -> Expr {
    Expr::Not(Box::new(e))
}

fn neg(e: Expr) -> Expr {
    Expr::Neg(Box::new(e))
}

fn item(array: &'static str, at: Expr) -> Expr {
    Expr::Item(array, Box::new(at))
}

/// The larger of two exponents.
fn larger(a: Expr, b: Expr) -> Expr {
    a.clone().gt(b.clone()).then(a, b)
}

/// The exponent of `v`, `zero` where it is zero.
fn exponent(v: Expr, zero: i64) -> Expr {
    v.clone()
        .eq(Expr::Zero)
        .then(int(zero), math(Math::Exp, vec![v]))
}

/// `plan`'s chain of groups of `k - 1` summands, its helpers named by
/// `name`. Where `bits` (C, Rust), 16-bit values are read and returned
/// as their bits; otherwise (Python) the caller reads them as doubles and
/// the result is cast to its format's type.
pub(super) fn chain(plan: &Plan, k: usize, bits: bool, name: impl Fn(&str) -> String) -> Chain {
    let part = plan.parts[0];
    let fused = part.fused.expect("a fused chain");
    let (round, add) = (name("round"), name("node"));
    let (input, to_bits) = (name("from_bits"), name("to_bits"));
    let mut helpers = Vec::new();
    let read16 = bits && plan.element != Format::F32;
    if read16 {
        helpers.push(from_bits(&input, plan.element));
    }
    helpers.push(rounded(&round));
    let toward_zero = fused.rounding == Rounding::TowardZero;
    helpers.push(node(&add, &round, fused.bits, part.format, toward_zero));
    let result = match (bits, plan.result) {
        (true, Format::F16 | Format::Bf16) => {
            helpers.push(into_bits(&to_bits, plan.result));
            call(
                &to_bits,
                vec![rounding(&round, var("acc"), plan.result, false)],
            )
        }
        (_, f @ Format::F64) | (true, f) => cast(Ty::Reg(f), var("acc")),
        // Rounded here, so that the cast is exact (and warns of no
        // overflow).
        (false, f) => cast(Ty::Reg(f), rounding(&round, var("acc"), f, false)),
    };
    let read = |v: &'static str| match read16 {
        true => call(&input, vec![item(v, var("i"))]),
        false => cast(Ty::Real, item(v, var("i"))),
    };
    let slot = || var("h") + var("j");
    let mut term = vec![let_("i", Ty::Size, var("b") + var("j"))];
    let exp = match (plan.op, fused.aligns_factors) {
        (Op::Sum, _) => {
            term.push(let_("v", Ty::Real, read("x")));
            exponent(var("v"), 0)
        }
        (Op::Dot, None) => {
            term.push(let_("v", Ty::Real, read("x") * read("y")));
            exponent(var("v"), 0)
        }
        (Op::Dot, Some(f)) => {
            let least = i64::from(Numbers::of(f).emin);
            term.push(let_("a", Ty::Real, read("x")));
            term.push(let_("c", Ty::Real, read("y")));
            term.push(let_("v", Ty::Real, var("a") * var("c")));
            term.push(let_("ea", Ty::Int, exponent(var("a"), least)));
            term.push(let_("eb", Ty::Int, exponent(var("c"), least)));
            larger(var("ea"), int(least)) + larger(var("eb"), int(least))
        }
    };
    term.push(Stmt::Set(Place::Item("t", slot()), var("v")));
    term.push(Stmt::Set(Place::Item("e", slot()), exp));
    let g = k - 1;
    let count = var("h") + var("m");
    let step = vec![
        // The running sum takes slot 0 of every group after the first.
        let_("h", Ty::Size, var("b").min(size(1))),
        let_("m", Ty::Size, (var("n") - var("b")).min(size(g))),
        when(
            var("h").eq(size(1)),
            vec![
                Stmt::Set(Place::Item("t", size(0)), var("acc")),
                Stmt::Set(Place::Item("e", size(0)), exponent(var("acc"), 0)),
            ],
        ),
        range("j", size(0), var("m"), term),
        set(
            "acc",
            count.clone().eq(size(1)).then(
                item("t", size(0)),
                call(&add, vec![Expr::Whole("t"), Expr::Whole("e"), count]),
            ),
        ),
        grow("b", var("m")),
    ];
    let body = vec![
        Stmt::Array {
            name: "t",
            ty: Ty::Real,
            len: size(k),
            fixed: Some(k),
        },
        Stmt::Array {
            name: "e",
            ty: Ty::Int,
            len: size(k),
            fixed: Some(k),
        },
        mut_("acc", Ty::Real, Expr::Zero),
        mut_("b", Ty::Size, size(0)),
        Stmt::While(var("b").lt(var("n")), step),
        ret(result),
    ];
    Chain { helpers, body }
}

/// `v` rounded in format `f` by `round`, toward zero where `toward_zero`
/// else to nearest even.
fn rounding(round: &str, v: Expr, f: Format, toward_zero: bool) -> Expr {
    let n = Numbers::of(f);
    call(
        round,
        vec![
            v,
            int(i64::from(n.p)),
            int(i64::from(n.emin)),
            real(&n.max),
            Expr::Flag(toward_zero),
        ],
    )
}

/// `v` rounded to `bits` bits, as a format rounds.
fn rounded(name: &str) -> Routine {
    let v = || var("v");
    let toward_zero = || var("toward_zero");
    Routine {
        name: name.into(),
        doc: "v rounded to `bits` bits (from 2^emin down, subnormal below), toward zero or to \
              nearest even; past the largest finite value `largest`, to it or to infinity."
            .into(),
        params: vec![
            ("v", Ty::Real),
            ("bits", Ty::Int),
            ("emin", Ty::Int),
            ("largest", Ty::Real),
            ("toward_zero", Ty::Flag),
        ],
        ret: Ty::Real,
        body: vec![
            when(
                v().eq(Expr::Zero).or(not(math(Math::Finite, vec![v()]))),
                vec![ret(v())],
            ),
            let_("e", Ty::Int, math(Math::Exp, vec![v()])),
            let_(
                "q",
                Ty::Int,
                larger(var("e"), var("emin")) - (var("bits") - int(1)),
            ),
            let_("s", Ty::Real, ldexp(v(), neg(var("q")))),
            // The sign copied, so that a -0 stays one where a language's
            // integers would lose it.
            let_(
                "r",
                Ty::Real,
                ldexp(
                    math(
                        Math::CopySign,
                        vec![
                            toward_zero().then(
                                math(Math::Trunc, vec![var("s")]),
                                math(Math::RoundEven, vec![var("s")]),
                            ),
                            var("s"),
                        ],
                    ),
                    var("q"),
                ),
            ),
            when(
                math(Math::Abs, vec![var("r")]).gt(var("largest")),
                vec![ret(math(
                    Math::CopySign,
                    vec![
                        toward_zero().then(var("largest"), math(Math::Infinity, vec![])),
                        v(),
                    ],
                ))],
            ),
            ret(var("r")),
        ],
    }
}

/// One fused node: the terms aligned at the largest exponent of a
/// non-zero one, truncated to `bits` bits below it, added exactly in a
/// 64-bit integer, the sum rounded once to `format`.
fn node(name: &str, round: &str, bits: u32, format: Format, toward_zero: bool) -> Routine {
    let t = |at: &'static str| item("t", var(at));
    Routine {
        name: name.into(),
        doc: format!(
            "One fused node of the terms t[0..m), aligned at the largest e[j] of a non-zero \
             term: each truncated toward zero to {bits} bits below it, added exactly, rounded \
             once."
        ),
        params: vec![("t", Ty::Reals), ("e", Ty::Ints), ("m", Ty::Size)],
        ret: Ty::Real,
        body: vec![
            // A non-finite term makes the sum what IEEE additions make it.
            range(
                "j",
                size(0),
                var("m"),
                vec![when(
                    not(math(Math::Finite, vec![t("j")])),
                    vec![
                        mut_("s", Ty::Real, Expr::Zero),
                        range("i", size(0), var("m"), vec![set("s", var("s") + t("i"))]),
                        ret(var("s") + t("j")),
                    ],
                )],
            ),
            mut_("top", Ty::Int, int(0)),
            mut_("found", Ty::Flag, Expr::Flag(false)),
            range(
                "j",
                size(0),
                var("m"),
                vec![when(
                    t("j")
                        .ne(Expr::Zero)
                        .and(not(var("found")).or(item("e", var("j")).gt(var("top")))),
                    vec![
                        set("top", item("e", var("j"))),
                        set("found", Expr::Flag(true)),
                    ],
                )],
            ),
            when(not(var("found")), vec![ret(Expr::Zero)]),
            let_("q", Ty::Int, var("top") - int(i64::from(bits))),
            mut_("s", Ty::Whole, int(0)),
            range(
                "j",
                size(0),
                var("m"),
                vec![grow(
                    "s",
                    cast(
                        Ty::Whole,
                        math(Math::Trunc, vec![ldexp(t("j"), neg(var("q")))]),
                    ),
                )],
            ),
            ret(rounding(
                round,
                ldexp(cast(Ty::Real, var("s")), var("q")),
                format,
                toward_zero,
            )),
        ],
    }
}

/// A 16-bit value of `f` from its bits.
fn from_bits(name: &str, f: Format) -> Routine {
    let n = Numbers::of(f);
    let m = i64::from(n.fraction);
    let top = (1 << (15 - m)) - 1;
    let h = || var("h");
    Routine {
        name: name.into(),
        doc: format!("An {f} value's bits as a double."),
        params: vec![("h", Ty::Bits)],
        ret: Ty::Real,
        body: vec![
            let_(
                "e",
                Ty::Int,
                cast(Ty::Int, h().shr(int(m)).bitand(int(top))),
            ),
            let_("m", Ty::Real, cast(Ty::Real, h().bitand(int((1 << m) - 1)))),
            let_(
                "v",
                Ty::Real,
                var("e").eq(int(0)).then(
                    ldexp(var("m"), int(1 - i64::from(n.bias) - m)),
                    var("e").eq(int(top)).then(
                        var("m")
                            .ne(Expr::Zero)
                            .then(math(Math::Nan, vec![]), math(Math::Infinity, vec![])),
                        ldexp(
                            var("m") + real(&format!("{}.0", 1 << m)),
                            var("e") - int(i64::from(n.bias) + m),
                        ),
                    ),
                ),
            ),
            ret(h()
                .bitand(int(0x8000))
                .ne(int(0))
                .then(neg(var("v")), var("v"))),
        ],
    }
}

/// A value of 16-bit format `f` (rounded to it already) as its bits.
fn into_bits(name: &str, f: Format) -> Routine {
    let n = Numbers::of(f);
    let m = i64::from(n.fraction);
    let inf = ((1 << (15 - m)) - 1) << m;
    let s = || var("s");
    let a = || var("a");
    Routine {
        name: name.into(),
        doc: format!("An {f} value as its bits."),
        params: vec![("v", Ty::Real)],
        ret: Ty::Bits,
        body: vec![
            let_(
                "s",
                Ty::Bits,
                math(Math::Negative, vec![var("v")]).then(int(0x8000), int(0)),
            ),
            let_("a", Ty::Real, math(Math::Abs, vec![var("v")])),
            when(
                math(Math::IsNan, vec![var("v")]),
                vec![ret(s().bitor(int(inf | 1 << (m - 1))))],
            ),
            when(
                not(math(Math::Finite, vec![var("v")])),
                vec![ret(s().bitor(int(inf)))],
            ),
            when(
                a().lt(ldexp(real("1.0"), int(i64::from(n.emin)))),
                vec![ret(s().bitor(cast(
                    Ty::Bits,
                    ldexp(a(), int(i64::from(n.bias) - 1 + m)),
                )))],
            ),
            let_("e", Ty::Int, math(Math::Exp, vec![a()])),
            ret(s()
                .bitor(cast(
                    Ty::Bits,
                    (var("e") + int(i64::from(n.bias))).shl(int(m)),
                ))
                .bitor(cast(
                    Ty::Bits,
                    ldexp(a(), int(m) - var("e")) - real(&format!("{}.0", 1 << m)),
                ))),
        ],
    }
}
