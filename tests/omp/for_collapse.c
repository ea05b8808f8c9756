/*
 * for_collapse.c - omp for with collapse(2) and collapse(3).
 *
 * The collapsed nest is one iteration space (logical iteration i*N2 + j),
 * scheduled as a whole: with schedule(static) each thread gets one block of
 * it, with static, 13 the round robin of the specification, with dynamic, 3
 * whole chunks.  A 120 x 50 nest writing a global matrix, a lastprivate of
 * both indices, a reduction, a 10 x 12 x 15 nest, and a triangular
 * (non-rectangular, OpenMP 5.0) nest.
 */
#define OT_NAME "for_collapse"
#define OT_LOOP_MAX 6000
#include "omptest.h"

#define N1 120
#define N2 50

static int m[N1][N2];

int main(void)
{
    int n = ot_team_size();
    int i, j, k, li = -1, lj = -1;
    long sum = 0, expected = 0;

    ot_print("threads=%d", n);

    ot_loop_reset();
#pragma omp parallel for collapse(2) schedule(static) lastprivate(i, j)
    for (i = 0; i < N1; i++)
        for (j = 0; j < N2; j++) {
            ot_loop_hit_monotonic((long)i * N2 + j);
            m[i][j] = i * 1000 + j;
        }
    ot_loop_check("collapse(2) static", N1 * N2, n);
    ot_loop_check_blocks("collapse(2) static", N1 * N2);
    OT_CHECK(i == N1 && j == N2, "collapse(2) lastprivate: i=%d j=%d, "
             "expected %d and %d", i, j, N1, N2);

    ot_loop_reset();
#pragma omp parallel for collapse(2) schedule(static, 13) lastprivate(li, lj)
    for (i = 0; i < N1; i++)
        for (j = 0; j < N2; j++) {
            ot_loop_hit_monotonic((long)i * N2 + j);
            li = i;
            lj = j;
        }
    ot_loop_check("collapse(2) static,13", N1 * N2, n);
    ot_loop_check_static_chunk("collapse(2) static,13", N1 * N2, 13, n);
    OT_CHECK(li == N1 - 1 && lj == N2 - 1, "collapse(2) lastprivate of the "
             "body's copies: %d %d, expected %d %d", li, lj, N1 - 1, N2 - 1);

    ot_loop_reset();
#pragma omp parallel for collapse(2) schedule(dynamic, 3) reduction(+:sum)
    for (i = 0; i < N1; i++)
        for (j = 0; j < N2; j++) {
            ot_loop_hit((long)i * N2 + j);
            sum += m[i][j];
        }
    ot_loop_check("collapse(2) dynamic,3", N1 * N2, n);
    ot_loop_check_chunks("collapse(2) dynamic,3", N1 * N2, 3);
    for (i = 0; i < N1; i++)
        for (j = 0; j < N2; j++)
            expected += i * 1000 + j;
    OT_CHECK(sum == expected, "collapse(2) dynamic,3: sum %ld, expected %ld",
             sum, expected);
    ot_print("collapse(2) %dx%d static, static,13, dynamic,3: sum=%ld", N1,
             N2, sum);

    ot_loop_reset();
#pragma omp parallel for collapse(3) schedule(guided, 2)
    for (i = 0; i < 10; i++)
        for (j = 0; j < 12; j++)
            for (k = 0; k < 15; k++)
                ot_loop_hit(((long)i * 12 + j) * 15 + k);
    ot_loop_check("collapse(3) guided,2", 10 * 12 * 15, n);
    ot_loop_check_min_runs("collapse(3) guided,2", 10 * 12 * 15, 2);

    /* Triangular: j < i, so row i has i iterations, logical number
     * i*(i-1)/2 + j; 100 rows, 4950 iterations.  GCC allows no schedule
     * clause on a non-rectangular nest, so the schedule is the default
     * and only "every iteration once" is checked. */
    ot_loop_reset();
#pragma omp parallel for collapse(2)
    for (i = 0; i < 100; i++)
        for (j = 0; j < i; j++)
            ot_loop_hit((long)i * (i - 1) / 2 + j);
    ot_loop_check("collapse(2) triangular", 4950, n);
    ot_print("collapse(3) 10x12x15 guided,2 and triangular collapse(2): done");
    return ot_finish();
}
