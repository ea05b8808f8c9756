/*
 * rmr.c - cost of one remote memory read (RMR): the time from a read fault
 * on a page homed elsewhere to the page being installed and the read
 * completing (paper 003, Table 2 "RMR").
 *
 * Rank 1 is the home of P pages (DSM_HOME_NODE).  In each of K rounds rank
 * 1 writes one word in every page, everybody meets in dsm_barrier() (which
 * invalidates rank 0's copies), and rank 0 reads one word of every page:
 * each read is exactly one RMR.  Rank 0 times that loop with its own clock
 * (rmr_us = mean per page, first round excluded as warm-up) and also reports
 * the library's own view, dsm_stats rmr_time / rmr_count (rmr_lib_us).  The
 * values read are checked against what rank 1 wrote.  Ranks above 1 only
 * take part in the barriers.
 *
 * So that a slow configuration (a spinning communication thread on a
 * machine with fewer cores than threads can make one RMR cost tens of ms)
 * still finishes, rank 0 times the first timed round, keeps as many rounds
 * as fit in --budget seconds (at least 2 timed ones, at most --rounds) and
 * tells the others with MPI_Bcast; "rounds" in the results is the number of
 * rounds actually run.
 *
 * The floor it is compared with is measured in the same run, before
 * dsm_init(), between ranks 0 and 1 while the other ranks sleep:
 *   mpi_rtt_us   raw MPI round trip: a 12-byte request, a page-sized reply
 *                (the size is DSM_PAGE_SIZE or 16384, checked against
 *                dsm_page_size() after dsm_init()); --rtt-iters round trips
 *                after warm-up, fewer if they would take over 1 s.  Round
 *                trip i sends and receives page i mod --pages of a buffer of
 *                --pages pages on each side: the same pages an RMR round
 *                moves, not one cache-hot page (mpi_rtt_hot_us, reported
 *                too, is that: the same round trip with one page);
 *   fault_us     a protection fault on a PROT_NONE page of a private
 *                mapping whose SIGSEGV handler mprotects the page PROT_READ
 *                (mean per page), and mprotect_us, that mprotect alone;
 *   floor_us     = mpi_rtt_us + fault_us (both means), and
 *   rmr_over_floor = rmr_us / floor_us.
 * The floor is measured twice, before dsm_init() and after dsm_finalize()
 * (floor_before_us, floor_after_us), and the values above are the means of
 * the two: the machine may drift during a run, and the RMRs lie between.
 * floor_drift = |after - before| / floor_us; above 20% a note says that
 * this run's ratio is uncertain (the machine changed speed meanwhile).
 * Also (before and after, mean): raw_rmr_us, the floor's parts in one piece
 * (measure_raw_rmr: a protection fault whose handler makes the raw round
 * trip and the mprotect), and rmr_over_raw_rmr = rmr_us / raw_rmr_us, the
 * DSM protocol's own share; raw_rmr_us exceeds floor_us by what a fault
 * costs the round trip that follows it.
 * libdsm sends a page as DSM_PAGE_SIZE / DSM_PAGE_CHUNK messages (libdsm(7));
 * when that is more than one, the round trip is also measured with the
 * reply cut alike (before and after, mean): mpi_rtt_chunked_us,
 * floor_chunked_us = it + fault_us, and rmr_over_floor_chunked.  Not the
 * floor of the target (that is one page-sized message, the plain way to
 * move a page): what is left of the DSM's own cost when MPI moves the page
 * as fast as libdsm has it moved.
 * Each timed read is also timed on its own: rmr_median_us and rmr_p99_us
 * (the median and 99th percentile), against floor_median_us (the median
 * round trip + fault_us) as rmr_median_over_floor_median.  The mean is what
 * the targets compare; the median says how much of it is the tail.
 * It also reports lock_wait_per_rmr_us: the time rank 0's application
 * thread waited for libdsm's MPI mutex per RMR (DSM_COMM=direct only).
 *
 * With one rank there is nothing remote: only fault_us and mprotect_us are
 * measured and reported.
 */
#define _GNU_SOURCE
#include "../common.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TAG_REQ 11
#define TAG_REP 12
#define REQ_BYTES 12
#define FLOOR_DRIFT_WARN 0.20   /* floor_drift above this: a note */

