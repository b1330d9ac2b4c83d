//! C99 and CUDA C: the walk's functions (`walk.rs`), as code
//! (`code.rs`), printed as static functions, CUDA C's as `__device__`
//! functions with a one-thread kernel.
//!
//! Every function takes a strided view (`x[i * s]`, `i < n`) and, of a
//! part, `planned` and `c`, the error a compensated chain carries written
//! through it.

use std::collections::HashSet;
use std::fmt::Write;

use super::code::{Domain, Expr, Func, Reading, Spell, Stmt, Ty};
use super::fused::{self, Numbers};
use super::lower::Lanes;
use super::plan::{Op, Plan};
use super::walk::{self, Backend, Walk};
use crate::arith::Product;
use crate::format::Format;

pub(super) fn source(plan: &Plan, name: &str, what: &str, cuda: bool) -> Result<String, String> {
    let c = C {
        cuda,
        ty: match plan.element {
            Format::F32 => "float",
            _ => "double",
        },
        element: plan.element,
        reads: Reading::inputs(plan.op),
        allocated: HashSet::new(),
        protos: String::new(),
        bodies: String::new(),
        alloc: false,
    };
    walk::source(plan, c, name, what)
}

/// The C printer: prototypes (and one-line helpers) first, then bodies.
struct C {
    cuda: bool,
    /// The C type of the inputs.
    ty: &'static str,
    element: Format,
    /// What the function being printed reads.
    reads: Reading,
    /// Its arrays that `malloc` allocates.
    allocated: HashSet<&'static str>,
    protos: String,
    bodies: String,
    /// The module needs `malloc`.
    alloc: bool,
}

/// A size as a C expression of type `size_t`.
fn num(v: usize) -> String {
    match v < 1 << 31 {
        true => v.to_string(),
        false => format!("((size_t){v}ULL)"),
    }
}

/// The C type of registers of `format`.
fn register(format: Format) -> &'static str {
    match format {
        Format::F32 => "float",
        _ => "double",
    }
}

/// The C type of a variable.
fn c_ty(ty: Ty) -> &'static str {
    match ty {
        Ty::Size => "size_t",
        Ty::Flag => "int",
        Ty::Reg(format) => register(format),
        Ty::Real | Ty::Error => "double",
    }
}

impl C {
    fn qualifier(&self) -> &'static str {
        match self.cuda {
            true => "static __device__ ",
            false => "static ",
        }
    }

    /// The C type of the values of the function being printed.
    fn values(&self) -> &'static str {
        match self.reads.d {
            Domain::Sums => "double",
            Domain::Inputs => self.ty,
        }
    }

    /// The parameters of function `f`.
    fn params(&self, f: &Func) -> String {
        let t = match f.d {
            Domain::Sums => "double",
            Domain::Inputs => self.ty,
        };
        let view = match (f.d, self.reads.op) {
            (Domain::Inputs, Op::Dot) => format!("const {t} *x, const {t} *y, size_t s"),
            _ => format!("const {t} *x, size_t s"),
        };
        let rest = f.params(|name, ty, _| format!("{} {name}", c_ty(ty)), "double *c");
        format!("{view}, {rest}")
    }

    /// `name`, an array of `count` values of type `t`, allocated.
    fn allocate(&mut self, name: &str, t: &str, count: &str, pad: &str, fail: &str) -> String {
        self.alloc = true;
        format!(
            "{pad}{t} *{name} = ({t} *)malloc({count} * sizeof({t}));\n{pad}if (!{name}) \
             {fail}\n"
        )
    }
}

