/*
 * uts_omp.c - an unbalanced tree search with OpenMP tasks (after UTS, the
 * Unbalanced Tree Search benchmark), as a plain OpenMP program (no MPI, no
 * DSM call).  Built twice from this file, uts_omp.gomp (gcc -fopenmp,
 * libgomp: the baseline) and uts_omp.dsm (tools/dsmcc, omp-shim under
 * tools/dsmrun); benchmarks/bench.sh tasks runs both (see its header).
 *
 * The tree: deterministic and pseudo-random.  A node is a 64-bit state;
 * the root's is --seed, child i's a hash of its parent's state and i.  A
 * node at depth d < D (--depth) has a hash of its state mod (2 M + 1)
 * children (--branch M: 0..2M, M on average), one at depth D none.  So
 * the subtrees' sizes are products of random branching factors along the
 * way and differ by orders of magnitude: the work is irregular and not
 * known before it is found.  Each node costs --work W rounds of a hash
 * mixing function (its "value").
 *
 * The traversal: every node at depths 1..C (--cutoff) is a task
 * ("#pragma omp task"), which writes its subtree's node count and sums
 * into its slot of an array on the parent's stack (shared); the parent
 * computes its own value and waits ("#pragma omp taskwait") to add them.
 * A task at depth C traverses its subtree serially.  The number of tasks
 * (the nodes at depths 1..C) comes from the serial verification traversal;
 * the mean time per task printed is the timed run's wall time / tasks,
 * and beside it the CPU time per task: this process's CPU time (all its
 * threads; under dsmrun rank 0's) over the timed repetitions /
 * (repetitions x tasks), on one thread the grain whatever share of the
 * CPU other programs take (a task's own time varies with its subtree).
 * A level more in the cut-off makes about twice the tasks.  The defaults,
 * --depth 20 --branch 2 --seed 42 --work 20 (2,346,251 nodes) with
 * --cutoff 6, are bench.sh's "coarse" size (165 tasks, 0.87 ms of CPU
 * each on the 2-vCPU VM), the same tree with --cutoff 10 the "fine" one
 * (2392 tasks, 60 us each).
 *
 * Verification: a serial traversal without the work (not timed) counts
 * the nodes and sums their states (mod 2^64); the task traversal's count
 * and sum must equal them, and every repetition must give the same
 * values and the same sum of the nodes' values (the checksum, which
 * depends on --work too).  A run that does not verify prints
 * "verification: FAILED" and exits 1 after its result lines.
 *
 * Threads: the initial thread parses options, traverses serially and
 * times; in each repetition one "#pragma omp parallel" region whose
 * "single" thread starts at the root, and every thread of the team runs
 * the tasks it takes (under libgomp any thread, under today's omp-shim the
 * creating thread at once).
 */
#include "../omp_common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <omp.h>

static long opt_depth = 20;
static long opt_branch = 2;
static long opt_cutoff = 6;
static long opt_work = 20;
static long opt_seed = 42;
static long opt_reps = 3;

static const struct obench_opt opts[] = {
    { "depth", OBENCH_LONG, &opt_depth, "depth D of the deepest nodes (1..40)" },
    { "branch", OBENCH_LONG, &opt_branch, "mean children M per node (1..15): 0..2M each" },
    { "cutoff", OBENCH_LONG, &opt_cutoff, "depth C to which nodes are tasks (1..D)" },
    { "work", OBENCH_LONG, &opt_work, "hash rounds per node W (the work of a node)" },
    { "seed", OBENCH_LONG, &opt_seed, "the root's state" },
    { "reps", OBENCH_LONG, &opt_reps, "timed repetitions (the median is the result)" },
    { 0, 0, 0, 0 }
};

#define MAX_CHILDREN 31         /* 2 M + 1 slots for M <= 15 */

static int depth_max, cutoff;
static unsigned branch;
static long work;

struct sums {
    long nodes;
    uint64_t states;            /* sum of the nodes' states, mod 2^64 */
    uint64_t values;            /* sum of the nodes' values, mod 2^64 */
};

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned children(uint64_t s, int depth)
{
    if (depth >= depth_max)
        return 0;
    return (unsigned)((mix(s ^ 0x5851f42d4c957f2dull) >> 33) % (2 * branch + 1));
}

static uint64_t child(uint64_t s, unsigned i)
{
    return mix(s * 31 + i + 1);
}

/* A node's work: W rounds of mixing. */
static uint64_t value(uint64_t s)
{
    long r;

    for (r = 0; r < work; r++)
        s = mix(s);
    return s;
}

static void add(struct sums *to, const struct sums *from)
{
    to->nodes += from->nodes;
    to->states += from->states;
    to->values += from->values;
}

/* The subtree of s serially; with_work 0 leaves values 0 (verification). */
static void serial(uint64_t s, int depth, int with_work, struct sums *out)
{
    unsigned i, m = children(s, depth);
    struct sums sub;

    out->nodes = 1;
    out->states = s;
    out->values = with_work ? value(s) : 0;
    for (i = 0; i < m; i++) {
        serial(child(s, i), depth + 1, with_work, &sub);
        add(out, &sub);
    }
}