static long opt_pages = 256;
static long opt_rounds = 20;
static long opt_rtt_iters = 2000;
static long opt_budget = 10;
static long opt_fault_pages = 1024;
static const char *opt_latencies;

static const struct bench_opt opts[] = {
    { "pages", BENCH_OPT_LONG, &opt_pages, "pages homed on rank 1 read per round" },
    { "rounds", BENCH_OPT_LONG, &opt_rounds, "rounds (the first is warm-up; >= 2)" },
    { "rtt-iters", BENCH_OPT_LONG, &opt_rtt_iters, "timed MPI round trips (at most)" },
    { "budget", BENCH_OPT_LONG, &opt_budget, "seconds the timed rounds may take, about" },
    { "fault-pages", BENCH_OPT_LONG, &opt_fault_pages, "pages of the local fault test" },
    { "latencies", BENCH_OPT_STRING, &opt_latencies,
      "write each timed read's time (us, one per line, in order) to this file" },
    { 0, 0, 0, 0 }
};

/* A size variable as libdsm will read it, known before dsm_init(): a
 * number with an optional K/M suffix, or dflt (also for a bad value, which
 * dsm_init() will report). */
static size_t size_from_env(const char *name, size_t dflt)
{
    const char *s = getenv(name);
    unsigned long long v;
    char *end;

    if (!s || !*s)
        return dflt;
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno || end == s || v == 0)
        return dflt;
    if (*end == 'k' || *end == 'K')
        v <<= 10;
    else if (*end == 'm' || *end == 'M')
        v <<= 20;
    return (size_t)v;
}

static size_t page_size_from_env(void)
{
    return size_from_env("DSM_PAGE_SIZE", 16384);
}

/* How many messages libdsm cuts a page into (libdsm(7), DSM_PAGE_CHUNK: the
 * page size over the chunk, at least 1, at most 16). */
static unsigned chunks_from_env(size_t psz)
{
    size_t c = size_from_env("DSM_PAGE_CHUNK", 8192), n = psz > c ? psz / c : 1;
    return n > 16 ? 16 : (unsigned)n;
}

/* --- the raw MPI round trip ------------------------------------------- */

struct rtt { double mean, median; long iters; };

/* The reply of the round trips below: one page-sized message (the floor),
 * or the page in rt_chunks messages, as libdsm sends it (more information,
 * not the floor). */
static unsigned rt_chunks = 1;

/* Rank 0: one round trip, the reply into page i mod npages of buf. */
static void round_trip(char *buf, long npages, size_t psz, long i)
{
    char req[REQ_BYTES] = { 0 }, *page = buf + (size_t)(i % npages) * psz;

    if (rt_chunks > 1) {
        MPI_Request r[16];
        MPI_Status s[16];
        size_t cs = psz / rt_chunks;
        for (unsigned c = 0; c < rt_chunks; c++)
            MPI_Irecv(page + c * cs, (int)cs, MPI_BYTE, 1, TAG_REP, bench.comm, &r[c]);
        MPI_Send(req, REQ_BYTES, MPI_BYTE, 1, TAG_REQ, bench.comm);
        MPI_Waitall((int)rt_chunks, r, s);
        return;
    }
    MPI_Send(req, REQ_BYTES, MPI_BYTE, 1, TAG_REQ, bench.comm);
    MPI_Recv(page, (int)psz, MPI_BYTE, 1, TAG_REP, bench.comm, MPI_STATUS_IGNORE);
}

/* Rank 1: answer round trips first .. first + count - 1, each with page
 * i mod npages of buf. */
static void answer(const char *buf, long npages, size_t psz, long first, long count)
{
    char req[REQ_BYTES];
    for (long i = first; i < first + count; i++) {
        const char *page = buf + (size_t)(i % npages) * psz;
        MPI_Recv(req, REQ_BYTES, MPI_BYTE, 0, TAG_REQ, bench.comm, MPI_STATUS_IGNORE);
        if (rt_chunks > 1) {
            MPI_Request r[16];
            MPI_Status s[16];
            size_t cs = psz / rt_chunks;
            for (unsigned c = 0; c < rt_chunks; c++)
                MPI_Isend(page + c * cs, (int)cs, MPI_BYTE, 0, TAG_REP, bench.comm, &r[c]);
            MPI_Waitall((int)rt_chunks, r, s);
            continue;
        }
        MPI_Send(page, (int)psz, MPI_BYTE, 0, TAG_REP, bench.comm);
    }
}