impl Spell for C {
    const CARRY: [&'static str; 3] = ["c", "NULL", "&e"];

    fn reading(&self) -> Reading {
        self.reads
    }

    fn strided(&mut self, from: &Expr, step: &Expr) -> String {
        let off = from.clone() * Expr::Var("s");
        let from = match off {
            Expr::Size(0) => String::new(),
            off => format!(" + {}", self.operand(&off, 5)),
        };
        let stride = self.any(&(Expr::Var("s") * step.clone()));
        match self.reads.dot() {
            true => format!("x{from}, y{from}, {stride}"),
            false => format!("x{from}, {stride}"),
        }
    }

    fn local(&self, names: &[&str]) -> String {
        format!("{}, 1", names.join(", "))
    }

    fn val(&mut self, at: &Expr, second: bool) -> String {
        let (x, y) = self.elements(at);
        match (self.reads.d, self.reads.op) {
            (Domain::Sums, _) => x,
            (Domain::Inputs, Op::Sum) => format!("(double){x}"),
            (Domain::Inputs, Op::Dot) => match self.reads.product(second) {
                Product::Rounded(Format::F32) => format!("(double)({x} * {y})"),
                _ => format!("((double){x} * (double){y})"),
            },
        }
    }

    fn register(&mut self, format: Format, at: &Expr) -> String {
        format!("({}){}", register(format), self.val(at, false))
    }

    /// A minimum, and a product that saturates, are conditional
    /// expressions.
    fn precedence(&self, e: &Expr) -> u8 {
        match e {
            Expr::Min(..) | Expr::MulAdd(..) => 1,
            e => e.precedence(),
        }
    }

    fn expr(&mut self, e: &Expr) -> String {
        match e {
            Expr::Size(v) => num(*v),
            Expr::Zero => "0.0".into(),
            Expr::Flag(f) => u8::from(*f).to_string(),
            Expr::Var(v) => v.to_string(),
            Expr::Bin(..) => self.any(e),
            Expr::Min(a, b) => {
                let (a, b) = (self.operand(a, 4), self.operand(b, 4));
                format!("{a} < {b} ? {a} : {b}")
            }
            Expr::Cond(c, a, b) => format!(
                "{} ? {} : {}",
                self.operand(c, 2),
                self.operand(a, 2),
                self.operand(b, 1)
            ),
            Expr::MulAdd(a, b, c) => {
                let (a, b) = (self.operand(a, 5), self.operand(b, 5));
                match **c {
                    Expr::Size(0) => {
                        format!("{a} > (size_t)-1 / {b} ? (size_t)-1 : {a} * {b}")
                    }
                    _ => {
                        let c = self.operand(c, 5);
                        format!("{a} > ((size_t)-1 - {c}) / {b} ? (size_t)-1 : {c} + {a} * {b}")
                    }
                }
            }
            Expr::Widen(Format::F32, e) => format!("(double){}", self.operand(e, 9)),
            Expr::Widen(_, e) => self.any(e),
            Expr::Fin(e) => format!("fprev_fin(c, {})", self.any(e)),
            _ => unreachable!("spelled by Spell::any"),
        }
    }

    const END: &'static str = ";";

    fn condition(&mut self, c: &Expr) -> String {
        format!("({})", self.any(c))
    }

    fn declare(&mut self, name: &'static str, ty: Ty, value: &Expr, _: bool) -> String {
        format!("{} {name} = {}", c_ty(ty), self.any(value))
    }

    fn range(&mut self, var: &str, from: &Expr, to: &Expr, step: &Expr, reverse: bool) -> String {
        let (from, to) = (self.any(from), self.any(to));
        match (reverse, step) {
            (true, _) => format!("for (size_t {var} = {to}; {var}-- > {from};)"),
            (false, Expr::Size(1)) => format!("for (size_t {var} = {from}; {var} < {to}; {var}++)"),
            (false, step) => format!(
                "for (size_t {var} = {from}; {var} < {to}; {var} += {})",
                self.any(step)
            ),
        }
    }

    fn kahan(&mut self, part: usize, t: &str, e: &str, value: &str) -> String {
        format!("k{part}(&{t}, &{e}, {value})")
    }

    fn step(&mut self, acc: &str, at: &Expr, format: Format, fma: bool) -> String {
        let (x, y) = self.elements(at);
        match (register(format), self.reads.d, self.reads.op) {
            ("float", Domain::Inputs, Op::Sum) => format!("{acc} = {acc} + {x}"),
            ("float", Domain::Inputs, Op::Dot) if fma => format!("{acc} = fmaf({x}, {y}, {acc})"),
            // Apart, so that no compiler contracts them into an FMA.
            ("float", Domain::Inputs, Op::Dot) => {
                format!("{{ float p = {x} * {y}; {acc} = {acc} + p; }}")
            }
            ("float", Domain::Sums, _) => format!("{acc} = {acc} + (float){x}"),
            _ if fma => format!("{acc} = fma({x}, {y}, {acc})"),
            (_, Domain::Inputs, Op::Dot) if self.element == Format::F64 => {
                format!("{{ double p = {x} * {y}; {acc} = {acc} + p; }}")
            }
            _ => format!("{acc} = {acc} + {}", self.val(at, true)),
        }
    }

    fn release(&mut self, value: &Expr, array: &str, pad: &str) -> String {
        let frees = match array {
            "rotated" if self.reads.dot() => vec!["rx", "ry"],
            "rotated" => vec!["rx"],
            array if self.allocated.contains(array) => vec![array],
            _ => return self.stmt(&Stmt::Return(value.clone()), pad),
        };
        let mut b = format!("{pad}double out = {};\n", self.any(value));
        for array in frees {
            let _ = writeln!(b, "{pad}free({array});");
        }
        b + &format!("{pad}return out;\n")
    }

    fn special(&mut self, s: &Stmt, pad: &str) -> String {
        match s {
            Stmt::Array {
                name,
                ty,
                fixed: Some(len),
                ..
            } => format!("{pad}{} {name}[{len}];\n", c_ty(*ty)),
            Stmt::Array { name, ty, len, .. } => {
                self.allocated.insert(name);
                let count = self.operand(len, 5);
                self.allocate(name, c_ty(*ty), &count, pad, "return NAN;")
            }
            Stmt::Rotated { start } => {
                let t = self.values();
                let start = self.any(start);
                let mut b = self.allocate("rx", t, "n", pad, "return NAN;");
                let mut copy = format!("rx[i] = x[(({start}) + i) % n * s];");
                if self.reads.dot() {
                    b += &self.allocate("ry", t, "n", pad, "{ free(rx); return NAN; }");
                    copy += &format!(" ry[i] = y[(({start}) + i) % n * s];");
                }
                let _ = writeln!(b, "{pad}for (size_t i = 0; i < n; i++) {{ {copy} }}");
                b
            }
            _ => unreachable!("a statement of every language"),
        }
    }
}

impl Backend for C {
    const LANES: Lanes = Lanes::Registers;
    const SUMS: [&'static str; 3] = [
        "p + q",
        "(double)((float)p + (float)q)",
        "fprev_add_f32(p, q)",
    ];

