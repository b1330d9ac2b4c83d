//! C99 and CUDA C: one static function per part of the formula and per
//! kind of value it sums (the inputs, or partial sums in `double`), each
//! mirroring that part's loop in `formula/eval.rs`.
//!
//! Every function takes a strided view (`x[i * s]`, `i < n`), the count
//! its body and pieces are cut for (`planned`), and `c`: where its caller
//! continues a compensated chain, the error the chain carries is written
//! there and the sum returned as it stands; otherwise the chain ends here.

use std::collections::HashMap;
use std::fmt::Write;

use super::plan::{Op, Part, Plan, preorder};
use crate::arith::Product;
use crate::format::Format;
use crate::formula::{Formula, Tail};
use crate::order::Order;

/// What a function sums: the inputs (products, of a dot) or partial sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Domain {
    Inputs,
    Sums,
}

impl Domain {
    pub(super) fn letter(self) -> char {
        match self {
            Domain::Inputs => 'x',
            Domain::Sums => 'v',
        }
    }
}

/// Why emitted code does not write part `f` (of arithmetic `part`) over
/// `d`, if it does not: every printer refuses the same parts.
pub(super) fn writable(plan: &Plan, f: &Formula, part: Part, d: Domain) -> Result<(), String> {
    let compensable = matches!(f, Formula::Order(Order::Sequential) | Formula::Body(..));
    if part.compensated && !compensable {
        return Err(format!(
            "the part {f} takes compensated steps; emitted code writes them only in a \
             left-to-right loop and a body's last addition"
        ));
    }
    let roles_agree = part.first == part.second || plan.op == Op::Sum || d == Domain::Sums;
    let role_aware = matches!(
        f,
        Formula::Order(Order::Sequential | Order::Reverse | Order::Pairwise | Order::BinaryTree)
            | Formula::Fold
            | Formula::Fanout(_)
            | Formula::Body(..)
    );
    if !roles_agree && !role_aware {
        return Err(format!(
            "the part {f} reads products rounded two ways ({} first, {} after); emitted code \
             does so only in loops, halvings and bodies",
            part.first, part.second
        ));
    }
    match f {
        Formula::Body(_, _, Tail::First) | Formula::Peel(..) => Err(format!(
            "the part {f} starts lanes with summands of its own; emitted code does not write it \
             yet"
        )),
        Formula::Order(Order::Fused(_)) => {
            Err("fused nodes are not emitted: emitted code makes IEEE additions".into())
        }
        _ => Ok(()),
    }
}

/// Lanes of `ty` registers: the first summand read by `init`, the rest
/// added by `step` (a statement), both given the index expression.
struct Lane {
    ty: &'static str,
}

pub(super) fn source(plan: &Plan, name: &str, what: &str, cuda: bool) -> Result<String, String> {
    if let Some(k) = plan.fused_chain() {
        return Ok(fused_chain(plan, k, name, what, cuda));
    }
    let parts = preorder(&plan.formula);
    let ids = parts
        .iter()
        .enumerate()
        .map(|(k, f)| (*f as *const Formula, k))
        .collect();
    let mut g = Gen {
        plan,
        parts,
        ids,
        cuda,
        ty: match plan.element {
            Format::F32 => "float",
            _ => "double",
        },
        protos: String::new(),
        bodies: String::new(),
        done: HashMap::new(),
        helpers: Vec::new(),
        round_once: false,
        alloc: false,
        fma: false,
    };
    g.function(0, Domain::Inputs)?;
    Ok(g.finish(name, what))
}

struct Gen<'p> {
    plan: &'p Plan,
    parts: Vec<&'p Formula>,
    ids: HashMap<*const Formula, usize>,
    cuda: bool,
    /// The C type of the inputs.
    ty: &'static str,
    protos: String,
    bodies: String,
    done: HashMap<(usize, Domain), ()>,
    /// Per-part helpers written once: (part, kind).
    helpers: Vec<(usize, &'static str)>,
    round_once: bool,
    alloc: bool,
    fma: bool,
}

/// A size as a C expression of type `size_t`.
fn num(v: usize) -> String {
    match v < 1 << 31 {
        true => v.to_string(),
        false => format!("((size_t){v}ULL)"),
    }
}

impl<'p> Gen<'p> {
    fn id(&self, f: &Formula) -> usize {
        self.ids[&(f as *const Formula)]
    }

    fn part(&self, k: usize) -> Part {
        self.plan.parts[k]
    }

