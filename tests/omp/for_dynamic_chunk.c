/*
 * for_dynamic_chunk.c - omp for with schedule(dynamic, chunk).
 *
 * Chunks of 4, 16, 100 and one larger than the loop, given as a constant
 * and as a run-time value, on 4,000 iterations: every iteration runs once
 * and the iterations [j*chunk, (j+1)*chunk) of each chunk run in one
 * thread.  Also a loop whose count is not a multiple of the chunk, with a
 * start and a step.
 */
#define OT_NAME "for_dynamic_chunk"
#define OT_LOOP_MAX 4000
#include "omptest.h"

#define N 4000

static double w[N];

int main(void)
{
    static const long chunks[] = { 16, 100, 5000 };
    int n = ot_team_size();
    double sum;
    long i, c;
    size_t j;

    ot_print("threads=%d", n);

    ot_loop_reset();
#pragma omp parallel for schedule(dynamic, 4)
    for (i = 0; i < N; i++) {
        ot_loop_hit(i);
        w[i] = (double)(i % 100);
    }
    ot_loop_check("dynamic,4", N, n);
    ot_loop_check_chunks("dynamic,4", N, 4);

    for (j = 0; j < sizeof chunks / sizeof chunks[0]; j++) {
        c = chunks[j];
        sum = 0;
        ot_loop_reset();
#pragma omp parallel for schedule(dynamic, c) reduction(+:sum)
        for (i = 0; i < N; i++) {
            ot_loop_hit(i);
            sum += w[i];
        }
        ot_loop_check("dynamic,c", N, n);
        ot_loop_check_chunks("dynamic,c", N, c);
        OT_CHECK(sum == 4950.0 * (N / 100), "dynamic,%ld: sum %.1f, "
                 "expected %.1f", c, sum, 4950.0 * (N / 100));
        ot_print("dynamic,%ld: iterations=%d sum=%.1f", c, N, sum);
    }

    /* for (i = 5; i < 3005; i += 2): 1500 iterations, chunks of 7. */
    ot_loop_reset();
#pragma omp parallel for schedule(dynamic, 7)
    for (i = 5; i < 3005; i += 2)
        ot_loop_hit((i - 5) / 2);
    ot_loop_check("dynamic,7 start 5 step 2", 1500, n);
    ot_loop_check_chunks("dynamic,7 start 5 step 2", 1500, 7);
    ot_print("dynamic,7 start 5 step 2: iterations=1500");
    return ot_finish();
}
