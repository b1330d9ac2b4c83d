//! Python with NumPy: the walk's functions (`walk.rs`), as code
//! (`code.rs`), printed as Python functions over Python floats (IEEE
//! doubles), so that every partial sum is a `double` as in C, and each
//! addition is rounded once to its part's format.
//!
//! Every function takes a view of what it sums (`x`, its offset `o` and
//! stride `s`: element `i` is `x[o + i * s]`), the count `n` and, of a
//! part, `planned` and `c`: where its caller continues a compensated
//! chain, a one-element list the error the chain carries is written to,
//! the sum returned as it stands; otherwise `None`, and the chain ends
//! here. Over the inputs, `x` holds the arrays and the values made from
//! them once (products of a dot, rounded as each part reads them); over
//! partial sums it is a list of floats.
//!
//! The lanes of an interleave that sums each left to right (without
//! Kahan steps) run as one NumPy array of accumulators, all lanes a step
//! at a time: NumPy's elementwise addition of two float32 (or float64)
//! arrays is that many IEEE additions, and any other f32 addition (of an
//! exact product, a fused multiply-add) is rounded once elementwise,
//! through round-to-odd. Nothing calls a library reduction (`np.sum`,
//! `np.dot`, `math.fsum`): the code imitates those.

use std::collections::HashSet;
use std::fmt::Write;

use super::code::{Bin, Domain, Expr, Func, Lane, Math, Reading, Spell, Stmt, Ty};
use super::fused;
use super::lower::Lanes;
use super::plan::{Op, Part, Plan};
use super::walk::{self, Backend, Walk};
use crate::arith::Product;
use crate::format::Format;

pub(super) fn source(plan: &Plan, name: &str, what: &str) -> Result<String, String> {
    let python = Python {
        name: name.to_string(),
        parts: plan.parts.clone(),
        reads: Reading::inputs(plan.op),
        cells: HashSet::new(),
        defs: String::new(),
        read: false,
        lanes: false,
        each: false,
    };
    walk::source(plan, python, name, what)
}

/// The Python printer: every definition in the order written.
struct Python {
    /// The public function's name, which every helper of it starts with,
    /// so that functions emitted apart can share a module.
    name: String,
    /// The plan's parts.
    parts: Vec<Part>,
    /// What the function being printed reads.
    reads: Reading,
    /// Its error cells (one-element lists).
    cells: HashSet<&'static str>,
    defs: String,
    /// The function being printed reads the inputs' values as lists.
    read: bool,
    /// The runtime helpers the module needs: `_fprev_lanes`,
    /// `_fprev_add_f32_each`.
    lanes: bool,
    each: bool,
}

/// The kind of value a part reads from the inputs, rounding products as
/// `product`: `x` (an input), `p` (a product in f64, exact of f32
/// values), `p32` (a product rounded to f32).
fn kind(op: Op, product: Product) -> &'static str {
    match (op, product) {
        (Op::Sum, _) => "x",
        (Op::Dot, Product::Rounded(Format::F32)) => "p32",
        (Op::Dot, _) => "p",
    }
}

/// Lanes as a NumPy array of a dtype, each step added by a function: of
/// f32 or f64 where the steps are that format's own additions, else of
/// f64 values, each step rounded once to f32 (a fused multiply-add among
/// them: Python has none).
fn lanes_of(lane: Lane) -> (&'static str, &'static str) {
    match lane {
        Lane::Registers {
            format: Format::F64,
            ..
        } => ("np.float64", "np.add"),
        Lane::Registers { fma: false, .. } => ("np.float32", "np.add"),
        _ => ("np.float64", "_fprev_add_f32_each"),
    }
}

impl Python {
    /// The view's offset plus `at`.
    fn offset(&mut self, at: &Expr) -> String {
        self.any(&(Expr::Var("o") + at.clone()))
    }

    /// The statements reading the inputs' lists the function reads.
    fn prelude(&self) -> String {
        let (f, s) = (
            kind(self.reads.op, self.reads.first),
            kind(self.reads.op, self.reads.second),
        );
        match f == s {
            true => format!("    vf = vs = x.values('{f}')\n"),
            false => format!("    vf = x.values('{f}')\n    vs = x.values('{s}')\n"),
        }
    }
}

