// The sum of jax:sum (f32) as it is on the machine that wrote this.
// The order: fprev explain's formula, found from n = 1..40,63..65,100,127..129,200,255..257,300,511..513,1000,1023..1025,2048 and checked at n = 4096,16384,65536.
// Each part's arithmetic: from reveals at n = 1000,5096, each confirmed by replay.
// Checked: compiled and run against jax:sum on this machine, bit for bit, on 3 random inputs at each n = 1..1024,2048,4096,8192,16384,32768,65536,131072,262144,524288,1048576 (39.0 s).
//
// The order: native:below(4096, windows(32, sequential), blocks(32768, interleave(16, body(64, blocks(64, windows(4, sequential), sequential), pieces(16, 4, windows(4, sequential))), fold), fold))
//   part 0, below(4096, windows(32, sequential), blocks(32768, interleav…: f32 additions (not seen in the model: its default)
//   part 1, windows(32, sequential): f32 additions (not seen in the model: its default)
//   part 2, sequential: f32 additions
//   part 3, blocks(32768, interleave(16, body(64, blocks(64, windows(4, …: f32 additions (not seen in the model: its default)
//   part 4, interleave(16, body(64, blocks(64, windows(4, sequential), s…: f32 additions (not seen in the model: its default)
//   part 5, body(64, blocks(64, windows(4, sequential), sequential), pie…: f32 additions, Kahan steps (the last drops its error)
//   part 6, blocks(64, windows(4, sequential), sequential): f32 additions (not seen in the model: its default)
//   part 7, windows(4, sequential): f32 additions (not seen in the model: its default)
//   part 8, sequential: f32 additions
//   part 9, sequential: f32 additions, Kahan steps
//   part 10, pieces(16, 4, windows(4, sequential)): f32 additions
//   part 11, windows(4, sequential): f32 additions (not seen in the model: its default)
//   part 12, sequential: f32 additions
//   part 13, fold: f32 additions
//   part 14, fold: f32 additions (not seen in the model: its default)
//
// Compile: rustc --crate-type cdylib -C opt-level=3 -C target-cpu=native (Rust 1.82 or later),
// or include it as a module. Rust neither reorders nor contracts floating-point
// operations (it has no fast-math), so no flag is needed to keep them. Each addition
// is rounded once to its part's format.
// It depends on no crate: it needs core and alloc (declared below; a #![no_std] crate needs `extern crate alloc;`
// and a global allocator).
// Written by fprev 0.1.0.

extern crate alloc;

fn fin(c: Option<&mut f64>, v: f64) -> f64 {
    if let Some(c) = c {
        *c = 0.0;
    }
    v
}

fn a9(p: f64, q: f64) -> f64 {
    f64::from(p as f32 + q as f32)
}

fn k9(t: &mut f64, e: &mut f64, v: f64) {
    let y = a9(v, -*e);
    let u = a9(*t, y);
    *e = a9(a9(u, -*t), -y);
    *t = u;
}

fn e9(c: Option<&mut f64>, t: f64, e: f64) -> f64 {
    match c {
        Some(c) => {
            *c = e;
            t
        }
        None => a9(t, -e),
    }
}

fn a5(p: f64, q: f64) -> f64 {
    f64::from(p as f32 + q as f32)
}

fn k5(t: &mut f64, e: &mut f64, v: f64) {
    let y = a5(v, -*e);
    let u = a5(*t, y);
    *e = a5(a5(u, -*t), -y);
    *t = u;
}

fn e5(c: Option<&mut f64>, t: f64, e: f64) -> f64 {
    match c {
        Some(c) => {
            *c = e;
            t
        }
        None => t,
    }
}

fn a10(p: f64, q: f64) -> f64 {
    f64::from(p as f32 + q as f32)
}

fn a13(p: f64, q: f64) -> f64 {
    f64::from(p as f32 + q as f32)
}

fn a14(p: f64, q: f64) -> f64 {
    f64::from(p as f32 + q as f32)
}

fn p2x(x: &[f32], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let mut acc = x[0];
    for i in 1..n {
        acc += x[i * s];
    }
    fin(c, f64::from(acc))
}

fn p2v(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let mut acc = x[0] as f32;
    for i in 1..n {
        acc += x[i * s] as f32;
    }
    fin(c, f64::from(acc))
}

