//! A formula's text form: written by `Display`, read back by `FromStr`
//! (the grammar in the module docs of [`crate::formula`]).

use std::fmt;
use std::str::FromStr;

use super::simd::{MAX_REGISTERS, RegisterSum, Rest, Simd, Stage};
use super::{Formula, Tail};
use crate::error::abbreviated;
use crate::order::{MAX_PARAMETER, Order};

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Formula::Order(order) => write!(f, "{order}"),
            Formula::Interleave(k, i, o) => write!(f, "interleave({k}, {i}, {o})"),
            Formula::Blocks(b, i, o) => write!(f, "blocks({b}, {i}, {o})"),
            Formula::Body(m, body, Tail::Then) => write!(f, "body({m}, {body}, then)"),
            Formula::Body(m, body, Tail::First) => write!(f, "body({m}, {body}, first)"),
            Formula::Body(m, body, Tail::Apart(t)) => write!(f, "body({m}, {body}, {t})"),
            Formula::Halves {
                leaf,
                multiple,
                inner,
            } => write!(f, "halves({leaf}, {multiple}, {inner})"),
            Formula::Lead(m, body, rest) => write!(f, "lead({m}, {body}, {rest})"),
            Formula::Below(m, s, l) => write!(f, "below({m}, {s}, {l})"),
            Formula::Bisect(d, inner) => write!(f, "bisect({d}, {inner})"),
            Formula::Peel(p, lanes) => write!(f, "peel({p}, {lanes})"),
            Formula::Rotate(k, inner) => write!(f, "rotate({k}, {inner})"),
            Formula::Fanout(fan) => write!(f, "fanout({fan})"),
            Formula::Windows(w, inner) => write!(f, "windows({w}, {inner})"),
            Formula::Pieces(steps, inner) => {
                f.write_str("pieces(")?;
                for s in steps {
                    write!(f, "{s}, ")?;
                }
                write!(f, "{inner})")
            }
            Formula::KBlocks(q, Some(u), inner) => write!(f, "kblocks({q}, {u}, {inner})"),
            Formula::KBlocks(q, None, inner) => write!(f, "kblocks({q}, {inner})"),
            Formula::Split(p, i, o) => write!(f, "split({p}, {i}, {o})"),
            Formula::Doubling => f.write_str("doubling"),
            Formula::Fold => f.write_str("fold"),
            Formula::Simd(simd) => write!(f, "{simd}"),
        }
    }
}

impl FromStr for Formula {
    type Err = String;

    /// Reads a formula as [`Formula`]'s `Display` writes it (spaces are
    /// optional).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let text: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        let mut parser = Parser {
            text: &text,
            at: 0,
            depth: 0,
        };
        let formula = parser.formula()?;
        if parser.at != text.len() {
            return Err(format!(
                "'{}': unexpected '{}' after a whole formula",
                abbreviated(s),
                abbreviated(&text[parser.at..])
            ));
        }
        Ok(formula)
    }
}

/// The deepest a formula nests (the parts inside parts): real kernels
/// need a handful, and the reader, the printer and the runner recurse once
/// a level, so the bound keeps them far from the end of the stack.
pub const MAX_DEPTH: usize = 64;

/// The most levels of `bisect(D, …)`: halving a count that fits a `usize`
/// reaches single summands within 64.
pub const MAX_BISECTIONS: usize = 64;

/// A recursive-descent reader of the grammar in the module docs.
struct Parser<'t> {
    text: &'t str,
    at: usize,
    /// Parts open around the one being read.
    depth: usize,
}

impl<'t> Parser<'t> {
    fn formula(&mut self) -> Result<Formula, String> {
        if self.depth >= MAX_DEPTH {
            return Err(format!(
                "the formula is nested more than {MAX_DEPTH} parts deep"
            ));
        }
        self.depth += 1;
        let formula = self.part();
        self.depth -= 1;
        formula
    }

