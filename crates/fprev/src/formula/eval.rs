//! Running a formula: over numbers or tree nodes with any [`Adder`], as a
//! summation tree, and with each node marked by the part that adds it.

use super::{Formula, Tail};
use crate::order::{Adder, Order};
use crate::tree::SummationTree;

impl Formula {
    /// The summation tree of this formula for `n` summands.
    ///
    /// # Panics
    /// If `n` is 0.
    pub fn tree(&self, n: usize) -> SummationTree {
        crate::order::tree_of(n, |leaves, b| self.run(leaves, b))
    }

    /// For each node of `tree` (by index), the part of this formula that
    /// adds it, where the formula gives `tree` (else `None`): 0 for the
    /// leaves, then 1, 2, … for the parts in the order they first add.
    /// Nodes of one part (the additions that join a lane's blocks, say) do
    /// alike in most kernels, so their arithmetic can be asked of a few of
    /// them
    /// ([`reveal_arithmetic_by_parts`](crate::reveal::arithmetic::reveal_arithmetic_by_parts)).
    ///
    /// ```
    /// use fprev::formula::Formula;
    ///
    /// let f: Formula = "blocks(4, sequential, pairwise)".parse().unwrap();
    /// let tree = f.tree(8);
    /// let parts = f.parts(&tree).unwrap();
    /// let root = tree.root();
    /// let block = tree.children(root)[0];
    /// // The blocks' own additions are one part, those joining them another.
    /// assert_ne!(parts[root.index()], parts[block.index()]);
    /// assert_eq!(parts[block.index()], parts[tree.children(root)[1].index()]);
    /// assert!(f.parts(&fprev::Order::Sequential.tree(8)).is_none());
    /// ```
    pub fn parts(&self, tree: &SummationTree) -> Option<Vec<u32>> {
        let n = tree.n();
        let mut marked = Marked {
            builder: crate::tree::TreeBuilder::new(n),
            parts: vec![0; n],
            names: std::collections::HashMap::new(),
            entered: Vec::new(),
        };
        let leaves: Vec<_> = (0..n).map(|i| marked.builder.leaf(i)).collect();
        let root = self.run(&leaves, &mut marked);
        let generated = marked.builder.finish(root).ok()?;
        if generated != *tree {
            return None;
        }
        // A node is its smallest leaf and its size, in any tree of it.
        let key = |t: &SummationTree, v| (t.node(v).min_leaf, t.node(v).size);
        let by_key: std::collections::HashMap<(usize, usize), u32> = generated
            .graph()
            .node_indices()
            .map(|v| (key(&generated, v), marked.parts[v.index()]))
            .collect();
        Some(
            tree.graph()
                .node_indices()
                .map(|v| by_key[&key(tree, v)])
                .collect(),
        )
    }

    /// Runs the formula over `x` with any adder: numbers or tree nodes.
    ///
    /// # Panics
    /// If `x` is empty.
    pub fn run<A: Adder>(&self, x: &[A::Value], a: &mut A) -> A::Value {
        assert!(!x.is_empty(), "a formula needs at least one summand");
        a.enter(self.part());
        let sum = self.run_part(x, a);
        let sum = a.returned(sum);
        a.leave();
        sum
    }

    /// This part's name while it runs: its address.
    pub(super) fn part(&self) -> usize {
        self as *const Formula as usize
    }