impl Spell for Python {
    const CARRY: [&'static str; 3] = ["c", "None", "e"];

    fn reading(&self) -> Reading {
        self.reads
    }

    fn strided(&mut self, from: &Expr, step: &Expr) -> String {
        let o = self.offset(&(from.clone() * Expr::Var("s")));
        let s = self.any(&(Expr::Var("s") * step.clone()));
        format!("x, {o}, {s}")
    }

    fn local(&self, names: &[&str]) -> String {
        format!("{}, 0, 1", names[0])
    }

    /// An exponent is a difference, and `not` binds as loosely as a
    /// comparison.
    fn precedence(&self, e: &Expr) -> u8 {
        match e {
            Expr::Math(Math::Exp, _) => 4,
            Expr::Not(_) => 3,
            e => e.precedence(),
        }
    }

    fn symbol(&self, op: Bin) -> &'static str {
        match op {
            Bin::Div => "//",
            Bin::And => "and",
            Bin::Or => "or",
            op => op.symbol(),
        }
    }

    fn val(&mut self, at: &Expr, second: bool) -> String {
        let at = self.offset(at);
        match (self.reads.d, second) {
            (Domain::Sums, _) => format!("x[{at}]"),
            (Domain::Inputs, second) => {
                self.read = true;
                match second {
                    true => format!("vs[{at}]"),
                    false => format!("vf[{at}]"),
                }
            }
        }
    }

    fn register(&mut self, _: Format, _: &Expr) -> String {
        unreachable!("Python keeps lanes in arrays")
    }

    fn fma(&mut self, _: &Expr, _: &str) -> String {
        unreachable!("Python refuses exact products of f64 values (Backend::refuses)")
    }

    fn expr(&mut self, e: &Expr) -> String {
        match e {
            Expr::Size(v) => v.to_string(),
            Expr::Zero => "0.0".into(),
            Expr::Flag(true) => "True".into(),
            Expr::Flag(false) => "False".into(),
            Expr::Var(v) if self.cells.contains(v) => format!("{v}[0]"),
            Expr::Var(v) => v.to_string(),
            Expr::Bin(..) => self.any(e),
            Expr::Min(a, b) => format!("min({}, {})", self.any(a), self.any(b)),
            Expr::Cond(c, a, b) => format!(
                "{} if {} else {}",
                self.operand(a, 2),
                self.operand(c, 2),
                self.operand(b, 1)
            ),
            Expr::MulAdd(a, b, c) => self.any(&(*c.clone() + *a.clone() * *b.clone())),
            Expr::Widen(_, e) => self.any(e),
            Expr::Fin(e) => format!("_fprev_fin(c, {})", self.any(e)),
            Expr::Int(v) => v.to_string(),
            Expr::Real(v) => v.clone(),
            Expr::Math(f, args) => {
                let args: Vec<String> = args.iter().map(|a| self.any(a)).collect();
                match f {
                    Math::Exp => format!("math.frexp({})[1] - 1", args[0]),
                    Math::Ldexp => format!("math.ldexp({}, {})", args[0], args[1]),
                    Math::Trunc => format!("float(math.trunc({}))", args[0]),
                    Math::RoundEven => format!("float(round({}))", args[0]),
                    Math::Abs => format!("abs({})", args[0]),
                    Math::CopySign => format!("math.copysign({}, {})", args[0], args[1]),
                    Math::Finite => format!("math.isfinite({})", args[0]),
                    Math::Infinity => "math.inf".into(),
                    Math::IsNan | Math::Negative | Math::Nan => {
                        unreachable!("Python reads 16-bit values as doubles")
                    }
                }
            }
            // Truncated to an integer, which Python's are exactly.
            Expr::Cast(Ty::Whole, e) => match &**e {
                Expr::Math(Math::Trunc, v) => format!("math.trunc({})", self.any(&v[0])),
                e => format!("int({})", self.any(e)),
            },
            Expr::Cast(Ty::Real, e) => format!("float({})", self.any(e)),
            Expr::Cast(Ty::Reg(f), e) => format!("{}({})", dtype(*f), self.any(e)),
            Expr::Cast(..) => unreachable!("Python reads 16-bit values as doubles"),
            Expr::Neg(e) => format!("-{}", self.operand(e, 9)),
            Expr::Not(e) => format!("not {}", self.operand(e, 9)),
            Expr::Whole(v) => v.to_string(),
            Expr::Lanes { part, lane } => {
                let (dtype, add) = lanes_of(*lane);
                self.lanes = true;
                self.each |= add == "_fprev_add_f32_each";
                let arrays = match self.reads.d {
                    Domain::Sums => format!("np.array(x, {dtype}), np.array(x, {dtype})"),
                    Domain::Inputs => {
                        let inner = self.parts[*part];
                        format!(
                            "x.array('{}', {dtype}), x.array('{}', {dtype})",
                            kind(self.reads.op, inner.first),
                            kind(self.reads.op, inner.second)
                        )
                    }
                };
                format!("_fprev_lanes({arrays}, o, s, n, k, {dtype}, {add})")
            }
            _ => unreachable!("spelled by Spell::any"),
        }
    }