/* Nodes at depths 1..cutoff below s (at depth 'depth'): the tasks. */
static long count_tasks(uint64_t s, int depth)
{
    unsigned i, m;
    long count = 0;

    if (depth >= cutoff)
        return 0;
    m = children(s, depth);
    for (i = 0; i < m; i++)
        count += 1 + count_tasks(child(s, i), depth + 1);
    return count;
}

/* The task form: a task per child while above the cut-off. */
static void traverse(uint64_t s, int depth, struct sums *out)
{
    struct sums sub[MAX_CHILDREN];
    unsigned i, m;

    if (depth >= cutoff) {
        serial(s, depth, 1, out);
        return;
    }
    m = children(s, depth);
    for (i = 0; i < m; i++) {
#pragma omp task default(none) firstprivate(s, depth, i) shared(sub)
        traverse(child(s, i), depth + 1, &sub[i]);
    }
    out->nodes = 1;
    out->states = s;
    out->values = value(s);
#pragma omp taskwait
    for (i = 0; i < m; i++)
        add(out, &sub[i]);
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
    struct sums ref, got, first = { 0, 0, 0 };
    long rep, tasks;
    int team, ok = 1;
    char metric[64];

    obench_start(argc, argv, "uts_omp",
                 "Unbalanced tree search: a pseudo-random tree (0..2M children per node from a\n"
                 "hash), a task per node down to the cut-off depth, serial below; verified\n"
                 "against a serial traversal.", opts);
    if (opt_depth < 1 || opt_depth > 40 || opt_branch < 1 || opt_branch > 15 ||
        opt_cutoff < 1 || opt_cutoff > opt_depth || opt_reps < 1)
        obench_fatal("--depth %ld --branch %ld --cutoff %ld --reps %ld: need 1 <= D <= 40, "
                     "1 <= M <= 15, 1 <= C <= D and at least one repetition",
                     opt_depth, opt_branch, opt_cutoff, opt_reps);
    depth_max = (int)opt_depth;
    branch = (unsigned)opt_branch;
    cutoff = (int)opt_cutoff;
    work = opt_work;
    team = obench_team_size();
    serial((uint64_t)opt_seed, 0, 0, &ref);
    tasks = count_tasks((uint64_t)opt_seed, 0);
    printf("uts_omp: depth %d, branching 0..%u, %ld nodes, cut-off depth %d, %ld tasks per "
           "repetition, %ld rounds per node, %ld repetitions, %d threads, runtime %s\n",
           depth_max, 2 * branch, ref.nodes, cutoff, tasks, work, opt_reps, team,
           BENCH_OMP_RUNTIME);
    fflush(stdout);
    if (tasks == 0)
        obench_fatal("the root has no children: no tasks (try another --seed)");

    times = malloc((size_t)opt_reps * sizeof *times);
    if (!times)
        obench_fatal("malloc failed");
    for (rep = 0; rep < opt_reps; rep++) {
        got.nodes = -1;
        c0 = cpu_now();
        t0 = omp_get_wtime();
#pragma omp parallel default(none) shared(got, opt_seed)
#pragma omp single
        traverse((uint64_t)opt_seed, 0, &got);
        times[rep] = omp_get_wtime() - t0;
        cpu_s += cpu_now() - c0;
        if (got.nodes != ref.nodes || got.states != ref.states)
            ok = 0;
        if (rep == 0)
            first = got;
        else if (got.values != first.values)
            ok = 0;
    }
    min = obench_min(times, (size_t)opt_reps);
    med = obench_median(times, (size_t)opt_reps);
    cpu_us = cpu_s / (double)opt_reps / (double)tasks * 1e6;

    printf("  %s: %10.4f s (median of %ld, min %.4f)  %ld tasks  %.2f us per task "
           "(CPU %.2f us)  %.3f us per node\n", BENCH_OMP_RUNTIME, med, opt_reps, min, tasks,
           med / (double)tasks * 1e6, cpu_us, med / (double)ref.nodes * 1e6);
    printf("  verification: %s (%ld nodes, serial %ld; state sum %016llx, serial %016llx; "
           "checksum %016llx)\n", ok ? "SUCCESSFUL" : "FAILED", first.nodes, ref.nodes,
           (unsigned long long)first.states, (unsigned long long)ref.states,
           (unsigned long long)first.values);

    obench_param("depth", depth_max);
    obench_param("branch", branch);
    obench_param("cutoff", cutoff);
    obench_param("work", work);
    obench_param("seed", opt_seed);
    obench_param("reps", opt_reps);
    snprintf(metric, sizeof metric, "uts_%s_s", BENCH_OMP_RUNTIME);
    obench_result(metric, med, "s");
    obench_extra("min_s", min);
    obench_result("tasks", (double)tasks, "count");
    obench_result("us_per_task", med / (double)tasks * 1e6, "us");
    obench_result("cpu_us_per_task", cpu_us, "us");
    obench_result("nodes", (double)ref.nodes, "count");
    /* the low 52 bits of the values' sum: exact in a double */
    obench_result_exact("checksum", (double)(first.values & ((1ull << 52) - 1)), "sum");
    obench_result("verified", ok, "bool");
    obench_emit();
    free(times);
    return ok ? 0 : 1;
}
