//! The code of emitted functions, as no language spells it: declarations,
//! assignments, loops and conditions over sizes and values, calls of
//! functions over views. The walk's shapes are written in it once
//! (`lower.rs`); a [`Spell`] prints it in one language.
//!
//! A function reads one view of what it sums: element `i` of `n`, of the
//! inputs (or their products, of a dot) or of partial sums, as its
//! parameters `x` (and `y`), `s` and, in Python, `o` hold it.

use std::ops;

use super::plan::Op;
use crate::arith::Product;
use crate::format::Format;

/// What a function sums: the inputs (products, of a dot) or partial sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Domain {
    Inputs,
    Sums,
}

impl Domain {
    /// The letter that ends the name of a function over it (`p0x`).
    pub(super) fn letter(self) -> char {
        match self {
            Domain::Inputs => 'x',
            Domain::Sums => 'v',
        }
    }
}

/// How the lanes of a part's left-to-right loop over a domain add.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lane {
    /// Each step is `format`'s own addition (f32 additions of f32 values,
    /// f64 additions), or with `fma` a fused multiply-add of the exact
    /// product, so registers of that format hold the lanes.
    Registers { format: Format, fma: bool },
    /// Each step is an f32 addition of wider values (an exact product, an
    /// f64 input), rounded once: no register's own addition.
    Once,
}

/// The type of a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    /// A count or an index.
    Size,
    /// A value held as a double.
    Real,
    Flag,
    /// A register of a format, whose own additions a lane makes.
    Reg(Format),
    /// The error a compensated chain carries, a cell that a call writes.
    Error,
    /// A binary exponent.
    Int,
    /// An exact sum of aligned terms, a 64-bit integer.
    Whole,
    /// A 16-bit value's bits.
    Bits,
    /// An array of doubles, or of exponents, passed whole.
    Reals,
    Ints,
}

/// A binary operation on sizes (or flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Lt,
    Le,
    Ge,
    Gt,
    Eq,
    Ne,
    And,
    Or,
    Shl,
    Shr,
    BitAnd,
    BitOr,
}

impl Bin {
    /// How tightly it binds (a larger number binds tighter).
    fn precedence(self) -> u8 {
        match self {
            Bin::Mul | Bin::Div | Bin::Rem => 5,
            Bin::Add | Bin::Sub => 4,
            Bin::Lt | Bin::Le | Bin::Ge | Bin::Gt | Bin::Eq | Bin::Ne => 3,
            Bin::Shl | Bin::Shr | Bin::BitAnd | Bin::BitOr => 3,
            Bin::And => 2,
            Bin::Or => 1,
        }
    }

    /// Whether it works on bits, whose precedence the languages order
    /// differently: its operands are then always in parentheses.
    fn bitwise(self) -> bool {
        matches!(self, Bin::Shl | Bin::Shr | Bin::BitAnd | Bin::BitOr)
    }

