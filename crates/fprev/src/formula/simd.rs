//! A vectorised kernel as it is built: accumulator registers of `W` lanes
//! (`simd(W, …)`), loops in stages that each take chunks of `U` registers'
//! worth of summands into the first `U` accumulators, lane by lane, the
//! accumulators merged between stages by fixed sums of registers, then
//! the lanes of every register left folded by a formula, and a rest too
//! short for the last stage joining in one of three ways.
//!
//! BLIS's `sdotv` for AVX2 (its `zen` kernel) takes 80 summands a loop
//! into ten registers of eight lanes, merges them into five, takes 40 a
//! loop, merges those into two, takes 16 a loop, merges them into one,
//! takes 8 a loop, adds the lanes left to right and the rest apart:
//!
//! ```
//! use fprev::formula::Formula;
//!
//! let blis: Formula = "simd(8, 10[0+5, 1+6, 2+7, 3+8, 4+9], 5[(0+2)+4, 1+3], 2[0+1], 1, \
//!                      sequential, sequential)"
//!     .parse()
//!     .unwrap();
//! // No loop of 80 below 80 summands: 40, then 8 into the first register.
//! assert_eq!(
//!     blis.tree(48).to_text(),
//!     "(((((((((((0+16)+32)+(8+24))+40)+((((1+17)+33)+(9+25))+41))+((((2+18)+34)+(10+26))+42))\
//!      +((((3+19)+35)+(11+27))+43))+((((4+20)+36)+(12+28))+44))+((((5+21)+37)+(13+29))+45))\
//!      +((((6+22)+38)+(14+30))+46))+((((7+23)+39)+(15+31))+47))"
//! );
//! ```
//!
//! Registers start empty (zero, which adds nothing to a tree): a stage
//! that never runs leaves its registers out of every sum after it.

use std::fmt;

use super::Formula;
use crate::order::Adder;

/// The most lane slots (registers times lanes) a kernel holds: a machine's
/// whole register file is a few thousand bytes.
pub const MAX_SLOTS: usize = 1 << 16;

/// The most registers a stage takes: a thread has at most 32 vector
/// registers, and 256 leave room for a scalar loop unrolled far while
/// every sum of them stays shallow.
pub const MAX_REGISTERS: usize = 256;

/// A vectorised kernel: [`Formula::Simd`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Simd {
    /// Lanes a register.
    pub width: usize,
    /// The loops, in the order they run; registers decrease.
    pub stages: Vec<Stage>,
    /// How the lane sums of the registers left (register by register,
    /// lane by lane) are summed.
    pub fold: Formula,
    /// How the summands too few for the last stage join.
    pub rest: Rest,
}

/// How a kernel's rest (fewer summands than its last stage takes) joins.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Rest {
    /// Added one by one to the folded sum (`then`).
    Then,
    /// Added one by one into the first lane, before the fold (`first`).
    First,
    /// Summed apart by the formula, the sum added into the first lane
    /// before the fold (`first(F)`).
    IntoFirst(Box<Formula>),
    /// Summed apart by the formula, the folded sum then added to it as the
    /// formula's own addition (its arithmetic, not the lanes').
    Apart(Box<Formula>),
}

impl Rest {
    /// The formula that sums the rest apart, where one does.
    pub fn formula(&self) -> Option<&Formula> {
        match self {
            Rest::IntoFirst(f) | Rest::Apart(f) => Some(f),
            Rest::Then | Rest::First => None,
        }
    }
}

/// One loop of a kernel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stage {
    /// Registers a chunk fills: the loop takes `registers × width`
    /// summands while that many remain.
    pub registers: usize,
    /// Where the loop is done, the accumulators it leaves, each a sum of
    /// the registers live (this stage's, and those of earlier stages it
    /// did not take); `None`: all kept, the next stage taking the first of
    /// them.
    pub merge: Option<Vec<RegisterSum>>,
}

/// The registers live after `stages`: a merge's count, else the most any
/// stage took.
pub(super) fn live(stages: &[Stage]) -> usize {
    stages.iter().fold(0, |live, s| match &s.merge {
        Some(m) => m.len(),
        None => live.max(s.registers),
    })
}

/// A fixed sum of registers, lane by lane: `(0+2)+4`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RegisterSum {
    /// One register, by its place.
    Register(usize),
    /// Two sums added.
    Add(Box<RegisterSum>, Box<RegisterSum>),
}

