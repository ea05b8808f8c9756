/*
 * for_static_chunk.c - omp for with schedule(static, chunk).
 *
 * The specification fixes the assignment: chunk j goes to thread
 * j % nthreads, and each thread runs its iterations in increasing order.
 * Chunk sizes 1, 7, 64, 1000 and one larger than the loop, the chunk given
 * as a constant and as a run-time value, on a loop of 20,000 iterations
 * writing a global array; then a downward loop with a step.
 */
#define OT_NAME "for_static_chunk"
#define OT_LOOP_MAX 20000
#include "omptest.h"

#define N 20000

static long b[N];

int main(void)
{
    static const long chunks[] = { 1, 7, 64, 1000, 50000 };
    int n = ot_team_size();
    long i, c, sum;
    size_t j;

    ot_print("threads=%d", n);

    /* A constant chunk. */
    ot_loop_reset();
#pragma omp parallel for schedule(static, 7)
    for (i = 0; i < N; i++) {
        ot_loop_hit_monotonic(i);
        b[i] = 3 * i + 1;
    }
    ot_loop_check("static,7", N, n);
    ot_loop_check_static_chunk("static,7", N, 7, n);

    /* A chunk known only at run time. */
    for (j = 0; j < sizeof chunks / sizeof chunks[0]; j++) {
        c = chunks[j];
        ot_loop_reset();
        sum = 0;
#pragma omp parallel for schedule(static, c) reduction(+:sum)
        for (i = 0; i < N; i++) {
            ot_loop_hit_monotonic(i);
            sum += b[i];
        }
        ot_loop_check("static,c", N, n);
        ot_loop_check_static_chunk("static,c", N, c, n);
        OT_CHECK(sum == 3L * N * (N - 1) / 2 + N, "static,%ld: sum %ld, "
                 "expected %ld", c, sum, 3L * N * (N - 1) / 2 + N);
        ot_print("static,%ld: iterations=%d sum=%ld", c, N, sum);
    }

    /* Downward with step 3: for (i = N - 1; i >= 0; i -= 3). */
    ot_loop_reset();
#pragma omp parallel for schedule(static, 5)
    for (i = N - 1; i >= 0; i -= 3)
        ot_loop_hit_monotonic((N - 1 - i) / 3);
    ot_loop_check("static,5 downward", (N + 2) / 3, n);
    ot_loop_check_static_chunk("static,5 downward", (N + 2) / 3, 5, n);
    ot_print("static,5 downward step 3: iterations=%d", (N + 2) / 3);
    return ot_finish();
}