    fn addition(&mut self, name: &str, sum: &str) {
        let q = self.qualifier();
        let _ = writeln!(
            self.protos,
            "{q}double {name}(double p, double q) {{ return {sum}; }}"
        );
    }

    fn kahan(&mut self, k: usize, name: &str, end: &str) {
        let q = self.qualifier();
        let _ = writeln!(
            self.protos,
            "{q}void k{k}(double *t, double *e, double v) {{\n    double y = {name}(v, \
             -*e);\n    double u = {name}(*t, y);\n    *e = {name}({name}(u, -*t), -y);\n    \
             *t = u;\n}}\n{q}double e{k}(double *c, double t, double e) {{\n    if (c) {{ *c \
             = e; return t; }}\n    return {end};\n}}"
        );
    }

    fn function(&mut self, walk: &Walk, f: &Func) {
        self.reads = walk.reading(f);
        self.allocated.clear();
        let sig = format!("{}double {}({})", self.qualifier(), f.name, self.params(f));
        let _ = writeln!(self.protos, "{sig};");
        // A parameter the body does not read, said so to the compiler.
        let unused: String = f
            .extra
            .iter()
            .filter(|(name, _)| !f.uses(name))
            .map(|(name, _)| format!("    (void){name};\n"))
            .collect();
        let body = self.block(&f.body, "    ");
        let _ = write!(self.bodies, "{sig} {{\n{unused}{body}}}\n\n");
    }

