use fprev::probe::{self, Batch, ProbeOptions};
use std::time::Instant;
#[test]
fn scratch() {
    let n = 16384;
    let opts = ProbeOptions {
        n: Some(n),
        ..Default::default()
    };
    let mut p = probe::open("numpy:sum", &opts).unwrap();
    let base = vec![1.0; n];
    let mut out = [0.0];
    for trial in 0..3 {
        let t = Instant::now();
        let k = 50000;
        for i in 0..k {
            let starts = [0usize, 2];
            let pos = [i % n, (i + 1) % n];
            let vals = [1.0, 1.0];
            let b = Batch {
                base: &base,
                starts: &starts,
                positions: &pos,
                values: &vals,
                continues: i > 0,
            };
            p.sum_batch(&b, &mut out).unwrap();
        }
        eprintln!(
            "trial {trial}: {:.3} us per single-input call",
            t.elapsed().as_secs_f64() / k as f64 * 1e6
        );
    }
}
