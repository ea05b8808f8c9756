/*
 * page_chunks.c - a page that travels as several MPI messages arrives whole
 * and in place (libdsm(7), DSM_PAGE_CHUNK).
 *
 * libdsm cuts a page into DSM_PAGE_CHUNK-sized messages on one tag; the
 * requester posts one receive per piece, in order, and MPI matches them in
 * that order.  A piece received into the wrong place, a missing one, or a
 * page installed before its last piece landed would show as wrong words.
 * Built twice from this file:
 *   page_chunks  64 KiB pages sent as 16 messages of 4 KiB (the most
 *                libdsm uses);
 *   page_whole   64 KiB pages sent whole (DSM_PAGE_CHUNK=64K): the one-
 *                message path, which the default (8 KiB pieces of 16 KiB
 *                pages, under every other test) does not take.
 * The program sets DSM_PAGE_SIZE and DSM_PAGE_CHUNK itself, over what the
 * environment says.
 *
 * Every rank is the home of PER pages (block homes).  Each round the homes
 * write every 8-byte word of their pages with a value made of the round,
 * the page and the word; after a barrier every rank reads every word of the
 * other ranks' pages (one read fault each), then, after the homes wrote
 * new values, the same through one dsm_prefetch of the whole array (pages
 * of one batch follow each other on one tag, piece after piece).
 *
 * Run by run-mpi-test.sh with 2, 3 and 4 ranks, for each DSM_COMM variant.
 * MPITEST_ROUNDS overrides the number of rounds.
 */
#include <sched.h>

#include "mpitest.h"

#ifndef PAGE_CHUNK
#define PAGE_CHUNK "4K"
#endif
#define PAGE_SIZE "64K"
#define PER 6

static uint64_t *arr;
static size_t psz, words, npages;
static int me, nodes;

static uint64_t value(long round, int step, size_t page, size_t w)
{
    return ((uint64_t)(round * 2 + step + 1) << 48) ^ ((uint64_t)page << 32) ^
           (uint64_t)(w * 2654435761u);
}

static uint64_t *page_at(size_t p) { return arr + p * words; }
static int home(size_t p) { return (int)(p / PER); }

static void write_home(long round, int step)
{
    for (size_t p = 0; p < npages; p++)
        if (home(p) == me)
            for (size_t w = 0; w < words; w++)
                page_at(p)[w] = value(round, step, p, w);
}

static void check_all(const char *what, long round, int step)
{
    for (size_t p = 0; p < npages; p++) {
        const volatile uint64_t *pg = page_at(p);
        for (size_t w = 0; w < words; w++) {
            uint64_t got = pg[w], want = value(round, step, p, w);
            if (got != want)
                mt_error("%s, round %ld: page %zu (home %d) word %zu (byte %zu of the page, "
                         "piece %zu of 4 KiB) is 0x%016" PRIx64 ", expected 0x%016" PRIx64,
                         what, round, p, home(p), w, w * 8, w * 8 / 4096, got, want);
        }
    }
    mt_check_point(what);
}

static uint64_t fetched(void)
{
    struct dsm_stats s;
    dsm_stats_get(&s);
    return s.pages_fetched;
}

int main(int argc, char **argv)
{
    long rounds = mt_param("MPITEST_ROUNDS", 4);
    uint64_t remote;

    if (setenv("DSM_PAGE_SIZE", PAGE_SIZE, 1) != 0 ||
        setenv("DSM_PAGE_CHUNK", PAGE_CHUNK, 1) != 0)
        mt_fail("setenv: %s", strerror(errno));
    mt_init(&argc, &argv);
    me = dsm_node_id();
    nodes = dsm_node_count();
    psz = dsm_page_size();
    if (psz != 65536)
        mt_fail("DSM_PAGE_SIZE=" PAGE_SIZE " but dsm_page_size() is %zu", psz);
    words = psz / 8;
    npages = (size_t)nodes * PER;
    remote = (uint64_t)(nodes - 1) * PER;
    arr = mt_malloc_home(npages * psz, DSM_HOME_BLOCK, 0);
    for (size_t p = 0; p < npages; p++)
        if (dsm_home_of(page_at(p)) != home(p))
            mt_fail("page %zu is homed on %d, expected %d", p, dsm_home_of(page_at(p)),
                    home(p));
    mt_note("%d ranks, %zu pages of %zu bytes, DSM_PAGE_CHUNK=%s, %ld rounds", nodes,
            npages, psz, PAGE_CHUNK, rounds);

    for (long r = 0; r < rounds; r++) {
        /* Read faults: one page at a time. */
        write_home(r, 0);
        dsm_barrier();
        uint64_t f0 = fetched();
        check_all("pages read by fault", r, 0);
        if (fetched() - f0 != remote)
            mt_fail("round %ld: %" PRIu64 " pages fetched by the reads, expected %" PRIu64,
                    r, fetched() - f0, remote);
        dsm_barrier();

        /* One prefetch batch of every remote page, then the reads. */
        write_home(r, 1);
        dsm_barrier();
        f0 = fetched();
        if (dsm_prefetch(arr, npages) != 0)
            mt_fail("dsm_prefetch of the whole array failed");
        /* Wait until every copy is installed, so the reads below are of
         * prefetched pages (a read of a page still in flight would wait for
         * it, which is correct too, but not what is tested here). */
        double t0 = dsm_wtime();
        while (fetched() - f0 < remote) {
            if (dsm_wtime() - t0 > 60.0)
                mt_fail("round %ld: prefetched pages did not arrive within 60 s (%" PRIu64
                        " of %" PRIu64 ")", r, fetched() - f0, remote);
            sched_yield();
        }
        check_all("prefetched pages", r, 1);
        dsm_barrier();
    }
    mt_finalize();
    return 0;
}