impl Simd {
    /// The registers left live after the last stage.
    pub fn live(&self) -> usize {
        live(&self.stages)
    }

    /// Checks what the grammar cannot: registers decrease from stage to
    /// stage and a merge sums each register once, leaving enough for the
    /// next stage; the slots fit [`MAX_SLOTS`].
    pub(super) fn check(&self) -> Result<(), String> {
        let mut live = 0;
        for (k, stage) in self.stages.iter().enumerate() {
            let u = stage.registers;
            if let Some(before) = k.checked_sub(1).map(|b| &self.stages[b])
                && u >= before.registers
            {
                return Err(format!(
                    "simd(…): a stage of {u} registers after one of {}: each stage takes \
                     fewer registers than the one before (a later one would never run)",
                    before.registers
                ));
            }
            if k > 0 && u > live {
                return Err(format!(
                    "simd(…): a stage of {u} registers after a merge into {live}"
                ));
            }
            if self.width.checked_mul(u).is_none_or(|s| s > MAX_SLOTS) {
                return Err(format!(
                    "simd({}, {u}, …): at most {MAX_SLOTS} lanes in all",
                    self.width
                ));
            }
            live = live.max(u);
            if let Some(merge) = &stage.merge {
                let mut seen = vec![false; live];
                for sum in merge {
                    sum.registers(&mut |r| match seen.get_mut(r) {
                        Some(s) if !*s => {
                            *s = true;
                            Ok(())
                        }
                        Some(_) => Err(format!("simd(…): register {r} merged twice")),
                        None => Err(format!(
                            "simd(…): register {r} merged, but {live} are live (0 to {})",
                            live - 1
                        )),
                    })?;
                }
                if let Some(r) = seen.iter().position(|s| !s) {
                    return Err(format!(
                        "simd(…): register {r} of the {live} live is merged into none"
                    ));
                }
                live = merge.len();
            }
        }
        Ok(())
    }

    /// Runs the kernel over `x`: its tree, or its sum.
    pub(super) fn run<A: Adder>(&self, x: &[A::Value], a: &mut A) -> A::Value {
        let w = self.width;
        let mut slots: Vec<Option<A::Value>> = Vec::new();
        let mut at = 0;
        for stage in &self.stages {
            let chunk = stage.registers * w;
            if slots.len() < chunk {
                slots.resize(chunk, None);
            }
            while x.len() - at >= chunk {
                for (slot, v) in slots.iter_mut().zip(&x[at..at + chunk]) {
                    *slot = Some(add(*slot, *v, a));
                }
                at += chunk;
            }
            if let Some(merge) = &stage.merge {
                // Every register live is merged; the slots hold them all.
                let mut merged = Vec::with_capacity(merge.len() * w);
                for sum in merge {
                    for lane in 0..w {
                        merged.push(sum.run(&slots, lane, w, a));
                    }
                }
                slots = merged;
            }
        }
        let rest = &x[at..];
        let first = match &self.rest {
            Rest::First => rest.iter().fold(slots[0], |s, v| Some(add(s, *v, a))),
            Rest::IntoFirst(t) if !rest.is_empty() => {
                let r = t.run(rest, a);
                Some(add(slots[0], r, a))
            }
            _ => slots[0],
        };
        slots[0] = first;
        slots.resize(self.live() * w, None);
        let folded = Sketch::fold(&self.fold, &slots, a);
        match (&self.rest, folded) {
            (Rest::First | Rest::IntoFirst(_), Some(sum)) => sum,
            (Rest::Then, Some(sum)) => rest.iter().fold(sum, |s, v| a.add(s, *v)),
            (Rest::Apart(t), Some(sum)) if !rest.is_empty() => {
                let r = t.run(rest, a);
                // The rest's running sum takes the kernel's, in its own
                // arithmetic (OpenBLAS's f64 `dot += mydot`).
                a.enter(t.part());
                let joined = a.add(sum, r);
                a.leave();
                joined
            }
            (Rest::Apart(_), Some(sum)) => sum,
            // No stage ran: the rest is every summand.
            (Rest::Apart(t), None) => t.run(rest, a),
            (_, None) => crate::order::Order::Sequential.run(rest, a),
        }
    }
}

