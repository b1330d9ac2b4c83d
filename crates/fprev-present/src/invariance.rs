//! An invariance study in text (`fprev invariance`'s output and
//! `fprev.Study`'s `str`): its cost, each distinct outcome with its
//! formula, the batch regimes of each output, where neighbouring regimes
//! part, and the verdict with what to pin.

use std::collections::{BTreeMap, HashMap};

use fprev::invariance::{
    Between, Observed, POSITION, PROCESS, Parting, Run, Setting, Study, Varying, Words, formula_of,
};
use fprev::sizes::runs;

/// The study file (`fprev invariance --format json`, `fprev.Study`'s
/// `to_json`): what has no tree in this crate's words
/// ([`note::order_independent`](crate::note::order_independent),
/// [`note::variation`](crate::note::variation)).
pub fn json(study: &Study) -> String {
    study.to_json(&Words {
        order_independent: &crate::note::order_independent,
        variation: &crate::note::variation,
    })
}

/// The line as the fresh process of `setting` starts, after `done` of
/// `total` ([`Observer::process`](fprev::workflow::Observer::process)).
///
/// ```
/// use fprev::invariance::Setting;
///
/// let s = Setting(vec![("DUMMY".into(), "1".into())]);
/// assert_eq!(fprev_present::invariance::process(&s, 0, 2), "[1/2] DUMMY=1");
/// ```
pub fn process(setting: &Setting, done: usize, total: usize) -> String {
    format!("[{}/{total}] {setting}", done + 1)
}

/// The heading of a study of `label` (the black box): its size, `n`
/// summands or a product's `K` and `N` where a shape `M,N,K` is given.
///
/// ```
/// use fprev_present::invariance::title;
///
/// assert_eq!(title("numpy:gemm", 1000, Some([64, 64, 1000])), "numpy:gemm, K = 1000, N = 64");
/// assert_eq!(title("numpy:sum", 1000, None), "numpy:sum, n = 1000");
/// assert_eq!(title("mpi:allreduce", 24, Some([64, 1, 24])), "mpi:allreduce, n = 24");
/// ```
pub fn title(label: &str, n: usize, shape: Option<[usize; 3]>) -> String {
    match shape {
        // An MPI vector's elements are its batch; each sums all n.
        Some([_, _, k]) if label.starts_with("mpi:") => format!("{label}, n = {k}"),
        Some([_, cols, k]) => format!("{label}, K = {k}, N = {cols}"),
        None => format!("{label}, n = {n}"),
    }
}

/// What `fprev invariance` prints, under the heading `title` (the black
/// box and its size).
pub fn text(study: &Study, title: &str) -> String {
    let groups = study.groups();
    let group_of = study.group_of();
    let proven = study.cases.iter().filter(|c| c.proven).count();
    let (calls, seconds) = study.cost();
    let mut s = format!(
        "invariance: {title}: {} cases ({proven} proven from a neighbour's tree, {} revealed), \
         {calls} calls, {seconds:.2} s of reveals\n",
        study.cases.len(),
        study.cases.len() - proven,
    );
    s += &format!("{} distinct outcomes:\n", groups.len());
    for (g, members) in groups.iter().enumerate() {
        s += &format!(
            "  [{}] {} ({} case{})\n",
            letter(g),
            outcome(&study.cases[members[0]].observed),
            members.len(),
            if members.len() == 1 { "" } else { "s" }
        );
    }
    // Cases that all failed have no regimes and no partings to show.
    if study
        .cases
        .iter()
        .all(|c| matches!(c.observed, Observed::Failed(_)))
    {
        return s + &verdict(study, title.starts_with("mpi:"));
    }
    let regimes = study.regimes("batch");
    if regimes.is_empty() {
        s += "cases:\n";
        for (i, c) in study.cases.iter().enumerate() {
            s += &format!("  [{}] {}\n", letter(group_of[i]), c.setting);
        }
    } else {
        // An MPI vector's batch is its count of elements, each an output.
        let (heading, m) = match title.starts_with("mpi:") {
            true => (
                "message sizes (elements of the vector) of each element",
                "count",
            ),
            false => ("batch regimes (M) of each output", "M"),
        };
        s += &format!("{heading}:\n");
        let mut patterns: Vec<(String, Vec<&Setting>)> = Vec::new();
        for r in &regimes {
            let words: Vec<String> = r
                .runs
                .iter()
                .map(|run| format!("{} at {m} = {}", letter(run.group), span(run)))
                .collect();
            let pattern = words.join(" · ");
            match patterns.iter_mut().find(|(p, _)| *p == pattern) {
                Some((_, rests)) => rests.push(&r.rest),
                None => patterns.push((pattern, vec![&r.rest])),
            }
        }
        for (pattern, rests) in &patterns {
            s += &format!("  {}: {pattern}\n", outputs(rests));
        }
    }
    s += &partings(study, &group_of);
    s += &verdict(study, title.starts_with("mpi:"));
    s
}

