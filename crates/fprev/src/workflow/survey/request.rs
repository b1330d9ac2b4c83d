//! A survey from what a front end was asked to [`survey`]: the black boxes
//! found or named, the plan with its defaults, the preflight, an earlier
//! survey of the same machine resumed, the entries and their knobs run and
//! kept after each one.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::format::Format;
use crate::invariance::Study;
use crate::sizes::Sizes;
use crate::spec::Spec;

use super::{
    KnobTrial, LARGE_SIZES, OPS, Opener, Scope, Status, Step, Survey, facts_of, gpu, libraries,
};

/// What a survey is asked: the black boxes (named, or found by library
/// and op), the dtypes and sizes, the thread counts and knobs, as a front
/// end's options give them; what is not given takes [`Scope::default`]'s.
/// Its default is `fprev survey`'s: every op, the large sizes
/// [`LARGE_SIZES`], and the scope's shape, thread sizes and runs.
#[derive(Clone, Debug)]
pub struct Request {
    /// The black boxes named; none: every library found ([`libraries`]).
    pub specs: Vec<Spec>,
    /// The ops of the libraries found ([`OPS`](super::OPS)).
    pub ops: Vec<String>,
    /// The libraries surveyed, where not every one found ([`selects`](super::selects)).
    pub only: Vec<String>,
    /// MPI ranks the `mpi:` black boxes run on; `None`: no MPI job.
    pub ranks: Option<usize>,
    /// A simulated GPU architecture whose instructions are surveyed
    /// instead of this machine's libraries ([`gpu::scope`]).
    pub gpu: Option<String>,
    /// Thread counts compared; none: the default ones.
    pub threads: Vec<usize>,
    /// No thread counts compared.
    pub no_threads: bool,
    /// The dtypes; none: the default ones (a GPU's: its own).
    pub dtypes: Vec<Format>,
    /// The sizes the formula is inferred from; `None`: the default (a
    /// GPU's: its own).
    pub sizes: Option<Sizes>,
    /// The sizes past those, each checked against the formula.
    pub large: Sizes,
    /// No large sizes.
    pub no_large: bool,
    /// `M` and `N` of a GEMV and GEMM ([`Scope::shape`]).
    pub shape: [usize; 2],
    /// The sizes the thread counts are compared at.
    pub thread_sizes: Sizes,
    /// Calls of each random input looking for variation ([`Scope::runs`]).
    pub runs: usize,
    /// Whether each black box's knobs are tried.
    pub knobs: bool,
    /// Whether an earlier survey kept in the store is replaced, not
    /// resumed.
    pub fresh: bool,
}

impl Default for Request {
    fn default() -> Self {
        let scope = Scope::default();
        Request {
            specs: Vec::new(),
            ops: OPS.iter().map(ToString::to_string).collect(),
            only: Vec::new(),
            ranks: None,
            gpu: None,
            threads: Vec::new(),
            no_threads: false,
            dtypes: Vec::new(),
            sizes: None,
            large: LARGE_SIZES.parse().expect("LARGE_SIZES parses"),
            no_large: false,
            shape: scope.shape,
            thread_sizes: scope.thread_sizes,
            runs: scope.runs,
            knobs: false,
            fresh: false,
        }
    }
}

/// Where a survey is kept: a front end's file, which no other survey
/// writes while this one runs.
pub trait Store {
    /// Claims the place (makes it, locks it), before anything is kept or
    /// read there.
    fn claim(&mut self) -> Result<()>;
    /// The survey kept there, if any.
    fn earlier(&mut self) -> Result<Option<Survey>>;
    /// Keeps `survey`, in place of what was kept: after each entry, so
    /// that a later survey goes on where this one stops.
    fn save(&mut self, survey: &Survey) -> Result<()>;
}

/// What [`survey`] came to.
#[derive(Debug)]
pub enum Outcome {
    /// The survey, run to its end (boxed: a survey is large, a refusal
    /// small).
    Surveyed(Box<Surveyed>),
    /// The survey kept in the store was made on another machine or in
    /// another setting: nothing was surveyed, nothing replaced.
    Elsewhere {
        /// The machine facts that differ ([`Machine::differences`](super::Machine::differences)).
        differs: Vec<String>,
    },
}

