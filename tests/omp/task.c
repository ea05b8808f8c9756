/*
 * task.c - explicit tasks and taskwait.
 *
 * One thread (in a single) creates 100 tasks, each writing its own slot
 * from a firstprivate index, waits for them with taskwait and checks the
 * slots; every thread creates 20 tasks and the barrier at the end of the
 * region completes them; a recursive Fibonacci with a task per call and
 * taskwait before the sum (the children write variables of the parent
 * task's stack, shared); undeferred (if(0)), final, untied and mergeable
 * tasks; a chain of tasks ordered by depend clauses; taskyield.  The
 * runtime may run a task at once in the thread that creates it or later
 * in any thread of the team; the results must not depend on which.
 */
#define OT_NAME "task"
#include "omptest.h"

#define SINGLE_TASKS 100
#define PER_THREAD 20

static long slots[SINGLE_TASKS];
static long team_slots[OT_MAX_THREADS * PER_THREAD];
static int created_by_single;

static long fib(int k)
{
    long x, y;

    if (k < 2)
        return k;
#pragma omp task shared(x) firstprivate(k)
    x = fib(k - 1);
#pragma omp task shared(y) firstprivate(k)
    y = fib(k - 2);
#pragma omp taskwait
    return x + y;
}

int main(void)
{
    int n = ot_team_size();
    long fib_result = -1, chain = 0, kinds = 0, team_sum = 0;
    int i, bad_after_taskwait = 0;

    ot_print("threads=%d", n);

#pragma omp parallel
    {
        int me = omp_get_thread_num(), k;

#pragma omp single
        {
            for (i = 0; i < SINGLE_TASKS; i++) {
#pragma omp task firstprivate(i)
                slots[i] = (long)i * i + 1;
            }
#pragma omp taskwait
            for (i = 0; i < SINGLE_TASKS; i++)
                if (slots[i] != (long)i * i + 1)
                    bad_after_taskwait++;
            created_by_single = 1;
        }

        for (k = 0; k < PER_THREAD; k++) {
#pragma omp task firstprivate(me, k)
            {
                team_slots[me * PER_THREAD + k] = (long)me * 100 + k;
#pragma omp taskyield
            }
        }
    }
    for (i = 0; i < n * PER_THREAD; i++)
        team_sum += team_slots[i];
    OT_CHECK(bad_after_taskwait == 0, "%d slots not written after taskwait",
             bad_after_taskwait);
    {
        long want = 0;

        for (i = 0; i < n * PER_THREAD; i++)
            want += (long)(i / PER_THREAD) * 100 + i % PER_THREAD;
        OT_CHECK(team_sum == want, "tasks of all threads: sum %ld, expected "
                 "%ld", team_sum, want);
    }
    ot_print("single: %d tasks, taskwait; team: %d tasks, sum=%ld",
             SINGLE_TASKS, n * PER_THREAD, team_sum);

#pragma omp parallel
#pragma omp single
    fib_result = fib(15);
    OT_CHECK(fib_result == 610, "fib(15) with tasks: %ld, expected 610",
             fib_result);
    ot_print("fib(15)=%ld", fib_result);

#pragma omp parallel
#pragma omp single
    {
        long a = 0, b = 0, c = 0;

#pragma omp task if (0) shared(kinds)
        kinds += 1;
#pragma omp task final(1) shared(kinds)
        {
#pragma omp atomic
            kinds += 10;
            /* Inside a final task every new task is included. */
#pragma omp task shared(kinds)
            {
#pragma omp atomic
                kinds += 100;
            }
        }
#pragma omp task untied shared(kinds)
        {
#pragma omp atomic
            kinds += 1000;
        }
#pragma omp task mergeable shared(kinds)
        {
#pragma omp atomic
            kinds += 10000;
        }

#pragma omp task depend(out: a) shared(a)
        a = 5;
#pragma omp task depend(in: a) depend(out: b) shared(a, b)
        b = a * 3;
#pragma omp task depend(in: b) depend(out: c) shared(b, c)
        c = b + 7;
#pragma omp task depend(in: c) shared(c, chain)
        chain = c * 2;
#pragma omp taskwait
    }
    OT_CHECK(kinds == 11111, "if(0)/final/untied/mergeable tasks: %ld, "
             "expected 11111", kinds);
    OT_CHECK(chain == 44, "depend chain: %ld, expected 44", chain);
    ot_print("task kinds=%ld; depend chain=%ld", kinds, chain);
    OT_CHECK(created_by_single == 1, "the single did not run");
    return ot_finish();
}
