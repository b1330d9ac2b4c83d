//! A vectorised kernel read from its trees ([`Formula::Simd`]): the chunk
//! of its first loop is the step of summand 0's chain in the largest tree
//! (summand 0, then the first summand of each later chunk, joins it one at
//! a time), the fold of its lanes is the tree of as many summands as its
//! accumulators hold, and what a tree cannot show by itself (how many
//! lanes a register has, which later loops run, which accumulators they
//! merge into, how the rest joins) is tried, fewest loops first, each
//! kernel checked against every tree.

use std::collections::HashMap;

use crate::formula::Formula;
use crate::formula::simd::{RegisterSum, Rest, Simd, Stage, live};
use crate::order::Order;
use crate::tree::SummationTree;

use super::infer_one;

/// The most registers a first loop may take: sixteen is a whole AVX-512
/// register file.
const MOST_REGISTERS: usize = 16;

/// The most loops after the first: kernels unroll by halves or fifths
/// down to one register, three or four loops in all.
const MOST_LATER: usize = 3;

/// The kernel whose tree at each tree's size is that tree, if one of the
/// kernels tried is: see the module docs. `trees` are by size, the
/// smallest first.
pub(super) fn kernel(trees: &[&SummationTree]) -> Option<Formula> {
    let largest = trees.last()?;
    let chunk = first_chunk(largest)?;
    // The fold of as many lanes as the accumulators hold, read once a
    // count: each costs a search over the tree of that size.
    let mut folds: HashMap<usize, Option<Formula>> = HashMap::new();
    let mut fold_of = |slots: usize| -> Option<Formula> {
        folds
            .entry(slots)
            .or_insert_with(|| infer_one(trees.iter().find(|t| t.n() == slots)?))
            .clone()
    };
    let widths = (0..7).map(|k| 64usize >> k).filter(|w| chunk % w == 0);
    for width in widths {
        let first = chunk / width;
        if first > MOST_REGISTERS {
            continue;
        }
        for later in later_loops(first) {
            for stages in merges(first, &later) {
                let Some(fold) = fold_of(live(&stages) * width) else {
                    continue;
                };
                for rest in rests() {
                    let kernel = Simd {
                        width,
                        stages: stages.clone(),
                        fold: fold.clone(),
                        rest,
                    };
                    if kernel.check().is_err() {
                        continue;
                    }
                    let formula = Formula::Simd(Box::new(kernel));
                    // Forced trees (one or two summands) fit every kernel.
                    let unforced = trees.iter().filter(|t| !t.is_forced());
                    if unforced.clone().all(|t| formula.tree(t.n()) == **t) {
                        return Some(formula);
                    }
                }
            }
        }
    }
    None
}

/// The step of summand 0's chain: in `((0 + C) + 2C) + …`, `C`, where the
/// chain has at least three summands.
fn first_chunk(tree: &SummationTree) -> Option<usize> {
    let mut node = tree.leaf(0);
    let mut partners = Vec::new();
    while let Some(parent) = tree.parent(node)
        && partners.len() < 2
    {
        let [a, b] = tree.children(parent) else {
            return None;
        };
        let other = if *a == node { *b } else { *a };
        partners.push(tree.node(other).leaf?);
        node = parent;
    }
    match partners[..] {
        [c, d] if c > 1 && d == 2 * c => Some(c),
        _ => None,
    }
}

/// The register counts of the loops after a first of `first`: none, then
/// one, two, three of the counts below it, largest first.
fn later_loops(first: usize) -> Vec<Vec<usize>> {
    let mut all = vec![Vec::new()];
    for size in 1..=MOST_LATER {
        let mut chosen = Vec::new();
        subsets(first - 1, size, &mut chosen, &mut all);
    }
    all
}

/// Every decreasing list of `size` counts from `below` down to 1.
fn subsets(below: usize, size: usize, chosen: &mut Vec<usize>, all: &mut Vec<Vec<usize>>) {
    if chosen.len() == size {
        all.push(chosen.clone());
        return;
    }
    for u in (1..=below).rev() {
        chosen.push(u);
        subsets(u - 1, size, chosen, all);
        chosen.pop();
    }
}

