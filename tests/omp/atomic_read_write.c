/*
 * atomic_read_write.c - #pragma omp atomic read and atomic write on int,
 * long and double.
 *
 * Phase 1: every thread writes its own value to shared variables with
 * atomic write; after a barrier every thread reads them with atomic read
 * and must find the value of one of the writers, the same one in every
 * thread.  Phase 2: thread 0 writes 100 values in turn, each with a pattern
 * a torn access would break (both halves of the word equal), while the
 * other threads read 100 times each: every value read must be whole, and
 * one thread's reads of one variable must never go back to an older value.
 * The readers do not wait for particular values (a relaxed atomic read may
 * lag), so nothing depends on timing.  After the region the last values
 * written must be there.  Also the seq_cst forms.
 */
#define OT_NAME "atomic_read_write"
#include "omptest.h"

#define STEPS 100

static int xi;
static long xl;
static double xd;
static int seen_i[OT_MAX_THREADS];
static long seen_l[OT_MAX_THREADS];
static double seen_d[OT_MAX_THREADS];

/* The k-th value of phase 2: both halves hold k. */
static int pattern_i(int k) { return (k << 16) | k; }
static long pattern_l(long k) { return (k << 32) | k; }
static double pattern_d(int k) { return 1.5 * k; }

int main(void)
{
    int n = ot_team_size();
    int t, last_i;
    long last_l;
    double last_d;

    ot_print("threads=%d", n);

#pragma omp parallel
    {
        int me = omp_get_thread_num();

#pragma omp atomic write
        xi = 1000 + me;
#pragma omp atomic write
        xl = 1000000000000L + me;
#pragma omp atomic write seq_cst
        xd = 0.5 + me;
#pragma omp barrier
#pragma omp atomic read
        seen_i[me] = xi;
#pragma omp atomic read
        seen_l[me] = xl;
#pragma omp atomic read seq_cst
        seen_d[me] = xd;
    }
    for (t = 0; t < n; t++) {
        OT_CHECK(seen_i[t] == seen_i[0] && seen_i[0] >= 1000
                 && seen_i[0] < 1000 + n, "phase 1: thread %d read int %d, "
                 "thread 0 read %d", t, seen_i[t], seen_i[0]);
        OT_CHECK(seen_l[t] == seen_l[0] && seen_l[0] >= 1000000000000L
                 && seen_l[0] < 1000000000000L + n, "phase 1: thread %d "
                 "read long %ld, thread 0 read %ld", t, seen_l[t], seen_l[0]);
        OT_CHECK(seen_d[t] == seen_d[0] && seen_d[0] >= 0.5
                 && seen_d[0] < 0.5 + n, "phase 1: thread %d read double "
                 "%.1f, thread 0 read %.1f", t, seen_d[t], seen_d[0]);
    }
    ot_print("phase 1: every thread read the same written value");

    xi = 0;
    xl = 0;
    xd = 0;
#pragma omp parallel
    {
        int me = omp_get_thread_num(), k, vi, prev_i = 0;
        long vl, prev_l = 0;
        double vd, prev_d = 0;

        for (k = 1; k <= STEPS; k++) {
            if (me == 0) {
#pragma omp atomic write
                xi = pattern_i(k);
#pragma omp atomic write
                xl = pattern_l(k);
#pragma omp atomic write
                xd = pattern_d(k);
                continue;
            }
#pragma omp atomic read
            vi = xi;
#pragma omp atomic read
            vl = xl;
#pragma omp atomic read
            vd = xd;
            if ((vi >> 16) != (vi & 0xffff) || (vl >> 32) != (vl & 0xffffffffL)
                || vd != pattern_d((int)(vd / 1.5))) {
                ot_error("phase 2: read a torn value: int %#x long %#lx "
                         "double %.3f", vi, vl, vd);
                break;
            }
            if (vi < prev_i || vl < prev_l || vd < prev_d) {
                ot_error("phase 2: a read went back: int %#x after %#x, "
                         "long %#lx after %#lx, double %.1f after %.1f", vi,
                         prev_i, vl, prev_l, vd, prev_d);
                break;
            }
            prev_i = vi;
            prev_l = vl;
            prev_d = vd;
        }
    }
#pragma omp atomic read
    last_i = xi;
#pragma omp atomic read
    last_l = xl;
#pragma omp atomic read
    last_d = xd;
    OT_CHECK(last_i == pattern_i(STEPS) && last_l == pattern_l(STEPS)
             && last_d == pattern_d(STEPS), "phase 2: after the region int "
             "%#x long %#lx double %.1f, expected %#x %#lx %.1f", last_i,
             last_l, last_d, pattern_i(STEPS), pattern_l(STEPS),
             pattern_d(STEPS));
    ot_print("phase 2: %d writes; last int=%#x long=%#lx double=%.1f", STEPS,
             last_i, last_l, last_d);
    return ot_finish();
}
