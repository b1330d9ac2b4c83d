// The dot product of blas:dot (f32) as it is on the machine that wrote this: /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so (OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64).
// The order: fprev explain's formula, found from n = 1..40,63..65,100,127..129,200,255..257,300,511..513,1000,1023..1025,2048 and checked at n = 4096,16384,65536.
// Each part's arithmetic: from reveals at n = 1000, each confirmed by replay.
// Checked: compiled and run against blas:dot on this machine, bit for bit, on 3 random inputs at each n = 1..1024,2048,4096,8192,16384,32768,65536,131072,262144,524288,1048576 (0.3 s).
//
// The order: native:body(32, interleave(32, sequential, interleave(4, pairwise, pairwise)), sequential)
//   part 0, body(32, interleave(32, sequential, interleave(4, pairwise, …: f64 additions; products exact first, exact after
//   part 1, interleave(32, sequential, interleave(4, pairwise, pairwise)…: f32 additions; products exact first, exact after (not seen in the model: its default)
//   part 2, sequential: f32 additions; products f32 first, exact after
//   part 3, interleave(4, pairwise, pairwise): f32 additions; products exact first, exact after (not seen in the model: its default)
//   part 4, pairwise: f32 additions; products exact first, exact after
//   part 5, pairwise: f32 additions; products exact first, exact after
//   part 6, sequential: f64 additions; products f32 first, f32 after
//
// Compile: rustc --crate-type cdylib -C opt-level=3 -C target-cpu=native (Rust 1.82 or later),
// or include it as a module. Rust neither reorders nor contracts floating-point
// operations (it has no fast-math), so no flag is needed to keep them. Each addition
// is rounded once to its part's format.
// It depends on no crate: it needs core only, so it builds under #![no_std],
// and std for f32::mul_add, its fused multiply-adds of exact products (under
// #![no_std], the libm crate's fmaf gives the same bits).
// Written by fprev 0.1.0.

fn fin(c: Option<&mut f64>, v: f64) -> f64 {
    if let Some(c) = c {
        *c = 0.0;
    }
    v
}

// p + q rounded once to f32: their f64 sum rounded to odd (a sticky last bit where it is
// inexact), then to f32, which 53 bits hold without a second rounding.
fn add_f32(p: f64, q: f64) -> f64 {
    let mut s = p + q;
    let bp = s - q;
    let bq = s - bp;
    let e = (p - bp) + (q - bq);
    if e != 0.0 && s.is_finite() {
        let bits = s.to_bits();
        if bits & 1 == 0 {
            s = f64::from_bits(if (e > 0.0) == (s > 0.0) { bits + 1 } else { bits - 1 });
        }
    }
    f64::from(s as f32)
}

fn a4(p: f64, q: f64) -> f64 {
    add_f32(p, q)
}

fn a5(p: f64, q: f64) -> f64 {
    add_f32(p, q)
}

fn a0(p: f64, q: f64) -> f64 {
    p + q
}

fn p2x(x: &[f32], y: &[f32], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let mut acc = x[0] * y[0];
    for i in 1..n {
        acc = x[i * s].mul_add(y[i * s], acc);
    }
    fin(c, f64::from(acc))
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

fn r5v(x: &[f64], s: usize, n: usize, _second: bool) -> f64 {
    if n == 1 {
        return x[0];
    }
    if n == 2 {
        return a5(x[0], x[s]);
    }
    let h = n / 2;
    let l = r5v(x, s, h, false);
    let r = r5v(&x[h * s..], s, n - h, true);
    a5(l, r)
}

fn p5v(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    fin(c, r5v(x, s, n, false))
}

fn p3v(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let k = n.min(4);
    let shortest = n / k;
    let mut lanes = [0.0f64; 4];
    for (r, lane) in lanes.iter_mut().take(k).enumerate() {
        *lane = p4v(&x[r * s..], s * k, (n - r).div_ceil(k), shortest, None);
    }
    p5v(&lanes, 1, k, k, c)
}

fn p1x(x: &[f32], y: &[f32], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let k = n.min(32);
    let shortest = n / k;
    let mut lanes = [0.0f64; 32];
    if k == 32 {
        let full = shortest * 32;
        let mut acc = [0.0f32; 32];
        if s == 1 {
            {
                let (x, y) = (&x[..32], &y[..32]);
                for r in 0..32 {
                    acc[r] = x[r] * y[r];
                }
            }
            for (x, y) in x[32..full]
                .chunks_exact(32)
                .zip(y[32..full].chunks_exact(32))
            {
                for r in 0..32 {
                    acc[r] = x[r].mul_add(y[r], acc[r]);
                }
            }
            {
                let (x, y) = (&x[full..n], &y[full..n]);
                for r in 0..x.len() {
                    acc[r] = x[r].mul_add(y[r], acc[r]);
                }
            }
        } else {
            for r in 0..32 {
                acc[r] = x[r * s] * y[r * s];
            }
            for j in 1..shortest {
                for r in 0..32 {
                    acc[r] = x[(j * 32 + r) * s].mul_add(y[(j * 32 + r) * s], acc[r]);
                }
            }
            for r in 0..n - full {
                acc[r] = x[(full + r) * s].mul_add(y[(full + r) * s], acc[r]);
            }
        }
        for r in 0..32 {
            lanes[r] = f64::from(acc[r]);
        }
    } else {
        for (r, lane) in lanes.iter_mut().take(k).enumerate() {
            *lane = p2x(&x[r * s..], &y[r * s..], s * k, (n - r).div_ceil(k), shortest, None);
        }
    }
    p3v(&lanes, 1, k, k, c)
}

fn p6x(x: &[f32], y: &[f32], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let mut acc = f64::from(x[0] * y[0]);
    for i in 1..n {
        acc += f64::from(x[i * s] * y[i * s]);
    }
    fin(c, acc)
}

fn p0x(x: &[f32], y: &[f32], s: usize, n: usize, planned: usize, c: Option<&mut f64>) -> f64 {
    let cut = planned - planned % 32;
    if cut == 0 {
        return p6x(x, y, s, n, planned, c);
    }
    if cut >= n {
        return p1x(x, y, s, n, cut, c);
    }
    let sum = p1x(x, y, s, cut, cut, None);
    let r = p6x(&x[cut * s..], &y[cut * s..], s, n - cut, planned - cut, None);
    fin(c, a0(sum, r))
}

/// The dot product of `x` and `y`, bit for bit as described above.
///
/// # Panics
/// If `x` and `y` differ in length.
pub fn blas_dot_f32(x: &[f32], y: &[f32]) -> f32 {
    assert_eq!(x.len(), y.len(), "blas_dot_f32: x and y differ in length");
    if x.is_empty() {
        return 0.0;
    }
    let v = p0x(x, y, 1, x.len(), x.len(), None);
    v as f32
}

/// [`blas_dot_f32`] for C: the dot product of `x[0..n)` and `y[0..n)`.
///
/// # Safety
/// `x` and `y` point to `n` values each (any pointers where `n` is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blas_dot_f32_c(x: *const f32, y: *const f32, n: usize) -> f32 {
    if n == 0 {
        return 0.0;
    }
    // SAFETY: the caller passes `n` values of each.
    let (x, y) = unsafe { (core::slice::from_raw_parts(x, n), core::slice::from_raw_parts(y, n)) };
    blas_dot_f32(x, y)
}
