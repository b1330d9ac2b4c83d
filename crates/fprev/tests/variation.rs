//! Black boxes whose answer to one input changes from call to call are
//! reported as varying, never blamed on precision or compensation; ones
//! that do not are never reported so.

use fprev::probe::ProbeOptions;
use fprev::reveal::{Outcome, Silent};
use fprev::workflow::{self, Note, Request};
use fprev::{Format, Options, Order, Probe, reveal};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// Sums fixed chunks of 8 left to right, in f32, and joins the chunk sums
/// in a random order on every call (the issue's chunks joined at random).
struct RandomJoins {
    n: usize,
    rng: ChaCha8Rng,
}

impl Probe for RandomJoins {
    fn n(&self) -> usize {
        self.n
    }
    fn format(&self) -> Format {
        Format::F32
    }
    fn sum(&mut self, x: &[f64], out: &mut [f64]) -> fprev::Result<()> {
        let mut chunks: Vec<f64> = x
            .chunks(8)
            .map(|c| Order::Sequential.sum(c, Format::F32))
            .collect();
        chunks.shuffle(&mut self.rng);
        out[0] = chunks.iter().fold(0.0, |s, &c| Format::F32.add(s, c));
        Ok(())
    }
}

/// Each query asked twice, `repeats` times in a subproblem whose answers disagree,
/// with time enough for the whole skeleton.
fn effort(repeats: usize) -> reveal::Effort {
    reveal::Effort::new(repeats, std::time::Duration::from_secs(3600))
}

#[test]
fn chunks_joined_in_a_random_order_are_reported_as_varying() {
    for n in [32, 128, 1000] {
        let mut probe = RandomJoins {
            n,
            rng: ChaCha8Rng::seed_from_u64(n as u64),
        };
        match reveal(&mut probe, &Options::default()) {
            Ok(Outcome::Varies(v)) => {
                assert!(v.varies() && v.most_distinct >= 2, "n = {n}: {v:?}");
                assert!(v.spread_ulps > 0.0, "n = {n}: {v:?}");
            }
            r => panic!("n = {n}: a black box that regroups every call varies, not {r:?}"),
        }
    }
}

/// Each notes list of a workflow, and its outcome.
struct Notes(Vec<Note>);

impl fprev::reveal::Watcher for Notes {}
impl workflow::Observer for Notes {
    fn note(&mut self, note: Note) {
        self.0.push(note);
    }
}

#[test]
fn runs_find_a_varying_black_box_before_any_reveal_and_pass_a_fixed_one() {
    let request = Request {
        runs: 10,
        ..Request::default()
    };
    let mut varying = RandomJoins {
        n: 64,
        rng: ChaCha8Rng::seed_from_u64(3),
    };
    let outcome = workflow::reveal_opened(
        &mut varying,
        "random joins",
        &request,
        &mut |_| unreachable!("no other size is opened"),
        &mut Silent,
    )
    .unwrap();
    assert!(matches!(outcome, Outcome::Varies(_)), "{outcome:?}");

    // A fixed order: the same tree as without runs, and a note saying so.
    let opts = ProbeOptions {
        n: Some(64),
        ..Default::default()
    };
    let mut fixed = fprev::open("native:pairwise", &opts).unwrap();
    let mut notes = Notes(Vec::new());
    let outcome = workflow::reveal_opened(
        &mut fixed,
        "native:pairwise",
        &request,
        &mut |_| unreachable!("no other size is opened"),
        &mut notes,
    )
    .unwrap();
    let Outcome::Revealed(r) = outcome else {
        panic!("a pairwise sum has a tree: {outcome:?}")
    };
    assert_eq!(*r.document.tree(), Order::Pairwise.tree(64));
    assert!(
        notes
            .0
            .iter()
            .any(|n| matches!(n, Note::Deterministic(v) if !v.varies() && v.runs == 10)),
        "{:?}",
        notes.0
    );
}

