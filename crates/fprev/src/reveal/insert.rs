//! Insertion: summands placed one by one into the tree of those placed
//! before them, each place read from answers of many bits
//! (docs/ALGORITHMS.md, Insertion).
//!
//! Summand `k` joins the tree of the placed summands `T` on the edge above
//! one node `t`. A masked input with a pair meeting at node `w` of `T` and
//! a bit on `k` (`2^b u`, a power of two of its own) keeps that bit exactly
//! when `t` lies outside `w`'s subtree strictly below `w`; one input reads
//! as many such bits as the accumulator holds exactly (24 in f32, 53 in
//! f64), of as many summands, where FPRev's count of units says one thing
//! of one pair. A search halves the nodes left along heavy paths (each
//! test splits them about evenly), so a summand costs about `log2 n` bits,
//! `n log2 n / 24` inputs in all in f32; library orders repeat themselves,
//! so most summands' places are guessed ([`predict`]) and checked with two
//! bits, and a summand whose guess fails is found from the guess's anchor.
//! The tree is then proven as a prediction is (`proof`) where that takes
//! few inputs (not for chains: a call a node): what this returns is the
//! black box's tree, or a refuted guess or nothing, and FPRev's engine
//! reveals it then.

mod ask;
mod growing;
mod predict;

use std::collections::{HashSet, VecDeque};

use super::oracle::Oracle;
use super::proof;
use super::watcher::Placement;
use crate::error::Result;
use crate::tree::SummationTree;
use ask::{Bit, EMPTY, Room, Span, Test, ask};
use growing::{Growing, NONE, Node, Snapshot};
use predict::Predictors;

/// What insertion ended with.
pub(super) enum Inserted {
    /// The black box's tree: every place read from exact answers, and the
    /// whole tree proven where that takes few inputs.
    Found(SummationTree),
    /// A tree whose proof failed: most likely right in most places, a
    /// guess for FPRev's engine.
    Refuted(SummationTree),
    /// Inputs that hold too few bits, or answers no binary tree gives (a
    /// fused node, values the method cannot mask): FPRev's engine says
    /// what.
    Aside,
}

/// Insertion reveals from this many summands: below, FPRev's engine takes
/// fewer calls on most orders (its counts need no proof, and guesses have
/// little to go on).
pub(super) const FROM: usize = 1_024;

/// Insertion reveals black boxes answering at most this many inputs a
/// call: its rounds wait for one another, where FPRev's engine fills a
/// GEMM's 1,024 rows with queries of every subproblem at once.
pub(super) const MOST_ROWS: usize = 16;

/// Whether insertion is worth trying on this black box: `FROM` summands
/// or more, at most `MOST_ROWS` inputs a call, numbers fprev writes (not
/// products of operands), and no fused nodes known
/// ([`Probe::fuses`](crate::Probe::fuses)): insertion places summands on
/// the edges of a binary tree and hands a fused node to FPRev's engine
/// once it shows, so on a box known to fuse its calls would only come
/// first. Whether its inputs hold enough bits, [`build`] finds.
pub(super) fn applies(oracle: &mut Oracle) -> bool {
    let (n, rows) = (oracle.n(), oracle.rows());
    let probe = oracle.probe();
    n >= FROM && rows <= MOST_ROWS && probe.operands().is_none() && !probe.fuses()
}

/// Reveals the black box's tree by insertion, and proves it where that
/// takes at most `max(n / PROOF_SHARE, PROOF_ALWAYS)` inputs.
pub(super) fn build(oracle: &mut Oracle, placement: &mut Placement) -> Result<Inserted> {
    let Some(room) = Room::of(oracle) else {
        return Ok(Inserted::Aside);
    };
    let n = oracle.n();
    let mut run = Run {
        oracle,
        room,
        tree: Growing::new(n, 0),
        predictors: Predictors::new(n),
        queue: (1..n).map(|k| (k, Start::Fresh)).collect(),
        witnessed: HashSet::new(),
        snap: Snapshot::default(),
    };
    placement.place(0, &run.oracle.counters);
    if run.place_all(placement)?.is_none() {
        return Ok(Inserted::Aside);
    }
    let tree = run.tree.finish()?;
    // Every place was read from exact answers; the proof, where it costs
    // little beside them, checks the whole tree once more against black
    // boxes that are no summation tree. Chains cost it one input a node.
    let most = (n / PROOF_SHARE).max(PROOF_ALWAYS);
    Ok(match proof::prove_within(run.oracle, &tree, most)? {
        None | Some(true) => Inserted::Found(tree),
        Some(false) => Inserted::Refuted(tree),
    })
}