fn p1v(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    if n <= 32 {
        return p2v(x, s, n, n, c);
    }
    let m = (n - 1) / 32 + 1;
    let low = (m * 32 - n) / 2;
    let mut sums = alloc::vec![0.0f64; m];
    for (j, sum) in sums.iter_mut().enumerate() {
        let at = (j * 32).saturating_sub(low);
        let end = ((j + 1) * 32 - low).min(n);
        *sum = p2v(&x[at * s..], s, end - at, end - at, None);
    }
    p1v(&sums, 1, m, m, c)
}

fn p1x(x: &[f32], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    if n <= 32 {
        return p2x(x, s, n, n, c);
    }
    let m = (n - 1) / 32 + 1;
    let low = (m * 32 - n) / 2;
    let mut sums = alloc::vec![0.0f64; m];
    for (j, sum) in sums.iter_mut().enumerate() {
        let at = (j * 32).saturating_sub(low);
        let end = ((j + 1) * 32 - low).min(n);
        *sum = p2x(&x[at * s..], s, end - at, end - at, None);
    }
    p1v(&sums, 1, m, m, c)
}

fn p8x(x: &[f32], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let mut acc = x[0];
    for i in 1..n {
        acc += x[i * s];
    }
    fin(c, f64::from(acc))
}

fn p8v(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let mut acc = x[0] as f32;
    for i in 1..n {
        acc += x[i * s] as f32;
    }
    fin(c, f64::from(acc))
}

fn p7v(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    if n <= 4 {
        return p8v(x, s, n, n, c);
    }
    let m = (n - 1) / 4 + 1;
    let low = (m * 4 - n) / 2;
    let mut sums = alloc::vec![0.0f64; m];
    for (j, sum) in sums.iter_mut().enumerate() {
        let at = (j * 4).saturating_sub(low);
        let end = ((j + 1) * 4 - low).min(n);
        *sum = p8v(&x[at * s..], s, end - at, end - at, None);
    }
    p7v(&sums, 1, m, m, c)
}

fn p7x(x: &[f32], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    if n <= 4 {
        return p8x(x, s, n, n, c);
    }
    let m = (n - 1) / 4 + 1;
    let low = (m * 4 - n) / 2;
    let mut sums = alloc::vec![0.0f64; m];
    for (j, sum) in sums.iter_mut().enumerate() {
        let at = (j * 4).saturating_sub(low);
        let end = ((j + 1) * 4 - low).min(n);
        *sum = p8x(&x[at * s..], s, end - at, end - at, None);
    }
    p7v(&sums, 1, m, m, c)
}

fn p9v(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let mut t = x[0];
    let mut e = 0.0;
    for i in 1..n {
        k9(&mut t, &mut e, x[i * s]);
    }
    e9(c, t, e)
}

fn p6x(x: &[f32], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let m = (n - 1) / 64 + 1;
    let mut sums = alloc::vec![0.0f64; m];
    for (j, sum) in sums.iter_mut().enumerate() {
        let at = j * 64;
        let len = if n - at < 64 { n - at } else { 64 };
        *sum = p7x(&x[at * s..], s, len, len, None);
    }
    p9v(&sums, 1, m, m, c)
}

fn p12x(x: &[f32], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let mut acc = x[0];
    for i in 1..n {
        acc += x[i * s];
    }
    fin(c, f64::from(acc))
}

fn p12v(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let mut acc = x[0] as f32;
    for i in 1..n {
        acc += x[i * s] as f32;
    }
    fin(c, f64::from(acc))
}

fn p11v(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    if n <= 4 {
        return p12v(x, s, n, n, c);
    }
    let m = (n - 1) / 4 + 1;
    let low = (m * 4 - n) / 2;
    let mut sums = alloc::vec![0.0f64; m];
    for (j, sum) in sums.iter_mut().enumerate() {
        let at = (j * 4).saturating_sub(low);
        let end = ((j + 1) * 4 - low).min(n);
        *sum = p12v(&x[at * s..], s, end - at, end - at, None);
    }
    p11v(&sums, 1, m, m, c)
}