/* Round trips between ranks 0 and 1: rank 0 sends a 12-byte request, rank 1
 * answers with a page.  Round trip i moves page i mod npages of an
 * npages-page buffer on each side, as an RMR round moves npages distinct
 * pages (with npages = 1 the same, cache-hot page every time).  Rank 0 times
 * the warm-up too, to choose how many round trips fit in about a second, and
 * sends that count to rank 1 before the timed ones. */
static struct rtt measure_rtt(size_t psz, long npages)
{
    struct rtt r = { 0, 0, 0 };
    char *buf = aligned_alloc(4096, (size_t)npages * psz);
    double *t = malloc((size_t)opt_rtt_iters * sizeof *t);
    long warm = opt_rtt_iters / 10 + 10, iters = opt_rtt_iters, i;
    double t0, tw;

    if (!buf || !t)
        bench_fatal("out of memory");
    memset(buf, 0x5a, (size_t)npages * psz);
    if (bench.rank == 0) {
        tw = bench_now();
        for (i = 0; i < warm; i++)
            round_trip(buf, npages, psz, i);
        tw = (bench_now() - tw) / (double)warm;
        if (tw * (double)iters > 1.0)
            iters = (long)(1.0 / tw) > 20 ? (long)(1.0 / tw) : 20;
        MPI_Send(&iters, 1, MPI_LONG, 1, TAG_REQ, bench.comm);
        for (i = 0; i < iters; i++) {
            t0 = bench_now();
            round_trip(buf, npages, psz, i);
            t[i] = bench_now() - t0;
        }
        r.mean = bench_mean(t, (size_t)iters);
        r.median = bench_median(t, (size_t)iters);
        r.iters = iters;
    } else if (bench.rank == 1) {
        answer(buf, npages, psz, 0, warm);
        MPI_Recv(&iters, 1, MPI_LONG, 0, TAG_REQ, bench.comm, MPI_STATUS_IGNORE);
        answer(buf, npages, psz, 0, iters);
        r.iters = iters;
    }
    free(t);
    free(buf);
    return r;
}

/* --- the local fault + mprotect --------------------------------------- */

static char *fault_base;
static size_t fault_len, fault_psz;

/* Runs on the faulting thread: only mprotect, which is safe here.  A fault
 * outside the test mapping is a real bug: fall back to the default action
 * and let the access fault again, so the process dies as it should. */
static void fault_handler(int sig, siginfo_t *si, void *ctx)
{
    char *a = si->si_addr;

    (void)ctx;
    if (a >= fault_base && a < fault_base + fault_len) {
        char *p = fault_base + (size_t)(a - fault_base) / fault_psz * fault_psz;
        if (mprotect(p, fault_psz, PROT_READ) == 0)
            return;
    }
    signal(sig, SIG_DFL);
}

static void measure_fault(size_t psz, double *fault_us, double *mprotect_us)
{
    struct sigaction sa, old;
    const int reps = 6;  /* the first is warm-up */
    double tf = 0, tm = 0, t0;
    volatile long sink = 0;
    size_t i, n = (size_t)opt_fault_pages;
    int rep;

    fault_psz = psz;
    fault_len = n * psz;
    fault_base = mmap(NULL, fault_len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fault_base == MAP_FAILED)
        bench_fatal("mmap of %zu bytes: %s", fault_len, strerror(errno));
    /* Real pages behind every address, as in the DSM's memfd: the fault
     * measured is the protection fault, not a page allocation. */
    memset(fault_base, 1, fault_len);

    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fault_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &old) < 0)
        bench_fatal("sigaction: %s", strerror(errno));

    for (rep = 0; rep < reps; rep++) {
        if (mprotect(fault_base, fault_len, PROT_NONE) < 0)
            bench_fatal("mprotect: %s", strerror(errno));
        t0 = bench_now();
        for (i = 0; i < n; i++)
            sink += *(volatile long *)(fault_base + i * psz);
        if (rep > 0)
            tf += bench_now() - t0;

        if (mprotect(fault_base, fault_len, PROT_NONE) < 0)
            bench_fatal("mprotect: %s", strerror(errno));
        t0 = bench_now();
        for (i = 0; i < n; i++)
            if (mprotect(fault_base + i * psz, psz, PROT_READ) < 0)
                bench_fatal("mprotect: %s", strerror(errno));
        if (rep > 0)
            tm += bench_now() - t0;
    }
    (void)sink;
    sigaction(SIGSEGV, &old, NULL);
    munmap(fault_base, fault_len);
    *fault_us = tf / (double)(n * (reps - 1)) * 1e6;
    *mprotect_us = tm / (double)(n * (reps - 1)) * 1e6;
}

