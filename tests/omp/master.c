/*
 * master.c - the master construct (and masked filter, OpenMP 5.1).
 *
 * 50 master constructs in a region: each runs in thread 0 only, with no
 * barrier at its end, so the other threads check what master wrote only
 * after an explicit barrier.  master in an orphaned function called inside
 * a region and outside any (where the initial thread is thread 0); masked
 * filter(n - 1) runs in the last thread only.
 */
#define OT_NAME "master"
#include "omptest.h"

#define ROUNDS 50

static int runs, masked_runs, ran_in[OT_MAX_THREADS];
static int masked_in[OT_MAX_THREADS];
static long value;

static void orphan(void)
{
#pragma omp master
    runs++;
}

int main(void)
{
    int n = ot_team_size();
    int t;

    ot_print("threads=%d", n);

#pragma omp parallel
    {
        int me = omp_get_thread_num(), r;

        for (r = 0; r < ROUNDS; r++) {
#pragma omp master
            {
                runs++;
                ran_in[me]++;
                value += r;
            }
        }
#pragma omp barrier
        OT_CHECK(value == (long)ROUNDS * (ROUNDS - 1) / 2, "after the "
                 "barrier: value %ld, expected %ld", value,
                 (long)ROUNDS * (ROUNDS - 1) / 2);
        orphan();
#pragma omp masked filter(n - 1)
        {
            masked_runs++;
            masked_in[me]++;
        }
    }
    orphan();

    OT_CHECK(runs == ROUNDS + 2, "master ran %d times, expected %d", runs,
             ROUNDS + 2);
    OT_CHECK(ran_in[0] == ROUNDS, "master ran %d times in thread 0, "
             "expected %d", ran_in[0], ROUNDS);
    for (t = 1; t < n; t++)
        OT_CHECK(ran_in[t] == 0, "master ran %d times in thread %d", ran_in[t],
                 t);
    OT_CHECK(masked_runs == 1 && masked_in[n - 1] == 1, "masked filter(%d) "
             "ran %d times, %d in thread %d", n - 1, masked_runs,
             masked_in[n - 1], n - 1);
    ot_print("master: %d runs, all in thread 0; masked filter(%d): %d run",
             runs, n - 1, masked_runs);
    return ot_finish();
}
