/*
 * for_dynamic.c - omp for with schedule(dynamic) (chunks of one).
 *
 * Every iteration must run exactly once; which thread runs it is up to the
 * timing, so only sums are printed.  A loop of 2,000 iterations whose work
 * grows with i (so threads finish at different times), 50 short dynamic
 * loops in a row in one region (the runtime must start each work share
 * afresh), one with nowait, a downward loop with a step, and loops with
 * fewer iterations than threads.  Each chunk may cost the shim a round
 * trip, hence the small counts.
 */
#define OT_NAME "for_dynamic"
#define OT_LOOP_MAX 2000
#include "omptest.h"

#define N 2000
#define SHORT_LOOPS 50
#define SHORT_N 40

static long v[N];
static int short_hits[SHORT_LOOPS][SHORT_N];

/* Some work that grows with i, so that threads drift apart. */
static long work(long i)
{
    long k, x = i;

    for (k = 0; k < i % 97; k++)
        x = (x * 31 + k) % 1000003;
    return x;
}

int main(void)
{
    int n = ot_team_size();
    long i, sum = 0, expected = 0;
    int l, k;

    ot_print("threads=%d", n);

    ot_loop_reset();
#pragma omp parallel for schedule(dynamic) reduction(+:sum)
    for (i = 0; i < N; i++) {
        ot_loop_hit(i);
        v[i] = work(i);
        sum += v[i];
    }
    ot_loop_check("dynamic", N, n);
    for (i = 0; i < N; i++)
        expected += work(i);
    OT_CHECK(sum == expected, "dynamic: sum %ld, expected %ld", sum,
             expected);
    ot_print("dynamic: iterations=%d sum=%ld", N, sum);

#pragma omp parallel private(l, k)
    {
        for (l = 0; l < SHORT_LOOPS; l++) {
            if (l % 2 == 0) {
#pragma omp for schedule(dynamic)
                for (k = 0; k < SHORT_N; k++)
                    short_hits[l][k]++;
            } else {
#pragma omp for schedule(dynamic) nowait
                for (k = 0; k < SHORT_N; k++)
                    short_hits[l][k]++;
            }
        }
    }
    for (l = 0; l < SHORT_LOOPS; l++)
        ot_check_once("dynamic, short loops in a row", short_hits[l], SHORT_N);
    ot_print("dynamic: %d loops of %d in one region", SHORT_LOOPS, SHORT_N);

    /* Downward, step 3: for (i = N - 1; i >= 0; i -= 3). */
    ot_loop_reset();
#pragma omp parallel for schedule(dynamic)
    for (i = N - 1; i >= 0; i -= 3)
        ot_loop_hit((N - 1 - i) / 3);
    ot_loop_check("dynamic downward step 3", (N + 2) / 3, n);

    for (k = 0; k <= 2; k++) {
        ot_loop_reset();
#pragma omp parallel for schedule(dynamic)
        for (i = 0; i < k; i++)
            ot_loop_hit(i);
        ot_loop_check("dynamic, tiny loop", k, n);
    }
    ot_print("dynamic: downward and tiny loops: done");
    return ot_finish();
}
