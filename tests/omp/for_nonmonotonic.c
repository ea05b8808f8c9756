/*
 * for_nonmonotonic.c - schedule modifiers: nonmonotonic: and monotonic:.
 *
 * nonmonotonic:dynamic (which GCC compiles to the GOMP_loop_nonmonotonic_*
 * entry points) lets the runtime hand out chunks in any order, so only
 * "every iteration once" and, with a chunk, "chunks stay whole" are
 * checked; monotonic:dynamic additionally promises that each thread sees
 * its iterations in increasing order.  Loops of 3,000 iterations.
 */
#define OT_NAME "for_nonmonotonic"
#define OT_LOOP_MAX 3000
#include "omptest.h"

#define N 3000

static double x[N];

int main(void)
{
    int n = ot_team_size();
    double sum = 0;
    long i;

    ot_print("threads=%d", n);

    ot_loop_reset();
#pragma omp parallel for schedule(nonmonotonic: dynamic) reduction(+:sum)
    for (i = 0; i < N; i++) {
        ot_loop_hit(i);
        x[i] = (double)(i % 10);
        sum += x[i];
    }
    ot_loop_check("nonmonotonic:dynamic", N, n);
    OT_CHECK(sum == 45.0 * (N / 10), "nonmonotonic:dynamic: sum %.1f, "
             "expected %.1f", sum, 45.0 * (N / 10));
    ot_print("nonmonotonic:dynamic: iterations=%d sum=%.1f", N, sum);

    ot_loop_reset();
#pragma omp parallel for schedule(nonmonotonic: dynamic, 5)
    for (i = 0; i < N; i++)
        ot_loop_hit(i);
    ot_loop_check("nonmonotonic:dynamic,5", N, n);
    ot_loop_check_chunks("nonmonotonic:dynamic,5", N, 5);

    ot_loop_reset();
#pragma omp parallel for schedule(nonmonotonic: guided, 4)
    for (i = 0; i < N; i++)
        ot_loop_hit(i);
    ot_loop_check("nonmonotonic:guided,4", N, n);
    ot_loop_check_min_runs("nonmonotonic:guided,4", N, 4);
    ot_print("nonmonotonic:dynamic,5 and nonmonotonic:guided,4: "
             "iterations=%d", N);

    ot_loop_reset();
#pragma omp parallel for schedule(monotonic: dynamic, 3)
    for (i = 0; i < N; i++)
        ot_loop_hit_monotonic(i);
    ot_loop_check("monotonic:dynamic,3", N, n);
    ot_loop_check_chunks("monotonic:dynamic,3", N, 3);

    ot_loop_reset();
#pragma omp parallel for schedule(monotonic: guided)
    for (i = 0; i < N; i++)
        ot_loop_hit_monotonic(i);
    ot_loop_check("monotonic:guided", N, n);
    ot_print("monotonic:dynamic,3 and monotonic:guided: iterations=%d", N);
    return ot_finish();
}
