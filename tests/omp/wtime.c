/*
 * wtime.c - omp_get_wtime and omp_get_wtick.
 *
 * In every thread, 1,000 successive readings of omp_get_wtime never go
 * back, and a 20 ms sleep advances it by at least 19 ms and (on a machine
 * that is not badly overloaded) less than 10 s; omp_get_wtick is positive
 * and below a second.  Around a parallel region the initial thread's
 * clock advances too.  Clocks of different threads are not compared: under
 * the shim they belong to different processes, possibly different hosts.
 * Nothing printed depends on the time.
 */
#define _POSIX_C_SOURCE 200809L
#define OT_NAME "wtime"
#include <time.h>

#include "omptest.h"

#define READINGS 1000

static int back[OT_MAX_THREADS], slept_ok[OT_MAX_THREADS];
static int tick_ok[OT_MAX_THREADS];

int main(void)
{
    int n = ot_team_size();
    double before, after;
    int t;

    ot_print("threads=%d", n);
    before = omp_get_wtime();

#pragma omp parallel
    {
        int me = omp_get_thread_num(), k;
        double prev = omp_get_wtime(), now, tick = omp_get_wtick(), start;
        struct timespec ts = { 0, 20 * 1000 * 1000 };

        for (k = 0; k < READINGS; k++) {
            now = omp_get_wtime();
            if (now < prev)
                back[me]++;
            prev = now;
        }
        start = omp_get_wtime();
        nanosleep(&ts, NULL);
        now = omp_get_wtime();
        slept_ok[me] = now - start >= 0.019 && now - start < 10.0;
        tick_ok[me] = tick > 0.0 && tick < 1.0;
    }

    after = omp_get_wtime();
    OT_CHECK(after > before, "omp_get_wtime went from %.9f to %.9f across a "
             "region", before, after);
    for (t = 0; t < n; t++) {
        OT_CHECK(back[t] == 0, "thread %d: omp_get_wtime went back %d times",
                 t, back[t]);
        OT_CHECK(slept_ok[t], "thread %d: a 20 ms sleep did not show as "
                 "19 ms to 10 s", t);
        OT_CHECK(tick_ok[t], "thread %d: omp_get_wtick not in (0, 1)", t);
    }
    ot_print("monotonic in every thread; sleep measured; wtick in (0, 1)");
    return ot_finish();
}