    fn part(&mut self) -> Result<Formula, String> {
        let name = self.name();
        if !self.eat('(') {
            match name {
                "doubling" => return Ok(Formula::Doubling),
                "fold" => return Ok(Formula::Fold),
                "fanout" => return Err("'fanout' needs a fan-out, e.g. 'fanout(2)'".into()),
                _ => {}
            }
            let order: Order = name.parse()?;
            return Ok(Formula::Order(order));
        }
        let count = |what: &str, v: usize| -> Result<usize, String> {
            if v == 0 {
                Err(format!("{name}(…): {what} must be at least 1"))
            } else {
                Ok(v)
            }
        };
        let formula = match name {
            "interleave" | "blocks" | "split" => {
                let k = count("the count", self.number()?)?;
                self.expect(',')?;
                let inner = Box::new(self.formula()?);
                self.expect(',')?;
                let outer = Box::new(self.formula()?);
                match name {
                    "interleave" => Formula::Interleave(k, inner, outer),
                    "split" => Formula::Split(k, inner, outer),
                    _ => Formula::Blocks(k, inner, outer),
                }
            }
            "body" => {
                let m = count("the multiple", self.number()?)?;
                self.expect(',')?;
                let body = Box::new(self.formula()?);
                self.expect(',')?;
                let tail = self.tail()?;
                if tail == Tail::First && !matches!(*body, Formula::Interleave(..)) {
                    return Err(format!(
                        "body({m}, {}, first): the rest joins the first lane, so the body \
                         must be interleave(…)",
                        abbreviated(&body.to_string())
                    ));
                }
                Formula::Body(m, body, tail)
            }
            "halves" => {
                let leaf = count("the leaf size", self.number()?)?;
                self.expect(',')?;
                let multiple = count("the multiple", self.number()?)?;
                self.expect(',')?;
                let inner = Box::new(self.formula()?);
                Formula::Halves {
                    leaf,
                    multiple,
                    inner,
                }
            }
            "lead" => {
                let m = count("the multiple", self.number()?)?;
                self.expect(',')?;
                let body = Box::new(self.formula()?);
                self.expect(',')?;
                Formula::Lead(m, body, Box::new(self.formula()?))
            }
            "bisect" => {
                let d = count("the depth", self.number()?)?;
                if d > MAX_BISECTIONS {
                    return Err(format!(
                        "bisect({d}, …): at most {MAX_BISECTIONS} levels (pieces of one summand \
                         are not halved, so {MAX_BISECTIONS} cover any count of summands)"
                    ));
                }
                self.expect(',')?;
                Formula::Bisect(d, Box::new(self.formula()?))
            }
            "below" => {
                let m = self.number()?;
                self.expect(',')?;
                let small = Box::new(self.formula()?);
                self.expect(',')?;
                let large = Box::new(self.formula()?);
                Formula::Below(m, small, large)
            }
            "kblocks" => {
                let q = count("the block", self.number()?)?;
                self.expect(',')?;
                let starts_number = self.text[self.at..].starts_with(|c: char| c.is_ascii_digit());
                let u = if starts_number {
                    let u = count("the multiple", self.number()?)?;
                    self.expect(',')?;
                    if u > q {
                        return Err(format!(
                            "kblocks({q}, {u}, …): the multiple must be at most the block"
                        ));
                    }
                    Some(u)
                } else {
                    None
                };
                Formula::KBlocks(q, u, Box::new(self.formula()?))
            }
            "rotate" => {
                // 0 is allowed: the summands as they come.
                let k = self.number()?;
                self.expect(',')?;
                Formula::Rotate(k, Box::new(self.formula()?))
            }
            "fanout" => {
                let fan = self.number()?;
                if fan < 2 {
                    return Err(format!(
                        "fanout({fan}): a tree needs a fan-out of at least 2"
                    ));
                }
                Formula::Fanout(fan)
            }
            "windows" => {
                let w = count("the window", self.number()?)?;
                self.expect(',')?;
                let inner = Box::new(self.formula()?);
                if w < 2 {
                    return Err(
                        "windows(1, …): windows of one summand never shrink the count".into(),
                    );
                }
                Formula::Windows(w, inner)
            }
            "pieces" => {
                let mut steps = vec![count("a piece", self.number()?)?];
                self.expect(',')?;
                while self.text[self.at..].starts_with(|c: char| c.is_ascii_digit()) {
                    let step = count("a piece", self.number()?)?;
                    self.expect(',')?;
                    if step >= *steps.last().expect("one piece") {
                        return Err(format!(
                            "pieces({}, {step}, …): each piece must be smaller than the one \
                             before",
                            steps.last().expect("one piece")
                        ));
                    }
                    steps.push(step);
                }
                Formula::Pieces(steps, Box::new(self.formula()?))
            }
            "simd" => {
                let width = count("the lane count", self.number()?)?;
                self.simd(width)?
            }
            "peel" => {
                let p = count("the count peeled", self.number()?)?;
                self.expect(',')?;
                let lanes = self.formula()?;
                match lanes.lanes() {
                    Some((m, k)) if p < m && p <= k => Formula::Peel(p, Box::new(lanes)),
                    Some((m, k)) => {
                        return Err(format!(
                            "peel({p}, …): the peeled summands start lanes, and at most {} \
                             can (at most {} left over past a multiple of {m}, {k} lanes)",
                            (m - 1).min(k),
                            m - 1
                        ));
                    }
                    None => {
                        return Err(format!(
                            "peel({p}, {}): the peeled summands start lanes, so the \
                             formula must be interleave(…) or body(M, interleave(…), …)",
                            abbreviated(&lanes.to_string())
                        ));
                    }
                }
            }
            _ => {
                return Err(format!(
                    "unknown formula '{}(…)': expected interleave, blocks, body, halves, \
                     below, windows, kblocks, split, pieces, peel, rotate, fanout or simd (or \
                     doubling, fold, or an order: sequential, reverse, pairwise, binary-tree, \
                     strided:K, blocked:B, fused:K)",
                    abbreviated(name)
                ));
            }
        };
        self.expect(')')?;
        Ok(formula)
    }

