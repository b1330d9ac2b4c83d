//! Python with NumPy: the walk's functions (`walk.rs`) as Python functions
//! over Python floats (IEEE doubles), so that every partial sum is a
//! `double` as in C, and each addition is rounded once to its part's
//! format.
//!
//! Every function takes a view of what it sums (`x`, its offset `o` and
//! stride `s`: element `i` is `x[o + i * s]`), the count `n`, `planned`,
//! and `c`: where its caller continues a compensated chain, a one-element
//! list the error the chain carries is written to, the sum returned as it
//! stands; otherwise `None`, and the chain ends here. Over the inputs,
//! `x` holds the arrays and the values made from them once (products of a
//! dot, rounded as each part reads them); over partial sums it is a list
//! of floats.
//!
//! The lanes of an interleave that sums each left to right (without
//! Kahan steps) run as one NumPy array of accumulators, all lanes a step
//! at a time: NumPy's elementwise addition of two float32 (or float64)
//! arrays is that many IEEE additions, and any other f32 addition (of an
//! exact product, a fused multiply-add) is rounded once elementwise,
//! through round-to-odd. Nothing calls a library reduction (`np.sum`,
//! `np.dot`, `math.fsum`): the code imitates those.

use std::fmt::Write;

use super::fused::{self, Numbers};
use super::plan::{Op, Part, Plan};
use super::walk::{self, Backend, Combine, Domain, Function, Helper, Lane, Shape, Walk};
use crate::arith::Product;
use crate::format::Format;

