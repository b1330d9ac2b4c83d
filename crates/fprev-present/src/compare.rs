//! A comparison of two surveys in text (`fprev compare`'s output): the
//! machine facts that differ, each black box's verdict and why (a knob set
//! otherwise that changes it, or else the facts that bear on it), and the
//! counts.

use fprev::workflow::survey::compare::{Agreement, Comparison, GpuChange, change};
use fprev::workflow::survey::gpu::{Arithmetic, Aspect};

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
            Agreement::Same => "same",
            Agreement::Differ => "DIFFERENT",
            Agreement::Unknown => "UNKNOWN",
            Agreement::Varies => "VARIES",
        };
        let against = e
            .spec_b
            .as_ref()
            .map_or(String::new(), |b| format!(" against {b}"));
        out += &format!("{} {}{against}: {word}: {}\n", e.spec, e.dtype, e.reason);
        if let Some(g) = &e.gpu {
            out += &format!("    {}\n", gpu_change(g));
        }
        if let (Some([x, y]), Some(_)) = (&e.subtree, &e.rule) {
            out += &format!(
                "    at n = {}: A has {x}, B has {y}\n",
                e.subtree_at.or(e.first_differing).unwrap_or(0)
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
        c.count(Agreement::Same),
        c.count(Agreement::Differ),
        c.count(Agreement::Unknown)
    );
    match c.count(Agreement::Varies) {
        0 => out += "\n",
        k => out += &format!(", {k} varying from call to call\n"),
    }
    out
}

/// Whether results change between two GPUs' instructions of one kind, and
/// why: each aspect of their arithmetic that differs as `A → B`, the
/// others as the same in both; where either has no confirmed model, that
/// it cannot be told.
pub fn gpu_change(g: &GpuChange) -> String {
    let (inputs, output) = &g.types;
    let head = format!("{inputs} inputs into {output}");
    let (a, b) = match (&g.a, &g.b) {
        (Some(a), Some(b)) => (a, b),
        (a, b) => {
            let side = match (a, b) {
                (None, None) => "either's",
                (None, _) => "A's",
                _ => "B's",
            };
            return format!(
                "{head}: arithmetic not compared: no model of {side} was confirmed (not \
                 modelled)"
            );
        }
    };
    let mut changed = Vec::new();
    let mut same = Vec::new();
    // A fused step's window and alignment, where either fuses.
    let fused = a.fused_bits.is_some() || b.fused_bits.is_some();
    for aspect in [
        Aspect::Products,
        Aspect::FusedBits,
        Aspect::Rounding,
        Aspect::Output,
        Aspect::Alignment,
    ] {
        if !fused && matches!(aspect, Aspect::FusedBits | Aspect::Alignment) {
            continue;
        }
        let words = aspect_words(aspect, a, b);
        if g.changed.contains(&aspect) {
            changed.push(words);
        } else {
            same.push(words);
        }
    }
    let verdict = match changed.is_empty() {
        true => "results do not change: the same arithmetic".to_string(),
        false => format!("results change: {}", changed.join(", ")),
    };
    match same.is_empty() {
        true => format!("{head}: {verdict}"),
        false => format!("{head}: {verdict}; {}", same.join(", ")),
    }
}

/// One aspect of two instructions' arithmetic in words: `A → B` where they
/// differ, `X in both` where not.
fn aspect_words(aspect: Aspect, a: &Arithmetic, b: &Arithmetic) -> String {
    let both = |x: String, y: String, what: &str| match x == y {
        true => format!("{what} {x} in both"),
        false => format!("{what} {x} → {y}"),
    };
    match aspect {
        Aspect::Products => both(
            a.products.to_string(),
            b.products.to_string(),
            "products a step",
        ),
        Aspect::FusedBits => {
            let bits = |x: &Arithmetic| {
                x.fused_bits
                    .map_or("none (not fused)".into(), |f| f.to_string())
            };
            both(bits(a), bits(b), "bits kept")
        }
        Aspect::Rounding => both(
            a.rounding.name().replace('-', " "),
            b.rounding.name().replace('-', " "),
            "output rounding",
        ),
        Aspect::Output => both(a.output.to_string(), b.output.to_string(), "result in"),
        Aspect::Alignment => {
            let at = |x: &Arithmetic| match &x.aligns_factors {
                Some(f) => format!("at their {f} factors' exponents"),
                None => "at their own leading bits".into(),
            };
            both(at(a), at(b), "products aligned")
        }
    }
}
