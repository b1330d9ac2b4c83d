//! Rust: the walk's functions (`walk.rs`) as a module that needs no crate
//! but `core` and `alloc` (and std's `mul_add` where a plan has fused
//! multiply-adds), with a C-ABI wrapper so that a `cdylib` of it is a
//! `dylib:` black box.
//!
//! Every function takes a strided view (a slice `x`, its elements
//! `x[i * s]`, `i < n`), `planned` and `c`, the error a compensated chain
//! carries written through it.

use std::fmt::Write;

use super::fused::{self, Numbers};
use super::plan::{Op, Plan};
use super::walk::{
    self, Backend, Combine, Domain, Function, Helper, Lane, STACK_LANES, Shape, Walk,
};
use crate::arith::Product;
use crate::format::Format;

pub(super) fn source(plan: &Plan, name: &str, what: &str) -> Result<String, String> {
    let rust = Rust {
        ty: match plan.element {
            Format::F32 => "f32",
            _ => "f64",
        },
        helpers: String::new(),
        bodies: String::new(),
        fin: false,
        round_once: false,
        alloc: false,
        fma: false,
    };
    walk::source(plan, rust, name, what)
}

/// The Rust printer: per-part helpers first, then the functions.
struct Rust {
    /// The Rust type of the inputs.
    ty: &'static str,
    /// Per-part helpers (additions, Kahan steps, halvings).
    helpers: String,
    bodies: String,
    /// The module needs `fin`, `add_f32`, `alloc`, std's `mul_add`.
    fin: bool,
    round_once: bool,
    alloc: bool,
    fma: bool,
}

/// `x[i * s]`'s index, without a multiplication by one or of zero.
fn at(i: &str, s: &str) -> String {
    let simple = i.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match (i, s) {
        ("0", _) => "0".into(),
        ("1", _) => s.into(),
        (_, "1") => i.into(),
        _ if simple => format!("{i} * {s}"),
        _ => format!("({i}) * {s}"),
    }
}

/// A recursion's `second` parameter and the value it returns of a lone
/// summand, `w` where that summand is added to a value (`when`), else `v`:
/// the parameter goes unused where both are read alike.
fn lone(v: &str, w: &str, when: &str) -> (&'static str, String) {
    match v == w {
        true => ("_second", v.to_string()),
        false => ("second", format!("if {when} {{ {w} }} else {{ {v} }}")),
    }
}

/// `text` with each line but empty ones started by `pad`.
fn indent(text: &str, pad: &str) -> String {
    text.lines()
        .map(|l| match l.is_empty() {
            true => "\n".to_string(),
            false => format!("{pad}{l}\n"),
        })
        .collect()
}

/// The Rust type of registers of `format`.
fn register(format: Format) -> &'static str {
    match format {
        Format::F32 => "f32",
        _ => "f64",
    }
}

/// A register of `format` as an `f64` value.
fn widen(format: Format, v: &str) -> String {
    match format {
        Format::F32 => format!("f64::from({v})"),
        _ => v.to_string(),
    }
}