/// A kernel's fold, the same at every count: its tree over the lane slots
/// live, whatever they hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoldSketch {
    /// The lane slots live (`live × width`).
    pub slots: usize,
    /// The additions in the order they are made, each of two terms (a
    /// slot's place below `slots`, else addition `t - slots`) and the
    /// part (its address, as [`Adder::enter`] is told) that makes it.
    pub additions: Vec<([usize; 2], usize)>,
    /// The term the fold returns.
    pub root: usize,
}

impl Simd {
    /// The fold's additions over the lane slots live, which do not depend
    /// on the count; `None` where a node adds more than two terms (fused).
    pub fn fold_sketch(&self) -> Option<FoldSketch> {
        let slots = self.live() * self.width;
        let (sketch, root) = Sketch::of(&self.fold, slots);
        let additions = sketch.nodes[slots..]
            .iter()
            .map(|node| match node {
                Node::Sum { terms, part } => match terms[..] {
                    [x, y] => Some(([x, y], *part)),
                    _ => None,
                },
                Node::Slot(_) => unreachable!("slots come first"),
            })
            .collect::<Option<Vec<_>>>()?;
        Some(FoldSketch {
            slots,
            additions,
            root,
        })
    }
}

/// `slot + v`, where an empty slot (a zero register) adds nothing.
fn add<A: Adder>(slot: Option<A::Value>, v: A::Value, a: &mut A) -> A::Value {
    match slot {
        Some(s) => a.add(s, v),
        None => a.loaded(v),
    }
}

impl RegisterSum {
    /// Calls `each` on every register it names, left to right.
    fn registers(&self, each: &mut dyn FnMut(usize) -> Result<(), String>) -> Result<(), String> {
        match self {
            RegisterSum::Register(r) => each(*r),
            RegisterSum::Add(x, y) => {
                x.registers(each)?;
                y.registers(each)
            }
        }
    }

    /// The sum of lane `lane` of the registers it names, over `slots`
    /// (register `r`'s lanes at `r * w ..`).
    fn run<A: Adder>(
        &self,
        slots: &[Option<A::Value>],
        lane: usize,
        w: usize,
        a: &mut A,
    ) -> Option<A::Value> {
        match self {
            RegisterSum::Register(r) => slots.get(r * w + lane).copied().flatten(),
            RegisterSum::Add(x, y) => {
                let (x, y) = (x.run(slots, lane, w, a), y.run(slots, lane, w, a));
                match (x, y) {
                    (Some(x), Some(y)) => Some(a.add(x, y)),
                    (x, y) => x.or(y),
                }
            }
        }
    }

    /// Reads `(0+2)+4` from the start of `text`, returning what follows;
    /// at most [`MAX_REGISTERS`] registers and as many parentheses deep, so
    /// that no sum read is deeper than the stack allows.
    pub(super) fn read(text: &str) -> Result<(RegisterSum, &str), String> {
        let mut left = MAX_REGISTERS;
        Self::sum(text, &mut left, 0)
    }

    fn sum<'t>(
        text: &'t str,
        left: &mut usize,
        depth: usize,
    ) -> Result<(RegisterSum, &'t str), String> {
        let (mut sum, mut rest) = Self::operand(text, left, depth)?;
        while let Some(more) = rest.strip_prefix('+') {
            let (next, after) = Self::operand(more, left, depth)?;
            sum = RegisterSum::Add(Box::new(sum), Box::new(next));
            rest = after;
        }
        Ok((sum, rest))
    }

    fn operand<'t>(
        text: &'t str,
        left: &mut usize,
        depth: usize,
    ) -> Result<(RegisterSum, &'t str), String> {
        if depth >= MAX_REGISTERS || *left == 0 {
            return Err(format!(
                "a register sum: more than {MAX_REGISTERS} registers or parentheses deep"
            ));
        }
        if let Some(inner) = text.strip_prefix('(') {
            let (sum, rest) = Self::sum(inner, left, depth + 1)?;
            return match rest.strip_prefix(')') {
                Some(rest) => Ok((sum, rest)),
                None => Err(format!("a register sum: expected ')' at '{}'", head(rest))),
            };
        }
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        match text[..digits].parse::<usize>() {
            Ok(r) if r < MAX_REGISTERS => {
                *left -= 1;
                Ok((RegisterSum::Register(r), &text[digits..]))
            }
            Ok(_) => Err(format!(
                "a register sum: register {} is past any kernel's",
                &text[..digits]
            )),
            Err(_) => Err(format!(
                "a register sum: expected a register's place or '(' at '{}'",
                head(text)
            )),
        }
    }
}

