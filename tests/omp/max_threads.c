/*
 * max_threads.c - omp_get_max_threads, omp_set_num_threads,
 * omp_get_num_threads, omp_get_num_procs, omp_get_thread_limit.
 *
 * omp_get_max_threads() is the team size of the next region without a
 * num_threads clause: the default n (OMP_NUM_THREADS for libgomp, ranks x
 * threads per rank for the shim).  omp_set_num_threads(k) for k = 1..n
 * changes it (and the next region's size) until it is set again; set
 * inside a region it applies to regions nested in the calling thread only,
 * not to the next top-level region; omp_get_num_threads() is 1 outside any
 * region.  omp_get_num_procs() and omp_get_thread_limit() are only checked
 * to be positive (their values depend on the machine).
 */
#define OT_NAME "max_threads"
#include "omptest.h"

static int team_seen[OT_MAX_THREADS + 1];
static int inner_max[OT_MAX_THREADS];

int main(void)
{
    int n = ot_team_size();
    int k, t, in_region_max = -1;

    ot_print("threads=%d", n);
    OT_CHECK(omp_get_num_threads() == 1, "omp_get_num_threads() is %d "
             "outside any region", omp_get_num_threads());
    OT_CHECK(omp_get_num_procs() >= 1, "omp_get_num_procs() is %d",
             omp_get_num_procs());
    OT_CHECK(omp_get_thread_limit() >= n, "omp_get_thread_limit() is %d, "
             "less than the team size %d", omp_get_thread_limit(), n);

    for (k = 1; k <= n; k++) {
        omp_set_num_threads(k);
        OT_CHECK(omp_get_max_threads() == k, "after omp_set_num_threads(%d): "
                 "omp_get_max_threads() is %d", k, omp_get_max_threads());
#pragma omp parallel
        {
#pragma omp master
            team_seen[k] = omp_get_num_threads();
            /* Inside the region the ICV is the same as outside. */
            if (omp_get_max_threads() != k)
                ot_error("omp_get_max_threads() is %d inside a region "
                         "started after omp_set_num_threads(%d)",
                         omp_get_max_threads(), k);
        }
        OT_CHECK(team_seen[k] == k, "after omp_set_num_threads(%d) the "
                 "team had %d threads", k, team_seen[k]);
    }
    ot_print("omp_set_num_threads(1..%d): teams of 1..%d", n, n);

    omp_set_num_threads(n);
#pragma omp parallel
    {
        int me = omp_get_thread_num();

        /* Changes this thread's copy of the ICV only. */
        omp_set_num_threads(1);
        inner_max[me] = omp_get_max_threads();
#pragma omp master
        in_region_max = omp_get_max_threads();
    }
    for (t = 0; t < n; t++)
        OT_CHECK(inner_max[t] == 1, "thread %d: omp_get_max_threads() %d "
                 "after omp_set_num_threads(1) in the region", t,
                 inner_max[t]);
    OT_CHECK(in_region_max == 1, "master saw %d", in_region_max);
    OT_CHECK(omp_get_max_threads() == n, "a omp_set_num_threads(1) inside "
             "a region changed the initial thread's value to %d, expected %d",
             omp_get_max_threads(), n);
#pragma omp parallel
#pragma omp master
    team_seen[0] = omp_get_num_threads();
    OT_CHECK(team_seen[0] == n, "next region after a set inside a region: "
             "%d threads, expected %d", team_seen[0], n);
    ot_print("set inside a region stays in the region; next team: %d",
             team_seen[0]);
    return ot_finish();
}
