/*
 * barrier.c - cost of dsm_barrier() (paper 003, Table 2 "Barrier"), against
 * MPI_Barrier measured in the same run.
 *
 * Cases, each timed over --iters barriers after --warmup untimed ones (fewer
 * when rank 0, timing the warm-up, sees that --iters would take more than
 * --budget seconds; never fewer than 20; MPI_Bcast tells the others):
 *   mpi_barrier_us       MPI_Barrier before dsm_init(): the baseline;
 *   mpi_barrier_dsm_us   MPI_Barrier after dsm_init(), with the library's
 *                        communication thread running next to it;
 *   barrier_empty_us     dsm_barrier() with no page written;
 *   barrier_dirty_K_us   every rank first writes one word in each of K pages
 *                        homed on the next rank ((r+1) % N), so each write
 *                        makes a twin and each barrier sends K diffs per
 *                        rank; then dsm_barrier() is timed (the writes are
 *                        not).  K comes from --dirty (default 1,16,64).
 * A time is each rank's mean per barrier, averaged over ranks; it includes
 * the ranks' skew in reaching the barrier, as the paper's does.  For every
 * DSM case msgs_per_barrier_* = the barrier_msgs counters summed over ranks
 * divided by the number of barriers, and barrier_lib_*_us is the library's
 * own mean barrier time (dsm_stats barrier_time / barriers, over ranks).
 * barrier_over_mpi = barrier_empty_us / mpi_barrier_us.
 *
 * Every write stores a new value; at the end each home checks that its
 * pages hold the last value its writer stored.
 */
#include "../common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long opt_iters = 200;
static long opt_warmup = 10;
static long opt_mpi_iters = 2000;
static long opt_budget = 2;
static struct bench_list opt_dirty = { 3, { 1, 16, 64 } };

static const struct bench_opt opts[] = {
    { "iters", BENCH_OPT_LONG, &opt_iters, "timed dsm_barrier() calls per case" },
    { "warmup", BENCH_OPT_LONG, &opt_warmup, "untimed dsm_barrier() calls before each case" },
    { "mpi-iters", BENCH_OPT_LONG, &opt_mpi_iters, "timed MPI_Barrier() calls" },
    { "dirty", BENCH_OPT_LIST, &opt_dirty, "dirty pages per rank, a list" },
    { "budget", BENCH_OPT_LONG, &opt_budget, "seconds a case may take, about" },
    { 0, 0, 0, 0 }
};

static char *target;       /* the first page of the next rank's block */
static size_t psz;
static uint64_t next_value = 1;
static uint64_t *last;     /* last value written to page j of a block */

/* How many of an operation that took `warm_mean` seconds during warm-up
 * fit in the budget, between 20 and `max`: rank 0 decides, for everybody. */
static long fit_budget(double warm_mean, long max)
{
    long n = max;

    if (bench.rank == 0 && warm_mean * (double)max > (double)opt_budget)
        n = (long)((double)opt_budget / warm_mean);
    if (n < 20)
        n = max < 20 ? max : 20;
    MPI_Bcast(&n, 1, MPI_LONG, 0, bench.comm);
    return n;
}

/* Mean time in us per MPI_Barrier over bench.comm, averaged over ranks (rank 0). */
static double time_mpi_barrier(long *iters)
{
    long i, n, warm = 20 + opt_mpi_iters / 100;
    double t0, t;

    t0 = bench_now();
    for (i = 0; i < warm; i++)
        MPI_Barrier(bench.comm);
    n = fit_budget((bench_now() - t0) / (double)warm, opt_mpi_iters);
    t0 = bench_now();
    for (i = 0; i < n; i++)
        MPI_Barrier(bench.comm);
    t = (bench_now() - t0) / (double)n;
    *iters = n;
    return bench_sum_double(t) / bench.size * 1e6;
}

static void write_pages(long k)
{
    uint64_t v = next_value++;
    long j;

    for (j = 0; j < k; j++) {
        *(volatile uint64_t *)(target + (size_t)j * psz) = v;
        last[j] = v;
    }
}

struct result { double us, lib_us, msgs, diffs, twins; long iters; };

/* One case; k = 0 is the empty barrier. */
static struct result run_case(long k)
{
    struct dsm_stats st, sum;
    struct result r;
    double tsum = 0.0, t0, mean;
    long i, n;

    t0 = bench_now();
    for (i = 0; i < opt_warmup; i++) {
        write_pages(k);
        dsm_barrier();
    }
    n = fit_budget((bench_now() - t0) / (double)opt_warmup, opt_iters);
    dsm_stats_reset();
    for (i = 0; i < n; i++) {
        write_pages(k);
        t0 = bench_now();
        dsm_barrier();
        tsum += bench_now() - t0;
    }
    dsm_stats_get(&st);
    mean = tsum / (double)n;
    r.us = bench_sum_double(mean) / bench.size * 1e6;
    bench_stats_sum(&st, &sum);
    r.lib_us = sum.barriers ? sum.barrier_time / (double)sum.barriers * 1e6 : NAN;
    r.msgs = (double)sum.barrier_msgs / (double)n;
    r.diffs = (double)sum.diffs / (double)n;
    r.twins = (double)sum.twins / (double)n;
    r.iters = n;
    return r;
}

