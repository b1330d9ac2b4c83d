//! Assert a summation order in your own tests.
//!
//! Your code is a black box: here four chunks summed left to right, the
//! chunk sums then added in pairs. Write down the order you rely on (or save
//! it once from `fprev reveal`), and let the test fail, naming the smallest
//! subtree where the orders part, if the code ever changes it:
//!
//! ```text
//! cargo run --example equivalence
//! ```

use fprev::document::TreeDocument;
use fprev::equivalence::{assert_order, same_order};
use fprev::probe::ReplayProbe;
use fprev::reduce::Replay;
use fprev::{Format, Probe, SummationTree};

/// The code under test.
struct Chunked {
    n: usize,
}

impl Probe for Chunked {
    fn n(&self) -> usize {
        self.n
    }
    fn format(&self) -> Format {
        Format::F64
    }
    fn may_fuse(&self) -> bool {
        false
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> fprev::Result<()> {
        for (x, o) in inputs.chunks_exact(self.n).zip(out) {
            let part: Vec<f64> = x.chunks(self.n / 4).map(|p| p.iter().sum()).collect();
            *o = (part[0] + part[1]) + (part[2] + part[3]);
        }
        Ok(())
    }
}

/// The order the code is meant to have, written from its description.
fn intended(n: usize) -> SummationTree {
    let chunk = |c: usize| {
        let lo = c * n / 4;
        (lo + 1..(c + 1) * n / 4).fold(lo.to_string(), |s, i| format!("({s}+{i})"))
    };
    format!("(({}+{})+({}+{}))", chunk(0), chunk(1), chunk(2), chunk(3))
        .parse()
        .expect("a tree in text form")
}

fn main() {
    let n = 16;
    // As a snapshot file, the way a test suite keeps it.
    let path = std::env::temp_dir().join("fprev-example-chunked.json");
    std::fs::write(&path, TreeDocument::new(intended(n)).to_json()).expect("a temporary file");
    assert_order(&mut Chunked { n }, &path);
    println!("Chunked sums in the order saved in {}", path.display());

    // Against another black box: the intended tree replayed, and a pairwise sum.
    let mut replay = ReplayProbe::new(Replay::new(&intended(n), Format::F64), Format::F64);
    println!(
        "vs its replay: {:?}",
        same_order(&mut Chunked { n }, &mut replay).map(|r| r.is_ok())
    );
    let mut pairwise = fprev::open(
        "native:pairwise",
        &fprev::probe::ProbeOptions {
            n: Some(n),
            format: Format::F64,
            ..Default::default()
        },
    )
    .expect("a native order");
    if let Ok(Err(parted)) = same_order(&mut Chunked { n }, &mut pairwise) {
        println!("vs native:pairwise: {parted}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fprev::equivalence::assert_same_order;

    #[test]
    fn the_chunked_sum_keeps_its_intended_order() {
        for n in [4, 8, 64] {
            let mut replay = ReplayProbe::new(Replay::new(&intended(n), Format::F64), Format::F64);
            assert_same_order(&mut Chunked { n }, &mut replay);
        }
    }

    #[test]
    #[should_panic(
        expected = "the orders part: the first black box has ((0+1)+2) where the second black box has (2+3)"
    )]
    fn a_different_order_fails_naming_where_they_part() {
        let opts = fprev::probe::ProbeOptions {
            n: Some(16),
            format: Format::F64,
            ..Default::default()
        };
        let mut pairwise = fprev::open("native:pairwise", &opts).unwrap();
        assert_same_order(&mut Chunked { n: 16 }, &mut pairwise);
    }
}
