/*
 * task_many.c - 20,000 tiny tasks.
 *
 * Each task adds a value that depends on its number to a slot of its own
 * (80 KB of ints: tasks that run in different threads write neighbouring
 * slots of the same pages).  After each round every slot must hold its
 * value exactly once:
 *   - one thread makes all 20,000 in a single, then the single's barrier;
 *   - the same with a taskwait after every 1,000;
 *   - every thread makes its share (20,000 in all), then the end of the
 *     region;
 *   - every thread makes its share inside a taskgroup of its own;
 *   - one thread makes them with priority(i % 8) (GOMP_TASK_FLAG_PRIORITY
 *     and the priority argument of GOMP_task; a hint only: any order).
 * A runtime may run them at once, queue them (libgomp runs a task at once
 * when 64 per thread are queued already), or let other threads take them;
 * the slots must be the same.
 */
#define OT_NAME "task_many"
#include "omptest.h"

#define NT 20000

static int slot[NT];

static int value(int i)
{
    return i % 7 + 1;
}

static void reset(void)
{
    int i;

    for (i = 0; i < NT; i++)
        slot[i] = 0;
}

static void check(const char *what)
{
    int i, bad = 0;

    for (i = 0; i < NT; i++)
        if (slot[i] != value(i) && bad++ < 3)
            ot_error("%s: slot %d holds %d, expected %d (%s)", what, i,
                     slot[i], value(i), slot[i] == 0 ? "the task did not "
                     "run" : "the task ran more than once");
    if (bad > 3)
        ot_error("%s: %d slots in all were wrong", what, bad);
}

static long total(void)
{
    long s = 0;
    int i;

    for (i = 0; i < NT; i++)
        s += slot[i];
    return s;
}

int main(void)
{
    int n = ot_team_size();

    ot_print("threads=%d", n);

    reset();
#pragma omp parallel
#pragma omp single
    {
        int i;

        for (i = 0; i < NT; i++) {
#pragma omp task firstprivate(i)
            slot[i] += value(i);
        }
    }
    check("one thread");
    ot_print("%d tasks from one thread: sum %ld", NT, total());

    reset();
#pragma omp parallel
#pragma omp single
    {
        int i;

        for (i = 0; i < NT; i++) {
#pragma omp task firstprivate(i)
            slot[i] += value(i);
            if (i % 1000 == 999) {
#pragma omp taskwait
            }
        }
    }
    check("one thread, taskwait every 1000");
    ot_print("%d tasks from one thread, taskwait every 1000: sum %ld", NT,
             total());

    reset();
#pragma omp parallel
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads();
        int i, lo = (int)((long)NT * me / nt), hi = (int)((long)NT * (me + 1)
                                                          / nt);

        for (i = lo; i < hi; i++) {
#pragma omp task firstprivate(i)
            slot[i] += value(i);
        }
    }
    check("every thread");
    ot_print("%d tasks from %d threads: sum %ld", NT, n, total());

    reset();
#pragma omp parallel
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads();
        int i, lo = (int)((long)NT * me / nt), hi = (int)((long)NT * (me + 1)
                                                          / nt);

#pragma omp taskgroup
        {
            for (i = lo; i < hi; i++) {
#pragma omp task firstprivate(i)
                slot[i] += value(i);
            }
        }
        /* This thread's share is complete: check it here. */
        for (i = lo; i < hi; i++)
            if (slot[i] != value(i)) {
                ot_error("every thread, taskgroup: slot %d holds %d after "
                         "the group, expected %d", i, slot[i], value(i));
                break;
            }
    }
    check("every thread, taskgroup");
    ot_print("%d tasks from %d threads in taskgroups: sum %ld", NT, n,
             total());

    reset();
#pragma omp parallel
#pragma omp single
    {
        int i;

        for (i = 0; i < NT; i++) {
#pragma omp task firstprivate(i) priority(i % 8)
            slot[i] += value(i);
        }
    }
    check("priority(i % 8)");
    ot_print("%d tasks with priority(i %% 8): sum %ld", NT, total());
    return ot_finish();
}
