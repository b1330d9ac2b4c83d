//! `fprev survey`: every black box of this machine, each op and dtype,
//! explained, saved after each one, and drawn as a page.

use std::path::Path;

use fprev::Spec;
use fprev::error::{Error, Result};
use fprev::sizes::Sizes;
use fprev::workflow::survey::{self, KnobTrial, Scope, Status, Step, Survey};
use fprev_present::check::entry_check;
use fprev_present::html;

use super::invariance::{self, Subject};
use super::open_guarded;
use crate::args::SurveyArgs;
use crate::write::{self, write_out};

/// Runs `fprev survey`: 0 when every entry was surveyed, 3 when some
/// failed (recorded; running again retries them).
pub(super) fn run(a: SurveyArgs) -> Result<i32> {
    a.guard.start();
    let ranks = a.mpi.ranks.map(usize::from);
    if ranks.is_some() && a.knobs {
        return Err(Error::Input(
            "--knobs tries each setting in a process of its own, which an MPI job's rank cannot \
             start: survey with --ranks and no --knobs, and study MPI's algorithm variables with \
             `fprev invariance SPEC --ranks P --env VARIABLE=V1,V2`"
                .into(),
        ));
    }
    if a.gpu.is_some() && (ranks.is_some() || !a.threads.is_empty()) {
        return Err(Error::Input(
            "--gpu surveys simulated instructions, which run on no MPI ranks and no threads: \
             leave out --ranks and --threads"
                .into(),
        ));
    }
    #[cfg(feature = "mpi")]
    one_algorithm(&a.specs)?;
    let ops: Vec<&str> = a.ops.iter().map(String::as_str).collect();
    // A GPU's plan names its own black boxes ([`gpu_plan`]).
    let (black_boxes, libraries, missing) = if a.gpu.is_some() {
        (Vec::new(), LibraryFacts::new(), Vec::new())
    } else if a.specs.is_empty() {
        let found = survey::libraries(&ops, &a.only, ranks)?;
        let black_boxes = found
            .found
            .iter()
            .flat_map(|l| l.black_boxes.clone())
            .collect();
        let libraries = found
            .found
            .into_iter()
            .map(|l| (l.label, l.facts))
            .collect();
        (black_boxes, libraries, found.missing)
    } else {
        let mut labels: Vec<String> = a.specs.iter().map(Spec::label).collect();
        labels.sort();
        labels.dedup();
        let libraries = labels
            .into_iter()
            .map(|l| {
                let facts = survey::facts_of(&l);
                (l, facts)
            })
            .collect();
        let black_boxes = a.specs.iter().map(Spec::to_string).collect();
        (black_boxes, libraries, Vec::new())
    };
    let threads = match (a.no_threads, a.threads.is_empty()) {
        (true, _) => Vec::new(),
        (false, true) => Scope::default().threads,
        (false, false) => a.threads.iter().map(|&t| usize::from(t)).collect(),
    };
    let dtypes = match a.dtypes.is_empty() {
        true => Scope::default().dtypes,
        false => a.dtypes.clone(),
    };
    let plan = Scope {
        black_boxes,
        dtypes,
        sizes: a.sizes.clone().unwrap_or_else(|| Scope::default().sizes),
        large: if a.no_large {
            Sizes(Vec::new())
        } else {
            a.large.clone()
        },
        shape: a.shape,
        threads,
        thread_sizes: a.thread_sizes.clone(),
        runs: a.runs,
        knobs: a.knobs,
        ranks,
        gpu: None,
        check: 0,
    };
    let (plan, libraries) = match &a.gpu {
        Some(arch) => gpu_plan(arch, &a, plan)?,
        None => (plan, libraries),
    };
    let mut s = Survey::new(plan);
    s.machine.libraries = libraries;
    s.missing = missing;
    s.preflight(&a.specs, &mut open_guarded)?;
    let _lock = lock(&a.output)?;
    let json = a.output.join("survey.json");
    if json.exists() && !a.fresh {
        resume(&mut s, &json)?;
    }
    let mut save = |s: &Survey| {
        let text = s.to_json(&fprev_present::formula::sentence);
        write_out(format!("{text}\n").as_bytes(), Some(&json))
    };
    s.run(&mut open_guarded, &mut progress, &mut save)?;
    s.run_knobs(&mut |t| knob_study(t, &a), &mut progress, &mut save)?;
    let page = a.output.join("index.html");
    write_out(html::survey_page(&s, !a.no_draw).as_bytes(), Some(&page))?;
    for e in &s.entries {
        write::println(format_args!("{:<22} {:<4} {}", e.spec, e.dtype, summary(e)))?;
    }
    write::println(format_args!(
        "# {} entries in {:.0} s: {} and {}",
        s.entries.len(),
        s.seconds,
        json.display(),
        page.display()
    ))?;
    let failed = s
        .entries
        .iter()
        .filter(|e| e.status == Status::Failed)
        .count();
    if failed > 0 && s.scope.gpu.is_some() {
        // A simulated instruction fails alike on every run: fprev cannot
        // probe it (its error says why).
        eprintln!(
            "fprev: {failed} instruction(s) could not be surveyed: their error says what fprev \
             cannot probe"
        );
        return Ok(3);
    }
    if failed > 0 {
        eprintln!(
            "fprev: {failed} black box(es) could not be surveyed (see their error); run the same \
             command again to retry them"
        );
        return Ok(3);
    }
    Ok(0)
}

