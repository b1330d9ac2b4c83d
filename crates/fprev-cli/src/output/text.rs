//! The text form: the tree as nested parentheses, then `#` lines saying what
//! was revealed and whether a replay confirmed it.

use fprev::document::TreeDocument;
use fprev::error::Result;
use fprev_present::render;

use super::Output;

/// The tree's text form, with the document's provenance as `#` comments
/// when it names its probe and dtype (a revealed tree, not a bare one).
pub(crate) struct Text;

impl Output for Text {
    fn render(&self, doc: &TreeDocument) -> Result<Vec<u8>> {
        let mut s = match doc.varies {
            Some(_) => render::skeleton_text(doc.tree()),
            None => render::text(doc.tree()),
        };
        if let (Some(p), Some(d)) = (&doc.probe, doc.dtype) {
            s += &format!("# {p}, n = {}, {d}", doc.n());
            if let Some(i) = &doc.inferred {
                let how = match i.proven {
                    Some(k) => format!("revealed (predicted, proven by {k} masked checks)"),
                    None => "not revealed at this size".to_string(),
                };
                let whence = match i.cached {
                    true => "the cache's formula, its tree proven now at n =",
                    false => "inferred from reveals at n =",
                };
                s += &format!(
                    ": predicted by native:{}, {whence} {}; {how}",
                    i.formula,
                    fprev::sizes::runs(&i.from)
                );
            } else if let Some(v) = &doc.varies {
                s += &format!(
                    ": its order varies from call to call: {}",
                    fprev_present::note::variation(v)
                );
            } else if let Some(st) = doc.stats {
                s += &format!(": {st}");
                // Tree files keep no times unless written with --timings.
                if st.seconds > 0.0 {
                    s += &format!(
                        ", {:.3} s ({:.3} s in the black box)",
                        st.seconds, st.probe_seconds
                    );
                }
            }
            if let Some(st) = doc.stats.filter(|st| st.arithmetic_calls > 0) {
                s += &format!(", and {} calls finding its arithmetic", st.arithmetic_calls);
            }
            s.push('\n');
            let fused = doc
                .stats
                .filter(|_| doc.inferred.is_none() && doc.varies.is_none())
                .and_then(|st| fprev_present::bound::fused(doc.tree(), st.inputs));
            if let Some(line) = fused {
                s += &format!("# {line}\n");
            }
            if doc.offset.is_some() {
                s += &format!(
                    "# alignment: found on its input in {}; it holds for that alignment\n",
                    fprev_present::alignment::placement(doc.offset, d)
                );
            }
            if let Some(v) = &doc.varies {
                s += &skeleton_lines(v);
                return Ok(s.into_bytes());
            }
            if let Some(a) = &doc.arithmetic {
                s += &format!("# arithmetic: {a}\n");
            }
            s += &match &doc.confirmation {
                None => "# not confirmed by replay (--confirm 0)\n".to_string(),
                Some(c) if c.confirmed() && doc.arithmetic.is_some() => format!(
                    "# confirmed: replayed with its arithmetic on {} random {}, the same bits\n",
                    c.trials,
                    match doc
                        .arithmetic
                        .as_ref()
                        .is_some_and(|a| a.products.is_some())
                    {
                        true => "x and y",
                        false => "inputs",
                    }
                ),
                Some(c) if c.confirmed() => format!(
                    "# confirmed: replayed (adding in {}) on {} random inputs, the same bits\n",
                    c.accumulator.as_deref().unwrap_or("?"),
                    c.trials
                ),
                Some(c) => format!(
                    "# NOT CONFIRMED: the order is revealed, but its replay gave other bits \
                     than the black box on random input {} (the first {} matched); that \
                     input is in {}\n",
                    c.trials,
                    c.passed,
                    c.mismatch_file.as_deref().unwrap_or("no file")
                ),
            };
            if let Some(c) = doc.confirmation.as_ref().filter(|c| c.confirmed()) {
                if !c.distinguished_from.is_empty() {
                    s += &format!(
                        "# told from its nearest alternatives, an input each: {}\n",
                        c.distinguished_from.join("; ")
                    );
                }
                if !c.not_distinguished_from.is_empty() {
                    s += &format!(
                        "# not distinguished from {}: no input searched told them apart, or \
                         none was searched where said\n",
                        c.not_distinguished_from.join("; ")
                    );
                }
            }
        }
        Ok(s.into_bytes())
    }
}

/// The `#` lines of a varying black box's skeleton: what is fixed, what
/// varies, and what finding it cost.
fn skeleton_lines(v: &fprev::variation::Variation) -> String {
    let Some(sk) = &v.skeleton else {
        return "# no skeleton: the subtrees every call shares were not looked for\n".into();
    };
    let mut s = String::new();
    if sk.is_whole() {
        s += &format!(
            "# skeleton: no join varied in {} or more calls of each masked query, yet the bits \
             did: the tree above is every call's as far as the masked inputs show\n",
            sk.first
        );
    }
    for line in sk.describe() {
        s += &format!("# skeleton: {line}\n");
    }
    let joins = match sk.most_answers {
        0 | 1 => "a node of more than two terms is a join where the search stopped: no masked \
                  query's answers differed in the calls made"
            .to_string(),
        k => format!(
            "a node of more than two terms is a join whose order varied (at least {k} distinct \
             answers to one query, so at least that many distinct trees)"
        ),
    };
    s += &format!(
        "# fixed: every subtree above agrees with every answer to {}; {joins}\n",
        fprev_present::note::skeleton_asked(sk),
    );
    if let Some(t) = sk.spent {
        s += &format!(
            "# unexplored: the search stopped when its {} s were spent, {} summands left \
             unexplored; a larger --skeleton-seconds or a smaller -n explores further\n",
            t.as_secs(),
            sk.unexplored
        );
    }
    s
}
