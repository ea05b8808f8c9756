/*
 * task_visibility.c - what a task writes is seen by whoever synchronises
 * with its completion, with no barrier in between: every round of every
 * part below runs inside one parallel region (one single), so only the
 * task constructs order the memory.
 *
 * The array is on the heap and first written by a static loop (under
 * omp-shim its pages are then homed on every rank of the team).
 *   - taskwait: the creator writes the whole array (its pages are then
 *     valid, cached and dirty on its rank), makes CHUNKS tasks that each
 *     add 1 to their own chunk after some work (long enough that idle
 *     threads, under omp-shim those of other ranks, take some), waits with
 *     taskwait and reads every element;
 *   - taskgroup with grandchildren: each task makes two children that
 *     update half of its chunk each, and does not wait for them; the
 *     creator waits at the end of a taskgroup (which covers the
 *     grandchildren) and reads every element (under omp-shim on 3 ranks or
 *     more a grandchild may run on a third rank: its writes must reach the
 *     creator through the rank that ran its parent);
 *   - depend chain: task k reads slot k - 1, which task k - 1 wrote (they
 *     may run on different ranks), and writes slot k; the creator checks
 *     the last slot after taskwait;
 *   - detach: a detached task X (depend out on the array's last element,
 *     homed on the team's last rank) and a task S (depend in on it) that
 *     reads the element; the creator computes a while (so that idle
 *     threads take X), makes another task, writes the element, fulfils X's
 *     event and computes again before it waits: S must see that write
 *     wherever it runs (omp-shim before bc2626b's successor: a thief could
 *     run S without it).
 * The values make every stale read show: each round adds to what the
 * previous round left.  Nothing depends on the schedule: stdout is the
 * same for any team.
 */
#define OT_NAME "task_visibility"
#include "omptest.h"

#define N 32768                 /* doubles: 256 KiB, 16 pages of 16 KiB */
#define CHUNKS 16
#define ROUNDS 40
#define CHAIN 24
#define WORK 150000L

static double *a;
static long chain[CHAIN + 1];

/* Some computation (not a sleep) whose result is 0, so that it can be added
 * without changing the values. */
static double work(long k)
{
    return ot_chain(k, WORK) == 0 ? 1.0 : 0.0;
}

static void add_range(long lo, long hi, double v)
{
    double z = work(lo);
    for (long i = lo; i < hi; i++)
        a[i] += v + z;
}

int main(void)
{
    long bad_wait = 0, bad_group = 0, bad_chain = 0, bad_detach = 0;

    ot_print("threads=%d", ot_team_size());
    /* On the heap, first written in a static loop: under omp-shim each rank
     * then homes its share of the pages, so the creator's copies of the
     * others are copies, which a missed write notice would leave stale. */
    a = malloc(N * sizeof *a);
    if (!a) {
        fprintf(stderr, "task_visibility: malloc failed\n");
        return 1;
    }
#pragma omp parallel for schedule(static)
    for (long i = 0; i < N; i++)
        a[i] = -1.0;
#pragma omp parallel
#pragma omp single
    {
        for (int r = 0; r < ROUNDS; r++) {
            for (long i = 0; i < N; i++)
                a[i] = r;
            for (int c = 0; c < CHUNKS; c++) {
#pragma omp task firstprivate(c)
                add_range((long)c * (N / CHUNKS), (long)(c + 1) * (N / CHUNKS), 1.0);
            }
#pragma omp taskwait
            for (long i = 0; i < N; i++)
                if (a[i] != r + 1.0 && bad_wait++ < 5)
                    ot_error("taskwait, round %d: a[%ld] = %g, expected %g", r, i, a[i],
                             r + 1.0);
        }

        for (int r = 0; r < ROUNDS; r++) {
#pragma omp taskgroup
            {
                for (int c = 0; c < CHUNKS; c++) {
#pragma omp task firstprivate(c)
                    {
                        long lo = (long)c * (N / CHUNKS), mid = lo + N / CHUNKS / 2;
                        long hi = lo + N / CHUNKS;
#pragma omp task firstprivate(lo, mid)
                        add_range(lo, mid, 2.0);
#pragma omp task firstprivate(mid, hi)
                        add_range(mid, hi, 2.0);
                    }
                }
            }
            for (long i = 0; i < N; i++)
                if (a[i] != ROUNDS + 2.0 * (r + 1) && bad_group++ < 5)
                    ot_error("taskgroup, round %d: a[%ld] = %g, expected %g", r, i, a[i],
                             ROUNDS + 2.0 * (r + 1));
        }

        for (int r = 0; r < ROUNDS / 4; r++) {
            chain[0] = r;
            for (int k = 1; k <= CHAIN; k++) {
#pragma omp task firstprivate(k) depend(in: chain[k - 1]) depend(out: chain[k])
                chain[k] = chain[k - 1] + k + (long)work(k);
            }
#pragma omp taskwait
            long want = r + (long)CHAIN * (CHAIN + 1) / 2;
            if (chain[CHAIN] != want && bad_chain++ < 5)
                ot_error("depend chain, round %d: last slot %ld, expected %ld", r,
                         chain[CHAIN], want);
        }

        for (int r = 0; r < ROUNDS / 4; r++) {
            omp_event_handle_t ev;
            double seen = -1.0, *last = &a[N - 1];
#pragma omp task detach(ev) depend(out: last[0])
            seen += work(r);
#pragma omp task depend(in: last[0]) shared(seen)
            seen = last[0];
            double z = 0.0;
            for (int k = 0; k < 8; k++)
                z += work(k);
            /* A scheduling point (under omp-shim a publication, if a thief
             * waits), then the write, the event, and more work, so that a
             * thief may take S before this thread waits. */
#pragma omp task shared(z)
            z += work(r);
            last[0] = 1000.0 + r + z;
            omp_fulfill_event(ev);
            for (int k = 0; k < 8; k++)
                z += work(k);
#pragma omp taskwait
            if (seen != 1000.0 + r && bad_detach++ < 5)
                ot_error("detach, round %d: the successor read %g, expected %g", r, seen,
                         1000.0 + r);
        }
    }
    OT_CHECK(bad_wait == 0, "taskwait: %ld stale elements", bad_wait);
    OT_CHECK(bad_group == 0, "taskgroup: %ld stale elements", bad_group);
    OT_CHECK(bad_chain == 0, "depend chain: %ld stale results", bad_chain);
    OT_CHECK(bad_detach == 0, "detach: %ld stale reads", bad_detach);
    ot_print("taskwait %d rounds, taskgroup %d rounds, chain %d rounds, detach %d rounds",
             ROUNDS, ROUNDS, ROUNDS / 4, ROUNDS / 4);
    free(a);
    return ot_finish();
}
