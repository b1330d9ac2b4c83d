//! Rust: the walk's functions (`walk.rs`), as code (`code.rs`), printed
//! as a module that needs no crate but `core` and `alloc` (and std's
//! `mul_add` where a plan has fused multiply-adds), with a C-ABI wrapper
//! so that a `cdylib` of it is a `dylib:` black box.
//!
//! Every function takes a strided view (a slice `x`, its elements
//! `x[i * s]`, `i < n`) and, of a part, `planned` and `c`, the error a
//! compensated chain carries written through it.

use std::fmt::Write;

use super::code::{Domain, Expr, Func, Math, Reading, Spell, Stmt, Ty};
use super::fused;
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
        Ty::Int => "i32",
        Ty::Whole => "i64",
        Ty::Bits => "u16",
        Ty::Reals => "&[f64]",
        Ty::Ints => "&[i32]",
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

    fn fma(&mut self, at: &Expr, onto: &str) -> String {
        let (x, y) = self.elements(at);
        self.fma = true;
        format!("{x}.mul_add({y}, {onto})")
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
            Expr::Int(v) => v.to_string(),
            Expr::Real(v) => v.clone(),
            Expr::Math(f, args) => {
                let method = match f {
                    Math::Exp => return format!("exponent({})", self.any(&args[0])),
                    Math::Ldexp => {
                        return format!("ldexp({}, {})", self.any(&args[0]), self.any(&args[1]));
                    }
                    Math::Infinity => return "f64::INFINITY".into(),
                    Math::Nan => return "f64::NAN".into(),
                    Math::Trunc => "trunc",
                    Math::RoundEven => "round_ties_even",
                    Math::Abs => "abs",
                    Math::CopySign => "copysign",
                    Math::Finite => "is_finite",
                    Math::IsNan => "is_nan",
                    Math::Negative => "is_sign_negative",
                };
                let rest: Vec<String> = args[1..].iter().map(|a| self.any(a)).collect();
                format!(
                    "{}.{method}({})",
                    self.operand(&args[0], 9),
                    rest.join(", ")
                )
            }
            Expr::Cast(ty, e) => format!("{} as {}", self.operand(e, 9), rust_ty(*ty)),
            Expr::Neg(e) => format!("-{}", self.operand(e, 9)),
            Expr::Not(e) => format!("!{}", self.operand(e, 9)),
            Expr::Whole(v) => format!("&{v}"),
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
        if fma {
            return format!("{acc} = {}", self.fma(at, acc));
        }
        let (x, y) = self.elements(at);
        let step = match (format, self.reads.d, self.reads.op) {
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
                let zero = match ty {
                    "bool" => "false".to_string(),
                    "i32" => format!("0{ty}"),
                    _ => format!("0.0{ty}"),
                };
                match fixed {
                    Some(len) => format!("{pad}let mut {name} = [{zero}; {len}];\n"),
                    None => {
                        self.alloc = true;
                        format!(
                            "{pad}let mut {name} = alloc::vec![{zero}; {}];\n",
                            self.any(len)
                        )
                    }
                }
            }
            Stmt::Gathered { index, len } => {
                self.alloc = true;
                let t = self.values(self.reads.d);
                let (index, len) = (self.operand(index, 5), self.operand(len, 5));
                let gathered = |v: &str| {
                    format!(
                        "{pad}let r{v}: alloc::vec::Vec<{t}> = (0..{len}).map(|i| {v}[{index} * \
                         s]).collect();\n"
                    )
                };
                match self.reads.dot() {
                    true => gathered("x") + &gathered("y"),
                    false => gathered("x"),
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
        let text = self.tail(&f.body);
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
        self.chain(plan, k, name, what)
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

/// The maths a fused chain needs that std lacks, as helpers.
const MATHS: &str = "/// `floor(log2 |v|)` of a finite non-zero `v`.
fn exponent(v: f64) -> i32 {
    let bits = v.abs().to_bits();
    match (bits >> 52) as i32 {
        0 => -1074 + 63 - bits.leading_zeros() as i32,
        biased => biased - 1023,
    }
}

/// `v * 2^e`, rounded once: the exponents here keep `2^e` a normal f64.
fn ldexp(v: f64, e: i32) -> f64 {
    v * f64::from_bits(((e + 1023) as u64) << 52)
}

";

impl Rust {
    /// Statements, the last a return written as the block's value.
    fn tail(&mut self, body: &[Stmt]) -> String {
        let (body, last) = match body.split_last() {
            Some((Stmt::Return(e) | Stmt::Release { value: e, .. }, body)) => (body, Some(e)),
            _ => (body, None),
        };
        let mut text = self.block(body, "    ");
        if let Some(e) = last {
            let _ = writeln!(text, "    {}", self.any(e));
        }
        text
    }

    /// The fused chain `fused:K`, its helpers and loop as `fused.rs`
    /// writes them.
    fn chain(mut self, plan: &Plan, k: usize, name: &str, what: &str) -> String {
        let chain = fused::chain(plan, k, true, str::to_string);
        let compile = "Compile: rustc --crate-type cdylib -C opt-level=3 (Rust 1.82 or later), or \
                       include it\nas a module; it needs std (f64's trunc and round_ties_even).";
        let mut out = String::new();
        for line in fused::comment(plan, k, what, Some(compile)) {
            let _ = writeln!(out, "{}", format!("// {line}").trim_end());
        }
        out.push('\n');
        out += MATHS;
        for r in &chain.helpers {
            let params: Vec<String> = r
                .params
                .iter()
                .map(|(name, ty)| format!("{name}: {}", rust_ty(*ty)))
                .collect();
            let _ = write!(
                out,
                "/// {}\nfn {}({}) -> {} {{\n{}}}\n\n",
                r.doc_lines(76).join("\n/// "),
                r.name,
                params.join(", "),
                rust_ty(r.ret),
                self.tail(&r.body)
            );
        }
        let it = rust_type(plan.element);
        let rt = rust_type(plan.result);
        let lint = match name.chars().any(|c| c.is_ascii_uppercase()) {
            true => "#[allow(non_snake_case)]\n",
            false => "",
        };
        let (params, inputs, check, c_params, c_slices) = match plan.op {
            Op::Sum => (
                format!("x: &[{it}]"),
                "x",
                String::new(),
                format!("x: *const {it}, n: usize"),
                format!("{name}(unsafe {{ core::slice::from_raw_parts(x, n) }})"),
            ),
            Op::Dot => (
                format!("x: &[{it}], y: &[{it}]"),
                "x and y",
                format!(
                    "    assert_eq!(x.len(), y.len(), \"{name}: x and y differ in length\");\n"
                ),
                format!("x: *const {it}, y: *const {it}, n: usize"),
                format!(
                    "let (x, y) = unsafe {{ (core::slice::from_raw_parts(x, n), \
                     core::slice::from_raw_parts(y, n)) }};\n    {name}(x, y)"
                ),
            ),
        };
        let zero = match rt {
            "u16" => "0",
            _ => "0.0",
        };
        let (what, types) = fused::computes(plan);
        let _ = write!(
            out,
            "/// The {what} of {inputs}{types}, bit for bit as described above.\n{lint}pub fn \
             {name}({params}) -> {rt} {{\n{check}    let n = x.len();\n{body}}}\n\n/// [`{name}`] \
             for C, of `n` values each.\n///\n/// # Safety\n/// The pointers point to `n` values \
             each (any pointers where `n` is 0).\n#[unsafe(no_mangle)]\n{lint}pub unsafe extern \
             \"C\" fn {name}_c({c_params}) -> {rt} {{\n    if n == 0 {{\n        return {zero};\n    \
             }}\n    // SAFETY: the caller passes `n` values of each.\n    {c_slices}\n}}\n",
            body = self.tail(&chain.body),
        );
        out
    }
}
