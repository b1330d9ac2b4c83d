//! `fprev survey`: every black box of this machine, each op and dtype,
//! explained, saved after each one, and drawn as a page.

use std::path::{Path, PathBuf};

use fprev::error::{Error, Result};
use fprev::workflow::survey::{self, KnobTrial, Outcome, Step, Survey};
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
    let request = survey::Request {
        specs: a.specs.clone(),
        ops: a.ops.clone(),
        only: a.only.clone(),
        ranks,
        gpu: a.gpu.clone(),
        threads: a.threads.iter().map(|&t| usize::from(t)).collect(),
        no_threads: a.no_threads,
        dtypes: a.dtypes.clone(),
        sizes: a.sizes.clone(),
        large: a.large.clone(),
        no_large: a.no_large,
        shape: a.shape,
        thread_sizes: a.thread_sizes.clone(),
        runs: a.runs,
        knobs: a.knobs,
        fresh: a.fresh,
    };
    let mut store = Directory {
        dir: a.output.clone(),
        json: a.output.join("survey.json"),
        lock: None,
    };
    let json = store.json.clone();
    let mut progress = |step: Step<'_>| {
        let said = fprev_present::survey::progress(&step, &json);
        eprint!("{said}");
    };
    let found = survey::survey(
        &request,
        &mut open_guarded,
        &mut |t| knob_study(t, &a),
        &mut progress,
        &mut store,
    )?;
    let done = match found {
        Outcome::Surveyed(done) => *done,
        Outcome::Elsewhere { differs } => {
            return Err(Error::Input(format!(
                "{} was made on another machine or setting (it differs in {}): give another -o \
                 directory, or --fresh to replace it",
                json.display(),
                differs.join(", ")
            )));
        }
    };
    let s = &done.survey;
    let page = a.output.join("index.html");
    write_out(html::survey_page(s, !a.no_draw).as_bytes(), Some(&page))?;
    for e in &s.entries {
        write::println(format_args!("{}", fprev_present::survey::line(e)))?;
    }
    write::println(format_args!(
        "{}",
        fprev_present::survey::end(s, &json, &page)
    ))?;
    if done.failed > 0 {
        eprintln!(
            "fprev: {}",
            fprev_present::survey::failed(done.failed, s.scope.gpu.is_some())
        );
        return Ok(3);
    }
    Ok(0)
}

/// A survey kept in a directory: its `survey.json`, written whole after
/// each entry, the directory locked while the survey runs.
struct Directory {
    /// The directory (`-o`).
    dir: PathBuf,
    /// Its `survey.json`.
    json: PathBuf,
    /// The lock, once claimed: it goes with the handle.
    lock: Option<std::fs::File>,
}

impl survey::Store for Directory {
    fn claim(&mut self) -> Result<()> {
        self.lock = Some(lock(&self.dir)?);
        Ok(())
    }

    fn earlier(&mut self) -> Result<Option<Survey>> {
        match self.json.exists() {
            true => Survey::read(&self.json).map(Some),
            false => Ok(None),
        }
    }

    fn save(&mut self, s: &Survey) -> Result<()> {
        let text = fprev_present::survey::json(s);
        write_out(format!("{text}\n").as_bytes(), Some(&self.json))
    }
}

/// Refuses `mpi:allreduce` specs of more than one algorithm (the
/// library's own choice counting as one): an MPI job runs the one its
/// environment chose as it started, so the others would be surveyed under
/// a name they do not run.
#[cfg(feature = "mpi")]
fn one_algorithm(specs: &[fprev::Spec]) -> Result<()> {
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