    /// [`Formula::run`] of this part, its own additions unmarked.
    fn run_part<A: Adder>(&self, x: &[A::Value], a: &mut A) -> A::Value {
        match self {
            Formula::Order(order) => order.run(x, a),
            Formula::Interleave(..) => self.run_lanes(x, &[], &[], a),
            Formula::Blocks(b, inner, outer) => {
                let sums: Vec<A::Value> = x.chunks(*b).map(|c| inner.run(c, a)).collect();
                outer.run(&sums, a)
            }
            Formula::Body(_, _, Tail::First) => self.run_lanes(x, &[], &[], a),
            Formula::Body(..) => self.run_planned_part(x, x.len(), a),
            Formula::Halves {
                leaf,
                multiple,
                inner,
            } => halves(x, *leaf, *multiple, inner, a),
            Formula::Lead(m, body, rest) => match x.split_at(x.len() % m) {
                ([], main) => body.run(main, a),
                (lead, []) => rest.run(lead, a),
                (lead, main) => {
                    let r = rest.run(lead, a);
                    let b = body.run(main, a);
                    a.add(r, b)
                }
            },
            Formula::Bisect(depth, inner) => bisect(x, *depth, inner, a),
            Formula::Below(m, small, large) => {
                if x.len() < *m {
                    small.run(x, a)
                } else {
                    large.run(x, a)
                }
            }
            Formula::Windows(w, inner) => {
                if x.len() <= *w {
                    return inner.run(x, a);
                }
                let k = x.len().div_ceil(*w);
                let low = (k * w - x.len()) / 2;
                let sums: Vec<A::Value> = (0..k)
                    .map(|j| {
                        let start = (j * w).saturating_sub(low);
                        let end = ((j + 1) * w - low).min(x.len());
                        inner.run(&x[start..end], a)
                    })
                    .collect();
                self.run(&sums, a)
            }
            Formula::Split(p, inner, outer) => {
                let (len, longer) = (x.len() / p, x.len() % p);
                // Blocks past the n-th are empty: the work and the memory
                // are n's, however many blocks there are.
                let mut sums = Vec::with_capacity((*p).min(x.len()));
                let mut at = 0;
                for k in 0..(*p).min(x.len()) {
                    let take = len + usize::from(k < longer);
                    sums.push(inner.run(&x[at..at + take], a));
                    at += take;
                }
                match **outer {
                    // Ranks without summands still take their place.
                    Formula::Doubling => doubling(&sums, *p, a),
                    _ => outer.run(&sums, a),
                }
            }
            Formula::Doubling => doubling(x, x.len(), a),
            Formula::Fold => fold(x, a),
            Formula::Fanout(f) => fanout(x, 0, 1, *f, a),
            Formula::Simd(simd) => simd.run(x, a),
            Formula::Rotate(k, inner) => {
                // Past the last summand, none comes from the K-th on.
                let start = if *k < x.len() { *k } else { 0 };
                let rotated: Vec<A::Value> =
                    x[start..].iter().chain(&x[..start]).copied().collect();
                inner.run(&rotated, a)
            }
            Formula::Pieces(steps, inner) => pieces(x, x.len(), steps, inner, a),
            Formula::KBlocks(q, u, inner) => {
                let mut sums = Vec::new();
                let mut at = 0;
                while at < x.len() {
                    let left = x.len() - at;
                    let take = if left >= 2 * q {
                        *q
                    } else if left > *q {
                        match u {
                            Some(u) => (left / 2).div_ceil(*u) * u,
                            None => left.div_ceil(2),
                        }
                    } else {
                        left
                    };
                    sums.push(inner.run(&x[at..at + take], a));
                    at += take;
                }
                Order::Sequential.run(&sums, a)
            }
            Formula::Peel(p, lanes) => {
                let m = lanes.lane_count().expect("peel's formula has lanes");
                if x.len() % m >= *p && x.len() >= m + p {
                    lanes.run_lanes(&x[*p..], &x[..*p], &[], a)
                } else {
                    lanes.run(x, a)
                }
            }
        }
    }

    /// [`Formula::run`] of `x` planned for `planned` summands: a body and
    /// pieces are cut as for that many, and the summands past them join
    /// the last piece (the rest, where there are no pieces).
    fn run_planned<A: Adder>(&self, x: &[A::Value], planned: usize, a: &mut A) -> A::Value {
        a.enter(self.part());
        let sum = self.run_planned_part(x, planned, a);
        let sum = a.returned(sum);
        a.leave();
        sum
    }

