//! C99 and CUDA C: the walk's functions (`walk.rs`) as static functions,
//! one per part of the formula and per kind of value it sums, CUDA C's
//! as `__device__` functions with a one-thread kernel.
//!
//! Every function takes a strided view (`x[i * s]`, `i < n`), `planned`
//! and `c`, the error a compensated chain carries written through it.

use std::fmt::Write;

use super::fused::{self, Numbers};
use super::plan::{Op, Plan};
use super::walk::{
    self, Backend, Combine, Domain, Function, Helper, Lane, STACK_LANES, Shape, Walk,
};
use crate::arith::Product;
use crate::format::Format;

pub(super) fn source(plan: &Plan, name: &str, what: &str, cuda: bool) -> Result<String, String> {
    let c = C {
        cuda,
        ty: match plan.element {
            Format::F32 => "float",
            _ => "double",
        },
        protos: String::new(),
        bodies: String::new(),
        round_once: false,
        alloc: false,
    };
    walk::source(plan, c, name, what)
}

/// The C printer: prototypes (and one-line helpers) first, then bodies.
struct C {
    cuda: bool,
    /// The C type of the inputs.
    ty: &'static str,
    protos: String,
    bodies: String,
    /// The module needs `fprev_add_f32`, `malloc`.
    round_once: bool,
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

impl C {
    fn qualifier(&self) -> &'static str {
        match self.cuda {
            true => "static __device__ ",
            false => "static ",
        }
    }

    /// The parameters of a function over `d`, before `n`.
    fn params(&self, walk: &Walk, d: Domain) -> String {
        match (d, walk.plan.op) {
            (Domain::Sums, _) => "const double *x, size_t s".into(),
            (Domain::Inputs, Op::Sum) => format!("const {} *x, size_t s", self.ty),
            (Domain::Inputs, Op::Dot) => {
                format!("const {t} *x, const {t} *y, size_t s", t = self.ty)
            }
        }
    }

    /// The signature of function `name` over `d`.
    fn signature(&self, walk: &Walk, d: Domain, name: &str) -> String {
        format!(
            "{}double {name}({}, size_t n, size_t planned, double *c)",
            self.qualifier(),
            self.params(walk, d)
        )
    }

    /// The view from element `off`, every `mul`-th element.
    fn view(&self, walk: &Walk, d: Domain, off: &str, mul: &str) -> String {
        match (d, walk.plan.op) {
            (Domain::Inputs, Op::Dot) => {
                format!("x + ({off}) * s, y + ({off}) * s, s * ({mul})")
            }
            _ => format!("x + ({off}) * s, s * ({mul})"),
        }
    }