    const END: &'static str = "";

    fn declare(&mut self, name: &'static str, ty: Ty, value: &Expr, _: bool) -> String {
        match ty {
            Ty::Error => {
                self.cells.insert(name);
                format!("{name} = [0.0]")
            }
            _ => format!("{name} = {}", self.any(value)),
        }
    }

    fn range(&mut self, var: &str, from: &Expr, to: &Expr, step: &Expr, reverse: bool) -> String {
        let bounds = match (from, step) {
            (Expr::Size(0), Expr::Size(1)) => self.any(to),
            (from, Expr::Size(1)) => format!("{}, {}", self.any(from), self.any(to)),
            (from, step) => format!("{}, {}, {}", self.any(from), self.any(to), self.any(step)),
        };
        match reverse {
            true => format!("for {var} in reversed(range({bounds}))"),
            false => format!("for {var} in range({bounds})"),
        }
    }

    fn branches(&mut self, head: &str, then: &[Stmt], other: &[Stmt], pad: &str) -> String {
        let inner = format!("{pad}    ");
        let mut b = format!("{pad}{head}:\n{}", self.block(then, &inner));
        if !other.is_empty() {
            b += &format!("{pad}else:\n{}", self.block(other, &inner));
        }
        b
    }

    fn kahan(&mut self, part: usize, t: &str, e: &str, value: &str) -> String {
        let step = self.name(&format!("k{part}"));
        let e = format!("{e}[0]");
        format!("{t}, {e} = {step}({t}, {e}, {value})")
    }

    fn step(&mut self, _: &str, _: &Expr, _: Format, _: bool) -> String {
        unreachable!("Python keeps lanes in arrays")
    }

    fn special(&mut self, s: &Stmt, pad: &str) -> String {
        match s {
            Stmt::Array { name, ty, len, .. } => {
                let zero = match ty {
                    Ty::Flag => "False",
                    _ => "0.0",
                };
                format!("{pad}{name} = [{zero}] * {}\n", self.operand(len, 5))
            }
            Stmt::Gathered { index, len } => {
                let (index, len) = (self.any(index), self.any(len));
                let places = format!("[{index} for i in range({len})]");
                match self.reads.d {
                    Domain::Sums => format!("{pad}rx = [x[o + j * s] for j in {places}]\n"),
                    Domain::Inputs => format!("{pad}rx = x.gathered(o, s, {places})\n"),
                }
            }
            _ => unreachable!("a statement of every language"),
        }
    }
}