fn head(text: &str) -> String {
    text.chars().take(20).collect()
}

/// The fold's tree over the slots, sketched once over their places and
/// then added over what they hold, where a slot left empty (a zero
/// register) drops out: a node with one side empty is that side.
struct Sketch {
    nodes: Vec<Node>,
    /// The parts entered, innermost last: each node is the innermost's.
    entered: Vec<usize>,
}

enum Node {
    Slot(usize),
    Sum { terms: Vec<usize>, part: usize },
}

impl Adder for Sketch {
    type Value = usize;
    fn add(&mut self, x: usize, y: usize) -> usize {
        self.fused(&[x, y])
    }
    fn fused(&mut self, terms: &[usize]) -> usize {
        let part = self.entered.last().copied().unwrap_or(0);
        self.nodes.push(Node::Sum {
            terms: terms.to_vec(),
            part,
        });
        self.nodes.len() - 1
    }
    fn enter(&mut self, part: usize) {
        self.entered.push(part);
    }
    fn leave(&mut self) {
        self.entered.pop();
    }
}

impl Sketch {
    /// `fold` sketched over `slots` places, node `i` slot `i`; its root.
    fn of(fold: &Formula, slots: usize) -> (Sketch, usize) {
        let mut sketch = Sketch {
            nodes: (0..slots).map(Node::Slot).collect(),
            entered: Vec::new(),
        };
        let places: Vec<usize> = (0..slots).collect();
        let root = fold.run(&places, &mut sketch);
        (sketch, root)
    }

    /// `fold` over `slots`: the sum of those that hold a value.
    fn fold<A: Adder>(fold: &Formula, slots: &[Option<A::Value>], a: &mut A) -> Option<A::Value> {
        let (sketch, root) = Sketch::of(fold, slots.len());
        // Nodes come after their terms: one pass adds them all.
        let mut sums: Vec<Option<A::Value>> = Vec::with_capacity(sketch.nodes.len());
        for node in &sketch.nodes {
            let sum = match node {
                Node::Slot(i) => slots[*i],
                Node::Sum { terms, part } => {
                    let held: Vec<A::Value> = terms.iter().filter_map(|t| sums[*t]).collect();
                    match held[..] {
                        [] => None,
                        [one] => Some(one),
                        _ => {
                            a.enter(*part);
                            let sum = match held[..] {
                                [x, y] => a.add(x, y),
                                _ => a.fused(&held),
                            };
                            a.leave();
                            Some(sum)
                        }
                    }
                }
            };
            sums.push(sum);
        }
        sums[root]
    }
}

impl fmt::Display for RegisterSum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegisterSum::Register(r) => write!(f, "{r}"),
            RegisterSum::Add(x, y) => {
                let side = |s: &RegisterSum| match s {
                    RegisterSum::Add(..) => format!("({s})"),
                    _ => s.to_string(),
                };
                write!(f, "{}+{}", side(x), side(y))
            }
        }
    }
}