/// A survey run to its end.
#[derive(Debug)]
pub struct Surveyed {
    /// The survey, as kept.
    pub survey: Survey,
    /// Entries kept from an earlier survey ([`Survey::resume_from`]).
    pub kept: usize,
    /// Entries that could not be surveyed (their error recorded; a later
    /// survey retries them).
    pub failed: usize,
}

type LibraryFacts = BTreeMap<String, BTreeMap<String, String>>;

/// Surveys what `request` asks: the plan ([`plan`]), checked by a
/// preflight of the black boxes named (each opened by `open`), then the
/// store claimed and, unless [`Request::fresh`], the survey it keeps
/// resumed ([`Step::Resumed`] where entries are kept), or, made on another
/// machine, left as it is ([`Outcome::Elsewhere`]); then each entry run
/// and each knob tried (each trial's study made by `study`), the survey
/// kept after each one. Progress goes to `progress` as each step starts
/// and ends.
pub fn survey(
    request: &Request,
    open: &mut Opener,
    study: &mut dyn FnMut(&KnobTrial<'_>) -> Result<Study>,
    progress: &mut dyn FnMut(Step<'_>),
    store: &mut dyn Store,
) -> Result<Outcome> {
    let mut s = plan(request)?;
    s.preflight(&request.specs, open)?;
    store.claim()?;
    let mut kept = 0;
    if !request.fresh
        && let Some(earlier) = store.earlier()?
    {
        let differs: Vec<String> = earlier
            .machine
            .differences(&s.machine)
            .into_iter()
            .map(|(fact, _, _)| fact)
            .collect();
        if !differs.is_empty() {
            return Ok(Outcome::Elsewhere { differs });
        }
        kept = s.resume_from(earlier);
        if kept > 0 {
            progress(Step::Resumed { kept });
        }
    }
    let mut save = |s: &Survey| store.save(s);
    s.run(open, progress, &mut save)?;
    s.run_knobs(study, progress, &mut save)?;
    let failed = s
        .entries
        .iter()
        .filter(|e| e.status == Status::Failed)
        .count();
    Ok(Outcome::Surveyed(Box::new(Surveyed {
        survey: s,
        kept,
        failed,
    })))
}

/// The survey `request` asks, before anything is surveyed: its plan, the
/// libraries found with their facts, those missing. A GPU's plan names
/// its own black boxes ([`gpu_plan`]).
pub fn plan(request: &Request) -> Result<Survey> {
    let ops: Vec<&str> = request.ops.iter().map(String::as_str).collect();
    let (black_boxes, libraries, missing) = if request.gpu.is_some() {
        (Vec::new(), LibraryFacts::new(), Vec::new())
    } else if request.specs.is_empty() {
        let found = libraries(&ops, &request.only, request.ranks)?;
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
        let mut labels: Vec<String> = request.specs.iter().map(Spec::label).collect();
        labels.sort();
        labels.dedup();
        let libraries = labels
            .into_iter()
            .map(|l| {
                let facts = facts_of(&l);
                (l, facts)
            })
            .collect();
        let black_boxes = request.specs.iter().map(Spec::to_string).collect();
        (black_boxes, libraries, Vec::new())
    };
    let defaults = Scope::default();
    let threads = match (request.no_threads, request.threads.is_empty()) {
        (true, _) => Vec::new(),
        (false, true) => defaults.threads,
        (false, false) => request.threads.clone(),
    };
    let dtypes = match request.dtypes.is_empty() {
        true => defaults.dtypes,
        false => request.dtypes.clone(),
    };
    let plan = Scope {
        black_boxes,
        dtypes,
        sizes: request.sizes.clone().unwrap_or(defaults.sizes),
        large: if request.no_large {
            Sizes(Vec::new())
        } else {
            request.large.clone()
        },
        shape: request.shape,
        threads,
        thread_sizes: request.thread_sizes.clone(),
        runs: request.runs,
        knobs: request.knobs,
        ranks: request.ranks,
        gpu: None,
        check: 0,
    };
    let (plan, libraries) = match &request.gpu {
        Some(arch) => gpu_plan(arch, request)?,
        None => (plan, libraries),
    };
    let mut s = Survey::new(plan);
    s.machine.libraries = libraries;
    s.missing = missing;
    Ok(s)
}

/// The plan of a survey of the simulated GPU `arch`: its instructions (in
/// the dtypes asked, if any) at the sizes asked or the GPU's, the runs
/// asked; the simulator's facts, and the architecture, as the survey's
/// library, so that a survey of another one is not resumed and `compare`
/// names the architectures.
fn gpu_plan(arch: &str, request: &Request) -> Result<(Scope, LibraryFacts)> {
    let dtypes = (!request.dtypes.is_empty()).then_some(request.dtypes.as_slice());
    let gpu = gpu::scope(arch, dtypes)?;
    let mut facts = facts_of("mma");
    facts.insert("architecture".into(), arch.into());
    let plan = Scope {
        sizes: request.sizes.clone().unwrap_or(gpu.sizes.clone()),
        runs: request.runs,
        ..gpu
    };
    Ok((plan, [("mma".to_string(), facts)].into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store in memory, counting what is asked of it.
    #[derive(Default)]
    struct Memory {
        kept: Option<Survey>,
        claimed: bool,
        saves: usize,
    }

    impl Store for Memory {
        fn claim(&mut self) -> Result<()> {
            self.claimed = true;
            Ok(())
        }
        fn earlier(&mut self) -> Result<Option<Survey>> {
            assert!(self.claimed, "read only once claimed");
            Ok(self.kept.clone())
        }
        fn save(&mut self, survey: &Survey) -> Result<()> {
            self.saves += 1;
            self.kept = Some(survey.clone());
            Ok(())
        }
    }

    fn request() -> Request {
        Request {
            specs: vec!["native:strided:4".parse().unwrap()],
            dtypes: vec![Format::F32],
            sizes: Some("1..8".parse().unwrap()),
            no_large: true,
            no_threads: true,
            shape: [4, 4],
            ..Request::default()
        }
    }

    fn run(request: &Request, store: &mut Memory, steps: &mut Vec<String>) -> Outcome {
        let mut progress = |s: Step<'_>| steps.push(format!("{s:?}"));
        let mut study = |_: &KnobTrial<'_>| -> Result<Study> { unreachable!("no knobs") };
        survey(request, &mut Spec::open, &mut study, &mut progress, store).unwrap()
    }

    #[test]
    fn resumes_a_survey_of_this_machine_and_refuses_another() {
        let mut store = Memory::default();
        let mut steps = Vec::new();
        let Outcome::Surveyed(first) = run(&request(), &mut store, &mut steps) else {
            panic!("a fresh store holds no survey of another machine")
        };
        assert_eq!((first.kept, first.failed), (0, 0));
        assert_eq!(first.survey.entries.len(), 1);
        assert!(store.saves >= 1);
        // Again: the entry is kept, and said to be.
        let mut steps = Vec::new();
        let Outcome::Surveyed(again) = run(&request(), &mut store, &mut steps) else {
            panic!("the same machine")
        };
        assert_eq!(again.kept, 1);
        assert!(steps[0].starts_with("Resumed"));
        // Fresh: nothing kept.
        let fresh = Request {
            fresh: true,
            ..request()
        };
        let Outcome::Surveyed(anew) = run(&fresh, &mut store, &mut Vec::new()) else {
            panic!("a fresh survey reads nothing")
        };
        assert_eq!(anew.kept, 0);
        // Made on another machine: refused, named by the facts that differ.
        let mut elsewhere = store.kept.clone().unwrap();
        elsewhere.machine.cores += 1;
        store.kept = Some(elsewhere);
        let saves = store.saves;
        match run(&request(), &mut store, &mut Vec::new()) {
            Outcome::Elsewhere { differs } => assert!(!differs.is_empty()),
            Outcome::Surveyed(_) => panic!("another machine's survey is not resumed"),
        }
        assert_eq!(store.saves, saves, "nothing replaced");
    }

    #[test]
    fn defaults_fill_what_is_not_asked() {
        let plan = plan(&Request {
            no_threads: false,
            ..request()
        })
        .unwrap();
        assert_eq!(plan.scope.threads, Scope::default().threads);
        assert!(plan.scope.large.0.is_empty());
        assert_eq!(plan.scope.black_boxes, ["native:strided:4"]);
        assert!(plan.machine.libraries.contains_key("native"));
    }
}