    fn finish(self, walk: &Walk, name: &str, what: &str) -> String {
        let plan = walk.plan;
        let mut out = String::new();
        let _ = writeln!(out, "/*");
        for line in what.lines() {
            let _ = writeln!(out, " * {line}");
        }
        let _ = writeln!(out, " *\n * The order: native:{}", plan.formula);
        for line in walk.described() {
            let _ = writeln!(out, " *   {line}");
        }
        let compile = match self.cuda {
            true => "nvcc -O3 (no --use_fast_math, which reorders and contracts additions)",
            false => {
                "cc -std=c99 -O3 -march=native: ISO C, so no a * b + c is contracted into an \
                 FMA; never -ffast-math, which reorders the additions"
            }
        };
        let _ = writeln!(
            out,
            " *\n * Compile: {compile}.\n * Each addition is rounded once to its part's format; \
             FLT_EVAL_METHOD must be 0\n * (SSE or AVX on x86-64, ARM), which is checked below.\n \
             * Written by fprev {}.\n */",
            env!("CARGO_PKG_VERSION")
        );
        out += "#include <stddef.h>\n#include <float.h>\n#include <math.h>\n";
        if self.alloc {
            out += "#include <stdlib.h>\n";
        }
        if walk.rounds_once {
            out += "#include <stdint.h>\n#include <string.h>\n";
        }
        out += "\n#if !defined(__CUDACC__) && defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0\n\
                #error \"additions must round to their own type (FLT_EVAL_METHOD 0): use SSE \
                (-msse2 -mfpmath=sse)\"\n#endif\n\n";
        let q = self.qualifier();
        let _ = writeln!(
            out,
            "{q}double fprev_fin(double *c, double v) {{\n    if (c) *c = 0.0;\n    return \
             v;\n}}\n"
        );
        if walk.rounds_once {
            let _ = writeln!(
                out,
                "/* p + q rounded once to f32: their double sum rounded to odd (a sticky last \
                 bit where it is inexact),\n * then to f32, which 53 bits hold without a second \
                 rounding. */\n{q}double fprev_add_f32(double p, double q) {{\n    double s = p + \
                 q;\n    double bp = s - q, bq = s - bp;\n    double e = (p - bp) + (q - bq);\n    \
                 if (e != 0.0 && s - s == 0.0) {{\n        uint64_t bits;\n        memcpy(&bits, \
                 &s, sizeof s);\n        if ((bits & 1) == 0) bits = ((e > 0) == (s > 0)) ? bits \
                 + 1 : bits - 1;\n        memcpy(&s, &bits, sizeof s);\n    }}\n    return \
                 (double)(float)s;\n}}\n"
            );
        }
        out += &self.protos;
        out.push('\n');
        out += &self.bodies;
        let t = self.ty;
        let (params, args) = match plan.op {
            Op::Sum => (format!("const {t} *x, size_t n"), "x, 1"),
            Op::Dot => (format!("const {t} *x, const {t} *y, size_t n"), "x, y, 1"),
        };
        let export = match self.cuda {
            true => "__device__ ",
            false => "",
        };
        let _ = writeln!(
            out,
            "/* {} of x[0..n){}, bit for bit as described above. */\n{export}{t} {name}({params}) \
             {{\n    if (n == 0) return 0;\n    return ({t})p0x({args}, n, n, NULL);\n}}",
            match plan.op {
                Op::Sum => "The sum",
                Op::Dot => "The dot product",
            },
            match plan.op {
                Op::Sum => "",
                Op::Dot => " and y[0..n)",
            },
        );
        if self.cuda {
            let (kparams, kargs) = match plan.op {
                Op::Sum => (format!("const {t} *x, size_t n"), "x, n"),
                Op::Dot => (format!("const {t} *x, const {t} *y, size_t n"), "x, y, n"),
            };
            let _ = writeln!(
                out,
                "\n#ifdef __CUDACC__\n/* One thread computes the whole sum: the order is \
                 sequential where the library's is.\n * Launch as {name}_kernel<<<1, 1>>>(...). */\n\
                 extern \"C\" __global__ void {name}_kernel({kparams}, {t} *out) {{\n    if \
                 (threadIdx.x == 0 && blockIdx.x == 0) *out = {name}({kargs});\n}}\n#endif"
            );
        }
        out
    }

    fn fused_chain(self, plan: &Plan, k: usize, name: &str, what: &str) -> String {
        fused_chain(plan, k, name, what, self.cuda)
    }
}

/// A C type holding values of `f`: 16-bit formats as their bits.
fn c_type(f: Format) -> &'static str {
    match f {
        Format::F64 => "double",
        Format::F32 => "float",
        _ => "uint16_t",
    }
}

