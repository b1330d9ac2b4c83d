//! Revealed trees against trees known independently of the engine: random
//! trees replayed and revealed back, and every native order against its
//! definition, written here as text without using the crate's `Order`.

use fprev::error::Kind;
use fprev::probe::{ProbeOptions, ReplayProbe};
use fprev::reduce::Replay;
use fprev::reveal::{Algorithm, Outcome, Pivot, fused_pair_bound};
use fprev::{Format, Options, SummationTree, reveal};
use proptest::prelude::*;

mod common;
use common::Rows;

/// A random tree: binary, or with fused nodes of up to 6 children; its
/// nodes add neighbours (`ordered`) or any summands.
fn random_tree(n: usize, multiway: bool, ordered: bool, seed: u64) -> SummationTree {
    common::random_tree(n, if multiway { 6 } else { 2 }, ordered, seed)
}

/// The accumulators each input format is tested with: its own, and f32
/// where the masks of the input format can swamp units in f32 (not fp8).
fn accumulators(format: Format) -> Vec<Format> {
    match format {
        Format::E4m3 | Format::E5m2 => vec![format],
        _ => vec![format, format.default_accumulator()],
    }
}

fn reveal_replay(
    tree: &SummationTree,
    format: Format,
    acc: Format,
    opts: &Options,
) -> SummationTree {
    let mut probe = ReplayProbe::new(Replay::new(tree, acc), format);
    match reveal(&mut probe, opts) {
        Ok(Outcome::Revealed(r)) => r.tree,
        Ok(other) => panic!("no tree: {other:?}"),
        Err(e) => panic!("{format} (acc {acc}) {}: {e}", tree),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_binary_trees_reveal_back_in_every_format(n in 1usize..=512, seed: u64, fmt in 0usize..6, ordered: bool) {
        let format = Format::ALL[fmt];
        let tree = random_tree(n, false, ordered, seed);
        for acc in accumulators(format) {
            let got = reveal_replay(&tree, format, acc, &Options::default());
            prop_assert_eq!(&got, &tree, "fprev, {} summed in {}", format, acc);
        }
        let min = Options { pivot: Pivot::Min, algorithm: Algorithm::Fprev, ..Options::default() };
        prop_assert_eq!(&reveal_replay(&tree, format, format, &min), &tree);
    }

    #[test]
    fn random_multiway_trees_reveal_back_in_every_format(n in 1usize..=512, seed: u64, fmt in 0usize..5, ordered: bool) {
        // Not e4m3, and e5m2 only up to 66 summands: see
        // fused_nodes_beyond_the_masks_reach_are_refused_not_misread.
        let format = [Format::F64, Format::F32, Format::F16, Format::Bf16, Format::E5m2][fmt];
        let n = if format == Format::E5m2 { n.min(66) } else { n };
        let tree = random_tree(n, true, ordered, seed);
        for acc in accumulators(format) {
            let got = reveal_replay(&tree, format, acc, &Options::default());
            prop_assert_eq!(&got, &tree, "{} summed in {}", format, acc);
        }
    }

    #[test]
    fn basic_reveals_random_binary_trees(n in 1usize..=160, seed: u64, wide in proptest::bool::ANY) {
        let format = if wide { Format::F64 } else { Format::F32 };
        let tree = random_tree(n, false, false, seed);
        let basic = Options { algorithm: Algorithm::Basic, ..Options::default() };
        prop_assert_eq!(&reveal_replay(&tree, format, format, &basic), &tree);
    }
}

/// Every strategy: each pivot rule, queries packed or one per input, one
/// input per call or several rows; groups' shapes guessed (the default).
fn strategies() -> Vec<(String, Options, usize)> {
    let mut out = Vec::new();
    for rows in [1, 7] {
        out.push((format!("insert, {rows} rows"), Options::default(), rows));
    }
    for (pivot, name) in [
        (Pivot::Ends, "ends"),
        (Pivot::Random { seed: 3 }, "random"),
        (Pivot::Min, "min"),
    ] {
        for pack in [true, false] {
            for rows in [1, 7] {
                let options = Options {
                    pivot,
                    pack,
                    algorithm: Algorithm::Fprev,
                    ..Options::default()
                };
                out.push((format!("{name}, pack {pack}, {rows} rows"), options, rows));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every strategy reveals the baseline's tree (the paper's FPRev: min
    /// pivot, one query per call, nothing guessed), which is the tree
    /// replayed: random binary and multiway trees, some repeating blocks
    /// whose shapes are guessed right and wrong, every format, with the input's own
    /// accumulator and a wider one, and narrow accumulators well past 2^p.
    #[test]
    fn every_strategy_reveals_the_baselines_tree(
        n in 1usize..=400, seed: u64, fmt in 0usize..5, multiway: bool, narrow: bool, order in 0usize..3,
    ) {
        let format = [Format::F64, Format::F32, Format::F16, Format::Bf16, Format::E5m2][fmt];
        // Narrow: the input's own accumulator, whose 2^p large n pass
        // (e5m2's 8, bf16's 256, f16's 2048); else the wider default.
        let acc = if narrow { format } else { format.default_accumulator() };
        let n = match format {
            Format::E5m2 => n.min(66),
            Format::F16 if narrow => 8 * n,
            _ => n,
        };
        // Shuffled, adding neighbours, or repeating blocks alike.
        let tree = match order {
            2 => common::repeating_tree(n, if multiway { 6 } else { 2 }, seed),
            ordered => random_tree(n, multiway, ordered == 1, seed),
        };
        let baseline = Options { pivot: Pivot::Min, pack: false, guess: false, algorithm: Algorithm::Fprev, ..Options::default() };
        let want = reveal_replay(&tree, format, acc, &baseline);
        prop_assert_eq!(&want, &tree);
        for (name, options, rows) in strategies() {
            let inner = ReplayProbe::new(Replay::new(&tree, acc), format);
            let mut probe = Rows(inner, rows);
            let got = reveal(&mut probe, &options)
                .map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?
                .revealed()
                .expect("an order");
            prop_assert_eq!(&got.tree, &want, "{}, {} summed in {}", name, format, acc);
            prop_assert!(got.stats.inputs >= fused_pair_bound(&tree), "{}: {}", name, got.stats);
        }
    }
}

#[test]
fn fused_nodes_beyond_the_masks_reach_are_refused_not_misread() {
    // A fused node keeps 24 bits below its largest term, so units are
    // swamped only while n*u stays below M/2^25: never for e4m3, up to 66
    // summands for e5m2. Past that the answers could mislead, so fprev
    // refuses up front.
    let cases = [
        (Format::E4m3, 3, false),
        (Format::E5m2, 66, true),
        (Format::E5m2, 67, false),
        (Format::E5m2, 312, false),
    ];
    for (format, n, allowed) in cases {
        let tree = (0..)
            .map(|seed| random_tree(n, true, false, seed))
            .find(|t| !t.is_binary())
            .expect("some random tree has a fused node");
        let mut probe = ReplayProbe::new(Replay::new(&tree, format), format);
        match reveal(&mut probe, &Options::default()) {
            Ok(Outcome::Revealed(r)) => {
                assert!(allowed, "{format} n = {n} should be refused");
                assert_eq!(r.tree, tree);
            }
            Ok(other) => panic!("no tree: {other:?}"),
            Err(e) => {
                assert!(!allowed, "{format} n = {n}: {e}");
                assert_eq!(e.kind(), Kind::Input, "{e}");
                assert!(e.to_string().contains("fused"), "{e}");
            }
        }
    }
    // And fp8 inputs cannot be masked for an f32 accumulator at all.
    let opts = ProbeOptions {
        n: Some(8),
        format: Format::E4m3,
        accumulator: Some(Format::F32),
        ..Default::default()
    };
    let mut bb = fprev::open("native:sequential", &opts).unwrap();
    let err = reveal(&mut bb, &Options::default()).unwrap_err();
    assert_eq!(err.kind(), Kind::Input);
    assert!(err.to_string().contains("cannot be probed"), "{err}");
}

/// A caller with two early groups, `G` at level 67 and `H` at 131, where
/// `H` is the rest of a fused node: `H`'s pairs swamp all of that node,
/// `G` too, while the caller reads as if its pair met there. The tree (the
/// root: a fused node of `X` and 64 summands; `X`: of `(0+1+130)`, 50
/// summands fused, and 14 more) was shrunk from one CI drew at random;
/// its labels set when `G` and `H` ask side by side.
#[test]
fn an_early_group_meeting_at_its_callers_fused_node_swamps_the_lower_ones() {
    let tree: SummationTree = TEXT.parse().unwrap();
    for pivot in [Pivot::Min, Pivot::Ends] {
        let options = Options {
            pivot,
            ..Options::default()
        };
        assert_eq!(
            reveal_replay(&tree, Format::F64, Format::F64, &options),
            tree
        );
    }
}

const TEXT: &str = "(((0+1+130)+10+57+66+115+56+84+36+55+61+120+121+125+74+(5+12+77+95+96+99+103+16+25+9\
         3+97+114+13+41+59+7+9+42+51+58+69+26+49+62+78+100+108+39+76+88+28+60+111+113+102+70+\
         90+122+8+46+127+53+54+71+73+116+86+117+105+89)+23)+2+11+68+118+17+18+21+34+85+92+30+\
         52+79+83+87+106+38+94+101+82+15+19+47+67+40+45+124+126+112+29+31+119+50+109+3+44+75+\
         80+81+4+104+128+123+20+24+107+110+22+6+32+37+64+65+91+14+33+43+72+98+129+27+48+63+35\
         )";

#[test]
fn naive_agrees_on_small_random_trees() {
    for n in 1..=7 {
        for seed in 0..4 {
            let tree = random_tree(n, false, false, seed);
            let naive = Options {
                algorithm: Algorithm::Naive,
                ..Options::default()
            };
            assert_eq!(
                reveal_replay(&tree, Format::F32, Format::F32, &naive),
                tree,
                "n = {n}"
            );
        }
    }
}

// The orders' definitions, written as text independently of `fprev::Order`.

fn seq(items: &[String]) -> String {
    let mut it = items.iter();
    let first = it.next().unwrap().clone();
    it.fold(first, |acc, x| format!("({acc}+{x})"))
}

fn leaves(lo: usize, hi: usize) -> Vec<String> {
    (lo..hi).map(|i| i.to_string()).collect()
}

fn halving(items: &[String]) -> String {
    if items.len() == 1 {
        return items[0].clone();
    }
    let h = items.len() / 2;
    format!("({}+{})", halving(&items[..h]), halving(&items[h..]))
}

fn expected(order: &str, n: usize) -> String {
    let (name, k) = match order.split_once(':') {
        Some((a, b)) => (a, b.parse::<usize>().unwrap()),
        None => (order, 0),
    };
    match name {
        "sequential" => seq(&leaves(0, n)),
        "reverse" => {
            let mut s = (n - 1).to_string();
            for i in (0..n - 1).rev() {
                s = format!("({i}+{s})");
            }
            s
        }
        "pairwise" => halving(&leaves(0, n)),
        "strided" => {
            let lanes: Vec<String> = (0..k.min(n))
                .map(|r| seq(&(r..n).step_by(k).map(|i| i.to_string()).collect::<Vec<_>>()))
                .collect();
            halving(&lanes)
        }
        "blocked" => {
            let blocks: Vec<String> = (0..n)
                .step_by(k)
                .map(|b| seq(&leaves(b, (b + k).min(n))))
                .collect();
            seq(&blocks)
        }
        "binary-tree" => binary_tree_reduce(0, n.next_power_of_two().trailing_zeros(), n),
        "fused" => {
            let first = (k - 1).min(n);
            let mut acc = group(leaves(0, first));
            let mut i = first;
            while i < n {
                let mut terms = vec![acc];
                terms.extend(leaves(i, (i + k - 1).min(n)));
                acc = group(terms);
                i += k - 1;
            }
            acc
        }
        _ => unreachable!(),
    }
}

#[test]
fn fused_chains_are_revealed_in_the_fewest_inputs_they_allow() {
    // A chain of k-way nodes over n summands: a node of k - 1 summands,
    // then n / (k - 1) - 1 nodes of the running sum and k - 1 summands.
    // Every pair of children of each node needs an input of its own.
    let n = 1_024;
    for k in [5, 9, 17] {
        let pairs = |c: usize| (c * (c - 1) / 2) as u64;
        let fewest = pairs(k - 1) + (n / (k - 1) - 1) as u64 * pairs(k);
        for format in [Format::F32, Format::F64] {
            let r = reveal_native(&format!("fused:{k}"), n, format, None, Pivot::default());
            assert_eq!(r.tree.to_text(), expected(&format!("fused:{k}"), n));
            assert_eq!(fused_pair_bound(&r.tree), fewest);
            let inputs = r.stats.inputs;
            assert!(
                (fewest..=fewest + fewest / 50).contains(&inputs),
                "fused:{k} {format}: {inputs} inputs, at least {fewest}"
            );
        }
    }
}

fn group(terms: Vec<String>) -> String {
    if terms.len() == 1 {
        terms[0].clone()
    } else {
        format!("({})", terms.join("+"))
    }
}

/// Stelz's `reduce(x, y)`: node `(x, y)` covers `[x, x + 2^y)`, cut at `n`.
fn binary_tree_reduce(x: usize, y: u32, n: usize) -> String {
    if y == 0 {
        return x.to_string();
    }
    let half = 1 << (y - 1);
    if x + half >= n {
        binary_tree_reduce(x, y - 1, n)
    } else {
        format!(
            "({}+{})",
            binary_tree_reduce(x, y - 1, n),
            binary_tree_reduce(x + half, y - 1, n)
        )
    }
}

fn reveal_native(
    order: &str,
    n: usize,
    format: Format,
    acc: Option<Format>,
    pivot: Pivot,
) -> fprev::Found {
    let opts = ProbeOptions {
        n: Some(n),
        format,
        accumulator: acc,
        ..Default::default()
    };
    let mut bb = fprev::open(&format!("native:{order}"), &opts).unwrap();
    // The default pivot with the default algorithm (insertion, whose
    // queries are bits); the others with FPRev's engine, whose queries are
    // pairs, at most all of them.
    let algorithm = match pivot {
        Pivot::Ends => Algorithm::Insert,
        _ => Algorithm::Fprev,
    };
    let options = Options {
        pivot,
        algorithm,
        ..Options::default()
    };
    match reveal(&mut bb, &options) {
        Ok(Outcome::Revealed(r)) => {
            let pairs = (n * (n - 1) / 2) as u64;
            match algorithm {
                Algorithm::Fprev => assert!(
                    r.stats.queries <= pairs,
                    "{order} n = {n}: {} queries",
                    r.stats.queries
                ),
                _ => assert!(
                    r.stats.calls <= pairs.max(4 * n as u64),
                    "{order} n = {n}: {} calls",
                    r.stats.calls
                ),
            }
            r
        }
        Ok(other) => panic!("no tree: {other:?}"),
        Err(e) => panic!("native:{order} n = {n} {format}: {e}"),
    }
}

const ORDERS: [&str; 13] = [
    "sequential",
    "reverse",
    "pairwise",
    "strided:2",
    "strided:3",
    "strided:8",
    "blocked:4",
    "blocked:7",
    "blocked:64",
    "binary-tree",
    "fused:5",
    "fused:9",
    "fused:17",
];

#[test]
fn every_native_order_at_every_n_up_to_300_matches_its_definition() {
    for order in ORDERS {
        for n in 1..=300 {
            let want: SummationTree = expected(order, n).parse().unwrap();
            let got = reveal_native(order, n, Format::F32, None, Pivot::default()).tree;
            assert_eq!(got, want, "native:{order} n = {n}: got {got}");
        }
    }
}

#[test]
fn native_orders_match_in_every_format_and_with_the_min_pivot() {
    for format in Format::ALL {
        for order in ORDERS {
            for n in [1, 2, 3, 17, 64, 100] {
                // Fused nodes in fp8 are refused past the masks' reach (see
                // fused_nodes_beyond_the_masks_reach_are_refused_not_misread).
                let limit = match format {
                    Format::E4m3 => 2,
                    Format::E5m2 => 66,
                    _ => usize::MAX,
                };
                if order.starts_with("fused") && n > limit {
                    let opts = ProbeOptions {
                        n: Some(n),
                        format,
                        accumulator: None,
                        ..Default::default()
                    };
                    let mut bb = fprev::open(&format!("native:{order}"), &opts).unwrap();
                    let e = reveal(&mut bb, &Options::default()).unwrap_err();
                    assert_eq!(
                        e.kind(),
                        Kind::Input,
                        "native:{order} n = {n} {format}: {e}"
                    );
                    continue;
                }
                let want: SummationTree = expected(order, n).parse().unwrap();
                for pivot in [Pivot::default(), Pivot::Min] {
                    let got = reveal_native(order, n, format, None, pivot).tree;
                    assert_eq!(got, want, "native:{order} n = {n} {format} {pivot:?}");
                }
            }
        }
    }
}

#[test]
fn binary_tree_definitions_agree() {
    // Stelz's aligned recursion and the split at the largest power of two
    // below n describe one tree.
    fn split(lo: usize, hi: usize) -> String {
        if hi - lo == 1 {
            return lo.to_string();
        }
        let mut p = 1;
        while p * 2 < hi - lo {
            p *= 2;
        }
        format!("({}+{})", split(lo, lo + p), split(lo + p, hi))
    }
    for n in 1..=300 {
        let a: SummationTree = expected("binary-tree", n).parse().unwrap();
        let b: SummationTree = split(0, n).parse().unwrap();
        assert_eq!(a, b, "n = {n}");
    }
}

#[test]
fn narrow_accumulators_reveal_exactly_past_2_to_the_p() {
    let cases = [
        ("sequential", 1000, Format::F32, Format::Bf16),
        ("pairwise", 1000, Format::F32, Format::Bf16),
        ("sequential", 1000, Format::Bf16, Format::Bf16),
        ("sequential", 5000, Format::F16, Format::F16),
        ("pairwise", 5000, Format::F16, Format::F16),
        ("strided:8", 5000, Format::F32, Format::F16),
        ("reverse", 600, Format::E4m3, Format::E4m3),
        ("fused:9", 66, Format::E5m2, Format::E5m2),
    ];
    for (order, n, format, acc) in cases {
        assert!(n as u64 > 2 * acc.exact_count(), "the case must exceed 2^p");
        let want: SummationTree = expected(order, n).parse().unwrap();
        let got = reveal_native(order, n, format, Some(acc), Pivot::default()).tree;
        assert_eq!(got, want, "native:{order} n = {n} {format} in {acc}");
    }
}

#[test]
fn a_right_to_left_sum_of_100_000_summands_does_not_overflow_the_stack() {
    let n = 100_000;
    let got = reveal_native("reverse", n, Format::F64, None, Pivot::default()).tree;
    assert_eq!(got.depth(), n - 1);
    assert_eq!(got, expected("reverse", n).parse().unwrap());
}

/// Pairwise sums of `block`-summand blocks (recursive halves, as
/// `native:pairwise`), the blocks' sums added pairwise too; in block
/// `odd`, if any, summands 1 and 2 trade places, deepest in the block.
fn pairwise_blocks(n: usize, block: usize, odd: Option<usize>) -> SummationTree {
    use fprev::tree::TreeBuilder;
    use petgraph::graph::NodeIndex;
    fn halves(b: &mut TreeBuilder, leaves: &[usize]) -> NodeIndex {
        match leaves {
            [one] => b.leaf(*one),
            _ => {
                let (l, r) = leaves.split_at(leaves.len() / 2);
                let (l, r) = (halves(b, l), halves(b, r));
                b.sum(&[l, r])
            }
        }
    }
    fn over(b: &mut TreeBuilder, roots: &[NodeIndex]) -> NodeIndex {
        match roots {
            [one] => *one,
            _ => {
                let (l, r) = roots.split_at(roots.len() / 2);
                let (l, r) = (over(b, l), over(b, r));
                b.sum(&[l, r])
            }
        }
    }
    let mut b = TreeBuilder::new(n);
    let roots: Vec<NodeIndex> = (0..n / block)
        .map(|k| {
            let mut leaves: Vec<usize> = (k * block..(k + 1) * block).collect();
            if odd == Some(k) {
                leaves.swap(1, 2);
            }
            halves(&mut b, &leaves)
        })
        .collect();
    let root = over(&mut b, &roots);
    b.finish(root).expect("every leaf in one tree")
}

fn stats_of(tree: &SummationTree, options: &Options) -> (SummationTree, fprev::document::Stats) {
    let mut probe = ReplayProbe::new(Replay::new(tree, Format::F32), Format::F32);
    let r = reveal(&mut probe, options)
        .expect("a replayed tree reveals")
        .revealed()
        .expect("an order");
    (r.tree, r.stats)
}

#[test]
fn blocks_alike_are_guessed_with_one_query_per_node() {
    // 64 blocks of 64: building a block asks each summand once per node
    // above it, checking a guess one query per node of the block.
    let tree = pairwise_blocks(4096, 64, None);
    let fprev = Options {
        algorithm: Algorithm::Fprev,
        ..Options::default()
    };
    let plain = Options {
        guess: false,
        ..fprev
    };
    let (built, without) = stats_of(&tree, &plain);
    let (guessed, with) = stats_of(&tree, &fprev);
    assert_eq!(built, tree);
    assert_eq!(guessed, tree);
    assert!(
        2 * with.queries < without.queries && with.calls < without.calls,
        "guessed: {with}; built: {without}"
    );
}

#[test]
fn halves_are_guessed_from_the_half_built_below_them() {
    // A pairwise sum has no two groups alike below its top: each half is
    // guessed from the pivot's own subtree below it, one query per node,
    // after the first pivot's n - 1. Building asks about n log2(n) / 2,
    // and guessing from complete subtrees alone about 3n.
    let n = 4096;
    let tree = pairwise_blocks(n, n, None);
    let fprev = Options {
        algorithm: Algorithm::Fprev,
        ..Options::default()
    };
    let (got, stats) = stats_of(&tree, &fprev);
    assert_eq!(got, tree);
    assert!(stats.queries < 2 * n as u64, "{stats}");
}

#[test]
fn a_wrong_guess_deep_inside_a_block_is_caught() {
    // Every block but one alike; that one differs only in its first two
    // additions, below every node a guess checks first. Blocks of 64, or
    // two halves, the upper guessed from the lower. Whichever block is
    // odd, and whichever pivot rule, the tree comes back as it is.
    for (block, odd) in [(64, 0), (64, 1), (64, 5), (64, 15), (512, 0), (512, 1)] {
        let tree = pairwise_blocks(1024, block, Some(odd));
        for pivot in [Pivot::Ends, Pivot::Min] {
            let (got, stats) = stats_of(
                &tree,
                &Options {
                    pivot,
                    algorithm: Algorithm::Fprev,
                    ..Options::default()
                },
            );
            assert_eq!(got, tree, "odd block {odd} of {block}, {pivot:?}: {stats}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Equality walks both canonical trees node by node; it agrees with
    /// `diff`, which compares their sets of subtrees, on trees alike and
    /// trees one swap apart.
    #[test]
    fn equality_agrees_with_diff(n in 1usize..=200, seed: u64, width in 2usize..=4) {
        let a = common::random_tree(n, width, seed % 2 == 0, seed);
        let b: SummationTree = a.to_text().parse().unwrap();
        prop_assert!(a == b && a.diff(&b).is_none());
        let c = common::random_tree(n, width, seed % 2 == 0, seed ^ 1);
        prop_assert_eq!(a == c, a.diff(&c).is_none());
    }
}