    /// The rest of `simd(W, …)` after `W`, up to its `)`: the stages (each
    /// a register count, a merge in brackets after it), the fold, how the
    /// rest joins.
    fn simd(&mut self, width: usize) -> Result<Formula, String> {
        let mut stages = Vec::new();
        self.expect(',')?;
        while self.text[self.at..].starts_with(|c: char| c.is_ascii_digit()) {
            // A register count ends where its merge's `[` starts.
            let digits = self.text[self.at..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            let registers: usize = match self.text[self.at..self.at + digits].parse() {
                Ok(r) if r <= MAX_PARAMETER => r,
                _ => {
                    return Err(format!(
                        "simd(…): a stage's register count is at most {MAX_PARAMETER}"
                    ));
                }
            };
            self.at += digits;
            if !(1..=MAX_REGISTERS).contains(&registers) {
                return Err(format!(
                    "simd(…): a stage takes 1 to {MAX_REGISTERS} registers, not {registers}"
                ));
            }
            let merge = match self.eat('[') {
                true => {
                    let mut sums = Vec::new();
                    loop {
                        let (sum, rest) = RegisterSum::read(&self.text[self.at..])?;
                        sums.push(sum);
                        self.at = self.text.len() - rest.len();
                        if !self.eat(',') {
                            break;
                        }
                    }
                    self.expect(']')?;
                    Some(sums)
                }
                false => None,
            };
            stages.push(Stage { registers, merge });
            self.expect(',')?;
        }
        if stages.is_empty() {
            return Err(format!(
                "simd({width}, …): give at least one stage (its register count) before the fold"
            ));
        }
        let fold = self.formula()?;
        self.expect(',')?;
        let rest = match self.text[self.at..].strip_prefix("first(") {
            Some(_) => {
                self.at += "first(".len();
                let into = self.formula()?;
                self.expect(')')?;
                Rest::IntoFirst(Box::new(into))
            }
            None => match self.tail()? {
                Tail::Then => Rest::Then,
                Tail::First => Rest::First,
                Tail::Apart(t) => Rest::Apart(t),
            },
        };
        let simd = Simd {
            width,
            stages,
            fold,
            rest,
        };
        simd.check()?;
        Ok(Formula::Simd(Box::new(simd)))
    }

    /// A tail: `then`, `first`, or a formula that sums the rest apart.
    fn tail(&mut self) -> Result<Tail, String> {
        let rest = &self.text[self.at..];
        let word = &rest[..rest.find(['(', ',', ')']).unwrap_or(rest.len())];
        let tail = match word {
            "then" => Tail::Then,
            "first" => Tail::First,
            _ => return Ok(Tail::Apart(Box::new(self.formula()?))),
        };
        self.at += word.len();
        Ok(tail)
    }

    /// The text up to the next `(`, `,` or `)`.
    fn name(&mut self) -> &'t str {
        let rest: &'t str = &self.text[self.at..];
        let len = rest.find(['(', ',', ')']).unwrap_or(rest.len());
        self.at += len;
        &rest[..len]
    }