    /// `y, ` where a dot's inputs are passed on unchanged.
    fn y(&self, walk: &Walk, d: Domain) -> &'static str {
        match (d, walk.plan.op) {
            (Domain::Inputs, Op::Dot) => "y, ",
            _ => "",
        }
    }

    /// Element `i` (with stride `s`) as a `double`, read by part `k` as
    /// its first operand or its second.
    fn val(&self, walk: &Walk, k: usize, d: Domain, i: &str, s: &str, second: bool) -> String {
        let at = format!("[({i}) * {s}]");
        match (d, walk.plan.op) {
            (Domain::Sums, _) => format!("x{at}"),
            (Domain::Inputs, Op::Sum) => format!("(double)x{at}"),
            (Domain::Inputs, Op::Dot) => match walk.product(k, second) {
                Product::Rounded(Format::F32) => format!("(double)(x{at} * y{at})"),
                _ => format!("((double)x{at} * (double)y{at})"),
            },
        }
    }

    /// A lane's first value, in registers of `format`.
    fn lane_init(
        &self,
        walk: &Walk,
        k: usize,
        d: Domain,
        format: Format,
        i: &str,
        s: &str,
    ) -> String {
        let ty = register(format);
        match (ty, d, walk.plan.op) {
            ("float", Domain::Inputs, Op::Dot) => format!("x[({i}) * {s}] * y[({i}) * {s}]"),
            ("float", Domain::Inputs, Op::Sum) => format!("x[({i}) * {s}]"),
            _ => format!("({ty}){}", self.val(walk, k, d, i, s, false)),
        }
    }

    /// The statement adding element `i` to the lane register `acc`, of
    /// `format` (a fused multiply-add where `fma`).
    #[allow(clippy::too_many_arguments)]
    fn lane_step(
        &self,
        walk: &Walk,
        k: usize,
        d: Domain,
        (format, fma): (Format, bool),
        acc: &str,
        i: &str,
        s: &str,
    ) -> String {
        let at = format!("[({i}) * {s}]");
        match (register(format), d, walk.plan.op) {
            ("float", Domain::Inputs, Op::Sum) => format!("{acc} = {acc} + x{at};"),
            ("float", Domain::Inputs, Op::Dot) => match fma {
                true => format!("{acc} = fmaf(x{at}, y{at}, {acc});"),
                // Apart, so that no compiler contracts them into an FMA.
                false => format!("{{ float p = x{at} * y{at}; {acc} = {acc} + p; }}"),
            },
            ("float", Domain::Sums, _) => format!("{acc} = {acc} + (float)x{at};"),
            _ if fma => format!("{acc} = fma(x{at}, y{at}, {acc});"),
            (_, Domain::Inputs, Op::Dot) if walk.plan.element == Format::F64 => {
                format!("{{ double p = x{at} * y{at}; {acc} = {acc} + p; }}")
            }
            _ => format!("{acc} = {acc} + {};", self.val(walk, k, d, i, s, true)),
        }
    }

    fn buffer(&mut self, var: &str, count: &str) -> String {
        self.alloc = true;
        format!(
            "double *{var} = (double *)malloc(({count}) * sizeof(double));\n    if (!{var}) return \
             NAN;\n"
        )
    }

    /// The body of `interleave(lanes, …)`: lanes in registers where the
    /// walk gives them and they fit the stack, else each by the inner
    /// function.
    #[allow(clippy::too_many_arguments)]
    fn interleave(
        &mut self,
        walk: &Walk,
        d: Domain,
        lanes: usize,
        inner: &str,
        i: usize,
        outer: &str,
        lane: Option<Lane>,
    ) -> String {
        let kk = num(lanes);
        let mut b = format!("    size_t k = {kk} < n ? {kk} : n;\n    size_t shortest = n / k;\n");
        let free = match lanes <= STACK_LANES {
            true => {
                let _ = writeln!(b, "    double lanes[{lanes}];");
                ""
            }
            false => {
                b += &self.buffer("lanes", "k");
                "    free(lanes);\n"
            }
        };
        let generic = format!(
            "for (size_t r = 0; r < k; r++)\n            lanes[r] = {inner}({}, (n - r \
             + k - 1) / k, shortest, NULL);",
            self.view(walk, d, "r", "k")
        );
        match lane {
            Some(Lane::Registers { format, fma }) if lanes <= STACK_LANES => {
                let mut loops = String::new();
                for s in ["1", "s"] {
                    let init = self.lane_init(walk, i, d, format, "r", s);
                    let step = self.lane_step(
                        walk,
                        i,
                        d,
                        (format, fma),
                        "acc[r]",
                        &format!("i * {lanes} + r"),
                        s,
                    );
                    let rest = self.lane_step(
                        walk,
                        i,
                        d,
                        (format, fma),
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
                    ty = register(format)
                );
            }
            _ => {
                let _ = writeln!(b, "    {generic}");
            }
        }
        let _ = write!(
            b,
            "    double out = {outer}(lanes, 1, k, k, c);\n{free}    return out;\n"
        );
        b
    }

    /// The body of a function of shape `shape`.
    fn body(&mut self, walk: &Walk, f: &Function) -> String {
        let (k, d, a) = (f.k, f.d, f.add.as_str());
        let part = walk.part(k);
        let params = self.params(walk, d);
        let q = self.qualifier();
        let y = self.y(walk, d);
        let v = |g: &Self, i: &str| g.val(walk, k, d, i, "s", false);
        let w = |g: &Self, i: &str| g.val(walk, k, d, i, "s", true);
        match &f.shape {
            Shape::Sequential { .. } if part.compensated => format!(
                "    (void)planned;\n    double t = {}, e = 0.0;\n    for (size_t i = 1; i < n; \
                 i++) k{k}(&t, &e, {});\n    return e{k}(c, t, e);\n",
                v(self, "0"),
                w(self, "i")
            ),
            Shape::Sequential {
                lane: Some(Lane::Registers { format, fma }),
            } => {
                let init = self.lane_init(walk, k, d, *format, "0", "s");
                let step = self.lane_step(walk, k, d, (*format, *fma), "acc", "i", "s");
                format!(
                    "    (void)planned;\n    {ty} acc = {init};\n    for (size_t i = 1; i < n; \
                     i++) {step}\n    return fprev_fin(c, (double)acc);\n",
                    ty = register(*format)
                )
            }
            Shape::Sequential { .. } => format!(
                "    (void)planned;\n    double acc = {};\n    for (size_t i = 1; i < n; i++) \
                 acc = {a}(acc, {});\n    return fprev_fin(c, acc);\n",
                v(self, "0"),
                w(self, "i")
            ),
            Shape::Reverse => format!(
                "    (void)planned;\n    if (n == 1) return fprev_fin(c, {});\n    double acc = \
                 {};\n    for (size_t i = n - 1; i-- > 0;) acc = {a}({}, acc);\n    return \
                 fprev_fin(c, acc);\n",
                v(self, "0"),
                w(self, "n - 1"),
                v(self, "i")
            ),
            Shape::Halving { binary_tree } => {
                let rec = format!("r{k}{}", d.letter());
                let cut = match binary_tree {
                    false => "size_t h = n / 2;",
                    true => "size_t h = 1;\n    while (2 * h < n) h *= 2;",
                };
                let _ = writeln!(
                    self.protos,
                    "{q}double {rec}({params}, size_t n, int second);"
                );
                let _ = write!(
                    self.bodies,
                    "{q}double {rec}({params}, size_t n, int second) {{\n    if (n == 1) return \
                     second ? {w0} : {v0};\n    if (n == 2) return {a}({v0}, {w1});\n    {cut}\n    \
                     double l = {rec}(x, {y}s, h, 0);\n    double r = {rec}({}, n - h, 1);\n    \
                     return {a}(l, r);\n}}\n\n",
                    self.view(walk, d, "h", "1"),
                    w0 = w(self, "0"),
                    v0 = v(self, "0"),
                    w1 = w(self, "1"),
                );
                format!("    (void)planned;\n    return fprev_fin(c, {rec}(x, {y}s, n, 0));\n")
            }
            Shape::Strided { lanes, pairwise } => {
                let kk = num(*lanes);
                let buf = self.buffer("sums", "m");
                format!(
                    "    (void)planned;\n    size_t m = {kk} < n ? {kk} : n;\n    {buf}    for \
                     (size_t r = 0; r < m; r++) {{\n        double acc = {};\n        for (size_t i \
                     = r + {kk}; i < n; i += {kk}) acc = {a}(acc, {});\n        sums[r] = acc;\n  \
                     }}\n    double out = {pairwise}(sums, m);\n    free(sums);\n    return \
                     fprev_fin(c, out);\n",
                    v(self, "r"),
                    w(self, "i")
                )
            }
            Shape::Blocked(size) => {
                let bs = num(*size);
                format!(
                    "    (void)planned;\n    double sum = 0.0;\n    for (size_t b = 0; b < n; b += \
                     {bs}) {{\n        size_t end = n - b < {bs} ? n : b + {bs};\n        double \
                     acc = {};\n        for (size_t i = b + 1; i < end; i++) acc = {a}(acc, {});\n  \
                     sum = b == 0 ? acc : {a}(sum, acc);\n    }}\n    return fprev_fin(c, sum);\n",
                    v(self, "b"),
                    w(self, "i")
                )
            }
            Shape::Interleave {
                lanes,
                inner,
                inner_part,
                outer,
                lane,
            } => self.interleave(walk, d, *lanes, inner, *inner_part, outer, *lane),
            Shape::Blocks { size, inner, outer } => {
                let bs = num(*size);
                let buf = self.buffer("sums", "m");
                format!(
                    "    size_t m = (n - 1) / {bs} + 1;\n    {buf}    for (size_t j = 0; j < m; \
                     j++) {{\n        size_t at = j * {bs};\n        size_t len = n - at < {bs} \
                     ? n - at : {bs};\n        sums[j] = {inner}({}, len, len, NULL);\n    \
                     }}\n    double out = {outer}(sums, 1, m, m, c);\n    free(sums);\n    \
                     return out;\n",
                    self.view(walk, d, "at", "1")
                )
            }
            Shape::Body {
                multiple,
                body,
                tail,
            } => {
                let mm = num(*multiple);
                let carry = match part.compensated {
                    true => "&e",
                    false => "NULL",
                };
                let mut b = format!("    size_t cut = planned - planned % {mm};\n");
                match tail {
                    Some(tail) => {
                        let _ = write!(
                            b,
                            "    if (cut == 0) return {tail}(x, {y}s, n, planned, c);\n    if \
                             (cut >= n) return {body}(x, {y}s, n, cut, c);\n    double e = \
                             0.0;\n    double sum = {body}({}, cut, cut, {carry});\n    double \
                             r = {tail}({}, n - cut, planned - cut, NULL);\n",
                            self.view(walk, d, "0", "1"),
                            self.view(walk, d, "cut", "1"),
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
                    None => {
                        let w = w(self, "i");
                        // Where the body takes every summand, the chain ends
                        // as its last step, the body's, ends it.
                        let _ = write!(
                            b,
                            "    if (cut >= n) return {body}(x, {y}s, n, cut, c);\n    double e = \
                             0.0, sum;\n    size_t i = 1;\n    if (cut == 0) sum = {v0};\n    else \
                             {{ sum = {body}({}, cut, cut, {carry}); i = cut; }}\n",
                            self.view(walk, d, "0", "1"),
                            v0 = v(self, "0"),
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
            Shape::Halves {
                leaf,
                multiple,
                inner,
            } => {
                let rec = format!("h{k}{}", d.letter());
                let (leaf, mul) = (num(*leaf), num(*multiple));
                let _ = writeln!(self.protos, "{q}double {rec}({params}, size_t n);");
                let _ = write!(
                    self.bodies,
                    "{q}double {rec}({params}, size_t n) {{\n    if (n <= {leaf}) return \
                     {inner}(x, {y}s, n, n, NULL);\n    size_t half = n / 2;\n    size_t cut = \
                     half - half % {mul};\n    if (cut == 0) cut = half;\n    double l = {rec}(x, \
                     {y}s, cut);\n    double r = {rec}({}, n - cut);\n    return {a}(l, r);\n}}\n\n",
                    self.view(walk, d, "cut", "1"),
                );
                format!(
                    "    if (n <= {leaf}) return {inner}(x, {y}s, n, n, c);\n    return \
                     fprev_fin(c, {rec}(x, {y}s, n));\n"
                )
            }
            Shape::Below { at, small, large } => format!(
                "    (void)planned;\n    if (n < {}) return {small}(x, {y}s, n, n, c);\n    \
                 return {large}(x, {y}s, n, n, c);\n",
                num(*at),
            ),
            Shape::Windows {
                width,
                inner,
                again,
            } => {
                let ww = num(*width);
                let buf = self.buffer("sums", "m");
                format!(
                    "    if (n <= {ww}) return {inner}(x, {y}s, n, n, c);\n    size_t m = (n - \
                     1) / {ww} + 1;\n    size_t low = (m * {ww} - n) / 2;\n    {buf}    for \
                     (size_t j = 0; j < m; j++) {{\n        size_t at = j * {ww} >= low ? j * \
                     {ww} - low : 0;\n        size_t end = (j + 1) * {ww} - low;\n        if (end \
                     > n) end = n;\n        sums[j] = {inner}({}, end - at, end - at, NULL);\n  \
                     }}\n    double out = {again}(sums, 1, m, m, c);\n    free(sums);\n    return \
                     out;\n",
                    self.view(walk, d, "at", "1"),
                )
            }
            Shape::Split {
                blocks,
                inner,
                combine,
            } => {
                let pp = num(*blocks);
                let buf = self.buffer("sums", "m");
                let combine = match combine {
                    Combine::Doubling(dbl) => format!("fprev_fin(c, {dbl}(sums, m, {pp}))"),
                    Combine::Outer(outer) => format!("{outer}(sums, 1, m, m, c)"),
                };
                format!(
                    "    size_t m = {pp} < n ? {pp} : n;\n    size_t len = n / {pp}, longer = n % \
                     {pp};\n    {buf}    size_t at = 0;\n    for (size_t j = 0; j < m; j++) {{\n   \
                     size_t take = len + (j < longer);\n        sums[j] = {inner}({}, take, \
                     take, NULL);\n        at += take;\n    }}\n    double out = {combine};\n    \
                     free(sums);\n    return out;\n",
                    self.view(walk, d, "at", "1")
                )
            }
            Shape::Doubling { doubling } => {
                let buf = self.buffer("vals", "n");
                let vi = v(self, "i");
                format!(
                    "    {buf}    for (size_t i = 0; i < n; i++) vals[i] = {vi};\n    double out = \
                     {doubling}(vals, n, n);\n    free(vals);\n    return fprev_fin(c, out);\n"
                )
            }
            Shape::Fold => {
                let rec = format!("r{k}{}", d.letter());
                let (v, w) = (v(self, "0"), w(self, "0"));
                let _ = writeln!(
                    self.protos,
                    "{q}double {rec}({params}, size_t n, int second);"
                );
                let _ = write!(
                    self.bodies,
                    "{q}double {rec}({params}, size_t n, int second) {{\n    if (n == 1) return \
                     second ? {w} : {v};\n    double e = {rec}(x, {y}s * 2, (n + 1) / 2, 0);\n    \
                     double o = {rec}({}, n / 2, 1);\n    return {a}(e, o);\n}}\n\n",
                    self.view(walk, d, "1", "2"),
                );
                format!("    return fprev_fin(c, {rec}(x, {y}s, n, 0));\n")
            }
            Shape::Fanout(fan) => {
                let rec = format!("r{k}{}", d.letter());
                let (v, w) = (v(self, "r"), w(self, "r"));
                let ff = num(*fan);
                let _ = writeln!(
                    self.protos,
                    "{q}double {rec}({params}, size_t n, size_t r, size_t stride, int second);"
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
                );
                format!("    return fprev_fin(c, {rec}(x, {y}s, n, 0, 1, 0));\n")
            }
            Shape::Rotate { by, inner } => {
                let start = format!("{0} < n ? {0} : 0", num(*by));
                match (d, walk.plan.op) {
                    (Domain::Sums, _) => {
                        let buf = self.buffer("vals", "n");
                        format!(
                            "    size_t st = {start};\n    {buf}    for (size_t i = 0; i < n; i++) \
                             vals[i] = x[((st + i) % n) * s];\n    double out = {inner}(vals, \
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
                             double out = {inner}(rx, {arg_y}1, n, n, c);\n    free(rx);{free_y}\n \
                             return out;\n"
                        )
                    }
                }
            }
            Shape::Pieces { steps, inner } => {
                let mut b =
                    "    size_t at = 0;\n    double sum = 0.0;\n    int any = 0;\n".to_string();
                for step in *steps {
                    let st = num(*step);
                    let _ = writeln!(
                        b,
                        "    while (at < planned && planned - at >= {st}) {{\n        double p = \
                         {inner}({}, {st}, {st}, NULL);\n        sum = any ? {a}(sum, p) : p;\n  \
                         any = 1;\n        at += {st};\n    }}",
                        self.view(walk, d, "at", "1")
                    );
                }
                let _ = write!(
                    b,
                    "    if (at < n) {{\n        double p = {inner}({}, n - at, n - at, \
                     NULL);\n        sum = any ? {a}(sum, p) : p;\n    }}\n    return \
                     fprev_fin(c, sum);\n",
                    self.view(walk, d, "at", "1")
                );
                b
            }
            Shape::KBlocks { size, unit, inner } => {
                let qq = num(*size);
                let half = match unit {
                    Some(u) => format!("((left / 2 + {uu} - 1) / {uu}) * {uu}", uu = num(*u)),
                    None => "(left + 1) / 2".to_string(),
                };
                format!(
                    "    (void)planned;\n    size_t at = 0;\n    double sum = 0.0;\n    int any = \
                     0;\n    while (at < n) {{\n        size_t left = n - at, take;\n        if \
                     (left >= 2 * {qq}) take = {qq};\n        else if (left > {qq}) take = \
                     {half};\n        else take = left;\n        double p = {inner}({}, take, \
                     take, NULL);\n        sum = any ? {a}(sum, p) : p;\n        any = 1;\n        \
                     at += take;\n    }}\n    return fprev_fin(c, sum);\n",
                    self.view(walk, d, "at", "1")
                )
            }
        }
    }
}

impl Backend for C {
    const ADDITION_FIRST: bool = true;

    fn name(&self, base: &str) -> String {
        base.to_string()
    }

    fn begin(&mut self, walk: &Walk, _k: usize, d: Domain, name: &str) {
        let _ = writeln!(self.protos, "{};", self.signature(walk, d, name));
    }

    fn helper(&mut self, walk: &Walk, k: usize, helper: Helper, name: &str) {
        let q = self.qualifier();
        let a = format!("a{k}");
        match helper {
            Helper::Addition => {
                let part = walk.part(k);
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
                    "{q}double {name}(double p, double q) {{ {body} }}"
                );
                if part.compensated {
                    let _ = writeln!(
                        self.protos,
                        "{q}void k{k}(double *t, double *e, double v) {{\n    double y = a{k}(v, \
                         -*e);\n    double u = a{k}(*t, y);\n    *e = a{k}(a{k}(u, -*t), -y);\n    *t \
                         = u;\n}}\n{q}double e{k}(double *c, double t, double e) {{\n    if (c) {{ \
                         *c = e; return t; }}\n    return {end};\n}}",
                        end = match part.drops_error {
                            true => "t".to_string(),
                            false => format!("a{k}(t, -e)"),
                        }
                    );
                }
            }
            Helper::Pairwise => {
                let _ = writeln!(self.protos, "{q}double {name}(const double *v, size_t n);");
                let _ = write!(
                    self.bodies,
                    "{q}double {name}(const double *v, size_t n) {{\n    if (n == 1) return v[0];\n    \
                     size_t h = n / 2;\n    return {a}({name}(v, h), {name}(v + h, n - h));\n}}\n\n",
                );
            }
            Helper::Doubling => {
                self.alloc = true;
                let _ = writeln!(
                    self.protos,
                    "{q}double {name}(const double *v, size_t m, size_t ranks);"
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
                );
            }
        }
    }

    fn function(&mut self, walk: &Walk, f: Function) {
        let body = self.body(walk, &f);
        let sig = self.signature(walk, f.d, &f.name);
        let _ = write!(self.bodies, "{sig} {{\n{body}}}\n\n");
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
