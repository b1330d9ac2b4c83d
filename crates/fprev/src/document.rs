//! Tree files: the JSON form of DESIGN.md, which every command reads and
//! `--format json` writes.
//!
//! ```
//! use fprev::document::TreeDocument;
//!
//! let doc = TreeDocument::parse(r#"{"n": 3, "dtype": "f32", "tree": [[0, 1], 2]}"#).unwrap();
//! assert_eq!(doc.tree.to_text(), "((0+1)+2)");
//! assert!(TreeDocument::parse(r#"{"n": 4, "tree": [[0, 1], 2]}"#).is_err());
//! ```

use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::check::Confirmation;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::reveal::Stats;
use crate::tree::SummationTree;

/// A tree with what is known about where it came from.
#[derive(Clone, Debug)]
pub struct TreeDocument {
    /// The tree.
    pub tree: SummationTree,
    /// Input format of the black box it was revealed from.
    pub dtype: Option<Format>,
    /// Spec of that black box.
    pub probe: Option<String>,
    /// What the reveal cost.
    pub stats: Option<Stats>,
    /// How the tree was confirmed against the black box by replay.
    pub confirmation: Option<Confirmation>,
}

#[derive(Deserialize)]
struct Raw<'a> {
    n: Option<usize>,
    dtype: Option<String>,
    probe: Option<String>,
    #[serde(borrow)]
    tree: &'a RawValue,
    stats: Option<Stats>,
    confirmation: Option<Confirmation>,
}

impl TreeDocument {
    /// A document holding just `tree`.
    pub fn new(tree: SummationTree) -> Self {
        TreeDocument {
            tree,
            dtype: None,
            probe: None,
            stats: None,
            confirmation: None,
        }
    }

    /// Reads a tree file: the JSON form, or the text form `((0+1)+2)`.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Input(format!("cannot read {}: {e}", path.display())))?;
        Self::parse(&text).map_err(|e| Error::Input(format!("{}: {e}", path.display())))
    }

    /// Parses the JSON form (or, when the text does not start with `{`, the
    /// text form's first line).
    pub fn parse(text: &str) -> Result<Self> {
        let trimmed = text.trim_start();
        if !trimmed.starts_with('{') {
            let first = trimmed.lines().next().unwrap_or("");
            let tree: SummationTree = first.parse().map_err(|e: crate::tree::TreeError| {
                Error::Input(format!("not a tree file (JSON or text form): {}", e.0))
            })?;
            return Ok(Self::new(tree));
        }
        let mut de = serde_json::Deserializer::from_str(text);
        // The tree key is skipped as raw text (iteratively), so any depth is fine.
        de.disable_recursion_limit();
        let raw = Raw::deserialize(&mut de)
            .and_then(|r| de.end().map(|_| r))
            .map_err(|e| Error::Input(format!("not a tree file: {e}")))?;
        let tree = SummationTree::from_json_tree(raw.tree.get())
            .map_err(|e| Error::Input(format!("bad \"tree\": {}", e.0)))?;
        if let Some(n) = raw.n.filter(|n| *n != tree.n()) {
            return Err(Error::Input(format!(
                "\"n\" is {n} but the tree has {} leaves",
                tree.n()
            )));
        }
        let dtype = raw
            .dtype
            .map(|d| {
                d.parse::<Format>()
                    .map_err(|e| Error::Input(format!("bad \"dtype\": {e}")))
            })
            .transpose()?;
        Ok(TreeDocument {
            tree,
            dtype,
            probe: raw.probe,
            stats: raw.stats,
            confirmation: raw.confirmation,
        })
    }

    /// The JSON form, keys in DESIGN.md's order, one line.
    pub fn to_json(&self) -> String {
        let mut out = format!("{{\"n\":{}", self.tree.n());
        if let Some(d) = self.dtype {
            out += &format!(",\"dtype\":\"{d}\"");
        }
        if let Some(p) = &self.probe {
            out += &format!(",\"probe\":{}", serde_json::Value::from(p.as_str()));
        }
        out += ",\"tree\":";
        out += &self.tree.to_json_tree();
        if let Some(s) = &self.stats {
            out += ",\"stats\":";
            out += &serde_json::to_string(s).expect("stats serialize");
        }
        if let Some(c) = &self.confirmation {
            out += ",\"confirmation\":";
            out += &serde_json::to_string(c).expect("a confirmation serializes");
        }
        out.push('}');
        out
    }
}
