//! The knobs a survey tries (`fprev survey --knobs`): for each black box,
//! the settings of its library that may change its order (the environment
//! variables the library reads when it loads, and its thread count), which
//! values of each this machine can run, and what each value gave at the
//! entry's largest size, as an invariance study of one knob.
//!
//! ```
//! use fprev::workflow::survey::knobs_for;
//! use std::collections::BTreeMap;
//!
//! let spec: fprev::Spec = "blas:dot@mkl".parse().unwrap();
//! let facts = BTreeMap::from([("path".to_string(), "/opt/libmkl_rt.so.2".to_string())]);
//! // A CPU that runs AVX2: MKL_CBWR=AVX2 is tried.
//! let knobs = knobs_for(&spec, &facts, &[], &|f| f == "avx2");
//! let names: Vec<&str> = knobs.iter().map(|k| k.name.as_str()).collect();
//! assert_eq!(names, ["MKL_NUM_THREADS", "MKL_CBWR"]);
//! assert_eq!(knobs[1].values, ["unset", "COMPATIBLE", "AVX2"]);
//! ```

use std::collections::BTreeMap;
use std::time::Instant;

use super::work::threads_settable;
use super::{KnobCheck, Scope, Status, Step, Survey};
use crate::error::{Error, Result, abbreviated};
use crate::format::Format;
use crate::invariance::{Knob, Observed, Study, formula_of};
use crate::spec::Spec;
use crate::tree::SummationTree;

/// OpenBLAS's core types tried (`OPENBLAS_CORETYPE`), each with the CPU
/// features its kernels use: OpenBLAS runs a forced core type without
/// asking the CPU, so one whose instructions the CPU lacks would crash.
pub const CORETYPES: [(&str, &[&str]); 3] = [
    ("Haswell", &["avx2", "fma"]),
    (
        "SkylakeX",
        &["avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"],
    ),
    ("Prescott", &["sse3"]),
];

/// Counts tried of a library's thread variables (`OPENBLAS_NUM_THREADS`,
/// `OMP_NUM_THREADS`, …).
const THREAD_VALUES: [&str; 2] = ["1", "2"];

/// The knobs of `spec` on this machine: its library told apart by what it
/// said of itself (`facts`, as the survey records them: a BLAS's path and
/// version, NumPy's BLAS and the CPU features it dispatches on), the
/// black box's thread counts `threads` (the plan's, where it takes one and
/// there are two or more), and `runs`, whether this CPU has a feature (as
/// `/proc/cpuinfo` names it; [`cpu_runs`] for this machine), which picks
/// the core types and `MKL_CBWR` branches tried. A knob of fewer than two
/// values is left out: it cannot change anything.
///
/// - OpenBLAS (`blas:` loading it, NumPy built with it):
///   `OPENBLAS_NUM_THREADS` 1 and 2, `OPENBLAS_CORETYPE` of [`CORETYPES`]
///   those the CPU runs.
/// - MKL: `MKL_NUM_THREADS` 1 and 2, `MKL_CBWR` unset, `COMPATIBLE`, and
///   `AVX2` where the CPU has it.
/// - BLIS: `BLIS_NUM_THREADS` 1 and 2.
/// - NumPy: `NPY_DISABLE_CPU_FEATURES` unset and its AVX-512 features
///   dispatched here (`AVX512F`, `X86_V4`, …; where none, every feature
///   dispatched): NumPy refuses, with a warning, to disable one it does
///   not dispatch, so only those it names are given.
/// - OpenMP (PyTorch, a BLAS built with OpenMP): `OMP_NUM_THREADS` 1 and 2.
/// - Rayon's global pool: `RAYON_NUM_THREADS` 1 and 2.
/// - `threads`, for black boxes whose count fprev sets.
pub fn knobs_for(
    spec: &Spec,
    facts: &BTreeMap<String, String>,
    threads: &[usize],
    runs: &dyn Fn(&str) -> bool,
) -> Vec<Knob> {
    let fact = |key: &str| facts.get(key).map_or(String::new(), |v| v.to_lowercase());
    // The BLAS: a `blas:` black box's own, or the one NumPy was built with.
    let blas = match spec.prefix() {
        "blas" => format!("{} {}", fact("path"), fact("version")),
        "numpy" => fact("blas"),
        _ => String::new(),
    };
    let mut wanted: Vec<(&str, Vec<String>)> = Vec::new();
    let counts = || THREAD_VALUES.map(String::from).to_vec();
    if blas.contains("openblas") {
        wanted.push(("OPENBLAS_NUM_THREADS", counts()));
        let cores = CORETYPES
            .iter()
            .filter(|(_, needs)| needs.iter().all(|f| runs(f)))
            .map(|(name, _)| name.to_string());
        wanted.push(("OPENBLAS_CORETYPE", cores.collect()));
    } else if blas.contains("mkl") {
        wanted.push(("MKL_NUM_THREADS", counts()));
        let mut branches = vec!["unset".to_string(), "COMPATIBLE".into()];
        if runs("avx2") {
            branches.push("AVX2".into());
        }
        wanted.push(("MKL_CBWR", branches));
    } else if blas.contains("blis") {
        wanted.push(("BLIS_NUM_THREADS", counts()));
    }
    if blas.contains("openmp") || spec.prefix() == "torch" {
        wanted.push(("OMP_NUM_THREADS", counts()));
    }
    if spec.prefix() == "numpy" {
        let dispatched: Vec<&str> = facts
            .get("cpu dispatch")
            .map_or(Vec::new(), |d| d.split_whitespace().collect());
        let wide: Vec<&str> = dispatched
            .iter()
            .copied()
            .filter(|f| f.starts_with("AVX512") || *f == "X86_V4")
            .collect();
        let off = if wide.is_empty() { dispatched } else { wide };
        if !off.is_empty() {
            wanted.push((
                "NPY_DISABLE_CPU_FEATURES",
                vec!["unset".into(), off.join(" ")],
            ));
        }
    }
    if spec.prefix() == "rayon" && spec.argument().is_none() {
        wanted.push(("RAYON_NUM_THREADS", counts()));
    }
    if threads.len() > 1 && threads_settable(spec) {
        wanted.push(("threads", threads.iter().map(usize::to_string).collect()));
    }
    wanted
        .into_iter()
        .filter(|(_, values)| values.len() > 1)
        .filter_map(|(name, values)| {
            let values: Vec<&str> = values.iter().map(String::as_str).collect();
            Knob::new(name, &values).ok()
        })
        .collect()
}