fn p11x(x: &[f32], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    if n <= 4 {
        return p12x(x, s, n, n, c);
    }
    let m = (n - 1) / 4 + 1;
    let low = (m * 4 - n) / 2;
    let mut sums = alloc::vec![0.0f64; m];
    for (j, sum) in sums.iter_mut().enumerate() {
        let at = (j * 4).saturating_sub(low);
        let end = ((j + 1) * 4 - low).min(n);
        *sum = p12x(&x[at * s..], s, end - at, end - at, None);
    }
    p11v(&sums, 1, m, m, c)
}

fn p10x(x: &[f32], s: usize, n: usize, planned: usize, c: Option<&mut f64>) -> f64 {
    let mut at = 0;
    let mut sum: Option<f64> = None;
    while at < planned && planned - at >= 16 {
        let p = p11x(&x[at * s..], s, 16, 16, None);
        sum = Some(sum.map_or(p, |sum| a10(sum, p)));
        at += 16;
    }
    while at < planned && planned - at >= 4 {
        let p = p11x(&x[at * s..], s, 4, 4, None);
        sum = Some(sum.map_or(p, |sum| a10(sum, p)));
        at += 4;
    }
    if at < n {
        let p = p11x(&x[at * s..], s, n - at, n - at, None);
        sum = Some(sum.map_or(p, |sum| a10(sum, p)));
    }
    fin(c, sum.unwrap_or(0.0))
}

fn p5x(x: &[f32], s: usize, n: usize, planned: usize, c: Option<&mut f64>) -> f64 {
    let cut = planned - planned % 64;
    let mut e = 0.0;
    if cut == 0 {
        return p10x(x, s, n, planned, c);
    }
    if cut >= n {
        return p6x(x, s, n, cut, c);
    }
    let mut sum = p6x(x, s, cut, cut, Some(&mut e));
    let r = p10x(&x[cut * s..], s, n - cut, planned - cut, None);
    k5(&mut sum, &mut e, r);
    e5(c, sum, e)
}

fn r13v(x: &[f64], s: usize, n: usize, _second: bool) -> f64 {
    if n == 1 {
        return x[0];
    }
    let e = r13v(x, s * 2, (n + 1) / 2, false);
    let o = r13v(&x[s..], s * 2, n / 2, true);
    a13(e, o)
}

fn p13v(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    fin(c, r13v(x, s, n, false))
}

fn p4x(x: &[f32], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let k = n.min(16);
    let shortest = n / k;
    let mut lanes = [0.0f64; 16];
    for (r, lane) in lanes.iter_mut().take(k).enumerate() {
        *lane = p5x(&x[r * s..], s * k, (n - r).div_ceil(k), shortest, None);
    }
    p13v(&lanes, 1, k, k, c)
}

fn r14v(x: &[f64], s: usize, n: usize, _second: bool) -> f64 {
    if n == 1 {
        return x[0];
    }
    let e = r14v(x, s * 2, (n + 1) / 2, false);
    let o = r14v(&x[s..], s * 2, n / 2, true);
    a14(e, o)
}

fn p14v(x: &[f64], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    fin(c, r14v(x, s, n, false))
}

fn p3x(x: &[f32], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    let m = (n - 1) / 32768 + 1;
    let mut sums = alloc::vec![0.0f64; m];
    for (j, sum) in sums.iter_mut().enumerate() {
        let at = j * 32768;
        let len = if n - at < 32768 { n - at } else { 32768 };
        *sum = p4x(&x[at * s..], s, len, len, None);
    }
    p14v(&sums, 1, m, m, c)
}

fn p0x(x: &[f32], s: usize, n: usize, _planned: usize, c: Option<&mut f64>) -> f64 {
    if n < 4096 {
        p1x(x, s, n, n, c)
    } else {
        p3x(x, s, n, n, c)
    }
}

/// The sum of `x`, bit for bit as described above.
pub fn jax_sum_f32(x: &[f32]) -> f32 {
    if x.is_empty() {
        return 0.0;
    }
    let v = p0x(x, 1, x.len(), x.len(), None);
    v as f32
}

/// [`jax_sum_f32`] for C: the sum of `x[0..n)`.
///
/// # Safety
/// `x` points to `n` values (any pointer where `n` is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn jax_sum_f32_c(x: *const f32, n: usize) -> f32 {
    if n == 0 {
        return 0.0;
    }
    // SAFETY: the caller passes `n` values.
    jax_sum_f32(unsafe { core::slice::from_raw_parts(x, n) })
}
