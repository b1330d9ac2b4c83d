# The dot product of blas:dot (f32) as it is on the machine that wrote this: /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so (OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64).
# The order: fprev explain's formula (from the cache), found from n = 1..40,63..65,100,127..129,200,255..257,300,511..513,1000,1023..1025,2048 and checked at n = 4096,16384,65536.
# Each part's arithmetic: from reveals at n = 1000, each confirmed by replay.
# Checked: compiled and run against blas:dot on this machine, bit for bit, on 3 random inputs at each n = 1..1024,2048,4096,8192,16384,32768,65536,131072,262144,524288,1048576 (9.2 s).
#
# The order: native:body(32, interleave(32, sequential, interleave(4, pairwise, pairwise)), sequential)
#   part 0, body(32, interleave(32, sequential, interleave(4, pairwise, …: f64 additions; products exact first, exact after
#   part 1, interleave(32, sequential, interleave(4, pairwise, pairwise)…: f32 additions; products exact first, exact after (not seen in the model: its default)
#   part 2, sequential: f32 additions; products f32 first, exact after
#   part 3, interleave(4, pairwise, pairwise): f32 additions; products exact first, exact after (not seen in the model: its default)
#   part 4, pairwise: f32 additions; products exact first, exact after
#   part 5, pairwise: f32 additions; products exact first, exact after
#   part 6, sequential: f64 additions; products f32 first, f32 after
#
# Each addition is rounded once to its part's format: an f64 addition is
# Python's, an f32 addition of f32 values NumPy's float32 one, any other f32
# addition the exact sum rounded once (through round-to-odd). Only NumPy's
# elementwise arithmetic is used, never a library reduction.
# Written by fprev 0.1.0.

import struct

import numpy as np


class _FprevInputs:
    """The inputs, and each kind of value read from them made once: 'x' (an
    input), 'p' (a product in f64, exact of f32 values), 'p32' (a product
    rounded to f32), as an array of a dtype or a list of floats."""

    def __init__(self, x, y):
        self.x, self.y, self.made = x, y, {}

    def array(self, kind, dtype=np.float64):
        key = (kind, dtype)
        if key not in self.made:
            if kind == 'x':
                v = self.x
            else:
                v = self.x.astype(np.float64) * self.y.astype(np.float64)
                if kind == 'p32':
                    v = v.astype(np.float32)
            self.made[key] = v.astype(dtype, copy=False)
        return self.made[key]

    def values(self, kind):
        key = (kind, list)
        if key not in self.made:
            self.made[key] = self.array(kind).tolist()
        return self.made[key]

    def rotated(self, o, s, n, by):
        """The n inputs from o by s, from the (by % n)-th on, then the first."""
        start = by % n

        def turn(a):
            v = a[o:o + n * s:s]
            return np.concatenate((v[start:], v[:start]))

        return _FprevInputs(turn(self.x), None if self.y is None else turn(self.y))


def _fprev_fin(c, v):
    if c is not None:
        c[0] = 0.0
    return v


def _fprev_add_f32(p, q):
    """p + q rounded once to f32: their double sum rounded to odd (a sticky
    last bit where it is inexact), then to f32, which 53 bits hold without
    a second rounding."""
    s = p + q
    bp = s - q
    bq = s - bp
    e = (p - bp) + (q - bq)
    if e != 0.0 and s - s == 0.0:
        bits = struct.unpack('<Q', struct.pack('<d', s))[0]
        if bits & 1 == 0:
            bits = bits + 1 if (e > 0) == (s > 0) else bits - 1
        s = struct.unpack('<d', struct.pack('<Q', bits))[0]
    return float(np.float32(s))


def _fprev_lanes(v, w, o, s, n, k, dtype, add):
    """k lanes of the n values from o by s, lane r summing values r, r + k,
    ... left to right: its first from v, the rest added from w by add, all
    lanes one step at a time as one array of dtype."""
    rows = n // k
    acc = np.array(v[o:o + k * s:s], dtype)
    w = w[o:o + n * s:s]
    for row in w[:rows * k].reshape(rows, k)[1:]:
        acc = add(acc, row)
    rest = n - rows * k
    if rest:
        acc[:rest] = add(acc[:rest], w[rows * k:])
    return acc.tolist()


def _fprev_add_f32_each(acc, p):
    """acc + p rounded once to f32, elementwise (of f32 or f64 values, such
    as exact products): the double sum rounded to odd, then to f32."""
    a = acc.astype(np.float64)
    s = a + p
    bp = s - p
    bq = s - bp
    e = (a - bp) + (p - bq)
    bits = s.view(np.uint64)
    # Rounded to odd: toward zero (one step down where s is past the exact
    # sum), the last bit set; where the sum is exact (or not finite: e is
    # then NaN), s itself.
    past = ((e * s) < 0).astype(np.uint64)
    odd = (bits - past) | np.uint64(1)
    return np.where(np.abs(e) > 0, odd, bits).view(np.float64).astype(np.float32)


