/*
 * for_guided.c - omp for with schedule(guided) and schedule(guided, chunk).
 *
 * Every iteration runs once; chunks shrink as the loop goes but are never
 * smaller than the given chunk, except the last: so every run of
 * consecutive iterations in one thread that does not end the loop is at
 * least that long.  Loops of 10,000 iterations without a chunk, with 8 and
 * with a run-time chunk of 50, a downward loop, and two guided loops with
 * nowait in one region.
 */
#define OT_NAME "for_guided"
#define OT_LOOP_MAX 10000
#include "omptest.h"

#define N 10000

static int g1[N], g2[N];

int main(void)
{
    int n = ot_team_size();
    long i, c = 50, sum = 0;

    ot_print("threads=%d", n);

    ot_loop_reset();
#pragma omp parallel for schedule(guided) reduction(+:sum)
    for (i = 0; i < N; i++) {
        ot_loop_hit(i);
        sum += i % 7;
    }
    ot_loop_check("guided", N, n);
    OT_CHECK(sum == 29994, "guided: sum %ld, expected 29994", sum);
    ot_print("guided: iterations=%d sum=%ld", N, sum);

    ot_loop_reset();
#pragma omp parallel for schedule(guided, 8)
    for (i = 0; i < N; i++)
        ot_loop_hit(i);
    ot_loop_check("guided,8", N, n);
    ot_loop_check_min_runs("guided,8", N, 8);

    ot_loop_reset();
#pragma omp parallel for schedule(guided, c)
    for (i = 0; i < N; i++)
        ot_loop_hit(i);
    ot_loop_check("guided,c", N, n);
    ot_loop_check_min_runs("guided,c", N, c);
    ot_print("guided,8 and guided,%ld: iterations=%d", c, N);

    /* Downward, step 4: for (i = N - 1; i >= 0; i -= 4). */
    ot_loop_reset();
#pragma omp parallel for schedule(guided, 3)
    for (i = N - 1; i >= 0; i -= 4)
        ot_loop_hit((N - 1 - i) / 4);
    ot_loop_check("guided,3 downward", N / 4, n);
    ot_loop_check_min_runs("guided,3 downward", N / 4, 3);

    /* Two work shares in flight: the second loop starts while other
     * threads may still take chunks of the first. */
#pragma omp parallel
    {
#pragma omp for schedule(guided, 4) nowait
        for (i = 0; i < N; i++)
            g1[i] += 1;
#pragma omp for schedule(guided, 4) nowait
        for (i = 0; i < N; i++)
            g2[i] += 2;
    }
    for (i = 0; i < N; i++) {
        if (g1[i] != 1 || g2[i] != 2) {
            ot_error("guided nowait: g1[%ld] = %d, g2[%ld] = %d, expected 1 "
                     "and 2", i, g1[i], i, g2[i]);
            break;
        }
    }
    ot_print("guided,3 downward and guided nowait: done");
    return ot_finish();
}
