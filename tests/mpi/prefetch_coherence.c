/*
 * prefetch_coherence.c - dsm_prefetch brings the right data and never a
 * stale copy (dsm_prefetch(3), libdsm(7) PREFETCH).
 *
 * Every rank is home of PER pages of one array (block homes).  Each round:
 *   1. homes write their pages (values depend on the round), barrier;
 *   2. every rank prefetches the whole array; exactly the other ranks' pages
 *      are requested (prefetch_issued), and they arrive (pages_fetched);
 *   3. every rank reads the even pages: right values, no read fault, each
 *      one counted as a used prefetch; the odd pages stay prefetched but
 *      untouched;
 *   4. after a plain MPI barrier (every prefetched copy is installed), the
 *      homes write new values into all their pages, then dsm_barrier: the
 *      untouched prefetched copies now hold old data and must be dropped,
 *      so every rank reads the new values everywhere, and the odd pages
 *      count as wasted prefetches;
 *   5. the same without waiting: prefetch, homes write at once (the
 *      prefetch may still be in flight), barrier, check;
 *   6. locks: homes write, barrier, prefetch, wait for the copies, then
 *      each rank in turn writes
 *      the first word of its pages under a lock; every rank then takes the
 *      lock and must see all those words (the grant invalidates the
 *      prefetched copies).
 * Then misuse of the range: NULL, a stack address, a range running past the
 * region are -DSM_EINVAL; npages 0, a freed allocation, home pages and
 * valid copies are no-ops (nothing requested, no crash).
 */
#include <sched.h>

#include "mpitest.h"

#define PER 4
#define LOCK 3

static uint32_t *arr;
static size_t psz, words, npages;
static int me, nodes;

static uint32_t value(long round, int step, size_t page, size_t w)
{
    return (uint32_t)(round * 1000003u) ^ ((uint32_t)step << 28) ^
           (uint32_t)(page << 16) ^ (uint32_t)w;
}

static uint32_t *page_at(size_t p) { return arr + p * words; }
static int home(size_t p) { return (int)(p / PER); }

static void write_home(long round, int step)
{
    for (size_t p = (size_t)me * PER; p < (size_t)(me + 1) * PER; p++)
        for (size_t w = 0; w < words; w++)
            page_at(p)[w] = value(round, step, p, w);
}

