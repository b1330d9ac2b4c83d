//! Reveal the order of your own summation code.
//!
//! A hand-unrolled f32 sum, the way C and Rust code is often written for
//! SIMD: four accumulators, combined pairwise, then the leftover tail added
//! one by one. Plug it into fprev by implementing [`Probe`], reveal it, and
//! print the tree:
//!
//! ```text
//! cargo run --example custom_probe
//! ```

use fprev::reveal::Outcome;
use fprev::{Format, Options, Probe, SummationTree, reveal, shape::Shape};

/// The code under test.
fn unrolled_sum(x: &[f32]) -> f32 {
    let mut acc = [0f32; 4];
    let chunks = x.chunks_exact(4);
    let tail = chunks.remainder();
    for c in chunks {
        for (a, v) in acc.iter_mut().zip(c) {
            *a += v;
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for t in tail {
        s += t;
    }
    s
}

/// `unrolled_sum` as a black box over `n` f32 summands.
struct Unrolled {
    n: usize,
    buf: Vec<f32>,
}

impl Probe for Unrolled {
    fn n(&self) -> usize {
        self.n
    }

    fn format(&self) -> Format {
        Format::F32
    }

    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> fprev::Result<()> {
        for (row, o) in inputs.chunks_exact(self.n).zip(out) {
            // Every input value is an exact f32: the conversion is lossless.
            self.buf.clear();
            self.buf.extend(row.iter().map(|v| *v as f32));
            *o = unrolled_sum(&self.buf) as f64;
        }
        Ok(())
    }
}

fn reveal_unrolled(n: usize) -> SummationTree {
    let mut probe = Unrolled { n, buf: Vec::new() };
    match reveal(&mut probe, &Options::default()) {
        Ok(Outcome::Revealed(r)) => r.tree,
        Ok(Outcome::OrderIndependent(why)) => {
            eprintln!("order-independent: {why:?}");
            std::process::exit(4);
        }
        Ok(Outcome::Varies(v)) => {
            eprintln!(
                "varies: {} of {} inputs gave other bits on other calls",
                v.varied, v.inputs
            );
            std::process::exit(6);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

fn main() {
    let n = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(18);
    let tree = reveal_unrolled(n);
    println!("{tree}");
    println!("# {}", Shape::of(&tree));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order as its definition says, written independently of fprev.
    fn expected(n: usize) -> String {
        let body = n - n % 4;
        let lane = |k: usize| {
            let mut s = k.to_string();
            for i in (k + 4..body).step_by(4) {
                s = format!("({s}+{i})");
            }
            s
        };
        let mut s = format!("(({}+{})+({}+{}))", lane(0), lane(1), lane(2), lane(3));
        for t in body..n {
            s = format!("({s}+{t})");
        }
        s
    }

    #[test]
    fn reveals_the_unrolled_order() {
        for n in [4, 5, 8, 18, 33, 100] {
            let want: SummationTree = expected(n).parse().unwrap();
            assert_eq!(reveal_unrolled(n), want, "n = {n}");
        }
    }
}