/// Where a summand's search starts.
#[derive(Clone, Copy, Debug)]
enum Start {
    /// Anywhere in the tree.
    Fresh,
    /// On the edge that summand went to before another one took it: above
    /// `t`, now below the node `joined` that joins `t` and the other.
    Taken { joined: Node, t: Node },
    /// Near the root path of the placed summand `anchor` (its guess failed).
    Near { anchor: usize },
}

/// The tree is proven where that takes at most `n / PROOF_SHARE` inputs,
/// or `PROOF_ALWAYS`.
const PROOF_SHARE: usize = 16;
const PROOF_ALWAYS: usize = 64;

/// Consecutive guesses checked together at most.
const MOST_GUESSED: usize = 4_096;

struct Run<'a, 'p> {
    oracle: &'a mut Oracle<'p>,
    room: Room,
    tree: Growing,
    predictors: Predictors,
    /// Summands without a place, in the order they are placed.
    queue: VecDeque<(usize, Start)>,
    /// Pairs whose witness was lost: each is asked once a reveal.
    witnessed: HashSet<[usize; 2]>,
    /// The tree's snapshot, refreshed for each check of guesses and each
    /// search.
    snap: Snapshot,
}

impl Run<'_, '_> {
    /// Places every summand; `None` where answers fit no binary tree.
    fn place_all(&mut self, placement: &mut Placement) -> Result<Option<()>> {
        let mut guessed = 2;
        let mut searched = 64;
        let mut guessing = true;
        let mut missed = 0;
        let mut placed = 1;
        while let Some(&(k, start)) = self.queue.front() {
            if placed == 1 {
                // One summand placed: the next can only go above it.
                self.queue.pop_front();
                self.place(k, self.tree.root());
                placement.place(k, &self.oracle.counters);
                placed += 1;
                continue;
            }
            if guessing && matches!(start, Start::Fresh) {
                let Some((accepted, failed)) = self.guess(guessed, placement)? else {
                    return Ok(None);
                };
                placed += accepted;
                match failed {
                    None => guessed = (2 * guessed).min(MOST_GUESSED),
                    Some(anchor) => {
                        // The checks stop at the first wrong guess, so a
                        // long chain wastes little; failing at once twice
                        // in a row, guesses give way to searches.
                        missed = if accepted == 0 { missed + 1 } else { 0 };
                        let (k, _) = self.queue.pop_front().expect("the failed summand");
                        let start = anchor.map_or(Start::Fresh, |anchor| Start::Near { anchor });
                        if missed >= 2 {
                            self.queue.push_front((k, start));
                            guessing = false;
                            missed = 0;
                        } else {
                            let Some(_) = self.search(vec![(k, start)], placement)? else {
                                return Ok(None);
                            };
                            placed += 1;
                        }
                    }
                }
            } else {
                let size = searched.min(self.queue.len());
                let batch: Vec<(usize, Start)> = self.queue.drain(..size).collect();
                let Some(again) = self.search(batch, placement)? else {
                    return Ok(None);
                };
                placed += size;
                // Summands that took one another's edges are placed
                // meanwhile, but each costs another search: batches shrink
                // where many do (orders that add neighbours).
                searched = match 2 * again > size {
                    true => (searched / 2).max(4),
                    false => (2 * searched).min(4_096),
                };
                // Guesses resume where the batch's places were mostly
                // foreseen; a random order goes on in batches, each wrong
                // guess costing a search of its own.
                guessing = self.predictors.foresee();
                guessed = 2;
            }
        }
        Ok(Some(()))
    }

    /// Places `k` above `t` and records it for the predictors.
    fn place(&mut self, k: usize, t: Node) -> Node {
        let was_root = t == self.tree.root();
        let joined = self.tree.insert(k, t);
        self.predictors.record(&self.tree, k, t, was_root);
        joined
    }