#[test]
fn a_deterministic_reveal_asks_no_repeats() {
    // Without runs, the reveal of a fixed order costs what the engine's does.
    let opts = ProbeOptions {
        n: Some(200),
        ..Default::default()
    };
    let mut a = fprev::open("native:strided:8", &opts).unwrap();
    let engine = reveal(&mut a, &Options::default())
        .unwrap()
        .revealed()
        .unwrap();
    let mut b = fprev::open("native:strided:8", &opts).unwrap();
    let request = Request {
        confirm: workflow::Confirm {
            trials: 0,
            ..Default::default()
        },
        ..Request::default()
    };
    let outcome =
        workflow::reveal_opened(&mut b, "s", &request, &mut |_| unreachable!(), &mut Silent);
    let Ok(Outcome::Revealed(r)) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(r.document.stats.unwrap().calls, engine.stats.calls);
}

/// Sums left to right, except that on every third call an input holding a
/// value other than the masks' (a random input) is summed right to left:
/// masked answers fit one tree, and only an input asked again shows that
/// the answer changes.
struct RandomInputsVary {
    n: usize,
    calls: u64,
}

impl Probe for RandomInputsVary {
    fn n(&self) -> usize {
        self.n
    }
    fn format(&self) -> Format {
        Format::F32
    }
    fn may_fuse(&self) -> bool {
        false
    }
    fn sum(&mut self, x: &[f64], out: &mut [f64]) -> fprev::Result<()> {
        for (x, o) in x.chunks_exact(self.n).zip(out) {
            self.calls += 1;
            // Masked inputs hold 0, one unit and two masks of one magnitude.
            let mut magnitudes: Vec<u64> = x.iter().map(|v| v.abs().to_bits()).collect();
            magnitudes.sort_unstable();
            magnitudes.dedup();
            let order = match magnitudes.len() > 3 && self.calls.is_multiple_of(3) {
                true => Order::Reverse,
                false => Order::Sequential,
            };
            *o = order.sum(x, Format::F32);
        }
        Ok(())
    }
}

#[test]
fn an_input_asked_again_shows_what_masked_answers_cannot() {
    let n = 6_000;
    let mut probe = RandomInputsVary { n, calls: 0 };
    match reveal(&mut probe, &Options::default()) {
        Ok(Outcome::Varies(v)) => assert!(v.varies(), "{v:?}"),
        Ok(Outcome::Revealed(found)) => panic!(
            "the repeated input differs on its second call: varies, not a tree after {} calls",
            found.stats.calls
        ),
        r => panic!("the repeated input differs on its second call: varies, not {r:?}"),
    }
    // The repeat is asked once 4,096 calls are made, before the reveal's
    // 5,999 calls end; a few rounds of random inputs then measure it.
    assert!(probe.calls < 4_500, "{} calls", probe.calls);
}

/// The skeleton of chunks joined at random is the chunks, each revealed as
/// the left-to-right tree it is, under one join that varies; the tree is
/// checked node for node against one built from the chunks' description.
#[test]
fn the_skeleton_of_chunks_joined_at_random_is_the_chunks() {
    for n in [24, 128, 100] {
        let mut probe = RandomJoins {
            n,
            rng: ChaCha8Rng::seed_from_u64(7),
        };
        let s = reveal::skeleton(&mut probe, &effort(50), &mut Silent).unwrap();
        let chunks: Vec<String> = (0..n)
            .step_by(8)
            .map(|a| {
                let mut t = a.to_string();
                for k in a + 1..(a + 8).min(n) {
                    t = format!("({t}+{k})");
                }
                t
            })
            .collect();
        let expected: fprev::SummationTree = format!("({})", chunks.join("+")).parse().unwrap();
        assert_eq!(s.tree, expected, "n = {n}");
        assert_eq!(s.varying.len(), 1, "n = {n}");
        assert_eq!((s.varying[0].first, s.varying[0].leaves), (0, n));
        assert!(s.most_answers >= 2, "n = {n}: {}", s.most_answers);
        assert_eq!(s.repeats, 50);
    }
    let mut probe = RandomJoins {
        n: 128,
        rng: ChaCha8Rng::seed_from_u64(1),
    };
    let s = reveal::skeleton(&mut probe, &effort(50), &mut Silent).unwrap();
    assert_eq!(
        s.describe(),
        vec![
            "16 runs of 8 consecutive summands, each left to right, joined in an order that varies"
        ]
    );
}

