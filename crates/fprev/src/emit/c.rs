//! C99 and CUDA C: the walk's functions (`walk.rs`), as code
//! (`code.rs`), printed as static functions, CUDA C's as `__device__`
//! functions with a one-thread kernel.
//!
//! Every function takes a strided view (`x[i * s]`, `i < n`) and, of a
//! part, `planned` and `c`, the error a compensated chain carries written
//! through it.

use std::collections::HashSet;
use std::fmt::Write;

use super::code::{Domain, Expr, Func, Math, Reading, Routine, Spell, Stmt, Ty};
use super::fused;
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
        Ty::Int => "int",
        Ty::Whole => "int64_t",
        Ty::Bits => "uint16_t",
        Ty::Reals | Ty::Ints => unreachable!("an array a parameter's type spells"),
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

    fn fma(&mut self, at: &Expr, onto: &str) -> String {
        let (x, y) = self.elements(at);
        format!("fma({x}, {y}, {onto})")
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
            Expr::Int(v) => v.to_string(),
            Expr::Real(v) => v.clone(),
            Expr::Math(f, args) => {
                let name = match f {
                    Math::Exp => "ilogb",
                    Math::Ldexp => "ldexp",
                    Math::Trunc => "trunc",
                    Math::RoundEven => "nearbyint",
                    Math::Abs => "fabs",
                    Math::CopySign => "copysign",
                    Math::Finite => "isfinite",
                    Math::IsNan => "isnan",
                    Math::Negative => "signbit",
                    Math::Infinity => return "INFINITY".into(),
                    Math::Nan => return "NAN".into(),
                };
                let args: Vec<String> = args.iter().map(|a| self.any(a)).collect();
                format!("{name}({})", args.join(", "))
            }
            Expr::Cast(ty, e) => format!("({}){}", c_ty(*ty), self.operand(e, 9)),
            Expr::Neg(e) => format!("-{}", self.operand(e, 9)),
            Expr::Not(e) => format!("!{}", self.operand(e, 9)),
            Expr::Whole(v) => v.to_string(),
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
            _ if fma => format!("{acc} = {}", self.fma(at, acc)),
            (_, Domain::Inputs, Op::Dot) if self.element == Format::F64 => {
                format!("{{ double p = {x} * {y}; {acc} = {acc} + p; }}")
            }
            _ => format!("{acc} = {acc} + {}", self.val(at, true)),
        }
    }

    fn release(&mut self, value: &Expr, arrays: &[&str], pad: &str) -> String {
        let frees: Vec<&str> = match arrays {
            ["gathered"] if self.reads.dot() => vec!["rx", "ry"],
            ["gathered"] => vec!["rx"],
            arrays => arrays
                .iter()
                .copied()
                .filter(|a| self.allocated.contains(a))
                .collect(),
        };
        if frees.is_empty() {
            return self.stmt(&Stmt::Return(value.clone()), pad);
        }
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
            Stmt::Gathered { index, len } => {
                let t = self.values();
                let (index, len) = (self.operand(index, 5), self.operand(len, 5));
                let mut b = self.allocate("rx", t, &len, pad, "return NAN;");
                let mut copy = format!("rx[i] = x[{index} * s];");
                if self.reads.dot() {
                    b += &self.allocate("ry", t, &len, pad, "{ free(rx); return NAN; }");
                    copy += &format!(" ry[i] = y[{index} * s];");
                }
                let _ = writeln!(b, "{pad}for (size_t i = 0; i < {len}; i++) {{ {copy} }}");
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
        self.chain(plan, k, name, what)
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

impl C {
    /// A helper of a fused chain.
    fn routine(&mut self, r: &Routine) -> String {
        let params: Vec<String> = r
            .params
            .iter()
            .map(|(name, ty)| match ty {
                Ty::Reals => format!("const double *{name}"),
                Ty::Ints => format!("const int *{name}"),
                ty => format!("{} {name}", c_ty(*ty)),
            })
            .collect();
        let doc = r.doc_lines(76).join("\n * ");
        format!(
            "/* {doc} */\n{}{} {}({}) {{\n{}}}\n\n",
            self.qualifier(),
            c_ty(r.ret),
            r.name,
            params.join(", "),
            self.block(&r.body, "    ")
        )
    }

    /// The fused chain `fused:K` (C99, or CUDA C's `__device__`
    /// functions), its helpers and loop as `fused.rs` writes them.
    fn chain(mut self, plan: &Plan, k: usize, name: &str, what: &str) -> String {
        let chain = fused::chain(plan, k, true, |base| format!("fprev_{base}"));
        let compile = match self.cuda {
            true => "Compile: nvcc -O3.",
            false => "Compile: cc -std=c99 -O3 -march=native.",
        };
        let mut out = String::from("/*\n");
        for line in fused::comment(plan, k, what, Some(compile)) {
            let _ = writeln!(out, "{}", format!(" * {line}").trim_end());
        }
        out += " */\n";
        out += "#include <stddef.h>\n#include <stdint.h>\n#include <math.h>\n\n";
        for r in &chain.helpers {
            out += &self.routine(r);
        }
        let it = c_type(plan.element);
        let (params, args) = match plan.op {
            Op::Sum => (format!("const {it} *x, size_t n"), "x, n"),
            Op::Dot => (format!("const {it} *x, const {it} *y, size_t n"), "x, y, n"),
        };
        let rt = c_type(plan.result);
        let export = match self.cuda {
            true => "__device__ ",
            false => "",
        };
        let (what, types) = fused::computes(plan);
        let and_y = match plan.op {
            Op::Sum => "",
            Op::Dot => " and y[0..n)",
        };
        let _ = writeln!(
            out,
            "/* The {what} of x[0..n){and_y}{types}, bit for bit as described above. */\n\
             {export}{rt} {name}({params}) {{\n{}}}",
            self.block(&chain.body, "    ")
        );
        if self.cuda {
            let _ = writeln!(
                out,
                "\n#ifdef __CUDACC__\n/* One thread computes the whole chain. Launch as \
                 {name}_kernel<<<1, 1>>>(...). */\nextern \"C\" __global__ void \
                 {name}_kernel({params}, {rt} *out) {{\n    if (threadIdx.x == 0 && blockIdx.x \
                 == 0) *out = {name}({args});\n}}\n#endif"
            );
        }
        out
    }
}
