//! Invariance studies: the verdict, regimes and recipe of studies whose
//! truth is known (trees of reference orders placed by hand), their file
//! read back, and real studies of in-process black boxes.

use fprev::Order;
use fprev::document::TreeDocument;
use fprev::invariance::{Between, Case, Knob, Observed, Setting, Study, processes, settings};
use fprev::probe::ProbeOptions;
use fprev::reveal::Silent;
use fprev::workflow::{self, Request};

/// A study of `knobs` in which each case found the tree `order_of` gives.
fn study(knobs: &[Knob], order_of: impl Fn(&Setting) -> Order) -> Study {
    let cases = settings(knobs, 4096)
        .unwrap()
        .into_iter()
        .map(|setting| Case {
            observed: Observed::Order(TreeDocument::new(order_of(&setting).tree(16))),
            setting,
            proven: false,
            seconds: 0.0,
        })
        .collect();
    Study { cases }
}

fn knob(name: &str, values: &[&str]) -> Knob {
    Knob::new(name, values).unwrap()
}

#[test]
fn a_knob_that_changes_the_order_is_named_with_what_pins_it() {
    // The order changes with the core type only; the thread count is idle.
    let knobs = [
        knob("CORETYPE", &["Haswell", "SkylakeX"]),
        knob("threads", &["1", "2"]),
    ];
    let s = study(&knobs, |s| match s.value("CORETYPE") {
        Some("Haswell") => Order::Sequential,
        _ => Order::Pairwise,
    });
    let v = s.verdict();
    assert!(!v.invariant);
    assert_eq!(v.changing, ["CORETYPE"]);
    assert_eq!(v.pin.as_deref(), Some(&["CORETYPE".to_string()][..]));
    assert_eq!(s.groups().len(), 2);
}

/// Two fresh processes each setting: where the repeats of one setting
/// found different orders (an order drawn as a process starts), the knob
/// is not named for the difference, though each of its values found
/// another order in its first process; where the repeats agree, it is.
#[test]
fn repeats_that_disagree_blame_no_knob() {
    let plan = processes(&[Knob::environment("DUMMY", &["1", "2"]).unwrap()], 2).unwrap();
    let study_of = |order_of: &dyn Fn(usize) -> Order| Study {
        cases: plan
            .iter()
            .enumerate()
            .map(|(k, (setting, _))| Case {
                setting: setting.clone(),
                observed: Observed::Order(TreeDocument::new(order_of(k).tree(16))),
                proven: false,
                seconds: 0.0,
            })
            .collect(),
    };
    // DUMMY=1 process=1, DUMMY=1 process=2, DUMMY=2 process=1, ...
    let drawn = study_of(&|k| {
        [
            Order::Sequential,
            Order::Reverse,
            Order::Pairwise,
            Order::Sequential,
        ][k]
    });
    let v = drawn.verdict();
    assert!(!v.invariant);
    assert!(v.changing.is_empty(), "{:?}", v.changing);
    assert_eq!(v.pin, None);
    let varying: Vec<(String, Between)> =
        v.varying.iter().map(|(s, b)| (s.to_string(), *b)).collect();
    assert_eq!(
        varying,
        [
            ("DUMMY=1".to_string(), Between::Processes),
            ("DUMMY=2".to_string(), Between::Processes)
        ]
    );
    let read = study_of(&|k| [Order::Sequential, Order::Pairwise][k / 2]);
    let v = read.verdict();
    assert_eq!(v.changing, ["DUMMY"]);
    assert!(v.varying.is_empty());
    assert_eq!(v.pin.as_deref(), Some(&["DUMMY".to_string()][..]));
    // A case that varies from call to call blames no knob either.
    let mut calls = read.clone();
    calls.cases[3].observed = Observed::Varies(fprev::invariance::Varying::Recorded(
        "8 of 8 random inputs".into(),
    ));
    let v = calls.verdict();
    assert!(v.changing.is_empty(), "{:?}", v.changing);
    assert_eq!(v.varying.len(), 1);
    assert_eq!(v.varying[0].1, Between::Calls);
}

#[test]
fn batch_regimes_and_the_settings_that_make_a_batch_invariant() {
    // Under threads=1 every M sums alike; under threads=2 from M = 3 on
    // another order.
    let knobs = [
        knob("threads", &["1", "2"]),
        knob("batch", &["1", "2", "3", "4"]),
        knob("row", &["first", "last"]),
    ];
    let s = study(&knobs, |s| {
        let m: usize = s.value("batch").unwrap().parse().unwrap();
        match (s.value("threads"), m) {
            (Some("2"), 3..) => Order::Reverse,
            _ => Order::Sequential,
        }
    });
    let regimes = s.regimes("batch");
    assert_eq!(regimes.len(), 4);
    let spans = |r: &fprev::invariance::Regimes| -> Vec<String> {
        r.runs.iter().map(|run| run.span()).collect()
    };
    assert_eq!(spans(&regimes[0]), ["1..4"]);
    assert_eq!(spans(&regimes[2]), ["1,2", "3,4"]);
    assert_eq!(regimes[2].rest.to_string(), "threads=2 row=first");
    let v = s.verdict();
    assert!(!v.invariant);
    assert_eq!(v.changing, ["threads", "batch"]);
    let under: Vec<String> = v
        .batch_invariant_under
        .iter()
        .map(Setting::to_string)
        .collect();
    assert_eq!(under, ["threads=1"]);
    // With the batch size and the row held, the thread count fixes the
    // order.
    assert_eq!(v.pin.as_deref(), Some(&["threads".to_string()][..]));
    assert!(!s.batch_invariant());
}

