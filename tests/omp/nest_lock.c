/*
 * nest_lock.c - nestable locks: omp_init_nest_lock, omp_set_nest_lock,
 * omp_unset_nest_lock, omp_test_nest_lock, omp_destroy_nest_lock.
 *
 * The owner of a nestable lock may set it again; omp_test_nest_lock returns
 * the new nesting count when it gets the lock and 0 when another thread
 * holds it; the lock is free again after as many unsets as sets.  A
 * recursive function takes the lock at every level (depth 3) around
 * non-atomic updates checked with an "inside" count; thread 0 holds the
 * lock at depth 2 across two barriers while the others test it; then each
 * thread in turn gets it with omp_test_nest_lock, nests it, and releases it
 * fully.  About 150 lock operations per thread.
 */
#define OT_NAME "nest_lock"
#include "omptest.h"

#define ITERS 30

static omp_nest_lock_t nlock;
static int inside;
static long count, depth_sum;

/* Take the lock at each of depth levels, update, release. */
static void recurse(int depth, int me)
{
    omp_set_nest_lock(&nlock);
    if (depth == 1) {
        inside++;
        OT_CHECK(inside == 1, "%d threads inside the nest lock", inside);
        count++;
        depth_sum += me + 1;
        inside--;
    } else {
        recurse(depth - 1, me);
    }
    omp_unset_nest_lock(&nlock);
}

int main(void)
{
    int n = ot_team_size();
    long blocked = 0, got = 0, tried = 0;

    omp_init_nest_lock(&nlock);
    ot_print("threads=%d", n);

#pragma omp parallel reduction(+:blocked, got, tried)
    {
        int me = omp_get_thread_num(), k, t, c;

        for (k = 0; k < ITERS; k++)
            recurse(3, me);

#pragma omp barrier
        if (me == 0) {
            omp_set_nest_lock(&nlock);
            c = omp_test_nest_lock(&nlock);
            OT_CHECK(c == 2, "omp_test_nest_lock by the owner returned %d, "
                     "expected 2", c);
        }
#pragma omp barrier
        if (me != 0) {
            tried++;
            c = omp_test_nest_lock(&nlock);
            if (c == 0)
                blocked++;
            else
                ot_error("omp_test_nest_lock returned %d while thread 0 "
                         "holds the lock", c);
        }
#pragma omp barrier
        if (me == 0) {
            omp_unset_nest_lock(&nlock);
            omp_unset_nest_lock(&nlock);
        }
#pragma omp barrier
        for (t = 0; t < omp_get_num_threads(); t++) {
            if (t == me) {
                c = omp_test_nest_lock(&nlock);
                OT_CHECK(c == 1, "omp_test_nest_lock on a free lock "
                         "returned %d, expected 1", c);
                if (c != 0) {
                    got++;
                    c = omp_test_nest_lock(&nlock);
                    OT_CHECK(c == 2, "second omp_test_nest_lock returned "
                             "%d, expected 2", c);
                    omp_set_nest_lock(&nlock);
                    omp_unset_nest_lock(&nlock);
                    omp_unset_nest_lock(&nlock);
                    omp_unset_nest_lock(&nlock);
                }
            }
#pragma omp barrier
        }
    }
    omp_destroy_nest_lock(&nlock);

    OT_CHECK(count == (long)n * ITERS, "count %ld, expected %ld", count,
             (long)n * ITERS);
    OT_CHECK(depth_sum == (long)ITERS * n * (n + 1) / 2, "sum %ld, expected "
             "%ld", depth_sum, (long)ITERS * n * (n + 1) / 2);
    OT_CHECK(blocked == n - 1 && tried == n - 1, "test failed %ld times of "
             "%ld while held, expected %d", blocked, tried, n - 1);
    OT_CHECK(got == n, "test succeeded %ld times on a free lock, expected %d",
             got, n);
    ot_print("count=%ld sum=%ld blocked=%ld got=%ld", count, depth_sum,
             blocked, got);
    return ot_finish();
}