    /// A whole number of at most [`MAX_PARAMETER`].
    fn number(&mut self) -> Result<usize, String> {
        let word = self.name();
        match word.parse::<usize>() {
            Ok(v) if v <= MAX_PARAMETER => Ok(v),
            Err(_) if !word.bytes().all(|b| b.is_ascii_digit()) || word.is_empty() => Err(format!(
                "expected a whole number, found '{}'",
                abbreviated(word)
            )),
            _ => Err(format!(
                "{} is too large: a formula's numbers are at most {MAX_PARAMETER}",
                abbreviated(word)
            )),
        }
    }

    fn eat(&mut self, c: char) -> bool {
        let yes = self.text[self.at..].starts_with(c);
        if yes {
            self.at += 1;
        }
        yes
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        let rest = &self.text[self.at..];
        if self.eat(c) {
            Ok(())
        } else if rest.is_empty() {
            Err(format!("expected '{c}' where the formula ends"))
        } else {
            Err(format!(
                "expected '{c}' at '{}'",
                rest.chars().take(20).collect::<String>()
            ))
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
    fn formulas_print_as_they_parse() {
        for s in [
            "sequential",
            "strided:8",
            "interleave(4, pairwise, sequential)",
            "body(32, interleave(32, sequential, interleave(4, pairwise, pairwise)), sequential)",
            "below(8, sequential, halves(128, 8, body(8, interleave(8, sequential, pairwise), then)))",
            "blocks(128, pairwise, binary-tree)",
            "peel(4, body(8, interleave(8, sequential, pairwise), sequential))",
            "windows(32, sequential)",
            "body(8, interleave(2, sequential, sequential), first)",
            "kblocks(320, 8, body(8, interleave(2, sequential, sequential), first))",
            "split(4, sequential, doubling)",
            "rotate(3, sequential)",
            "split(6, sequential, fanout(2))",
            "fanout(1099511627776)",
        ] {
            assert_eq!(f(s).to_string(), s);
        }
    }

    #[test]
    fn bad_formulas_say_what_is_wrong() {
        for (s, says) in [
            ("interleave(8, sequential)", "expected ','"),
            ("lanes(8, sequential, pairwise)", "unknown formula 'lanes"),
            ("blocks(0, sequential, sequential)", "at least 1"),
            ("halves(x, 8, sequential)", "whole number"),
            ("pairwise)", "unexpected ')'"),
            ("strided", "needs a lane count"),
            ("peel(4, pairwise)", "must be interleave"),
            ("windows(1, sequential)", "never shrink"),
            ("fanout(1)", "fan-out of at least 2"),
            ("fanout(0)", "fan-out of at least 2"),
            ("fanout", "needs a fan-out"),
            ("fanout(2, sequential)", "expected ')'"),
            ("fanout(1099511627777)", "too large"),
            ("peel(8, interleave(8, sequential, pairwise))", "at most 7"),
            (
                "peel(4, body(8, interleave(2, sequential, sequential), first))",
                "at most 2",
            ),
        ] {
            let e = s.parse::<Formula>().unwrap_err();
            assert!(e.contains(says), "{s}: {e}");
        }
    }
}