static void check_pages(const char *what, long round, int step, int parity)
{
    for (size_t p = 0; p < npages; p++) {
        if (parity >= 0 && (int)(p % 2) != parity)
            continue;
        for (size_t w = 0; w < words; w += 97)
            mt_expect_u32(what, &page_at(p)[w], value(round, step, p, w));
        mt_expect_u32(what, &page_at(p)[words - 1], value(round, step, p, words - 1));
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

/* Wait (yielding, with a time limit) until pages_fetched reached want. */
static void wait_fetched(uint64_t want, const char *what)
{
    double t0 = dsm_wtime();
    while (stats().pages_fetched < want) {
        if (dsm_wtime() - t0 > 60.0)
            mt_fail("%s: prefetched pages did not arrive within 60 s (%llu of %llu)",
                    what, (unsigned long long)stats().pages_fetched,
                    (unsigned long long)want);
        sched_yield();
    }
}

static void expect_eq(const char *what, uint64_t got, uint64_t want)
{
    if (got != want)
        mt_fail("%s: %llu, expected %llu", what, (unsigned long long)got,
                (unsigned long long)want);
}

int main(int argc, char **argv)
{
    long rounds = mt_param("MPITEST_ROUNDS", 6);
    uint64_t remote;

    mt_init(&argc, &argv);
    me = dsm_node_id();
    nodes = dsm_node_count();
    psz = dsm_page_size();
    words = psz / 4;
    npages = (size_t)nodes * PER;
    remote = (uint64_t)(nodes - 1) * PER;
    arr = mt_malloc_home(npages * psz, DSM_HOME_BLOCK, 0);
    for (size_t p = 0; p < npages; p++)
        if (dsm_home_of(page_at(p)) != home(p))
            mt_fail("page %zu is homed on %d, expected %d", p, dsm_home_of(page_at(p)),
                    home(p));
    mt_note("%d ranks, %zu pages of %zu bytes, %ld rounds", nodes, npages, psz, rounds);

    for (long r = 0; r < rounds; r++) {
        struct dsm_stats s0, s1;

        /* 1-3: prefetch, then use half. */
        write_home(r, 1);
        dsm_barrier();
        s0 = stats();
        if (dsm_prefetch(arr, npages) != 0)
            mt_fail("dsm_prefetch of the whole array failed");
        wait_fetched(s0.pages_fetched + remote, "step 2");
        s1 = stats();
        expect_eq("pages requested by the prefetch", s1.prefetch_issued - s0.prefetch_issued,
                  remote);
        check_pages("prefetched even pages", r, 1, 0);
        s1 = stats();
        expect_eq("read faults on prefetched pages", s1.read_faults - s0.read_faults, 0);
        uint64_t even_remote = 0;
        for (size_t p = 0; p < npages; p++)
            even_remote += p % 2 == 0 && home(p) != me;
        expect_eq("prefetched pages used", s1.prefetch_used - s0.prefetch_used, even_remote);
        /* Valid copies and home pages: nothing to ask for. */
        if (dsm_prefetch(arr, npages) != 0)
            mt_fail("second dsm_prefetch failed");
        expect_eq("pages requested again", stats().prefetch_issued - s1.prefetch_issued, 0);

        /* 4: the homes change every page after the copies arrived. */
        MPI_Barrier(MPI_COMM_WORLD);
        write_home(r, 2);
        s0 = stats();
        dsm_barrier();
        check_pages("after the homes' writes", r, 2, -1);
        s1 = stats();
        expect_eq("wasted prefetches (odd pages never touched)",
                  s1.prefetch_wasted - s0.prefetch_wasted, remote - even_remote);

        /* 5: the same with the prefetch possibly still in flight. */
        dsm_barrier();
        if (dsm_prefetch(arr, npages) != 0)
            mt_fail("dsm_prefetch (step 5) failed");
        write_home(r, 3);
        dsm_barrier();
        check_pages("prefetch racing with the homes' writes", r, 3, -1);

        /* 6: locks. */
        dsm_barrier();          /* everyone has read step 5's values */
        write_home(r, 5);
        dsm_barrier();
        s0 = stats();
        if (dsm_prefetch(arr, npages) != 0)
            mt_fail("dsm_prefetch (step 6) failed");
        wait_fetched(s0.pages_fetched + remote, "step 6");
        MPI_Barrier(MPI_COMM_WORLD);
        for (int turn = 0; turn < nodes; turn++) {
            if (turn == me) {
                dsm_lock_acquire(LOCK);
                for (size_t p = (size_t)me * PER; p < (size_t)(me + 1) * PER; p++)
                    page_at(p)[0] = value(r, 4, p, 0);
                dsm_lock_release(LOCK);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        dsm_lock_acquire(LOCK);
        for (size_t p = 0; p < npages; p++) {
            mt_expect_u32("word written under the lock", &page_at(p)[0], value(r, 4, p, 0));
            mt_expect_u32("word not written under the lock", &page_at(p)[1],
                          value(r, 5, p, 1));
        }
        dsm_lock_release(LOCK);
        mt_check_point("prefetched copies across a lock acquire");
        dsm_barrier();
    }

    /* Misuse of the range. */
    {
        int local = 0;
        struct dsm_stats s0 = stats();
        void *gone = mt_malloc_home(4 * psz, DSM_HOME_CYCLIC, 0);
        dsm_free(gone);
        if (dsm_prefetch(NULL, 1) != -DSM_EINVAL)
            mt_fail("dsm_prefetch(NULL, 1) did not return -DSM_EINVAL");
        if (dsm_prefetch(&local, 1) != -DSM_EINVAL)
            mt_fail("dsm_prefetch(stack address, 1) did not return -DSM_EINVAL");
        if (dsm_prefetch(arr, (size_t)-1) != -DSM_EINVAL)
            mt_fail("dsm_prefetch(arr, SIZE_MAX) did not return -DSM_EINVAL");
        if (dsm_prefetch(page_at(npages - 1), (size_t)1 << 40) != -DSM_EINVAL)
            mt_fail("dsm_prefetch past the end of the region did not return -DSM_EINVAL");
        if (dsm_prefetch(arr, 0) != 0)
            mt_fail("dsm_prefetch(arr, 0) did not return 0");
        if (dsm_prefetch(gone, 4) != 0)
            mt_fail("dsm_prefetch of a freed allocation did not return 0");
        if (dsm_prefetch(page_at((size_t)me * PER), PER) != 0)
            mt_fail("dsm_prefetch of this rank's home pages did not return 0");
        expect_eq("pages requested by the misuses", stats().prefetch_issued -
                  s0.prefetch_issued, 0);
        /* The region is still sane. */
        write_home(rounds, 5);
        dsm_barrier();
        check_pages("after the misuses", rounds, 5, -1);
    }
    dsm_barrier();
    mt_finalize();
    return 0;
}
