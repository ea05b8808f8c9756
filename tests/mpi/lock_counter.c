/*
 * lock_counter.c - mutual exclusion and release -> acquire visibility.
 *
 * Every rank increments shared counters M times, each under a DSM lock.  A
 * lost update (two ranks inside one critical section, or an acquirer that
 * still sees a stale copy of the page) makes a final value smaller than N*M.
 * The counters are placed so that several paths are covered:
 *   c0  page A, homed on node 0,        lock 0
 *   c1  page B, homed on node N-1,      lock 0, in the same critical section
 *       as c0: inside it c0 == c1 must hold (both pages must be fresh)
 *   c2  page A again, another word,     lock 1: page A gets concurrent
 *       writers under different locks, whose diffs must merge at the home
 *   c3  page C, homed on node 1,        the highest lock id
 * After a barrier every rank checks c0..c3 == N*M.
 *
 * Run by run-mpi-test.sh with 2, 3 and 4 ranks, for each DSM_COMM variant.
 * MPITEST_ITERS overrides M.
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int n, lmax;
    long m;
    size_t ps;
    char *mem;
    volatile uint64_t *c0, *c1, *c2, *c3;
    uint64_t last0 = 0, total;

    mt_init(&argc, &argv);
    m = mt_param("MPITEST_ITERS", 500);
    n = dsm_node_count();
    ps = dsm_page_size();
    lmax = dsm_lock_count() - 1;
    if (lmax < 1)
        mt_fail("dsm_lock_count() is %d, need at least 2", lmax + 1);

    /* Three pages, each allocation homed explicitly. */
    mem = mt_malloc_home(ps, DSM_HOME_NODE, 0);
    c0 = (volatile uint64_t *)mem;
    c2 = (volatile uint64_t *)(mem + ps / 2);
    c1 = mt_malloc_home(ps, DSM_HOME_NODE, n - 1);
    c3 = mt_malloc_home(ps, DSM_HOME_NODE, 1 % n);
    if (dsm_home_of((void *)c0) != 0 || dsm_home_of((void *)c1) != n - 1
        || dsm_home_of((void *)c3) != 1 % n)
        mt_fail("homes are %d %d %d, expected 0 %d %d",
                dsm_home_of((void *)c0), dsm_home_of((void *)c1),
                dsm_home_of((void *)c3), n - 1, 1 % n);
    mt_note("%d ranks x %ld increments, locks 0, 1 and %d", n, m, lmax);

    for (long i = 0; i < m; i++) {
        dsm_lock_acquire(0);
        if (*c0 != *c1)
            mt_fail("iteration %ld: inside lock 0, c0 = %" PRIu64
                    " but c1 = %" PRIu64 " (updated together)",
                    i, *c0, *c1);
        if (*c0 < last0 || *c0 >= (uint64_t)n * (uint64_t)m)
            mt_fail("iteration %ld: c0 = %" PRIu64 ", but this rank last "
                    "wrote %" PRIu64 " and the total is %" PRIu64,
                    i, *c0, last0, (uint64_t)n * (uint64_t)m);
        last0 = *c0 + 1;
        *c0 = last0;
        *c1 = *c1 + 1;
        dsm_lock_release(0);

        dsm_lock_acquire(1);
        *c2 = *c2 + 1;
        dsm_lock_release(1);

        dsm_lock_acquire(lmax);
        *c3 = *c3 + 1;
        dsm_lock_release(lmax);
    }
    dsm_barrier();

    total = (uint64_t)n * (uint64_t)m;
    mt_expect_u64("c0 (lock 0, home 0)", (const uint64_t *)c0, total);
    mt_expect_u64("c1 (lock 0, home N-1)", (const uint64_t *)c1, total);
    mt_expect_u64("c2 (lock 1, page of c0)", (const uint64_t *)c2, total);
    mt_expect_u64("c3 (highest lock, home 1)", (const uint64_t *)c3, total);
    mt_check_point("final counters");

    /* Nobody may free while another rank still reads. */
    dsm_barrier();
    dsm_free((void *)c3);
    dsm_free((void *)c1);
    dsm_free(mem);
    mt_finalize();
    return 0;
}
