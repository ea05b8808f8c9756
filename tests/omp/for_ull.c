/*
 * for_ull.c - worksharing loops with unsigned long long indices.
 *
 * GCC compiles loops whose index is unsigned long long to the
 * GOMP_loop_ull_* entry points.  Indices start above 2^40 (so that any
 * truncation to 32 bits shows), one loop strides by 2^30 over a range of
 * 2^40, one counts down; schedules static, static with a chunk, dynamic,
 * dynamic with a chunk, guided and runtime, each recorded and checked by
 * logical iteration number.
 */
#define OT_NAME "for_ull"
#define OT_LOOP_MAX 3000
#include "omptest.h"

#define N 3000ULL
#define BASE (1ULL << 40)

static unsigned long long seen_value[N];

/* The bounds are read from volatile globals: with constant bounds GCC
 * sees that the iteration count fits a long and uses the long entry
 * points instead of the ull ones. */
static volatile unsigned long long base_v = BASE, count_v = N;

int main(void)
{
    int n = ot_team_size();
    unsigned long long i, sum = 0;
    unsigned long long k, lo = base_v, hi = base_v + count_v;
    unsigned long long top = base_v + 3 * 999, bottom = base_v - 3;
    unsigned long long span = base_v, stride = base_v >> 10;

    ot_print("threads=%d", n);

    ot_loop_reset();
#pragma omp parallel for schedule(static) reduction(+:sum)
    for (i = lo; i < hi; i++) {
        ot_loop_hit_monotonic((long)(i - BASE));
        seen_value[i - BASE] = i;
        sum += i;
    }
    ot_loop_check("ull static", N, n);
    ot_loop_check_blocks("ull static", N);
    for (k = 0; k < N; k++) {
        if (seen_value[k] != BASE + k) {
            ot_error("ull static: iteration %llu saw index %llu, expected "
                     "%llu", k, seen_value[k], BASE + k);
            break;
        }
    }
    OT_CHECK(sum == N * BASE + N * (N - 1) / 2, "ull static: sum %llu, "
             "expected %llu", sum, N * BASE + N * (N - 1) / 2);
    ot_print("ull static: iterations=%llu sum=%llu", N, sum);

    ot_loop_reset();
#pragma omp parallel for schedule(static, 7)
    for (i = lo; i < hi; i++)
        ot_loop_hit_monotonic((long)(i - BASE));
    ot_loop_check("ull static,7", N, n);
    ot_loop_check_static_chunk("ull static,7", N, 7, n);

    ot_loop_reset();
#pragma omp parallel for schedule(dynamic)
    for (i = lo; i < hi; i++)
        ot_loop_hit((long)(i - BASE));
    ot_loop_check("ull dynamic", N, n);

    ot_loop_reset();
#pragma omp parallel for schedule(dynamic, 5)
    for (i = lo; i < hi; i++)
        ot_loop_hit((long)(i - BASE));
    ot_loop_check("ull dynamic,5", N, n);
    ot_loop_check_chunks("ull dynamic,5", N, 5);

    ot_loop_reset();
#pragma omp parallel for schedule(guided, 3)
    for (i = lo; i < hi; i++)
        ot_loop_hit((long)(i - BASE));
    ot_loop_check("ull guided,3", N, n);
    ot_loop_check_min_runs("ull guided,3", N, 3);

    omp_set_schedule(omp_sched_dynamic, 4);
    ot_loop_reset();
#pragma omp parallel for schedule(runtime)
    for (i = lo; i < hi; i++)
        ot_loop_hit((long)(i - BASE));
    ot_loop_check("ull runtime dynamic,4", N, n);
    ot_loop_check_chunks("ull runtime dynamic,4", N, 4);
    ot_print("ull static,7 dynamic dynamic,5 guided,3 runtime: iterations=%llu",
             N);

    /* Stride 2^30 over [0, 2^40): 1024 iterations. */
    ot_loop_reset();
#pragma omp parallel for schedule(dynamic, 2)
    for (i = 0; i < span; i += stride)
        ot_loop_hit((long)(i >> 30));
    ot_loop_check("ull stride 2^30", 1024, n);
    ot_loop_check_chunks("ull stride 2^30", 1024, 2);

    /* Downward from BASE + 2997 by 3 while above BASE - 3: 1000
     * iterations, static and guided. */
    ot_loop_reset();
#pragma omp parallel for schedule(static)
    for (i = top; i > bottom; i -= 3)
        ot_loop_hit_monotonic((long)((BASE + 3 * 999 - i) / 3));
    ot_loop_check("ull downward static", 1000, n);
    ot_loop_check_blocks("ull downward static", 1000);

    ot_loop_reset();
#pragma omp parallel for schedule(guided)
    for (i = top; i > bottom; i -= 3)
        ot_loop_hit((long)((BASE + 3 * 999 - i) / 3));
    ot_loop_check("ull downward guided", 1000, n);
    ot_print("ull stride 2^30: iterations=1024; downward: iterations=1000");
    return ot_finish();
}