/// The plan of `fprev survey --gpu ARCH`: its instructions (in the dtypes
/// given, if any) at the sizes given or the GPU's, the other settings as
/// `plan` has them; the simulator's facts, and the architecture, as the
/// survey's library, so that a survey of another one resumed here is
/// refused and `compare` names the architectures.
fn gpu_plan(arch: &str, a: &SurveyArgs, plan: Scope) -> Result<(Scope, LibraryFacts)> {
    let dtypes = (!a.dtypes.is_empty()).then_some(a.dtypes.as_slice());
    let gpu = survey::gpu::scope(arch, dtypes)?;
    let mut facts = survey::facts_of("mma");
    facts.insert("architecture".into(), arch.into());
    let plan = Scope {
        sizes: a.sizes.clone().unwrap_or(gpu.sizes.clone()),
        runs: plan.runs,
        ..gpu
    };
    Ok((plan, [("mma".to_string(), facts)].into()))
}

type LibraryFacts = std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>;

/// Refuses `mpi:allreduce` specs of more than one algorithm (the
/// library's own choice counting as one): an MPI job runs the one its
/// environment chose as it started, so the others would be surveyed under
/// a name they do not run.
#[cfg(feature = "mpi")]
fn one_algorithm(specs: &[Spec]) -> Result<()> {
    let mut chosen = Vec::new();
    for rest in specs.iter().filter_map(|s| s.as_str().strip_prefix("mpi:")) {
        let (what, algorithm) = fprev::mpi::algorithm::split(rest)?;
        if what.starts_with("allreduce") && !chosen.contains(&algorithm) {
            chosen.push(algorithm);
        }
    }
    if chosen.len() > 1 {
        return Err(Error::Input(
            "the --spec list names mpi:allreduce with more than one algorithm, but an MPI job \
             runs the one chosen as it starts: survey each algorithm into a directory of its \
             own (-o DIR)"
                .into(),
        ));
    }
    Ok(())
}

/// The study of one knob's trial, as `fprev invariance` runs it.
fn knob_study(t: &KnobTrial<'_>, a: &SurveyArgs) -> Result<fprev::invariance::Study> {
    let subject = Subject {
        spec: t.spec,
        n: t.n,
        shape: t.shape,
        dtype: Some(t.dtype),
        acc: None,
        confirm: fprev::check::CONFIRM_TRIALS,
        timeout: a.guard.timeout,
        mpi: None,
        // Each environment in two fresh processes, so that an order
        // chosen as a process starts is not taken for the variable's doing.
        processes: if t.environment.is_empty() { 1 } else { 2 },
    };
    invariance::study(&subject, &t.inside, &t.environment)
}