/// A black box that does not vary has itself as its skeleton: no join
/// varies, whatever the shape.
#[test]
fn a_fixed_order_is_its_own_skeleton() {
    for order in [
        Order::Pairwise,
        Order::Strided(4),
        Order::Reverse,
        Order::Blocked(8),
    ] {
        let opts = ProbeOptions {
            n: Some(50),
            ..Default::default()
        };
        let mut probe = fprev::open(&format!("native:{order}"), &opts).unwrap();
        let s = reveal::skeleton(&mut probe, &effort(3), &mut Silent).unwrap();
        assert_eq!(s.tree, order.tree(50), "{order}");
        assert!(
            s.is_whole() && s.most_answers == 1,
            "{order}: {:?}",
            s.varying
        );
    }
}

/// Adds two of its partial sums, picked at random, until one is left: a
/// new random tree every call, of which only the whole sum is shared.
struct RandomTree(ChaCha8Rng);

impl Probe for RandomTree {
    fn n(&self) -> usize {
        200
    }
    fn format(&self) -> Format {
        Format::F64
    }
    fn sum(&mut self, x: &[f64], out: &mut [f64]) -> fprev::Result<()> {
        use rand::Rng;
        let mut parts = x.to_vec();
        while parts.len() > 1 {
            let a = parts.swap_remove(self.0.random_range(0..parts.len()));
            let b = parts.swap_remove(self.0.random_range(0..parts.len()));
            parts.push(Format::F64.add(a, b));
        }
        out[0] = parts[0];
        Ok(())
    }
}

/// Where nothing is fixed, the skeleton is one join of single summands;
/// past `MOST_PARTS` parts found one by one (each a pass over the rest)
/// the rest are not looked at, and the skeleton says how many.
#[test]
fn a_black_box_with_nothing_fixed_is_one_join_and_its_cost_is_bounded() {
    let mut probe = RandomTree(ChaCha8Rng::seed_from_u64(3));
    let s = reveal::skeleton(&mut probe, &effort(10), &mut Silent).unwrap();
    let root = s.tree.root();
    assert_eq!(s.tree.children(root).len(), 200, "{}", s.tree);
    assert_eq!(s.varying.len(), 1);
    let explored = fprev::skeleton::MOST_PARTS;
    assert!(
        s.unexplored > 0 && s.unexplored <= 200 - explored,
        "{}",
        s.unexplored
    );
    // Each part explored costs a pass over the rest, each query asked 10
    // times and at most 4 times again: bounded by the parts, not by n².
    assert!(
        s.calls <= 5 * 10 * 200 * (explored as u64 + 1),
        "{}",
        s.calls
    );
    assert!(
        s.describe().last().unwrap().contains("unexplored"),
        "{:?}",
        s.describe()
    );
}

/// A tree file's varying joins must be multiway nodes of its tree.
#[test]
fn a_varying_join_that_is_no_multiway_node_is_refused() {
    let file = |join: &str| {
        format!(
            r#"{{"n": 6, "tree": [[0,1],[2,3],[4,5]], "varies": {{"version": 1, "inputs": 8,
            "runs": 4, "varied": 1, "most_distinct": 2, "spread_ulps": 1.0,
            "spread_relative": 1e-7, "condition": 1.0, "skeleton": {{"varying": [{join}],
            "repeats": 4, "most_answers": 2, "queries": 5, "calls": 20}}}}}}"#
        )
    };
    let doc = fprev::document::TreeDocument::parse(&file("[0, 6]")).unwrap();
    let skeleton = doc.varies.unwrap().skeleton.unwrap();
    assert_eq!(skeleton.varying.len(), 1);
    for bad in ["[0, 2]", "[1, 6]", "[0, 5]"] {
        let e = fprev::document::TreeDocument::parse(&file(bad)).unwrap_err();
        assert!(
            e.to_string().contains("no node of more than two children"),
            "{bad}: {e}"
        );
    }
}