    fn run_planned_part<A: Adder>(&self, x: &[A::Value], planned: usize, a: &mut A) -> A::Value {
        match self {
            Formula::Body(m, body, tail) if !matches!(tail, Tail::First) => {
                let cut = planned - planned % m;
                if cut == 0 {
                    return match tail {
                        Tail::Apart(t) => t.run_planned(x, planned, a),
                        _ => Order::Sequential.run(x, a),
                    };
                }
                let sum = body.run(&x[..cut], a);
                match tail {
                    Tail::Apart(t) if cut < x.len() => {
                        let r = t.run_planned(&x[cut..], planned - cut, a);
                        a.add(sum, r)
                    }
                    _ => finish_body(sum, &x[cut..], tail, a),
                }
            }
            Formula::Pieces(steps, inner) => pieces(x, planned, steps, inner, a),
            _ => self.run_part(x, a),
        }
    }

    /// [`Formula::run`] of an interleave (or a body of one) whose lane `r`
    /// starts with `seeds[r]` and whose first lane ends with `extra`.
    fn run_lanes<A: Adder>(
        &self,
        x: &[A::Value],
        seeds: &[A::Value],
        extra: &[A::Value],
        a: &mut A,
    ) -> A::Value {
        match self {
            Formula::Interleave(k, inner, outer) => {
                let k = (*k).min(x.len()).max(1);
                // Every lane is summed as the shortest one is, its extra
                // summand in its last piece: the loop counts its blocks and
                // pieces from `n / K` (XLA's vectorised reduction). (Lanes
                // with seeds or extras are peel's and OpenBLAS's.)
                let plain = seeds.is_empty() && extra.is_empty();
                let shortest = x.len() / k;
                if plain {
                    // The lanes laid end to end in one buffer: a replay
                    // of 2^27 summands gathers millions of lanes.
                    let mut laid = Vec::with_capacity(x.len());
                    let mut ends = Vec::with_capacity(k);
                    for r in 0..k {
                        laid.extend(x[r..].iter().step_by(k).copied());
                        ends.push(laid.len());
                    }
                    let mut start = 0;
                    let lanes: Vec<A::Value> = ends
                        .iter()
                        .map(|&end| {
                            let sum = inner.run_planned(&laid[start..end], shortest, a);
                            start = end;
                            sum
                        })
                        .collect();
                    return outer.run(&lanes, a);
                }
                let lanes: Vec<A::Value> = (0..k)
                    .map(|r| {
                        let lane: Vec<A::Value> = seeds
                            .get(r)
                            .into_iter()
                            .chain(x.get(r..).unwrap_or_default().iter().step_by(k))
                            .chain(if r == 0 { extra } else { &[] })
                            .copied()
                            .collect();
                        inner.run(&lane, a)
                    })
                    .collect();
                outer.run(&lanes, a)
            }
            Formula::Body(m, body, Tail::First) => {
                let cut = x.len() - x.len() % m;
                let rest: Vec<A::Value> = x[cut..].iter().chain(extra).copied().collect();
                body.run_lanes(&x[..cut], seeds, &rest, a)
            }
            Formula::Body(m, body, tail) => {
                let cut = x.len() - x.len() % m;
                let sum = body.run_lanes(&x[..cut], seeds, extra, a);
                finish_body(sum, &x[cut..], tail, a)
            }
            _ => unreachable!("peel's formula has lanes"),
        }
    }
}

/// Recursive doubling over `ranks` slots of which the first hold `values`
/// and the rest nothing: the first `2(m - 2^k)` folded in pairs, then the
/// `2^k` halved pairwise. Empty slots only pass a value on, so they are
/// never listed.
fn doubling<A: Adder>(values: &[A::Value], ranks: usize, a: &mut A) -> A::Value {
    // Pairs of slots, either of which may be empty (past `values`).
    let pairs = |v: &[A::Value], a: &mut A| -> Vec<A::Value> {
        v.chunks(2)
            .map(|p| match *p {
                [x, y] => a.add(x, y),
                [x] => x,
                _ => unreachable!("chunks of two"),
            })
            .collect()
    };
    let extra = ranks - (1usize << ranks.ilog2());
    let folded = (2 * extra).min(values.len());
    let mut level = pairs(&values[..folded], a);
    level.extend_from_slice(&values[folded..]);
    // A power of two: neighbours add, then neighbours of those, ...
    while level.len() > 1 {
        level = pairs(&level, a);
    }
    level[0]
}