    /// Its symbol in C and Rust.
    pub(super) fn symbol(self) -> &'static str {
        match self {
            Bin::Add => "+",
            Bin::Sub => "-",
            Bin::Mul => "*",
            Bin::Div => "/",
            Bin::Rem => "%",
            Bin::Lt => "<",
            Bin::Le => "<=",
            Bin::Ge => ">=",
            Bin::Gt => ">",
            Bin::Eq => "==",
            Bin::Ne => "!=",
            Bin::And => "&&",
            Bin::Or => "||",
            Bin::Shl => "<<",
            Bin::Shr => ">>",
            Bin::BitAnd => "&",
            Bin::BitOr => "|",
        }
    }
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Expr {
    Size(usize),
    /// The value 0.
    Zero,
    Flag(bool),
    Var(&'static str),
    Bin(Box<Expr>, Bin, Box<Expr>),
    Min(Box<Expr>, Box<Expr>),
    /// The second where the first holds, else the third; only the one
    /// taken is evaluated.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `a * b + c` of sizes, the largest size where it overflows.
    MulAdd(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A function or helper called by name.
    Call(String, Vec<Arg>),
    /// Element `at` (its stride applied) of the function's view as a
    /// double, read by its part as its first operand or its second.
    Val {
        second: bool,
        at: Box<Expr>,
    },
    /// Element `at`'s exact product (of f64 inputs) added to `onto`,
    /// rounded once to f64: a fused multiply-add.
    Fma {
        at: Box<Expr>,
        onto: Box<Expr>,
    },
    /// Element `at` of the view as a lane register of `format`'s first
    /// value.
    Reg {
        format: Format,
        at: Box<Expr>,
    },
    /// Element `at` of an array.
    Item(&'static str, Box<Expr>),
    /// A register of `format` as a double.
    Widen(Format, Box<Expr>),
    /// A value where the caller continues no chain: it ends here.
    Fin(Box<Expr>),
    /// The `k` lanes of the view summed left to right by part `part`,
    /// all a step at a time as arrays, in a language that has them.
    Lanes {
        part: usize,
        lane: Lane,
    },
    /// An integer.
    Int(i64),
    /// A double, as a literal every language reads alike.
    Real(String),
    /// A function of the maths each language spells its own way.
    Math(Math, Vec<Expr>),
    /// A value converted to a type.
    Cast(Ty, Box<Expr>),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    /// An array passed whole to a function.
    Whole(&'static str),
}

/// The maths of a fused chain, which each language spells its own way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Math {
    /// `floor(log2 |v|)` of a finite non-zero `v`.
    Exp,
    /// `v * 2^e`.
    Ldexp,
    Trunc,
    /// To the nearest integer, ties to even.
    RoundEven,
    Abs,
    CopySign,
    Finite,
    IsNan,
    /// Whether the sign bit is set.
    Negative,
    Infinity,
    Nan,
}

/// An argument of a call.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Arg {
    Value(Expr),
    View(View),
    Carry(Carry),
}

/// A view a callee reads.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum View {
    /// Every `step`-th element of the function's view from element `from`.
    At { from: Expr, step: Expr },
    /// A local array of partial sums.
    Array(&'static str),
    /// The local copy of the inputs a [`Stmt::Gathered`] makes.
    Gathered,
}

impl View {
    /// The function's own view.
    pub(super) fn same() -> View {
        View::At {
            from: Expr::Size(0),
            step: Expr::Size(1),
        }
    }

    /// Its elements from `from` on.
    pub(super) fn from(from: Expr) -> View {
        View::At {
            from,
            step: Expr::Size(1),
        }
    }
}

/// Where a callee writes the error a compensated chain carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Carry {
    /// Where the function's caller said (its parameter `c`).
    Caller,
    /// Nowhere: the callee ends its chain.
    Ends,
    /// The function's own error cell `e`.
    Local,
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Stmt {
    Let {
        name: &'static str,
        ty: Ty,
        value: Expr,
        mutable: bool,
    },
    Set(Place, Expr),
    /// `place += value`, of sizes.
    Grow(Place, Expr),
    /// An array of `len` zeros of `ty`, on the stack where `fixed` gives
    /// its largest length.
    Array {
        name: &'static str,
        ty: Ty,
        len: Expr,
        fixed: Option<usize>,
    },
    /// `value` returned, computed before the use of arrays `arrays` (or
    /// of the [`Stmt::Gathered`] copy, `gathered`) ends, where a language
    /// frees them.
    Release {
        value: Expr,
        arrays: &'static [&'static str],
    },
    /// A copy of `len` elements of the view, its element `i` the view's
    /// element `index` (an expression of `i`): [`View::Gathered`]. A
    /// rotation's copy, or a peel's, its seeds placed at the heads of
    /// their lanes.
    Gathered {
        index: Expr,
        len: Expr,
    },
    /// `var` from `from` up to `to` (excluded) by `step`, or down where
    /// `reverse`.
    For {
        var: &'static str,
        from: Expr,
        to: Expr,
        step: Expr,
        reverse: bool,
        body: Vec<Stmt>,
    },
    While(Expr, Vec<Stmt>),
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    Break,
    Return(Expr),
    /// Part `part`'s Kahan step adding `value` to the sum `t` and the
    /// error `e`.
    Kahan {
        part: usize,
        t: &'static str,
        e: &'static str,
        value: Expr,
    },
    /// Element `at` added to the lane register `acc` of `format`, by a
    /// fused multiply-add of the exact product where `fma`.
    Step {
        acc: Place,
        format: Format,
        fma: bool,
        at: Expr,
    },
}

/// What an assignment writes.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Place {
    Var(&'static str),
    Item(&'static str, Expr),
}

/// A function: part `k`'s over domain `d`, or a recursion or helper of
/// it. Its parameters are its view, `n`, then `extra`, then `c` where
/// `carries`; it returns a double.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Func {
    pub name: String,
    pub k: usize,
    pub d: Domain,
    pub extra: Vec<(&'static str, Ty)>,
    pub carries: bool,
    pub body: Vec<Stmt>,
}

/// A helper of a fused chain: its parameters, what it returns, and why
/// it is there.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Routine {
    pub name: String,
    pub doc: String,
    pub params: Vec<(&'static str, Ty)>,
    pub ret: Ty,
    pub body: Vec<Stmt>,
}

impl Routine {
    /// Its doc, in lines of at most `width` characters.
    pub(super) fn doc_lines(&self, width: usize) -> Vec<String> {
        let mut lines: Vec<String> = vec![];
        for word in self.doc.split(' ') {
            match lines.last_mut() {
                Some(line) if line.len() + 1 + word.len() <= width => {
                    line.push(' ');
                    line.push_str(word);
                }
                _ => lines.push(word.to_string()),
            }
        }
        lines
    }
}

/// What a function reads: its domain, the plan's operation, and how its
/// part rounds a product it reads as its first operand and its second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Reading {
    pub d: Domain,
    pub op: Op,
    pub first: Product,
    pub second: Product,
}

impl Reading {
    /// What a printer reads before its first function: the inputs.
    pub(super) fn inputs(op: Op) -> Reading {
        Reading {
            d: Domain::Inputs,
            op,
            first: Product::Exact,
            second: Product::Exact,
        }
    }

    /// Whether it reads a dot's two inputs.
    pub(super) fn dot(&self) -> bool {
        self.d == Domain::Inputs && self.op == Op::Dot
    }

    /// How it rounds a product it reads as a first operand or a second.
    pub(super) fn product(&self, second: bool) -> Product {
        match second {
            true => self.second,
            false => self.first,
        }
    }
}

impl Func {
    /// Its parameters after its view: `n`, the rest, each as `param`
    /// spells a name, its type, and whether the body reads it; then `c`,
    /// as `carry` spells it, where it carries a chain.
    pub(super) fn params(&self, param: impl Fn(&str, Ty, bool) -> String, carry: &str) -> String {
        let mut all = vec![param("n", Ty::Size, true)];
        all.extend(
            self.extra
                .iter()
                .map(|(name, ty)| param(name, *ty, name.starts_with('_') || self.uses(name))),
        );
        if self.carries {
            all.push(carry.to_string());
        }
        all.join(", ")
    }

    /// Whether its body reads variable `name`.
    pub(super) fn uses(&self, name: &str) -> bool {
        self.body.iter().any(|s| stmt_uses(s, name))
    }
}

fn stmt_uses(s: &Stmt, name: &str) -> bool {
    let all = |b: &[Stmt]| b.iter().any(|s| stmt_uses(s, name));
    match s {
        Stmt::Let { value, .. } => expr_uses(value, name),
        Stmt::Set(p, v) | Stmt::Grow(p, v) => place_uses(p, name) || expr_uses(v, name),
        Stmt::Array { len, .. } => expr_uses(len, name),
        Stmt::Release { value, arrays } => arrays.contains(&name) || expr_uses(value, name),
        Stmt::Break => false,
        Stmt::Gathered { index, len } => expr_uses(index, name) || expr_uses(len, name),
        Stmt::For {
            from,
            to,
            step,
            body,
            ..
        } => expr_uses(from, name) || expr_uses(to, name) || expr_uses(step, name) || all(body),
        Stmt::While(c, b) => expr_uses(c, name) || all(b),
        Stmt::If(c, a, b) => expr_uses(c, name) || all(a) || all(b),
        Stmt::Return(e) => expr_uses(e, name),
        Stmt::Kahan { t, e, value, .. } => *t == name || *e == name || expr_uses(value, name),
        Stmt::Step { acc, at, .. } => place_uses(acc, name) || expr_uses(at, name),
    }
}

fn place_uses(p: &Place, name: &str) -> bool {
    match p {
        Place::Var(v) => *v == name,
        Place::Item(v, at) => *v == name || expr_uses(at, name),
    }
}

fn expr_uses(e: &Expr, name: &str) -> bool {
    match e {
        Expr::Size(_)
        | Expr::Zero
        | Expr::Flag(_)
        | Expr::Lanes { .. }
        | Expr::Int(_)
        | Expr::Real(_) => false,
        Expr::Var(v) | Expr::Whole(v) => *v == name,
        Expr::Math(_, args) => args.iter().any(|a| expr_uses(a, name)),
        Expr::Cast(_, e) | Expr::Neg(e) | Expr::Not(e) => expr_uses(e, name),
        Expr::Bin(a, _, b) | Expr::Min(a, b) => expr_uses(a, name) || expr_uses(b, name),
        Expr::Cond(a, b, c) | Expr::MulAdd(a, b, c) => {
            expr_uses(a, name) || expr_uses(b, name) || expr_uses(c, name)
        }
        Expr::Call(_, args) => args.iter().any(|a| match a {
            Arg::Value(e) => expr_uses(e, name),
            Arg::View(View::At { from, step }) => expr_uses(from, name) || expr_uses(step, name),
            Arg::View(View::Array(v)) => *v == name,
            Arg::View(View::Gathered) | Arg::Carry(_) => false,
        }),
        Expr::Val { at, .. } | Expr::Reg { at, .. } => expr_uses(at, name),
        Expr::Fma { at, onto } => expr_uses(at, name) || expr_uses(onto, name),
        Expr::Item(v, at) => *v == name || expr_uses(at, name),
        Expr::Widen(_, e) | Expr::Fin(e) => expr_uses(e, name),
    }
}

/// Variable `name`.
pub(super) fn var(name: &'static str) -> Expr {
    Expr::Var(name)
}

/// Size `v`.
pub(super) fn size(v: usize) -> Expr {
    Expr::Size(v)
}

/// A variable declared, not to change.
pub(super) fn let_(name: &'static str, ty: Ty, value: Expr) -> Stmt {
    Stmt::Let {
        name,
        ty,
        value,
        mutable: false,
    }
}

/// A variable declared to change.
pub(super) fn mut_(name: &'static str, ty: Ty, value: Expr) -> Stmt {
    Stmt::Let {
        name,
        ty,
        value,
        mutable: true,
    }
}

/// `name = value`.
pub(super) fn set(name: &'static str, value: Expr) -> Stmt {
    Stmt::Set(Place::Var(name), value)
}

/// `name += value`.
pub(super) fn grow(name: &'static str, value: Expr) -> Stmt {
    Stmt::Grow(Place::Var(name), value)
}

/// `return value`.
pub(super) fn ret(value: Expr) -> Stmt {
    Stmt::Return(value)
}

/// `if cond { then }`.
pub(super) fn when(cond: Expr, then: Vec<Stmt>) -> Stmt {
    Stmt::If(cond, then, vec![])
}

/// `for var in from..to`.
pub(super) fn range(var: &'static str, from: Expr, to: Expr, body: Vec<Stmt>) -> Stmt {
    Stmt::For {
        var,
        from,
        to,
        step: size(1),
        reverse: false,
        body,
    }
}

/// Methods joining an expression to another by a binary operation, each
/// named for it.
macro_rules! binary {
    ($($name:ident => $op:ident),*) => {
        $(
            pub(super) fn $name(self, other: Expr) -> Expr {
                self.bin(Bin::$op, other)
            }
        )*
    };
}

impl Expr {
    fn bin(self, op: Bin, other: Expr) -> Expr {
        Expr::Bin(Box::new(self), op, Box::new(other))
    }

    binary!(lt => Lt, le => Le, ge => Ge, gt => Gt, eq => Eq, ne => Ne, and => And, or => Or);
    binary!(shl => Shl, shr => Shr, bitand => BitAnd, bitor => BitOr);

    pub(super) fn min(self, other: Expr) -> Expr {
        Expr::Min(Box::new(self), Box::new(other))
    }

    /// `then` where this holds, else `other`.
    pub(super) fn then(self, then: Expr, other: Expr) -> Expr {
        Expr::Cond(Box::new(self), Box::new(then), Box::new(other))
    }

    /// How tightly it binds as an operand (a larger number binds tighter).
    pub(super) fn precedence(&self) -> u8 {
        match self {
            Expr::Bin(_, op, _) => op.precedence(),
            Expr::Cond(..) => 1,
            _ => 9,
        }
    }
}

impl ops::Add for Expr {
    type Output = Expr;
    fn add(self, other: Expr) -> Expr {
        match (self, other) {
            (Expr::Size(0), e) | (e, Expr::Size(0)) => e,
            (a, b) => a.bin(Bin::Add, b),
        }
    }
}

impl ops::Sub for Expr {
    type Output = Expr;
    fn sub(self, other: Expr) -> Expr {
        match other {
            Expr::Size(0) => self,
            other => self.bin(Bin::Sub, other),
        }
    }
}

impl ops::Mul for Expr {
    type Output = Expr;
    fn mul(self, other: Expr) -> Expr {
        match (self, other) {
            (Expr::Size(0), _) | (_, Expr::Size(0)) => Expr::Size(0),
            (Expr::Size(1), e) | (e, Expr::Size(1)) => e,
            (a, b) => a.bin(Bin::Mul, b),
        }
    }
}

impl ops::Div for Expr {
    type Output = Expr;
    fn div(self, other: Expr) -> Expr {
        self.bin(Bin::Div, other)
    }
}

impl ops::Rem for Expr {
    type Output = Expr;
    fn rem(self, other: Expr) -> Expr {
        self.bin(Bin::Rem, other)
    }
}

/// How a language spells code: each expression and statement, a block
/// indented by a level. Binary operations and blocks are spelled alike
/// everywhere but for their symbols.
pub(super) trait Spell {
    /// An expression that [`Spell::any`] does not spell alike everywhere.
    fn expr(&mut self, e: &Expr) -> String;

    /// Element `at` of the view as a double, read as a first operand or a
    /// second.
    fn val(&mut self, at: &Expr, second: bool) -> String;

    /// Element `at` as a lane register of `format`'s first value, where it
    /// is no f32 input or product of f32 inputs.
    fn register(&mut self, format: Format, at: &Expr) -> String;

    /// The fused multiply-add of element `at`'s two f64 inputs onto the
    /// double `onto`.
    fn fma(&mut self, at: &Expr, onto: &str) -> String;

    /// What ends a simple statement.
    const END: &'static str;

    /// A condition as `if` and `while` take it.
    fn condition(&mut self, c: &Expr) -> String {
        self.any(c)
    }

    /// A declaration of variable `name`, without its end.
    fn declare(&mut self, name: &'static str, ty: Ty, value: &Expr, mutable: bool) -> String;

    /// The head of a loop of `var` from `from` up to `to` (excluded) by
    /// `step`, or down where `reverse`.
    fn range(&mut self, var: &str, from: &Expr, to: &Expr, step: &Expr, reverse: bool) -> String;

    /// A statement each language spells its own way: an array, a gathered
    /// copy.
    fn special(&mut self, s: &Stmt, pad: &str) -> String;

    /// `value` returned, arrays `arrays` freed first where the language
    /// frees arrays.
    fn release(&mut self, value: &Expr, _arrays: &[&str], pad: &str) -> String {
        self.stmt(&Stmt::Return(value.clone()), pad)
    }

    /// Part `part`'s Kahan step adding `value` to `t` and `e`, without
    /// its end.
    fn kahan(&mut self, part: usize, t: &str, e: &str, value: &str) -> String;

    /// Element `at` added to the lane register `acc` of `format`, by a
    /// fused multiply-add of the exact product where `fma`, without its
    /// end.
    fn step(&mut self, acc: &str, at: &Expr, format: Format, fma: bool) -> String;

    /// A statement, indented `pad`, ending in a newline.
    fn stmt(&mut self, s: &Stmt, pad: &str) -> String {
        let end = Self::END;
        match s {
            Stmt::Let {
                name,
                ty,
                value,
                mutable,
            } => format!("{pad}{}{end}\n", self.declare(name, *ty, value, *mutable)),
            Stmt::Set(place, value) => {
                format!("{pad}{} = {}{end}\n", self.place(place), self.any(value))
            }
            Stmt::Grow(place, value) => {
                format!("{pad}{} += {}{end}\n", self.place(place), self.any(value))
            }
            Stmt::For {
                var,
                from,
                to,
                step,
                reverse,
                body,
            } => {
                let head = self.range(var, from, to, step, *reverse);
                self.branches(&head, body, &[], pad)
            }
            Stmt::While(cond, body) => {
                let cond = self.condition(cond);
                self.branches(&format!("while {cond}"), body, &[], pad)
            }
            Stmt::If(cond, then, other) => {
                let cond = self.condition(cond);
                self.branches(&format!("if {cond}"), then, other, pad)
            }
            Stmt::Kahan { part, t, e, value } => {
                let value = self.any(value);
                format!("{pad}{}{end}\n", self.kahan(*part, t, e, &value))
            }
            Stmt::Step {
                acc,
                format,
                fma,
                at,
            } => {
                let acc = self.place(acc);
                format!("{pad}{}{end}\n", self.step(&acc, at, *format, *fma))
            }
            Stmt::Break => format!("{pad}break{end}\n"),
            Stmt::Return(e) => format!("{pad}return {}{end}\n", self.any(e)),
            Stmt::Release { value, arrays } => self.release(value, arrays, pad),
            _ => self.special(s, pad),
        }
    }

    /// Where a callee writes a chain's error, as the language passes
    /// it: [`Carry::Caller`], [`Carry::Ends`], [`Carry::Local`].
    const CARRY: [&'static str; 3];

    /// What the function being printed reads.
    fn reading(&self) -> Reading;

    /// The arguments of every `step`-th element of the function's view
    /// from element `from`.
    fn strided(&mut self, from: &Expr, step: &Expr) -> String;

    /// The arguments of a view of local arrays `names` (a dot's copies of
    /// its two inputs, or one), from their start.
    fn local(&self, names: &[&str]) -> String;

    /// A view's arguments.
    fn view(&mut self, view: &View) -> String {
        match view {
            View::At { from, step } => self.strided(from, step),
            View::Array(name) => self.local(&[name]),
            View::Gathered if self.reading().dot() => self.local(&["rx", "ry"]),
            View::Gathered => self.local(&["rx"]),
        }
    }

    /// A call of `name`.
    fn call(&mut self, name: &str, args: &[Arg]) -> String {
        let args: Vec<String> = args
            .iter()
            .map(|a| match a {
                Arg::Value(e) => self.any(e),
                Arg::View(v) => self.view(v),
                Arg::Carry(c) => Self::CARRY[*c as usize].to_string(),
            })
            .collect();
        format!("{name}({})", args.join(", "))
    }

    /// What an assignment writes.
    fn place(&mut self, p: &Place) -> String {
        match p {
            Place::Var(v) => self.expr(&Expr::Var(v)),
            Place::Item(v, at) => format!("{v}[{}]", self.any(at)),
        }
    }

    /// Element `at` of `x` and of `y`.
    fn elements(&mut self, at: &Expr) -> (String, String) {
        let at = self.any(at);
        (format!("x[{at}]"), format!("y[{at}]"))
    }

    /// `head { then } else { other }` (no `else` where `other` is empty),
    /// indented `pad`; a language of indented suites spells its own.
    fn branches(&mut self, head: &str, then: &[Stmt], other: &[Stmt], pad: &str) -> String {
        let inner = format!("{pad}    ");
        let mut b = format!("{pad}{head} {{\n{}{pad}}}", self.block(then, &inner));
        if !other.is_empty() {
            b += &format!(" else {{\n{}{pad}}}", self.block(other, &inner));
        }
        b + "\n"
    }

    /// The symbol of `op`.
    fn symbol(&self, op: Bin) -> &'static str {
        op.symbol()
    }

    /// How tightly `e` binds as the language spells it (a larger number
    /// binds tighter).
    fn precedence(&self, e: &Expr) -> u8 {
        e.precedence()
    }

    /// `e` as an operand binding at least as tight as `least`.
    fn operand(&mut self, e: &Expr, least: u8) -> String {
        let text = self.any(e);
        match self.precedence(e) < least {
            true => format!("({text})"),
            false => text,
        }
    }

    /// Any expression: binary operations, calls, elements of views and
    /// arrays alike in every language, the rest as [`Spell::expr`] spells it.
    fn any(&mut self, e: &Expr) -> String {
        match e {
            Expr::Bin(a, op, b) => {
                let p = match op.bitwise() {
                    true => 8,
                    false => op.precedence(),
                };
                // Comparisons do not chain: either side in parentheses.
                let left = match p {
                    3 | 8 => p + 1,
                    _ => p,
                };
                format!(
                    "{} {} {}",
                    self.operand(a, left),
                    self.symbol(*op),
                    self.operand(b, p + 1)
                )
            }
            Expr::Call(name, args) => self.call(name, args),
            Expr::Val { second, at } => self.val(at, *second),
            Expr::Fma { at, onto } => {
                let onto = self.any(onto);
                self.fma(at, &onto)
            }
            Expr::Item(name, at) => format!("{name}[{}]", self.any(at)),
            Expr::Reg {
                format: Format::F32,
                at,
            } if self.reading().d == Domain::Inputs => {
                let (x, y) = self.elements(at);
                match self.reading().dot() {
                    true => format!("{x} * {y}"),
                    false => x,
                }
            }
            Expr::Reg { format, at } => self.register(*format, at),
            _ => self.expr(e),
        }
    }

    /// Statements, each indented `pad`.
    fn block(&mut self, body: &[Stmt], pad: &str) -> String {
        body.iter().map(|s| self.stmt(s, pad)).collect()
    }
}
