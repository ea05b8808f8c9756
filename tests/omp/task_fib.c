/*
 * task_fib.c - recursive Fibonacci with tasks and a cut-off.
 *
 * Each call above the cut-off depth makes a task for each of its two
 * recursive calls and waits for them with taskwait (the children write
 * the parent's locals, shared); below it the recursion is sequential.
 * Four forms, each checked against the iterative value:
 *   - cut-off by hand: tasks down to depth CUT, plain calls below;
 *   - final(depth > CUT) mergeable: every call makes tasks, those below
 *     the cut-off are final, so their descendants are included (run at
 *     once by the thread that meets them) and may be merged;
 *   - if(depth < CUT): every call makes tasks, those below the cut-off
 *     undeferred;
 *   - every thread computes its own Fibonacci number at once, with tasks,
 *     so that the tasks of several trees are in flight together.
 * The runtime may run any task at once or later in any thread; the
 * values must not depend on which.
 */
#define OT_NAME "task_fib"
#include "omptest.h"

#define CUT 6                   /* 2^6 leaves of tasks in the first form */

static long fib_iter(int k)
{
    long a = 0, b = 1, t;
    int i;

    for (i = 0; i < k; i++) {
        t = a + b;
        a = b;
        b = t;
    }
    return a;
}

static long fib_seq(int k)
{
    return k < 2 ? k : fib_seq(k - 1) + fib_seq(k - 2);
}

/* Tasks above the cut-off depth, sequential below. */
static long fib_cut(int k, int depth)
{
    long x, y;

    if (k < 2)
        return k;
    if (depth >= CUT)
        return fib_seq(k);
#pragma omp task shared(x) firstprivate(k, depth)
    x = fib_cut(k - 1, depth + 1);
#pragma omp task shared(y) firstprivate(k, depth)
    y = fib_cut(k - 2, depth + 1);
#pragma omp taskwait
    return x + y;
}

/* Tasks at every level; below the cut-off they are final (their
 * descendants included) and mergeable. */
static long fib_final(int k, int depth)
{
    long x, y;

    if (k < 2)
        return k;
#pragma omp task shared(x) firstprivate(k, depth) final(depth > CUT) \
    mergeable
    x = fib_final(k - 1, depth + 1);
#pragma omp task shared(y) firstprivate(k, depth) final(depth > CUT) \
    mergeable
    y = fib_final(k - 2, depth + 1);
#pragma omp taskwait
    return x + y;
}

/* Tasks at every level; below the cut-off they are undeferred. */
static long fib_if(int k, int depth)
{
    long x, y;

    if (k < 2)
        return k;
#pragma omp task shared(x) firstprivate(k, depth) if(depth < CUT)
    x = fib_if(k - 1, depth + 1);
#pragma omp task shared(y) firstprivate(k, depth) if(depth < CUT)
    y = fib_if(k - 2, depth + 1);
#pragma omp taskwait
    return x + y;
}

int main(void)
{
    int n = ot_team_size();
    long cut = -1, fin = -1, iff = -1;
    long per_thread[OT_MAX_THREADS];
    int t;

    ot_print("threads=%d", n);

#pragma omp parallel
#pragma omp single
    cut = fib_cut(27, 0);
    OT_CHECK(cut == fib_iter(27), "fib(27) with tasks to depth %d: %ld, "
             "expected %ld", CUT, cut, fib_iter(27));
    ot_print("cut-off at depth %d: fib(27)=%ld", CUT, cut);

#pragma omp parallel
#pragma omp single
    fin = fib_final(18, 0);
    OT_CHECK(fin == fib_iter(18), "fib(18) with final(depth > %d) mergeable "
             "tasks: %ld, expected %ld", CUT, fin, fib_iter(18));
    ot_print("final(depth > %d) mergeable: fib(18)=%ld", CUT, fin);

#pragma omp parallel
#pragma omp single
    iff = fib_if(18, 0);
    OT_CHECK(iff == fib_iter(18), "fib(18) with if(depth < %d) tasks: %ld, "
             "expected %ld", CUT, iff, fib_iter(18));
    ot_print("if(depth < %d): fib(18)=%ld", CUT, iff);

    for (t = 0; t < n; t++)
        per_thread[t] = -1;
#pragma omp parallel
    {
        int me = omp_get_thread_num();

        per_thread[me] = fib_cut(16 + me % 4, 1);
    }
    for (t = 0; t < n; t++)
        OT_CHECK(per_thread[t] == fib_iter(16 + t % 4), "thread %d: "
                 "fib(%d)=%ld, expected %ld", t, 16 + t % 4, per_thread[t],
                 fib_iter(16 + t % 4));
    {
        long sum = 0;

        for (t = 0; t < n; t++)
            sum += per_thread[t];
        ot_print("every thread its own tree: sum of fib(16 + t %% 4)=%ld",
                 sum);
    }
    return ot_finish();
}