/// The fused chain `fused:K` (C99, or CUDA C's `__device__` functions):
/// one helper adds a node's terms in its window, one rounds to a format.
fn fused_chain(plan: &Plan, k: usize, name: &str, what: &str, cuda: bool) -> String {
    let part = plan.parts[0];
    let fused = part.fused.expect("a fused chain");
    let q = match cuda {
        true => "static __device__ ",
        false => "static ",
    };
    let mut out = String::from("/*\n");
    for line in what.lines() {
        let _ = writeln!(out, " * {line}");
    }
    let _ = writeln!(
        out,
        " *\n * The order: native:{}: {}.\n *\n * Compile: {}.\n * Written by fprev {}.\n */",
        plan.formula,
        fused::words(plan, k),
        match cuda {
            true => "nvcc -O3",
            false => "cc -std=c99 -O3 -march=native",
        },
        env!("CARGO_PKG_VERSION")
    );
    out += "#include <stddef.h>\n#include <stdint.h>\n#include <limits.h>\n#include <math.h>\n\n";
    let element = Numbers::of(plan.element);
    if plan.element != Format::F32 {
        let _ = writeln!(
            out,
            "/* An {f} value's bits as a double. */\n{q}double fprev_in(uint16_t h) {{\n    int e \
             = (h >> {m}) & {top};\n    double m = (double)(h & {frac});\n    double v = e == 0 ? \
             ldexp(m, {sub}) : e == {top} ? (m != 0.0 ? NAN : INFINITY) : ldexp(m + {one}.0, e - \
             {shift});\n    return (h & 0x8000) ? -v : v;\n}}\n",
            f = plan.element,
            m = element.fraction,
            top = (1 << (15 - element.fraction)) - 1,
            frac = (1 << element.fraction) - 1,
            sub = 1 - element.bias - element.fraction as i32,
            one = 1 << element.fraction,
            shift = element.bias + element.fraction as i32,
        );
    }
    let _ = writeln!(
        out,
        "/* v rounded to `bits` bits (from 2^emin down, subnormal below), toward zero or to\n * \
         nearest even; past the largest finite value `max`, to it or to infinity. */\n{q}double \
         fprev_round(double v, int bits, int emin, double max, int toward_zero) {{\n    if (v == \
         0.0 || !isfinite(v)) return v;\n    int e = ilogb(v);\n    int q = (e > emin ? e : \
         emin) - (bits - 1);\n    double s = ldexp(v, -q);\n    double r = ldexp(toward_zero ? \
         trunc(s) : nearbyint(s), q);\n    if (fabs(r) > max) return copysign(toward_zero ? max \
         : INFINITY, v);\n    return r;\n}}\n"
    );
    let node = Numbers::of(part.format);
    let _ = writeln!(
        out,
        "/* One fused node of the terms t[0..m), aligned at the largest e[j] of a non-zero \
         term:\n * each truncated toward zero to {bits} bits below it, added exactly, rounded \
         once. */\n{q}double fprev_fused(const double *t, const int *e, int m) {{\n    int top \
         = INT_MIN;\n    for (int j = 0; j < m; j++) {{\n        if (!isfinite(t[j])) {{\n            \
         double s = 0.0;\n            for (int i = 0; i < m; i++) s += t[i];\n            \
         return s + t[j];\n        }}\n        if (t[j] != 0.0 && e[j] > top) top = e[j];\n    \
         }}\n    if (top == INT_MIN) return 0.0;\n    int q = top - {bits};\n    int64_t s = \
         0;\n    for (int j = 0; j < m; j++) s += (int64_t)trunc(ldexp(t[j], -q));\n    return \
         fprev_round(ldexp((double)s, q), {p}, {emin}, {max}, {tz});\n}}\n",
        bits = fused.bits,
        p = node.p,
        emin = node.emin,
        max = node.max,
        tz = i32::from(fused.rounding == crate::arith::Rounding::TowardZero),
    );
    let it = c_type(plan.element);
    let read = |v: &str| match plan.element {
        Format::F32 => format!("(double){v}"),
        _ => format!("fprev_in({v})"),
    };
    let (params, args, term) = match (plan.op, fused.aligns_factors) {
        (Op::Sum, _) => (
            format!("const {it} *x, size_t n"),
            "x",
            format!("    *t = {};\n    *e = ilogb(*t);", read("x[i]")),
        ),
        (Op::Dot, None) => (
            format!("const {it} *x, const {it} *y, size_t n"),
            "x, y",
            format!(
                "    *t = {} * {};\n    *e = ilogb(*t);",
                read("x[i]"),
                read("y[i]")
            ),
        ),
        (Op::Dot, Some(f)) => {
            let least = Numbers::of(f).emin;
            (
                format!("const {it} *x, const {it} *y, size_t n"),
                "x, y",
                format!(
                    "    double a = {}, b = {};\n    int ea = ilogb(a), eb = ilogb(b);\n    *t = \
                     a * b;\n    *e = (ea > {least} ? ea : {least}) + (eb > {least} ? eb : \
                     {least});",
                    read("x[i]"),
                    read("y[i]")
                ),
            )
        }
    };
    let tparams = params.replace(", size_t n", ", size_t i, double *t, int *e");
    let _ = writeln!(
        out,
        "/* Summand i and the exponent it aligns at. */\n{q}void fprev_term({tparams}) \
         {{\n{term}\n}}\n"
    );
    let rt = c_type(plan.result);
    let ret = match plan.result {
        Format::F32 => "(float)acc".to_string(),
        Format::F64 => "acc".to_string(),
        f => {
            let r = Numbers::of(f);
            let _ = writeln!(
                out,
                "/* An {f} value as its bits. */\n{q}uint16_t fprev_bits(double v) {{\n    \
                 uint16_t s = signbit(v) ? 0x8000 : 0;\n    double a = fabs(v);\n    if (isnan(v)) \
                 return s | {inf:#x} | {quiet:#x};\n    if (isinf(v)) return s | {inf:#x};\n    if \
                 (a < ldexp(1.0, {emin})) return s | (uint16_t)ldexp(a, {sub});\n    int e = \
                 ilogb(a);\n    return s | (uint16_t)((e + {bias}) << {m}) | (uint16_t)(ldexp(a, \
                 {m} - e) - {one}.0);\n}}\n",
                inf = ((1u32 << (15 - r.fraction)) - 1) << r.fraction,
                quiet = 1u32 << (r.fraction - 1),
                emin = r.emin,
                sub = r.bias - 1 + r.fraction as i32,
                bias = r.bias,
                m = r.fraction,
                one = 1u32 << r.fraction,
            );
            format!(
                "fprev_bits(fprev_round(acc, {}, {}, {}, 0))",
                r.p, r.emin, r.max
            )
        }
    };
    let export = match cuda {
        true => "__device__ ",
        false => "",
    };
    let g = k - 1;
    let _ = writeln!(
        out,
        "/* The {} of x[0..n){}, bit for bit as described above{}. */\n{export}{rt} \
         {name}({params}) {{\n    double t[{k}];\n    int e[{k}];\n    if (n == 0) return \
         0;\n    size_t first = n < {g} ? n : {g};\n    for (size_t i = 0; i < first; i++) \
         fprev_term({args}, i, &t[i], &e[i]);\n    double acc = first == 1 ? t[0] : \
         fprev_fused(t, e, (int)first);\n    for (size_t b = first; b < n; b += {g}) {{\n        \
         size_t m = n - b < {g} ? n - b : {g};\n        t[0] = acc;\n        e[0] = \
         ilogb(acc);\n        for (size_t j = 0; j < m; j++) fprev_term({args}, b + j, &t[1 + \
         j], &e[1 + j]);\n        acc = fprev_fused(t, e, (int)m + 1);\n    }}\n    return \
         {ret};\n}}",
        match plan.op {
            Op::Sum => "sum",
            Op::Dot => "dot product",
        },
        match plan.op {
            Op::Sum => "",
            Op::Dot => " and y[0..n)",
        },
        match (plan.element, plan.result) {
            (Format::F32, Format::F32) => String::new(),
            (e, r) => format!(
                " ({} as {}, the result {})",
                e,
                match e {
                    Format::F32 => "floats",
                    _ => "their bits",
                },
                match r {
                    Format::F16 | Format::Bf16 => format!("{r} bits"),
                    _ => format!("a {}", c_type(r)),
                }
            ),
        }
    );
    if cuda {
        let _ = writeln!(
            out,
            "\n#ifdef __CUDACC__\n/* One thread computes the whole chain. Launch as \
             {name}_kernel<<<1, 1>>>(...). */\nextern \"C\" __global__ void \
             {name}_kernel({params}, {rt} *out) {{\n    if (threadIdx.x == 0 && blockIdx.x == 0) \
             *out = {name}({args}, n);\n}}\n#endif"
        );
    }
    out
}