impl fmt::Display for Simd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "simd({}", self.width)?;
        for stage in &self.stages {
            write!(f, ", {}", stage.registers)?;
            if let Some(merge) = &stage.merge {
                let sums: Vec<String> = merge.iter().map(|s| s.to_string()).collect();
                write!(f, "[{}]", sums.join(", "))?;
            }
        }
        write!(f, ", {}, ", self.fold)?;
        match &self.rest {
            Rest::Then => f.write_str("then)"),
            Rest::First => f.write_str("first)"),
            Rest::IntoFirst(t) => write!(f, "first({t}))"),
            Rest::Apart(t) => write!(f, "{t})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(s: &str) -> Formula {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn one_stage_kernels_are_the_bodies_of_interleaves_they_generalise() {
        // Four registers of eight lanes, the rest apart: OpenBLAS's sdot
        // for Haswell as the order language first wrote it.
        let simd = f("simd(8, 4, interleave(4, pairwise, pairwise), sequential)");
        let body = f(
            "body(32, interleave(32, sequential, interleave(4, pairwise, pairwise)), sequential)",
        );
        for n in 1..=200 {
            assert_eq!(simd.tree(n), body.tree(n), "n = {n}");
        }
        // The rest one by one after the lanes: NumPy's unrolled sum.
        let simd = f("simd(1, 8, pairwise, then)");
        let body = f("body(8, interleave(8, sequential, pairwise), then)");
        for n in 8..=100 {
            assert_eq!(simd.tree(n), body.tree(n), "n = {n}");
        }
    }

    #[test]
    fn later_stages_add_into_the_first_registers_and_the_rest_into_the_first_lane() {
        // Four registers of four lanes, then two, then one; the rest into
        // lane 0: 16..19 fill register 0, then 20, 21, 22 lane 0.
        let mkl = f(
            "simd(4, 4, 2, 1, interleave(2, interleave(2, sequential, sequential), sequential), first)",
        );
        let tree = mkl.tree(23).to_text();
        assert!(
            tree.starts_with("(((((((((0+16)+20)+21)+22)+4)+8)+12)"),
            "{tree}"
        );
        assert!(tree.contains("((((2+18)+6)+10)+14)"), "{tree}");
        // Below a chunk of the first stage, registers never filled are
        // left out of the fold.
        assert_eq!(mkl.tree(5).to_text(), "(((0+4)+2)+(1+3))");
    }

    #[test]
    fn merges_sum_registers_lane_by_lane_and_empty_ones_drop_out() {
        let blis = f(
            "simd(8, 10[0+5, 1+6, 2+7, 3+8, 4+9], 5[(0+2)+4, 1+3], 2[0+1], 1, sequential, sequential)",
        );
        // Ten registers merged into five: register r and r + 5 lane by lane.
        let tree = blis.tree(80).to_text();
        assert!(
            tree.contains("((((0+40)+(16+56))+(32+72))+((8+48)+(24+64)))+"),
            "{tree}"
        );
        // No stage of ten or five ran: two registers of the second stage, merged.
        assert_eq!(
            blis.tree(20).to_text(),
            "(((((((((0+8)+(1+9))+(2+10))+(3+11))+(4+12))+(5+13))+(6+14))+(7+15))\
             +(((16+17)+18)+19))"
        );
        // Fewer summands than a lane: the rest alone.
        assert_eq!(blis.tree(3).to_text(), "((0+1)+2)");
    }

    #[test]
    fn kernels_print_as_they_parse_and_bad_ones_say_why() {
        for s in [
            "simd(8, 5[(0+2)+4, 1+3], 2[0+1], 1, sequential, sequential)",
            "simd(4, 4, 2, 1, fold, first)",
            "simd(8, 4, 1[((0+1)+2)+3], sequential, first(sequential))",
            "simd(16, 2[0+1], pairwise, then)",
        ] {
            assert_eq!(f(s).to_string(), s);
        }
        for (s, says) in [
            ("simd(8, 2, 4, sequential, then)", "fewer registers"),
            ("simd(8, 4[0+1, 2+3], 3, sequential, then)", "merge into 2"),
            (
                "simd(8, 4, 2[0+1], sequential, then)",
                "register 2 of the 4 live",
            ),
            (
                "simd(8, 3[0+1], sequential, then)",
                "register 2 of the 3 live is merged into none",
            ),
            ("simd(8, 2[0+0+1], sequential, then)", "merged twice"),
            ("simd(8, 2[0+5], sequential, then)", "but 2 are live"),
            ("simd(8, 2[0+], sequential, then)", "register's place"),
            ("simd(65536, 2, sequential, then)", "at most 65536 lanes"),
            ("simd(8, sequential, then)", "at least one stage"),
            ("simd(8, 300, sequential, then)", "1 to 256 registers"),
        ] {
            let e = s.parse::<Formula>().unwrap_err();
            assert!(e.contains(says), "{s}: {e}");
        }
        // Sums too deep or too long for the stack are refused as they are
        // read, before any is checked or printed.
        let deep = format!(
            "simd(8, 2[{}0{}+1], sequential, then)",
            "(".repeat(100_000),
            ")".repeat(100_000)
        );
        let long = format!("simd(8, 2[{}1], sequential, then)", "0+".repeat(100_000));
        for s in [deep, long] {
            let e = s.parse::<Formula>().unwrap_err();
            assert!(
                e.contains("more than 256 registers or parentheses deep"),
                "{e}"
            );
        }
    }
}