impl Backend for Python {
    const LANES: Lanes = Lanes::Arrays;
    // The double sum of two f32 values rounds to their f32 sum: 53 bits are
    // at least 2 * 24 + 2, so rounding twice does not differ from rounding
    // once.
    const SUMS: [&'static str; 3] = ["p + q", "float(np.float32(p + q))", "_fprev_add_f32(p, q)"];

    fn refuses(&self, plan: &Plan) -> Result<(), String> {
        let exact = |p: &Part| p.first == Product::Exact || p.second == Product::Exact;
        if plan.op == Op::Dot && plan.element == Format::F64 && plan.parts.iter().any(exact) {
            return Err(
                "its products of f64 values enter their additions exact (fused multiply-adds), \
                 which Python writes only from 3.13 (math.fma): emit it in C, CUDA C or Rust"
                    .into(),
            );
        }
        Ok(())
    }

    /// A helper's name: the public name, then what it is.
    fn name(&self, base: &str) -> String {
        format!("_{}_{base}", self.name)
    }

    fn addition(&mut self, name: &str, sum: &str) {
        let _ = write!(self.defs, "def {name}(p, q):\n    return {sum}\n\n\n");
    }

    fn kahan(&mut self, k: usize, name: &str, end: &str) {
        let (step, fin) = (self.name(&format!("k{k}")), self.name(&format!("e{k}")));
        let _ = write!(
            self.defs,
            "def {step}(t, e, v):
    y = {name}(v, -e)
    u = {name}(t, y)
    return u, {name}({name}(u, -t), -y)


def {fin}(c, t, e):
    if c is not None:
        c[0] = e
        return t
    return {end}


"
        );
    }

    fn function(&mut self, walk: &Walk, f: &Func) {
        self.reads = walk.reading(f);
        self.read = false;
        self.cells.clear();
        let body = self.block(&f.body, "    ");
        let prelude = match self.read {
            true => self.prelude(),
            false => String::new(),
        };
        let params = f.params(|name, _, _| name.to_string(), "c");
        let _ = write!(
            self.defs,
            "def {}(x, o, s, {params}):\n{prelude}{body}\n\n",
            f.name
        );
    }

    fn finish(self, walk: &Walk, name: &str, what: &str) -> String {
        let plan = walk.plan;
        let mut out = String::new();
        for line in what.lines() {
            let _ = writeln!(out, "# {line}");
        }
        let _ = writeln!(out, "#\n# The order: native:{}", plan.formula);
        for line in walk.described() {
            let _ = writeln!(out, "#   {line}");
        }
        let _ = write!(
            out,
            "#
# Each addition is rounded once to its part's format: an f64 addition is
# Python's, an f32 addition of f32 values NumPy's float32 one, any other f32
# addition the exact sum rounded once (through round-to-odd). Only NumPy's
# elementwise arithmetic is used, never a library reduction.
# Written by fprev {}.

",
            env!("CARGO_PKG_VERSION")
        );
        if walk.rounds_once {
            out += "import struct\n\n";
        }
        out += "import numpy as np\n\n\n";
        out += RUNTIME;
        if walk.rounds_once {
            out += ADD_F32;
        }
        if self.lanes {
            out += LANES;
        }
        if self.each {
            out += ADD_F32_EACH;
        }
        out += &self.defs;
        let t = match plan.element {
            Format::F32 => "np.float32",
            _ => "np.float64",
        };
        let (params, what, inputs) = match plan.op {
            Op::Sum => (
                "x",
                "The sum of x",
                format!("    x = np.asarray(x, {t})\n    inputs = _FprevInputs(x, None)\n"),
            ),
            Op::Dot => (
                "x, y",
                "The dot product of x and y",
                format!(
                    "    x, y = np.asarray(x, {t}), np.asarray(y, {t})
    if len(x) != len(y):
        raise ValueError('x and y differ in length')
    inputs = _FprevInputs(x, y)
"
                ),
            ),
        };
        let _ = write!(
            out,
            "def {name}({params}):
    \"\"\"{what} (1-D, taken as {t}), as a {t}, bit for bit as described above.\"\"\"
{inputs}    n = len(x)
    if n == 0:
        return {t}(0)
    with np.errstate(all='ignore'):
        return {t}(_{name}_p0x(inputs, 0, 1, n, n, None))
"
        );
        out
    }

    fn fused_chain(self, plan: &Plan, k: usize, _: &str, what: &str) -> String {
        self.chain(plan, k, what)
    }
}

/// What every emitted module holds: the inputs as its functions read them,
/// and the end of a sum that continues no compensated chain.
const RUNTIME: &str = r#"class _FprevInputs:
    """The inputs, and each kind of value read from them made once: 'x' (an
    input), 'p' (a product in f64, exact of f32 values), 'p32' (a product
    rounded to f32), as an array of a dtype or a list of floats."""

    def __init__(self, x, y):
        self.x, self.y, self.made = x, y, {}

    def array(self, kind, dtype=np.float64):
        key = (kind, dtype)
        if key not in self.made:
            if kind == 'x':
                v = self.x
            else:
                v = self.x.astype(np.float64) * self.y.astype(np.float64)
                if kind == 'p32':
                    v = v.astype(np.float32)
            self.made[key] = v.astype(dtype, copy=False)
        return self.made[key]

    def values(self, kind):
        key = (kind, list)
        if key not in self.made:
            self.made[key] = self.array(kind).tolist()
        return self.made[key]

