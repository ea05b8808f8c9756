/*
 * taskloop_reduction.c - reductions over tasks (OpenMP 5.0): the reduction
 * clause of taskloop, task_reduction on taskgroup with in_reduction on
 * the tasks (and on a taskloop) that take part.
 *
 *   - taskloop reduction(+: sum) over 1000 iterations, in a single, with
 *     grainsize(10) and num_tasks(7);
 *   - two reductions on one taskloop, + on a long and max on a double;
 *   - taskloop reduction in every thread at once, each into a variable of
 *     its own implicit task;
 *   - taskgroup task_reduction(+: s): 50 tasks with in_reduction(+: s),
 *     some of them making a child task with in_reduction(+: s) too, and a
 *     taskloop in_reduction(+: s) inside the group;
 *   - nested: taskgroup task_reduction(*: p) inside a taskgroup
 *     task_reduction(+: s), tasks in the inner group taking part in both;
 *   - spread: 40 tasks of a few ms each (a chain of multiplications, not a
 *     sleep) with in_reduction(+) and (max) in a taskgroup, and a taskloop
 *     reduction over 40 such iterations: with 2 threads or more the tasks
 *     must have run in at least 2 threads (under omp-shim with one thread
 *     per rank: on another rank, so the private copies of a thief rank's
 *     thread are merged too).
 * Each result against the sequential value, with values that make every
 * order of combination exact.
 *
 * GCC compiles these to GOMP_taskloop with GOMP_TASK_FLAG_REDUCTION
 * (1 << 12) in its flags, GOMP_taskgroup_reduction_register and
 * _unregister, and GOMP_task_reduction_remap in the tasks
 * (omp-shim/gomp/task_reduction.c).  How many threads ran the spread
 * tasks goes to stderr only: stdout is the same for any schedule.
 */
#define OT_NAME "taskloop_reduction"
#include "omptest.h"

#define N 1000
#define TASKS 50

static long team_sums[OT_MAX_THREADS];

#define SPREAD 40
#define STEPS 3000000L          /* a few ms on one core */
static int ran_by[SPREAD];

/* A few ms of computation, folded to a small value so that the sums stay
 * exact. */
static long work(long k)
{
    return (long)(ot_chain(k, STEPS) % 1000);
}

static int threads_used(void)
{
    int seen[OT_MAX_THREADS] = { 0 }, used = 0;
    for (int k = 0; k < SPREAD; k++)
        if (ran_by[k] >= 0 && ran_by[k] < OT_MAX_THREADS && !seen[ran_by[k]]++)
            used++;
    return used;
}

