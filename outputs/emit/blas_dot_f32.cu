/*
 * The dot product of blas:dot (f32) as it is on the machine that wrote this: /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so (OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64).
 * The order: fprev explain's formula (from the cache), found from n = 1..40,63..65,100,127..129,200,255..257,300,511..513,1000,1023..1025,2048 and checked at n = 4096,16384,65536.
 * Each part's arithmetic: from reveals at n = 1000, each confirmed by replay.
 * Checked: compiled and run against blas:dot on this machine, bit for bit, on 3 random inputs at each n = 1..1024,2048,4096,8192,16384,32768,65536,131072,262144,524288,1048576 (1.5 s).
 *
 * The order: native:body(32, interleave(32, sequential, interleave(4, pairwise, pairwise)), sequential)
 *   part 0, body(32, interleave(32, sequential, interleave(4, pairwise, …: f64 additions; products exact first, exact after
 *   part 1, interleave(32, sequential, interleave(4, pairwise, pairwise)…: f32 additions; products exact first, exact after (not seen in the model: its default)
 *   part 2, sequential: f32 additions; products f32 first, exact after
 *   part 3, interleave(4, pairwise, pairwise): f32 additions; products exact first, exact after (not seen in the model: its default)
 *   part 4, pairwise: f32 additions; products exact first, exact after
 *   part 5, pairwise: f32 additions; products exact first, exact after
 *   part 6, sequential: f64 additions; products f32 first, f32 after
 *
 * Compile: nvcc -O3 (no --use_fast_math, which reorders and contracts additions).
 * Each addition is rounded once to its part's format; FLT_EVAL_METHOD must be 0
 * (SSE or AVX on x86-64, ARM), which is checked below.
 * Written by fprev 0.1.0.
 */
#include <stddef.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if !defined(__CUDACC__) && defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "additions must round to their own type (FLT_EVAL_METHOD 0): use SSE (-msse2 -mfpmath=sse)"
#endif

static __device__ double fprev_fin(double *c, double v) {
    if (c) *c = 0.0;
    return v;
}

/* p + q rounded once to f32: their double sum rounded to odd (a sticky last bit where it is inexact),
 * then to f32, which 53 bits hold without a second rounding. */
static __device__ double fprev_add_f32(double p, double q) {
    double s = p + q;
    double bp = s - q, bq = s - bp;
    double e = (p - bp) + (q - bq);
    if (e != 0.0 && s - s == 0.0) {
        uint64_t bits;
        memcpy(&bits, &s, sizeof s);
        if ((bits & 1) == 0) bits = ((e > 0) == (s > 0)) ? bits + 1 : bits - 1;
        memcpy(&s, &bits, sizeof s);
    }
    return (double)(float)s;
}

static __device__ double p0x(const float *x, const float *y, size_t s, size_t n, size_t planned, double *c);
static __device__ double a0(double p, double q) { return p + q; }
static __device__ double p1x(const float *x, const float *y, size_t s, size_t n, size_t planned, double *c);
static __device__ double a1(double p, double q) { return fprev_add_f32(p, q); }
static __device__ double p2x(const float *x, const float *y, size_t s, size_t n, size_t planned, double *c);
static __device__ double a2(double p, double q) { return fprev_add_f32(p, q); }
static __device__ double p3v(const double *x, size_t s, size_t n, size_t planned, double *c);
static __device__ double a3(double p, double q) { return fprev_add_f32(p, q); }
static __device__ double p4v(const double *x, size_t s, size_t n, size_t planned, double *c);
static __device__ double a4(double p, double q) { return fprev_add_f32(p, q); }
static __device__ double r4v(const double *x, size_t s, size_t n, int second);
static __device__ double p5v(const double *x, size_t s, size_t n, size_t planned, double *c);
static __device__ double a5(double p, double q) { return fprev_add_f32(p, q); }
static __device__ double r5v(const double *x, size_t s, size_t n, int second);
static __device__ double p6x(const float *x, const float *y, size_t s, size_t n, size_t planned, double *c);
static __device__ double a6(double p, double q) { return p + q; }

static __device__ double p2x(const float *x, const float *y, size_t s, size_t n, size_t planned, double *c) {
    (void)planned;
    float acc = x[(0) * s] * y[(0) * s];
    for (size_t i = 1; i < n; i++) acc = fmaf(x[(i) * s], y[(i) * s], acc);
    return fprev_fin(c, (double)acc);
}

static __device__ double r4v(const double *x, size_t s, size_t n, int second) {
    if (n == 1) return second ? x[(0) * s] : x[(0) * s];
    if (n == 2) return a4(x[(0) * s], x[(1) * s]);
    size_t h = n / 2;
    double l = r4v(x, s, h, 0);
    double r = r4v(x + (h) * s, s * (1), n - h, 1);
    return a4(l, r);
}