impl Rust {
    /// The function that ends a chain where no caller continues it.
    fn fin(&mut self) -> &'static str {
        self.fin = true;
        "fin"
    }

    /// A vector of `count` zeros of `ty`.
    fn buffer(&mut self, ty: &str, count: &str) -> String {
        self.alloc = true;
        format!("alloc::vec![0.0{ty}; {count}]")
    }

    /// The parameters of a function over `d`, before `n`.
    fn params(&self, walk: &Walk, d: Domain) -> String {
        match (d, walk.plan.op) {
            (Domain::Sums, _) => "x: &[f64], s: usize".into(),
            (Domain::Inputs, Op::Sum) => format!("x: &[{}], s: usize", self.ty),
            (Domain::Inputs, Op::Dot) => format!("x: &[{t}], y: &[{t}], s: usize", t = self.ty),
        }
    }

    /// The arguments that pass a function's view on unchanged.
    fn same(&self, walk: &Walk, d: Domain) -> &'static str {
        match (d, walk.plan.op) {
            (Domain::Inputs, Op::Dot) => "x, y, s",
            _ => "x, s",
        }
    }

    /// The view from element `off`, every `mul`-th element.
    fn view(&self, walk: &Walk, d: Domain, off: &str, mul: &str) -> String {
        let stride = match mul {
            "1" => "s".to_string(),
            _ => format!("s * {mul}"),
        };
        let from = |v: &str| match off {
            "0" => v.to_string(),
            _ => format!("&{v}[{}..]", at(off, "s")),
        };
        match (d, walk.plan.op) {
            (Domain::Inputs, Op::Dot) => format!("{}, {}, {stride}", from("x"), from("y")),
            _ => format!("{}, {stride}", from("x")),
        }
    }

    /// Element `i` (with stride `s`) as an `f64`, read by part `k` as its
    /// first operand or its second.
    fn val(&self, walk: &Walk, k: usize, d: Domain, i: &str, s: &str, second: bool) -> String {
        let ix = at(i, s);
        match (d, walk.plan.op, walk.plan.element) {
            (Domain::Sums, ..) | (Domain::Inputs, Op::Sum, Format::F64) => format!("x[{ix}]"),
            (Domain::Inputs, Op::Sum, _) => format!("f64::from(x[{ix}])"),
            (Domain::Inputs, Op::Dot, element) => match (walk.product(k, second), element) {
                (Product::Rounded(Format::F32), Format::F32) => {
                    format!("f64::from(x[{ix}] * y[{ix}])")
                }
                (Product::Rounded(Format::F32), _) => {
                    format!("f64::from((x[{ix}] * y[{ix}]) as f32)")
                }
                (_, Format::F32) => format!("f64::from(x[{ix}]) * f64::from(y[{ix}])"),
                _ => format!("x[{ix}] * y[{ix}]"),
            },
        }
    }

    /// A lane's first value, in a register of `format`.
    fn lane_init(
        &self,
        walk: &Walk,
        k: usize,
        d: Domain,
        format: Format,
        i: &str,
        s: &str,
    ) -> String {
        let ix = at(i, s);
        match (format, d, walk.plan.op) {
            (Format::F32, Domain::Inputs, Op::Dot) => format!("x[{ix}] * y[{ix}]"),
            (Format::F32, Domain::Inputs, Op::Sum) => format!("x[{ix}]"),
            (Format::F32, Domain::Sums, _) => format!("x[{ix}] as f32"),
            _ => self.val(walk, k, d, i, s, false),
        }
    }

    /// The statement adding element `i` to the lane register `acc`, of
    /// `format` (a fused multiply-add where `fma`).
    #[allow(clippy::too_many_arguments)]
    fn lane_step(
        &mut self,
        walk: &Walk,
        k: usize,
        d: Domain,
        (format, fma): (Format, bool),
        acc: &str,
        i: &str,
        s: &str,
    ) -> String {
        let ix = at(i, s);
        if fma {
            self.fma = true;
            return format!("{acc} = x[{ix}].mul_add(y[{ix}], {acc});");
        }
        match (format, d, walk.plan.op) {
            (Format::F32, Domain::Inputs, Op::Sum) => format!("{acc} += x[{ix}];"),
            (Format::F32, Domain::Inputs, Op::Dot) => format!("{acc} += x[{ix}] * y[{ix}];"),
            (Format::F32, Domain::Sums, _) => format!("{acc} += x[{ix}] as f32;"),
            _ => format!("{acc} += {};", self.val(walk, k, d, i, s, true)),
        }
    }

    /// The body of `interleave(lanes, …)`: lanes in registers where the
    /// walk gives them and they fit the stack, else each lane by the inner
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
        let small = lanes <= STACK_LANES;
        let mut b = format!("    let k = n.min({lanes});\n    let shortest = n / k;\n");
        b += &match small {
            true => format!("    let mut lanes = [0.0f64; {lanes}];\n"),
            false => format!("    let mut lanes = {};\n", self.buffer("f64", "k")),
        };
        // Each lane by the inner function, indented by `pad`.
        let view = self.view(walk, d, "r", "k");
        let generic = |pad: &str| {
            format!(
                "{pad}for (r, lane) in lanes.iter_mut().take(k).enumerate() {{\n{pad}    *lane = \
                 {inner}({view}, (n - r).div_ceil(k), shortest, None);\n{pad}}}\n"
            )
        };
        match lane {
            Some(Lane::Registers { format, fma }) if small => {
                let ty = register(format);
                // Unit stride: the lanes' first row, each whole row and the
                // rest as slices of known length, which compilers vectorise.
                let init = self.lane_init(walk, i, d, format, "r", "1");
                let step = self.lane_step(walk, i, d, (format, fma), "acc[r]", "r", "1");
                let dot = (d, walk.plan.op) == (Domain::Inputs, Op::Dot);
                let cut = |range: &str| match dot {
                    true => format!("let (x, y) = (&x[{range}], &y[{range}]);"),
                    false => format!("let x = &x[{range}];"),
                };
                let rows = match dot {
                    true => format!(
                        "for (x, y) in x[{lanes}..full]\n    .chunks_exact({lanes})\n    \
                         .zip(y[{lanes}..full].chunks_exact({lanes}))\n{{"
                    ),
                    false => format!("for x in x[{lanes}..full].chunks_exact({lanes}) {{"),
                };
                let unit = format!(
                    "{{\n    {}\n    for r in 0..{lanes} {{\n        acc[r] = {init};\n    }}\n}}\n\
                     {rows}\n    for r in 0..{lanes} {{\n        {step}\n    }}\n}}\n{{\n    {}\n    \
                     for r in 0..x.len() {{\n        {step}\n    }}\n}}\n",
                    cut(&format!("..{lanes}")),
                    cut("full..n"),
                );
                let init = self.lane_init(walk, i, d, format, "r", "s");
                let rest = self.lane_step(walk, i, d, (format, fma), "acc[r]", "full + r", "s");
                let step = self.lane_step(
                    walk,
                    i,
                    d,
                    (format, fma),
                    "acc[r]",
                    &format!("j * {lanes} + r"),
                    "s",
                );
                let strided = format!(
                    "for r in 0..{lanes} {{\n    acc[r] = {init};\n}}\nfor j in 1..shortest {{\n    \
                     for r in 0..{lanes} {{\n        {step}\n    }}\n}}\nfor r in 0..n - full \
                     {{\n    {rest}\n}}\n"
                );
                let _ = write!(
                    b,
                    "    if k == {lanes} {{\n        let full = shortest * {lanes};\n        let mut \
                     acc = [0.0{ty}; {lanes}];\n        if s == 1 {{\n{}        }} else {{\n{}        \
                     }}\n        for r in 0..{lanes} {{\n            lanes[r] = {};\n        }}\n    \
                     }} else {{\n{}    }}\n",
                    indent(&unit, "            "),
                    indent(&strided, "            "),
                    widen(format, "acc[r]"),
                    generic("        ")
                );
            }
            _ => b += &generic("    "),
        }
        let _ = writeln!(b, "    {outer}(&lanes, 1, k, k, c)");
        b
    }

    /// The body of a function of shape `shape`.
    fn body(&mut self, walk: &Walk, f: &Function) -> String {
        let (k, d, a) = (f.k, f.d, f.add.as_str());
        let part = walk.part(k);
        let params = self.params(walk, d);
        let same = self.same(walk, d);
        let v = |g: &Self, i: &str| g.val(walk, k, d, i, "s", false);
        let w = |g: &Self, i: &str| g.val(walk, k, d, i, "s", true);
        match &f.shape {
            Shape::Sequential { .. } if part.compensated => format!(
                "    let mut t = {};\n    let mut e = 0.0;\n    for i in 1..n {{\n        \
                 k{k}(&mut t, &mut e, {});\n    }}\n    e{k}(c, t, e)\n",
                v(self, "0"),
                w(self, "i")
            ),
            Shape::Sequential {
                lane: Some(Lane::Registers { format, fma }),
            } => {
                let init = self.lane_init(walk, k, d, *format, "0", "s");
                let step = self.lane_step(walk, k, d, (*format, *fma), "acc", "i", "s");
                format!(
                    "    let mut acc = {init};\n    for i in 1..n {{\n        {step}\n    }}\n    \
                     {}(c, {})\n",
                    self.fin(),
                    widen(*format, "acc")
                )
            }
            Shape::Sequential { .. } => format!(
                "    let mut acc = {};\n    for i in 1..n {{\n        acc = {a}(acc, \
                 {});\n    }}\n    {}(c, acc)\n",
                v(self, "0"),
                w(self, "i"),
                self.fin()
            ),
            Shape::Reverse => {
                let fin = self.fin();
                format!(
                    "    if n == 1 {{\n        return {fin}(c, {});\n    }}\n    let mut acc = \
                     {};\n    for i in (0..n - 1).rev() {{\n        acc = {a}({}, acc);\n    }}\n    \
                     {fin}(c, acc)\n",
                    v(self, "0"),
                    w(self, "n - 1"),
                    v(self, "i")
                )
            }
            Shape::Halving { binary_tree } => {
                let rec = format!("r{k}{}", d.letter());
                let cut = match binary_tree {
                    false => "let h = n / 2;",
                    true => "let mut h = 1;\n    while 2 * h < n {\n        h *= 2;\n    }",
                };
                let (second, lone) = lone(&v(self, "0"), &w(self, "0"), "second");
                let _ = write!(
                    self.bodies,
                    "fn {rec}({params}, n: usize, {second}: bool) -> f64 {{\n    if n == 1 {{\n        \
                     return {lone};\n    }}\n    if n == 2 {{\n        \
                     return {a}({v0}, {w1});\n    }}\n    {cut}\n    let l = {rec}({same}, h, \
                     false);\n    let r = {rec}({}, n - h, true);\n    {a}(l, r)\n}}\n\n",
                    self.view(walk, d, "h", "1"),
                    v0 = v(self, "0"),
                    w1 = w(self, "1"),
                );
                format!("    {}(c, {rec}({same}, n, false))\n", self.fin())
            }
            Shape::Strided { lanes, pairwise } => {
                let buf = self.buffer("f64", "m");
                format!(
                    "    let m = n.min({lanes});\n    let mut sums = {buf};\n    for (r, sum) in \
                     sums.iter_mut().enumerate() {{\n        let mut acc = {};\n        for i in (r \
                     + {lanes}..n).step_by({lanes}) {{\n            acc = {a}(acc, {});\n        \
                     }}\n        *sum = acc;\n    }}\n    {}(c, {pairwise}(&sums))\n",
                    v(self, "r"),
                    w(self, "i"),
                    self.fin()
                )
            }
            Shape::Blocked(size) => format!(
                "    let mut sum = 0.0;\n    for b in (0..n).step_by({size}) {{\n        let \
                 end = n.min(b + {size});\n        let mut acc = {};\n        for i in b + \
                 1..end {{\n            acc = {a}(acc, {});\n        }}\n        sum = if b == \
                 0 {{ acc }} else {{ {a}(sum, acc) }};\n    }}\n    {}(c, sum)\n",
                v(self, "b"),
                w(self, "i"),
                self.fin()
            ),
            Shape::Interleave {
                lanes,
                inner,
                inner_part,
                outer,
                lane,
            } => self.interleave(walk, d, *lanes, inner, *inner_part, outer, *lane),
            Shape::Blocks { size, inner, outer } => {
                let buf = self.buffer("f64", "m");
                format!(
                    "    let m = (n - 1) / {size} + 1;\n    let mut sums = {buf};\n    for (j, sum) \
                     in sums.iter_mut().enumerate() {{\n        let at = j * {size};\n        let \
                     len = if n - at < {size} {{ n - at }} else {{ {size} }};\n        *sum = \
                     {inner}({}, len, len, None);\n    }}\n    {outer}(&sums, 1, m, m, c)\n",
                    self.view(walk, d, "at", "1")
                )
            }
            Shape::Body {
                multiple: m,
                body,
                tail,
            } => {
                let mut b = format!("    let cut = planned - planned % {m};\n");
                let carry = match part.compensated {
                    true => {
                        b += "    let mut e = 0.0;\n";
                        "Some(&mut e)"
                    }
                    false => "None",
                };
                match tail {
                    Some(tail) => {
                        let _ = write!(
                            b,
                            "    if cut == 0 {{\n        return {tail}({same}, n, planned, \
                             c);\n    }}\n    if cut >= n {{\n        return {body}({same}, n, \
                             cut, c);\n    }}\n    let {m}sum = {body}({same}, cut, cut, \
                             {carry});\n    let r = {tail}({}, n - cut, planned - cut, \
                             None);\n",
                            self.view(walk, d, "cut", "1"),
                            m = if part.compensated { "mut " } else { "" },
                        );
                        b += &match part.compensated {
                            true => {
                                format!("    k{k}(&mut sum, &mut e, r);\n    e{k}(c, sum, e)\n")
                            }
                            false => format!("    {}(c, {a}(sum, r))\n", self.fin()),
                        };
                    }
                    None => {
                        let v0 = v(self, "0");
                        let w = w(self, "i");
                        // Where the body takes every summand, the chain ends
                        // as its last step, the body's, ends it.
                        let _ = write!(
                            b,
                            "    if cut >= n {{\n        return {body}({same}, n, cut, c);\n    \
                             }}\n    let (mut sum, start) = if cut == 0 {{\n        ({v0}, 1)\n    \
                             }} else {{\n        ({body}({same}, cut, cut, {carry}), cut)\n    \
                             }};\n"
                        );
                        b += &match part.compensated {
                            true => format!(
                                "    for i in start..n {{\n        k{k}(&mut sum, &mut e, \
                                 {w});\n    }}\n    e{k}(c, sum, e)\n"
                            ),
                            false => format!(
                                "    for i in start..n {{\n        sum = {a}(sum, {w});\n    \
                                 }}\n    {}(c, sum)\n",
                                self.fin()
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
                let _ = write!(
                    self.bodies,
                    "fn {rec}({params}, n: usize) -> f64 {{\n    if n <= {leaf} {{\n        return \
                     {inner}({same}, n, n, None);\n    }}\n    let half = n / 2;\n    let cut = \
                     match half - half % {multiple} {{\n        0 => half,\n        cut => cut,\n    \
                     }};\n    let l = {rec}({same}, cut);\n    let r = {rec}({}, n - cut);\n    \
                     {a}(l, r)\n}}\n\n",
                    self.view(walk, d, "cut", "1"),
                );
                format!(
                    "    if n <= {leaf} {{\n        return {inner}({same}, n, n, c);\n    }}\n    \
                     {}(c, {rec}({same}, n))\n",
                    self.fin()
                )
            }
            Shape::Below {
                at: m,
                small,
                large,
            } => format!(
                "    if n < {m} {{\n        {small}({same}, n, n, c)\n    }} else {{\n        \
                 {large}({same}, n, n, c)\n    }}\n"
            ),
            Shape::Windows {
                width: w,
                inner,
                again,
            } => {
                let buf = self.buffer("f64", "m");
                format!(
                    "    if n <= {w} {{\n        return {inner}({same}, n, n, c);\n    }}\n    \
                     let m = (n - 1) / {w} + 1;\n    let low = (m * {w} - n) / 2;\n    let mut \
                     sums = {buf};\n    for (j, sum) in sums.iter_mut().enumerate() {{\n        let \
                     at = (j * {w}).saturating_sub(low);\n        let end = ((j + 1) * {w} - \
                     low).min(n);\n        *sum = {inner}({}, end - at, end - at, None);\n    \
                     }}\n    {again}(&sums, 1, m, m, c)\n",
                    self.view(walk, d, "at", "1"),
                )
            }
            Shape::Split {
                blocks: p,
                inner,
                combine,
            } => {
                let buf = self.buffer("f64", "m");
                let combine = match combine {
                    Combine::Doubling(dbl) => format!("{}(c, {dbl}(&sums, {p}))", self.fin()),
                    Combine::Outer(outer) => format!("{outer}(&sums, 1, m, m, c)"),
                };
                format!(
                    "    let m = n.min({p});\n    let (len, longer) = (n / {p}, n % {p});\n    let \
                     mut sums = {buf};\n    let mut at = 0;\n    for (j, sum) in \
                     sums.iter_mut().enumerate() {{\n        let take = len + usize::from(j < \
                     longer);\n        *sum = {inner}({}, take, take, None);\n        at += \
                     take;\n    }}\n    {combine}\n",
                    self.view(walk, d, "at", "1")
                )
            }
            Shape::Doubling { doubling } => {
                self.alloc = true;
                let vi = v(self, "i");
                format!(
                    "    let vals: alloc::vec::Vec<f64> = (0..n).map(|i| {vi}).collect();\n    \
                     {}(c, {doubling}(&vals, n))\n",
                    self.fin()
                )
            }
            Shape::Fold => {
                let rec = format!("r{k}{}", d.letter());
                let (v, w) = (v(self, "0"), w(self, "0"));
                let (second, lone) = lone(&v, &w, "second");
                let _ = write!(
                    self.bodies,
                    "fn {rec}({params}, n: usize, {second}: bool) -> f64 {{\n    if n == 1 {{\n        \
                     return {lone};\n    }}\n    let e = {rec}({}, (n \
                     + 1) / 2, false);\n    let o = {rec}({}, n / 2, true);\n    {a}(e, o)\n}}\n\n",
                    self.view(walk, d, "0", "2"),
                    self.view(walk, d, "1", "2"),
                );
                format!("    {}(c, {rec}({same}, n, false))\n", self.fin())
            }
            Shape::Fanout(fan) => {
                let rec = format!("r{k}{}", d.letter());
                let (v, w) = (v(self, "r"), w(self, "r"));
                // A value with no children is added to its parent's.
                let (second, first) = lone(&v, &w, "second && stride >= n - r");
                let _ = write!(
                    self.bodies,
                    "fn {rec}({params}, n: usize, r: usize, stride: usize, {second}: bool) -> f64 \
                     {{\n    let below = stride.checked_mul({fan}).unwrap_or(usize::MAX);\n    \
                     let mut sum = {first};\n    for i in 1..={fan} {{\n        let Some(child) = \
                     stride.checked_mul(i).and_then(|o| o.checked_add(r)) else {{\n            \
                     break;\n        }};\n        if child >= n {{\n            break;\n        \
                     }}\n        sum = {a}(sum, {rec}({same}, n, child, below, true));\n    }}\n    \
                     sum\n}}\n\n",
                );
                format!("    {}(c, {rec}({same}, n, 0, 1, false))\n", self.fin())
            }
            Shape::Rotate { by, inner } => {
                self.alloc = true;
                let turned = |v: &str, t: &str| {
                    format!(
                        "    let r{v}: alloc::vec::Vec<{t}> = (0..n).map(|i| {v}[((st + i) % n) * \
                         s]).collect();\n"
                    )
                };
                let mut b = format!("    let st = if {by} < n {{ {by} }} else {{ 0 }};\n");
                match (d, walk.plan.op) {
                    (Domain::Sums, _) => {
                        b += &turned("x", "f64");
                        b += &format!("    {inner}(&rx, 1, n, n, c)\n");
                    }
                    (Domain::Inputs, Op::Sum) => {
                        b += &turned("x", self.ty);
                        b += &format!("    {inner}(&rx, 1, n, n, c)\n");
                    }
                    (Domain::Inputs, Op::Dot) => {
                        b += &turned("x", self.ty);
                        b += &turned("y", self.ty);
                        b += &format!("    {inner}(&rx, &ry, 1, n, n, c)\n");
                    }
                }
                b
            }
            Shape::Pieces { steps, inner } => {
                let mut b =
                    "    let mut at = 0;\n    let mut sum: Option<f64> = None;\n".to_string();
                for step in *steps {
                    let _ = writeln!(
                        b,
                        "    while at < planned && planned - at >= {step} {{\n        let p = \
                         {inner}({}, {step}, {step}, None);\n        sum = Some(sum.map_or(p, \
                         |sum| {a}(sum, p)));\n        at += {step};\n    }}",
                        self.view(walk, d, "at", "1")
                    );
                }
                let _ = write!(
                    b,
                    "    if at < n {{\n        let p = {inner}({}, n - at, n - at, None);\n        \
                     sum = Some(sum.map_or(p, |sum| {a}(sum, p)));\n    }}\n    {}(c, \
                     sum.unwrap_or(0.0))\n",
                    self.view(walk, d, "at", "1"),
                    self.fin()
                );
                b
            }
            Shape::KBlocks {
                size: q,
                unit,
                inner,
            } => {
                let half = match unit {
                    Some(u) => format!("(left / 2).div_ceil({u}) * {u}"),
                    None => "left.div_ceil(2)".to_string(),
                };
                format!(
                    "    let mut at = 0;\n    let mut sum: Option<f64> = None;\n    while at < n \
                     {{\n        let left = n - at;\n        let take = if left >= 2 * {q} {{\n       \
                     {q}\n        }} else if left > {q} {{\n            {half}\n        }} else {{\n  \
                     left\n        }};\n        let p = {inner}({}, take, take, None);\n        \
                     sum = Some(sum.map_or(p, |sum| {a}(sum, p)));\n        at += take;\n    }}\n    \
                     {}(c, sum.unwrap_or(0.0))\n",
                    self.view(walk, d, "at", "1"),
                    self.fin()
                )
            }
        }
    }
}

impl Backend for Rust {
    const ADDITION_FIRST: bool = false;

    fn name(&self, base: &str) -> String {
        base.to_string()
    }

    fn begin(&mut self, _walk: &Walk, _k: usize, _d: Domain, _name: &str) {}

    fn helper(&mut self, walk: &Walk, k: usize, helper: Helper, name: &str) {
        let a = format!("a{k}");
        match helper {
            Helper::Addition => {
                let part = walk.part(k);
                let body = match part.format {
                    Format::F64 => "p + q".to_string(),
                    _ if part.narrow => "f64::from(p as f32 + q as f32)".to_string(),
                    _ => {
                        self.round_once = true;
                        "add_f32(p, q)".to_string()
                    }
                };
                let _ = writeln!(
                    self.helpers,
                    "fn {name}(p: f64, q: f64) -> f64 {{\n    {body}\n}}\n"
                );
                if part.compensated {
                    let end = match part.drops_error {
                        true => "t".to_string(),
                        false => format!("a{k}(t, -e)"),
                    };
                    let _ = writeln!(
                        self.helpers,
                        "fn k{k}(t: &mut f64, e: &mut f64, v: f64) {{\n    let y = a{k}(v, -*e);\n    \
                         let u = a{k}(*t, y);\n    *e = a{k}(a{k}(u, -*t), -y);\n    *t = u;\n}}\n\n\
                         fn e{k}(c: Option<&mut f64>, t: f64, e: f64) -> f64 {{\n    match c {{\n        \
                         Some(c) => {{\n            *c = e;\n            t\n        }}\n        None => \
                         {end},\n    }}\n}}\n"
                    );
                }
            }
            Helper::Pairwise => {
                let _ = write!(
                    self.helpers,
                    "fn {name}(v: &[f64]) -> f64 {{\n    if v.len() == 1 {{\n        return v[0];\n    \
                     }}\n    let (l, r) = v.split_at(v.len() / 2);\n    {a}({name}(l), {name}(r))\n}}\n\n"
                );
            }
            Helper::Doubling => {
                self.alloc = true;
                let _ = write!(
                    self.helpers,
                    "fn {name}(v: &[f64], ranks: usize) -> f64 {{\n    let pow = if ranks < 2 {{ 1 }} \
                     else {{ 1 << (usize::BITS - 1 - ranks.leading_zeros()) }};\n    let folded = \
                     (2 * (ranks - pow)).min(v.len());\n    let mut w: alloc::vec::Vec<f64> = \
                     v[..folded]\n        .chunks(2)\n        .map(|p| if p.len() == 2 {{ {a}(p[0], \
                     p[1]) }} else {{ p[0] }})\n        .collect();\n    \
                     w.extend_from_slice(&v[folded..]);\n    while w.len() > 1 {{\n        w = \
                     w.chunks(2)\n            .map(|p| if p.len() == 2 {{ {a}(p[0], p[1]) }} else \
                     {{ p[0] }})\n            .collect();\n    }}\n    w[0]\n}}\n\n"
                );
            }
        }
    }

    fn function(&mut self, walk: &Walk, f: Function) {
        let body = self.body(walk, &f);
        let planned = match f.shape {
            Shape::Body { .. } | Shape::Pieces { .. } => "planned",
            _ => "_planned",
        };
        let _ = write!(
            self.bodies,
            "fn {}({}, n: usize, {planned}: usize, c: Option<&mut f64>) -> f64 {{\n{body}}}\n\n",
            f.name,
            self.params(walk, f.d)
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
        if self.round_once {
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
