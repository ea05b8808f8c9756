/*
 * in_parallel.c - omp_in_parallel.
 *
 * False outside any region; true in every thread of an active region (a
 * team of more than one thread); false in a region of one thread
 * (num_threads(1), if(0), or a default team of one), which is inactive; in
 * an orphaned function it reports the region of the caller.
 */
#define OT_NAME "in_parallel"
#include "omptest.h"

static int seen_default[OT_MAX_THREADS], seen_one, seen_if0;
static int seen_orphan[OT_MAX_THREADS];

static int orphan(void)
{
    return omp_in_parallel();
}

int main(void)
{
    int n = ot_team_size();
    int t, active = n > 1;

    ot_print("threads=%d", n);
    OT_CHECK(!omp_in_parallel(), "omp_in_parallel() true outside any "
             "region");
    OT_CHECK(!orphan(), "omp_in_parallel() true in a function called "
             "outside any region");

#pragma omp parallel
    {
        int me = omp_get_thread_num();

        seen_default[me] = omp_in_parallel();
        seen_orphan[me] = orphan();
    }
#pragma omp parallel num_threads(1)
    seen_one = omp_in_parallel();
#pragma omp parallel if (0)
    seen_if0 = omp_in_parallel();

    for (t = 0; t < n; t++) {
        OT_CHECK(seen_default[t] == active, "thread %d: omp_in_parallel() "
                 "%d in a team of %d", t, seen_default[t], n);
        OT_CHECK(seen_orphan[t] == active, "thread %d: omp_in_parallel() %d "
                 "in an orphaned function in a team of %d", t,
                 seen_orphan[t], n);
    }
    OT_CHECK(seen_one == 0, "omp_in_parallel() true in num_threads(1)");
    OT_CHECK(seen_if0 == 0, "omp_in_parallel() true in if(0)");
    OT_CHECK(!omp_in_parallel(), "omp_in_parallel() true after the regions");
    ot_print("default team: %d; num_threads(1): %d; if(0): %d; outside: %d",
             seen_default[0], seen_one, seen_if0, omp_in_parallel());
    return ot_finish();
}