/// Whether this CPU has `feature` (an x86 flag as `/proc/cpuinfo` names
/// it, `sse3` for its `pni`), as the running CPU reports it; false for a
/// feature this build cannot ask about.
pub fn cpu_runs(feature: &str) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        match feature {
            "sse3" => std::arch::is_x86_feature_detected!("sse3"),
            "fma" => std::arch::is_x86_feature_detected!("fma"),
            "avx2" => std::arch::is_x86_feature_detected!("avx2"),
            "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
            "avx512cd" => std::arch::is_x86_feature_detected!("avx512cd"),
            "avx512bw" => std::arch::is_x86_feature_detected!("avx512bw"),
            "avx512dq" => std::arch::is_x86_feature_detected!("avx512dq"),
            "avx512vl" => std::arch::is_x86_feature_detected!("avx512vl"),
            _ => false,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = feature;
        false
    }
}

/// One knob's study, as [`Survey::run_knobs`] asks a front end to run it:
/// the black box, its dtype, size and shape, the knobs turned inside one
/// process and those of the environment (each value a process of its own).
#[derive(Clone, Debug)]
pub struct KnobTrial<'a> {
    /// The black box.
    pub spec: &'a Spec,
    /// Its dtype.
    pub dtype: Format,
    /// Summands (`K` of a GEMV or GEMM).
    pub n: usize,
    /// A GEMV's or GEMM's `M,N,K`, as the survey revealed it.
    pub shape: Option<[usize; 3]>,
    /// Knobs one process turns: `threads`, and the output revealed (row
    /// 0, column 0, as the survey's reveals) where a shape has others.
    pub inside: Vec<Knob>,
    /// Environment variables, each combination a process of its own.
    pub environment: Vec<Knob>,
}