/// The values of a run: every one (`2..4,9`), or where a bisection left
/// many, the first and last with how many were revealed (`1 to 511, 10
/// revealed`): the sizes between were not all revealed.
fn span(run: &Run) -> String {
    let all = run.span();
    match (run.values.first(), run.values.last()) {
        (Some(first), Some(last)) if run.values.len() > 4 && all.matches(',').count() > 3 => {
            format!("{first} to {last}, {} revealed", run.values.len())
        }
        _ => all,
    }
}

/// `A`, `B`, … for the groups.
fn letter(g: usize) -> String {
    let l = char::from(b'A' + (g % 26) as u8);
    match g / 26 {
        0 => l.to_string(),
        k => format!("{l}{k}"),
    }
}

/// One outcome in words: the order's formula at this size and the
/// arithmetic, or why there is none.
fn outcome(o: &Observed) -> String {
    match o {
        Observed::Order(doc) => {
            let order = match formula_of(doc.tree()) {
                Some(f) => format!("native:{f}"),
                None => format!(
                    "a tree of depth {} (no formula found from this one tree)",
                    doc.tree().depth()
                ),
            };
            match (&doc.arithmetic, o.replayed()) {
                (_, false) => format!("{order}; not replayed, so not confirmed"),
                (Some(model), true) => format!("{order}; arithmetic {model}"),
                (None, true) => {
                    format!("{order}; arithmetic not modelled (plain additions replay it)")
                }
            }
        }
        Observed::Unconfirmed(_) => "a tree its replay did not confirm".into(),
        Observed::OrderIndependent(why) => {
            format!("order-independent: {}", crate::note::order_independent(why))
        }
        Observed::Varies(Varying::Measured(v)) => {
            format!("varies from call to call ({})", crate::note::variation(v))
        }
        Observed::Varies(Varying::Recorded(why)) => format!("varies from call to call ({why})"),
        Observed::Failed(why) => format!("failed: {why}"),
    }
}

/// The outputs `rests` name, columns written as runs: `row=first
/// column=0..15,32,63; row=last column=0`.
fn outputs(rests: &[&Setting]) -> String {
    let mut by_rest: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for r in rests {
        let key = r.without("column").to_string();
        let columns = by_rest.entry(key.clone()).or_default();
        if columns.is_empty() {
            order.push(key);
        }
        if let Some(c) = r.value("column").and_then(|c| c.parse().ok()) {
            columns.push(c);
        }
    }
    let words: Vec<String> = order
        .iter()
        .map(|key| {
            let mut columns = by_rest[key].clone();
            columns.sort_unstable();
            let column = match columns.is_empty() {
                true => String::new(),
                false => format!("column={}", runs(&columns)),
            };
            match (key.is_empty(), column.is_empty()) {
                (true, true) => "every output".to_string(),
                (true, false) => column,
                (false, true) => key.clone(),
                (false, false) => format!("{key} {column}"),
            }
        })
        .collect();
    words.join("; ")
}

/// Where each pair of neighbouring outcomes first met parts.
fn partings(study: &Study, group_of: &[usize]) -> String {
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut out = String::new();
    let mut say = |a: usize, b: usize, along: String| {
        let key = (group_of[a].min(group_of[b]), group_of[a].max(group_of[b]));
        if group_of[a] == group_of[b] || pairs.contains(&key) {
            return;
        }
        pairs.push(key);
        let (la, lb) = (letter(group_of[a]), letter(group_of[b]));
        let how = match study.parting(a, b) {
            Parting::Order([x, y]) => {
                let side = |l: &str, t: Option<String>| match t {
                    Some(t) => format!("{l} adds {t}"),
                    None => format!("{l} has every node of the other"),
                };
                format!("the trees part: {}; {}", side(&la, x), side(&lb, y))
            }
            Parting::Arithmetic(how) => format!("same order; the arithmetic parts: {how}"),
            Parting::Unknown => "no two confirmed orders to compare".into(),
        };
        out += &format!("  {la} → {lb} ({along}): {how}\n");
    };
    let regimes = study.regimes("batch");
    if regimes.is_empty() {
        for i in 1..study.cases.len() {
            say(
                i - 1,
                i,
                format!(
                    "{} → {}",
                    study.cases[i - 1].setting,
                    study.cases[i].setting
                ),
            );
        }
    } else {
        for r in &regimes {
            for w in r.runs.windows(2) {
                let along = format!(
                    "{}M = {} → {}",
                    if r.rest.0.is_empty() {
                        String::new()
                    } else {
                        format!("{}, ", r.rest)
                    },
                    w[0].values.last().map_or("", String::as_str),
                    w[1].values[0]
                );
                say(w[0].case, w[1].case, along);
            }
        }
        // Outcomes that part along another knob (a thread count, an
        // environment variable) at one batch size and position.
        for knob in study.knobs().into_iter().filter(|k| *k != "batch") {
            let mut first_of: HashMap<Setting, usize> = HashMap::new();
            for (i, c) in study.cases.iter().enumerate() {
                let rest = c.setting.without(knob);
                let first = *first_of.entry(rest.clone()).or_insert(i);
                let value = |case: usize| study.cases[case].setting.value(knob).unwrap_or("");
                let along = format!("{knob}: {} → {}, at {rest}", value(first), value(i));
                say(first, i, along);
            }
        }
    }
    match out.is_empty() {
        true => out,
        false => format!("where neighbouring outcomes part:\n{out}"),
    }
}

