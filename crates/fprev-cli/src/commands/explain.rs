//! `fprev explain`: reveal at several sizes, then name the one formula of
//! the order language that gives every revealed tree.

use fprev::error::{Error, Result};
use fprev::formula::infer::infer;
use fprev::sweep::{self, Outcome};

use super::open_guarded;
use crate::args::ExplainArgs;
use crate::progress::SweepBar;
use crate::write;

/// Runs `fprev explain`: 0 with a formula that regenerates every revealed
/// tree, 1 when no formula does (the closest is named, as not explaining),
/// 3 when no size could be revealed.
pub(super) fn run(a: ExplainArgs) -> Result<i32> {
    a.guard.start();
    let s = sweep::sweep_with(
        &a.spec,
        &a.number.options(None),
        &a.sizes,
        &[None],
        &a.engine.options(),
        a.confirm,
        &mut open_guarded,
        &mut SweepBar::default(),
    )?;
    let mut trees = Vec::new();
    let mut skipped = Vec::new();
    for p in &s.points {
        match &p.outcome {
            Outcome::Tree(t) | Outcome::Unconfirmed(t) => trees.push(t.clone()),
            Outcome::OrderIndependent => skipped.push(format!("{} (order-independent)", p.n)),
            Outcome::Broken(why) => skipped.push(format!("{} ({why})", p.n)),
        }
    }
    if !skipped.is_empty() {
        eprintln!(
            "fprev: note: not revealed, so not explained: n = {}",
            skipped.join(", ")
        );
    }
    if trees.is_empty() {
        return Err(Error::BlackBox(format!(
            "{}: no size could be revealed, so there is nothing to explain",
            a.spec
        )));
    }
    let sizes: Vec<String> = trees.iter().map(|t| t.n().to_string()).collect();
    let found = infer(&trees);
    match (found.formula, found.closest) {
        (Some(formula), _) => {
            write::println(format_args!("native:{formula}"))?;
            write::println(format_args!("{}.", capitalised(&formula.sentence())))?;
            write::println(format_args!(
                "# regenerates the revealed tree of {} at each of {} sizes: n = {}",
                a.spec,
                trees.len(),
                sizes.join(",")
            ))?;
            Ok(0)
        }
        (None, closest) => {
            let closest = match closest {
                Some((f, at)) => format!(
                    "; the closest, native:{f}, gives every revealed tree below n = {at} but \
                     not the one at {at}"
                ),
                None => "; it gave two different trees at one size".to_string(),
            };
            write::println(format_args!(
                "# not explained: no formula of the order language regenerates every tree \
                 {} revealed at n = {}{closest}",
                a.spec,
                sizes.join(",")
            ))?;
            Ok(1)
        }
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
