/*
 * The sum of numpy:sum (f32) as it is on the machine that wrote this.
 * The order: fprev explain's formula (from the cache), found from n = 1..40,63..65,100,127..129,200,255..257,300,511..513,1000,1023..1025,2048 and checked at n = 4096,16384,65536.
 * Each part's arithmetic: from reveals at n = 1000, each confirmed by replay.
 * Checked: compiled and run against numpy:sum on this machine, bit for bit, on 3 random inputs at each n = 1..1024,2048,4096,8192,16384,32768,65536,131072,262144,524288,1048576 (0.3 s).
 *
 * The order: native:halves(128, 8, body(8, interleave(8, sequential, pairwise), then))
 *   part 0, halves(128, 8, body(8, interleave(8, sequential, pairwise), …: f32 additions
 *   part 1, body(8, interleave(8, sequential, pairwise), then): f32 additions (not seen in the model: its default)
 *   part 2, interleave(8, sequential, pairwise): f32 additions (not seen in the model: its default)
 *   part 3, sequential: f32 additions
 *   part 4, pairwise: f32 additions
 *
 * Compile: nvcc -O3 (no --use_fast_math, which reorders and contracts additions).
 * Each addition is rounded once to its part's format; FLT_EVAL_METHOD must be 0
 * (SSE or AVX on x86-64, ARM), which is checked below.
 * Written by fprev 0.1.0.
 */
#include <stddef.h>
#include <float.h>
#include <math.h>

#if !defined(__CUDACC__) && defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "additions must round to their own type (FLT_EVAL_METHOD 0): use SSE (-msse2 -mfpmath=sse)"
#endif

static __device__ double fprev_fin(double *c, double v) {
    if (c) *c = 0.0;
    return v;
}

static __device__ double p0x(const float *x, size_t s, size_t n, size_t planned, double *c);
static __device__ double a0(double p, double q) { return (double)((float)p + (float)q); }
static __device__ double p1x(const float *x, size_t s, size_t n, size_t planned, double *c);
static __device__ double a1(double p, double q) { return (double)((float)p + (float)q); }
static __device__ double p2x(const float *x, size_t s, size_t n, size_t planned, double *c);
static __device__ double a2(double p, double q) { return (double)((float)p + (float)q); }
static __device__ double p3x(const float *x, size_t s, size_t n, size_t planned, double *c);
static __device__ double a3(double p, double q) { return (double)((float)p + (float)q); }
static __device__ double p4v(const double *x, size_t s, size_t n, size_t planned, double *c);
static __device__ double a4(double p, double q) { return (double)((float)p + (float)q); }
static __device__ double r4v(const double *x, size_t s, size_t n, int second);
static __device__ double h0x(const float *x, size_t s, size_t n);

static __device__ double p3x(const float *x, size_t s, size_t n, size_t planned, double *c) {
    (void)planned;
    float acc = x[(0) * s];
    for (size_t i = 1; i < n; i++) acc = acc + x[(i) * s];
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

static __device__ double p2x(const float *x, size_t s, size_t n, size_t planned, double *c) {
    size_t k = 8 < n ? 8 : n;
    size_t shortest = n / k;
    double lanes[8];
    if (k == 8) {
        float acc[8];
        if (s == 1) {
            for (size_t r = 0; r < 8; r++) acc[r] = x[(r) * 1];
            for (size_t i = 1; i < shortest; i++)
   for (size_t r = 0; r < 8; r++) acc[r] = acc[r] + x[(i * 8 + r) * 1];
            for (size_t r = 0; r < n - shortest * 8; r++) acc[r] = acc[r] + x[(shortest * 8 + r) * 1];
        } else {
            for (size_t r = 0; r < 8; r++) acc[r] = x[(r) * s];
            for (size_t i = 1; i < shortest; i++)
   for (size_t r = 0; r < 8; r++) acc[r] = acc[r] + x[(i * 8 + r) * s];
            for (size_t r = 0; r < n - shortest * 8; r++) acc[r] = acc[r] + x[(shortest * 8 + r) * s];
        }
        for (size_t r = 0; r < 8; r++) lanes[r] = (double)acc[r];
    } else {
        for (size_t r = 0; r < k; r++)
            lanes[r] = p3x(x + (r) * s, s * (k), (n - r + k - 1) / k, shortest, NULL);
    }
    double out = p4v(lanes, 1, k, k, c);
    return out;
}

static __device__ double p1x(const float *x, size_t s, size_t n, size_t planned, double *c) {
    size_t cut = planned - planned % 8;
    if (cut >= n) return p2x(x, s, n, cut, c);
    double e = 0.0, sum;
    size_t i = 1;
    if (cut == 0) sum = (double)x[(0) * s];
    else { sum = p2x(x + (0) * s, s * (1), cut, cut, NULL); i = cut; }
    (void)e;
    for (; i < n; i++) sum = a1(sum, (double)x[(i) * s]);
    return fprev_fin(c, sum);
}

static __device__ double h0x(const float *x, size_t s, size_t n) {
    if (n <= 128) return p1x(x, s, n, n, NULL);
    size_t half = n / 2;
    size_t cut = half - half % 8;
    if (cut == 0) cut = half;
    double l = h0x(x, s, cut);
    double r = h0x(x + (cut) * s, s * (1), n - cut);
    return a0(l, r);
}

static __device__ double p0x(const float *x, size_t s, size_t n, size_t planned, double *c) {
    if (n <= 128) return p1x(x, s, n, n, c);
    return fprev_fin(c, h0x(x, s, n));
}

/* The sum of x[0..n), bit for bit as described above. */
__device__ float numpy_sum_f32(const float *x, size_t n) {
    if (n == 0) return 0;
    return (float)p0x(x, 1, n, n, NULL);
}

#ifdef __CUDACC__
/* One thread computes the whole sum: the order is sequential where the library's is.
 * Launch as numpy_sum_f32_kernel<<<1, 1>>>(...). */
extern "C" __global__ void numpy_sum_f32_kernel(const float *x, size_t n, float *out) {
    if (threadIdx.x == 0 && blockIdx.x == 0) *out = numpy_sum_f32(x, n);
}
#endif
