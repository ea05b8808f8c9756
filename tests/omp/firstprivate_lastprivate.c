/*
 * firstprivate_lastprivate.c - data-sharing clauses: private,
 * firstprivate, lastprivate, shared, default(none).
 *
 * firstprivate copies the original (an int, a double, an array of 8 longs
 * and a struct, all on main's stack) into every thread's copy; threads
 * change their copies and the originals must not change.  private copies
 * start unset and never write back.  lastprivate on loops with static and
 * dynamic schedules writes back the value of the sequentially last
 * iteration (an int, a double, an array), from whichever thread ran it;
 * firstprivate and lastprivate on the same variable; default(none) with
 * every variable listed.
 */
#define OT_NAME "firstprivate_lastprivate"
#include "omptest.h"

#define N 1000

struct point {
    int x, y;
    double w;
};

static int fp_bad[OT_MAX_THREADS];

int main(void)
{
    int n = ot_team_size();
    int iv = 42, pv = 7, lv = -1, static_lv, both = 5, t;
    double dv = 2.5, ld = -1.0;
    long arr[8], larr[4] = { 0, 0, 0, 0 };
    struct point pt = { 3, 4, 0.5 };
    long i, bad = 0, dn_sum = 0;

    for (i = 0; i < 8; i++)
        arr[i] = 100 + i;
    ot_print("threads=%d", n);

#pragma omp parallel firstprivate(iv, dv, arr, pt) private(pv)
    {
        int me = omp_get_thread_num(), k;

        if (iv != 42 || dv != 2.5 || pt.x != 3 || pt.y != 4 || pt.w != 0.5)
            fp_bad[me]++;
        for (k = 0; k < 8; k++)
            if (arr[k] != 100 + k)
                fp_bad[me]++;
        iv = me;
        dv = -me;
        pt.x = me;
        arr[me % 8] = -1;
        pv = me * 3;
        if (pv != me * 3)
            fp_bad[me]++;
    }
    for (t = 0; t < n; t++) {
        OT_CHECK(fp_bad[t] == 0, "thread %d: %d firstprivate copies did "
                 "not hold the original values", t, fp_bad[t]);
        bad += fp_bad[t];
    }
    OT_CHECK(iv == 42 && dv == 2.5 && pt.x == 3 && pv == 7, "originals "
             "changed by the region: iv=%d dv=%.1f pt.x=%d pv=%d", iv, dv,
             pt.x, pv);
    for (i = 0; i < 8; i++)
        OT_CHECK(arr[i] == 100 + i, "original arr[%ld] changed to %ld", i,
                 arr[i]);
    ot_print("firstprivate/private: %ld bad copies; originals iv=%d dv=%.1f "
             "pv=%d", bad, iv, dv, pv);

#pragma omp parallel for schedule(static) lastprivate(lv, ld, larr)
    for (i = 0; i < N; i++) {
        lv = (int)i * 2;
        ld = (double)i / 4;
        larr[0] = i;
        larr[3] = -i;
    }
    OT_CHECK(lv == 2 * (N - 1) && ld == (N - 1) / 4.0 && larr[0] == N - 1
             && larr[3] == -(N - 1), "lastprivate static: lv=%d ld=%.2f "
             "larr=%ld,%ld", lv, ld, larr[0], larr[3]);
    static_lv = lv;
    lv = -1;
#pragma omp parallel for schedule(dynamic, 7) lastprivate(lv)
    for (i = 0; i < N; i++)
        lv = (int)i + 1;
    OT_CHECK(lv == N, "lastprivate dynamic: %d, expected %d", lv, N);

#pragma omp parallel for schedule(guided) firstprivate(both) lastprivate(both)
    for (i = 0; i < N; i++)
        both += 1;
    /* The thread with the last iteration started from 5 and added one per
     * iteration it ran, which depends on the schedule: only check that
     * it is more than 5 and at most 5 + N. */
    OT_CHECK(both > 5 && both <= 5 + N, "firstprivate+lastprivate: %d, "
             "expected in 6..%d", both, 5 + N);
    ot_print("lastprivate: static lv=%d ld=%.2f larr=%ld,%ld; dynamic lv=%d",
             static_lv, ld, larr[0], larr[3], lv);

#pragma omp parallel for default(none) shared(arr) reduction(+:dn_sum)
    for (i = 0; i < N; i++)
        dn_sum += arr[i % 8];
    OT_CHECK(dn_sum == (N / 8) * (8 * 100 + 28), "default(none): %ld, "
             "expected %d", dn_sum, (N / 8) * (8 * 100 + 28));
    ot_print("default(none): sum=%ld", dn_sum);
    return ot_finish();
}
