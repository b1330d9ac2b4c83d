//! Rust: the walk's functions (`walk.rs`), as code (`code.rs`), printed
//! as a module that needs no crate but `core` and `alloc` (and std's
//! `mul_add` where a plan has fused multiply-adds), with a C-ABI wrapper
//! so that a `cdylib` of it is a `dylib:` black box.
//!
//! Every function takes a strided view (a slice `x`, its elements
//! `x[i * s]`, `i < n`) and, of a part, `planned` and `c`, the error a
//! compensated chain carries written through it.

use std::fmt::Write;

use super::code::{Domain, Expr, Func, Reading, Spell, Stmt, Ty};
use super::fused::{self, Numbers};
use super::lower::Lanes;
use super::plan::{Op, Plan};
use super::walk::{self, Backend, Walk};
use crate::arith::Product;
use crate::format::Format;

pub(super) fn source(plan: &Plan, name: &str, what: &str) -> Result<String, String> {
    let rust = Rust {
        ty: match plan.element {
            Format::F32 => "f32",
            _ => "f64",
        },
        element: plan.element,
        reads: Reading::inputs(plan.op),
        helpers: String::new(),
        bodies: String::new(),
        fin: false,
        alloc: false,
        fma: false,
    };
    walk::source(plan, rust, name, what)
}

/// The Rust printer: per-part additions first, then the functions.
struct Rust {
    /// The Rust type of the inputs.
    ty: &'static str,
    element: Format,
    /// What the function being printed reads.
    reads: Reading,
    /// Per-part additions and Kahan steps.
    helpers: String,
    bodies: String,
    /// The module needs `fin`, `alloc`, std's `mul_add`.
    fin: bool,
    alloc: bool,
    fma: bool,
}

/// The Rust type of registers of `format`.
fn register(format: Format) -> &'static str {
    match format {
        Format::F32 => "f32",
        _ => "f64",
    }
}

/// The Rust type of a variable.
fn rust_ty(ty: Ty) -> &'static str {
    match ty {
        Ty::Size => "usize",
        Ty::Flag => "bool",
        Ty::Reg(format) => register(format),
        Ty::Real | Ty::Error => "f64",
    }
}

impl Rust {
    /// The Rust type of the values of a function over `d`.
    fn values(&self, d: Domain) -> &'static str {
        match d {
            Domain::Sums => "f64",
            Domain::Inputs => self.ty,
        }
    }

    /// The parameters of function `f`, an unused one named with `_`.
    fn params(&self, f: &Func) -> String {
        let t = self.values(f.d);
        let view = match (f.d, self.reads.op) {
            (Domain::Inputs, Op::Dot) => format!("x: &[{t}], y: &[{t}], s: usize"),
            _ => format!("x: &[{t}], s: usize"),
        };
        let rest = f.params(
            |name, ty, used| {
                let unused = if used { "" } else { "_" };
                format!("{unused}{name}: {}", rust_ty(ty))
            },
            "c: Option<&mut f64>",
        );
        format!("{view}, {rest}")
    }
}

