//! The equivalence API as a user's test suite uses it.

use fprev::equivalence::{UPDATE_VAR, assert_same_order, check_order, compare, same_order};
use fprev::probe::{ProbeOptions, ReplayProbe};
use fprev::reduce::Replay;
use fprev::{Format, SummationTree};

fn replay(text: &str) -> ReplayProbe {
    let tree: SummationTree = text.parse().unwrap();
    ReplayProbe::new(Replay::new(&tree, Format::F64), Format::F64)
}

#[test]
fn equal_orders_pass() {
    let opts = ProbeOptions {
        n: Some(100),
        format: Format::F64,
        ..Default::default()
    };
    let mut a = fprev::open("native:binary-tree", &opts).unwrap();
    let mut b = fprev::open("reduce:binary-tree:3", &opts).unwrap();
    assert_same_order(&mut a, &mut b);
}

#[test]
fn orders_differing_in_one_node_fail_with_that_node() {
    let mut a = replay("(((0+1)+2)+(3+4))");
    let mut b = replay("((0+(1+2))+(3+4))");
    let parted = same_order(&mut a, &mut b).unwrap().unwrap_err();
    assert_eq!(
        parted.to_string(),
        "the orders part: the first black box has (0+1) where the second black box has (1+2)"
    );
}

#[test]
fn a_fused_node_is_not_its_binary_split() {
    let fused: SummationTree = "((0+1+2)+3)".parse().unwrap();
    let split: SummationTree = "(((0+1)+2)+3)".parse().unwrap();
    let parted = compare(&fused, "fused", &split, "split").unwrap_err();
    assert_eq!(
        parted.to_string(),
        "the orders part: fused has (0+1+2) where split has (0+1)"
    );
    // And through reveals of the two black boxes.
    let mut a = ReplayProbe::new(Replay::new(&fused, Format::F32), Format::F32);
    let mut b = ReplayProbe::new(Replay::new(&split, Format::F32), Format::F32);
    assert!(same_order(&mut a, &mut b).unwrap().is_err());
}

#[test]
#[should_panic(expected = "the orders part")]
fn assert_same_order_panics_on_a_difference() {
    assert_same_order(&mut replay("((0+1)+(2+3))"), &mut replay("(((0+1)+2)+3)"));
}

#[test]
fn a_snapshot_is_written_when_asked_then_compared() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("order.json");
    // Missing, not asked to write: a clear error.
    let err = check_order(&mut replay("((0+1)+2)"), &path).unwrap_err();
    assert!(err.to_string().contains(UPDATE_VAR), "{err}");
    // Written under FPREV_UPDATE=1 (set only in this test's process, where
    // no other test reads it).
    unsafe { std::env::set_var(UPDATE_VAR, "1") };
    check_order(&mut replay("((0+1)+2)"), &path)
        .unwrap()
        .unwrap();
    unsafe { std::env::remove_var(UPDATE_VAR) };
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("\"tree\": [[0,1],2]")
    );
    // Then the same order passes and another fails, naming the files.
    check_order(&mut replay("(2+(1+0))"), &path)
        .unwrap()
        .unwrap();
    let parted = check_order(&mut replay("(0+(1+2))"), &path)
        .unwrap()
        .unwrap_err();
    assert!(
        parted.to_string().contains("order.json has (0+1)"),
        "{parted}"
    );
}
