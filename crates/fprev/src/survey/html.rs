//! A survey, and a comparison of two, as one self-contained HTML page:
//! inline styles and drawings (SVG by Graphviz's `dot`), no scripts, no
//! files beside it, so it can be mailed or kept as a CI artefact.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::compare::{Comparison, Verdict};
use super::{Entry, Status, Survey};
use crate::render::{Caption, Drawing};
use crate::sweep::runs;
use crate::tree::SummationTree;

/// The largest size a survey page draws for an entry (collapsed past
/// [`crate::render::DRAW_WHOLE`]).
pub const DRAWN_UP_TO: usize = 1024;

const STYLE: &str = "
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em; color: #1b1b1b; }
h1 { font-size: 1.4em; margin-bottom: .2em; }
table { border-collapse: collapse; width: 100%; }
table.entries { table-layout: fixed; }
th, td { border: 1px solid #ccc; padding: .35em .5em; vertical-align: top; text-align: left;
         overflow-wrap: anywhere; }
th { background: #f0f0f0; position: sticky; top: 0; }
code { font: 12px/1.3 ui-monospace, monospace; word-break: break-all; }
td.drawing svg { width: 100%; height: auto; }
tr.drawing svg { max-width: 100%; height: auto; }
tr.drawing td { border-top: none; }
td.spec { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.explained { color: #17602a; } .not-explained, .failed, .unknown { color: #a15c00; }
.differ { color: #b00020; font-weight: bold; } .same { color: #17602a; }
.small { color: #555; font-size: .9em; }
details summary { cursor: pointer; }
";

/// The page of `survey`: the machine, then one row per black box and
/// dtype with its formula in words, where it changes, the arithmetic, the
/// thread counts, and a drawing (where `draw` and Graphviz allow).
pub fn survey_page(survey: &Survey, draw: bool) -> String {
    let m = &survey.machine;
    let mut out = page_head(&format!("fprev survey: {}", m.cpu));
    let _ = write!(
        out,
        "<h1>fprev survey</h1><p class=small>{} &middot; {} cores &middot; {} &middot; fprev {} \
         &middot; {} entries in {:.0} s</p>",
        esc(&m.cpu),
        m.cores,
        esc(&m.os),
        esc(&m.fprev),
        survey.entries.len(),
        survey.seconds
    );
    out += "<details><summary>machine facts</summary><table>";
    for (fact, value) in m.facts() {
        let _ = write!(
            out,
            "<tr><th>{}</th><td><code>{}</code></td></tr>",
            esc(&fact),
            esc(&value)
        );
    }
    out += "</table></details>";
    if !survey.missing.is_empty() {
        out += "<p class=small>not surveyed: ";
        let list: Vec<String> = survey
            .missing
            .iter()
            .map(|(lib, why)| format!("{} ({})", esc(lib), esc(why)))
            .collect();
        out += &list.join("; ");
        out += "</p>";
    }
    out += "<table class=entries><colgroup><col style='width:13%'><col style='width:5%'>\
            <col style='width:34%'><col style='width:15%'><col style='width:21%'>\
            <col style='width:12%'></colgroup><thead><tr><th>black box</th><th>dtype</th>\
            <th>order</th><th>changes at</th><th>arithmetic</th><th>threads</th></tr></thead>\
            <tbody>";
    for (k, e) in survey.entries.iter().enumerate() {
        let _ = write!(
            out,
            "<tr class=entry><td class=spec><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td></tr>",
            esc(&e.spec),
            esc(&e.dtype),
            order_cell(e),
            changes_cell(e),
            arithmetic_cell(e),
            threads_cell(e),
        );
        if draw {
            // The first drawing open, the others a click away.
            let _ = write!(
                out,
                "<tr class=drawing><td colspan=6>{}</td></tr>",
                drawing(e, k == 0)
            );
        }
    }
    out += "</tbody></table></body></html>\n";
    out
}

fn order_cell(e: &Entry) -> String {
    let status = match e.status {
        Status::Explained => "explained",
        Status::NotExplained => "not-explained",
        Status::NotRevealed => "not revealed",
        Status::Failed => "failed",
    };
    let mut out = format!("<span class={}>{status}</span> ", status.replace(' ', "-"));
    if let (Some(f), Some(s)) = (&e.formula, &e.sentence) {
        let _ = write!(out, "<code>native:{}</code><br>{}", esc(f), esc(s));
    } else if let Some((f, at)) = &e.closest {
        let _ = write!(
            out,
            "<br>closest: <code>native:{}</code>, which fails at n = {at}",
            esc(f)
        );
    }
    if let Some(err) = &e.error {
        let _ = write!(out, "<br><span class=small>{}</span>", esc(err));
    }
    let trees: Vec<usize> = e
        .sizes
        .iter()
        .filter(|s| s.outcome == "tree")
        .map(|s| s.n)
        .collect();
    let _ = write!(
        out,
        "<br><span class=small>revealed and confirmed at n = {} ({} calls, {:.1} s)</span>",
        runs(&trees),
        e.calls,
        e.seconds
    );
    let departures = e.departures();
    if !departures.is_empty() {
        let _ = write!(
            out,
            "<br><span class=differ>the formula does not hold at n = {}</span>",
            runs(&departures)
        );
    }
    out
}

fn changes_cell(e: &Entry) -> String {
    let regimes = e.regimes();
    if regimes.len() < 2 {
        return if e.formula.is_some() {
            "one rule at every size".into()
        } else {
            String::new()
        };
    }
    let mut out: Vec<String> = regimes
        .iter()
        .skip(1)
        .map(|(from, f)| format!("n = {from}: <code>{}</code>", esc(f)))
        .collect();
    for (lo, hi) in &e.uncertain {
        out.push(format!(
            "<span class=small>(a switch lies in {lo}..{hi}, not revealed)</span>"
        ));
    }
    out.join("<br>")
}

/// The models confirmed at each size: all of them when they are few, else
/// the one at the largest size and the rest a click away.
fn arithmetic_cell(e: &Entry) -> String {
    let mut by_model: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for s in &e.sizes {
        let what = match (&s.arithmetic, s.outcome.as_str()) {
            (Some(m), _) => m.to_string(),
            (None, "unconfirmed") => "not plain additions: no model found".into(),
            (None, other) => other.to_string(),
        };
        by_model.entry(what).or_default().push(s.n);
    }
    let lines: Vec<String> = by_model
        .iter()
        .map(|(m, sizes)| format!("{} <span class=small>(n = {})</span>", esc(m), runs(sizes)))
        .collect();
    const FEW: usize = 3;
    let largest = e
        .sizes
        .iter()
        .filter(|s| s.arithmetic.is_some())
        .max_by_key(|s| s.n);
    match largest {
        Some(s) if lines.len() > FEW => format!(
            "{} models, varying with n; at n = {}: {}<details><summary>each model and its \
             sizes</summary>{}</details>",
            lines.len(),
            s.n,
            esc(&s
                .arithmetic
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default()),
            lines.join("<br>")
        ),
        _ => lines.join("<br>"),
    }
}

fn threads_cell(e: &Entry) -> String {
    match &e.threads {
        None => "<span class=small>not varied</span>".into(),
        Some(t) if t.error.is_some() => format!(
            "<span class=small>not compared: {}</span>",
            esc(t.error.as_deref().unwrap_or_default())
        ),
        Some(t) if t.dependent.is_empty() => format!(
            "same tree on {} threads at n = {}",
            t.counts
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            runs(&t.sizes)
        ),
        Some(t) => format!(
            "<span class=differ>depends on the count at n = {}</span><br><span class=small>{}</span>",
            runs(&t.dependent),
            t.detail
                .iter()
                .map(|d| esc(d))
                .collect::<Vec<_>>()
                .join("<br>")
        ),
    }
}

/// The tree at the largest size up to [`DRAWN_UP_TO`] revealed, collapsed
/// past [`crate::render::DRAW_WHOLE`] summands, open or a click away.
fn drawing(e: &Entry, open: bool) -> String {
    let Some(n) = e
        .sizes
        .iter()
        .filter(|s| s.outcome == "tree" && s.n <= DRAWN_UP_TO)
        .map(|s| s.n)
        .max()
    else {
        return String::new();
    };
    let Some(tree) = e.tree_at(n) else {
        return String::new();
    };
    let model = e.model_at(n);
    let caption = Caption {
        black_box: Some(format!("{} {}", e.spec, e.dtype)),
        ..Caption::default()
    };
    let collapsed = if n > crate::render::DRAW_WHOLE {
        ", collapsed: each box a subtree, each shape drawn once at the side"
    } else {
        ""
    };
    format!(
        "<details{}><summary>{} {}: the tree at n = {n}{collapsed}</summary>{}</details>",
        if open { " open" } else { "" },
        esc(&e.spec),
        esc(&e.dtype),
        svg(&tree, model, caption)
    )
}

/// `tree` as inline SVG, or a line saying why there is none.
fn svg(tree: &SummationTree, model: Option<&crate::arith::Arithmetic>, caption: Caption) -> String {
    match Drawing::new(tree).arithmetic(model).caption(caption).svg() {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            // The XML prologue and doctype have no place inside HTML.
            text.find("<svg")
                .map_or_else(String::new, |at| text[at..].to_string())
        }
        Err(e) => format!(
            "<span class=small>no drawing: {}</span>",
            esc(&e.to_string())
        ),
    }
}

/// The page of a comparison of surveys `a` and `b` (named `names`): the
/// machine facts that differ, then each black box with its verdict and
/// why, and for one that differs, both trees at the first size where they
/// part.
pub fn compare_page(
    c: &Comparison,
    a: &Survey,
    b: &Survey,
    names: [&str; 2],
    draw: bool,
) -> String {
    let mut out = page_head("fprev compare");
    let _ = write!(
        out,
        "<h1>fprev compare</h1><p>A: <code>{}</code> ({})<br>B: <code>{}</code> ({})</p>\
         <p><span class=same>{} same</span> &middot; <span class=differ>{} different</span> \
         &middot; <span class=unknown>{} unknown</span></p>",
        esc(names[0]),
        esc(&a.machine.cpu),
        esc(names[1]),
        esc(&b.machine.cpu),
        c.count(Verdict::Same),
        c.count(Verdict::Differ),
        c.count(Verdict::Unknown)
    );
    out += "<h2>machine facts that differ</h2><table><tr><th>fact</th><th>A</th><th>B</th></tr>";
    for (fact, x, y) in &c.machine {
        let _ = write!(
            out,
            "<tr><td>{}</td><td><code>{}</code></td><td><code>{}</code></td></tr>",
            esc(fact),
            esc(x),
            esc(y)
        );
    }
    out += "</table><h2>black boxes</h2><table class=entries><colgroup>\
            <col style='width:12%'><col style='width:5%'><col style='width:7%'>\
            <col style='width:36%'><col style='width:20%'><col style='width:20%'></colgroup>\
            <thead><tr><th>black box</th><th>dtype</th><th>verdict</th><th>why</th><th>A</th>\
            <th>B</th></tr></thead><tbody>";
    for e in &c.entries {
        let class = match e.verdict {
            Verdict::Same => "same",
            Verdict::Differ => "differ",
            Verdict::Unknown => "unknown",
        };
        let mut why = esc(&e.reason);
        // The facts behind a difference; a black box whose bits held
        // needs none.
        let suspects = e.suspects.iter().filter(|_| e.verdict != Verdict::Same);
        for extra in e.threads.iter().chain(suspects) {
            let _ = write!(why, "<br><span class=small>{}</span>", esc(extra));
        }
        let drawings = match (e.first_differing, draw && e.verdict == Verdict::Differ) {
            (Some(n), true) => [a, b].map(|s| {
                let entry = s.entry(&e.spec, &e.dtype);
                let tree = entry.and_then(|x| x.tree_at(n));
                let model = entry.and_then(|x| x.model_at(n));
                tree.map_or_else(String::new, |t| {
                    format!(
                        "<details><summary>n = {n}</summary>{}</details>",
                        svg(&t, model, Caption::default())
                    )
                })
            }),
            _ => [String::new(), String::new()],
        };
        let _ = write!(
            out,
            "<tr><td class=spec><code>{}</code></td><td>{}</td><td class={class}>{class}</td><td>{why}</td>\
             <td class=drawing>{}</td><td class=drawing>{}</td></tr>",
            esc(&e.spec),
            esc(&e.dtype),
            drawings[0],
            drawings[1]
        );
    }
    out += "</tbody></table>";
    for (side, list) in [("A", &c.only_a), ("B", &c.only_b)] {
        if !list.is_empty() {
            let _ = write!(
                out,
                "<p class=small>surveyed by {side} only: {}</p>",
                esc(&list.join(", "))
            );
        }
    }
    out += "</body></html>\n";
    out
}

fn page_head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>{}</title>\
         <style>{STYLE}</style></head><body>",
        esc(title)
    )
}

/// `s` with HTML's special characters escaped.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
