//! What a study comes to: invariant or not, the knobs that change the
//! order, and the recipe (what to pin, the settings under which the order
//! is the same at every batch size).

use super::{Between, Observed, PROCESS, Setting, Study};

/// The knobs that say which output is revealed and how many rows are sent
/// with it, as opposed to settings a user pins (threads, environment).
pub const POSITION: [&str; 3] = ["batch", "row", "column"];

/// What a study comes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Every case found a confirmed order, the same (and the same
    /// arithmetic where both had a model).
    pub invariant: bool,
    /// Cases whose arithmetic was modelled (and so compared).
    pub modelled: usize,
    /// Cases whose order a replay on random inputs confirmed (none where
    /// no replay was asked: an order found, not confirmed).
    pub replayed: usize,
    /// Knobs whose value alone changed the finding, between settings
    /// whose repeats agree.
    pub changing: Vec<String>,
    /// Settings whose order varied between repeats (calls, or the fresh
    /// processes it ran in): no knob is blamed for what changed there.
    pub varying: Vec<(Setting, Between)>,
    /// The fewest settings knobs (not [`POSITION`]) that, fixed, give each
    /// output at each batch size one confirmed order whatever the others
    /// are; `None` when no such set of the changing ones does.
    pub pin: Option<Vec<String>>,
    /// Where the batch varies: the values of the settings knobs under
    /// which every output found one confirmed order at every batch size
    /// (one empty setting where there are no settings knobs).
    pub batch_invariant_under: Vec<Setting>,
    /// Cases whose reveal failed.
    pub failed: usize,
    /// Cases with no finding that holds (unconfirmed, varying or failed).
    pub unconfirmed: usize,
}

impl Study {
    /// What the study comes to.
    pub fn verdict(&self) -> Verdict {
        let changing: Vec<String> = self
            .changing_knobs()
            .into_iter()
            .map(str::to_string)
            .collect();
        let knobs = self.knobs();
        let positions: Vec<&str> = knobs
            .iter()
            .copied()
            .filter(|k| POSITION.contains(k))
            .collect();
        let settings_knobs: Vec<&str> = changing
            .iter()
            .map(String::as_str)
            .filter(|k| !POSITION.contains(k))
            .collect();
        let pin = smallest_pin(self, &settings_knobs, &positions);
        let batch_invariant_under = match knobs.contains(&"batch") {
            true => self.batch_invariant_under(),
            false => Vec::new(),
        };
        let count = |f: fn(&Observed) -> bool| self.cases.iter().filter(|c| f(&c.observed)).count();
        Verdict {
            invariant: self.invariant(),
            modelled: count(Observed::modelled),
            replayed: count(Observed::replayed),
            changing,
            varying: self.varying(),
            pin,
            batch_invariant_under,
            failed: count(|o| matches!(o, Observed::Failed(_))),
            unconfirmed: count(|o| !o.holds()),
        }
    }

    /// Whether every output (each value of the knobs but `batch`) found
    /// one confirmed order at every batch size, the same in every process
    /// it ran in.
    pub fn batch_invariant(&self) -> bool {
        self.regimes("batch")
            .iter()
            .all(|r| r.runs.len() == 1 && self.cases[r.runs[0].case].observed.holds())
            && self.varying().is_empty()
    }

    /// The values of the settings knobs under which the study is batch
    /// invariant.
    fn batch_invariant_under(&self) -> Vec<Setting> {
        let settings_of = |s: &Setting| {
            Setting(
                s.0.iter()
                    .filter(|(k, _)| !POSITION.contains(&k.as_str()) && k != PROCESS)
                    .cloned()
                    .collect(),
            )
        };
        let mut seen: Vec<Setting> = Vec::new();
        for c in &self.cases {
            let s = settings_of(&c.setting);
            if !seen.contains(&s) {
                seen.push(s);
            }
        }
        seen.into_iter()
            .filter(|s| {
                let part = Study {
                    cases: self
                        .cases
                        .iter()
                        .filter(|c| settings_of(&c.setting) == *s)
                        .cloned()
                        .collect(),
                };
                part.batch_invariant()
            })
            .collect()
    }
}

/// The smallest subset of `candidates` that, with the `positions` held,
/// pins the order; subsets of one size are tried in the knobs' order.
fn smallest_pin(study: &Study, candidates: &[&str], positions: &[&str]) -> Option<Vec<String>> {
    if candidates.is_empty() || candidates.len() > 8 {
        return None;
    }
    let mut subsets: Vec<Vec<&str>> = (1u32..1 << candidates.len())
        .map(|bits| {
            (0..candidates.len())
                .filter(|i| bits >> i & 1 == 1)
                .map(|i| candidates[i])
                .collect()
        })
        .collect();
    subsets.sort_by_key(Vec::len);
    subsets.into_iter().find_map(|pins| {
        let held: Vec<&str> = pins.iter().chain(positions).copied().collect();
        study
            .pinned_by(&held)
            .then(|| pins.iter().map(|k| k.to_string()).collect())
    })
}
