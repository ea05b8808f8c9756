/*
 * lock.c - simple locks: omp_init_lock, omp_set_lock, omp_unset_lock,
 * omp_test_lock, omp_destroy_lock.
 *
 * A global lock protecting non-atomic updates with an "inside" check; an
 * array of 8 locks on the heap, each protecting its own counter, taken by
 * the threads in different orders; a lock on main's stack.  omp_test_lock
 * must fail while another thread holds the lock (thread 0 holds it across
 * two barriers while the others try) and succeed when it is free (each
 * thread in turn, between barriers); a try-until-success loop.  Locks
 * initialised in the initial thread and in a single construct; all
 * destroyed at the end.  About 200 lock operations per thread.
 */
#define OT_NAME "lock"
#include "omptest.h"

#define ITERS 60
#define NLOCKS 8

static omp_lock_t glock;
static int inside;
static long gcount;
static long counters[NLOCKS];
static omp_lock_t single_lock;
static long single_count;

int main(void)
{
    int n = ot_team_size();
    omp_lock_t *locks = malloc(NLOCKS * sizeof *locks);
    omp_lock_t slock;
    long scount = 0, tried = 0, failed_while_held = 0, got_when_free = 0;
    long total = 0;
    int i;

    if (locks == NULL) {
        fprintf(stderr, "%s: FAIL: malloc\n", OT_NAME);
        return 1;
    }
    omp_init_lock(&glock);
    omp_init_lock(&slock);
    for (i = 0; i < NLOCKS; i++)
        omp_init_lock(&locks[i]);
    ot_print("threads=%d", n);

#pragma omp parallel reduction(+:tried, failed_while_held, got_when_free)
    {
        int me = omp_get_thread_num(), k, t;

        for (k = 0; k < ITERS; k++) {
            omp_set_lock(&glock);
            inside++;
            OT_CHECK(inside == 1, "global lock: %d threads inside", inside);
            gcount += me + 1;
            inside--;
            omp_unset_lock(&glock);

            omp_set_lock(&locks[(k + me) % NLOCKS]);
            counters[(k + me) % NLOCKS]++;
            omp_unset_lock(&locks[(k + me) % NLOCKS]);
        }
        for (k = 0; k < ITERS / 3; k++) {
            omp_set_lock(&slock);
            scount++;
            omp_unset_lock(&slock);
        }

        /* omp_test_lock on a lock another thread holds must fail (the
         * first barrier: nobody may still be waiting for it above). */
#pragma omp barrier
        if (me == 0)
            omp_set_lock(&glock);
#pragma omp barrier
        if (me != 0) {
            tried++;
            if (!omp_test_lock(&glock))
                failed_while_held++;
            else
                ot_error("omp_test_lock took a lock thread 0 holds");
        }
#pragma omp barrier
        if (me == 0)
            omp_unset_lock(&glock);
#pragma omp barrier
        /* ... and succeed on a free lock, one thread at a time. */
        for (t = 0; t < omp_get_num_threads(); t++) {
            if (t == me) {
                if (omp_test_lock(&glock)) {
                    got_when_free++;
                    omp_unset_lock(&glock);
                } else {
                    ot_error("omp_test_lock failed on a free lock");
                }
            }
#pragma omp barrier
        }
        /* Try until it works: a spin on omp_test_lock. */
        for (k = 0; k < 10; k++) {
            while (!omp_test_lock(&glock))
                ;
            gcount += 1000;
            omp_unset_lock(&glock);
        }

#pragma omp single
        omp_init_lock(&single_lock);
        omp_set_lock(&single_lock);
        single_count++;
        omp_unset_lock(&single_lock);
    }

    for (i = 0; i < NLOCKS; i++) {
        total += counters[i];
        omp_destroy_lock(&locks[i]);
    }
    omp_destroy_lock(&glock);
    omp_destroy_lock(&slock);
    omp_destroy_lock(&single_lock);
    free(locks);

    OT_CHECK(gcount == (long)ITERS * n * (n + 1) / 2 + 10000L * n,
             "global lock count %ld, expected %ld", gcount,
             (long)ITERS * n * (n + 1) / 2 + 10000L * n);
    OT_CHECK(total == (long)ITERS * n, "lock array total %ld, expected %ld",
             total, (long)ITERS * n);
    OT_CHECK(scount == (long)n * (ITERS / 3), "stack lock count %ld, "
             "expected %ld", scount, (long)n * (ITERS / 3));
    OT_CHECK(failed_while_held == n - 1 && tried == n - 1, "omp_test_lock "
             "failed %ld times of %ld while held, expected %d",
             failed_while_held, tried, n - 1);
    OT_CHECK(got_when_free == n, "omp_test_lock succeeded %ld times on a "
             "free lock, expected %d", got_when_free, n);
    OT_CHECK(single_count == n, "lock made in single: %ld, expected %d",
             single_count, n);
    ot_print("global=%ld array=%ld stack=%ld single=%ld", gcount, total,
             scount, single_count);
    ot_print("test_lock: failed %ld times while held, succeeded %ld times "
             "when free", failed_while_held, got_when_free);
    return ot_finish();
}