pub(super) fn source(plan: &Plan, name: &str, what: &str) -> Result<String, String> {
    let python = Python {
        name: name.to_string(),
        defs: String::new(),
        reads: false,
        round_once: false,
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
    defs: String,
    /// The function being written reads the inputs' values as lists.
    reads: bool,
    /// The runtime helpers the module needs: `_fprev_add_f32`,
    /// `_fprev_lanes`, `_fprev_add_f32_each`.
    round_once: bool,
    lanes: bool,
    each: bool,
}

/// Element `i` of list `list` in the view `o`, `s`.
fn at(list: &str, i: &str) -> String {
    match i {
        "0" => format!("{list}[o]"),
        _ => format!("{list}[o + ({i}) * s]"),
    }
}

impl Python {
    /// The kind of value part `k` reads from the inputs as its first
    /// operand or its second: `x` (an input), `p` (a product in f64,
    /// exact of f32 values), `p32` (a product rounded to f32).
    fn kind(&self, walk: &Walk, k: usize, second: bool) -> &'static str {
        match walk.plan.op {
            Op::Sum => "x",
            Op::Dot => match walk.product(k, second) {
                Product::Rounded(Format::F32) => "p32",
                _ => "p",
            },
        }
    }

    /// The list a function over `d` reads its first or second operands
    /// from.
    fn list(&mut self, d: Domain, second: bool) -> &'static str {
        match d {
            Domain::Sums => "x",
            Domain::Inputs => {
                self.reads = true;
                match second {
                    true => "vs",
                    false => "vf",
                }
            }
        }
    }

    /// Element `i` of the view over `d`, read as a first or second operand.
    fn val(&mut self, d: Domain, i: &str, second: bool) -> String {
        let list = self.list(d, second);
        at(list, i)
    }

    /// The statements reading the inputs' lists part `k` reads.
    fn prelude(&self, walk: &Walk, k: usize) -> String {
        let (f, s) = (self.kind(walk, k, false), self.kind(walk, k, true));
        match f == s {
            true => format!("    vf = vs = x.values('{f}')\n"),
            false => format!("    vf = x.values('{f}')\n    vs = x.values('{s}')\n"),
        }
    }

    /// Lanes as a NumPy array of a dtype, each step added by a function:
    /// of f32 or f64 where the steps are that format's own additions, else
    /// of f64 values, each step rounded once to f32 (a fused multiply-add
    /// among them: Python has none).
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

    /// The body of a function of shape `shape`.
    fn body(&mut self, walk: &Walk, f: &Function) -> String {
        let (k, d, a) = (f.k, f.d, f.add.as_str());
        let part = walk.part(k);
        let (step, end) = (self.name(&format!("k{k}")), self.name(&format!("e{k}")));
        match &f.shape {
            Shape::Sequential { .. }
            | Shape::Reverse
            | Shape::Halving { .. }
            | Shape::Strided { .. }
            | Shape::Blocked(_) => self.order(f, part),
            Shape::Interleave {
                lanes,
                inner,
                inner_part,
                outer,
                lane,
            } => {
                let generic = format!(
                    "[{inner}(x, o + r * s, s * k, (n - r + k - 1) // k, shortest, None) \
                     for r in range(k)]"
                );
                let lanes_of = match lane {
                    Some(lane) => {
                        let (dtype, add) = Python::lanes_of(*lane);
                        self.lanes = true;
                        self.each |= add == "_fprev_add_f32_each";
                        let call = match d {
                            Domain::Sums => format!(
                                "xs = np.array(x[o:o + n * s:s], {dtype})
        lanes = _fprev_lanes(xs, xs, 0, 1, n, k, {dtype}, {add})"
                            ),
                            Domain::Inputs => format!(
                                "lanes = _fprev_lanes(x.array('{}', {dtype}), x.array('{}', \
                                 {dtype}), o, s, n, k, {dtype}, {add})",
                                self.kind(walk, *inner_part, false),
                                self.kind(walk, *inner_part, true),
                            ),
                        };
                        format!(
                            "    if k == {lanes}:
        {call}
    else:
        lanes = {generic}
"
                        )
                    }
                    None => format!("    lanes = {generic}\n"),
                };
                format!(
                    "    k = min({lanes}, n)
    shortest = n // k
{lanes_of}    return {outer}(lanes, 0, 1, k, k, c)
"
                )
            }
            Shape::Blocks { size, inner, outer } => format!(
                "    sums = []
    for at in range(0, n, {size}):
        m = min({size}, n - at)
        sums.append({inner}(x, o + at * s, s, m, m, None))
    return {outer}(sums, 0, 1, len(sums), len(sums), c)
"
            ),
            Shape::Body {
                multiple: m,
                body,
                tail,
            } => {
                let carry = match part.compensated {
                    true => "e",
                    false => "None",
                };
                let mut b = format!("    cut = planned - planned % {m}\n");
                if part.compensated {
                    b += "    e = [0.0]\n";
                }
                match tail {
                    Some(tail) => {
                        let _ = write!(
                            b,
                            "    if cut == 0:
        return {tail}(x, o, s, n, planned, c)
    if cut >= n:
        return {body}(x, o, s, n, cut, c)
    total = {body}(x, o, s, cut, cut, {carry})
    r = {tail}(x, o + cut * s, s, n - cut, planned - cut, None)
"
                        );
                        b += &match part.compensated {
                            true => format!(
                                "    total, e = {step}(total, e[0], r)\n    return {end}(c, \
                                 total, e)\n"
                            ),
                            false => format!("    return _fprev_fin(c, {a}(total, r))\n"),
                        };
                    }
                    None => {
                        let v0 = self.val(d, "0", false);
                        let vs = self.list(d, true);
                        let _ = write!(
                            b,
                            "    if cut == 0:
        total, i = {v0}, 1
    else:
        total, i = {body}(x, o, s, cut, cut, {carry}), cut
"
                        );
                        b += &match part.compensated {
                            true => format!(
                                "    e = e[0]
    for q in {vs}[o + i * s:o + n * s:s]:
        total, e = {step}(total, e, q)
    return {end}(c, total, e)
"
                            ),
                            false => format!(
                                "    for q in {vs}[o + i * s:o + n * s:s]:
        total = {a}(total, q)
    return _fprev_fin(c, total)
"
                            ),
                        };
                    }
                }
                b
            }
            Shape::Halves {
                leaf,
                multiple,
                inner,
            } => {
                let rec = self.name(&format!("h{k}{}", d.letter()));
                let _ = write!(
                    self.defs,
                    "def {rec}(x, o, s, n):
    if n <= {leaf}:
        return {inner}(x, o, s, n, n, None)
    half = n // 2
    cut = half - half % {multiple}
    if cut == 0:
        cut = half
    return {a}({rec}(x, o, s, cut), {rec}(x, o + cut * s, s, n - cut))


"
                );
                format!(
                    "    if n <= {leaf}:
        return {inner}(x, o, s, n, n, c)
    return _fprev_fin(c, {rec}(x, o, s, n))
"
                )
            }
            Shape::Below {
                at: m,
                small,
                large,
            } => format!(
                "    if n < {m}:
        return {small}(x, o, s, n, n, c)
    return {large}(x, o, s, n, n, c)
"
            ),
            Shape::Windows {
                width: w,
                inner,
                again,
            } => format!(
                "    if n <= {w}:
        return {inner}(x, o, s, n, n, c)
    m = (n - 1) // {w} + 1
    low = (m * {w} - n) // 2
    sums = []
    for j in range(m):
        at = max(j * {w} - low, 0)
        end = min((j + 1) * {w} - low, n)
        sums.append({inner}(x, o + at * s, s, end - at, end - at, None))
    return {again}(sums, 0, 1, m, m, c)
"
            ),
            Shape::Split {
                blocks: p,
                inner,
                combine,
            } => {
                let combine = match combine {
                    Combine::Doubling(dbl) => format!("_fprev_fin(c, {dbl}(sums, m, {p}))"),
                    Combine::Outer(outer) => format!("{outer}(sums, 0, 1, m, m, c)"),
                };
                format!(
                    "    m = min({p}, n)
    size, longer = divmod(n, {p})
    sums = []
    at = 0
    for j in range(m):
        take = size + (1 if j < longer else 0)
        sums.append({inner}(x, o + at * s, s, take, take, None))
        at += take
    return {combine}
"
                )
            }
            Shape::Doubling { doubling } => {
                let vf = self.list(d, false);
                format!("    return _fprev_fin(c, {doubling}({vf}[o:o + n * s:s], n, n))\n")
            }
            Shape::Fold => {
                let rec = self.name(&format!("r{k}{}", d.letter()));
                let _ = write!(
                    self.defs,
                    "def {rec}(vf, vs, o, s, n, second):
    if n == 1:
        return vs[o] if second else vf[o]
    return {a}({rec}(vf, vs, o, s * 2, (n + 1) // 2, False),
               {rec}(vf, vs, o + s, s * 2, n // 2, True))


"
                );
                let (vf, vs) = (self.list(d, false), self.list(d, true));
                format!("    return _fprev_fin(c, {rec}({vf}, {vs}, o, s, n, False))\n")
            }
            Shape::Fanout(fan) => {
                let rec = self.name(&format!("r{k}{}", d.letter()));
                let _ = write!(
                    self.defs,
                    "def {rec}(vf, vs, o, s, n, r, stride, second):
    below = stride * {fan}
    total = vs[o + r * s] if second and stride >= n - r else vf[o + r * s]
    for i in range(1, {fan} + 1):
        child = r + i * stride
        if child >= n:
            break
        total = {a}(total, {rec}(vf, vs, o, s, n, child, below, True))
    return total


"
                );
                let (vf, vs) = (self.list(d, false), self.list(d, true));
                format!("    return _fprev_fin(c, {rec}({vf}, {vs}, o, s, n, 0, 1, False))\n")
            }
            Shape::Rotate { by, inner } => match d {
                Domain::Sums => format!(
                    "    start = {by} if {by} < n else 0
    v = x[o:o + n * s:s]
    return {inner}(v[start:] + v[:start], 0, 1, n, n, c)
"
                ),
                Domain::Inputs => {
                    format!("    return {inner}(x.rotated(o, s, n, {by}), 0, 1, n, n, c)\n")
                }
            },
            Shape::Pieces { steps, inner } => {
                let steps: Vec<String> = steps.iter().map(|s| s.to_string()).collect();
                let steps = steps.join(", ");
                format!(
                    "    at = 0
    total = 0.0
    some = False
    for step in ({steps},):
        while at < planned and planned - at >= step:
            p = {inner}(x, o + at * s, s, step, step, None)
            total = {a}(total, p) if some else p
            some = True
            at += step
    if at < n:
        p = {inner}(x, o + at * s, s, n - at, n - at, None)
        total = {a}(total, p) if some else p
    return _fprev_fin(c, total)
"
                )
            }
            Shape::KBlocks {
                size: q,
                unit,
                inner,
            } => {
                let half = match unit {
                    Some(u) => format!("(left // 2 + {u} - 1) // {u} * {u}"),
                    None => "(left + 1) // 2".to_string(),
                };
                format!(
                    "    at = 0
    total = 0.0
    some = False
    while at < n:
        left = n - at
        if left >= 2 * {q}:
            take = {q}
        elif left > {q}:
            take = {half}
        else:
            take = left
        p = {inner}(x, o + at * s, s, take, take, None)
        total = {a}(total, p) if some else p
        some = True
        at += take
    return _fprev_fin(c, total)
"
                )
            }
        }
    }

    /// The body of a reference order, which reads its operands as lists.
    fn order(&mut self, f: &Function, part: Part) -> String {
        let (k, d, a) = (f.k, f.d, f.add.as_str());
        let v0 = self.val(d, "0", false);
        let (vf, vs) = (self.list(d, false), self.list(d, true));
        match &f.shape {
            Shape::Sequential { .. } if part.compensated => {
                let (step, end) = (self.name(&format!("k{k}")), self.name(&format!("e{k}")));
                format!(
                    "    t, e = {v0}, 0.0
    for q in {vs}[o + s:o + n * s:s]:
        t, e = {step}(t, e, q)
    return {end}(c, t, e)
"
                )
            }
            Shape::Sequential { .. } => format!(
                "    acc = {v0}
    for q in {vs}[o + s:o + n * s:s]:
        acc = {a}(acc, q)
    return _fprev_fin(c, acc)
"
            ),
            Shape::Reverse => format!(
                "    if n == 1:
        return _fprev_fin(c, {v0})
    acc = {last}
    for i in range(n - 2, -1, -1):
        acc = {a}({vi}, acc)
    return _fprev_fin(c, acc)
",
                last = at(vs, "n - 1"),
                vi = at(vf, "i")
            ),
            Shape::Halving { binary_tree } => {
                let rec = self.name(&format!("r{k}{}", d.letter()));
                let cut = match binary_tree {
                    false => "h = n // 2",
                    true => "h = 1\n    while 2 * h < n:\n        h *= 2",
                };
                let _ = write!(
                    self.defs,
                    "def {rec}(vf, vs, o, s, n, second):
    if n == 1:
        return vs[o] if second else vf[o]
    if n == 2:
        return {a}(vf[o], vs[o + s])
    {cut}
    return {a}({rec}(vf, vs, o, s, h, False), {rec}(vf, vs, o + h * s, s, n - h, True))


"
                );
                format!("    return _fprev_fin(c, {rec}({vf}, {vs}, o, s, n, False))\n")
            }
            Shape::Strided { lanes, pairwise } => format!(
                "    m = min({lanes}, n)
    sums = []
    for r in range(m):
        acc = {vr}
        for q in {vs}[o + (r + {lanes}) * s:o + n * s:{lanes} * s]:
            acc = {a}(acc, q)
        sums.append(acc)
    return _fprev_fin(c, {pairwise}(sums, 0, m))
",
                vr = at(vf, "r")
            ),
            Shape::Blocked(size) => format!(
                "    total = 0.0
    for b in range(0, n, {size}):
        end = min(n, b + {size})
        acc = {vb}
        for q in {vs}[o + (b + 1) * s:o + end * s:s]:
            acc = {a}(acc, q)
        total = acc if b == 0 else {a}(total, acc)
    return _fprev_fin(c, total)
",
                vb = at(vf, "b")
            ),
            _ => unreachable!("an order's shape"),
        }
    }
}

impl Backend for Python {
    const ADDITION_FIRST: bool = true;

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

    fn begin(&mut self, _walk: &Walk, _k: usize, _d: Domain, _name: &str) {}

    fn helper(&mut self, walk: &Walk, k: usize, helper: Helper, name: &str) {
        let a = self.name(&format!("a{k}"));
        match helper {
            Helper::Addition => {
                let part = walk.part(k);
                let body = match part.format {
                    Format::F64 => "return p + q".to_string(),
                    // The double sum of two f32 values rounds to their f32 sum:
                    // 53 bits are at least 2 * 24 + 2, so rounding twice does
                    // not differ from rounding once.
                    _ if part.narrow => "return float(np.float32(p + q))".to_string(),
                    _ => {
                        self.round_once = true;
                        "return _fprev_add_f32(p, q)".to_string()
                    }
                };
                let _ = write!(self.defs, "def {name}(p, q):\n    {body}\n\n\n");
                if part.compensated {
                    let end = match part.drops_error {
                        true => "t".to_string(),
                        false => format!("{a}(t, -e)"),
                    };
                    let (step, fin) = (self.name(&format!("k{k}")), self.name(&format!("e{k}")));
                    let _ = write!(
                        self.defs,
                        "def {step}(t, e, v):
    y = {a}(v, -e)
    u = {a}(t, y)
    return u, {a}({a}(u, -t), -y)


def {fin}(c, t, e):
    if c is not None:
        c[0] = e
        return t
    return {end}


"
                    );
                }
            }
            Helper::Pairwise => {
                let _ = write!(
                    self.defs,
                    "def {name}(v, o, n):
    if n == 1:
        return v[o]
    h = n // 2
    return {a}({name}(v, o, h), {name}(v, o + h, n - h))


"
                );
            }
            Helper::Doubling => {
                let _ = write!(
                    self.defs,
                    "def {name}(v, m, ranks):
    p = 1
    while p <= ranks // 2:
        p *= 2
    folded = min(2 * (ranks - p), m)
    w = [{a}(v[i], v[i + 1]) if i + 1 < folded else v[i] for i in range(0, folded, 2)]
    w += v[folded:m]
    while len(w) > 1:
        w = [{a}(w[i], w[i + 1]) if i + 1 < len(w) else w[i] for i in range(0, len(w), 2)]
    return w[0]


"
                );
            }
        }
    }

    fn function(&mut self, walk: &Walk, f: Function) {
        self.reads = false;
        let body = self.body(walk, &f);
        let prelude = match self.reads {
            true => self.prelude(walk, f.k),
            false => String::new(),
        };
        let _ = write!(
            self.defs,
            "def {}(x, o, s, n, planned, c):\n{prelude}{body}\n\n",
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
        if self.round_once {
            out += "import struct\n\n";
        }
        out += "import numpy as np\n\n\n";
        out += RUNTIME;
        if self.round_once {
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

    fn fused_chain(self, plan: &Plan, k: usize, name: &str, what: &str) -> String {
        fused_chain(plan, k, name, what)
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

    def rotated(self, o, s, n, by):
        """The n inputs from o by s, from the by-th on (none past the last),
        then those before it."""
        start = by if by < n else 0

        def turn(a):
            v = a[o:o + n * s:s]
            return np.concatenate((v[start:], v[:start]))

        return _FprevInputs(turn(self.x), None if self.y is None else turn(self.y))


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

/// The fused chain `fused:K` in plain Python: a node's terms truncated to
/// Python integers and added exactly, the sum rounded once, as the C
/// printer's helpers do.
fn fused_chain(plan: &Plan, k: usize, name: &str, what: &str) -> String {
    let part = plan.parts[0];
    let fused = part.fused.expect("a fused chain");
    let mut out = String::new();
    for line in what.lines() {
        let _ = writeln!(out, "# {line}");
    }
    let _ = writeln!(
        out,
        "#\n# The order: native:{}: {}.\n# Written by fprev {}.\n\nimport math\n\nimport \
         numpy as np\n\n",
        plan.formula,
        fused::words(plan, k),
        env!("CARGO_PKG_VERSION")
    );
    let node = Numbers::of(part.format);
    let _ = write!(
        out,
        "def _{name}_round(v, bits, emin, top, toward_zero):
    \"\"\"v rounded to `bits` bits (from 2^emin down, subnormal below), toward
    zero or to nearest even; past the largest finite value `top`, to it or to
    infinity.\"\"\"
    if v == 0.0 or not math.isfinite(v):
        return v
    q = max(math.frexp(v)[1] - 1, emin) - (bits - 1)
    s = math.ldexp(v, -q)
    # copysign keeps a -0 that Python's integers would lose.
    r = math.ldexp(math.copysign(float(math.trunc(s) if toward_zero else round(s)), s), q)
    if abs(r) > top:
        return math.copysign(top if toward_zero else math.inf, v)
    return r


def _{name}_fused(t, e):
    \"\"\"One fused node of the terms t, aligned at the largest e[j] of a non-zero
    term: each truncated toward zero to {bits} bits below it, added exactly,
    rounded once.\"\"\"
    for bad in t:
        if not math.isfinite(bad):
            s = 0.0
            for v in t:
                s += v
            return s + bad
    tops = [ej for tj, ej in zip(t, e) if tj != 0.0]
    if not tops:
        return 0.0
    q = max(tops) - {bits}
    s = sum(int(math.ldexp(v, -q)) for v in t)
    return _{name}_round(math.ldexp(float(s), q), {p}, {emin}, {max}, {tz})


",
        bits = fused.bits,
        p = node.p,
        emin = node.emin,
        max = node.max,
        tz = match fused.rounding {
            crate::arith::Rounding::TowardZero => "True",
            crate::arith::Rounding::NearestEven => "False",
        },
    );
    let lead = "math.frexp(t)[1] - 1 if t != 0.0 else 0";
    let (params, term) = match (plan.op, fused.aligns_factors) {
        (Op::Sum, _) => ("x", format!("    t = x[i]\n    return t, {lead}")),
        (Op::Dot, None) => ("x, y", format!("    t = x[i] * y[i]\n    return t, {lead}")),
        (Op::Dot, Some(f)) => (
            "x, y",
            format!(
                "    a, b = x[i], y[i]\n    ea = math.frexp(a)[1] - 1 if a != 0.0 else {least}\n    \
                 eb = math.frexp(b)[1] - 1 if b != 0.0 else {least}\n    return a * b, max(ea, \
                 {least}) + max(eb, {least})",
                least = Numbers::of(f).emin
            ),
        ),
    };
    let _ = write!(
        out,
        "def _{name}_term({params}, i):\n    \"\"\"Summand i and the exponent it aligns \
         at.\"\"\"\n{term}\n\n\n"
    );
    let (dtype, ret) = match plan.result {
        Format::F16 => ("np.float16", "np.float16"),
        Format::F64 => ("np.float64", "np.float64"),
        _ => ("np.float32", "np.float32"),
    };
    let g = k - 1;
    let lists = match plan.op {
        Op::Sum => "    x = np.asarray(x).astype(np.float64).tolist()\n".to_string(),
        Op::Dot => "    x = np.asarray(x).astype(np.float64).tolist()\n    y = \
                    np.asarray(y).astype(np.float64).tolist()\n    if len(x) != len(y):\n        \
                    raise ValueError('x and y differ in length')\n"
            .to_string(),
    };
    let _ = write!(
        out,
        "def {name}({params}):
    \"\"\"The {what} of {params} (1-D arrays of {element} values{bf16}), as a {dtype},
    bit for bit as described above.\"\"\"
{lists}    n = len(x)
    if n == 0:
        return {ret}(0)
    first = min(n, {g})
    terms = [_{name}_term({params}, i) for i in range(first)]
    acc = terms[0][0] if first == 1 else _{name}_fused([t for t, _ in terms], [e for _, e in terms])
    for b in range(first, n, {g}):
        terms = [_{name}_term({params}, i) for i in range(b, min(n, b + {g}))]
        t = [acc] + [t for t, _ in terms]
        e = [math.frexp(acc)[1] - 1 if acc != 0.0 else 0] + [e for _, e in terms]
        acc = _{name}_fused(t, e)
    return {ret}({result})
",
        what = match plan.op {
            Op::Sum => "sum",
            Op::Dot => "dot product",
        },
        element = plan.element,
        bf16 = match plan.element {
            Format::Bf16 => ", ml_dtypes.bfloat16",
            _ => "",
        },
        // Rounded here, so that NumPy's cast is exact (and warns of no
        // overflow).
        result = match plan.result {
            Format::F64 => "acc".into(),
            f => {
                let r = Numbers::of(f);
                format!("_{name}_round(acc, {}, {}, {}, False)", r.p, r.emin, r.max)
            }
        },
    );
    out
}