#[test]
fn a_study_file_reads_back_and_nests_under_its_environment() {
    let knobs = [knob("batch", &["1", "2"])];
    let mut s = study(&knobs, |_| Order::Pairwise);
    s.cases.push(Case {
        setting: Setting(vec![("batch".into(), "3".into())]),
        observed: Observed::Varies(fprev::invariance::Varying::Recorded(
            "8 of 8 random inputs gave different bits".into(),
        )),
        proven: true,
        seconds: 1.5,
    });
    let words = fprev::invariance::Words {
        order_independent: &|_| "order-independent".into(),
        variation: &|_| "varies".into(),
    };
    let back = Study::parse(&s.to_json(&words)).unwrap();
    assert_eq!(back.cases.len(), 3);
    assert_eq!(back.group_of(), s.group_of());
    assert!(back.cases[2].proven);
    assert_eq!(back.cases[2].seconds, 1.5);
    let outer = Setting(vec![("MKL_CBWR".into(), "AVX2".into())]);
    let nested = back.nested(&outer);
    assert_eq!(nested.cases[0].setting.to_string(), "MKL_CBWR=AVX2 batch=1");
    for bad in [
        "{}",
        "{\"fprev_invariance\": 2, \"cases\": []}",
        "{\"fprev_invariance\": 1, \"cases\": [{\"setting\": [], \"proven\": false, \"found\": \"order\"}]}",
        "{\"fprev_invariance\": 1, \"cases\": [{\"setting\": [], \"proven\": false, \"found\": \"odd\", \"why\": \"\"}]}",
        "[",
    ] {
        assert!(Study::parse(bad).is_err(), "{bad}");
    }
}

/// ndarray's GEMM sums every row alike at every M (its kernel has no tile
/// that depends on M): a real batch study, each case after the first
/// proven from its neighbour, every one confirmed by replay.
#[test]
fn ndarray_gemm_is_batch_invariant_and_neighbours_are_proven() {
    let request = Request {
        probe: ProbeOptions {
            n: Some(200),
            shape: Some([8, 8, 200]),
            ..Default::default()
        },
        ..Default::default()
    };
    let knobs = [
        knob("batch", &["1", "2", "5", "8"]),
        knob("row", &["first", "last"]),
        knob("column", &["0", "7"]),
    ];
    let mut open = |o: &ProbeOptions| fprev::open("ndarray:gemm", o);
    let s = workflow::invariance("ndarray:gemm", &knobs, &request, &mut open, &mut Silent).unwrap();
    assert_eq!(s.cases.len(), 16);
    assert!(s.invariant(), "{:?}", s.groups());
    assert!(s.batch_invariant());
    assert!(s.cases[1..].iter().all(|c| c.proven));
    let doc = s.cases[0].observed.confirmed().unwrap();
    assert!(doc.confirmation.as_ref().unwrap().confirmed());
    // The tree found is the one a plain reveal of the same output finds.
    let mut one = fprev::open("ndarray:gemm", &request.probe).unwrap();
    let alone = fprev::reveal(&mut *one, &fprev::Options::default())
        .unwrap()
        .revealed()
        .unwrap();
    assert_eq!(*doc.tree(), alone.tree);
}

#[test]
fn settings_that_cannot_be_fail_the_study_before_any_reveal() {
    let request = Request {
        probe: ProbeOptions {
            n: Some(64),
            shape: Some([4, 4, 64]),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut open = |o: &ProbeOptions| fprev::open("ndarray:gemm", o);
    for knobs in [
        vec![knob("row", &["4"])],
        vec![knob("batch", &["0"])],
        vec![knob("column", &["4"])],
        vec![knob("OPENBLAS_NUM_THREADS", &["1", "2"])],
        vec![knob("batch", &["x"])],
    ] {
        let found = workflow::invariance("ndarray:gemm", &knobs, &request, &mut open, &mut Silent);
        assert!(matches!(found, Err(fprev::Error::Input(_))), "{knobs:?}");
    }
    let no_shape = Request::default();
    let found = workflow::invariance(
        "native:pairwise",
        &[knob("batch", &["1", "2"])],
        &no_shape,
        &mut |o: &ProbeOptions| fprev::open("native:pairwise", o),
        &mut Silent,
    );
    assert!(matches!(found, Err(fprev::Error::Input(_))));
}
