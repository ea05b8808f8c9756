/*
 * taskloop_grainsize.c - how taskloop splits its iterations into tasks.
 *
 * The promises of OpenMP 5.1:
 *   - grainsize(g): every task has at least min(g, iterations) and fewer
 *     than 2g iterations;
 *   - grainsize(strict: g): every task has exactly g iterations, but the
 *     one with the last iteration, which may have fewer;
 *   - num_tasks(k), num_tasks(strict: k): min(k, iterations) tasks, each
 *     with at least one iteration.
 * Each task is told apart by a firstprivate variable (a copy per task):
 * at its first iteration it records that iteration's number there, and
 * every iteration stores it as its owner.  So the tasks are the
 * iterations that own themselves, and a task's size is the number of
 * iterations it owns.  Checked on 400 iterations with several grain
 * sizes and task counts, on a collapse(2) loop (the logical iterations
 * of both loops) and an unsigned long long loop above 2^40
 * (GOMP_taskloop_ull).
 *
 * A runtime that runs the whole loop as one task (omp-shim until issue
 * 41) breaks these promises; taskloop_clauses checks only that each
 * iteration runs once.
 */
#define OT_NAME "taskloop_grainsize"
#include "omptest.h"

#define N 400
#define CA 25
#define CB 16                   /* 400 logical iterations */

static int owner[N];
static volatile unsigned long long base_v = 1ULL << 40;

/* The loop over N iterations with the given clauses, recording owners. */
#define RECORD(CLAUSES)                                                      \
    do {                                                                     \
        int i_, first_ = -1;                                                 \
                                                                             \
        reset();                                                             \
        OT_PRAGMA(omp taskloop CLAUSES firstprivate(first_))                 \
        for (i_ = 0; i_ < N; i_++) {                                         \
            if (first_ < 0)                                                  \
                first_ = i_;                                                 \
            owner[i_] = first_;                                              \
        }                                                                    \
    } while (0)

static void reset(void)
{
    int i;

    for (i = 0; i < N; i++)
        owner[i] = -1;
}

/* Counts the tasks and checks the owners; sizes[] gets each task's
 * iteration count, in the order of their first iterations, and *last the
 * number of the task with the sequentially last iteration.  Returns the
 * number of tasks, or -1 when an iteration has no sensible owner. */
static int tasks_of(const char *what, int *sizes, int *last)
{
    int i, tasks = 0, index[N];

    for (i = 0; i < N; i++) {
        int o = owner[i];

        if (o < 0 || o >= N || owner[o] != o) {
            ot_error("%s: iteration %d has owner %d, which is not a task's "
                     "first iteration (did it run?)", what, i, o);
            return -1;
        }
        if (o == i) {
            index[i] = tasks;
            sizes[tasks++] = 0;
        }
    }
    for (i = 0; i < N; i++)
        sizes[index[owner[i]]]++;
    *last = index[owner[N - 1]];
    return tasks;
}

static void check_grainsize(const char *what, int g, int strict)
{
    int sizes[N], last_task, tasks = tasks_of(what, sizes, &last_task);
    int least = g < N ? g : N, t, bad = 0;

    if (tasks < 0)
        return;
    for (t = 0; t < tasks; t++) {
        int s = sizes[t];
        int last = t == last_task;

        if (strict ? (last ? s < 1 || s > g : s != g)
                   : s < least || s >= 2 * g) {
            if (bad++ < 2)
                ot_error("%s: task %d of %d has %d iterations, expected %s "
                         "%d%s", what, t, tasks, s, strict ? "exactly" :
                         "at least", strict ? g : least,
                         strict ? " (the last task at most that)" :
                         " and fewer than twice the grain size");
        }
    }
    fprintf(stderr, "%s: %s: %d tasks\n", OT_NAME, what, tasks);
}

static void check_num_tasks(const char *what, int k)
{
    int sizes[N], last_task, tasks = tasks_of(what, sizes, &last_task);
    int want = k < N ? k : N;

    if (tasks < 0)
        return;
    OT_CHECK(tasks == want, "%s: %d tasks, expected %d", what, tasks, want);
}

int main(void)
{
    int n = ot_team_size();

    ot_print("threads=%d", n);

#pragma omp parallel
#pragma omp single
    {
        int g = 7, k = 8;

        RECORD(grainsize(7));
        check_grainsize("grainsize(7)", 7, 0);
        RECORD(grainsize(g));
        check_grainsize("grainsize(g), g=7 at run time", 7, 0);
        RECORD(grainsize(1));
        check_grainsize("grainsize(1)", 1, 0);
        RECORD(grainsize(150));
        check_grainsize("grainsize(150)", 150, 0);
        RECORD(grainsize(300));
        check_grainsize("grainsize(300)", 300, 0);
        RECORD(grainsize(1000));
        check_grainsize("grainsize(1000)", 1000, 0);
        RECORD(grainsize(strict: 7));
        check_grainsize("grainsize(strict: 7)", 7, 1);
        RECORD(grainsize(strict: 64));
        check_grainsize("grainsize(strict: 64)", 64, 1);

        RECORD(num_tasks(8));
        check_num_tasks("num_tasks(8)", 8);
        RECORD(num_tasks(k));
        check_num_tasks("num_tasks(k), k=8 at run time", 8);
        RECORD(num_tasks(1));
        check_num_tasks("num_tasks(1)", 1);
        RECORD(num_tasks(3));
        check_num_tasks("num_tasks(3)", 3);
        RECORD(num_tasks(N));
        check_num_tasks("num_tasks(400)", N);
        RECORD(num_tasks(5000));
        check_num_tasks("num_tasks(5000)", 5000);
        RECORD(num_tasks(strict: 6));
        check_num_tasks("num_tasks(strict: 6)", 6);

        {
            int i, j, first = -1;

            reset();
#pragma omp taskloop collapse(2) grainsize(20) firstprivate(first)
            for (i = 0; i < CA; i++)
                for (j = 0; j < CB; j++) {
                    if (first < 0)
                        first = i * CB + j;
                    owner[i * CB + j] = first;
                }
            check_grainsize("collapse(2) grainsize(20)", 20, 0);

            reset();
#pragma omp taskloop collapse(2) num_tasks(9) firstprivate(first)
            for (i = 0; i < CA; i++)
                for (j = 0; j < CB; j++) {
                    if (first < 0)
                        first = i * CB + j;
                    owner[i * CB + j] = first;
                }
            check_num_tasks("collapse(2) num_tasks(9)", 9);
        }
        {
            unsigned long long u, lo = base_v, hi = base_v + 3ULL * N;
            int first = -1;

            reset();
#pragma omp taskloop grainsize(11) firstprivate(first)
            for (u = lo; u < hi; u += 3) {
                int i = (int)((u - lo) / 3);

                if (first < 0)
                    first = i;
                owner[i] = first;
            }
            check_grainsize("unsigned long long grainsize(11)", 11, 0);

            reset();
#pragma omp taskloop num_tasks(5) firstprivate(first)
            for (u = lo; u < hi; u += 3) {
                int i = (int)((u - lo) / 3);

                if (first < 0)
                    first = i;
                owner[i] = first;
            }
            check_num_tasks("unsigned long long num_tasks(5)", 5);
        }
    }
    ot_print("grainsize(g) and num_tasks(k), plain and strict, on %d "
             "iterations, collapse(2) and unsigned long long: as promised",
             N);
    return ot_finish();
}