int main(void)
{
    int n = ot_team_size();
    long sum1 = -1, sum2 = -1, s2 = -1, tr = -1, outer = -1, inner = -1;
    double mx = -1.0;
    long team = 0;
    int t;

    ot_print("threads=%d", n);

#pragma omp parallel
#pragma omp single
    {
        long s = 0;
        int i;

#pragma omp taskloop reduction(+: s) grainsize(10)
        for (i = 0; i < N; i++)
            s += i + 1;
        sum1 = s;

        s = 5;
#pragma omp taskloop reduction(+: s) num_tasks(7)
        for (i = 0; i < N; i++)
            s += 2 * i;
        sum2 = s;
    }
    OT_CHECK(sum1 == (long)N * (N + 1) / 2, "taskloop reduction(+) with "
             "grainsize(10): %ld, expected %ld", sum1, (long)N * (N + 1) / 2);
    OT_CHECK(sum2 == 5 + (long)N * (N - 1), "taskloop reduction(+) from 5 "
             "with num_tasks(7): %ld, expected %ld", sum2,
             5 + (long)N * (N - 1));
    ot_print("taskloop reduction(+): %ld %ld", sum1, sum2);

#pragma omp parallel
#pragma omp single
    {
        long s = 0;
        double m = 0.0;
        int i;

#pragma omp taskloop reduction(+: s) reduction(max: m) grainsize(33)
        for (i = 0; i < N; i++) {
            double v = (double)((i * 37) % N);

            s += i;
            if (v > m)
                m = v;
        }
        s2 = s;
        mx = m;
    }
    OT_CHECK(s2 == (long)N * (N - 1) / 2 && mx == N - 1.0, "taskloop "
             "reduction(+) reduction(max): %ld and %g, expected %ld and %g",
             s2, mx, (long)N * (N - 1) / 2, N - 1.0);
    ot_print("taskloop reduction(+) reduction(max): %ld %g", s2, mx);

#pragma omp parallel
    {
        int me = omp_get_thread_num(), i;
        long mine = me;

#pragma omp taskloop reduction(+: mine) grainsize(50)
        for (i = 0; i < N; i++)
            mine += i % 7;
        team_sums[me] = mine;
    }
    {
        long per = 0;
        int i;

        for (i = 0; i < N; i++)
            per += i % 7;
        for (t = 0; t < n; t++) {
            OT_CHECK(team_sums[t] == t + per, "thread %d's taskloop "
                     "reduction: %ld, expected %ld", t, team_sums[t],
                     t + per);
            team += team_sums[t];
        }
    }
    ot_print("taskloop reduction in every thread: total %ld", team);

#pragma omp parallel
#pragma omp single
    {
        long s = 100;
        int k, i;

#pragma omp taskgroup task_reduction(+: s)
        {
            for (k = 0; k < TASKS; k++) {
#pragma omp task in_reduction(+: s) firstprivate(k)
                {
                    s += k;
                    if (k % 5 == 0) {
#pragma omp task in_reduction(+: s) firstprivate(k)
                        s += 1000 * k;
                    }
                }
            }
#pragma omp taskloop in_reduction(+: s) grainsize(20)
            for (i = 0; i < N; i++)
                s += 1;
        }
        tr = s;
    }
    {
        long want = 100 + N;
        int k;

        for (k = 0; k < TASKS; k++)
            want += k + (k % 5 == 0 ? 1000L * k : 0);
        OT_CHECK(tr == want, "taskgroup task_reduction(+) with in_reduction "
                 "tasks, children and a taskloop: %ld, expected %ld", tr,
                 want);
    }
    ot_print("task_reduction/in_reduction: %ld", tr);

#pragma omp parallel
#pragma omp single
    {
        long s = 0, p = 1;
        int k;

#pragma omp taskgroup task_reduction(+: s)
        {
#pragma omp task in_reduction(+: s)
            s += 7;
#pragma omp taskgroup task_reduction(*: p)
            {
                for (k = 1; k <= 10; k++) {
#pragma omp task in_reduction(+: s) in_reduction(*: p) firstprivate(k)
                    {
                        s += k;
                        p *= k % 3 + 1;
                    }
                }
            }
            inner = p;
        }
        outer = s;
    }
    {
        long want_p = 1;
        int k;

        for (k = 1; k <= 10; k++)
            want_p *= k % 3 + 1;
        OT_CHECK(outer == 62 && inner == want_p, "nested task_reduction: "
                 "%ld and %ld, expected 62 and %ld", outer, inner, want_p);
    }
    ot_print("nested task_reduction: %ld %ld", outer, inner);

    {
        long want = 0, want_max = -1, got = -1, got_max = -1, loop = -1;
        int used;

        for (int k = 0; k < SPREAD; k++) {
            long w = work(k);
            want += w;
            if (w > want_max)
                want_max = w;
        }
#pragma omp parallel
#pragma omp single
        {
            long s = 0, m = -1;

#pragma omp taskgroup task_reduction(+: s) task_reduction(max: m)
            {
                for (int k = 0; k < SPREAD; k++) {
#pragma omp task in_reduction(+: s) in_reduction(max: m) firstprivate(k)
                    {
                        long w = work(k);
                        s += w;
                        if (w > m)
                            m = w;
                        ran_by[k] = omp_get_thread_num();
                    }
                }
            }
            got = s;
            got_max = m;
        }
        used = threads_used();
        OT_CHECK(got == want && got_max == want_max, "spread tasks with in_reduction(+) "
                 "and (max): %ld and %ld, expected %ld and %ld", got, got_max, want,
                 want_max);
        OT_CHECK(n < 2 || used >= 2, "spread tasks with in_reduction ran in %d thread(s) "
                 "of %d", used, n);
        fprintf(stderr, "taskloop_reduction: spread tasks ran in %d thread(s)\n", used);

#pragma omp parallel
#pragma omp single
        {
            long s = 0;

#pragma omp taskloop reduction(+: s) grainsize(1)
            for (int k = 0; k < SPREAD; k++) {
                s += work(k);
                ran_by[k] = omp_get_thread_num();
            }
            loop = s;
        }
        used = threads_used();
        OT_CHECK(loop == want, "spread taskloop reduction(+): %ld, expected %ld", loop,
                 want);
        OT_CHECK(n < 2 || used >= 2, "spread taskloop reduction ran in %d thread(s) of %d",
                 used, n);
        fprintf(stderr, "taskloop_reduction: spread taskloop ran in %d thread(s)\n", used);
        ot_print("spread: %ld %ld %ld", got, got_max, loop);
    }
    return ot_finish();
}
