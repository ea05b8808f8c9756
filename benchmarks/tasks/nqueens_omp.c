/*
 * nqueens_omp.c - recursive divide and conquer with OpenMP tasks: count the
 * placements of N queens on an N x N board (--n, 4..16) as a plain OpenMP
 * program (no MPI, no DSM call).  Built twice from this file,
 * nqueens_omp.gomp (gcc -fopenmp, libgomp: the baseline) and
 * nqueens_omp.dsm (tools/dsmcc, omp-shim under tools/dsmrun);
 * benchmarks/bench.sh tasks runs both (see its header).
 *
 * The search places one queen per row, rows 0, 1, ... in turn, the free
 * columns and diagonals kept as bit masks.  Above the cut-off depth
 * (--cutoff C) every placement in rows 0..C-1 is a task ("#pragma omp
 * task"), which writes its subtree's count into its slot of an array on
 * the parent's stack (shared), and the parent waits for its children with
 * "#pragma omp taskwait" and adds their counts; a task at depth C (a queen
 * placed in row C-1) counts the rest of its subtree serially.  So the
 * tasks are the partial placements of rows 0..C-1: few and tiny near the
 * root, and at depth C one per placement, each a serial search of the
 * remaining N - C rows, which is where the time goes.  The number of tasks
 * is counted by a serial pass over the first C rows (not timed); the mean
 * time per task printed is the timed run's wall time / tasks, and beside
 * it the CPU time per task: this process's CPU time (all its threads;
 * under dsmrun rank 0's) over the timed repetitions / (repetitions x
 * tasks).  On one thread the CPU time per task is the grain, whatever
 * share of the CPU other programs take.  Each row more in the cut-off
 * makes about N / 2 times more tasks, so the grain moves in steps:
 * --n 14 --cutoff 2 (the default) is the "coarse" size of bench.sh tasks
 * (170 tasks, 1.03 ms of CPU each on the 2-vCPU VM), --n 15 --cutoff 4
 * the "fine" one (15,941 tasks, 68 us each; about 1.1 s per repetition);
 * see bench.sh's header.
 *
 * Verification: the count must equal the known number of solutions for N
 * (OEIS A000170), and every repetition must give the same count; a run
 * that does not verify prints "verification: FAILED" and exits 1 after
 * its result lines.
 *
 * Threads: the initial thread parses options, counts the tasks and times;
 * in each repetition one "#pragma omp parallel" region whose "single"
 * thread starts the root, and every thread of the team runs the tasks it
 * takes (under libgomp any thread, under today's omp-shim the creating
 * thread at once).
 */
#include "../omp_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <omp.h>

static long opt_n = 14;
static long opt_cutoff = 2;
static long opt_reps = 3;

static const struct obench_opt opts[] = {
    { "n", OBENCH_LONG, &opt_n, "board size N (4..16)" },
    { "cutoff", OBENCH_LONG, &opt_cutoff, "rows placed by tasks (1..N-1); below them serial" },
    { "reps", OBENCH_LONG, &opt_reps, "timed repetitions (the median is the result)" },
    { 0, 0, 0, 0 }
};

/* Solutions for N = 0..16 (OEIS A000170). */
static const long known[17] = {
    1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512
};

static int n, cutoff;
static unsigned all;            /* N one bits: the columns */

/* Solutions below a partial placement of rows 0..row-1: cols, the columns
 * taken, ld and rd the squares of row 'row' attacked along the diagonals. */
static long serial(int row, unsigned cols, unsigned ld, unsigned rd)
{
    unsigned avail, bit;
    long count = 0;

    if (row == n)
        return 1;
    avail = all & ~(cols | ld | rd);
    while (avail) {
        bit = avail & -avail;
        avail -= bit;
        count += serial(row + 1, cols | bit, (ld | bit) << 1, (rd | bit) >> 1);
    }
    return count;
}

/* Partial placements of rows 0..depth-1 at depths 1..cutoff: the tasks. */
static long count_tasks(int row, unsigned cols, unsigned ld, unsigned rd)
{
    unsigned avail, bit;
    long count = 0;

    if (row == cutoff)
        return 0;
    avail = all & ~(cols | ld | rd);
    while (avail) {
        bit = avail & -avail;
        avail -= bit;
        count += 1 + count_tasks(row + 1, cols | bit, (ld | bit) << 1, (rd | bit) >> 1);
    }
    return count;
}

