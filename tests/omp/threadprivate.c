/*
 * threadprivate.c - threadprivate globals, copyin.
 *
 * Globals declared threadprivate (an int with an initialiser, a double, an
 * array; a function's static counter) give each thread its own copy.
 *   - Before any region the initial thread sets its copies; copyin copies
 *     them into every thread's copy at the start of a region (GCC passes
 *     the address of the initial thread's copy, which is thread-local
 *     storage, to the other threads).
 *   - Each thread then sets its own values; in the next region (same team
 *     size, no copyin) every thread must find its own values again, the
 *     persistence the specification promises when the team size and
 *     dyn-var do not change; the initial thread keeps its own after the
 *     region.
 *   - A variable the initial thread never changes starts at its
 *     initialiser in every thread.
 *   - A second copyin after the initial thread changed its values.
 */
#define OT_NAME "threadprivate"
#include "omptest.h"

static int tp = 7;
static double tpd;
static long tparr[4];
static int untouched = 9;
#pragma omp threadprivate(tp, tpd, tparr, untouched)

static int bad_copyin[OT_MAX_THREADS], bad_persist[OT_MAX_THREADS];
static int bad_init[OT_MAX_THREADS], bad_second[OT_MAX_THREADS];
static int calls_seen[OT_MAX_THREADS];

static int count_calls(void)
{
    static int calls;
#pragma omp threadprivate(calls)

    return ++calls;
}

int main(void)
{
    int n = ot_team_size();
    int t, k, bad = 0;

    tp = 42;
    tpd = 1.5;
    for (k = 0; k < 4; k++)
        tparr[k] = 1000 + k;
    ot_print("threads=%d", n);

#pragma omp parallel copyin(tp, tpd, tparr)
    {
        int me = omp_get_thread_num(), j;

        if (tp != 42 || tpd != 1.5)
            bad_copyin[me]++;
        for (j = 0; j < 4; j++)
            if (tparr[j] != 1000 + j)
                bad_copyin[me]++;
        if (untouched != 9)
            bad_init[me]++;
        tp = 100 + me;
        tpd = 0.5 * me;
        tparr[me % 4] = -me;
        for (j = 0; j < 3 + me; j++)
            count_calls();
    }
    OT_CHECK(tp == 100 && tpd == 0.0, "initial thread's copies after the "
             "region: tp=%d tpd=%.1f, expected 100 and 0.0", tp, tpd);

#pragma omp parallel
    {
        int me = omp_get_thread_num();

        if (tp != 100 + me || tpd != 0.5 * me || tparr[me % 4] != -me)
            bad_persist[me]++;
        calls_seen[me] = count_calls();
    }

    tp = -5;
    tpd = -2.5;
#pragma omp parallel copyin(tp, tpd)
    {
        int me = omp_get_thread_num();

        if (tp != -5 || tpd != -2.5)
            bad_second[me]++;
    }

    for (t = 0; t < n; t++) {
        OT_CHECK(bad_copyin[t] == 0, "thread %d: copyin values wrong", t);
        OT_CHECK(bad_init[t] == 0, "thread %d: untouched threadprivate not "
                 "at its initialiser", t);
        OT_CHECK(bad_persist[t] == 0, "thread %d: its threadprivate values "
                 "did not persist to the next region", t);
        OT_CHECK(calls_seen[t] == 4 + t, "thread %d: threadprivate static "
                 "counter %d, expected %d", t, calls_seen[t], 4 + t);
        OT_CHECK(bad_second[t] == 0, "thread %d: second copyin values wrong",
                 t);
        bad += bad_copyin[t] + bad_init[t] + bad_persist[t] + bad_second[t];
    }
    ot_print("copyin, initialiser, persistence, second copyin: %d bad", bad);
    ot_print("initial thread: tp=%d tpd=%.1f calls=%d", tp, tpd,
             count_calls());
    return ot_finish();
}