    /// Guesses the places of up to `most` summands at the queue's front,
    /// each in the tree with the guesses before it, and checks them all at
    /// once; keeps those before the first wrong one. Returns how many were
    /// kept and, where one failed, the anchor of its guess; `None` where
    /// answers fit no binary tree.
    fn guess(
        &mut self,
        most: usize,
        placement: &mut Placement,
    ) -> Result<Option<(usize, Option<Option<usize>>)>> {
        struct Guessed {
            k: usize,
            t: Node,
            joined: Node,
            /// A pair meeting at `t` (and its witness), a summand of `t`'s
            /// sibling, and one of `t`.
            meeting: Option<([usize; 2], Option<usize>)>,
            sibling: Option<usize>,
            inside: usize,
            anchor: Option<usize>,
        }
        let mut chain: Vec<Guessed> = Vec::new();
        let fresh: Vec<usize> = self
            .queue
            .iter()
            .take(most)
            .take_while(|(_, start)| matches!(start, Start::Fresh))
            .map(|&(k, _)| k)
            .collect();
        for k in fresh {
            let Some(guess) = self.predictors.guess(&self.tree, k) else {
                break;
            };
            let t = guess.t;
            let meeting = self.tree.children(t).map(|_| self.tree.meeting(t));
            let sibling = match self.tree.sibling(t) {
                NONE => None,
                s => Some(self.tree.fresh(s)),
            };
            let inside = self.tree.fresh(t);
            let joined = self.place(k, t);
            chain.push(Guessed {
                k,
                t,
                joined,
                meeting,
                sibling,
                inside,
                anchor: guess.anchor,
            });
        }
        if chain.is_empty() {
            return Ok(Some((0, Some(None))));
        }
        // Two checks a guess: `k` not strictly under `t` (a pair meeting at
        // `t` keeps its bit), and the pair of `k` and a summand of `t`
        // meeting below `t`'s sibling (keeps a bit on it).
        self.snap.refresh(&self.tree);
        let snap = &self.snap;
        let mut tests = Vec::new();
        for (i, g) in chain.iter().enumerate() {
            let tag = 2 * i as u32;
            if let Some((pair, witness)) = g.meeting {
                let at = snap.pre(self.tree.leaf(g.k));
                tests.push(Test {
                    pair,
                    swallow: snap.subtree(g.t),
                    bits: vec![Bit::placed(g.k, at, tag)],
                    witness,
                });
            }
            if let Some(y) = g.sibling {
                tests.push(Test {
                    pair: [g.k, g.inside],
                    swallow: snap.subtree(g.joined),
                    bits: vec![Bit::placed(y, snap.pre(self.tree.leaf(y)), tag + 1)],
                    witness: None,
                });
            }
        }
        let Some(read) = ask(self.oracle, &tests, self.room, true, &mut self.witnessed)? else {
            return Ok(None);
        };
        // The first guess with a bit lost, and all after it, are taken
        // back; the checks of those before it that were not asked (they
        // shared inputs with later guesses) are asked now.
        let lost = |read: &[ask::Read]| {
            read.iter()
                .filter(|(_, kept)| *kept == Some(false))
                .map(|&(tag, _)| tag as usize / 2)
                .min()
                .unwrap_or(chain.len())
        };
        let mut wrong = lost(&read);
        let unasked: Vec<Test> = tests
            .iter()
            .zip(&read)
            .filter(|(_, (tag, kept))| kept.is_none() && (*tag as usize / 2) < wrong)
            .map(|(test, _)| test.clone())
            .collect();
        if !unasked.is_empty() {
            let Some(read) = ask(self.oracle, &unasked, self.room, true, &mut self.witnessed)?
            else {
                return Ok(None);
            };
            wrong = wrong.min(lost(&read));
            if let Some(&(tag, _)) = read.iter().find(|(_, kept)| kept.is_none()) {
                wrong = wrong.min(tag as usize / 2);
            }
        }
        for g in chain[wrong..].iter().rev() {
            self.tree.undo(g.k);
        }
        for g in &chain[..wrong] {
            self.queue.pop_front();
            self.predictors.score(g.k);
            placement.place(g.k, &self.oracle.counters);
        }
        let failed = chain.get(wrong).map(|g| g.anchor);
        Ok(Some((wrong, failed)))
    }

