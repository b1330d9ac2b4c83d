//! A comparison of two surveys in text (`fprev compare`'s output): the
//! machine facts that differ, each black box's verdict and why (a knob set
//! otherwise that changes it, or else the facts that bear on it), and the
//! counts.

use fprev::survey::compare::{Comparison, Verdict, change};

/// What `fprev compare` prints for people, with `a` and `b` naming the
/// surveys.
pub fn text(c: &Comparison, a: &str, b: &str) -> String {
    let mut out = format!("A: {a}\nB: {b}\n");
    if c.machine.is_empty() {
        out += "the machines' recorded facts are the same\n";
    } else {
        out += "the machines differ in:\n";
        for (fact, x, y) in &c.machine {
            out += &format!("  {}\n", change(fact, x, y));
        }
    }
    out += "\n";
    for e in &c.entries {
        let word = match e.verdict {
            Verdict::Same => "same",
            Verdict::Differ => "DIFFERENT",
            Verdict::Unknown => "UNKNOWN",
            Verdict::Varies => "VARIES",
        };
        out += &format!("{} {}: {word}: {}\n", e.spec, e.dtype, e.reason);
        if let (Some([x, y]), Some(_)) = (&e.subtree, &e.rule) {
            out += &format!(
                "    at n = {}: A has {x}, B has {y}\n",
                e.first_differing.unwrap_or(0)
            );
        }
        if let Some(t) = &e.threads {
            out += &format!("    {t}\n");
        }
        for k in &e.knobs {
            out += &format!("    {}\n", k.note);
        }
        let why = e.likely_why();
        if !why.is_empty() {
            out += &format!("    likely why: {}\n", why.join("; "));
        }
    }
    for (side, list) in [("A", &c.only_a), ("B", &c.only_b)] {
        if !list.is_empty() {
            out += &format!(
                "surveyed by {side} only (not compared): {}\n",
                list.join(", ")
            );
        }
    }
    out += &format!(
        "\n{} same, {} different, {} unknown",
        c.count(Verdict::Same),
        c.count(Verdict::Differ),
        c.count(Verdict::Unknown)
    );
    match c.count(Verdict::Varies) {
        0 => out += "\n",
        k => out += &format!(", {k} varying from call to call\n"),
    }
    out
}
