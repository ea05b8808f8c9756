/*
 * taskloop_clauses.c - the taskloop construct and its clauses.
 *
 * Every iteration of each taskloop counts its run in a slot of its own;
 * after the taskloop (whose implicit taskgroup completes its tasks) each
 * slot must be 1, and the others 0:
 *   - no clause, grainsize(7), num_tasks(8), grainsize larger than the
 *     loop, num_tasks larger than the loop, untied, if(0) (undeferred
 *     tasks);
 *   - nogroup followed by taskwait;
 *   - collapse(2) over 30 x 17, a step of 7 from 5, negative steps (-1,
 *     -3), an int and a long index;
 *   - firstprivate (every iteration sees the value the variable had
 *     before the loop) and lastprivate (of a variable and of the loop
 *     index: the values of the sequentially last iteration);
 *   - a shared sum updated with omp atomic;
 *   - tasks made in the body: in the taskloop's taskgroup, so complete at
 *     its end;
 *   - a taskloop inside a task;
 *   - a taskloop in a single and one met by every thread (each thread
 *     runs the whole loop's iterations as its own tasks);
 *   - unsigned long long indices with bounds above 2^40 read at run time
 *     (GOMP_taskloop_ull; with constant bounds GCC uses GOMP_taskloop),
 *     upward by 3 and downward by 5;
 *   - empty loops (bounds read at run time): no iteration runs.
 * How the iterations are split among tasks is left to the runtime here
 * (taskloop_grainsize checks the promises of grainsize and num_tasks).
 */
#define OT_NAME "taskloop_clauses"
#include "omptest.h"

#define N 1000
#define CA 30
#define CB 17
#define BASE (1ULL << 40)

static int hits[N], hits2[CA][CB], seen_fp[N];
static int team_hits[OT_MAX_THREADS][N];
static long atomic_sum;

/* Bounds the compiler cannot see. */
static volatile int zero_v = 0, n_v = N;
static volatile unsigned long long base_v = BASE;

static void reset(void)
{
    int i, j;

    for (i = 0; i < N; i++) {
        hits[i] = 0;
        seen_fp[i] = 0;
    }
    for (i = 0; i < CA; i++)
        for (j = 0; j < CB; j++)
            hits2[i][j] = 0;
}

/* hits[i] is 1 for the iterations i in [first, N) with (i - first) % step
 * == 0, 0 for the others. */
static void check_hits(const char *what, int first, int step)
{
    int i, bad = 0;

    for (i = 0; i < N; i++) {
        int want = i >= first && (i - first) % step == 0;

        if (hits[i] != want && bad++ < 3)
            ot_error("%s: slot %d counted %d runs, expected %d", what, i,
                     hits[i], want);
    }
    if (bad > 3)
        ot_error("%s: %d slots in all were wrong", what, bad);
}

static void plain_forms(void)
{
    int i, j;
    long li;

    reset();
#pragma omp taskloop
    for (i = 0; i < N; i++)
        hits[i]++;
    check_hits("no clause", 0, 1);

    reset();
#pragma omp taskloop grainsize(7)
    for (i = 0; i < N; i++)
        hits[i]++;
    check_hits("grainsize(7)", 0, 1);

    reset();
#pragma omp taskloop num_tasks(8)
    for (i = 0; i < N; i++)
        hits[i]++;
    check_hits("num_tasks(8)", 0, 1);

    reset();
#pragma omp taskloop grainsize(5000)
    for (i = 0; i < N; i++)
        hits[i]++;
    check_hits("grainsize(5000)", 0, 1);

    reset();
#pragma omp taskloop num_tasks(5000)
    for (i = 0; i < N; i++)
        hits[i]++;
    check_hits("num_tasks(5000)", 0, 1);

    reset();
#pragma omp taskloop untied grainsize(50)
    for (i = 0; i < N; i++)
        hits[i]++;
    check_hits("untied", 0, 1);

    reset();
#pragma omp taskloop if(0) num_tasks(4)
    for (i = 0; i < N; i++)
        hits[i]++;
    check_hits("if(0)", 0, 1);

    reset();
#pragma omp taskloop nogroup grainsize(10)
    for (i = 0; i < N; i++)
        hits[i]++;
#pragma omp taskwait
    check_hits("nogroup, then taskwait", 0, 1);

    reset();
#pragma omp taskloop collapse(2) grainsize(20)
    for (i = 0; i < CA; i++)
        for (j = 0; j < CB; j++)
            hits2[i][j]++;
    {
        int bad = 0;

        for (i = 0; i < CA; i++)
            for (j = 0; j < CB; j++)
                if (hits2[i][j] != 1 && bad++ < 3)
                    ot_error("collapse(2): (%d, %d) ran %d times, expected "
                             "once", i, j, hits2[i][j]);
    }

    reset();
#pragma omp taskloop grainsize(9)
    for (i = 5; i < N; i += 7)
        hits[i]++;
    check_hits("from 5 by 7", 5, 7);

    reset();
#pragma omp taskloop num_tasks(6)
    for (i = N - 1; i >= 0; i--)
        hits[i]++;
    check_hits("downward", 0, 1);

    reset();
#pragma omp taskloop grainsize(11)
    for (i = N - 1; i >= 0; i -= 3)
        hits[i]++;
    check_hits("downward by 3", (N - 1) % 3, 3);

    reset();
#pragma omp taskloop grainsize(13)
    for (li = 0; li < N; li++)
        hits[li]++;
    check_hits("long index", 0, 1);
}