/// `x` folded in halves: [`Formula::Fold`].
fn fold<A: Adder>(x: &[A::Value], a: &mut A) -> A::Value {
    if let [v] = x {
        return *v;
    }
    let even: Vec<A::Value> = x.iter().step_by(2).copied().collect();
    let odd: Vec<A::Value> = x.iter().skip(1).step_by(2).copied().collect();
    let (e, o) = (fold(&even, a), fold(&odd, a));
    a.add(e, o)
}

/// The sum of value `r` in Open MPI's tree of fan-out `f` over `x`
/// ([`Formula::Fanout`]), `r` on the level whose values lie `stride`
/// (`f^L`) apart: its own value, then its children `r + i·stride` (`i =
/// 1..=f`, those in `x`), each child's sum added in turn. The recursion
/// goes a level down a call, `log_f n` deep, and holds nothing else.
fn fanout<A: Adder>(x: &[A::Value], r: usize, stride: usize, f: usize, a: &mut A) -> A::Value {
    // Past `n`, a stride only needs to stay past it.
    let below = stride.saturating_mul(f);
    let children = (1..=f).map_while(|i| {
        i.checked_mul(stride)
            .and_then(|d| r.checked_add(d))
            .filter(|&c| c < x.len())
    });
    let mut sum = x[r];
    for child in children {
        let s = fanout(x, child, below, f, a);
        sum = a.add(sum, s);
    }
    sum
}

/// Builds a tree and marks each node with the part of the formula that
/// added it.
struct Marked {
    builder: crate::tree::TreeBuilder,
    parts: Vec<u32>,
    names: std::collections::HashMap<usize, u32>,
    entered: Vec<u32>,
}

impl Marked {
    /// Marks `node`, the builder's newest, with the part adding it.
    fn mark(&mut self, node: petgraph::graph::NodeIndex) -> petgraph::graph::NodeIndex {
        debug_assert_eq!(node.index(), self.parts.len(), "nodes are added in order");
        self.parts.push(self.entered.last().copied().unwrap_or(0));
        node
    }
}

impl Adder for Marked {
    type Value = petgraph::graph::NodeIndex;
    fn add(&mut self, a: Self::Value, b: Self::Value) -> Self::Value {
        let node = self.builder.sum(&[a, b]);
        self.mark(node)
    }
    fn fused(&mut self, terms: &[Self::Value]) -> Self::Value {
        let node = self.builder.sum(terms);
        self.mark(node)
    }
    fn enter(&mut self, part: usize) {
        let next = self.names.len() as u32 + 1;
        let name = *self.names.entry(part).or_insert(next);
        self.entered.push(name);
    }
    fn leave(&mut self) {
        self.entered.pop();
    }
}

/// Pieces of `x` as cut for `planned` summands (each step's size while
/// at least that many remain of them), the rest of `x` as the last piece;
/// each piece summed by `inner`, the piece sums left to right.
fn pieces<A: Adder>(
    x: &[A::Value],
    planned: usize,
    steps: &[usize],
    inner: &Formula,
    a: &mut A,
) -> A::Value {
    let mut sums = Vec::new();
    let mut at = 0;
    for &step in steps {
        while planned.saturating_sub(at) >= step {
            sums.push(inner.run(&x[at..at + step], a));
            at += step;
        }
    }
    if at < x.len() {
        sums.push(inner.run(&x[at..], a));
    }
    Order::Sequential.run(&sums, a)
}

/// A body's `sum` with the summands `rest` past it, as `tail` says.
fn finish_body<A: Adder>(sum: A::Value, rest: &[A::Value], tail: &Tail, a: &mut A) -> A::Value {
    match tail {
        _ if rest.is_empty() => sum,
        Tail::Then => rest.iter().fold(sum, |s, v| a.add(s, *v)),
        Tail::First => unreachable!("a first lane's tail joins the lanes"),
        Tail::Apart(t) => {
            let r = t.run(rest, a);
            a.add(sum, r)
        }
    }
}

