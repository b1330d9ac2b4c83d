//! `fprev invariance`: reveal one black box under each combination of
//! settings, each in a fresh `fprev reveal` process (a library reads its
//! environment when it loads), and say which knobs change its order.

use std::process::Command;

use fprev::document::TreeDocument;
use fprev::error::{Error, Result};
use fprev::invariance::{Knob, Observed, Setting, Study, settings};

use crate::args::InvarianceArgs;
use crate::write;

/// Runs `fprev invariance`: 0 when every setting gave the same confirmed
/// order, 1 when a knob changed it (or a setting gave no confirmed order),
/// 3 when a reveal failed.
pub(super) fn run(a: InvarianceArgs) -> Result<i32> {
    let knobs = knobs(&a)?;
    if knobs.is_empty() {
        return Err(Error::Input(
            "nothing varies: give --threads T,T,…, --columns J,J,… or --env NAME=V1,V2,…".into(),
        ));
    }
    let settings = settings(&knobs)?;
    let exe = std::env::current_exe()
        .map_err(|e| Error::Input(format!("cannot find the fprev binary to rerun: {e}")))?;
    let mut observed = Vec::with_capacity(settings.len());
    for (k, s) in settings.iter().enumerate() {
        eprintln!("fprev: [{}/{}] {s}", k + 1, settings.len());
        observed.push(reveal_under(&exe, &a, s)?);
    }
    let study = Study::new(settings, observed);
    write::print(say(&a, &study).as_bytes())?;
    let failed = study
        .observed
        .iter()
        .any(|o| matches!(o, Observed::Failed(_)));
    Ok(match (failed, study.invariant()) {
        (true, _) => 3,
        (false, true) => 0,
        (false, false) => 1,
    })
}

/// The knobs `--threads`, `--batch`, `--rows`, `--columns` and `--env`
/// name, in that order.
fn knobs(a: &InvarianceArgs) -> Result<Vec<Knob>> {
    if !a.batch.is_empty() && a.shape.is_none() {
        return Err(Error::Input(
            "--batch varies M of --shape M,N,K: give --shape (N and K stay)".into(),
        ));
    }
    let mut knobs = Vec::new();
    listed(&mut knobs, "threads", &a.threads)?;
    listed(&mut knobs, "batch", &a.batch)?;
    listed(&mut knobs, "row", &a.rows)?;
    listed(&mut knobs, "column", &a.columns)?;
    for given in &a.env {
        let Some((name, values)) = given.split_once('=') else {
            return Err(Error::Input(format!(
                "--env {given}: give NAME=V1,V2,… (unset for not set)"
            )));
        };
        let values: Vec<&str> = values.split(',').map(str::trim).collect();
        knobs.push(Knob::new(name.trim(), &values)?);
    }
    Ok(knobs)
}

/// Adds knob `name` of `values`, where a flag gave any.
fn listed<T: ToString>(knobs: &mut Vec<Knob>, name: &str, values: &[T]) -> Result<()> {
    if values.is_empty() {
        return Ok(());
    }
    let values: Vec<String> = values.iter().map(T::to_string).collect();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    knobs.push(Knob::new(name, &values)?);
    Ok(())
}

