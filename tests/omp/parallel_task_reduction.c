/*
 * parallel_task_reduction.c - parallel with the task reduction modifier
 * (OpenMP 5.0): reduction(task, +: s), (task, *: p), (task, max: m) on the
 * region, 40 tasks with in_reduction on all three made in a single, each a
 * few ms of computation (a chain of multiplications, not a sleep) so that
 * the team's threads (under omp-shim with one thread per rank: other
 * ranks) take some; every implicit task adds 1 to s as well.  Each result
 * against the sequential value; with 2 threads or more the tasks must have
 * run in at least 2 of them (how many goes to stderr only).
 *
 * GCC compiles the region to GOMP_parallel_reductions (the descriptor in
 * the data's first word, the team's size returned for the merge) and the
 * tasks to GOMP_task_reduction_remap (omp-shim/gomp/task_reduction.c).
 */
#define OT_NAME "parallel_task_reduction"
#include "omptest.h"

#define TASKS 40
#define STEPS 3000000L

static int ran_by[TASKS];

static long work(long k)
{
    return (long)(ot_chain(k, STEPS) % 1000);
}

int main(void)
{
    int n = ot_team_size(), team = 0;
    long want = 0, want_max = -1, s = 0, m = -1;
    double p = 1.0;

    ot_print("threads=%d", n);
    for (int k = 0; k < TASKS; k++) {
        long w = work(k);
        want += w;
        if (w > want_max)
            want_max = w;
    }
#pragma omp parallel reduction(task, +: s) reduction(task, *: p) reduction(task, max: m)
    {
#pragma omp single
        {
            team = omp_get_num_threads();
            for (int k = 0; k < TASKS; k++) {
#pragma omp task in_reduction(+: s) in_reduction(*: p) in_reduction(max: m) firstprivate(k)
                {
                    long w = work(k);
                    s += w;
                    if (k % 8 == 0)
                        p *= 2.0;
                    if (w > m)
                        m = w;
                    ran_by[k] = omp_get_thread_num();
                }
            }
        }
        s += 1;
    }
    int seen[OT_MAX_THREADS] = { 0 }, used = 0;
    for (int k = 0; k < TASKS; k++)
        if (ran_by[k] >= 0 && ran_by[k] < OT_MAX_THREADS && !seen[ran_by[k]]++)
            used++;
    OT_CHECK(s == want + team, "reduction(task, +): %ld, expected %ld", s, want + team);
    OT_CHECK(p == 32.0, "reduction(task, *): %g, expected 32", p);
    OT_CHECK(m == want_max, "reduction(task, max): %ld, expected %ld", m, want_max);
    OT_CHECK(n < 2 || used >= 2, "the in_reduction tasks ran in %d thread(s) of %d", used, n);
    fprintf(stderr, "parallel_task_reduction: tasks ran in %d thread(s)\n", used);
    ot_print("team %d: +, *, max over %d tasks: %ld %g %ld", team, TASKS, s - team, p, m);
    return ot_finish();
}