/// Halves `x` at half its length rounded down to a multiple of `multiple`
/// until at most `leaf` summands remain.
fn halves<A: Adder>(
    x: &[A::Value],
    leaf: usize,
    multiple: usize,
    inner: &Formula,
    a: &mut A,
) -> A::Value {
    if x.len() <= leaf.max(1) {
        return inner.run(x, a);
    }
    let half = x.len() / 2;
    let cut = match half - half % multiple {
        0 => half,
        c => c,
    };
    let l = halves(&x[..cut], leaf, multiple, inner, a);
    let r = halves(&x[cut..], leaf, multiple, inner, a);
    a.add(l, r)
}

/// `x` halved at `len / 2`, `depth` levels deep, each piece by `inner`.
fn bisect<A: Adder>(x: &[A::Value], depth: usize, inner: &Formula, a: &mut A) -> A::Value {
    if depth == 0 || x.len() < 2 {
        return inner.run(x, a);
    }
    let (l, r) = x.split_at(x.len() / 2);
    let l = bisect(l, depth - 1, inner, a);
    let r = bisect(r, depth - 1, inner, a);
    a.add(l, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bisections_cut_at_half_rounded_down_to_their_depth() {
        let once = f("bisect(1, sequential)");
        assert_eq!(once.tree(5).to_text(), "((0+1)+((2+3)+4))");
        assert_eq!(once.tree(1).to_text(), "0");
        // Pieces of one summand are not cut again.
        let deep = f("bisect(3, sequential)");
        assert_eq!(deep.tree(5).to_text(), "((0+1)+(2+(3+4)))");
        assert_eq!(deep.tree(9).to_text(), "(((0+1)+(2+3))+((4+5)+(6+(7+8))))");
    }

    fn f(s: &str) -> Formula {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    /// Lanes of 8 and 7 summands: both cut their body and pieces as the
    /// shorter lane does (a body of 4, one piece of 2), the longer lane's
    /// extra summand joining its last piece.
    #[test]
    fn lanes_are_cut_as_the_shortest_lane_is() {
        let lanes = f("interleave(2, body(4, sequential, pieces(2, sequential)), sequential)");
        assert_eq!(
            lanes.tree(15).to_text(),
            "(((((0+2)+4)+6)+((8+10)+(12+14)))+((((1+3)+5)+7)+((9+11)+13)))"
        );
        // Lanes of one length are cut as they are: bodies of 8, no rest.
        assert_eq!(
            lanes.tree(16).to_text(),
            "((((((((0+2)+4)+6)+8)+10)+12)+14)+(((((((1+3)+5)+7)+9)+11)+13)+15))"
        );
    }

    #[test]
    fn the_parts_match_the_reference_orders_they_generalise() {
        for n in [1, 2, 7, 64, 100, 1000] {
            // strided:K is K lanes left to right combined pairwise.
            assert_eq!(
                f("interleave(8, sequential, pairwise)").tree(n),
                Order::Strided(8).tree(n)
            );
            assert_eq!(
                f("blocks(16, sequential, sequential)").tree(n),
                Order::Blocked(16).tree(n)
            );
            // Halving at any count down to single summands is pairwise.
            assert_eq!(
                f("halves(1, 1, sequential)").tree(n),
                Order::Pairwise.tree(n)
            );
        }
    }

    #[test]
    fn a_body_and_its_tail() {
        let then = f("body(4, interleave(4, sequential, pairwise), then)");
        assert_eq!(then.tree(6).to_text(), "((((0+1)+(2+3))+4)+5)");
        let apart = f("body(4, interleave(4, sequential, pairwise), sequential)");
        assert_eq!(apart.tree(6).to_text(), "(((0+1)+(2+3))+(4+5))");
        assert_eq!(apart.tree(3), Order::Sequential.tree(3));
    }

    #[test]
    fn peeled_summands_start_the_first_lanes() {
        // OpenBLAS's SGEMV kernel, written out: 4 summands peeled when
        // 4 to 7 are left over past a multiple of 8, 8 lanes, a tail.
        let peel = f(
            "peel(4, body(8, interleave(8, sequential, interleave(4, pairwise, pairwise)), sequential))",
        );
        assert_eq!(
            peel.tree(20).to_text(),
            "(((((0+4)+12)+(8+16))+(((1+5)+13)+(9+17)))+((((2+6)+14)+(10+18))+(((3+7)+15)+(11+19))))"
        );
        // Fewer than 4 left over: no peeling, the body and its tail.
        let plain =
            f("body(8, interleave(8, sequential, interleave(4, pairwise, pairwise)), sequential)");
        assert_eq!(peel.tree(18), plain.tree(18));
        assert_eq!(peel.tree(7), plain.tree(7));
    }

    #[test]
    fn a_first_lane_tail_joins_lane_0() {
        // OpenBLAS's SGEMM K loop: 2 lanes over a body of 8, the rest into
        // lane 0, then the two lanes added.
        let gemm = f("body(8, interleave(2, sequential, sequential), first)");
        assert_eq!(
            gemm.tree(11).to_text(),
            "(((((((0+2)+4)+6)+8)+9)+10)+(((1+3)+5)+7))"
        );
        assert_eq!(gemm.tree(6), Order::Sequential.tree(6));
        let e = "body(8, pairwise, first)".parse::<Formula>().unwrap_err();
        assert!(e.contains("must be interleave"), "{e}");
    }

    #[test]
    fn ranks_fold_then_double() {
        // Open MPI's allreduce of one summand per rank (outputs/mpi).
        let d = f("doubling");
        assert_eq!(d.tree(5).to_text(), "(((0+1)+2)+(3+4))");
        assert_eq!(d.tree(4).to_text(), "((0+1)+(2+3))");
        assert_eq!(d.tree(3).to_text(), "((0+1)+2)");
        // 10 summands on 4 ranks: blocks of 3, 3, 2, 2.
        assert_eq!(
            f("split(4, sequential, doubling)").tree(10).to_text(),
            "((((0+1)+2)+((3+4)+5))+((6+7)+(8+9)))"
        );
    }

    /// Recursive doubling as MPI runs it, every rank's slot listed (the
    /// empty ones as `None`): what `doubling`, which lists only the
    /// values, must give.
    fn doubling_over_every_slot(values: &[usize], ranks: usize) -> String {
        let mut slots: Vec<Option<String>> = values.iter().map(|v| Some(v.to_string())).collect();
        slots.resize(ranks, None);
        let add = |x: &Option<String>, y: &Option<String>| match (x, y) {
            (Some(x), Some(y)) => Some(format!("({x}+{y})")),
            (x, y) => x.clone().or(y.clone()),
        };
        let extra = ranks - (1 << ranks.ilog2());
        let mut level: Vec<Option<String>> = slots[..2 * extra]
            .chunks(2)
            .map(|p| add(&p[0], &p[1]))
            .collect();
        level.extend_from_slice(&slots[2 * extra..]);
        while level.len() > 1 {
            level = level.chunks(2).map(|p| add(&p[0], &p[1])).collect();
        }
        level[0].clone().expect("one value at least")
    }

    #[test]
    fn doubling_lists_only_the_ranks_that_hold_summands() {
        // At most one summand a rank: the ranks past the n-th are empty.
        for ranks in 1..70 {
            let split = f(&format!("split({ranks}, sequential, doubling)"));
            for n in 1..=ranks {
                let values: Vec<usize> = (0..n).collect();
                let expected = doubling_over_every_slot(&values, ranks);
                assert_eq!(split.tree(n).to_text(), expected, "split({ranks}) of {n}");
            }
        }
        // Every rank full: the plain formula.
        for n in 1..70 {
            let values: Vec<usize> = (0..n).collect();
            assert_eq!(
                f("doubling").tree(n).to_text(),
                doubling_over_every_slot(&values, n)
            );
        }
    }

    #[test]
    fn k_blocks_halve_a_rest_below_two_blocks() {
        let k = f("kblocks(4, 2, sequential)");
        // 13: a block of 4, then 9 left (at least 8): another, then 5 left
        // (between 4 and 8): half of it, 2, a multiple of 2 already, and 3.
        assert_eq!(
            k.tree(13).to_text(),
            "((((((0+1)+2)+3)+(((4+5)+6)+7))+(8+9))+((10+11)+12))"
        );
        assert_eq!(k.tree(4), Order::Sequential.tree(4));
        // Without the multiple, the larger half of a rest comes first: 13
        // is 4, 4, then 5 cut 3 + 2.
        let k = f("kblocks(4, sequential)");
        assert_eq!(k.to_string(), "kblocks(4, sequential)");
        assert_eq!(
            k.tree(13).to_text(),
            "((((((0+1)+2)+3)+(((4+5)+6)+7))+((8+9)+10))+(11+12))"
        );
    }

    #[test]
    fn rotate_starts_at_its_summand_and_wraps() {
        let r = f("rotate(1, sequential)");
        assert_eq!(r.to_string(), "rotate(1, sequential)");
        assert_eq!(r.tree(4).to_text(), "(0+((1+2)+3))");
        // Past the count, as 0 does, it leaves the summands as they come:
        // a ring whose starting rank holds none of them starts at the first.
        assert_eq!(
            f("rotate(4, sequential)").tree(4),
            Order::Sequential.tree(4)
        );
        assert_eq!(
            f("rotate(3, sequential)").tree(4).to_text(),
            "(((0+3)+1)+2)"
        );
        assert_eq!(
            f("rotate(0, sequential)").tree(4),
            Order::Sequential.tree(4)
        );
    }

    /// Open MPI 4.1.4's `nonoverlapping` allreduce at small messages (a
    /// reduce over its binary tree), written out by hand.
    #[test]
    fn fanout_2_is_open_mpis_binary_tree() {
        let tree = f("fanout(2)");
        assert_eq!(tree.to_string(), "fanout(2)");
        assert_eq!(
            tree.tree(16).to_text(),
            "((0+((1+((3+(7+15))+11))+((5+9)+13)))+((2+((4+8)+12))+((6+10)+14)))"
        );
        assert_eq!(tree.tree(6).to_text(), "((0+((1+3)+5))+(2+4))");
        assert_eq!(tree.tree(4).to_text(), "((0+(1+3))+2)");
        // Up to 3 values, 0's children alone: left to right.
        for n in 1..=3 {
            assert_eq!(tree.tree(n), Order::Sequential.tree(n));
        }
        // Each rank's block first, the ranks' sums over the tree.
        assert_eq!(
            f("split(4, sequential, fanout(2))").tree(8).to_text(),
            "(((0+1)+((2+3)+(6+7)))+(4+5))"
        );
    }

    /// Fan-out 3 over 14 values: levels 0; 1, 2, 3 (children of 0, a
    /// stride of 1); 4 to 12 (a stride of 3: 1 is the parent of 4, 7, 10,
    /// 2 of 5, 8, 11, 3 of 6, 9, 12); 13 (a stride of 9: 4's child).
    #[test]
    fn fanout_3_strides_by_powers_of_3() {
        assert_eq!(
            f("fanout(3)").tree(14).to_text(),
            "(((0+(((1+(4+13))+7)+10))+(((2+5)+8)+11))+(((3+6)+9)+12))"
        );
        // A fan-out past the count: every value is the root's child.
        assert_eq!(f("fanout(1000)").tree(50), Order::Sequential.tree(50));
    }

    /// Open MPI's tree over `ranks` slots, the first of which hold
    /// `values` and the rest nothing (an empty slot only passes its
    /// children's sums on), every slot listed.
    fn fanout_over_every_slot(values: usize, ranks: usize, fan: usize) -> String {
        fn sum(r: usize, stride: usize, values: usize, ranks: usize, fan: usize) -> Option<String> {
            let mut acc = (r < values).then(|| r.to_string());
            for i in 1..=fan {
                let c = r + i * stride;
                if c >= ranks {
                    break;
                }
                acc = match (acc, sum(c, stride * fan, values, ranks, fan)) {
                    (Some(x), Some(y)) => Some(format!("({x}+{y})")),
                    (x, y) => x.or(y),
                };
            }
            acc
        }
        sum(0, 1, values, ranks, fan).expect("one value at least")
    }

    #[test]
    fn fanout_ranks_without_summands_change_nothing() {
        // The empty ranks are the last, and a rank's children come after
        // it: no empty rank has a summand below it.
        for fan in [2, 3, 4] {
            for ranks in 1..40 {
                let split = f(&format!("split({ranks}, sequential, fanout({fan}))"));
                for n in 1..=ranks {
                    assert_eq!(
                        split.tree(n).to_text(),
                        fanout_over_every_slot(n, ranks, fan),
                        "fanout({fan}) over {ranks} ranks, {n} summands"
                    );
                }
            }
        }
    }

    /// Millions of values: the recursion is as deep as the tree.
    #[test]
    fn fanout_sums_millions_of_values() {
        struct Count(usize);
        impl Adder for Count {
            type Value = u64;
            fn add(&mut self, a: u64, b: u64) -> u64 {
                self.0 += 1;
                a + b
            }
            fn fused(&mut self, terms: &[u64]) -> u64 {
                self.0 += terms.len() - 1;
                terms.iter().sum()
            }
        }
        let n = 5_000_000;
        let x: Vec<u64> = (0..n as u64).collect();
        let mut count = Count(0);
        assert_eq!(f("fanout(2)").run(&x, &mut count), x.iter().sum::<u64>());
        assert_eq!(count.0, n - 1);
    }

    #[test]
    fn fold_adds_the_far_half_first() {
        let fold = f("fold");
        assert_eq!(fold.to_string(), "fold");
        assert_eq!(fold.tree(8).to_text(), "(((0+4)+(2+6))+((1+5)+(3+7)))");
        // Any count: even places against odd ones, recursively.
        assert_eq!(fold.tree(5).to_text(), "(((0+4)+2)+(1+3))");
        // As nested halves of interleave(2): the lanes of a vector register.
        let nested = f(
            "interleave(2, interleave(2, interleave(2, sequential, sequential), \
                        sequential), sequential)",
        );
        assert_eq!(fold.tree(16), nested.tree(16));
    }

    #[test]
    fn pieces_take_ever_smaller_steps() {
        let p = f("pieces(4, 2, sequential)");
        assert_eq!(p.to_string(), "pieces(4, 2, sequential)");
        assert_eq!(
            f("pieces(16, 4, 2, fold)").to_string(),
            "pieces(16, 4, 2, fold)"
        );
        // 11: a piece of 4, another, one of 2, then the one left.
        assert_eq!(
            p.tree(11).to_text(),
            "((((((0+1)+2)+3)+(((4+5)+6)+7))+(8+9))+10)"
        );
        // 7: a piece of 4, then the three left as one piece.
        let p = f("pieces(4, sequential)");
        assert_eq!(p.tree(7).to_text(), "((((0+1)+2)+3)+((4+5)+6))");
        assert!("pieces(2, 4, sequential)".parse::<Formula>().is_err());
    }

    #[test]
    fn windows_are_centred_on_the_padded_summands() {
        let w = f("windows(4, sequential)");
        assert_eq!(w.tree(4), Order::Sequential.tree(4));
        // 5 summands padded to 8: one pad before, two after.
        assert_eq!(w.tree(5).to_text(), "(((0+1)+2)+(3+4))");
        // 20 summands: five windows of 4, whose sums are windows again.
        assert_eq!(
            w.tree(20).to_text(),
            "((((((0+1)+2)+3)+(((4+5)+6)+7))+(((8+9)+10)+11))+((((12+13)+14)+15)+(((16+17)+18)+19)))"
        );
    }
}
