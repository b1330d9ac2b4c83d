//! A study of one black box across the settings one process can turn:
//! batch sizes (the `M` of a product), the output revealed (its row and
//! column), thread counts. Each case is revealed as [`reveal`] does, but
//! the trees and arithmetic of the cases before it come first: the
//! nearest case's tree is proven with masked checks instead of revealed,
//! and its model replayed instead of searched for, so a batch study over
//! many `M` of one `K` reveals each regime once.

use std::sync::Arc;

use crate::error::{self, Error, Remedy, Result};
use crate::invariance::{
    Case, Knob, MAX_REVEALS, Observed, Setting, Study, Varying, processes, settings,
};
use crate::probe::{Offset, ProbeOptions};
use crate::reveal::{Progress, Watcher};

use super::{Note, Observer, Opener, Outcome, Request, reveal_opened};

/// Where to read a batch's row: `first`, `middle`, `last` or an index.
///
/// ```
/// assert_eq!(fprev::workflow::row_at("last", 16), Some(15));
/// assert_eq!(fprev::workflow::row_at("middle", 16), Some(8));
/// assert_eq!(fprev::workflow::row_at("3", 2), None);
/// ```
pub fn row_at(value: &str, m: usize) -> Option<usize> {
    let row = match value {
        "first" => 0,
        "middle" => m / 2,
        "last" => m.checked_sub(1)?,
        index => index.parse().ok()?,
    };
    (row < m).then_some(row)
}

/// The columns of an `N`-column product a study reads by default: the
/// first 16 (a whole tile of every kernel fprev has met), the middle and
/// the last.
///
/// ```
/// assert_eq!(fprev::workflow::default_columns(4), vec![0, 1, 2, 3]);
/// assert_eq!(fprev::workflow::default_columns(64).len(), 18);
/// ```
pub fn default_columns(n: usize) -> Vec<usize> {
    let mut columns: Vec<usize> = (0..n.min(16)).collect();
    for c in [n / 2, n.saturating_sub(1)] {
        if !columns.contains(&c) && c < n {
            columns.push(c);
        }
    }
    columns
}

/// What a front end was asked to vary inside one process; [`Turned::knobs`]
/// adds the rows and columns a study reads unless told.
#[derive(Clone, Debug, Default)]
pub struct Turned {
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Batch sizes: the `M` of the shape.
    pub batch: Option<Vec<usize>>,
    /// Rows revealed: `first`, `middle`, `last` or an index.
    pub rows: Vec<String>,
    /// Output columns of a GEMM.
    pub columns: Vec<usize>,
    /// Where the input array starts past a 64-byte boundary
    /// ([`ProbeOptions::offset`]).
    pub offsets: Vec<Offset>,
}

impl Turned {
    /// The knobs, in the order a study turns them (threads, batch, row,
    /// column, offset, the last changing fastest), of black box operation `op` at
    /// `shape`: the rows default to first, middle and last where a batch
    /// is studied or the shape has more than one row, and a GEMM's
    /// columns to [`default_columns`].
    ///
    /// ```
    /// use fprev::workflow::Turned;
    ///
    /// let batch = Turned { batch: Some(vec![1, 64]), ..Default::default() };
    /// let knobs = batch.knobs(Some("gemm"), Some([64, 64, 1000])).unwrap();
    /// let names: Vec<&str> = knobs.iter().map(|k| k.name.as_str()).collect();
    /// assert_eq!(names, ["batch", "row", "column"]);
    /// assert_eq!(knobs[1].values, ["first", "middle", "last"]);
    /// assert!(batch.knobs(Some("gemm"), None).is_err());
    /// ```
    pub fn knobs(&self, op: Option<&str>, shape: Option<[usize; 3]>) -> Result<Vec<Knob>> {
        if self.batch.is_some() && shape.is_none() {
            return Err(Error::Input(
                "a batch size is the M of a product's shape M,N,K (its N and K stay)".into(),
            )
            .advise(Remedy::Give(error::Param::Shape, &["M,N,K"])));
        }
        let mut knobs = Vec::new();
        listed(&mut knobs, "threads", &self.threads)?;
        if let Some(batch) = &self.batch {
            listed(&mut knobs, "batch", batch)?;
        }
        let many_rows = self.batch.is_some() || shape.is_some_and(|[m, _, _]| m > 1);
        let rows: Vec<&str> = match (self.rows.is_empty(), many_rows) {
            (false, _) => self.rows.iter().map(String::as_str).collect(),
            (true, true) => vec!["first", "middle", "last"],
            (true, false) => Vec::new(),
        };
        listed(&mut knobs, "row", &rows)?;
        let columns = match (shape, op) {
            _ if !self.columns.is_empty() => self.columns.clone(),
            (Some([_, n, _]), Some("gemm")) if n > 1 => default_columns(n),
            _ => Vec::new(),
        };
        listed(&mut knobs, "column", &columns)?;
        listed(&mut knobs, "offset", &self.offsets)?;
        Ok(knobs)
    }
}

