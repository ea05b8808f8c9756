/*
 * rmr_busy.c - the cost of a remote memory read (RMR) when the home rank's
 * application thread is computing, against the same read when the home
 * waits in a barrier (as in rmr.c), for dsmtool's model (busy_service_us,
 * docs/TRACING.md).
 *
 * Rank 1 is the home of P pages (DSM_HOME_NODE).  Rounds come in pairs; in
 * each round rank 1 writes one word in every page and everybody meets in
 * dsm_barrier() (which invalidates rank 0's copies); then rank 0 reads the
 * pages one by one, timing each read (one RMR each), while rank 1
 *   - idle round: goes straight into the next dsm_barrier() and waits
 *     there (its waiting thread or communication thread serves the reads);
 *   - busy round: computes for --busy-ms ms (arithmetic in registers: no
 *     library call, no shared memory), then enters the barrier; its
 *     communication thread must get a core to serve each read.
 * With --gap-us G rank 0 computes G us between two reads (not timed), as
 * an application does between its faults (default 0: back to back).
 * In a busy round rank 0 stops reading once --busy-ms / 2 ms of the round
 * have passed (by its own clock), so that every read it times is served
 * while the home computes; the idle rounds read as many pages as the busy
 * round before them did.  The first pair is warm-up.
 *
 * Results (rank 0): rmr_busy_us and rmr_idle_us (means per read over the
 * timed rounds), busy_extra_us = rmr_busy_us - rmr_idle_us (what the home's
 * computing adds to a read: dsmtool calibrate --busy takes it as
 * busy_service_us), and the counts.  Ranks above 1 only take part in the
 * barriers.  Run by benchmarks/bench.sh calibrate.
 *
 * Threads: each rank's main thread (and libdsm's own); rank 1's busy loop
 * runs on its main thread.
 */
#include "../common.h"

#include <stdio.h>
#include <stdlib.h>

static long opt_pages = 64;
static long opt_pairs = 6;
static long opt_busy_ms = 200;
static long opt_gap_us = 0;

static const struct bench_opt opts[] = {
    { "pages", BENCH_OPT_LONG, &opt_pages, "pages homed on rank 1, read at most per round" },
    { "pairs", BENCH_OPT_LONG, &opt_pairs, "busy/idle round pairs (the first is warm-up; >= 2)" },
    { "busy-ms", BENCH_OPT_LONG, &opt_busy_ms, "ms rank 1 computes in a busy round" },
    { "gap-us", BENCH_OPT_LONG, &opt_gap_us, "us rank 0 computes between two reads (untimed)" },
    { 0, 0, 0, 0 }
};

/* Compute: arithmetic for us microseconds, checking the clock every few
 * hundred steps. */
static double compute_for(double us)
{
    volatile double x = 1.0;
    double until = bench_now() + us * 1e-6;
    while (bench_now() < until)
        for (int i = 0; i < 200; i++)
            x = x * 1.0000001 + 1e-9;
    return x;
}

static uint64_t value_of(long round, long page)
{
    return ((uint64_t)(round + 1) << 32) | (uint64_t)page;
}

/* Rank 0's reads of one round: at most max pages, and in a busy round only
 * while less than --busy-ms / 2 have passed since t_start.  Adds the time
 * to *sum and returns the number of pages read; counts wrong values. */
static long read_pages(char *arr, size_t psz, long round, long max, int busy,
                       double t_start, double *sum, long *bad)
{
    long i;
    for (i = 0; i < max; i++) {
        if (busy && bench_now() - t_start > (double)opt_busy_ms * 0.5e-3)
            break;
        double t0 = bench_now();
        if (*(volatile uint64_t *)(arr + (size_t)i * psz) != value_of(round, i))
            (*bad)++;
        *sum += bench_now() - t0;
        if (opt_gap_us > 0)
            compute_for((double)opt_gap_us);
    }
    return i;
}

int main(int argc, char **argv)
{
    double sum[2] = { 0, 0 };
    long n[2] = { 0, 0 }, bad = 0, nread = 0;
    char *arr;
    size_t psz;

    bench_start(&argc, &argv, "rmr_busy",
                "RMR to a home that computes, against one that waits in a barrier.", opts);
    if (opt_pairs < 2 || opt_pages < 1 || opt_busy_ms < 1 || opt_gap_us < 0)
        bench_fatal("--pairs must be >= 2, --pages and --busy-ms >= 1, --gap-us >= 0");
    if (bench.size < 2)
        bench_fatal("rmr_busy needs 2 or more ranks");
    if (dsm_init(&argc, &argv) != 0)
        bench_fatal("dsm_init failed");
    bench_settings();
    psz = dsm_page_size();
    bench_param("pages", opt_pages);
    bench_param("pairs", opt_pairs);
    bench_param("busy_ms", opt_busy_ms);
    bench_param("gap_us", opt_gap_us);
    arr = dsm_malloc_home((size_t)opt_pages * psz, DSM_HOME_NODE, 1);
    if (!arr || dsm_home_of(arr) != 1)
        bench_fatal("dsm_malloc_home of %ld pages on rank 1 failed", opt_pages);

    for (long round = 0; round < 2 * opt_pairs; round++) {
        int busy = round % 2 == 0;
        if (bench.rank == 1)
            for (long i = 0; i < opt_pages; i++)
                *(volatile uint64_t *)(arr + (size_t)i * psz) = value_of(round, i);
        dsm_barrier();
        if (bench.rank == 0) {
            double s = 0, t_start = bench_now();
            long got = read_pages(arr, psz, round, busy ? opt_pages : nread, busy,
                                  t_start, &s, &bad);
            if (busy)
                nread = got;
            if (round >= 2) {
                sum[busy] += s;
                n[busy] += got;
            }
        } else if (bench.rank == 1 && busy) {
            compute_for((double)opt_busy_ms * 1e3);
        }
        dsm_barrier();
    }
    if (bench.rank == 0 && bad)
        bench_fatal("%ld reads returned a stale or wrong value", bad);
    dsm_free(arr);
    dsm_finalize();

    if (bench.rank == 0) {
        double busy_us = n[1] ? sum[1] / (double)n[1] * 1e6 : 0;
        double idle_us = n[0] ? sum[0] / (double)n[0] * 1e6 : 0;
        bench_say("rmr_busy: %d ranks, page %zu bytes: RMR to a computing home %.2f us "
                  "(%ld reads), to a home in a barrier %.2f us (%ld reads): +%.2f us\n",
                  bench.size, psz, busy_us, n[1], idle_us, n[0], busy_us - idle_us);
        if (!n[0] || !n[1])
            bench_fatal("no timed reads (a busy round shorter than one read?): "
                        "raise --busy-ms");
        bench_result("rmr_busy_us", busy_us, "us");
        bench_result("rmr_idle_us", idle_us, "us");
        bench_result("busy_extra_us", busy_us - idle_us, "us");
        bench_result("busy_reads", (double)n[1], "count");
        bench_result("idle_reads", (double)n[0], "count");
    }
    bench_emit();
    return bench_end();
}