/// The verdict and the recipe; `mpi`: the outputs are an MPI vector's
/// elements.
fn verdict(study: &Study, mpi: bool) -> String {
    let v = study.verdict();
    let n = study.cases.len();
    if v.invariant
        && v.modelled == 0
        && study.cases.iter().all(|c| c.observed.confirmed().is_none())
    {
        return "invariant: every case found the bits independent of the order\n".to_string();
    }
    if v.invariant && v.replayed < n {
        return format!(
            "invariant in order: every case gave the same order; no claim of its arithmetic: \
             {} of {n} cases were not confirmed by replay (none was asked)\n",
            n - v.replayed
        );
    }
    if v.invariant {
        return match v.modelled == n {
            true => "invariant: every case gave the same order and arithmetic, confirmed by \
                     replay\n"
                .to_string(),
            false => format!(
                "invariant in order: every case gave the same order, confirmed by replay; the \
                 arithmetic was modelled at {} of {n} cases and compared between those\n",
                v.modelled
            ),
        };
    }
    if v.failed == n {
        return format!("no finding: every one of the {n} cases failed\n");
    }
    let varying = match v.varying.is_empty() {
        true => String::new(),
        false => format!(
            "the order varies between repeats of one setting ({}): no knob can be blamed for \
             it\n",
            varying(&v.varying)
        ),
    };
    let mut s = match (v.changing.is_empty(), varying.is_empty()) {
        (true, true) => "not invariant: the cases do not all give one confirmed order\n".into(),
        (true, false) => format!("not invariant: {varying}"),
        (false, _) => format!(
            "not invariant: changing {} alone changes the order or its arithmetic\n{varying}",
            v.changing.join(" or ")
        ),
    };
    let position: Vec<&str> = v
        .changing
        .iter()
        .map(String::as_str)
        .filter(|k| *k == "row" || *k == "column")
        .collect();
    if !position.is_empty() && mpi {
        s += "what is computed depends on the element of the vector (its row): elements are \
              summed in different orders\n";
    } else if !position.is_empty() {
        s += &format!(
            "what is computed depends on where the output falls in the product: its {}\n",
            position.join(" and ")
        );
    }
    if study.knobs().contains(&"batch") {
        let regimes = study.regimes("batch");
        let moving = regimes.iter().filter(|r| r.runs.len() > 1).count();
        if moving > 0 {
            s += &format!(
                "not batch-invariant: {moving} of {} outputs change their order or arithmetic \
                 with M\n",
                regimes.len()
            );
        }
        let settings = study
            .knobs()
            .iter()
            .any(|k| !POSITION.contains(k) && *k != PROCESS);
        match (v.batch_invariant_under.as_slice(), settings) {
            ([], true) => s += "no setting tried makes it batch-invariant\n",
            (under, true) => {
                let words: Vec<String> = under.iter().map(Setting::to_string).collect();
                s += &format!(
                    "batch-invariant with {}: then every output has one order at every batch \
                     size tried\n",
                    words.join(", or with ")
                );
            }
            _ => {}
        }
    }
    let settings_changing = v.changing.iter().any(|k| !POSITION.contains(&k.as_str()));
    if settings_changing {
        s += &match &v.pin {
            Some(pins) => format!(
                "pin {}: with {} fixed, each output has one order whatever the other settings \
                 tried\n",
                pins.join(" and "),
                if pins.len() == 1 { "it" } else { "them" }
            ),
            None => "no knob tried, pinned, makes the order the same across the others\n".into(),
        };
    }
    if v.failed > 0 {
        s += &format!("{} cases failed: no claim rests on them\n", v.failed);
    }
    s
}

/// The settings whose order varied, by what it varied between: `between
/// calls at threads=2; between fresh processes at DUMMY=1, DUMMY=2`.
fn varying(settings: &[(Setting, Between)]) -> String {
    let at = |between: Between| -> Vec<String> {
        settings
            .iter()
            .filter(|(_, b)| *b == between)
            .map(|(s, _)| match s.0.is_empty() {
                true => "the one setting".to_string(),
                false => s.to_string(),
            })
            .collect()
    };
    [
        (Between::Calls, "between calls"),
        (Between::Processes, "between fresh processes"),
    ]
    .into_iter()
    .filter_map(|(b, words)| {
        let at = at(b);
        (!at.is_empty()).then(|| format!("{words} at {}", at.join(", ")))
    })
    .collect::<Vec<_>>()
    .join("; ")
}
