/*
 * service_after_wait.c - a node that has just left a long wait still serves
 * page requests while it computes.
 *
 * While an application thread polls in a barrier, a lock acquire or a
 * collective, the communication thread stands by and is woken when that
 * wait ends (libdsm(7), "The communication thread").  This test makes the
 * case where a missing wake-up shows: rank 1 waits for a lock that rank 0
 * holds while serving rank 0's page requests (so its wait is never idle
 * and never sleeps), gets the lock, and then computes for --compute ms
 * without calling libdsm.  Rank 0 then reads one more page homed on rank 1;
 * that read must not wait for the communication thread's standby to run
 * out (100 ms).  Such a read takes well under 1 ms here (0.1-2.4 ms on 2
 * ranks, direct and queue); without the wake-up at the end of the wait, 3
 * to 8 of 10 reads took 70-92 ms (direct and multiple, 2 and 3 ranks) and
 * the others under 1 ms: the comm thread had not yet gone into its standby.
 * A loaded machine (other jobs on the 2 cores) once made one read of 10 take
 * 41-67 ms with the wake-up in place.  So the test fails when more than
 * MPITEST_MAX_SLOW reads (default 1) take over MPITEST_MAX_MS (default 40
 * ms), and prints every slow read: one stall is the machine, a missing
 * wake-up shows in several reads (docs/RESULTS.md, "service_after_wait").
 * Every value read is checked.  Ranks above 1 only take part in the
 * barriers.
 *
 * Run by run-mpi-test.sh with 2, 3 and 4 ranks, for each DSM_COMM variant.
 * MPITEST_ITERS overrides the number of iterations (default 12).
 */
#include <time.h>

#include "mpitest.h"

#define NPAGES 512          /* pages rank 0 reads while rank 1 waits */

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Busy for s seconds, without calling libdsm. */
static void compute(double s)
{
    volatile double x = 0;
    double t0 = now_s();

    while (now_s() - t0 < s)
        x += 1;
}

static unsigned char value_of(long it, long page)
{
    return (unsigned char)(it * 7 + page + 1);
}

int main(int argc, char **argv)
{
    long iters, max_ms, max_slow, slow = 0, it, i;
    double worst = 0;
    size_t ps;
    unsigned char *a;

    mt_init(&argc, &argv);
    iters = mt_param("MPITEST_ITERS", 12);
    max_ms = mt_param("MPITEST_MAX_MS", 40);
    max_slow = mt_param("MPITEST_MAX_SLOW", 1);
    ps = dsm_page_size();
    a = mt_malloc_home((NPAGES + 1) * ps, DSM_HOME_NODE, 1);
    mt_note("%d ranks, %ld iterations, at most %ld reads after the wait may take > %ld ms",
            dsm_node_count(), iters, max_slow, max_ms);

    for (it = 0; it < iters; it++) {
        if (dsm_node_id() == 1)
            for (i = 0; i <= NPAGES; i++)
                a[i * ps] = value_of(it, i);
        dsm_barrier();
        if (dsm_node_id() == 0) {
            dsm_lock_acquire(0);
            compute(0.002);                     /* rank 1 is now waiting */
            for (i = 0; i < NPAGES; i++)        /* and serving meanwhile */
                if (a[i * ps] != value_of(it, i))
                    mt_error("iteration %ld: page %ld reads %u, rank 1 wrote %u",
                             it, i, a[i * ps], value_of(it, i));
            dsm_lock_release(0);
            compute(0.005);                     /* rank 1 has the lock and computes */
            double t0 = now_s();
            unsigned char v = a[NPAGES * ps];
            double ms = (now_s() - t0) * 1e3;
            if (v != value_of(it, NPAGES))
                mt_error("iteration %ld: the last page reads %u, rank 1 wrote %u",
                         it, v, value_of(it, NPAGES));
            if (ms > (double)max_ms) {
                slow++;
                mt_note("iteration %ld: a page request to rank 1, computing after its "
                        "lock wait, took %.1f ms (over %ld ms)", it, ms, max_ms);
            }
            if (ms > worst)
                worst = ms;
        } else if (dsm_node_id() == 1) {
            compute(0.001);                     /* let rank 0 take the lock first */
            dsm_lock_acquire(0);
            dsm_lock_release(0);
            compute(0.1);
        }
        dsm_barrier();
    }
    if (dsm_node_id() == 0) {
        mt_note("slowest read after the wait: %.2f ms", worst);
        if (slow > max_slow)
            mt_error("%ld of %ld reads after a lock wait took over %ld ms (at most %ld "
                     "may): rank 1's communication thread was not woken when its wait "
                     "ended", slow, iters, max_ms, max_slow);
    }
    mt_check_point("reads after a lock wait");
    dsm_barrier();
    dsm_free(a);
    mt_finalize();
    return 0;
}