/// Adds knob `name` of `values`, where any were given.
fn listed<T: ToString>(knobs: &mut Vec<Knob>, name: &str, values: &[T]) -> Result<()> {
    if values.is_empty() {
        return Ok(());
    }
    let values: Vec<String> = values.iter().map(T::to_string).collect();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    knobs.push(Knob::new(name, &values)?);
    Ok(())
}

/// Reveals `label` under every combination of `knobs` (each one of
/// [`IN_PROCESS`](crate::invariance::IN_PROCESS)), each case opened by
/// `open` from [`Request::probe`] with the case's batch size (the `M` of
/// its shape), column and threads, and revealed at the case's row.
///
/// A case whose reveal fails for the black box's sake is recorded as
/// failed (a failure, never a finding of the study); an exception the
/// black box raised ends the study with it, and a setting that cannot be
/// (a row past the batch) fails the study before anything is revealed.
///
/// ```
/// use fprev::invariance::Knob;
/// use fprev::probe::ProbeOptions;
/// use fprev::reveal::Silent;
/// use fprev::workflow::{self, Request};
///
/// let request = Request {
///     probe: ProbeOptions { n: Some(64), ..Default::default() },
///     ..Default::default()
/// };
/// let knobs = [Knob::new("threads", &["1", "2"]).unwrap()];
/// let mut open = |o: &ProbeOptions| fprev::open("reduce:binary-tree", o);
/// let study = workflow::invariance("reduce:binary-tree", &knobs, &request, &mut open, &mut Silent)
///     .unwrap();
/// assert!(study.invariant());
/// ```
pub fn invariance(
    label: &str,
    knobs: &[Knob],
    request: &Request,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Study> {
    if let Some(k) = knobs.iter().find(|k| !k.in_process()) {
        return Err(Error::Input(format!(
            "{}: a library reads its environment when it loads, so each value needs a process \
             of its own, which a study in this process cannot start",
            k.name
        )));
    }
    let plan = settings(knobs, MAX_REVEALS)?;
    let opened: Vec<(ProbeOptions, usize)> = plan
        .iter()
        .map(|s| options(&request.probe, s))
        .collect::<Result<_>>()?;
    let total = plan.len();
    let mut study = Study::default();
    for (done, (setting, (opts, row))) in plan.into_iter().zip(opened).enumerate() {
        observer.studying(&setting, done, total);
        let nearby = nearby(&study, &setting);
        let mut request = Request {
            probe: opts.clone(),
            nearby,
            ..request.clone()
        };
        request.engine.row = row;
        let mut black_box = open(&opts)?;
        let mut watch = Watching {
            inner: &mut *observer,
            proven: false,
        };
        let started = std::time::Instant::now();
        let found = reveal_opened(&mut *black_box, label, &request, open, &mut watch);
        let seconds = started.elapsed().as_secs_f64();
        let proven = watch.proven;
        let observed = match found {
            Ok(Outcome::Revealed(r)) if r.confirmed() => Observed::Order(r.document),
            Ok(Outcome::Revealed(r)) => Observed::Unconfirmed(r.document),
            Ok(Outcome::Varies(v)) => Observed::Varies(Varying::Measured(Box::new(v))),
            Ok(Outcome::OrderIndependent(why)) => Observed::OrderIndependent(why),
            // What the black box raised (a Python exception) is its
            // caller's to see, not a finding of the study.
            Err(e) if e.of_black_box() && !e.is_raised() => Observed::Failed(e.to_string()),
            Err(e) => return Err(e),
        };
        study.cases.push(Case {
            setting,
            observed,
            proven,
            seconds,
        });
    }
    Ok(study)
}

/// What a study varies: the knobs one process turns and the environment
/// variables, each combination of which a fresh process of its own runs.
#[derive(Clone, Debug, Default)]
pub struct Varied {
    /// The knobs one process turns (each one of
    /// [`IN_PROCESS`](crate::invariance::IN_PROCESS)).
    pub inside: Vec<Knob>,
    /// The environment's knobs ([`Knob::environment`]).
    pub environment: Vec<Knob>,
    /// Fresh processes each combination of the environment runs in: with
    /// more than one, an order that changes between processes is told
    /// from one a knob changes (1, without an environment: this process).
    pub processes: usize,
}

/// A study of `label` under every combination of `varied`: with no
/// environment and one process, [`invariance`] of the knobs inside, in
/// this process; otherwise each combination of the environment's values
/// in `varied.processes` fresh processes, each one's study made by
/// `fresh` (handed the variables to set, which then turns the knobs
/// inside there) and nested under its setting ([`Study::nested`]), the
/// process numbered where there are several. The observer hears of each
/// process as it starts ([`Observer::process`]).
///
/// ```
/// use fprev::invariance::{Knob, Setting, Study};
/// use fprev::probe::ProbeOptions;
/// use fprev::reveal::Silent;
/// use fprev::workflow::{self, Request, Varied};
///
/// let varied = Varied {
///     environment: vec![Knob::environment("DUMMY", &["1", "2"]).unwrap()],
///     processes: 1,
///     ..Default::default()
/// };
/// let mut open = |o: &ProbeOptions| fprev::open("native:pairwise", o);
/// let mut asked = Vec::new();
/// let mut fresh = |environ: &Setting| {
///     asked.push(environ.to_string());
///     Ok(Study::default())
/// };
/// let request = Request::default();
/// workflow::study("native:pairwise", &varied, &request, &mut open, &mut fresh, &mut Silent)
///     .unwrap();
/// assert_eq!(asked, ["DUMMY=1", "DUMMY=2"]);
/// ```
pub fn study(
    label: &str,
    varied: &Varied,
    request: &Request,
    open: &mut Opener,
    fresh: &mut dyn FnMut(&Setting) -> Result<Study>,
    observer: &mut dyn Observer,
) -> Result<Study> {
    if varied.environment.is_empty() && varied.processes == 1 {
        return invariance(label, &varied.inside, request, open, observer);
    }
    let plan = processes(&varied.environment, varied.processes)?;
    let mut study = Study::default();
    for (done, (setting, environ)) in plan.iter().enumerate() {
        observer.process(setting, done, plan.len());
        study.cases.extend(fresh(environ)?.nested(setting).cases);
    }
    Ok(study)
}

/// Narrows every switch of `study`'s batch regimes to two neighbouring
/// batch sizes: where two sizes next to each other in the study give any
/// output another outcome, the sizes between are revealed by bisection
/// (every other knob's values at each) until the two are adjacent. The
/// cases join the study; `knobs` are those it was made with. An MPI
/// library switches its algorithm at a message size, and this finds that
/// size exactly in about `log2` of the gap reveals a switch.
///
/// ```
/// use fprev::invariance::Knob;
/// use fprev::probe::ProbeOptions;
/// use fprev::reveal::Silent;
/// use fprev::workflow::{self, Request};
///
/// // A black box whose order changes with the batch: a formula that
/// // turns pairwise at 8 summands, opened at n = M.
/// let spec = "native:below(8, sequential, pairwise)";
/// let request = Request {
///     probe: ProbeOptions { shape: Some([3, 1, 1]), ..Default::default() },
///     ..Default::default()
/// };
/// let knobs = [Knob::new("batch", &["3", "64"]).unwrap()];
/// let mut open = |o: &ProbeOptions| {
///     let n = o.shape.map(|[m, _, _]| m);
///     fprev::open(spec, &ProbeOptions { n, shape: None, ..o.clone() })
/// };
/// let mut study = workflow::invariance(spec, &knobs, &request, &mut open, &mut Silent).unwrap();
/// workflow::bisect(&mut study, "batch", spec, &knobs, &request, &mut open, &mut Silent)
///     .unwrap();
/// let sizes: Vec<&str> = study.cases.iter().filter_map(|c| c.setting.value("batch")).collect();
/// assert!(sizes.contains(&"7") && sizes.contains(&"8")); // the switch, exactly
/// ```
pub fn bisect(
    study: &mut Study,
    axis: &str,
    label: &str,
    knobs: &[Knob],
    request: &Request,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<()> {
    let value = |c: &Case| c.setting.value(axis).and_then(|v| v.parse::<usize>().ok());
    while study.cases.len() < MAX_REVEALS {
        // The outcome of every other setting at each size, by size.
        let groups = study.group_of();
        let mut at: std::collections::BTreeMap<usize, Vec<(Setting, usize)>> = Default::default();
        for (case, group) in study.cases.iter().zip(groups) {
            if let Some(v) = value(case) {
                at.entry(v)
                    .or_default()
                    .push((case.setting.without(axis), group));
            }
        }
        for outcomes in at.values_mut() {
            outcomes.sort_by(|a, b| a.0.0.cmp(&b.0.0));
        }
        let sizes: Vec<(&usize, &Vec<(Setting, usize)>)> = at.iter().collect();
        let gap = sizes
            .windows(2)
            .find(|w| *w[1].0 > w[0].0 + 1 && w[0].1 != w[1].1);
        let Some(&[(a, _), (b, _)]) = gap else {
            // The cases by size, as a report lists regimes.
            study.cases.sort_by_key(|c| value(c));
            return Ok(());
        };
        let middle = (a + (b - a) / 2).to_string();
        let between: Vec<Knob> = knobs
            .iter()
            .map(|k| match k.name == axis {
                true => Knob::new(axis, &[middle.as_str()]),
                false => Ok(k.clone()),
            })
            .collect::<Result<_>>()?;
        let more = invariance(label, &between, request, open, observer)?;
        study.cases.extend(more.cases);
    }
    study.cases.sort_by_key(|c| value(c));
    Ok(())
}

/// The options of `setting`'s case, and the row it reveals.
fn options(base: &ProbeOptions, setting: &Setting) -> Result<(ProbeOptions, usize)> {
    let mut opts = base.clone();
    let number = |knob: &str, v: &str| -> Result<usize> {
        v.parse()
            .map_err(|_| Error::Input(format!("{knob}={v}: give a whole number")))
    };
    if let Some(m) = setting.value("batch") {
        let m = number("batch", m)?;
        let Some([_, cols, k]) = base.shape else {
            return Err(Error::Input(
                "a batch size is the M of a product's shape M,N,K: give the shape".into(),
            ));
        };
        if m == 0 {
            return Err(Error::Input(
                "batch=0: a batch holds at least one row".into(),
            ));
        }
        opts.shape = Some([m, cols, k]);
    }
    if let Some(t) = setting.value("threads") {
        opts.threads = Some(number("threads", t)?);
    }
    if let Some(c) = setting.value("column") {
        let c = number("column", c)?;
        if let Some([_, cols, _]) = opts.shape
            && c >= cols
        {
            return Err(Error::Input(format!(
                "column {c} of a product of {cols} columns: give columns below {cols}"
            )));
        }
        opts.column = Some(c);
    }
    if let Some(o) = setting.value("offset") {
        opts.offset = Some(o.parse()?);
    }
    let m = opts.shape.map_or(1, |[m, _, _]| m);
    let row = match setting.value("row") {
        None => 0,
        Some(r) => row_at(r, m).ok_or_else(|| {
            Error::Input(format!(
                "row {r} of a batch of {m} rows: give first, middle, last or an index below {m}"
            ))
        })?,
    };
    Ok((opts, row))
}

/// The confirmed documents of the cases before `setting` that differ from
/// it in one knob, the latest first: its neighbours along each knob.
fn nearby(study: &Study, setting: &Setting) -> Vec<Arc<crate::document::TreeDocument>> {
    let differs_in_one = |s: &Setting| {
        s.0.len() == setting.0.len()
            && s.0.iter().zip(&setting.0).filter(|(a, b)| a != b).count() == 1
    };
    study
        .cases
        .iter()
        .rev()
        .filter(|c| differs_in_one(&c.setting))
        .filter_map(|c| c.observed.confirmed())
        .take(4)
        .map(|d| Arc::new(d.clone()))
        .collect()
}

/// Passes everything on, noting whether a neighbour's tree was proven.
struct Watching<'a> {
    inner: &'a mut dyn Observer,
    proven: bool,
}

impl Watcher for Watching<'_> {
    fn started(&mut self, n: usize) {
        self.inner.started(n);
    }
    fn placed(&mut self, progress: &Progress) {
        self.inner.placed(progress);
    }
    fn finished(&mut self) {
        self.inner.finished();
    }
}

impl Observer for Watching<'_> {
    fn note(&mut self, note: Note) {
        self.proven |= matches!(note, Note::ProvenNearby { .. });
        self.inner.note(note);
    }
    fn revealing(&mut self, n: usize, done: usize, total: usize) {
        self.inner.revealing(n, done, total);
    }
    fn sizes_done(&mut self) {
        self.inner.sizes_done();
    }
}