/* The task form: one task per placement in a row above the cut-off. */
static long search(int row, unsigned cols, unsigned ld, unsigned rd)
{
    long counts[16], total = 0;
    unsigned avail, bit;
    int k = 0, i;

    if (row >= cutoff)
        return serial(row, cols, ld, rd);
    avail = all & ~(cols | ld | rd);
    while (avail) {
        bit = avail & -avail;
        avail -= bit;
#pragma omp task default(none) firstprivate(row, cols, ld, rd, bit, k) shared(counts)
        counts[k] = search(row + 1, cols | bit, (ld | bit) << 1, (rd | bit) >> 1);
        k++;
    }
#pragma omp taskwait
    for (i = 0; i < k; i++)
        total += counts[i];
    return total;
}

/* CPU time of this process (all its threads; under dsmrun rank 0's). */
static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double *times, t0, c0, cpu_s = 0, cpu_us, med, min;
    long rep, tasks, count = -1, c;
    int team, ok = 1;
    char metric[64];

    obench_start(argc, argv, "nqueens_omp",
                 "N-queens solution count, recursive: one OpenMP task per queen placed in\n"
                 "rows 0..CUTOFF-1, serial search below; verified against the known counts.",
                 opts);
    if (opt_n < 4 || opt_n > 16 || opt_cutoff < 1 || opt_cutoff >= opt_n || opt_reps < 1)
        obench_fatal("--n %ld --cutoff %ld --reps %ld: need 4 <= N <= 16, 1 <= cutoff < N "
                     "and at least one repetition", opt_n, opt_cutoff, opt_reps);
    n = (int)opt_n;
    cutoff = (int)opt_cutoff;
    all = (1u << n) - 1;
    team = obench_team_size();
    tasks = count_tasks(0, 0, 0, 0);
    printf("nqueens_omp: N %d, cut-off %d rows, %ld tasks per repetition, %ld repetitions, "
           "%d threads, runtime %s\n", n, cutoff, tasks, opt_reps, team, BENCH_OMP_RUNTIME);
    fflush(stdout);

    times = malloc((size_t)opt_reps * sizeof *times);
    if (!times)
        obench_fatal("malloc failed");
    for (rep = 0; rep < opt_reps; rep++) {
        c = -1;
        c0 = cpu_now();
        t0 = omp_get_wtime();
#pragma omp parallel default(none) shared(c)
#pragma omp single
        c = search(0, 0, 0, 0);
        times[rep] = omp_get_wtime() - t0;
        cpu_s += cpu_now() - c0;
        if (rep == 0)
            count = c;
        else if (c != count)
            ok = 0;
    }
    min = obench_min(times, (size_t)opt_reps);
    med = obench_median(times, (size_t)opt_reps);
    cpu_us = cpu_s / (double)opt_reps / (double)tasks * 1e6;
    if (count != known[n])
        ok = 0;

    printf("  %s: %10.4f s (median of %ld, min %.4f)  %ld tasks  %.2f us per task "
           "(CPU %.2f us)\n", BENCH_OMP_RUNTIME, med, opt_reps, min, tasks,
           med / (double)tasks * 1e6, cpu_us);
    printf("  verification: %s (%ld solutions, known %ld)\n",
           ok ? "SUCCESSFUL" : "FAILED", count, known[n]);

    obench_param("n", n);
    obench_param("cutoff", cutoff);
    obench_param("reps", opt_reps);
    snprintf(metric, sizeof metric, "nqueens_%s_s", BENCH_OMP_RUNTIME);
    obench_result(metric, med, "s");
    obench_extra("min_s", min);
    obench_result("tasks", (double)tasks, "count");
    obench_result("us_per_task", med / (double)tasks * 1e6, "us");
    obench_result("cpu_us_per_task", cpu_us, "us");
    obench_result_exact("checksum", (double)count, "solutions");
    obench_result("verified", ok, "bool");
    obench_emit();
    free(times);
    return ok ? 0 : 1;
}