int main(int argc, char **argv)
{
    struct result empty, r;
    double mpi_us, mpi_dsm_us;
    long mpi_n, mpi_dsm_n;
    char metric[64], *arr;
    long kmax = 0, j, bad = 0, first_bad = 0;
    uint64_t v, bad_value = 0;
    int i, next, prev;

    bench_start(&argc, &argv, "barrier",
                "dsm_barrier() cost with 0 and K dirty pages per rank, and MPI_Barrier.",
                opts);
    for (i = 0; i < opt_dirty.n; i++)
        if (opt_dirty.v[i] > kmax)
            kmax = opt_dirty.v[i];

    mpi_us = time_mpi_barrier(&mpi_n);

    if (dsm_init(&argc, &argv) != 0)
        bench_fatal("dsm_init failed");
    bench_settings();
    psz = dsm_page_size();
    bench_say("barrier: %d ranks, DSM_COMM=%s DSM_POLL=%s, page %zu bytes, up to %ld barriers "
              "per case\n", bench.size, bench.comm_var, bench.poll_var, psz, opt_iters);

    mpi_dsm_us = time_mpi_barrier(&mpi_dsm_n);

    /* Block k of the allocation is pages [k*kmax, (k+1)*kmax): exactly the
     * DSM_HOME_BLOCK split of bench.size * kmax pages. */
    arr = dsm_malloc_home((size_t)bench.size * (size_t)kmax * psz, DSM_HOME_BLOCK, 0);
    if (!arr)
        bench_fatal("dsm_malloc_home of %ld pages failed", bench.size * kmax);
    next = (bench.rank + 1) % bench.size;
    prev = (bench.rank + bench.size - 1) % bench.size;
    target = arr + (size_t)next * (size_t)kmax * psz;
    if (dsm_home_of(target) != next || dsm_home_of(target + (kmax - 1) * psz) != next)
        bench_fatal("DSM_HOME_BLOCK put pages of block %d on nodes %d and %d",
                    next, dsm_home_of(target), dsm_home_of(target + (kmax - 1) * psz));
    last = calloc((size_t)kmax, sizeof *last);
    if (!last)
        bench_fatal("out of memory");

    empty = run_case(0);
    bench_say("  MPI_Barrier:            %9.2f us before dsm_init (%ld), %.2f us after (%ld)\n",
              mpi_us, mpi_n, mpi_dsm_us, mpi_dsm_n);
    bench_say("  dsm_barrier, empty:     %9.2f us (%ld; library: %.2f us), %.1f msgs/barrier, "
              "%.2f x MPI_Barrier\n", empty.us, empty.iters, empty.lib_us, empty.msgs,
              empty.us / mpi_us);
    bench_result("mpi_barrier_us", mpi_us, "us");
    bench_result("mpi_barrier_dsm_us", mpi_dsm_us, "us");
    bench_result("barrier_empty_us", empty.us, "us");
    bench_result("barrier_over_mpi", empty.us / mpi_us, "ratio");
    bench_result("barrier_lib_empty_us", empty.lib_us, "us");
    bench_result("msgs_per_barrier_empty", empty.msgs, "msgs");

    for (i = 0; i < opt_dirty.n; i++) {
        r = run_case(opt_dirty.v[i]);
        bench_say("  dsm_barrier, %3ld dirty: %9.2f us (%ld; library: %.2f us), %.1f msgs/barrier, "
                  "%.1f diffs and %.1f twins per barrier over all ranks\n",
                  opt_dirty.v[i], r.us, r.iters, r.lib_us, r.msgs, r.diffs, r.twins);
        snprintf(metric, sizeof metric, "barrier_dirty_%ld_us", opt_dirty.v[i]);
        bench_result(metric, r.us, "us");
        snprintf(metric, sizeof metric, "barrier_lib_dirty_%ld_us", opt_dirty.v[i]);
        bench_result(metric, r.lib_us, "us");
        snprintf(metric, sizeof metric, "msgs_per_barrier_dirty_%ld", opt_dirty.v[i]);
        bench_result(metric, r.msgs, "msgs");
    }

    /* My block was written by the previous rank, with the same sequence of
     * values as mine: its last values are last[]. */
    for (j = kmax - 1; j >= 0; j--) {
        v = *(volatile uint64_t *)(arr + ((size_t)bench.rank * (size_t)kmax + (size_t)j) * psz);
        if (v != last[j]) {
            bad++;
            first_bad = j;
            bad_value = v;
        }
    }
    if (bad)
        bench_fatal("%ld of my %ld home pages do not hold what rank %d wrote before the "
                    "last dsm_barrier (page %ld holds %llu, expected %llu)", bad, kmax, prev,
                    first_bad, (unsigned long long)bad_value,
                    (unsigned long long)last[first_bad]);
    dsm_barrier();
    dsm_free(arr);
    free(last);
    dsm_finalize();
    bench_emit();
    return bench_end();
}