    /// Searches the places of `batch` in the tree as it stands, all at
    /// once, and places them; summands whose edge another took first are
    /// sought again on that edge, until every one has its place. Returns
    /// how many were sought again; `None` where answers fit no binary tree.
    fn search(
        &mut self,
        mut batch: Vec<(usize, Start)>,
        placement: &mut Placement,
    ) -> Result<Option<usize>> {
        let mut again = 0;
        while !batch.is_empty() {
            let Some(taken) = self.search_once(&batch, placement)? else {
                return Ok(None);
            };
            again += taken.len();
            batch = taken;
        }
        Ok(Some(again))
    }

    /// One search of `batch` in the tree as it stands: places each summand
    /// whose edge no other took, and returns the others.
    fn search_once(
        &mut self,
        batch: &[(usize, Start)],
        placement: &mut Placement,
    ) -> Result<Option<Vec<(usize, Start)>>> {
        self.snap.refresh(&self.tree);
        let snap = &self.snap;
        let mut seekers: Vec<(usize, Seek)> = batch
            .iter()
            .map(|&(k, start)| (k, Seek::start(&self.tree, snap, start, self.room)))
            .collect();
        loop {
            let mut tests = Vec::new();
            for (i, (k, seek)) in seekers.iter().enumerate() {
                if let Some(test) = seek.test(&self.tree, snap, *k, i as u32) {
                    tests.push(test);
                }
            }
            if tests.is_empty() {
                break;
            }
            let Some(read) = ask(self.oracle, &tests, self.room, false, &mut self.witnessed)?
            else {
                return Ok(None);
            };
            let mut kept: Vec<Vec<bool>> = vec![Vec::new(); seekers.len()];
            for (tag, bit) in read {
                kept[tag as usize].extend(bit);
            }
            for ((_, seek), kept) in seekers.iter_mut().zip(kept) {
                if kept.is_empty() {
                    continue;
                }
                let Some(next) = seek.next(&self.tree, snap, &kept) else {
                    return Ok(None);
                };
                *seek = next;
            }
        }
        let mut taken: Vec<(Node, Node)> = Vec::new();
        let mut again = Vec::new();
        for (k, seek) in seekers {
            let Seek::Found(t) = seek else {
                unreachable!("every search ends with a place")
            };
            match taken.iter().find(|(edge, _)| *edge == t) {
                Some(&(_, joined)) => again.push((k, Start::Taken { joined, t })),
                None => {
                    let joined = self.place(k, t);
                    self.predictors.score(k);
                    placement.place(k, &self.oracle.counters);
                    taken.push((t, joined));
                }
            }
        }
        Ok(Some(again))
    }
}

/// A summand's search: the nodes above which it may go, and its next test.
#[derive(Clone, Copy, Debug)]
enum Seek {
    /// One test: the pair of the summand and `x` (a leaf), with a bit on a
    /// summand of each subtree hanging off `x`'s root path, tells at which
    /// node of the path the summand meets `x`.
    Path {
        x: Node,
    },
    /// Above `v` or in the subtree of `o`, `v`'s other child (a path's
    /// answer).
    Class {
        v: Node,
        o: Node,
    },
    /// Somewhere in a region of a heavy path.
    Region(Region),
    /// Above `next` or above `o`, its sibling.
    Either {
        next: Node,
        o: Node,
    },
    /// Above `t`, found by elimination: checked like a guess (a third
    /// child of a fused node looks like this).
    Confirm(Node),
    Found(Node),
}

/// On heavy path `path`, the nodes strictly under `path[lo]` (and it too
/// where `incl`) but not strictly under `path[hi]`; and `also`, where it is
/// not `NONE`: the sibling of `path[lo]`, which no test of the path
/// swallows.
#[derive(Clone, Copy, Debug)]
struct Region {
    path: u32,
    lo: u32,
    hi: u32,
    incl: bool,
    also: Node,
}

impl Region {
    /// Everything under `r` (and `r` where `incl`).
    fn of(snap: &Snapshot, r: Node, incl: bool) -> Region {
        let (path, lo) = snap.path_of(r);
        Region {
            path,
            lo,
            hi: snap.path(path).len() as u32 - 1,
            incl,
            also: NONE,
        }
    }