/* --- a raw RMR: the floor's parts in one piece ------------------------- */

/* Rank 0 reads a PROT_NONE page of a private mapping; its SIGSEGV handler
 * makes the floor's raw MPI round trip (12-byte request, page-sized reply
 * into page i mod npages of a buffer) and mprotects the page PROT_READ:
 * what an RMR is made of, without the DSM's protocol.  It costs more than
 * the sum of its parts measured apart (mpi_rtt_us + fault_us): a round
 * trip right after a protection fault is slower than one in a loop of
 * round trips (0.3-0.5 us more per RMR here, 2026-11-25). */
static char *raw_trap, *raw_buf;
static size_t raw_psz;
static long raw_npages, raw_i;

static void raw_handler(int sig, siginfo_t *si, void *ctx)
{
    char *a = si->si_addr;

    (void)ctx;
    if (a < raw_trap || a >= raw_trap + (size_t)raw_npages * raw_psz) {
        signal(sig, SIG_DFL);
        return;
    }
    round_trip(raw_buf, raw_npages, raw_psz, raw_i);
    if (mprotect(raw_trap + (size_t)(a - raw_trap) / raw_psz * raw_psz, raw_psz, PROT_READ) != 0)
        signal(sig, SIG_DFL);
}

static double measure_raw_rmr(size_t psz, long npages, long iters)
{
    struct sigaction sa, old;
    double t = 0, t0;
    volatile long sink = 0;
    long i, warm = npages;

    if (bench.rank == 1) {
        char *page = aligned_alloc(4096, (size_t)npages * psz);
        if (!page)
            bench_fatal("out of memory");
        memset(page, 0x5a, (size_t)npages * psz);
        answer(page, npages, psz, 0, warm + iters);
        free(page);
        return 0;
    }
    raw_psz = psz;
    raw_npages = npages;
    raw_buf = aligned_alloc(4096, (size_t)npages * psz);
    raw_trap = mmap(NULL, (size_t)npages * psz, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!raw_buf || raw_trap == MAP_FAILED)
        bench_fatal("out of memory");
    memset(raw_buf, 1, (size_t)npages * psz);
    memset(raw_trap, 1, (size_t)npages * psz);
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = raw_handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &old) < 0)
        bench_fatal("sigaction: %s", strerror(errno));
    for (i = 0; i < warm + iters; i++) {
        if (i % npages == 0 && mprotect(raw_trap, (size_t)npages * psz, PROT_NONE) != 0)
            bench_fatal("mprotect: %s", strerror(errno));
        raw_i = i;
        __asm__ volatile("" ::: "memory");     /* raw_i is set before the fault */
        t0 = bench_now();
        sink += *(volatile char *)(raw_trap + (size_t)(i % npages) * psz);
        if (i >= warm)
            t += bench_now() - t0;
    }
    (void)sink;
    sigaction(SIGSEGV, &old, NULL);
    munmap(raw_trap, (size_t)npages * psz);
    free(raw_buf);
    return t / (double)iters;
}

/* --latencies FILE: every timed read's time in the order of the reads, so that
 * the tail can be placed in time (what the median and p99 do not say). */
static void write_latencies(const char *path, const double *lat, size_t n)
{
    FILE *f = fopen(path, "w");

    if (!f)
        bench_fatal("cannot write the read times to %s: %s", path, strerror(errno));
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.3f\n", lat[i] * 1e6);
    if (fclose(f) != 0)
        bench_fatal("writing the read times to %s: %s", path, strerror(errno));
}

/* --- the RMR loop ----------------------------------------------------- */

static uint64_t value_of(long round, long page)
{
    return ((uint64_t)(round + 1) << 32) | (uint64_t)page;
}

