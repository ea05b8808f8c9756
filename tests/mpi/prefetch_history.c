/*
 * prefetch_history.c - DSM_PREFETCH=history on a program whose access
 * pattern changes (libdsm(7) PREFETCH; the program sets the variable).
 *
 * Every rank is home of PER pages of each of two arrays, x and y.
 * Phase A, ROUNDS rounds: the homes write their x pages, barrier, every
 * rank reads all of x, barrier.  From the third round on the history
 * prefetches every remote x page right after the first barrier (they were
 * read two intervals before and the barrier invalidated them): no read
 * fault, every remote page a used prefetch.
 * Phase B, ROUNDS rounds: the homes write x and y, barrier, every rank
 * reads only y, barrier.  The history must follow: y is learnt after one
 * round of faults; x, no longer read, may still be prefetched while it is
 * within DSM_HISTORY_WINDOW (2) intervals of its last use (at most twice),
 * then ages out: from the fourth round on,
 * nothing of x is prefetched (no wasted prefetch, prefetch_issued = the
 * remote y pages) and y arrives by prefetch alone; over the phase exactly
 * the remote x pages age out.  Every value read is checked.
 */
#include <stdlib.h>

#include "mpitest.h"

#define PER 3

static uint32_t *x, *y;
static size_t psz, words, npages;
static int me, nodes;

static uint32_t value(long round, int arr, size_t page, size_t w)
{
    return (uint32_t)(round * 104729u) ^ ((uint32_t)arr << 30) ^ (uint32_t)(page << 16) ^
           (uint32_t)w;
}

static void write_home(uint32_t *a, int id, long round)
{
    for (size_t p = (size_t)me * PER; p < (size_t)(me + 1) * PER; p++)
        for (size_t w = 0; w < words; w++)
            a[p * words + w] = value(round, id, p, w);
}

static void read_all(const uint32_t *a, int id, long round, const char *what)
{
    for (size_t p = 0; p < npages; p++) {
        for (size_t w = 0; w < words; w += 127)
            mt_expect_u32(what, &a[p * words + w], value(round, id, p, w));
        mt_expect_u32(what, &a[p * words + words - 1], value(round, id, p, words - 1));
    }
    mt_check_point(what);
}

static struct dsm_stats stats(void)
{
    struct dsm_stats s;
    if (dsm_stats_get(&s) != 0)
        mt_fail("dsm_stats_get failed");
    return s;
}

static void expect(long round, const char *what, uint64_t got, uint64_t want)
{
    if (got != want)
        mt_fail("round %ld: %s: %llu, expected %llu", round, what,
                (unsigned long long)got, (unsigned long long)want);
}

int main(int argc, char **argv)
{
    long rounds = mt_param("MPITEST_ROUNDS", 8);
    uint64_t remote;
    struct dsm_stats s0, s1, b0;

    if (rounds < 5)
        rounds = 5;
    if (setenv("DSM_PREFETCH", "history", 1) != 0)
        mt_fail("setenv failed");
    mt_init(&argc, &argv);
    me = dsm_node_id();
    nodes = dsm_node_count();
    psz = dsm_page_size();
    words = psz / 4;
    npages = (size_t)nodes * PER;
    remote = (uint64_t)(nodes - 1) * PER;
    x = mt_malloc_home(npages * psz, DSM_HOME_BLOCK, 0);
    y = mt_malloc_home(npages * psz, DSM_HOME_BLOCK, 0);
    mt_note("%d ranks, 2 x %zu pages, %ld rounds per phase, DSM_PREFETCH=history",
            nodes, npages, rounds);

    for (long r = 0; r < rounds; r++) {
        write_home(x, 0, r);
        dsm_barrier();
        s0 = stats();
        read_all(x, 0, r, "phase A, x");
        s1 = stats();
        dsm_barrier();          /* no home writes x while others read it */
        if (r >= 2) {
            expect(r, "phase A read faults", s1.read_faults - s0.read_faults, 0);
            expect(r, "phase A prefetched pages used", s1.prefetch_used - s0.prefetch_used,
                   remote);
        }
    }
    b0 = stats();
    for (long r = 0; r < rounds; r++) {
        long v = rounds + r;
        write_home(x, 0, v);
        write_home(y, 1, v);
        s0 = stats();
        dsm_barrier();
        read_all(y, 1, v, "phase B, y");
        s1 = stats();
        dsm_barrier();
        if (r >= 3) {
            expect(r, "phase B pages prefetched (y only)",
                   s1.prefetch_issued - s0.prefetch_issued, remote);
            expect(r, "phase B wasted prefetches", s1.prefetch_wasted - s0.prefetch_wasted, 0);
            expect(r, "phase B read faults", s1.read_faults - s0.read_faults, 0);
        }
    }
    s1 = stats();
    expect(rounds, "pages aged out of the history in phase B",
           s1.prefetch_aged - b0.prefetch_aged, remote);
    if (s1.prefetch_wasted - b0.prefetch_wasted > 2 * remote)
        mt_fail("phase B: %llu wasted prefetches, more than the %llu of x's last two "
                "rounds in the window", (unsigned long long)(s1.prefetch_wasted -
                b0.prefetch_wasted), (unsigned long long)(2 * remote));
    /* x is still right when read again. */
    dsm_barrier();
    read_all(x, 0, 2 * rounds - 1, "x at the end");
    dsm_barrier();
    mt_finalize();
    return 0;
}