static void data_clauses(void)
{
    int i, fp = 17, last = -1;
    int last_i = -1;

    reset();
#pragma omp taskloop firstprivate(fp) lastprivate(last) grainsize(16)
    for (i = 0; i < N; i++) {
        seen_fp[i] = fp;
        hits[i]++;
        last = i * 2;
    }
    check_hits("firstprivate/lastprivate", 0, 1);
    for (i = 0; i < N; i++)
        if (seen_fp[i] != 17) {
            ot_error("firstprivate: iteration %d saw %d, expected 17", i,
                     seen_fp[i]);
            break;
        }
    OT_CHECK(last == 2 * (N - 1), "lastprivate: %d, expected %d", last,
             2 * (N - 1));

#pragma omp taskloop lastprivate(last_i) num_tasks(7)
    for (last_i = 0; last_i < N; last_i += 3)
        seen_fp[last_i] = 1;
    OT_CHECK(last_i == (N + 2) / 3 * 3, "lastprivate of the index: %d, "
             "expected %d", last_i, (N + 2) / 3 * 3);

    atomic_sum = 0;
#pragma omp taskloop grainsize(25)
    for (i = 0; i < N; i++) {
#pragma omp atomic
        atomic_sum += i + 1;
    }
    OT_CHECK(atomic_sum == (long)N * (N + 1) / 2, "atomic sum: %ld, expected "
             "%ld", atomic_sum, (long)N * (N + 1) / 2);

    /* Tasks made in the body belong to the taskloop's taskgroup. */
    reset();
#pragma omp taskloop grainsize(100)
    for (i = 0; i < N; i++) {
#pragma omp task firstprivate(i)
        hits[i]++;
    }
    check_hits("tasks made in the body", 0, 1);

    /* A taskloop inside a task. */
    reset();
#pragma omp task
    {
        int k;

#pragma omp taskloop grainsize(30)
        for (k = 0; k < N; k++)
            hits[k]++;
    }
#pragma omp taskwait
    check_hits("in a task", 0, 1);
}

static void ull_and_empty(void)
{
    unsigned long long u, lo = base_v, hi = base_v + 3ULL * N, below = lo - 5;
    int i, z = zero_v, nn = n_v;

    reset();
#pragma omp taskloop grainsize(17)
    for (u = lo; u < hi; u += 3) {
        if (u < BASE || u >= BASE + 3ULL * N || (u - BASE) % 3 != 0)
            ot_error("unsigned long long: index %#llx out of the loop", u);
        else
            hits[(u - BASE) / 3]++;
    }
    check_hits("unsigned long long by 3 above 2^40", 0, 1);

    reset();
#pragma omp taskloop num_tasks(9)
    for (u = lo + 5ULL * (N - 1); u > below; u -= 5) {
        if (u < BASE || (u - BASE) % 5 != 0 || (u - BASE) / 5 >= N)
            ot_error("unsigned long long downward: index %#llx out of the "
                     "loop", u);
        else
            hits[(u - BASE) / 5]++;
    }
    check_hits("unsigned long long by -5 above 2^40", 0, 1);

    reset();
#pragma omp taskloop
    for (i = z; i < z; i++)
        hits[i]++;
#pragma omp taskloop grainsize(3)
    for (i = nn; i < z; i++)
        hits[0]++;
#pragma omp taskloop num_tasks(3)
    for (i = z; i > nn; i--)
        hits[0]++;
#pragma omp taskloop
    for (u = lo; u < lo; u++)
        hits[0]++;
#pragma omp taskloop nogroup
    for (i = nn; i < nn; i++)
        hits[0]++;
#pragma omp taskwait
    check_hits("empty loops", N, 1);
}

int main(void)
{
    int n = ot_team_size();
    int t, i;

    ot_print("threads=%d", n);

#pragma omp parallel
#pragma omp single
    {
        plain_forms();
        data_clauses();
        ull_and_empty();
    }
    ot_print("in a single: every iteration once (clauses, index types, "
             "steps, empty loops)");

#pragma omp parallel
    {
        int me = omp_get_thread_num(), k;

#pragma omp taskloop grainsize(40)
        for (k = 0; k < N; k++)
            team_hits[me][k]++;
    }
    for (t = 0; t < n; t++) {
        int bad = 0;

        for (i = 0; i < N; i++)
            if (team_hits[t][i] != 1 && bad++ < 3)
                ot_error("thread %d's taskloop: iteration %d ran %d times, "
                         "expected once", t, i, team_hits[t][i]);
    }
    ot_print("met by every thread: %d x %d iterations, each once", n, N);
    return ot_finish();
}