impl Survey {
    /// Where the plan asks for knobs ([`Scope::knobs`]), tries each
    /// entry's ([`knobs_for`], the facts of its library as recorded in
    /// [`Machine::libraries`](super::Machine::libraries)) not yet tried,
    /// at its largest size surveyed, with `study` (which runs a trial's
    /// invariance study, each environment in a process of its own); a failed entry is
    /// left out. `progress` hears each knob; `save` gets the survey after
    /// each entry.
    pub fn run_knobs(
        &mut self,
        study: &mut dyn FnMut(&KnobTrial<'_>) -> Result<Study>,
        progress: &mut dyn FnMut(Step<'_>),
        save: &mut dyn FnMut(&Survey) -> Result<()>,
    ) -> Result<()> {
        if !self.scope.knobs {
            return Ok(());
        }
        let work = self.work()?;
        for k in 0..self.entries.len() {
            let e = &self.entries[k];
            let Some((spec, _)) = work.iter().find(|(s, _)| s.as_str() == e.spec) else {
                continue;
            };
            if e.knobs.is_some() || e.status == Status::Failed {
                continue;
            }
            let dtype: Format = e.dtype.parse().map_err(Error::Input)?;
            let largest = e.sizes.iter().filter(|s| s.outcome != "skipped");
            let Some(n) = largest.map(|s| s.n).max() else {
                continue;
            };
            let facts = self.machine.libraries.get(&spec.label());
            let knobs = knobs_for(
                spec,
                facts.unwrap_or(&BTreeMap::new()),
                &self.scope.threads,
                &cpu_runs,
            );
            let started = Instant::now();
            let mut found = Vec::new();
            for knob in &knobs {
                progress(Step::Knob {
                    spec,
                    dtype,
                    knob,
                    n,
                });
                let at = Instant::now();
                let trial = trial(spec, dtype, n, &self.scope, knob);
                let check = match study(&trial) {
                    Ok(s) => check_of(knob, n, &s),
                    Err(why) => KnobCheck {
                        name: knob.name.clone(),
                        values: knob.values.clone(),
                        n,
                        changes: false,
                        outcomes: Vec::new(),
                        error: Some(why.to_string()),
                    },
                };
                progress(Step::Knobbed {
                    check: &check,
                    seconds: at.elapsed().as_secs_f64(),
                });
                found.push(check);
            }
            let spent = started.elapsed().as_secs_f64();
            let e = &mut self.entries[k];
            e.knobs = Some(found);
            e.seconds += spent;
            self.seconds += spent;
            save(self)?;
        }
        Ok(())
    }
}

/// The study of `knob` on `spec` at `n`: its output row 0 and column 0,
/// as the survey revealed it.
fn trial<'a>(spec: &'a Spec, dtype: Format, n: usize, plan: &Scope, knob: &Knob) -> KnobTrial<'a> {
    let [m, cols] = plan.shape;
    let shape = match spec.op() {
        Some("gemv") => Some([m, 1, n]),
        Some("gemm") => Some([m, cols, n]),
        _ => None,
    };
    let mut inside = Vec::new();
    let mut environment = Vec::new();
    match knob.in_process() {
        true => inside.push(knob.clone()),
        false => environment.push(knob.clone()),
    }
    let one = |name: &str, value: &str| Knob::new(name, &[value]).expect("a valid knob");
    if shape.is_some_and(|[m, _, _]| m > 1) {
        inside.push(one("row", "first"));
    }
    if spec.op() == Some("gemm") && cols > 1 {
        inside.push(one("column", "0"));
    }
    KnobTrial {
        spec,
        dtype,
        n,
        shape,
        inside,
        environment,
    }
}

/// What `study` says of `knob`: each value's outcome, and whether one
/// changed what was found.
fn check_of(knob: &Knob, n: usize, study: &Study) -> KnobCheck {
    let group_of = study.group_of();
    let cases: Vec<Option<usize>> = knob
        .values
        .iter()
        .map(|v| {
            study
                .cases
                .iter()
                .position(|c| c.setting.value(&knob.name) == Some(v))
        })
        .collect();
    let mut outcomes: Vec<String> = cases
        .iter()
        .map(|c| match c {
            Some(i) => outcome(&study.cases[*i].observed),
            None => "failed: not revealed".into(),
        })
        .collect();
    // The same confirmed tree in another group: the arithmetic parts.
    let confirmed =
        |c: &Option<usize>| c.filter(|&i| study.cases[i].observed.confirmed().is_some());
    let named = outcomes.clone();
    for (i, ci) in cases.iter().enumerate() {
        let Some(ci) = confirmed(ci) else { continue };
        let other = cases.iter().enumerate().any(|(j, cj)| {
            confirmed(cj).is_some_and(|cj| named[j] == named[i] && group_of[cj] != group_of[ci])
        });
        if other {
            let letter = char::from(b'A' + (group_of[ci] % 26) as u8);
            outcomes[i] += &format!(" [arithmetic {letter}]");
        }
    }
    KnobCheck {
        name: knob.name.clone(),
        values: knob.values.clone(),
        n,
        // Named as an invariance study names it: never for what differs
        // between repeats of one value.
        changes: study.changing_knobs().contains(&knob.name.as_str()),
        outcomes,
        error: None,
    }
}

