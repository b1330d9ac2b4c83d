use fprev::probe::{ProbeOptions, ReplayProbe};
use fprev::reduce::Replay;
use fprev::reveal::Algorithm;
use fprev::{Format, Options, Order, SummationTree, reveal};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args[1].parse().unwrap();
    let dtype = if args.get(2).map(|s| s.as_str()) == Some("f64") {
        Format::F64
    } else {
        Format::F32
    };
    let algo: Algorithm = args.get(3).map(|s| s.parse().unwrap()).unwrap_or_default();
    let shapes = [
        "sequential",
        "reverse",
        "pairwise",
        "strided:8",
        "blocked:64",
        "binary-tree",
        "random",
        "fused:17",
    ];
    for shape in shapes {
        let (mut bb, expected): (Box<dyn fprev::probe::Probe>, SummationTree) = if shape == "random"
        {
            let t = SummationTree::random(n, 2, 1);
            let replay = Replay::new(&t, dtype);
            (Box::new(ReplayProbe::new(replay, dtype)), t)
        } else {
            let opts = ProbeOptions {
                n: Some(n),
                format: dtype,
                ..Default::default()
            };
            let bb = fprev::open(&format!("native:{shape}"), &opts).unwrap();
            let order: Order = shape.parse().unwrap();
            (bb, order.tree(n))
        };
        let t0 = std::time::Instant::now();
        let o = Options {
            algorithm: algo,
            ..Default::default()
        };
        let r = reveal(bb.as_mut(), &o).unwrap().revealed().unwrap();
        println!(
            "{shape:12} n={n} calls={} ({:.3}n) queries={} ok={} {:.2}s",
            r.stats.calls,
            r.stats.calls as f64 / n as f64,
            r.stats.queries,
            r.tree == expected,
            t0.elapsed().as_secs_f64()
        );
    }
}