    def gathered(self, o, s, index):
        """The inputs from o by s at the places index lists, in its
        order."""
        at = o + s * np.asarray(index, dtype=np.int64)
        return _FprevInputs(self.x[at], None if self.y is None else self.y[at])


def _fprev_fin(c, v):
    if c is not None:
        c[0] = 0.0
    return v


"#;

/// The f32 addition of any two doubles, rounded once.
const ADD_F32: &str = r#"def _fprev_add_f32(p, q):
    """p + q rounded once to f32: their double sum rounded to odd (a sticky
    last bit where it is inexact), then to f32, which 53 bits hold without
    a second rounding."""
    s = p + q
    bp = s - q
    bq = s - bp
    e = (p - bp) + (q - bq)
    if e != 0.0 and s - s == 0.0:
        bits = struct.unpack('<Q', struct.pack('<d', s))[0]
        if bits & 1 == 0:
            bits = bits + 1 if (e > 0) == (s > 0) else bits - 1
        s = struct.unpack('<d', struct.pack('<Q', bits))[0]
    return float(np.float32(s))


"#;

/// Lanes of a left-to-right loop, all a step at a time.
const LANES: &str = r#"def _fprev_lanes(v, w, o, s, n, k, dtype, add):
    """k lanes of the n values from o by s, lane r summing values r, r + k,
    ... left to right: its first from v, the rest added from w by add, all
    lanes one step at a time as one array of dtype."""
    rows = n // k
    acc = np.array(v[o:o + k * s:s], dtype)
    w = w[o:o + n * s:s]
    for row in w[:rows * k].reshape(rows, k)[1:]:
        acc = add(acc, row)
    rest = n - rows * k
    if rest:
        acc[:rest] = add(acc[:rest], w[rows * k:])
    return acc.tolist()


"#;

/// The f32 additions of lanes, each rounding an exact sum once.
const ADD_F32_EACH: &str = r#"def _fprev_add_f32_each(acc, p):
    """acc + p rounded once to f32, elementwise (of f32 or f64 values, such
    as exact products): the double sum rounded to odd, then to f32."""
    a = acc.astype(np.float64)
    s = a + p
    bp = s - p
    bq = s - bp
    e = (a - bp) + (p - bq)
    bits = s.view(np.uint64)
    # Rounded to odd: toward zero (one step down where s is past the exact
    # sum), the last bit set; where the sum is exact (or not finite: e is
    # then NaN), s itself.
    past = ((e * s) < 0).astype(np.uint64)
    odd = (bits - past) | np.uint64(1)
    return np.where(np.abs(e) > 0, odd, bits).view(np.float64).astype(np.float32)


"#;

impl Python {
    /// The fused chain `fused:K` in plain Python, its helpers and loop
    /// as `fused.rs` writes them: a node's terms truncated to Python
    /// integers and added exactly.
    fn chain(mut self, plan: &Plan, k: usize, what: &str) -> String {
        let chain = fused::chain(plan, k, false, |base| self.name(base));
        let name = self.name.clone();
        let mut out = String::new();
        for line in fused::comment(plan, k, what, None) {
            let _ = writeln!(out, "{}", format!("# {line}").trim_end());
        }
        out += "\nimport math\n\nimport numpy as np\n\n\n";
        for r in &chain.helpers {
            let params: Vec<&str> = r.params.iter().map(|(name, _)| *name).collect();
            let _ = write!(
                out,
                "def {}({}):\n    \"\"\"{}\"\"\"\n{}\n\n",
                r.name,
                params.join(", "),
                r.doc_lines(72).join("\n    "),
                self.block(&r.body, "    ")
            );
        }
        let (params, lists) = match plan.op {
            Op::Sum => ("x", "    x = np.asarray(x).astype(np.float64).tolist()\n"),
            Op::Dot => (
                "x, y",
                "    x = np.asarray(x).astype(np.float64).tolist()\n    y = \
                 np.asarray(y).astype(np.float64).tolist()\n    if len(x) != len(y):\n        \
                 raise ValueError('x and y differ in length')\n",
            ),
        };
        let _ = write!(
            out,
            "def {name}({params}):\n    \"\"\"The {what} of {params} (1-D arrays of {element} \
             values{bf16}), as a {dtype},\n    bit for bit as described above.\"\"\"\n{lists}    n \
             = len(x)\n{body}",
            what = fused::computes(plan).0,
            element = plan.element,
            bf16 = match plan.element {
                Format::Bf16 => ", ml_dtypes.bfloat16",
                _ => "",
            },
            dtype = dtype(plan.result),
            body = self.block(&chain.body, "    "),
        );
        out
    }
}

/// The NumPy type of a result of `f`.
fn dtype(f: Format) -> &'static str {
    match f {
        Format::F16 => "np.float16",
        Format::F64 => "np.float64",
        _ => "np.float32",
    }
}
