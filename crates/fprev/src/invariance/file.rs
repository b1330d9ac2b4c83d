//! A study as JSON (`fprev invariance --format json`): what a process
//! studying one value of the environment variables hands the one that
//! runs them all, and what scripts read.
//!
//! ```json
//! {"fprev_invariance": 1,
//!  "cases": [{"setting": [["batch", "1"]], "proven": false,
//!             "found": "order", "document": {"n": 3, "tree": [[0,1],2]}}]}
//! ```
//!
//! `found` is `order` or `unconfirmed` (with the tree `document`), or
//! `order-independent`, `varies` or `failed` (with `why`).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{Case, Observed, Setting, Study, Varying};
use crate::document::TreeDocument;
use crate::error::{Error, Result};
use crate::reveal::OrderIndependent;
use crate::variation::Variation;

/// The words a study file keeps for what has no tree (its `why`): an
/// order independence and a variation, as fprev-present's
/// `note::order_independent` and `note::variation` word them.
pub struct Words<'a> {
    /// An order independence in words.
    pub order_independent: &'a dyn Fn(&OrderIndependent) -> String,
    /// A variation in words.
    pub variation: &'a dyn Fn(&Variation) -> String,
}

/// The version of the study file this build writes and reads.
pub const VERSION: u64 = 1;

/// The file's top level; the version is read first, on its own.
#[derive(Serialize, Deserialize)]
struct File {
    fprev_invariance: u64,
    cases: Vec<CaseFile>,
}

/// One case; a tree document travels as raw text, parsed (at any depth)
/// by [`TreeDocument::parse`].
#[derive(Serialize, Deserialize)]
struct CaseFile {
    setting: Vec<(String, String)>,
    proven: bool,
    #[serde(default)]
    seconds: f64,
    found: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    document: Option<Box<RawValue>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    why: Option<String>,
}

#[derive(Deserialize)]
struct Version {
    fprev_invariance: Option<u64>,
}

impl Study {
    /// The study as JSON, what has no tree (an order independence, a
    /// variation) in `words` (fprev-present's `invariance::json` passes
    /// its own); what a file recorded in words is kept as it was.
    ///
    /// ```
    /// use fprev::invariance::{Case, Observed, Setting, Study, Words};
    ///
    /// let case = Case {
    ///     setting: Setting(vec![("threads".into(), "2".into())]),
    ///     observed: Observed::Failed("no such library".into()),
    ///     proven: false,
    ///     seconds: 0.0,
    /// };
    /// let study = Study { cases: vec![case] };
    /// let words = Words { order_independent: &|_| "exact".into(), variation: &|_| "varies".into() };
    /// let back = Study::parse(&study.to_json(&words)).unwrap();
    /// assert_eq!(back.cases[0].setting, study.cases[0].setting);
    /// ```
    pub fn to_json(&self, words: &Words) -> String {
        let file = File {
            fprev_invariance: VERSION,
            cases: self.cases.iter().map(|c| case_file(c, words)).collect(),
        };
        serde_json::to_string_pretty(&file).expect("a study serialises")
    }

    /// Reads a study written by [`Study::to_json`].
    pub fn parse(text: &str) -> Result<Study> {
        let bad = |source| Error::Json {
            context: "not an invariance study".into(),
            source,
        };
        let mut de = serde_json::Deserializer::from_str(text);
        de.disable_recursion_limit();
        let version = Version::deserialize(&mut de).map_err(bad)?;
        match version.fprev_invariance {
            Some(VERSION) => {}
            Some(v) => {
                return Err(Error::Input(format!(
                    "an invariance study of version {v}; this fprev reads version {VERSION}: \
                     upgrade fprev"
                )));
            }
            None => {
                return Err(Error::Input(
                    "not an invariance study: no \"fprev_invariance\" version".into(),
                ));
            }
        }
        let mut de = serde_json::Deserializer::from_str(text);
        de.disable_recursion_limit();
        let file = File::deserialize(&mut de)
            .and_then(|f| de.end().map(|_| f))
            .map_err(bad)?;
        let cases = file
            .cases
            .into_iter()
            .map(read_case)
            .collect::<Result<_>>()?;
        Ok(Study { cases })
    }

    /// This study's cases, each with `outer`'s knobs first: one process's
    /// study inside the study of the environment it ran in.
    pub fn nested(self, outer: &Setting) -> Study {
        let cases = self
            .cases
            .into_iter()
            .map(|mut c| {
                let mut knobs = outer.0.clone();
                knobs.append(&mut c.setting.0);
                c.setting = Setting(knobs);
                c
            })
            .collect();
        Study { cases }
    }
}

fn case_file(c: &Case, words: &Words) -> CaseFile {
    let raw = |d: &TreeDocument| {
        Some(RawValue::from_string(d.to_json_with_timings()).expect("a tree document is JSON"))
    };
    let why = match &c.observed {
        Observed::OrderIndependent(why) => Some((words.order_independent)(why)),
        Observed::Varies(Varying::Measured(v)) => Some((words.variation)(v)),
        Observed::Varies(Varying::Recorded(why)) | Observed::Failed(why) => Some(why.clone()),
        Observed::Order(_) | Observed::Unconfirmed(_) => None,
    };
    CaseFile {
        setting: c.setting.0.clone(),
        proven: c.proven,
        seconds: c.seconds,
        found: c.observed.kind().to_string(),
        document: c.observed.document().and_then(raw),
        why,
    }
}

fn read_case(c: CaseFile) -> Result<Case> {
    let document = || match &c.document {
        Some(raw) => TreeDocument::parse(raw.get()),
        None => Err(Error::Input(format!(
            "a case found \"{}\" without its \"document\"",
            c.found
        ))),
    };
    let why = || {
        c.why.clone().ok_or_else(|| {
            Error::Input(format!("a case found \"{}\" without its \"why\"", c.found))
        })
    };
    let observed = match c.found.as_str() {
        "order" => Observed::Order(document()?),
        "unconfirmed" => Observed::Unconfirmed(document()?),
        "order-independent" => Observed::OrderIndependent(OrderIndependent::Recorded(why()?)),
        "varies" => Observed::Varies(Varying::Recorded(why()?)),
        "failed" => Observed::Failed(why()?),
        other => {
            return Err(Error::Input(format!(
                "a case found \"{other}\": give order, unconfirmed, order-independent, varies or failed"
            )));
        }
    };
    Ok(Case {
        setting: Setting(c.setting),
        observed,
        proven: c.proven,
        seconds: c.seconds,
    })
}
