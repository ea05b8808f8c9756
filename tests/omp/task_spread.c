/*
 * task_spread.c - tasks run in parallel: idle threads take tasks that
 * another thread created.
 *
 * Each task computes for about 2 ms (a chain of multiplications whose
 * result is checked afterwards against the same computation done
 * sequentially, not a sleep), counts its run with an atomic and records
 * omp_get_thread_num() of the thread that ran it in its own slot.  Three
 * ways of making them:
 *   - single: one thread creates 40 tasks in a single; the others wait at
 *     the single's barrier, where they can run them;
 *   - masked: thread 0 creates 40 tasks in a masked construct (no barrier);
 *     the others reach the end of the region, where they can run them;
 *   - every thread: each thread creates 2 tasks, thread 0 another 32:
 *     the other threads, done with their own, can take some of thread 0's.
 * After each region every task must have run exactly once with the right
 * result, and, when the team has 2 threads or more, the tasks made by one
 * thread must have run in at least 2 different threads.  OpenMP allows a
 * runtime to run every task at once in the thread that creates it, so that
 * last check is not a conformance check but the point of issue 41 (tasks
 * run in parallel across ranks): a runtime that runs tasks at once, as
 * omp-shim does until issue 41, fails it.  The stock libgomp queues the
 * tasks (fewer than 64 per thread of the team) and wakes the waiting
 * threads, so with 40 tasks of 2 ms each the others always get some.  How many
 * threads ran them goes to stderr only: stdout is the same for any
 * schedule.
 */
#define OT_NAME "task_spread"
#include "omptest.h"

#define NTASKS 40
#define EXTRA0 32               /* thread 0's extra tasks, "every thread" */
#define PER_THREAD 2
#define STEPS 4000000L          /* about 8-24 ms on one core: a rank whose
                                 * process starts late on a full host (30 ms;
                                 * more under make check -j2) still finds
                                 * tasks left */
#define MAX_TASKS (OT_MAX_THREADS * PER_THREAD + EXTRA0)

static unsigned long result[MAX_TASKS], expected[MAX_TASKS];
static int runs[MAX_TASKS];
static int ran_by[MAX_TASKS];

/* Work whose result the compiler cannot know: a multiplicative generator
 * with a shift mixed in, STEPS steps from a seed. */
static unsigned long busy(unsigned long seed)
{
    unsigned long x = seed * 2654435761UL + 1;
    long k;

    for (k = 0; k < STEPS; k++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        x ^= x >> 29;
    }
    return x;
}

static void run_task(int slot)
{
    result[slot] = busy((unsigned long)slot + 1);
    ran_by[slot] = omp_get_thread_num();
#pragma omp atomic
    runs[slot]++;
}

static void reset(void)
{
    int i;

    for (i = 0; i < MAX_TASKS; i++) {
        result[i] = 0;
        runs[i] = 0;
        ran_by[i] = -1;
    }
}

/* Slots first..first+count-1 each ran once, with the right result, in a
 * thread of the team.  Returns how many different threads ran them. */
static int check_tasks(const char *what, int first, int count, int n)
{
    int seen[OT_MAX_THREADS] = { 0 };
    int i, distinct = 0, bad = 0;

    for (i = first; i < first + count; i++) {
        if (runs[i] != 1) {
            if (bad++ < 3)
                ot_error("%s: task %d ran %d times, expected once", what, i,
                         runs[i]);
            continue;
        }
        if (result[i] != expected[i]) {
            if (bad++ < 3)
                ot_error("%s: task %d computed %lu, expected %lu", what, i,
                         result[i], expected[i]);
        }
        if (ran_by[i] < 0 || ran_by[i] >= n) {
            if (bad++ < 3)
                ot_error("%s: task %d ran in thread %d, not in the team of "
                         "%d", what, i, ran_by[i], n);
            continue;
        }
        if (!seen[ran_by[i]]++)
            distinct++;
    }
    if (bad > 3)
        ot_error("%s: %d tasks in all were wrong", what, bad);
    return distinct;
}

/* How many different threads ran slots first..first+count-1. */
static int count_threads(int first, int count, int n)
{
    int seen[OT_MAX_THREADS] = { 0 };
    int i, distinct = 0;

    for (i = first; i < first + count; i++)
        if (ran_by[i] >= 0 && ran_by[i] < n && !seen[ran_by[i]]++)
            distinct++;
    return distinct;
}

/* The parallelism check, and its diagnosis on stderr. */
static void check_spread(const char *what, int distinct, int count, int n)
{
    fprintf(stderr, "%s: %s: %d tasks ran in %d different thread(s) of a "
            "team of %d\n", OT_NAME, what, count, distinct, n);
    if (n >= 2)
        OT_CHECK(distinct >= 2, "%s: all %d tasks made by one thread ran in "
                 "one thread, none in the %d other(s): the tasks did not "
                 "run in parallel", what, count, n - 1);
}

int main(void)
{
    int n = ot_team_size();
    int distinct, s;

    ot_print("threads=%d", n);
    /* The results the tasks must find, computed once, sequentially. */
    for (s = 0; s < NTASKS || s < EXTRA0 + n * PER_THREAD; s++)
        expected[s] = busy((unsigned long)s + 1);

    /* One thread creates the tasks in a single; the others wait at the
     * single's barrier. */
    reset();
#pragma omp parallel
    {
#pragma omp single
        {
            int i;

            for (i = 0; i < NTASKS; i++) {
#pragma omp task firstprivate(i)
                run_task(i);
            }
        }
    }
    distinct = check_tasks("single", 0, NTASKS, n);
    check_spread("single", distinct, NTASKS, n);
    ot_print("single: %d tasks of %ld steps, each ran once", NTASKS, STEPS);

    /* Thread 0 creates them in a masked construct, without a barrier: the
     * others meet them at the end of the region. */
    reset();
#pragma omp parallel
    {
#pragma omp masked
        {
            int i;

            for (i = 0; i < NTASKS; i++) {
#pragma omp task firstprivate(i)
                run_task(i);
            }
        }
    }
    distinct = check_tasks("masked", 0, NTASKS, n);
    check_spread("masked", distinct, NTASKS, n);
    ot_print("masked: %d tasks of %ld steps, each ran once", NTASKS, STEPS);

    /* Every thread creates tasks, thread 0 many more than the others:
     * slots 0..PER_THREAD+EXTRA0-1 are thread 0's, then PER_THREAD for
     * each other thread. */
    reset();
#pragma omp parallel
    {
        int me = omp_get_thread_num();
        int first = me == 0 ? 0 : EXTRA0 + me * PER_THREAD;
        int count = me == 0 ? PER_THREAD + EXTRA0 : PER_THREAD;
        int i;

        for (i = first; i < first + count; i++) {
#pragma omp task firstprivate(i)
            run_task(i);
        }
    }
    distinct = check_tasks("every thread", 0, EXTRA0 + n * PER_THREAD, n);
    fprintf(stderr, "%s: every thread: %d tasks ran in %d different "
            "thread(s)\n", OT_NAME, EXTRA0 + n * PER_THREAD, distinct);
    distinct = count_threads(0, PER_THREAD + EXTRA0, n);
    check_spread("every thread, thread 0's", distinct, PER_THREAD + EXTRA0,
                 n);
    ot_print("every thread: %d tasks (%d by thread 0), each ran once",
             EXTRA0 + n * PER_THREAD, PER_THREAD + EXTRA0);
    return ot_finish();
}
