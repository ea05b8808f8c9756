/*
 * barrier.c - the barrier construct.
 *
 * 50 phases.  In each, every thread writes its own block of a shared array
 * (values naming the phase) and counts its arrival; after a barrier every
 * thread reads the whole array and every arrival count, which must all be
 * of this phase (no thread left the barrier early, every write before it
 * is seen after it); a second barrier keeps the next phase's writes away
 * from this phase's reads.  Also a barrier in an orphaned function and
 * one outside any region (a no-op for a team of one).
 */
#define OT_NAME "barrier"
#include "omptest.h"

#define PHASES 50
#define N 8192

static long arr[N];
static int arrived[OT_MAX_THREADS];
static int orphan_before[OT_MAX_THREADS], orphan_ok[OT_MAX_THREADS];

static void orphan_barrier(int me, int nt)
{
    int t, ok = 1;

    orphan_before[me] = 1;
#pragma omp barrier
    for (t = 0; t < nt; t++)
        if (orphan_before[t] != 1)
            ok = 0;
    orphan_ok[me] = ok;
}

static long value(int phase, long i)
{
    return (long)phase * 100000 + i;
}

int main(void)
{
    int n = ot_team_size();
    long bad = 0;
    int t;

    ot_print("threads=%d", n);

#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads(), phase, t;
        long lo = (long)N * me / nt, hi = (long)N * (me + 1) / nt, i;

        for (phase = 0; phase < PHASES; phase++) {
            for (i = lo; i < hi; i++)
                arr[i] = value(phase, i);
            arrived[me] = phase + 1;
#pragma omp barrier
            for (t = 0; t < nt; t++)
                if (arrived[t] != phase + 1)
                    bad++;
            for (i = 0; i < N; i++) {
                if (arr[(i + lo) % N] != value(phase, (i + lo) % N)) {
                    bad++;
                    break;
                }
            }
#pragma omp barrier
        }
        orphan_barrier(me, nt);
    }
#pragma omp barrier

    OT_CHECK(bad == 0, "%ld wrong values seen after barriers", bad);
    for (t = 0; t < n; t++)
        OT_CHECK(orphan_ok[t] == 1, "thread %d left the orphaned barrier "
                 "before all threads arrived", t);
    ot_print("%d phases, 2 barriers each, %ld wrong", PHASES, bad);
    return ot_finish();
}