impl Spell for Rust {
    const CARRY: [&'static str; 3] = ["c", "None", "Some(&mut e)"];

    fn reading(&self) -> Reading {
        self.reads
    }

    fn strided(&mut self, from: &Expr, step: &Expr) -> String {
        let at = match from.clone() * Expr::Var("s") {
            Expr::Size(0) => None,
            off => Some(self.any(&off)),
        };
        let slice = |v: &str| match &at {
            None => v.to_string(),
            Some(at) => format!("&{v}[{at}..]"),
        };
        let stride = self.any(&(Expr::Var("s") * step.clone()));
        match self.reads.dot() {
            true => format!("{}, {}, {stride}", slice("x"), slice("y")),
            false => format!("{}, {stride}", slice("x")),
        }
    }

    fn local(&self, names: &[&str]) -> String {
        let borrowed: Vec<String> = names.iter().map(|n| format!("&{n}")).collect();
        format!("{}, 1", borrowed.join(", "))
    }

    fn val(&mut self, at: &Expr, second: bool) -> String {
        let (x, y) = self.elements(at);
        let product = self.reads.product(second);
        match (self.reads.d, self.reads.op, self.element) {
            (Domain::Sums, ..) | (Domain::Inputs, Op::Sum, Format::F64) => x,
            (Domain::Inputs, Op::Sum, _) => format!("f64::from({x})"),
            (Domain::Inputs, Op::Dot, element) => match (product, element) {
                (Product::Rounded(Format::F32), Format::F32) => format!("f64::from({x} * {y})"),
                (Product::Rounded(Format::F32), _) => format!("f64::from(({x} * {y}) as f32)"),
                (_, Format::F32) => format!("f64::from({x}) * f64::from({y})"),
                _ => format!("{x} * {y}"),
            },
        }
    }

    fn register(&mut self, format: Format, at: &Expr) -> String {
        match (format, self.reads.d) {
            (Format::F32, Domain::Sums) => format!("{} as f32", self.elements(at).0),
            _ => self.val(at, false),
        }
    }

    fn expr(&mut self, e: &Expr) -> String {
        match e {
            Expr::Size(v) => v.to_string(),
            Expr::Zero => "0.0".into(),
            Expr::Flag(f) => f.to_string(),
            Expr::Var(v) => v.to_string(),
            Expr::Bin(..) => self.any(e),
            Expr::Min(a, b) => format!("{}.min({})", self.operand(a, 9), self.any(b)),
            Expr::Cond(c, a, b) => format!(
                "if {} {{ {} }} else {{ {} }}",
                self.any(c),
                self.any(a),
                self.any(b)
            ),
            Expr::MulAdd(a, b, c) => {
                let (a, b) = (self.operand(a, 9), self.any(b));
                match **c {
                    Expr::Size(0) => format!("{a}.checked_mul({b}).unwrap_or(usize::MAX)"),
                    _ => format!(
                        "{a}.checked_mul({b}).and_then(|v| v.checked_add({})).unwrap_or(usize::MAX)",
                        self.any(c)
                    ),
                }
            }
            Expr::Widen(Format::F32, e) => format!("f64::from({})", self.any(e)),
            Expr::Widen(_, e) => self.any(e),
            Expr::Fin(e) => {
                self.fin = true;
                format!("fin(c, {})", self.any(e))
            }
            _ => unreachable!("spelled by Spell::any"),
        }
    }

    const END: &'static str = ";";

    fn declare(&mut self, name: &'static str, ty: Ty, value: &Expr, mutable: bool) -> String {
        let m = match mutable || ty == Ty::Error {
            true => "mut ",
            false => "",
        };
        format!("let {m}{name}: {} = {}", rust_ty(ty), self.any(value))
    }

    fn range(&mut self, var: &str, from: &Expr, to: &Expr, step: &Expr, reverse: bool) -> String {
        let range = format!("{}..{}", self.any(from), self.any(to));
        let range = match (reverse, step) {
            (true, _) => format!("({range}).rev()"),
            (false, Expr::Size(1)) => range,
            (false, step) => format!("({range}).step_by({})", self.any(step)),
        };
        format!("for {var} in {range}")
    }

    fn kahan(&mut self, part: usize, t: &str, e: &str, value: &str) -> String {
        format!("k{part}(&mut {t}, &mut {e}, {value})")
    }

    fn step(&mut self, acc: &str, at: &Expr, format: Format, fma: bool) -> String {
        let (x, y) = self.elements(at);
        self.fma |= fma;
        let step = match (format, self.reads.d, self.reads.op) {
            _ if fma => return format!("{acc} = {x}.mul_add({y}, {acc})"),
            (Format::F32, Domain::Inputs, Op::Sum) => x.to_string(),
            (Format::F32, Domain::Inputs, Op::Dot) => format!("{x} * {y}"),
            (Format::F32, Domain::Sums, _) => format!("{x} as f32"),
            _ => self.val(at, true),
        };
        format!("{acc} += {step}")
    }

    fn special(&mut self, s: &Stmt, pad: &str) -> String {
        match s {
            Stmt::Array {
                name,
                ty,
                len,
                fixed,
            } => {
                let ty = rust_ty(*ty);
                match fixed {
                    Some(len) => format!("{pad}let mut {name} = [0.0{ty}; {len}];\n"),
                    None => {
                        self.alloc = true;
                        format!(
                            "{pad}let mut {name} = alloc::vec![0.0{ty}; {}];\n",
                            self.any(len)
                        )
                    }
                }
            }
            Stmt::Rotated { start } => {
                self.alloc = true;
                let t = self.values(self.reads.d);
                let start = self.operand(start, 4);
                let turned = |v: &str| {
                    format!(
                        "{pad}let r{v}: alloc::vec::Vec<{t}> = (0..n).map(|i| {v}[({start} + i) % n \
                         * s]).collect();\n"
                    )
                };
                match self.reads.dot() {
                    true => turned("x") + &turned("y"),
                    false => turned("x"),
                }
            }
            _ => unreachable!("a statement of every language"),
        }
    }
}

impl Backend for Rust {
    const LANES: Lanes = Lanes::Registers;
    const SUMS: [&'static str; 3] = ["p + q", "f64::from(p as f32 + q as f32)", "add_f32(p, q)"];

    fn addition(&mut self, name: &str, sum: &str) {
        let _ = writeln!(
            self.helpers,
            "fn {name}(p: f64, q: f64) -> f64 {{\n    {sum}\n}}\n"
        );
    }

    fn kahan(&mut self, k: usize, name: &str, end: &str) {
        let _ = writeln!(
            self.helpers,
            "fn k{k}(t: &mut f64, e: &mut f64, v: f64) {{\n    let y = {name}(v, -*e);\n    \
             let u = {name}(*t, y);\n    *e = {name}({name}(u, -*t), -y);\n    *t = u;\n}}\n\n\
             fn e{k}(c: Option<&mut f64>, t: f64, e: f64) -> f64 {{\n    match c {{\n        \
             Some(c) => {{\n            *c = e;\n            t\n        }}\n        None => \
             {end},\n    }}\n}}\n"
        );
    }

    fn function(&mut self, walk: &Walk, f: &Func) {
        self.reads = walk.reading(f);
        // A last return is the body's value.
        let (body, last) = match f.body.split_last() {
            Some((Stmt::Return(e) | Stmt::Release { value: e, .. }, body)) => (body, Some(e)),
            _ => (&f.body[..], None),
        };
        let mut text = self.block(body, "    ");
        if let Some(e) = last {
            let _ = writeln!(text, "    {}", self.any(e));
        }
        let _ = write!(
            self.bodies,
            "fn {}({}) -> f64 {{\n{text}}}\n\n",
            f.name,
            self.params(f)
        );
    }

    fn finish(self, walk: &Walk, name: &str, what: &str) -> String {
        let plan = walk.plan;
        let mut out = String::new();
        for line in what.lines() {
            let _ = writeln!(out, "// {line}");
        }
        let _ = writeln!(out, "//\n// The order: native:{}", plan.formula);
        for line in walk.described() {
            let _ = writeln!(out, "//   {line}");
        }
        let _ = writeln!(
            out,
            "//\n// Compile: rustc --crate-type cdylib -C opt-level=3 -C target-cpu=native (Rust \
             1.82 or later),\n// or include it as a module. Rust neither reorders nor contracts \
             floating-point\n// operations (it has no fast-math), so no flag is needed to keep \
             them. Each addition\n// is rounded once to its part's format.\n// It depends on no \
             crate: it needs core{}{}.\n// Written by fprev {}.",
            match self.alloc {
                true => {
                    " and alloc (declared below; a #![no_std] crate needs `extern crate \
                     alloc;`\n// and a global allocator)"
                }
                false => " only, so it builds under #![no_std]",
            },
            match self.fma {
                true => {
                    ",\n// and std for mul_add, its fused multiply-adds of exact products \
                     (under\n// #![no_std], the libm crate's fmaf and fma give the same bits)"
                }
                false => "",
            },
            env!("CARGO_PKG_VERSION")
        );
        if self.alloc {
            out += "\nextern crate alloc;\n";
        }
        out.push('\n');
        if self.fin {
            out += "fn fin(c: Option<&mut f64>, v: f64) -> f64 {\n    if let Some(c) = c {\n        \
                    *c = 0.0;\n    }\n    v\n}\n\n";
        }
        if walk.rounds_once {
            out += "// p + q rounded once to f32: their f64 sum rounded to odd (a sticky last bit \
                    where it is\n// inexact), then to f32, which 53 bits hold without a second \
                    rounding.\nfn add_f32(p: f64, q: f64) -> f64 {\n    let mut s = p + q;\n    \
                    let bp = s - q;\n    let bq = s - bp;\n    let e = (p - bp) + (q - bq);\n    \
                    if e != 0.0 && s.is_finite() {\n        let bits = s.to_bits();\n        if \
                    bits & 1 == 0 {\n            s = f64::from_bits(if (e > 0.0) == (s > 0.0) { \
                    bits + 1 } else { bits - 1 });\n        }\n    }\n    f64::from(s as f32)\n}\n\n";
        }
        out += &self.helpers;
        out += &self.bodies;
        let t = self.ty;
        let lint = match name.chars().any(|c| c.is_ascii_uppercase()) {
            true => "#[allow(non_snake_case)]\n",
            false => "",
        };
        let narrow = match t {
            "f32" => "v as f32",
            _ => "v",
        };
        match plan.op {
            Op::Sum => {
                let _ = write!(
                    out,
                    "/// The sum of `x`, bit for bit as described above.\n{lint}pub fn \
                     {name}(x: &[{t}]) -> {t} {{\n    if x.is_empty() {{\n        return \
                     0.0;\n    }}\n    let v = p0x(x, 1, x.len(), x.len(), None);\n    \
                     {narrow}\n}}\n\n/// [`{name}`] for C: the sum of `x[0..n)`.\n///\n/// # \
                     Safety\n/// `x` points to `n` values (any pointer where `n` is 0).\n\
                     #[unsafe(no_mangle)]\n{lint}pub unsafe extern \"C\" fn {name}_c(x: *const \
                     {t}, n: usize) -> {t} {{\n    if n == 0 {{\n        return 0.0;\n    }}\n    \
                     // SAFETY: the caller passes `n` values.\n    {name}(unsafe {{ \
                     core::slice::from_raw_parts(x, n) }})\n}}\n"
                );
            }
            Op::Dot => {
                let _ = write!(
                    out,
                    "/// The dot product of `x` and `y`, bit for bit as described above.\n///\n\
                     /// # Panics\n/// If `x` and `y` differ in length.\n{lint}pub fn \
                     {name}(x: &[{t}], y: &[{t}]) -> {t} {{\n    assert_eq!(x.len(), y.len(), \
                     \"{name}: x and y differ in length\");\n    if x.is_empty() {{\n        \
                     return 0.0;\n    }}\n    let v = p0x(x, y, 1, x.len(), x.len(), None);\n    \
                     {narrow}\n}}\n\n/// [`{name}`] for C: the dot product of `x[0..n)` and \
                     `y[0..n)`.\n///\n/// # Safety\n/// `x` and `y` point to `n` values each \
                     (any pointers where `n` is 0).\n#[unsafe(no_mangle)]\n{lint}pub unsafe \
                     extern \"C\" fn {name}_c(x: *const {t}, y: *const {t}, n: usize) -> {t} \
                     {{\n    if n == 0 {{\n        return 0.0;\n    }}\n    // SAFETY: the \
                     caller passes `n` values of each.\n    let (x, y) = unsafe {{ \
                     (core::slice::from_raw_parts(x, n), core::slice::from_raw_parts(y, n)) \
                     }};\n    {name}(x, y)\n}}\n"
                );
            }
        }
        out
    }

    fn fused_chain(self, plan: &Plan, k: usize, name: &str, what: &str) -> String {
        fused_chain(plan, k, name, what)
    }
}

/// A Rust type holding values of `f`: 16-bit formats as their bits.
fn rust_type(f: Format) -> &'static str {
    match f {
        Format::F64 => "f64",
        Format::F32 => "f32",
        _ => "u16",
    }
}

/// The fused chain `fused:K`: one helper adds a node's terms in its
/// window, one rounds to a format, as the C printer's do.
fn fused_chain(plan: &Plan, k: usize, name: &str, what: &str) -> String {
    let part = plan.parts[0];
    let fused = part.fused.expect("a fused chain");
    let mut out = String::new();
    for line in what.lines() {
        let _ = writeln!(out, "// {line}");
    }
    let _ = writeln!(
        out,
        "//\n// The order: native:{}: {}.\n//\n// Compile: rustc --crate-type cdylib -C \
         opt-level=3 (Rust 1.82 or later), or include it\n// as a module; it needs std (f64's \
         trunc and round_ties_even).\n// Written by fprev {}.\n",
        plan.formula,
        fused::words(plan, k),
        env!("CARGO_PKG_VERSION")
    );
    let p = |s: &str| format!("{name}_{s}");
    out += &format!(
        "/// `floor(log2 |v|)` of a finite non-zero `v`.\nfn {exp}(v: f64) -> i32 {{\n    let \
         bits = v.abs().to_bits();\n    match (bits >> 52) as i32 {{\n        0 => -1074 + 63 - \
         bits.leading_zeros() as i32,\n        biased => biased - 1023,\n    }}\n}}\n\n/// `v * \
         2^e`, rounded once: the exponents here keep `2^e` a normal f64.\nfn {ldexp}(v: f64, e: \
         i32) -> f64 {{\n    v * f64::from_bits(((e + 1023) as u64) << 52)\n}}\n\n/// `v` \
         rounded to `bits` bits (from `2^emin` down, subnormal below), toward zero or\n/// to \
         nearest even; past the largest finite value `max`, to it or to infinity.\nfn \
         {round}(v: f64, bits: i32, emin: i32, max: f64, toward_zero: bool) -> f64 {{\n    if v \
         == 0.0 || !v.is_finite() {{\n        return v;\n    }}\n    let q = {exp}(v).max(emin) \
         - (bits - 1);\n    let s = {ldexp}(v, -q);\n    let r = {ldexp}(if toward_zero {{ \
         s.trunc() }} else {{ s.round_ties_even() }}, q);\n    match r.abs() > max {{\n        \
         true if toward_zero => max.copysign(v),\n        true => f64::INFINITY.copysign(v),\n \
         false => r,\n    }}\n}}\n\n",
        exp = p("exp"),
        ldexp = p("ldexp"),
        round = p("round"),
    );
    let node = Numbers::of(part.format);
    out += &format!(
        "/// One fused node of the terms `t`, aligned at the largest `e[j]` of a non-zero term:\n\
         /// each truncated toward zero to {bits} bits below it, added exactly, rounded once.\n\
         fn {fused}(t: &[f64], e: &[i32]) -> f64 {{\n    if let Some(bad) = t.iter().find(|v| \
         !v.is_finite()) {{\n        return t.iter().sum::<f64>() + bad;\n    }}\n    let Some(top) \
         = t.iter().zip(e).filter(|(v, _)| **v != 0.0).map(|(_, e)| *e).max() else {{\n        \
         return 0.0;\n    }};\n    let q = top - {bits};\n    let s: i64 = t.iter().map(|v| \
         {ldexp}(*v, -q).trunc() as i64).sum();\n    {round}({ldexp}(s as f64, q), {p}, {emin}, \
         {max}, {tz})\n}}\n\n",
        fused = p("fused"),
        ldexp = p("ldexp"),
        round = p("round"),
        bits = fused.bits,
        p = node.p,
        emin = node.emin,
        max = node.max,
        tz = fused.rounding == crate::arith::Rounding::TowardZero,
    );
    let it = rust_type(plan.element);
    if plan.element != Format::F32 {
        let n = Numbers::of(plan.element);
        out += &format!(
            "/// An {f} value's bits as an f64.\nfn {inp}(h: u16) -> f64 {{\n    let e = i32::from((h \
             >> {m}) & {top});\n    let m = f64::from(h & {frac});\n    let v = match e {{\n        \
             0 => {ldexp}(m, {sub}),\n        {top} if m != 0.0 => f64::NAN,\n        {top} => \
             f64::INFINITY,\n        _ => {ldexp}(m + {one}.0, e - {shift}),\n    }};\n    if h & \
             0x8000 != 0 {{ -v }} else {{ v }}\n}}\n\n",
            f = plan.element,
            inp = p("in"),
            ldexp = p("ldexp"),
            m = n.fraction,
            top = (1 << (15 - n.fraction)) - 1,
            frac = (1 << n.fraction) - 1,
            sub = 1 - n.bias - n.fraction as i32,
            one = 1 << n.fraction,
            shift = n.bias + n.fraction as i32,
        );
    }
    let read = |v: &str| match plan.element {
        Format::F32 => format!("f64::from({v})"),
        _ => format!("{}({v})", p("in")),
    };
    let term = match (plan.op, fused.aligns_factors) {
        (Op::Sum, _) => format!(
            "    let t = {};\n    (t, if t == 0.0 {{ 0 }} else {{ {}(t) }})",
            read("x[i]"),
            p("exp")
        ),
        (Op::Dot, None) => format!(
            "    let t = {} * {};\n    (t, if t == 0.0 {{ 0 }} else {{ {}(t) }})",
            read("x[i]"),
            read("y[i]"),
            p("exp")
        ),
        (Op::Dot, Some(f)) => format!(
            "    let (a, b) = ({}, {});\n    let t = a * b;\n    let factor = |v: f64| if v == \
             0.0 {{ {least} }} else {{ {exp}(v).max({least}) }};\n    (t, factor(a) + \
             factor(b))",
            read("x[i]"),
            read("y[i]"),
            least = Numbers::of(f).emin,
            exp = p("exp"),
        ),
    };
    let (params, args, inputs) = match plan.op {
        Op::Sum => (format!("x: &[{it}]"), "x", "x"),
        Op::Dot => (format!("x: &[{it}], y: &[{it}]"), "x, y", "x and y"),
    };
    let _ = write!(
        out,
        "/// Summand `i` and the exponent it aligns at.\nfn {term_fn}({params}, i: usize) -> \
         (f64, i32) {{\n{term}\n}}\n\n",
        term_fn = p("term"),
    );
    let rt = rust_type(plan.result);
    let ret = match plan.result {
        Format::F32 => "acc as f32".to_string(),
        Format::F64 => "acc".to_string(),
        f => {
            let r = Numbers::of(f);
            out += &format!(
                "/// An {f} value as its bits.\nfn {bits_fn}(v: f64) -> u16 {{\n    let s: u16 = \
                 if v.is_sign_negative() {{ 0x8000 }} else {{ 0 }};\n    let a = v.abs();\n    if \
                 v.is_nan() {{\n        return s | {inf:#x} | {quiet:#x};\n    }}\n    if \
                 v.is_infinite() {{\n        return s | {inf:#x};\n    }}\n    if a < {ldexp}(1.0, \
                 {emin}) {{\n        return s | {ldexp}(a, {sub}) as u16;\n    }}\n    let e = \
                 {exp}(a);\n    s | (((e + {bias}) as u16) << {m}) | ({ldexp}(a, {m} - e) - \
                 {one}.0) as u16\n}}\n\n",
                bits_fn = p("bits"),
                ldexp = p("ldexp"),
                exp = p("exp"),
                inf = ((1u32 << (15 - r.fraction)) - 1) << r.fraction,
                quiet = 1u32 << (r.fraction - 1),
                emin = r.emin,
                sub = r.bias - 1 + r.fraction as i32,
                bias = r.bias,
                m = r.fraction,
                one = 1u32 << r.fraction,
            );
            format!(
                "{}({}(acc, {}, {}, {}, false))",
                p("bits"),
                p("round"),
                r.p,
                r.emin,
                r.max
            )
        }
    };
    let lint = match name.chars().any(|c| c.is_ascii_uppercase()) {
        true => "#[allow(non_snake_case)]\n",
        false => "",
    };
    let g = k - 1;
    let (check, c_params, c_slices) = match plan.op {
        Op::Sum => (
            String::new(),
            format!("x: *const {it}, n: usize"),
            format!("{name}(unsafe {{ core::slice::from_raw_parts(x, n) }})"),
        ),
        Op::Dot => (
            format!("    assert_eq!(x.len(), y.len(), \"{name}: x and y differ in length\");\n"),
            format!("x: *const {it}, y: *const {it}, n: usize"),
            "let (x, y) = unsafe { (core::slice::from_raw_parts(x, n), \
             core::slice::from_raw_parts(y, n)) };\n    NAME(x, y)"
                .replace("NAME", name),
        ),
    };
    let zero = match rt {
        "u16" => "0",
        _ => "0.0",
    };
    let _ = write!(
        out,
        "/// The {what} of {inputs}{types}, bit for bit as described above.\n{lint}pub fn \
         {name}({params}) -> {rt} {{\n{check}    let n = x.len();\n    if n == 0 {{\n        \
         return {zero};\n    }}\n    let mut t = [0.0f64; {k}];\n    let mut e = [0i32; {k}];\n    \
         let first = n.min({g});\n    for i in 0..first {{\n        (t[i], e[i]) = \
         {term_fn}({args}, i);\n    }}\n    let mut acc = if first == 1 {{ t[0] }} else {{ \
         {fused_fn}(&t[..first], &e[..first]) }};\n    let mut b = first;\n    while b < n {{\n  \
         let m = (n - b).min({g});\n        t[0] = acc;\n        e[0] = if acc == 0.0 {{ 0 }} \
         else {{ {exp}(acc) }};\n        for j in 0..m {{\n            (t[1 + j], e[1 + j]) = \
         {term_fn}({args}, b + j);\n        }}\n        acc = {fused_fn}(&t[..m + 1], &e[..m + \
         1]);\n        b += m;\n    }}\n    {ret}\n}}\n\n/// [`{name}`] for C, of `n` values \
         each.\n///\n/// # Safety\n/// The pointers point to `n` values each (any pointers where \
         `n` is 0).\n#[unsafe(no_mangle)]\n{lint}pub unsafe extern \"C\" fn {name}_c({c_params}) \
         -> {rt} {{\n    if n == 0 {{\n        return {zero};\n    }}\n    // SAFETY: the caller \
         passes `n` values of each.\n    {c_slices}\n}}\n",
        what = match plan.op {
            Op::Sum => "sum",
            Op::Dot => "dot product",
        },
        types = match (plan.element, plan.result) {
            (Format::F32, Format::F32) => String::new(),
            (e, r) => format!(
                " ({e}{}; the result {r}{})",
                match e {
                    Format::F32 => "",
                    _ => " bits",
                },
                match r {
                    Format::F16 | Format::Bf16 => " bits",
                    _ => "",
                }
            ),
        },
        term_fn = p("term"),
        fused_fn = p("fused"),
        exp = p("exp"),
    );
    out
}