    fn qualifier(&self) -> &'static str {
        match self.cuda {
            true => "static __device__ ",
            false => "static ",
        }
    }

    /// The parameters of a function over `d`, before `n`.
    fn params(&self, d: Domain) -> String {
        match (d, self.plan.op) {
            (Domain::Sums, _) => "const double *x, size_t s".into(),
            (Domain::Inputs, Op::Sum) => format!("const {} *x, size_t s", self.ty),
            (Domain::Inputs, Op::Dot) => {
                format!("const {t} *x, const {t} *y, size_t s", t = self.ty)
            }
        }
    }

    /// The view from element `off`, every `mul`-th element.
    fn view(&self, d: Domain, off: &str, mul: &str) -> String {
        match (d, self.plan.op) {
            (Domain::Inputs, Op::Dot) => {
                format!("x + ({off}) * s, y + ({off}) * s, s * ({mul})")
            }
            _ => format!("x + ({off}) * s, s * ({mul})"),
        }
    }

    /// Element `i` (with stride `s`) as a `double`, read by part `k` as
    /// its first operand or its second.
    fn val(&self, k: usize, d: Domain, i: &str, s: &str, second: bool) -> String {
        let at = format!("[({i}) * {s}]");
        match (d, self.plan.op) {
            (Domain::Sums, _) => format!("x{at}"),
            (Domain::Inputs, Op::Sum) => format!("(double)x{at}"),
            (Domain::Inputs, Op::Dot) => {
                let part = self.part(k);
                match if second { part.second } else { part.first } {
                    Product::Rounded(Format::F32) => format!("(double)(x{at} * y{at})"),
                    _ => format!("((double)x{at} * (double)y{at})"),
                }
            }
        }
    }

    /// Registers for part `k`'s left-to-right lanes over `d`, where its
    /// additions are a format's own: f32 additions of f32 values, f32
    /// fused multiply-adds, f64 additions.
    fn lane(&self, k: usize, d: Domain) -> Option<Lane> {
        let part = self.part(k);
        if part.compensated {
            return None;
        }
        let f32_lane = Lane { ty: "float" };
        let f64_lane = Lane { ty: "double" };
        match (d, self.plan.op, part.format) {
            (_, _, Format::F64) => Some(f64_lane),
            (Domain::Sums, _, _) if part.narrow => Some(f32_lane),
            (Domain::Inputs, Op::Sum, Format::F32) if self.plan.element == Format::F32 => {
                Some(f32_lane)
            }
            (Domain::Inputs, Op::Dot, Format::F32)
                if self.plan.element == Format::F32
                    && part.first == Product::Rounded(Format::F32)
                    && matches!(part.second, Product::Exact | Product::Rounded(Format::F32)) =>
            {
                Some(f32_lane)
            }
            _ => None,
        }
    }

    /// A lane's first value, of type `lane.ty`.
    fn lane_init(&mut self, k: usize, d: Domain, lane: &Lane, i: &str, s: &str) -> String {
        match (lane.ty, d, self.plan.op) {
            ("float", Domain::Inputs, Op::Dot) => format!("x[({i}) * {s}] * y[({i}) * {s}]"),
            ("float", Domain::Inputs, Op::Sum) => format!("x[({i}) * {s}]"),
            _ => format!("({}){}", lane.ty, self.val(k, d, i, s, false)),
        }
    }

    /// The statement adding element `i` to the lane register `acc`.
    fn lane_step(
        &mut self,
        k: usize,
        d: Domain,
        lane: &Lane,
        acc: &str,
        i: &str,
        s: &str,
    ) -> String {
        let part = self.part(k);
        let at = format!("[({i}) * {s}]");
        match (lane.ty, d, self.plan.op) {
            ("float", Domain::Inputs, Op::Sum) => format!("{acc} = {acc} + x{at};"),
            ("float", Domain::Inputs, Op::Dot) => match part.second {
                Product::Exact => {
                    self.fma = true;
                    format!("{acc} = fmaf(x{at}, y{at}, {acc});")
                }
                // Apart, so that no compiler contracts them into an FMA.
                _ => format!("{{ float p = x{at} * y{at}; {acc} = {acc} + p; }}"),
            },
            ("float", Domain::Sums, _) => format!("{acc} = {acc} + (float)x{at};"),
            _ => match (d, self.plan.op, self.plan.element) {
                (Domain::Inputs, Op::Dot, Format::F64) if part.second == Product::Exact => {
                    format!("{acc} = fma(x{at}, y{at}, {acc});")
                }
                (Domain::Inputs, Op::Dot, Format::F64) => {
                    format!("{{ double p = x{at} * y{at}; {acc} = {acc} + p; }}")
                }
                _ => format!("{acc} = {acc} + {};", self.val(k, d, i, s, true)),
            },
        }
    }

    /// Part `k`'s addition, rounding once to its format.
    fn add(&mut self, k: usize) -> String {
        if !self.helpers.contains(&(k, "add")) {
            self.helpers.push((k, "add"));
            let part = self.part(k);
            let body = match part.format {
                Format::F64 => "return p + q;".to_string(),
                _ if part.narrow => "return (double)((float)p + (float)q);".to_string(),
                _ => {
                    self.round_once = true;
                    "return fprev_add_f32(p, q);".to_string()
                }
            };
            let _ = writeln!(
                self.protos,
                "{}double a{k}(double p, double q) {{ {body} }}",
                self.qualifier()
            );
            if part.compensated {
                let _ = writeln!(
                    self.protos,
                    "{q}void k{k}(double *t, double *e, double v) {{\n    double y = a{k}(v, \
                     -*e);\n    double u = a{k}(*t, y);\n    *e = a{k}(a{k}(u, -*t), -y);\n    *t \
                     = u;\n}}\n{q}double e{k}(double *c, double t, double e) {{\n    if (c) {{ \
                     *c = e; return t; }}\n    return {end};\n}}",
                    q = self.qualifier(),
                    end = match part.drops_error {
                        true => "t".to_string(),
                        false => format!("a{k}(t, -e)"),
                    }
                );
            }
        }
        format!("a{k}")
    }

    fn buffer(&mut self, var: &str, count: &str) -> String {
        self.alloc = true;
        format!(
            "double *{var} = (double *)malloc(({count}) * sizeof(double));\n    if (!{var}) return \
             NAN;\n"
        )
    }

    /// Writes the function of part `k` over `d` (and those it calls).
    fn function(&mut self, k: usize, d: Domain) -> Result<String, String> {
        let name = format!("p{k}{}", d.letter());
        if self.done.insert((k, d), ()).is_some() {
            return Ok(name);
        }
        let f = self.parts[k];
        let part = self.part(k);
        writable(self.plan, f, part, d)?;
        let params = self.params(d);
        let sig = format!(
            "{}double {name}({params}, size_t n, size_t planned, double *c)",
            self.qualifier()
        );
        let _ = writeln!(self.protos, "{sig};");
        let a = self.add(k);
        let v0 = self.val(k, d, "0", "s", false);
        let body = match f {
            Formula::Order(order) => self.order(k, d, *order)?,
            Formula::Interleave(lanes, inner, outer) => {
                let (i, o) = (self.id(inner), self.id(outer));
                let inner_fn = self.function(i, d)?;
                let outer_fn = self.function(o, Domain::Sums)?;
                let kk = num(*lanes);
                let mut b =
                    format!("    size_t k = {kk} < n ? {kk} : n;\n    size_t shortest = n / k;\n");
                let free = match *lanes <= 256 {
                    true => {
                        let _ = writeln!(b, "    double lanes[{lanes}];");
                        ""
                    }
                    false => {
                        b += &self.buffer("lanes", "k");
                        "    free(lanes);\n"
                    }
                };
                let fast = matches!(**inner, Formula::Order(Order::Sequential)) && *lanes <= 256;
                let lane = if fast { self.lane(i, d) } else { None };
                let generic = format!(
                    "for (size_t r = 0; r < k; r++)\n            lanes[r] = {inner_fn}({}, (n - r \
                     + k - 1) / k, shortest, NULL);",
                    self.view(d, "r", "k")
                );
                match lane {
                    Some(lane) => {
                        let mut loops = String::new();
                        for s in ["1", "s"] {
                            let init = self.lane_init(i, d, &lane, "r", s);
                            let step = self.lane_step(
                                i,
                                d,
                                &lane,
                                "acc[r]",
                                &format!("i * {lanes} + r"),
                                s,
                            );
                            let rest = self.lane_step(
                                i,
                                d,
                                &lane,
                                "acc[r]",
                                &format!("shortest * {lanes} + r"),
                                s,
                            );
                            let _ = write!(
                                loops,
                                "{{\n            for (size_t r = 0; r < {lanes}; r++) acc[r] = \
                                 {init};\n            for (size_t i = 1; i < shortest; i++)\n   \
                                 for (size_t r = 0; r < {lanes}; r++) {step}\n            for \
                                 (size_t r = 0; r < n - shortest * {lanes}; r++) {rest}\n        \
                                 }}",
                            );
                            if s == "1" {
                                loops += " else ";
                            }
                        }
                        let _ = write!(
                            b,
                            "    if (k == {lanes}) {{\n        {ty} acc[{lanes}];\n        if (s \
                             == 1) {loops}\n        for (size_t r = 0; r < {lanes}; r++) \
                             lanes[r] = (double)acc[r];\n    }} else {{\n        {generic}\n    \
                             }}\n",
                            ty = lane.ty
                        );
                    }
                    None => {
                        let _ = writeln!(b, "    {generic}");
                    }
                }
                let _ = write!(
                    b,
                    "    double out = {outer_fn}(lanes, 1, k, k, c);\n{free}    return out;\n"
                );
                b
            }
            Formula::Blocks(size, inner, outer) => {
                let inner_fn = self.function(self.id(inner), d)?;
                let outer_fn = self.function(self.id(outer), Domain::Sums)?;
                let bs = num(*size);
                let buf = self.buffer("sums", "m");
                format!(
                    "    size_t m = (n - 1) / {bs} + 1;\n    {buf}    for (size_t j = 0; j < m; \
                     j++) {{\n        size_t at = j * {bs};\n        size_t len = n - at < {bs} \
                     ? n - at : {bs};\n        sums[j] = {inner_fn}({}, len, len, NULL);\n    \
                     }}\n    double out = {outer_fn}(sums, 1, m, m, c);\n    free(sums);\n    \
                     return out;\n",
                    self.view(d, "at", "1")
                )
            }
            Formula::Body(_, _, Tail::First) | Formula::Peel(..) => {
                unreachable!("refused by writable")
            }
            Formula::Body(m, body, tail) => {
                let body_fn = self.function(self.id(body), d)?;
                let mm = num(*m);
                let carry = match part.compensated {
                    true => "&e",
                    false => "NULL",
                };
                let mut b = format!("    size_t cut = planned - planned % {mm};\n");
                match tail {
                    Tail::Apart(t) => {
                        let tail_fn = self.function(self.id(t), d)?;
                        let _ = write!(
                            b,
                            "    if (cut == 0) return {tail_fn}(x, {y}s, n, planned, c);\n    if \
                             (cut >= n) return {body_fn}(x, {y}s, n, cut, c);\n    double e = \
                             0.0;\n    double sum = {body_fn}({}, cut, cut, {carry});\n    double \
                             r = {tail_fn}({}, n - cut, planned - cut, NULL);\n",
                            self.view(d, "0", "1"),
                            self.view(d, "cut", "1"),
                            y = self.y(d),
                        );
                        b += &match part.compensated {
                            true => {
                                format!("    k{k}(&sum, &e, r);\n    return e{k}(c, sum, e);\n")
                            }
                            false => {
                                format!("    (void)e;\n    return fprev_fin(c, {a}(sum, r));\n")
                            }
                        };
                    }
                    _ => {
                        let w = self.val(k, d, "i", "s", true);
                        // Where the body takes every summand, the chain ends
                        // as its last step, the body's, ends it.
                        let _ = write!(
                            b,
                            "    if (cut >= n) return {body_fn}(x, {y}s, n, cut, c);\n    double e = \
                             0.0, sum;\n    size_t i = 1;\n    if (cut == 0) sum = {v0};\n    else \
                             {{ sum = {body_fn}({}, cut, cut, {carry}); i = cut; }}\n",
                            self.view(d, "0", "1"),
                            y = self.y(d),
                        );
                        b += &match part.compensated {
                            true => format!(
                                "    for (; i < n; i++) k{k}(&sum, &e, {w});\n    return e{k}(c, \
                                 sum, e);\n"
                            ),
                            false => format!(
                                "    (void)e;\n    for (; i < n; i++) sum = {a}(sum, {w});\n    \
                                 return fprev_fin(c, sum);\n"
                            ),
                        };
                    }
                }
                b
            }
            Formula::Halves {
                leaf,
                multiple,
                inner,
            } => {
                let inner_fn = self.function(self.id(inner), d)?;
                let rec = format!("h{k}{}", d.letter());
                let _ = writeln!(
                    self.protos,
                    "{}double {rec}({params}, size_t n);",
                    self.qualifier()
                );
                let _ = write!(
                    self.bodies,
                    "{q}double {rec}({params}, size_t n) {{\n    if (n <= {leaf}) return \
                     {inner_fn}(x, {y}s, n, n, NULL);\n    size_t half = n / 2;\n    size_t cut = \
                     half - half % {mul};\n    if (cut == 0) cut = half;\n    double l = {rec}(x, \
                     {y}s, cut);\n    double r = {rec}({}, n - cut);\n    return {a}(l, r);\n}}\n\n",
                    self.view(d, "cut", "1"),
                    q = self.qualifier(),
                    leaf = num((*leaf).max(1)),
                    mul = num(*multiple),
                    y = self.y(d),
                );
                format!(
                    "    if (n <= {leaf}) return {inner_fn}(x, {y}s, n, n, c);\n    return \
                     fprev_fin(c, {rec}(x, {y}s, n));\n",
                    leaf = num((*leaf).max(1)),
                    y = self.y(d),
                )
            }
            Formula::Below(m, small, large) => {
                let small_fn = self.function(self.id(small), d)?;
                let large_fn = self.function(self.id(large), d)?;
                format!(
                    "    (void)planned;\n    if (n < {}) return {small_fn}(x, {y}s, n, n, c);\n    \
                     return {large_fn}(x, {y}s, n, n, c);\n",
                    num(*m),
                    y = self.y(d),
                )
            }
            Formula::Windows(w, inner) => {
                let inner_fn = self.function(self.id(inner), d)?;
                let again = self.function(k, Domain::Sums)?;
                let ww = num(*w);
                let buf = self.buffer("sums", "m");
                format!(
                    "    if (n <= {ww}) return {inner_fn}(x, {y}s, n, n, c);\n    size_t m = (n - \
                     1) / {ww} + 1;\n    size_t low = (m * {ww} - n) / 2;\n    {buf}    for \
                     (size_t j = 0; j < m; j++) {{\n        size_t at = j * {ww} >= low ? j * \
                     {ww} - low : 0;\n        size_t end = (j + 1) * {ww} - low;\n        if (end \
                     > n) end = n;\n        sums[j] = {inner_fn}({}, end - at, end - at, NULL);\n  \
                     }}\n    double out = {again}(sums, 1, m, m, c);\n    free(sums);\n    return \
                     out;\n",
                    self.view(d, "at", "1"),
                    y = self.y(d),
                )
            }
            Formula::Split(p, inner, outer) => {
                let inner_fn = self.function(self.id(inner), d)?;
                let pp = num(*p);
                let buf = self.buffer("sums", "m");
                let combine = match **outer {
                    Formula::Doubling => {
                        let dbl = self.doubling(k);
                        format!("fprev_fin(c, {dbl}(sums, m, {pp}))")
                    }
                    _ => {
                        let outer_fn = self.function(self.id(outer), Domain::Sums)?;
                        format!("{outer_fn}(sums, 1, m, m, c)")
                    }
                };
                format!(
                    "    size_t m = {pp} < n ? {pp} : n;\n    size_t len = n / {pp}, longer = n % \
                     {pp};\n    {buf}    size_t at = 0;\n    for (size_t j = 0; j < m; j++) {{\n   \
                     size_t take = len + (j < longer);\n        sums[j] = {inner_fn}({}, take, \
                     take, NULL);\n        at += take;\n    }}\n    double out = {combine};\n    \
                     free(sums);\n    return out;\n",
                    self.view(d, "at", "1")
                )
            }
            Formula::Doubling => {
                let dbl = self.doubling(k);
                let buf = self.buffer("vals", "n");
                let vi = self.val(k, d, "i", "s", false);
                format!(
                    "    {buf}    for (size_t i = 0; i < n; i++) vals[i] = {vi};\n    double out = \
                     {dbl}(vals, n, n);\n    free(vals);\n    return fprev_fin(c, out);\n"
                )
            }
            Formula::Fold => {
                let rec = format!("r{k}{}", d.letter());
                let (v, w) = (
                    self.val(k, d, "0", "s", false),
                    self.val(k, d, "0", "s", true),
                );
                let _ = writeln!(
                    self.protos,
                    "{}double {rec}({params}, size_t n, int second);",
                    self.qualifier()
                );
                let _ = write!(
                    self.bodies,
                    "{q}double {rec}({params}, size_t n, int second) {{\n    if (n == 1) return \
                     second ? {w} : {v};\n    double e = {rec}(x, {y}s * 2, (n + 1) / 2, 0);\n    \
                     double o = {rec}({}, n / 2, 1);\n    return {a}(e, o);\n}}\n\n",
                    self.view(d, "1", "2"),
                    q = self.qualifier(),
                    y = self.y(d),
                );
                format!(
                    "    return fprev_fin(c, {rec}(x, {y}s, n, 0));\n",
                    y = self.y(d)
                )
            }
            Formula::Fanout(fan) => {
                let rec = format!("r{k}{}", d.letter());
                let (v, w) = (
                    self.val(k, d, "r", "s", false),
                    self.val(k, d, "r", "s", true),
                );
                let ff = num(*fan);
                let _ = writeln!(
                    self.protos,
                    "{}double {rec}({params}, size_t n, size_t r, size_t stride, int second);",
                    self.qualifier()
                );
                let _ = write!(
                    self.bodies,
                    "{q}double {rec}({params}, size_t n, size_t r, size_t stride, int second) {{\n \
                     size_t below = stride > (size_t)-1 / {ff} ? (size_t)-1 : stride * {ff};\n    \
                     int parent = stride < n - r;\n    double sum = (second && !parent) ? {w} : \
                     {v};\n    for (size_t i = 1; i <= {ff}; i++) {{\n        if (stride > \
                     ((size_t)-1 - r) / i) break;\n        size_t child = r + i * stride;\n        \
                     if (child >= n) break;\n        sum = {a}(sum, {rec}(x, {y}s, n, child, \
                     below, 1));\n    }}\n    return sum;\n}}\n\n",
                    q = self.qualifier(),
                    y = self.y(d),
                );
                format!(
                    "    return fprev_fin(c, {rec}(x, {y}s, n, 0, 1, 0));\n",
                    y = self.y(d)
                )
            }
            Formula::Rotate(by, inner) => {
                let inner_fn = self.function(self.id(inner), d)?;
                let start = format!("{0} < n ? {0} : 0", num(*by));
                match (d, self.plan.op) {
                    (Domain::Sums, _) => {
                        let buf = self.buffer("vals", "n");
                        format!(
                            "    size_t st = {start};\n    {buf}    for (size_t i = 0; i < n; i++) \
                             vals[i] = x[((st + i) % n) * s];\n    double out = {inner_fn}(vals, \
                             1, n, n, c);\n    free(vals);\n    return out;\n"
                        )
                    }
                    (Domain::Inputs, op) => {
                        self.alloc = true;
                        let t = self.ty;
                        let (alloc_y, copy_y, arg_y, free_y) = match op {
                            Op::Dot => (
                                format!(
                                    " {t} *ry = ({t} *)malloc(n * sizeof({t}));\n    if (!ry) {{ free(rx); return NAN; }}\n   "
                                ),
                                " ry[i] = y[((st + i) % n) * s];".to_string(),
                                "ry, ",
                                " free(ry);",
                            ),
                            Op::Sum => (String::new(), String::new(), "", ""),
                        };
                        format!(
                            "    size_t st = {start};\n    {t} *rx = ({t} *)malloc(n * \
                             sizeof({t}));\n    if (!rx) return NAN;\n   {alloc_y} for (size_t i = \
                             0; i < n; i++) {{ rx[i] = x[((st + i) % n) * s];{copy_y} }}\n    \
                             double out = {inner_fn}(rx, {arg_y}1, n, n, c);\n    free(rx);{free_y}\n \
                             return out;\n"
                        )
                    }
                }
            }
            Formula::Pieces(steps, inner) => {
                let inner_fn = self.function(self.id(inner), d)?;
                let mut b =
                    "    size_t at = 0;\n    double sum = 0.0;\n    int any = 0;\n".to_string();
                for step in steps {
                    let st = num(*step);
                    let _ = writeln!(
                        b,
                        "    while (at < planned && planned - at >= {st}) {{\n        double p = \
                         {inner_fn}({}, {st}, {st}, NULL);\n        sum = any ? {a}(sum, p) : p;\n  \
                         any = 1;\n        at += {st};\n    }}",
                        self.view(d, "at", "1")
                    );
                }
                let _ = write!(
                    b,
                    "    if (at < n) {{\n        double p = {inner_fn}({}, n - at, n - at, \
                     NULL);\n        sum = any ? {a}(sum, p) : p;\n    }}\n    return \
                     fprev_fin(c, sum);\n",
                    self.view(d, "at", "1")
                );
                b
            }
            Formula::KBlocks(q, u, inner) => {
                let inner_fn = self.function(self.id(inner), d)?;
                let qq = num(*q);
                let half = match u {
                    Some(u) => format!("((left / 2 + {uu} - 1) / {uu}) * {uu}", uu = num(*u)),
                    None => "(left + 1) / 2".to_string(),
                };
                format!(
                    "    (void)planned;\n    size_t at = 0;\n    double sum = 0.0;\n    int any = \
                     0;\n    while (at < n) {{\n        size_t left = n - at, take;\n        if \
                     (left >= 2 * {qq}) take = {qq};\n        else if (left > {qq}) take = \
                     {half};\n        else take = left;\n        double p = {inner_fn}({}, take, \
                     take, NULL);\n        sum = any ? {a}(sum, p) : p;\n        any = 1;\n        \
                     at += take;\n    }}\n    return fprev_fin(c, sum);\n",
                    self.view(d, "at", "1")
                )
            }
        };
        let _ = write!(self.bodies, "{sig} {{\n{body}}}\n\n");
        Ok(name)
    }

    /// `y, ` where a dot's inputs are passed on unchanged.
    fn y(&self, d: Domain) -> &'static str {
        match (d, self.plan.op) {
            (Domain::Inputs, Op::Dot) => "y, ",
            _ => "",
        }
    }

    /// The body of a reference order over `d`.
    fn order(&mut self, k: usize, d: Domain, order: Order) -> Result<String, String> {
        let part = self.part(k);
        let a = self.add(k);
        let v = |g: &Self, i: &str| g.val(k, d, i, "s", false);
        let w = |g: &Self, i: &str| g.val(k, d, i, "s", true);
        let params = self.params(d);
        Ok(match order {
            Order::Sequential if part.compensated => format!(
                "    (void)planned;\n    double t = {}, e = 0.0;\n    for (size_t i = 1; i < n; \
                 i++) k{k}(&t, &e, {});\n    return e{k}(c, t, e);\n",
                v(self, "0"),
                w(self, "i")
            ),
            Order::Sequential => match self.lane(k, d) {
                Some(lane) => {
                    let init = self.lane_init(k, d, &lane, "0", "s");
                    let step = self.lane_step(k, d, &lane, "acc", "i", "s");
                    format!(
                        "    (void)planned;\n    {ty} acc = {init};\n    for (size_t i = 1; i < n; \
                         i++) {step}\n    return fprev_fin(c, (double)acc);\n",
                        ty = lane.ty
                    )
                }
                None => format!(
                    "    (void)planned;\n    double acc = {};\n    for (size_t i = 1; i < n; i++) \
                     acc = {a}(acc, {});\n    return fprev_fin(c, acc);\n",
                    v(self, "0"),
                    w(self, "i")
                ),
            },
            Order::Reverse => format!(
                "    (void)planned;\n    if (n == 1) return fprev_fin(c, {});\n    double acc = \
                 {};\n    for (size_t i = n - 1; i-- > 0;) acc = {a}({}, acc);\n    return \
                 fprev_fin(c, acc);\n",
                v(self, "0"),
                w(self, "n - 1"),
                v(self, "i")
            ),
            Order::Pairwise | Order::BinaryTree => {
                let rec = format!("r{k}{}", d.letter());
                let cut = match order {
                    Order::Pairwise => "size_t h = n / 2;",
                    _ => "size_t h = 1;\n    while (2 * h < n) h *= 2;",
                };
                let _ = writeln!(
                    self.protos,
                    "{}double {rec}({params}, size_t n, int second);",
                    self.qualifier()
                );
                let _ = write!(
                    self.bodies,
                    "{q}double {rec}({params}, size_t n, int second) {{\n    if (n == 1) return \
                     second ? {w0} : {v0};\n    if (n == 2) return {a}({v0}, {w1});\n    {cut}\n    \
                     double l = {rec}(x, {y}s, h, 0);\n    double r = {rec}({}, n - h, 1);\n    \
                     return {a}(l, r);\n}}\n\n",
                    self.view(d, "h", "1"),
                    q = self.qualifier(),
                    w0 = w(self, "0"),
                    v0 = v(self, "0"),
                    w1 = w(self, "1"),
                    y = self.y(d),
                );
                format!(
                    "    (void)planned;\n    return fprev_fin(c, {rec}(x, {y}s, n, 0));\n",
                    y = self.y(d)
                )
            }
            Order::Strided(lanes) => {
                let pw = self.pairwise_of_sums(k);
                let kk = num(lanes);
                let buf = self.buffer("sums", "m");
                format!(
                    "    (void)planned;\n    size_t m = {kk} < n ? {kk} : n;\n    {buf}    for \
                     (size_t r = 0; r < m; r++) {{\n        double acc = {};\n        for (size_t i \
                     = r + {kk}; i < n; i += {kk}) acc = {a}(acc, {});\n        sums[r] = acc;\n  \
                     }}\n    double out = {pw}(sums, m);\n    free(sums);\n    return fprev_fin(c, \
                     out);\n",
                    v(self, "r"),
                    w(self, "i")
                )
            }
            Order::Blocked(size) => {
                let bs = num(size);
                format!(
                    "    (void)planned;\n    double sum = 0.0;\n    for (size_t b = 0; b < n; b += \
                     {bs}) {{\n        size_t end = n - b < {bs} ? n : b + {bs};\n        double \
                     acc = {};\n        for (size_t i = b + 1; i < end; i++) acc = {a}(acc, {});\n  \
                     sum = b == 0 ? acc : {a}(sum, acc);\n    }}\n    return fprev_fin(c, sum);\n",
                    v(self, "b"),
                    w(self, "i")
                )
            }
            Order::Fused(_) => unreachable!("refused by writable"),
        })
    }

    /// Pairwise halving of `double` values with part `k`'s addition.
    fn pairwise_of_sums(&mut self, k: usize) -> String {
        let name = format!("pw{k}");
        if !self.helpers.contains(&(k, "pairwise")) {
            self.helpers.push((k, "pairwise"));
            let a = self.add(k);
            let _ = writeln!(
                self.protos,
                "{}double {name}(const double *v, size_t n);",
                self.qualifier()
            );
            let _ = write!(
                self.bodies,
                "{q}double {name}(const double *v, size_t n) {{\n    if (n == 1) return v[0];\n    \
                 size_t h = n / 2;\n    return {a}({name}(v, h), {name}(v + h, n - h));\n}}\n\n",
                q = self.qualifier()
            );
        }
        name
    }

    /// Recursive doubling over `m` values of `ranks` slots, with part
    /// `k`'s addition.
    fn doubling(&mut self, k: usize) -> String {
        let name = format!("dbl{k}");
        if !self.helpers.contains(&(k, "doubling")) {
            self.helpers.push((k, "doubling"));
            self.alloc = true;
            let a = self.add(k);
            let _ = writeln!(
                self.protos,
                "{}double {name}(const double *v, size_t m, size_t ranks);",
                self.qualifier()
            );
            let _ = write!(
                self.bodies,
                "{q}double {name}(const double *v, size_t m, size_t ranks) {{\n    size_t pow = \
                 1;\n    while (pow <= ranks / 2) pow *= 2;\n    size_t extra = ranks - pow;\n    \
                 size_t folded = 2 * extra < m ? 2 * extra : m;\n    double *w = (double \
                 *)malloc(m * sizeof(double));\n    if (!w) return NAN;\n    size_t len = 0;\n    \
                 for (size_t i = 0; i < folded; i += 2)\n        w[len++] = i + 1 < folded ? \
                 {a}(v[i], v[i + 1]) : v[i];\n    for (size_t i = folded; i < m; i++) w[len++] = \
                 v[i];\n    while (len > 1) {{\n        size_t o = 0;\n        for (size_t i = 0; \
                 i < len; i += 2) w[o++] = i + 1 < len ? {a}(w[i], w[i + 1]) : w[i];\n        len \
                 = o;\n    }}\n    double out = w[0];\n    free(w);\n    return out;\n}}\n\n",
                q = self.qualifier()
            );
        }
        name
    }

    fn finish(self, name: &str, what: &str) -> String {
        let plan = self.plan;
        let mut out = String::new();
        let _ = writeln!(out, "/*");
        for line in what.lines() {
            let _ = writeln!(out, " * {line}");
        }
        let _ = writeln!(out, " *\n * The order: native:{}", plan.formula);
        for (k, (f, p)) in self.parts.iter().zip(&plan.parts).enumerate() {
            let _ = writeln!(out, " *   part {k}, {}: {}", short(f), describe(p, plan.op));
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
        if self.round_once {
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
        if self.round_once {
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
}

/// A part's formula, cut short for a comment.
pub(super) fn short(f: &Formula) -> String {
    let text = f.to_string();
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// A part's arithmetic in words.
pub(super) fn describe(p: &Part, op: Op) -> String {
    let mut s = format!("{} additions", p.format);
    if p.compensated {
        s += ", Kahan steps";
        if p.drops_error {
            s += " (the last drops its error)";
        }
    }
    if op == Op::Dot {
        let _ = write!(s, "; products {} first, {} after", p.first, p.second);
    }
    if !p.seen {
        s += " (not seen in the model: its default)";
    }
    s
}

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

/// What a fused chain's comment says of its nodes and its functions'
/// types: the window, the alignment, the rounding.
pub(super) fn fused_words(plan: &Plan, k: usize) -> String {
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
        fused_words(plan, k),
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
