/* Dot products for tests/products.rs, loaded as dylib-dot: black boxes.
 * Built with -ffp-contract=off, so that the plain ones round every product
 * before adding it and the fma ones alone fuse. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Left to right, each product added with one rounding (fmaf). */
float fma_dot_f32(const float *x, const float *y, size_t n) {
    float s = 0;
    for (size_t i = 0; i < n; i++)
        s = fmaf(x[i], y[i], s);
    return s;
}

/* Left to right, each product rounded, then added. */
float plain_dot_f32(const float *x, const float *y, size_t n) {
    float s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}

double fma_dot_f64(const double *x, const double *y, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s = fma(x[i], y[i], s);
    return s;
}

double plain_dot_f64(const double *x, const double *y, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}

/* v rounded to bf16 (to nearest, ties to even; v is finite). */
static float to_bf16(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u += 0x7fff + ((u >> 16) & 1);
    u &= 0xffff0000u;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* The FMA loop, but the step that adds x[37] keeps only bf16's 8 bits:
 * one node unlike the others, between those a sample of nodes asks. */
float bf16_step_dot_f32(const float *x, const float *y, size_t n) {
    float s = 0;
    for (size_t i = 0; i < n; i++) {
        s = fmaf(x[i], y[i], s);
        if (i == 37)
            s = to_bf16(s);
    }
    return s;
}

/* A plain sum, for the dylib: probe that does not multiply. */
float sum_f32(const float *x, size_t n) {
    float s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return s;
}