    /// The nodes of its path.
    fn nodes<'s>(&self, snap: &'s Snapshot) -> &'s [Node] {
        snap.path(self.path)
    }

    /// Where in it a summand may hang, as preorder spans.
    fn spans(&self, snap: &Snapshot) -> [Span; 3] {
        let nodes = self.nodes(snap);
        let [top_pre, top_end] = snap.subtree(nodes[self.lo as usize]);
        let [bottom_pre, bottom_end] = snap.subtree(nodes[self.hi as usize]);
        let also = match self.also {
            NONE => EMPTY,
            v => [snap.pre(v); 2],
        };
        [
            [top_pre + u32::from(!self.incl), bottom_pre],
            [bottom_end + 1, top_end],
            also,
        ]
    }

    /// The node of `path[lo..hi]` whose membership test splits it most
    /// evenly (`also`, which every test keeps, among the candidates): `lo`
    /// itself only where the region holds it.
    fn split(&self, snap: &Snapshot) -> u32 {
        let Region {
            lo, hi, incl, also, ..
        } = *self;
        let nodes = self.nodes(snap);
        let below = snap.count_under(nodes[hi as usize]);
        let total =
            u32::from(incl) + u32::from(also != NONE) + snap.count_under(nodes[lo as usize])
                - below;
        let yes = |i: u32| snap.count_under(nodes[i as usize]) - below;
        let first = lo + u32::from(!incl);
        // `yes` falls along the path: the last `i` with yes(i) at least
        // half, or the one after it.
        let (mut a, mut b) = (first, hi - 1);
        while a < b {
            let mid = a + (b - a).div_ceil(2);
            if 2 * yes(mid) >= total {
                a = mid
            } else {
                b = mid - 1
            }
        }
        let off = |i: u32| (2 * i64::from(yes(i)) - i64::from(total)).abs();
        if a < hi - 1 && off(a + 1) < off(a) {
            a + 1
        } else {
            a
        }
    }
}

impl Seek {
    fn start(tree: &Growing, snap: &Snapshot, start: Start, room: Room) -> Seek {
        match start {
            Start::Fresh => Seek::region(snap, tree.root(), true),
            Start::Taken { joined, t } => {
                let (path, lo) = snap.path_of(joined);
                match snap.path(path).get(lo as usize + 1) {
                    Some(&next) if next == t => Seek::Region(Region {
                        path,
                        lo,
                        hi: lo + 1,
                        incl: true,
                        also: NONE,
                    }),
                    _ => Seek::region(snap, joined, true),
                }
            }
            Start::Near { anchor } => {
                let x = tree.leaf(anchor);
                match tree.ancestor(x, room.bits) {
                    // Deeper than an input's bits reach: searched from the
                    // root.
                    Some(v) if tree.parent(v) != NONE => Seek::region(snap, tree.root(), true),
                    _ => Seek::Path { x },
                }
            }
        }
    }

    /// The search of everything under `r` (and `r` where `incl`).
    fn region(snap: &Snapshot, r: Node, incl: bool) -> Seek {
        Seek::Region(Region::of(snap, r, incl))
    }

    /// The search of the nodes strictly under `path[lo]` but not strictly
    /// under `path[hi]`. Where that is `path[hi]` and the subtree of its
    /// sibling `o`, the search goes on along `o`'s own heavy path with
    /// `path[hi]` beside: its tests are then membership tests, whose pairs
    /// the summands sought there share, not a test of each summand's own.
    fn under(tree: &Growing, snap: &Snapshot, path: u32, lo: u32, hi: u32) -> Seek {
        if hi > lo + 1 {
            return Seek::Region(Region {
                path,
                lo,
                hi,
                incl: false,
                also: NONE,
            });
        }
        let next = snap.path(path)[hi as usize];
        let o = tree.sibling(next);
        match tree.children(o) {
            None => Seek::Either { next, o },
            Some(_) => Seek::Region(Region {
                also: next,
                ..Region::of(snap, o, true)
            }),
        }
    }

    /// Where the summand may hang, as preorder spans.
    fn spans(&self, snap: &Snapshot) -> [Span; 3] {
        let point = |v: Node| [snap.pre(v); 2];
        match *self {
            Seek::Region(r) => r.spans(snap),
            Seek::Either { next, o } => [point(next), point(o), EMPTY],
            Seek::Class { v, o } => [point(v), snap.subtree(o), EMPTY],
            Seek::Path { .. } => [[0, u32::MAX], EMPTY, EMPTY],
            Seek::Confirm(t) | Seek::Found(t) => [point(t), EMPTY, EMPTY],
        }
    }

