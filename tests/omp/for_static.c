/*
 * for_static.c - omp for with schedule(static) and without a schedule.
 *
 * A loop over 100,000 doubles with schedule(static): every iteration runs
 * once, each thread's iterations are one contiguous block in increasing
 * order, and a second loop with the same bounds gives every thread the same
 * iterations (which the specification promises for static schedules, and
 * which makes the second loop's read of what the first wrote safe without a
 * barrier).  Then loops with a start, a step, a downward step, fewer
 * iterations than threads and no iteration at all, and a loop without a
 * schedule clause.
 */
#define OT_NAME "for_static"
#define OT_LOOP_MAX 100000
#include "omptest.h"

#define N 100000

static double a[N];
static int first_owner[N];

int main(void)
{
    int n = ot_team_size();
    double sum = 0;
    long i, count;

    ot_print("threads=%d", n);

    ot_loop_reset();
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (i = 0; i < N; i++) {
            ot_loop_hit_monotonic(i);
            a[i] = 0.5 * (double)i;
            first_owner[i] = omp_get_thread_num();
        }
        /* Same bounds, same schedule, same team: same iterations per
         * thread, so a[i] was written by this very thread. */
#pragma omp for schedule(static) reduction(+:sum)
        for (i = 0; i < N; i++) {
            if (first_owner[i] != omp_get_thread_num())
                ot_error("iteration %ld ran in thread %d, in thread %d in "
                         "the first loop", i, omp_get_thread_num(),
                         first_owner[i]);
            sum += a[i];
        }
    }
    ot_loop_check("static", N, n);
    ot_loop_check_blocks("static", N);
    OT_CHECK(sum == 0.5 * (double)N * (N - 1) / 2, "sum is %.1f, expected "
             "%.1f", sum, 0.5 * (double)N * (N - 1) / 2);
    ot_print("static: iterations=%d sum=%.1f", N, sum);

    /* for (i = 7; i < 10007; i += 3): 3334 iterations. */
    ot_loop_reset();
#pragma omp parallel for schedule(static)
    for (i = 7; i < 10007; i += 3)
        ot_loop_hit_monotonic((i - 7) / 3);
    ot_loop_check("static, start 7 step 3", 3334, n);
    ot_loop_check_blocks("static, start 7 step 3", 3334);

    /* Downward: for (i = 9999; i >= 0; i -= 2): 5000 iterations. */
    ot_loop_reset();
#pragma omp parallel for schedule(static)
    for (i = 9999; i >= 0; i -= 2)
        ot_loop_hit_monotonic((9999 - i) / 2);
    ot_loop_check("static, downward step 2", 5000, n);
    ot_loop_check_blocks("static, downward step 2", 5000);

    /* Fewer iterations than threads, and none at all. */
    for (count = 0; count <= 2; count++) {
        ot_loop_reset();
#pragma omp parallel for schedule(static)
        for (i = 0; i < count; i++)
            ot_loop_hit_monotonic(i);
        ot_loop_check("static, tiny loop", count, n);
    }

    /* No schedule clause: the default schedule is the implementation's,
     * so only "every iteration once" is checked. */
    ot_loop_reset();
#pragma omp parallel for
    for (i = 0; i < N; i++)
        ot_loop_hit(i);
    ot_loop_check("no schedule clause", N, n);

    ot_print("start/step, downward, tiny and default loops: done");
    return ot_finish();
}
