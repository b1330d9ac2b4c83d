/* An OpenMP sum for tests/survey.rs: each thread adds its static share left
 * to right, then the shares are added, so the tree follows
 * OMP_NUM_THREADS (with two threads the two shares' order of arrival does
 * not matter: 0 + s is exact). */
#include <stddef.h>

float omp_sum(const float *x, size_t n) {
    float s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return s;
}
