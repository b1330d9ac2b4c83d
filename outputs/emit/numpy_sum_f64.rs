// The sum of numpy:sum (f64) as it is on the machine that wrote this.
// The order: fprev explain's formula, found from n = 1..40,63..65,100,127..129,200,255..257,300,511..513,1000,1023..1025,2048 and checked at n = 4096,16384,65536.
// Each part's arithmetic: from reveals at n = 1000, each confirmed by replay.
// Checked: compiled and run against numpy:sum on this machine, bit for bit, on 3 random inputs at each n = 1..1024,2048,4096,8192,16384,32768,65536,131072,262144,524288,1048576 (0.3 s).
//
// The order: native:halves(128, 8, body(8, interleave(8, sequential, pairwise), then))
//   part 0, halves(128, 8, body(8, interleave(8, sequential, pairwise), …: f64 additions
//   part 1, body(8, interleave(8, sequential, pairwise), then): f64 additions (not seen in the model: its default)
//   part 2, interleave(8, sequential, pairwise): f64 additions (not seen in the model: its default)
//   part 3, sequential: f64 additions
//   part 4, pairwise: f64 additions
//
// Compile: rustc --crate-type cdylib -C opt-level=3 -C target-cpu=native (Rust 1.82 or later),
// or include it as a module. Rust neither reorders nor contracts floating-point
// operations (it has no fast-math), so no flag is needed to keep them. Each addition
// is rounded once to its part's format.
// It depends on no crate: it needs core only, so it builds under #![no_std].
// Written by fprev 0.1.0.

fn fin(c: Option<&mut f64>, v: f64) -> f64 {
    if let Some(c) = c {
        *c = 0.0;
    }
    v
}

fn a4(p: f64, q: f64) -> f64 {
    p + q
}

fn a1(p: f64, q: f64) -> f64 {
    p + q
}

fn a0(p: f64, q: f64) -> f64 {
    p + q
}

fn p3x(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let mut acc = x[0];
    for i in 1..n {
        acc += x[i * s];
    }
    fin(c, acc)
}

fn r4v(x: &[f64], s: usize, n: usize, _second: bool) -> f64 {
    if n == 1 {
        return x[0];
    }
    if n == 2 {
        return a4(x[0], x[s]);
    }
    let h = n / 2;
    let l = r4v(x, s, h, false);
    let r = r4v(&x[h * s..], s, n - h, true);
    a4(l, r)
}

fn p4v(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    fin(c, r4v(x, s, n, false))
}

fn p2x(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let k = n.min(8);
    let shortest = n / k;
    let mut lanes = [0.0f64; 8];
    if k == 8 {
        let full = shortest * 8;
        let mut acc = [0.0f64; 8];
        if s == 1 {
            {
                let x = &x[..8];
                for r in 0..8 {
                    acc[r] = x[r];
                }
            }
            for x in x[8..full].chunks_exact(8) {
                for r in 0..8 {
                    acc[r] += x[r];
                }
            }
            {
                let x = &x[full..n];
                for r in 0..x.len() {
                    acc[r] += x[r];
                }
            }
        } else {
            for r in 0..8 {
                acc[r] = x[r * s];
            }
            for j in 1..shortest {
                for r in 0..8 {
                    acc[r] += x[(j * 8 + r) * s];
                }
            }
            for r in 0..n - full {
                acc[r] += x[(full + r) * s];
            }
        }
        for r in 0..8 {
            lanes[r] = acc[r];
        }
    } else {
        for (r, lane) in lanes.iter_mut().take(k).enumerate() {
            *lane = p3x(&x[r * s..], s * k, (n - r).div_ceil(k), shortest, None);
        }
    }
    p4v(&lanes, 1, k, k, c)
}

fn p1x(x: &[f64], s: usize, n: usize, planned: usize, c: Option<&mut f64>) -> f64 {
    let cut = planned - planned % 8;
    if cut >= n {
        return p2x(x, s, n, cut, c);
    }
    let (mut sum, start) = if cut == 0 {
        (x[0], 1)
    } else {
        (p2x(x, s, cut, cut, None), cut)
    };
    for i in start..n {
        sum = a1(sum, x[i * s]);
    }
    fin(c, sum)
}

fn h0x(x: &[f64], s: usize, n: usize) -> f64 {
    if n <= 128 {
        return p1x(x, s, n, n, None);
    }
    let half = n / 2;
    let cut = match half - half % 8 {
        0 => half,
        cut => cut,
    };
    let l = h0x(x, s, cut);
    let r = h0x(&x[cut * s..], s, n - cut);
    a0(l, r)
}

fn p0x(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    if n <= 128 {
        return p1x(x, s, n, n, c);
    }
    fin(c, h0x(x, s, n))
}

/// The sum of `x`, bit for bit as described above.
pub fn numpy_sum_f64(x: &[f64]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    let v = p0x(x, 1, x.len(), x.len(), None);
    v
}

/// [`numpy_sum_f64`] for C: the sum of `x[0..n)`.
///
/// # Safety
/// `x` points to `n` values (any pointer where `n` is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn numpy_sum_f64_c(x: *const f64, n: usize) -> f64 {
    if n == 0 {
        return 0.0;
    }
    // SAFETY: the caller passes `n` values.
    numpy_sum_f64(unsafe { core::slice::from_raw_parts(x, n) })
}