/// A finding in a few words: the tree's formula, or a hash of its text.
fn outcome(o: &Observed) -> String {
    let tree = |t: &SummationTree| formula_of(t).unwrap_or_else(|| format!("tree {}", hash(t)));
    match o {
        Observed::Order(d) => tree(d.tree()),
        Observed::Unconfirmed(d) => format!("unconfirmed {}", tree(d.tree())),
        Observed::OrderIndependent(_) => "order-independent".into(),
        Observed::Varies(_) => "varies".into(),
        Observed::Failed(why) => format!("failed: {}", abbreviated(why)),
    }
}

/// FNV-1a of the tree's canonical text, in hex: equal trees (modulo child
/// order) hash alike.
fn hash(t: &SummationTree) -> String {
    let h = t.to_text().bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::TreeDocument;
    use crate::invariance::{Case, Setting, Varying};
    use crate::order::Order;

    fn facts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn names(knobs: &[Knob]) -> Vec<&str> {
        knobs.iter().map(|k| k.name.as_str()).collect()
    }

    #[test]
    fn each_library_gets_its_own_knobs_and_only_values_the_cpu_runs() {
        let openblas = facts(&[(
            "path",
            "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0",
        )]);
        let dot: Spec = "blas:dot@openblas".parse().unwrap();
        // A CPU with AVX2 and FMA but no AVX-512: no SkylakeX.
        let avx2 = |f: &str| ["sse3", "avx2", "fma"].contains(&f);
        let k = knobs_for(&dot, &openblas, &[], &avx2);
        assert_eq!(names(&k), ["OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE"]);
        assert_eq!(k[1].values, ["Haswell", "Prescott"]);
        // One core type: the knob is left out.
        let k = knobs_for(&dot, &openblas, &[], &|f| f == "sse3");
        assert_eq!(names(&k), ["OPENBLAS_NUM_THREADS"]);
        // BLIS built with OpenMP.
        let blis = facts(&[("path", "/usr/lib/blis-openmp/libblis.so.4")]);
        let k = knobs_for(&"blas:gemm@blis".parse().unwrap(), &blis, &[], &avx2);
        assert_eq!(names(&k), ["BLIS_NUM_THREADS", "OMP_NUM_THREADS"]);
        // ndarray has none; the thread count needs two counts.
        let nd: Spec = "ndarray:sum".parse().unwrap();
        assert!(knobs_for(&nd, &BTreeMap::new(), &[1, 2], &avx2).is_empty());
        let rayon: Spec = "rayon:sum".parse().unwrap();
        let k = knobs_for(&rayon, &BTreeMap::new(), &[1, 2], &avx2);
        assert_eq!(names(&k), ["RAYON_NUM_THREADS", "threads"]);
        let k = knobs_for(&rayon, &BTreeMap::new(), &[1], &avx2);
        assert_eq!(names(&k), ["RAYON_NUM_THREADS"]);
        // Rayon on a count of its own reads no variable and takes none.
        let four: Spec = "rayon:sum:4".parse().unwrap();
        assert!(knobs_for(&four, &BTreeMap::new(), &[1, 2], &avx2).is_empty());
    }

    #[test]
    fn every_variable_tried_is_one_the_machine_records() {
        let every = |_: &str| true;
        let cases = [
            ("blas:dot", "path", "/x/openblas-openmp/libopenblas.so.0"),
            ("blas:dot", "path", "/x/libmkl_rt.so.2"),
            ("blas:dot", "path", "/x/libblis.so.4"),
            ("rayon:dot", "path", ""),
        ];
        for (spec, key, value) in cases {
            let spec: Spec = spec.parse().unwrap();
            for k in knobs_for(&spec, &facts(&[(key, value)]), &[], &every) {
                assert!(
                    crate::machine::STEERING.contains(&k.name.as_str()),
                    "{}",
                    k.name
                );
            }
        }
    }

    #[cfg(feature = "python")]
    #[test]
    fn numpy_gets_the_openblas_knobs_and_the_features_it_dispatches() {
        let numpy: Spec = "numpy:dot".parse().unwrap();
        let f = facts(&[
            ("blas", "scipy-openblas 0.3.31"),
            ("cpu dispatch", "X86_V3 X86_V4 AVX512_ICL"),
        ]);
        let k = knobs_for(&numpy, &f, &[], &|_| true);
        assert_eq!(
            names(&k),
            [
                "OPENBLAS_NUM_THREADS",
                "OPENBLAS_CORETYPE",
                "NPY_DISABLE_CPU_FEATURES"
            ]
        );
        assert_eq!(k[2].values, ["unset", "X86_V4 AVX512_ICL"]);
        // A NumPy that dispatches no AVX-512 kernel: every feature off.
        let f = facts(&[("cpu dispatch", "SSE41 AVX2")]);
        let k = knobs_for(&numpy, &f, &[], &|_| true);
        assert_eq!(k[0].values, ["unset", "SSE41 AVX2"]);
    }

    fn case(value: &str, observed: Observed) -> Case {
        Case {
            setting: Setting(vec![("X".into(), value.into())]),
            observed,
            proven: false,
            seconds: 0.0,
        }
    }

    fn order(o: Order, n: usize) -> Observed {
        Observed::Order(TreeDocument::new(o.tree(n)))
    }

    #[test]
    fn a_knob_changes_the_order_only_where_a_value_gave_one() {
        let knob = Knob::new("X", &["a", "b", "c"]).unwrap();
        let study = Study {
            cases: vec![
                case("a", order(Order::Sequential, 8)),
                case("b", order(Order::Pairwise, 8)),
                case("c", Observed::Failed("no".into())),
            ],
        };
        let c = check_of(&knob, 8, &study);
        assert!(c.changes);
        assert_eq!(c.outcomes[..2], ["sequential", "pairwise"]);
        assert!(c.outcomes[2].starts_with("failed: no"), "{:?}", c.outcomes);
        // Two values varying, one failing: nothing shown to change.
        let study = Study {
            cases: vec![
                case("a", Observed::Varies(Varying::Recorded("v".into()))),
                case("b", Observed::Varies(Varying::Recorded("v".into()))),
                case("c", Observed::Failed("no".into())),
            ],
        };
        let c = check_of(&knob, 8, &study);
        assert!(!c.changes);
        assert_eq!(c.outcomes[..2], ["varies", "varies"]);
        // One order, the same for every value that gave one.
        let study = Study {
            cases: vec![
                case("a", order(Order::Sequential, 8)),
                case("b", Observed::Failed("no".into())),
                case("c", order(Order::Sequential, 8)),
            ],
        };
        assert!(!check_of(&knob, 8, &study).changes);
        // Each value in two processes, whose orders differ for one value:
        // what differs between processes is no knob's doing.
        let repeated = |value: &str, process: &str, o: Order| Case {
            setting: Setting(vec![
                ("X".into(), value.into()),
                (crate::invariance::PROCESS.into(), process.into()),
            ]),
            ..case(value, order(o, 8))
        };
        let study = Study {
            cases: vec![
                repeated("a", "1", Order::Sequential),
                repeated("a", "2", Order::Pairwise),
                repeated("b", "1", Order::Reverse),
                repeated("b", "2", Order::Reverse),
            ],
        };
        assert!(!check_of(&knob, 8, &study).changes);
    }

    #[test]
    fn a_tree_is_named_by_its_formula_or_else_by_its_hash() {
        let o = outcome(&order(Order::Pairwise, 16));
        assert_eq!(o, "pairwise");
        let t: SummationTree = "(((0+3)+(1+2))+4)".parse().unwrap();
        // Its children written the other way round: the same tree.
        let u: SummationTree = "(4+((2+1)+(3+0)))".parse().unwrap();
        let v: SummationTree = "(((0+2)+(1+3))+4)".parse().unwrap();
        assert_eq!(hash(&t), hash(&u));
        assert_ne!(hash(&t), hash(&v));
        assert_eq!(hash(&t).len(), 16);
        let unconfirmed = outcome(&Observed::Unconfirmed(TreeDocument::new(t.clone())));
        assert!(unconfirmed.starts_with("unconfirmed "), "{unconfirmed}");
    }

    #[test]
    fn the_same_tree_with_other_arithmetic_is_told_apart() {
        use crate::arith::{Arithmetic, NodeArithmetic};
        let tree = Order::Sequential.tree(4);
        let with = |f: Format| {
            let mut d = TreeDocument::new(tree.clone());
            d.arithmetic = Some(Arithmetic::uniform(NodeArithmetic::ieee(f)));
            Observed::Order(d)
        };
        let knob = Knob::new("X", &["a", "b"]).unwrap();
        let study = Study {
            cases: vec![case("a", with(Format::F32)), case("b", with(Format::F64))],
        };
        let c = check_of(&knob, 4, &study);
        assert!(c.changes);
        assert_eq!(
            c.outcomes,
            ["sequential [arithmetic A]", "sequential [arithmetic B]"]
        );
    }
}
