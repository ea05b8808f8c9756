/*
 * lock_chain.c - writes ordered by a chain of different locks.
 *
 * Thread 0 writes x under lock 0 and raises flag 0; thread k (k >= 1)
 * waits under lock k-1 until flag k-1 is up, then raises flag k under
 * lock k; the last thread, once its flag is up, reads x.  No barrier lies
 * between the write and the read: only the chain orders them, so the last
 * thread must see thread 0's value (shared memory does; on the DSM it
 * needs the notices a node learned from one lock to go on with its release
 * of the next).  Every thread has read x and the flags before (a copy it
 * must drop), and each lives on a page of its own.  Then the same with
 * the roles rotated, so that every thread starts a chain once.
 */
#define OT_NAME "lock_chain"
#include "omptest.h"

#define MAXT 64
#define SPREAD 8192                 /* longs: 64 KiB, one DSM page or more each */

static long x[SPREAD] __attribute__((aligned(65536)));
static long flag[MAXT][SPREAD] __attribute__((aligned(65536)));
static omp_lock_t lk[MAXT];

int main(void)
{
    int n = ot_team_size(), i;
    long right = 0;

    if (n > MAXT) {
        ot_print("skip: more than %d threads", MAXT);
        return 77;
    }
    for (i = 0; i < n; i++)
        omp_init_lock(&lk[i]);
    ot_print("threads=%d", n);

#pragma omp parallel reduction(+:right)
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads(), start, k;
        volatile long sink = 0;

        for (start = 0; start < nt; start++) {
            int pos = (me - start + nt) % nt;        /* my place in this chain */
            long value = 1000 + start, up = 0, seen;

            /* Valid copies everywhere before the chain. */
            sink += x[0];
            for (k = 0; k < nt; k++)
                sink += flag[k][0];
#pragma omp barrier
            if (pos == 0) {
                omp_set_lock(&lk[0]);
                x[0] = value;
                flag[0][0] = value;
                omp_unset_lock(&lk[0]);
            } else {
                while (up != value) {
                    omp_set_lock(&lk[pos - 1]);
                    up = flag[pos - 1][0];
                    omp_unset_lock(&lk[pos - 1]);
                }
                if (pos < nt - 1) {
                    omp_set_lock(&lk[pos]);
                    flag[pos][0] = value;
                    omp_unset_lock(&lk[pos]);
                }
            }
            if (pos == nt - 1) {
                seen = x[0];
                if (seen == value)
                    right++;
                else
                    ot_error("chain from thread %d: the last thread read x = %ld, "
                             "expected %ld", start, seen, value);
            }
#pragma omp barrier
        }
        (void)sink;
    }
    for (i = 0; i < n; i++)
        omp_destroy_lock(&lk[i]);
    OT_CHECK(right == n, "%ld of %d chains ordered the write", right, n);
    ot_print("chains=%d right=%ld", n, right);
    return ot_finish();
}