/// The loops `first, later…`, each either keeping its registers or
/// merging every live one into the next loop's count (the last into one),
/// register `r` into `r mod count` (interleaved, as BLIS adds halves) or
/// into `r / (live / count)` (neighbours, as an AVX-512 register's two
/// halves are added into one AVX2 register), left to right: fewest merges
/// first.
fn merges(first: usize, later: &[usize]) -> Vec<Vec<Stage>> {
    let counts: Vec<usize> = std::iter::once(first)
        .chain(later.iter().copied())
        .collect();
    let mut all = Vec::new();
    // Each loop's choice, a digit: 0 keeps, 1 interleaves, 2 neighbours.
    for choices in 0..3u32.pow(counts.len() as u32) {
        let mut live = 0;
        let mut stages = Vec::new();
        for (k, &u) in counts.iter().enumerate() {
            live = usize::max(live, u);
            let into = counts.get(k + 1).copied().unwrap_or(1);
            let merge = match choices / 3u32.pow(k as u32) % 3 {
                1 if into < live => Some((0..into).map(|j| modular(j, into, live)).collect()),
                2 if into < live && live % into == 0 => {
                    Some((0..into).map(|j| neighbours(j, live / into)).collect())
                }
                _ => None,
            };
            if merge.is_some() {
                live = into;
            }
            stages.push(Stage {
                registers: u,
                merge,
            });
        }
        if !all.contains(&stages) {
            all.push(stages);
        }
    }
    all.sort_by_key(|s: &Vec<Stage>| s.iter().filter(|s| s.merge.is_some()).count());
    all
}

/// Registers `j, j + into, j + 2·into, …` below `live`, added left to right.
fn modular(j: usize, into: usize, live: usize) -> RegisterSum {
    left_to_right((j..live).step_by(into))
}

/// Registers `j·g … j·g + g - 1`, added left to right.
fn neighbours(j: usize, g: usize) -> RegisterSum {
    left_to_right(j * g..(j + 1) * g)
}

/// The registers of `rs` (at least one) added left to right.
fn left_to_right(mut rs: impl Iterator<Item = usize>) -> RegisterSum {
    let first = RegisterSum::Register(rs.next().expect("a register"));
    rs.fold(first, |sum, r| {
        RegisterSum::Add(Box::new(sum), Box::new(RegisterSum::Register(r)))
    })
}

/// How a rest may join, plainest first.
fn rests() -> [Rest; 4] {
    let sequential = || Box::new(Formula::Order(Order::Sequential));
    [
        Rest::Then,
        Rest::First,
        Rest::Apart(sequential()),
        Rest::IntoFirst(sequential()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(truth: &str, sizes: &[usize]) -> Formula {
        let truth: Formula = truth.parse().unwrap();
        let trees: Vec<SummationTree> = sizes.iter().map(|&n| truth.tree(n)).collect();
        let refs: Vec<&SummationTree> = trees.iter().collect();
        let formula = kernel(&refs).unwrap_or_else(|| panic!("no kernel for {truth}"));
        for n in [1, 7, 100, 999, 4099] {
            assert_eq!(
                formula.tree(n),
                truth.tree(n),
                "{truth}: found {formula}, n = {n}"
            );
        }
        formula
    }

    fn sizes() -> Vec<usize> {
        (1..=40)
            .chain([
                63, 64, 65, 100, 127, 128, 129, 200, 255, 256, 257, 300, 1000, 1024, 2048,
            ])
            .collect()
    }

    #[test]
    fn kernels_with_merges_between_their_loops_are_read_back() {
        // BLIS's sdotv for AVX2.
        let blis = found(
            "simd(8, 10[0+5, 1+6, 2+7, 3+8, 4+9], 5[(0+2)+4, 1+3], 2[0+1], 1, sequential, sequential)",
            &sizes(),
        );
        assert_eq!(
            blis.to_string(),
            "simd(8, 10[0+5, 1+6, 2+7, 3+8, 4+9], 5[(0+2)+4, 1+3], 2[0+1], 1, sequential, sequential)"
        );
    }

    #[test]
    fn kernels_merging_neighbouring_registers_are_read_back() {
        // OpenBLAS's sdot for AVX-512 (sdot_microk_skylakex-2.c): four
        // 16-lane accumulators a 64-summand step, each register's halves
        // added into four 8-lane ones for a 32-summand step.
        let skylakex = "simd(8, 8[0+1, 2+3, 4+5, 6+7], 4, interleave(8, sequential, \
                        interleave(4, sequential, pairwise)), sequential)";
        found(skylakex, &sizes());
    }

    #[test]
    fn kernels_that_keep_their_registers_are_read_back() {
        // MKL's sdot on one AVX2 thread: the rest into the first lane.
        found(
            "simd(4, 4, 2, 1, interleave(2, interleave(2, sequential, sequential), sequential), first)",
            &sizes(),
        );
        // A rest summed apart into the first lane, registers merged last.
        found(
            "simd(8, 4, 1[((0+1)+2)+3], sequential, first(sequential))",
            &sizes(),
        );
    }

    #[test]
    fn a_chain_too_short_to_show_its_step_explains_nothing() {
        let truth: Formula = "simd(8, 4, pairwise, then)".parse().unwrap();
        let trees: Vec<SummationTree> = [3, 8, 40].iter().map(|&n| truth.tree(n)).collect();
        let refs: Vec<&SummationTree> = trees.iter().collect();
        assert_eq!(kernel(&refs), None);
    }
}
