//! Does the order change with a setting? Reveals of one black box made
//! under each combination of settings (a thread count, environment
//! variables a library reads when it loads), grouped by the order and
//! arithmetic each found, and the knobs whose value alone changed it.
//!
//! The reveals themselves are the front end's to make (environment
//! variables need a fresh process each); this module plans the settings
//! and reads what they found.
//!
//! ```
//! use fprev::invariance::{Knob, Observed, Study, settings};
//! use fprev::document::TreeDocument;
//! use fprev::Order;
//!
//! let knobs = [Knob::new("threads", &["1", "2"]).unwrap()];
//! let settings = settings(&knobs).unwrap();
//! let found = |o: Order| Observed::Order(TreeDocument::new(o.tree(8)));
//! let study = Study::new(settings, vec![found(Order::Sequential), found(Order::Pairwise)]);
//! assert!(!study.invariant());
//! assert_eq!(study.changing_knobs(), vec!["threads"]);
//! assert!(study.pinned_by(&["threads"]));
//! ```

use std::fmt;

use crate::document::TreeDocument;
use crate::error::{Error, Result};

/// The most combinations of settings one study reveals under.
pub const MAX_SETTINGS: usize = 64;

/// One knob and the values to try: `threads`, or an environment variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Knob {
    /// `threads` or the variable's name.
    pub name: String,
    /// Its values; `unset` removes an environment variable.
    pub values: Vec<String>,
}

impl Knob {
    /// A knob of at least one value, each named once.
    pub fn new(name: &str, values: &[&str]) -> Result<Self> {
        let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(Error::Input(format!(
                "'{name}' is not a knob: give threads or an environment variable's name \
                 (letters, digits, _)"
            )));
        }
        let mut seen: Vec<String> = Vec::new();
        for v in values {
            if v.is_empty() || seen.iter().any(|s| s == v) {
                return Err(Error::Input(format!(
                    "{name}: each value once, none empty (unset removes the variable)"
                )));
            }
            seen.push(v.to_string());
        }
        if seen.is_empty() {
            return Err(Error::Input(format!("{name}: give at least one value")));
        }
        Ok(Knob {
            name: name.to_string(),
            values: seen,
        })
    }
}

/// One combination: a value for each knob, in the knobs' order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting(pub Vec<(String, String)>);

impl Setting {
    /// The value of knob `name`.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words: Vec<String> = self.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
        f.write_str(&words.join(" "))
    }
}

/// Every combination of the knobs' values, the last knob changing
/// fastest; at most [`MAX_SETTINGS`].
pub fn settings(knobs: &[Knob]) -> Result<Vec<Setting>> {
    let count = knobs
        .iter()
        .try_fold(1usize, |n, k| n.checked_mul(k.values.len()));
    match count {
        Some(n) if n <= MAX_SETTINGS => {}
        _ => {
            return Err(Error::Input(format!(
                "the knobs' values combine to more than {MAX_SETTINGS} settings: give fewer"
            )));
        }
    }
    let mut out = vec![Setting(Vec::new())];
    for k in knobs {
        if out[0].value(&k.name).is_some() {
            return Err(Error::Input(format!("{}: named twice", k.name)));
        }
        out = out
            .into_iter()
            .flat_map(|s| {
                k.values.iter().map(move |v| {
                    let mut s = s.clone();
                    s.0.push((k.name.clone(), v.clone()));
                    s
                })
            })
            .collect();
    }
    Ok(out)
}

/// What a reveal under one setting found.
#[derive(Clone, Debug)]
pub enum Observed {
    /// A tree, confirmed by replay.
    Order(TreeDocument),
    /// A tree its replay did not confirm: no claim rests on it.
    Unconfirmed(TreeDocument),
    /// The black box varied from call to call: no one order.
    Varies(String),
    /// The reveal failed: why.
    Failed(String),
}

/// The reveals of one study, one a setting.
#[derive(Clone, Debug)]
pub struct Study {
    /// The settings, in order.
    pub settings: Vec<Setting>,
    /// What each found.
    pub observed: Vec<Observed>,
}

impl Study {
    /// A study of `observed` under `settings` (one each).
    pub fn new(settings: Vec<Setting>, observed: Vec<Observed>) -> Self {
        assert_eq!(settings.len(), observed.len(), "one finding a setting");
        Study { settings, observed }
    }

    /// The settings whose confirmed orders agree (modulo child order, and
    /// in arithmetic where both files carry one), by first appearance;
    /// a setting with no confirmed order is a group of its own.
    pub fn groups(&self) -> Vec<Vec<usize>> {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, o) in self.observed.iter().enumerate() {
            let joins = groups.iter().position(|g| agree(&self.observed[g[0]], o));
            match joins {
                Some(g) => groups[g].push(i),
                None => groups.push(vec![i]),
            }
        }
        groups
    }

    /// Whether every setting found a confirmed order, the same one.
    pub fn invariant(&self) -> bool {
        self.groups().len() == 1 && matches!(self.observed[0], Observed::Order(_))
    }

    /// The knobs whose value alone changed what was found: two settings
    /// that differ in that knob only, in different groups.
    pub fn changing_knobs(&self) -> Vec<&str> {
        let group_of = self.group_of();
        let mut knobs: Vec<&str> = Vec::new();
        let Some(first) = self.settings.first() else {
            return knobs;
        };
        for (k, (name, _)) in first.0.iter().enumerate() {
            let changes = (0..self.settings.len()).any(|a| {
                (0..self.settings.len()).any(|b| {
                    let (sa, sb) = (&self.settings[a].0, &self.settings[b].0);
                    let only_k = (0..sa.len()).all(|j| (j == k) != (sa[j].1 == sb[j].1));
                    only_k && group_of[a] != group_of[b]
                })
            });
            if changes {
                knobs.push(name);
            }
        }
        knobs
    }

    /// Whether fixing `knobs` fixes the order: every two settings that
    /// agree on them found the same confirmed order, whatever the other
    /// knobs were.
    pub fn pinned_by(&self, knobs: &[&str]) -> bool {
        let group_of = self.group_of();
        let confirmed = |i: usize| matches!(self.observed[i], Observed::Order(_));
        let n = self.settings.len();
        (0..n).all(|a| {
            (0..n).all(|b| {
                let same_pins = knobs
                    .iter()
                    .all(|k| self.settings[a].value(k) == self.settings[b].value(k));
                !same_pins || (confirmed(a) && group_of[a] == group_of[b])
            })
        })
    }

    /// The group of each setting, as [`Study::groups`] numbers them.
    pub fn group_of(&self) -> Vec<usize> {
        let mut of = vec![0; self.settings.len()];
        for (g, members) in self.groups().iter().enumerate() {
            for &i in members {
                of[i] = g;
            }
        }
        of
    }
}

/// Whether two findings are the same confirmed order and arithmetic.
fn agree(a: &Observed, b: &Observed) -> bool {
    match (a, b) {
        (Observed::Order(x), Observed::Order(y)) => {
            x.tree == y.tree
                && match (&x.arithmetic, &y.arithmetic) {
                    (Some(p), Some(q)) => p.parting(q, &x.tree).is_none(),
                    _ => true,
                }
        }
        _ => false,
    }
}