/// Makes the directory `dir` if missing and locks it for this survey: a
/// second survey writing into it at the same time would replace this one's
/// results with its own. The lock goes with the returned handle.
fn lock(dir: &Path) -> Result<std::fs::File> {
    use std::os::fd::AsRawFd;

    if dir.exists() && !dir.is_dir() {
        return Err(Error::Input(format!(
            "-o names the directory survey.json and index.html go into, and {} is a file: \
             name a directory",
            dir.display()
        )));
    }
    let fail = |e: std::io::Error| {
        Error::Input(format!(
            "cannot create the directory {}: {}",
            dir.display(),
            e.kind()
        ))
    };
    std::fs::create_dir_all(dir).map_err(fail)?;
    let handle = std::fs::File::open(dir).map_err(fail)?;
    // SAFETY: flock(2) on a descriptor this function owns.
    if unsafe { libc::flock(handle.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(Error::Input(format!(
            "another fprev survey is writing into {}: wait for it to end, or give another -o \
             directory",
            dir.display()
        )));
    }
    Ok(handle)
}

/// Keeps what `path` already holds, when it was made on this machine in
/// this setting.
fn resume(s: &mut Survey, path: &Path) -> Result<()> {
    let earlier = Survey::read(path)?;
    let changed: Vec<String> = earlier
        .machine
        .differences(&s.machine)
        .into_iter()
        .map(|(fact, _, _)| fact)
        .collect();
    if !changed.is_empty() {
        return Err(Error::Input(format!(
            "{} was made on another machine or setting (it differs in {}): give another -o \
             directory, or --fresh to replace it",
            path.display(),
            changed.join(", ")
        )));
    }
    for (library, facts) in &earlier.machine.libraries {
        s.machine
            .libraries
            .entry(library.clone())
            .or_insert_with(|| facts.clone());
    }
    let kept = s.resume_from(earlier);
    if kept > 0 {
        eprintln!(
            "fprev: going on with {}: {kept} entries already surveyed",
            path.display()
        );
    }
    Ok(())
}

/// One line on stderr as each black box starts and ends.
fn progress(step: Step<'_>) {
    match step {
        Step::Starting {
            done,
            total,
            spec,
            dtype,
        } => eprint!("[{:>3}/{total}] {spec} {dtype} … ", done + 1),
        Step::Finished { entry, .. } => eprintln!("{} ({:.1} s)", summary(entry), entry.seconds),
        Step::Threads {
            spec,
            dtype,
            counts,
        } => {
            let counts: Vec<String> = counts.iter().map(usize::to_string).collect();
            eprint!(
                "[threads] {spec} {dtype} on {} threads … ",
                counts.join(", ")
            );
        }
        Step::Threaded { entry, seconds } => {
            let found = match &entry.threads {
                Some(t) if t.error.is_some() => "not compared (see survey.json)".to_string(),
                Some(t) if !t.varies.is_empty() => {
                    let on: Vec<String> = t
                        .varies
                        .iter()
                        .map(|v| format!("n = {} on {}", v.n, v.threads))
                        .collect();
                    format!(
                        "its answers vary from call to call at {} thread(s)",
                        on.join(", ")
                    )
                }
                Some(t) if t.dependent.is_empty() => "the same tree".to_string(),
                Some(t) => format!(
                    "the tree depends on the count at n = {}",
                    fprev::sizes::runs(&t.dependent)
                ),
                None => String::new(),
            };
            eprintln!("{found} ({seconds:.1} s)");
        }
        Step::Knob {
            spec,
            dtype,
            knob,
            n,
        } => eprintln!(
            "[knobs] {spec} {dtype} at n = {n}: {}={} …",
            knob.name,
            knob.values.join(",")
        ),
        Step::Knobbed { check, seconds } => {
            let found = match (&check.error, check.changes) {
                (Some(why), _) => format!("not tried: {}", fprev::error::abbreviated(why)),
                (None, true) => format!("changes the order: {}", check.outcomes.join("; ")),
                (None, false) => "the same order".to_string(),
            };
            eprintln!("[knobs] {}: {found} ({seconds:.1} s)", check.name);
        }
    }
}

/// What an entry found, in a few words.
fn summary(e: &survey::Entry) -> String {
    let formula = |f: &str| fprev::error::abbreviated(f);
    let mut out = match (e.status, &e.formula) {
        (Status::Explained, Some(f)) => format!("native:{}", formula(f)),
        (Status::NotExplained, _) => "not explained by a formula (trees kept)".into(),
        (Status::NotRevealed, _) => "no tree past 2 summands".into(),
        (Status::Varies, _) => {
            let found = e.variations();
            let at: Vec<usize> = found.iter().map(|(n, _, _)| *n).collect();
            let widest = found
                .iter()
                .map(|(_, _, v)| v.spread_ulps)
                .fold(0.0, f64::max);
            format!(
                "varies from call to call at n = {} (results up to {widest:.3} ulps apart)",
                fprev::sizes::runs(&at)
            )
        }
        _ => format!(
            "failed: {}",
            fprev::error::abbreviated(e.error.as_deref().unwrap_or("?"))
        ),
    };
    let tree = |s: &&survey::SizeResult| matches!(s.outcome.as_str(), "tree" | "unconfirmed");
    let modelled = e.sizes.iter().filter(tree).any(|s| s.arithmetic.is_some());
    if e.status != Status::Failed && e.sizes.iter().any(|s| tree(&s)) && !modelled {
        out += "; no model reproduced its bits (not modelled)";
    }
    if let Some(c) = &e.check {
        match e.model_at(c.n).filter(|_| c.passed) {
            Some(model) => out += &format!("; {model}, {}", entry_check(c)),
            None => out += &format!("; {}", entry_check(c)),
        }
    }
    let departures = e.departures();
    if !departures.is_empty() {
        out += &format!("; other trees at n = {}", fprev::sizes::runs(&departures));
    }
    if let Some(t) = e.threads.as_ref().filter(|t| !t.dependent.is_empty()) {
        out += &format!(
            "; thread-dependent at n = {}",
            fprev::sizes::runs(&t.dependent)
        );
    }
    out
}