/// `fprev reveal` of `a`'s black box under `s`, in a process of its own.
fn reveal_under(exe: &std::path::Path, a: &InvarianceArgs, s: &Setting) -> Result<Observed> {
    let mut cmd = Command::new(exe);
    cmd.arg("reveal")
        .arg(a.spec.as_str())
        .args(["-n", &a.n.to_string(), "--format", "json", "--no-skeleton"])
        .args(["--confirm", &a.confirm.to_string()]);
    if let Some(d) = a.format.dtype {
        cmd.args(["--dtype", &d.to_string()]);
    }
    if let Some(acc) = a.format.acc {
        cmd.args(["--acc", &acc.to_string()]);
    }
    if let Some([m, n, k]) = a.shape {
        let m: usize = s.value("batch").and_then(|b| b.parse().ok()).unwrap_or(m);
        cmd.args(["--shape", &format!("{m},{n},{k}")]);
        let row = match s.value("row") {
            Some("middle") => m / 2,
            Some("last") => m - 1,
            _ => 0,
        };
        cmd.args(["--row", &row.to_string()]);
    }
    if let Some(t) = a.guard.timeout {
        cmd.args(["--timeout", &t.to_string()]);
    }
    for (name, value) in &s.0 {
        match (name.as_str(), value.as_str()) {
            ("threads", t) => {
                cmd.args(["--threads", t]);
            }
            ("column", j) => {
                cmd.args(["--column", j]);
            }
            // Set with --shape above.
            ("batch", _) | ("row", _) => {}
            (var, "unset") => {
                cmd.env_remove(var);
            }
            (var, v) => {
                cmd.env(var, v);
            }
        }
    }
    let out = cmd
        .output()
        .map_err(|e| Error::Input(format!("cannot run {}: {e}", exe.display())))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = |text: &str| text.lines().last().unwrap_or("").to_string();
    let document = || TreeDocument::parse(&stdout);
    Ok(match out.status.code() {
        Some(0) => Observed::Order(document()?),
        Some(5) => Observed::Unconfirmed(document()?),
        Some(6) => Observed::Varies(last(&stderr)),
        _ => Observed::Failed(last(&stderr)),
    })
}

/// The report: each setting with its group's letter, then the verdict
/// and what to pin.
fn say(a: &InvarianceArgs, study: &Study) -> String {
    let groups = study.groups();
    let letter = |g: usize| char::from(b'A' + (g % 26) as u8);
    let mut s = format!(
        "invariance: {}, n = {}: {} settings, {} distinct outcomes\n",
        a.spec,
        a.n,
        study.settings.len(),
        groups.len()
    );
    let group_of = study.group_of();
    for (i, (setting, o)) in study.settings.iter().zip(&study.observed).enumerate() {
        let what = match o {
            Observed::Order(doc) => {
                let order = match fprev::shape::Shape::of(&doc.tree).order {
                    Some(order) => format!("native:{order}"),
                    None => format!("a tree of depth {}", doc.tree.depth()),
                };
                match &doc.arithmetic {
                    Some(model) => format!("{order}; arithmetic {model}"),
                    None => order,
                }
            }
            Observed::Unconfirmed(_) => "a tree its replay did not confirm".into(),
            Observed::Varies(why) => format!("varies from call to call ({why})"),
            Observed::Failed(why) => format!("failed: {why}"),
        };
        s += &format!("  [{}] {setting}: {what}\n", letter(group_of[i]));
    }
    if study.invariant() {
        let modelled = study
            .observed
            .iter()
            .filter(|o| matches!(o, Observed::Order(d) if d.arithmetic.is_some()))
            .count();
        s += &match modelled == study.observed.len() {
            true => "invariant: every setting tried gave the same order and arithmetic, \
                     confirmed by replay\n"
                .to_string(),
            false => format!(
                "invariant in order: every setting tried gave the same order, confirmed by \
                 replay; the arithmetic was found at {modelled} of {} settings (a row other \
                 than 0 is replayed in plain additions) and compared between those only\n",
                study.observed.len()
            ),
        };
        return s;
    }
    let changing = study.changing_knobs();
    if !changing.is_empty() {
        s += &format!(
            "not invariant: changing {} alone changes the order or its arithmetic\n",
            changing.join(" or ")
        );
    } else {
        s += "not invariant: the settings do not all give one confirmed order\n";
    }
    if changing == ["column"] {
        s += "what is computed depends on where the output falls in the product: its column\n";
    } else if !changing.is_empty() && study.pinned_by(&changing) {
        s += &format!(
            "pin {}: with {} fixed, the other settings tried give one order each\n",
            changing.join(" and "),
            if changing.len() == 1 { "it" } else { "them" }
        );
    } else {
        s += "no knob tried, pinned, makes the order the same across the others\n";
    }
    s
}