static __device__ double p4v(const double *x, size_t s, size_t n, size_t planned, double *c) {
    (void)planned;
    return fprev_fin(c, r4v(x, s, n, 0));
}

static __device__ double r5v(const double *x, size_t s, size_t n, int second) {
    if (n == 1) return second ? x[(0) * s] : x[(0) * s];
    if (n == 2) return a5(x[(0) * s], x[(1) * s]);
    size_t h = n / 2;
    double l = r5v(x, s, h, 0);
    double r = r5v(x + (h) * s, s * (1), n - h, 1);
    return a5(l, r);
}

static __device__ double p5v(const double *x, size_t s, size_t n, size_t planned, double *c) {
    (void)planned;
    return fprev_fin(c, r5v(x, s, n, 0));
}

static __device__ double p3v(const double *x, size_t s, size_t n, size_t planned, double *c) {
    size_t k = 4 < n ? 4 : n;
    size_t shortest = n / k;
    double lanes[4];
    for (size_t r = 0; r < k; r++)
            lanes[r] = p4v(x + (r) * s, s * (k), (n - r + k - 1) / k, shortest, NULL);
    double out = p5v(lanes, 1, k, k, c);
    return out;
}

static __device__ double p1x(const float *x, const float *y, size_t s, size_t n, size_t planned, double *c) {
    size_t k = 32 < n ? 32 : n;
    size_t shortest = n / k;
    double lanes[32];
    if (k == 32) {
        float acc[32];
        if (s == 1) {
            for (size_t r = 0; r < 32; r++) acc[r] = x[(r) * 1] * y[(r) * 1];
            for (size_t i = 1; i < shortest; i++)
   for (size_t r = 0; r < 32; r++) acc[r] = fmaf(x[(i * 32 + r) * 1], y[(i * 32 + r) * 1], acc[r]);
            for (size_t r = 0; r < n - shortest * 32; r++) acc[r] = fmaf(x[(shortest * 32 + r) * 1], y[(shortest * 32 + r) * 1], acc[r]);
        } else {
            for (size_t r = 0; r < 32; r++) acc[r] = x[(r) * s] * y[(r) * s];
            for (size_t i = 1; i < shortest; i++)
   for (size_t r = 0; r < 32; r++) acc[r] = fmaf(x[(i * 32 + r) * s], y[(i * 32 + r) * s], acc[r]);
            for (size_t r = 0; r < n - shortest * 32; r++) acc[r] = fmaf(x[(shortest * 32 + r) * s], y[(shortest * 32 + r) * s], acc[r]);
        }
        for (size_t r = 0; r < 32; r++) lanes[r] = (double)acc[r];
    } else {
        for (size_t r = 0; r < k; r++)
            lanes[r] = p2x(x + (r) * s, y + (r) * s, s * (k), (n - r + k - 1) / k, shortest, NULL);
    }
    double out = p3v(lanes, 1, k, k, c);
    return out;
}

static __device__ double p6x(const float *x, const float *y, size_t s, size_t n, size_t planned, double *c) {
    (void)planned;
    double acc = (double)(double)(x[(0) * s] * y[(0) * s]);
    for (size_t i = 1; i < n; i++) acc = acc + (double)(x[(i) * s] * y[(i) * s]);
    return fprev_fin(c, (double)acc);
}

static __device__ double p0x(const float *x, const float *y, size_t s, size_t n, size_t planned, double *c) {
    size_t cut = planned - planned % 32;
    if (cut == 0) return p6x(x, y, s, n, planned, c);
    if (cut >= n) return p1x(x, y, s, n, cut, c);
    double e = 0.0;
    double sum = p1x(x + (0) * s, y + (0) * s, s * (1), cut, cut, NULL);
    double r = p6x(x + (cut) * s, y + (cut) * s, s * (1), n - cut, planned - cut, NULL);
    (void)e;
    return fprev_fin(c, a0(sum, r));
}

/* The dot product of x[0..n) and y[0..n), bit for bit as described above. */
__device__ float blas_dot_f32(const float *x, const float *y, size_t n) {
    if (n == 0) return 0;
    return (float)p0x(x, y, 1, n, n, NULL);
}

#ifdef __CUDACC__
/* One thread computes the whole sum: the order is sequential where the library's is.
 * Launch as blas_dot_f32_kernel<<<1, 1>>>(...). */
extern "C" __global__ void blas_dot_f32_kernel(const float *x, const float *y, size_t n, float *out) {
    if (threadIdx.x == 0 && blockIdx.x == 0) *out = blas_dot_f32(x, y, n);
}
#endif