def _blas_dot_f32_a0(p, q):
    return p + q


def _blas_dot_f32_a1(p, q):
    return _fprev_add_f32(p, q)


def _blas_dot_f32_a2(p, q):
    return _fprev_add_f32(p, q)


def _blas_dot_f32_p2x(x, o, s, n, planned, c):
    vf = x.values('p32')
    vs = x.values('p')
    acc = vf[o]
    for q in vs[o + s:o + n * s:s]:
        acc = _blas_dot_f32_a2(acc, q)
    return _fprev_fin(c, acc)


def _blas_dot_f32_a3(p, q):
    return _fprev_add_f32(p, q)


def _blas_dot_f32_a4(p, q):
    return _fprev_add_f32(p, q)


def _blas_dot_f32_r4v(vf, vs, o, s, n, second):
    if n == 1:
        return vs[o] if second else vf[o]
    if n == 2:
        return _blas_dot_f32_a4(vf[o], vs[o + s])
    h = n // 2
    return _blas_dot_f32_a4(_blas_dot_f32_r4v(vf, vs, o, s, h, False), _blas_dot_f32_r4v(vf, vs, o + h * s, s, n - h, True))


def _blas_dot_f32_p4v(x, o, s, n, planned, c):
    return _fprev_fin(c, _blas_dot_f32_r4v(x, x, o, s, n, False))


def _blas_dot_f32_a5(p, q):
    return _fprev_add_f32(p, q)


def _blas_dot_f32_r5v(vf, vs, o, s, n, second):
    if n == 1:
        return vs[o] if second else vf[o]
    if n == 2:
        return _blas_dot_f32_a5(vf[o], vs[o + s])
    h = n // 2
    return _blas_dot_f32_a5(_blas_dot_f32_r5v(vf, vs, o, s, h, False), _blas_dot_f32_r5v(vf, vs, o + h * s, s, n - h, True))


def _blas_dot_f32_p5v(x, o, s, n, planned, c):
    return _fprev_fin(c, _blas_dot_f32_r5v(x, x, o, s, n, False))


def _blas_dot_f32_p3v(x, o, s, n, planned, c):
    k = min(4, n)
    shortest = n // k
    lanes = [_blas_dot_f32_p4v(x, o + r * s, s * k, (n - r + k - 1) // k, shortest, None) for r in range(k)]
    return _blas_dot_f32_p5v(lanes, 0, 1, k, k, c)


def _blas_dot_f32_p1x(x, o, s, n, planned, c):
    k = min(32, n)
    shortest = n // k
    if k == 32:
        lanes = _fprev_lanes(x.array('p32', np.float64), x.array('p', np.float64), o, s, n, k, np.float64, _fprev_add_f32_each)
    else:
        lanes = [_blas_dot_f32_p2x(x, o + r * s, s * k, (n - r + k - 1) // k, shortest, None) for r in range(k)]
    return _blas_dot_f32_p3v(lanes, 0, 1, k, k, c)


def _blas_dot_f32_a6(p, q):
    return p + q


def _blas_dot_f32_p6x(x, o, s, n, planned, c):
    vf = vs = x.values('p32')
    acc = vf[o]
    for q in vs[o + s:o + n * s:s]:
        acc = _blas_dot_f32_a6(acc, q)
    return _fprev_fin(c, acc)


def _blas_dot_f32_p0x(x, o, s, n, planned, c):
    cut = planned - planned % 32
    if cut == 0:
        return _blas_dot_f32_p6x(x, o, s, n, planned, c)
    if cut >= n:
        return _blas_dot_f32_p1x(x, o, s, n, cut, c)
    total = _blas_dot_f32_p1x(x, o, s, cut, cut, None)
    r = _blas_dot_f32_p6x(x, o + cut * s, s, n - cut, planned - cut, None)
    return _fprev_fin(c, _blas_dot_f32_a0(total, r))


def blas_dot_f32(x, y):
    """The dot product of x and y (1-D, taken as np.float32), as a np.float32, bit for bit as described above."""
    x, y = np.asarray(x, np.float32), np.asarray(y, np.float32)
    if len(x) != len(y):
        raise ValueError('x and y differ in length')
    inputs = _FprevInputs(x, y)
    n = len(x)
    if n == 0:
        return np.float32(0)
    with np.errstate(all='ignore'):
        return np.float32(_blas_dot_f32_p0x(inputs, 0, 1, n, n, None))
