/*
 * heap_before.c - heap memory allocated before a parallel region and used
 * by the team.
 *
 * The initial thread allocates with malloc (100,000 doubles), calloc
 * (must read zero in every thread), posix_memalign and aligned_alloc; the
 * team writes its static share and, after a barrier, reads shares others
 * wrote; the initial thread checks everything.  Then realloc grows the
 * malloc'd block (the contents must move with it) and a second region
 * works on the grown block; everything is freed at the end.
 */
#define OT_NAME "heap_before"
#include <stdint.h>
#include <stdlib.h>

#include "omptest.h"

#define N 100000
#define M 20000

int main(void)
{
    int n = ot_team_size();
    double *a = malloc(N * sizeof *a);
    int *z = calloc(M, sizeof *z);
    long *pm = NULL;
    double *al = aligned_alloc(4096, 4096 * 4);
    long i, mismatches = 0;
    double sum = 0, want = 0;

    if (posix_memalign((void **)&pm, 256, M * sizeof *pm) != 0)
        pm = NULL;
    if (a == NULL || z == NULL || pm == NULL || al == NULL) {
        fprintf(stderr, "%s: FAIL: an allocation failed\n", OT_NAME);
        return 1;
    }
    OT_CHECK((uintptr_t)pm % 256 == 0 && (uintptr_t)al % 4096 == 0,
             "alignment: posix_memalign gave %p, aligned_alloc %p",
             (void *)pm, (void *)al);
    ot_print("threads=%d", n);

#pragma omp parallel reduction(+:mismatches)
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads();
        long k, lo = (long)M * ((me + 1) % nt) / nt;
        long hi = (long)M * ((me + 1) % nt + 1) / nt;

        for (k = lo; k < hi; k++)
            if (z[k] != 0)
                mismatches++;
#pragma omp barrier
#pragma omp for schedule(static)
        for (k = 0; k < N; k++)
            a[k] = (double)k * 0.5;
#pragma omp for schedule(static, 100)
        for (k = 0; k < M; k++) {
            z[k] = (int)k + 1;
            pm[k] = -k;
        }
#pragma omp for schedule(dynamic, 64)
        for (k = 0; k < 2048; k++)
            al[k] = (double)k;
        /* After the barrier of the last loop: read what others wrote. */
        for (k = me; k < N; k += 997)
            if (a[k] != (double)k * 0.5)
                mismatches++;
        for (k = M - 1 - me; k >= 0; k -= 101)
            if (z[k] != (int)k + 1 || pm[k] != -k)
                mismatches++;
        for (k = me; k < 2048; k += nt)
            if (al[k] != (double)k)
                mismatches++;
    }
    OT_CHECK(mismatches == 0, "first region: %ld mismatches seen by the "
             "threads", mismatches);
    for (i = 0; i < N; i++)
        sum += a[i];
    OT_CHECK(sum == 0.5 * (double)N * (N - 1) / 2, "first region: sum %.1f, "
             "expected %.1f", sum, 0.5 * (double)N * (N - 1) / 2);
    ot_print("first region: sum=%.1f", sum);

    /* Grow the block: the first N elements move with it. */
    a = realloc(a, 2 * N * sizeof *a);
    if (a == NULL) {
        fprintf(stderr, "%s: FAIL: realloc\n", OT_NAME);
        return 1;
    }
    mismatches = 0;
#pragma omp parallel for schedule(static) reduction(+:mismatches)
    for (i = 0; i < 2 * N; i++) {
        if (i < N && a[i] != (double)i * 0.5)
            mismatches++;
        a[i] = (double)(i % 1000);
    }
    OT_CHECK(mismatches == 0, "after realloc: %ld elements lost their "
             "value", mismatches);
    sum = 0;
    for (i = 0; i < 2 * N; i++) {
        sum += a[i];
        want += (double)(i % 1000);
    }
    OT_CHECK(sum == want, "second region: sum %.1f, expected %.1f", sum,
             want);
    ot_print("after realloc to %d: sum=%.1f", 2 * N, sum);
    free(a);
    free(z);
    free(pm);
    free(al);
    return ot_finish();
}