    /// The test this search asks next (its bits tagged `tag`), none once
    /// found.
    fn test(&self, tree: &Growing, snap: &Snapshot, k: usize, tag: u32) -> Option<Test> {
        let membership = |w: Node| {
            let (pair, witness) = tree.meeting(w);
            Test {
                pair,
                swallow: snap.under(w),
                bits: vec![Bit {
                    leaf: k,
                    at: self.spans(snap),
                    tag,
                }],
                witness,
            }
        };
        let placed = |leaf: usize| Bit::placed(leaf, snap.pre(tree.leaf(leaf)), tag);
        match *self {
            Seek::Found(_) => None,
            Seek::Path { x } => {
                let mut bits = Vec::new();
                let mut v = x;
                while tree.parent(v) != NONE {
                    bits.push(placed(tree.fresh(tree.sibling(v))));
                    v = tree.parent(v);
                }
                Some(Test {
                    pair: [k, tree.rep(x)],
                    swallow: [0, u32::MAX],
                    bits,
                    witness: None,
                })
            }
            Seek::Class { v, .. } => Some(membership(v)),
            Seek::Confirm(t) => Some(Test {
                pair: [k, tree.fresh(t)],
                swallow: snap.subtree(t),
                bits: vec![placed(tree.fresh(tree.sibling(t)))],
                witness: None,
            }),
            // The pair meets below `next`'s parent where the summand goes
            // above `next`, keeping the bit on `o`.
            Seek::Either { next, o } => Some(Test {
                pair: [k, tree.fresh(next)],
                swallow: snap.under(tree.parent(next)),
                bits: vec![placed(tree.fresh(o))],
                witness: None,
            }),
            Seek::Region(r) => Some(membership(r.nodes(snap)[r.split(snap) as usize])),
        }
    }

    /// The search after its test's bits read `kept`; `None` where they
    /// fit no binary tree.
    fn next(&self, tree: &Growing, snap: &Snapshot, kept: &[bool]) -> Option<Seek> {
        let found = |t: Node, checked: bool| {
            if checked || tree.parent(t) == NONE {
                Seek::Found(t)
            } else {
                Seek::Confirm(t)
            }
        };
        Some(match *self {
            Seek::Found(_) => *self,
            Seek::Path { x } => {
                // The subtrees swallowed are those below the meeting node:
                // the first `j` up the path, and no others.
                let j = kept.iter().take_while(|&&k| !k).count();
                if kept[j..].iter().any(|&k| !k) {
                    return None;
                }
                match j {
                    0 => found(x, true),
                    _ => {
                        let v = tree.ancestor(x, j)?;
                        let below = tree.ancestor(x, j - 1)?;
                        Seek::Class {
                            v,
                            o: tree.sibling(below),
                        }
                    }
                }
            }
            Seek::Class { v, o } => match (kept[0], tree.children(o)) {
                (true, _) => found(v, true),
                (false, None) => found(o, false),
                (false, Some(_)) => Seek::region(snap, o, true),
            },
            Seek::Confirm(t) => match kept[0] {
                true => Seek::Found(t),
                false => return None,
            },
            Seek::Either { next, o } => match kept[0] {
                true => Seek::Found(next),
                false => found(o, false),
            },
            Seek::Region(r) => {
                let top = r.nodes(snap)[r.lo as usize];
                let i = r.split(snap);
                match (kept[0], i == r.lo) {
                    // Strictly under `nodes[i]`: not beside the path.
                    (false, _) => Seek::under(tree, snap, r.path, i, r.hi),
                    // Above `nodes[lo]` itself, or above `also`.
                    (true, true) if r.also != NONE => Seek::Either {
                        next: r.also,
                        o: top,
                    },
                    (true, true) => found(top, false),
                    // Strictly under `nodes[lo]` (so nothing beside), not
                    // strictly under `nodes[i]`.
                    (true, false) if !r.incl => Seek::under(tree, snap, r.path, r.lo, i),
                    (true, false) => Seek::Region(Region { hi: i, ..r }),
                }
            }
        })
    }
}