int main(int argc, char **argv)
{
    struct rtt rtt = { 0, 0, 0 }, rtt_hot = { 0, 0, 0 }, rtt2 = { 0, 0, 0 };
    struct rtt rttc = { 0, 0, 0 }, rttc2 = { 0, 0, 0 };
    unsigned chunks;
    double fault_us = 0, mprotect_us = 0, fault2_us = 0, mprotect2_us = 0;
    double floor_us, floor1_us, floor2_us, t_total = 0, t0, t_start = 0;
    double raw1_us = 0, raw2_us = 0, *lat = NULL;
    size_t psz_env, psz, nlat = 0;
    struct dsm_stats st;
    char *arr = NULL;
    long round, rounds = opt_rounds, i, bad = 0;
    int remote;

    bench_start(&argc, &argv, "rmr",
                "Remote memory read cost: rank 0 reads pages homed on rank 1.", opts);
    if (opt_rounds < 2)
        bench_fatal("--rounds must be at least 2 (the first round is warm-up)");
    remote = bench.size >= 2;
    psz_env = page_size_from_env();

    /* The floor, before the DSM (and its communication thread) exists, and
     * again after dsm_finalize(): the RMRs are compared with the mean of the
     * two, so that a machine that drifts during the run (a shared VM) moves
     * both sides of the ratio alike. */
    chunks = chunks_from_env(psz_env);
    if (remote && bench.rank <= 1) {
        /* The pieces first: the floor's parts stay as near the reads as
         * before. */
        if (chunks > 1) {
            rt_chunks = chunks;
            rttc = measure_rtt(psz_env, opt_pages);
            rt_chunks = 1;
        }
        rtt_hot = measure_rtt(psz_env, 1);
        rtt = measure_rtt(psz_env, opt_pages);
    }
    bench_idle_barrier();
    if (bench.rank == 0)
        measure_fault(psz_env, &fault_us, &mprotect_us);
    bench_idle_barrier();
    if (remote && bench.rank <= 1)
        raw1_us = measure_raw_rmr(psz_env, opt_pages, rtt.iters ? rtt.iters : 200) * 1e6;
    bench_idle_barrier();

    if (dsm_init(&argc, &argv) != 0)
        bench_fatal("dsm_init failed");
    bench_settings();
    psz = dsm_page_size();
    if (psz != psz_env)
        bench_fatal("the floor was measured with %zu-byte pages but dsm_page_size() "
                    "is %zu: give DSM_PAGE_SIZE as a plain number of bytes", psz_env, psz);
    bench_param("pages", opt_pages);

    bench_say("rmr: %d ranks, DSM_COMM=%s DSM_POLL=%s, page %zu bytes, %ld pages x up to %ld rounds\n",
              bench.size, bench.comm_var, bench.poll_var, psz, opt_pages, opt_rounds);
    if (!remote) {
        bench_say("rmr: one rank, nothing is remote: measuring the local fault only\n");
    } else {
        /* Each timed read's own time: the median and the tail of the RMR
         * (the mean above is what the target compares). */
        lat = malloc((size_t)(opt_rounds - 1) * (size_t)opt_pages * sizeof *lat);
        if (!lat)
            bench_fatal("out of memory for %ld read times", (opt_rounds - 1) * opt_pages);
        arr = dsm_malloc_home((size_t)opt_pages * psz, DSM_HOME_NODE, 1);
        if (!arr)
            bench_fatal("dsm_malloc_home of %ld pages failed", opt_pages);
        if (dsm_home_of(arr) != 1 || dsm_home_of(arr + (opt_pages - 1) * psz) != 1)
            bench_fatal("pages allocated with DSM_HOME_NODE 1 are homed on %d and %d",
                        dsm_home_of(arr), dsm_home_of(arr + (opt_pages - 1) * psz));
        /* The home writes its pages in full, as an application's home does:
         * the rounds below write one word per page, which would leave the
         * rest of each page unallocated at the home, and the warm-up
         * round's first copies (which 'dsmtool calibrate' times) would also
         * pay the home's kernel allocating it. */
        if (bench.rank == 1)
            memset(arr, 0x5a, (size_t)opt_pages * psz);

        for (round = 0; round < rounds; round++) {
            if (bench.rank == 1)
                for (i = 0; i < opt_pages; i++)
                    *(volatile uint64_t *)(arr + i * psz) = value_of(round, i);
            dsm_barrier();
            if (bench.rank == 0) {
                if (round == 1) {
                    dsm_stats_reset();  /* the library's view leaves out round 0 too */
                    t_start = bench_now();
                }
                /* One clock read per page: each read's end is the next one's
                 * start, so timing the reads adds no work to the round. */
                double r0 = t0 = bench_now(), r1;
                for (i = 0; i < opt_pages; i++) {
                    if (*(volatile uint64_t *)(arr + i * psz) != value_of(round, i))
                        bad++;
                    r1 = bench_now();
                    if (round > 0)
                        lat[nlat++] = r1 - r0;
                    r0 = r1;
                }
                if (round > 0)
                    t_total += r0 - t0;
            }
            dsm_barrier();
            if (round == 1) {
                /* Rank 0 knows what one round costs: fit the rest into the
                 * budget, and tell everybody. */
                if (bench.rank == 0) {
                    double per_round = bench_now() - t_start;
                    long fit = 2 + (long)((double)opt_budget / per_round);
                    rounds = fit < opt_rounds ? (fit > 3 ? fit : 3) : opt_rounds;
                }
                MPI_Bcast(&rounds, 1, MPI_LONG, 0, bench.comm);
            }
        }
        dsm_stats_get(&st);
        if (bench.rank == 0 && bad)
            bench_fatal("%ld of %ld reads returned a stale or wrong value "
                        "(rank 1 wrote, dsm_barrier, rank 0 read)",
                        bad, opt_pages * rounds);
        dsm_free(arr);
        bench_param("rounds", rounds);
    }
    dsm_finalize();

    if (remote && bench.rank <= 1) {
        rtt2 = measure_rtt(psz, opt_pages);   /* the floor's first, as before */
        if (chunks > 1) {
            rt_chunks = chunks;
            rttc2 = measure_rtt(psz, opt_pages);
            rt_chunks = 1;
        }
    }
    bench_idle_barrier();
    if (remote && bench.rank == 0)
        measure_fault(psz, &fault2_us, &mprotect2_us);
    bench_idle_barrier();
    if (remote && bench.rank <= 1)
        raw2_us = measure_raw_rmr(psz, opt_pages, rtt2.iters ? rtt2.iters : 200) * 1e6;

    if (bench.rank == 0) {
        if (remote) {
            double rmr_us = t_total / (double)((rounds - 1) * opt_pages) * 1e6, floor_median_us;
            double lib_us = st.rmr_count ? st.rmr_time / (double)st.rmr_count * 1e6 : NAN;

            floor1_us = rtt.mean * 1e6 + fault_us;
            floor2_us = rtt2.mean * 1e6 + fault2_us;
            floor_us = (floor1_us + floor2_us) / 2;
            floor_median_us = (rtt.median + rtt2.median) / 2 * 1e6 + (fault_us + fault2_us) / 2;
            rtt.mean = (rtt.mean + rtt2.mean) / 2;
            rtt.median = (rtt.median + rtt2.median) / 2;
            fault_us = (fault_us + fault2_us) / 2;
            mprotect_us = (mprotect_us + mprotect2_us) / 2;
            bench_say("  raw MPI round trip (12 B + %zu B, %ld pages in turn): mean %.2f us, "
                      "median %.2f us over %ld\n", psz, opt_pages, rtt.mean * 1e6,
                      rtt.median * 1e6, rtt.iters);
            bench_say("  the same with one page every time (cache-hot): mean %.2f us\n",
                      rtt_hot.mean * 1e6);
            bench_say("  local fault + mprotect: %.2f us per page; mprotect alone %.2f us\n",
                      fault_us, mprotect_us);
            bench_say("  floor = round trip + fault = %.2f us (%.2f before the DSM ran, "
                      "%.2f after; means of the two above)\n", floor_us, floor1_us, floor2_us);
            /* The two floors differ when the machine changed speed during
             * the run (a VM's slow phase): then the reads between them may
             * have run at either speed, and the ratio below says little. */
            double drift = fabs(floor2_us - floor1_us) / floor_us;
            if (drift > FLOOR_DRIFT_WARN)
                bench_say("  note: the floor moved by %.0f%% between before and after the "
                          "reads: the machine changed speed during this run, so its ratio "
                          "is uncertain (bench.sh rmr takes the median of several runs)\n",
                          drift * 100);
            double raw_us = (raw1_us + raw2_us) / 2;
            bench_say("  raw RMR (the floor's parts in one piece: a fault whose handler "
                      "makes the round trip and the mprotect): %.2f us (%.2f before, %.2f after)\n",
                      raw_us, raw1_us, raw2_us);
            bench_say("  RMR (benchmark clock): %.2f us per page = %.2f x floor, %.2f x raw RMR "
                      "(%ld timed rounds)\n", rmr_us, rmr_us / floor_us, rmr_us / raw_us,
                      rounds - 1);
            /* libdsm sends a page as `chunks` messages (DSM_PAGE_CHUNK): the
             * same round trip with the reply cut alike, and the floor made
             * of it.  Not the floor of the target: more information. */
            double fc_us = NAN, rttc_us = NAN;
            if (chunks > 1) {
                rttc_us = (rttc.mean + rttc2.mean) / 2 * 1e6;
                fc_us = rttc_us + fault_us;
                bench_say("  round trip with the reply in %u messages of %zu B, as libdsm sends "
                          "a page: mean %.2f us; floor with it %.2f us; RMR = %.2f x that\n",
                          chunks, psz / chunks, rttc_us, fc_us, rmr_us / fc_us);
            }
            if (opt_latencies)
                write_latencies(opt_latencies, lat, nlat);
            double p50_us = bench_median(lat, nlat) * 1e6;   /* sorts lat */
            double p99_us = nlat ? lat[nlat * 99 / 100] * 1e6 : NAN;
            bench_say("  RMR per read: median %.2f us (%.2f x the floor's median, %.2f us), "
                      "99th percentile %.2f us\n", p50_us, p50_us / floor_median_us,
                      floor_median_us, p99_us);
            bench_say("  RMR (library stats):   %.2f us per page over %llu RMRs "
                      "(expected %ld), %llu read faults\n", lib_us,
                      (unsigned long long)st.rmr_count, (rounds - 1) * opt_pages,
                      (unsigned long long)st.read_faults);
            bench_result("rmr_us", rmr_us, "us");
            bench_result("rmr_lib_us", lib_us, "us");
            bench_result("rmr_median_us", p50_us, "us");
            bench_result("rmr_p99_us", p99_us, "us");
            bench_result("floor_median_us", floor_median_us, "us");
            bench_result("rmr_median_over_floor_median", p50_us / floor_median_us, "ratio");
            bench_result("floor_us", floor_us, "us");
            bench_result("floor_before_us", floor1_us, "us");
            bench_result("floor_after_us", floor2_us, "us");
            bench_result("floor_drift", drift, "ratio");
            bench_result("mpi_rtt_us", rtt.mean * 1e6, "us");
            bench_result("mpi_rtt_median_us", rtt.median * 1e6, "us");
            bench_result("mpi_rtt_hot_us", rtt_hot.mean * 1e6, "us");
            bench_result("fault_us", fault_us, "us");
            bench_result("mprotect_us", mprotect_us, "us");
            bench_result("rmr_over_floor", rmr_us / floor_us, "ratio");
            bench_result("raw_rmr_us", raw_us, "us");
            if (chunks > 1) {
                bench_result("mpi_rtt_chunked_us", rttc_us, "us");
                bench_result("floor_chunked_us", fc_us, "us");
                bench_result("rmr_over_floor_chunked", rmr_us / fc_us, "ratio");
            }
            bench_result("rmr_over_raw_rmr", rmr_us / raw_us, "ratio");
            bench_result("rmr_count", (double)st.rmr_count, "count");
            /* DSM_COMM=direct: how long rank 0's application thread waited
             * for the MPI mutex per RMR (paper 003: 490 us with a polling
             * thread holding it; 0 under the other transports). */
            bench_say("  MPI mutex wait (direct): %.2f us per RMR, %.2f waits per RMR\n",
                      st.rmr_count ? st.mpi_lock_wait_time / (double)st.rmr_count * 1e6 : 0.0,
                      st.rmr_count ? (double)st.mpi_lock_waits / (double)st.rmr_count : 0.0);
            bench_result("lock_wait_per_rmr_us", st.rmr_count ?
                         st.mpi_lock_wait_time / (double)st.rmr_count * 1e6 : 0.0, "us");
        } else {
            bench_say("  local fault + mprotect: %.2f us per page; mprotect alone %.2f us\n",
                      fault_us, mprotect_us);
            bench_result("fault_us", fault_us, "us");
            bench_result("mprotect_us", mprotect_us, "us");
        }
    }
    free(lat);
    bench_emit();
    return bench_end();
}
