/*
 * bcast.c - dsm_bcast gives every node a valid, current, coherent copy.
 *
 * Steps (every node runs them; each ends in a check point):
 *  1. root r (each node in turn) writes a range homed in blocks over all
 *     nodes, broadcasts it; every node then reads every word without a
 *     single read fault (the copies are there) and sees r's values;
 *  2. the homes write their own pages after the broadcast, a barrier, and
 *     every node sees the new values (the homes trapped the writes because
 *     the broadcast put everybody in their copysets);
 *  3. a non-home node writes one word of each page, a barrier, and every
 *     node sees it (its copy was a valid read-only copy: the write twins);
 *     then the homes write again, and that node sees it too (the home kept
 *     it in the copyset, so the home's page stayed write-protected);
 *  4. pages homed on node 1, written there: node 0, which holds no copy, is
 *     the root (it fetches them first); everyone reads without faults;
 *  5. a range that starts and ends inside pages (partial first and last
 *     page): all of the pages it touches are valid afterwards;
 *  6. a cyclic allocation (the receive layout alternates between the
 *     system view and the scratch slots of home pages);
 *  7. after a broadcast, a write under a lock reaches the next holder of
 *     the lock (lock-based invalidation of broadcast copies);
 *  8. the home keeps trapping its writes to pages whose only other copies
 *     came from the broadcast (the copyset the broadcast set);
 *  9. pages PREFETCHED (valid, still PROT_NONE) at the root and at the
 *     receivers when the broadcast starts: they are valid copies, not a sign
 *     of another thread at work (dsm_bcast used to stop the job on them);
 * 10. the root (the last node, not 0) homes the pages and the others
 *     write words of them and release a lock right after leaving the
 *     broadcast, while the root may still be in it: no such write is lost
 *     (the root used to broadcast from its master copy, and MPICH's default
 *     broadcast on one host, sched_smp, sends a root other than 0 to local
 *     rank 0 and broadcasts from there to everyone, the root included: the
 *     older words came back over the diffs applied meanwhile).
 */
#include "mpitest.h"

static int me, n;
static size_t ps;

static uint64_t val(int round, size_t i)
{
    return ((uint64_t)round << 48) ^ (i * 0x9e3779b97f4a7c15ULL);
}

static uint64_t read_faults(void)
{
    struct dsm_stats s;
    dsm_stats_get(&s);
    return s.read_faults;
}

/* Every word of w[0..words) must be val(round, i); with no_faults, reading
 * them must not fault.  Ends with a barrier: nobody writes before every node
 * has checked. */
static void expect_all(const char *what, const uint64_t *w, size_t words, int round,
                       int no_faults)
{
    uint64_t f0 = read_faults();
    for (size_t i = 0; i < words; i++)
        mt_expect_u64(what, &w[i], val(round, i));
    uint64_t f = read_faults() - f0;
    if (no_faults && f)
        mt_error("%s: %llu read fault(s) after dsm_bcast; every page should have been "
                 "a valid copy", what, (unsigned long long)f);
    mt_check_point(what);
    dsm_barrier();
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    me = dsm_node_id();
    n = dsm_node_count();
    ps = dsm_page_size();

    size_t pages = 3 * (size_t)n + 1, bytes = pages * ps, words = bytes / 8;
    uint64_t *a = mt_malloc_home(bytes, DSM_HOME_BLOCK, 0);
    int round = 1;

    /* 1 and 2, 3 for every root. */
    for (int r = 0; r < n; r++, round += 3) {
        if (me == r)
            for (size_t i = 0; i < words; i++)
                a[i] = val(round, i);
        dsm_bcast(a, bytes, r);
        expect_all("1: data after dsm_bcast", a, words, round, 1);

        /* 2: each home writes its own pages. */
        for (size_t i = 0; i < words; i++)
            if (dsm_home_of(&a[i]) == me)
                a[i] = val(round + 1, i);
        dsm_barrier();
        expect_all("2: homes' writes after dsm_bcast and a barrier", a, words, round + 1, 0);

        /* 3: the node after the home writes word 0 of each page. */
        dsm_bcast(a, bytes, (r + 1) % n);
        expect_all("3a: second dsm_bcast", a, words, round + 1, 1);
        for (size_t p = 0; p < pages; p++) {
            size_t i = p * ps / 8;
            if ((dsm_home_of(&a[i]) + 1) % n == me)
                a[i] = val(round + 2, i);
        }
        dsm_barrier();
        for (size_t i = 0; i < words; i++)
            mt_expect_u64("3: a non-home write after dsm_bcast", &a[i],
                          val(i % (ps / 8) == 0 ? round + 2 : round + 1, i));
        mt_check_point("3: a non-home write after dsm_bcast");
        dsm_barrier();
        /* 3b: the homes write word 1 of each page.  The writer of step 3
         * kept its copy (sole writer); only if the broadcast put it in the
         * copyset does the home still trap its writes and invalidate it. */
        for (size_t p = 0; p < pages; p++) {
            size_t i = p * ps / 8 + 1;
            if (dsm_home_of(&a[i]) == me)
                a[i] = val(round + 2, i);
        }
        dsm_barrier();
        for (size_t i = 0; i < words; i++)
            mt_expect_u64("3b: a home write after a non-home write", &a[i],
                          val(i % (ps / 8) <= 1 ? round + 2 : round + 1, i));
        mt_check_point("3b: a home write after a non-home write");
        dsm_barrier();
    }

    /* 4: the root neither homes nor holds the pages. */
    uint64_t *b = mt_malloc_home(4 * ps, DSM_HOME_NODE, 1);
    if (me == 1)
        for (size_t i = 0; i < 4 * ps / 8; i++)
            b[i] = val(round, i);
    dsm_barrier();
    dsm_bcast(b, 4 * ps, 0);
    expect_all("4: pages the root did not hold", b, 4 * ps / 8, round, 1);
    int r4 = round++;

    /* 5: a partial first and last page. */
    dsm_barrier();
    if (me == n - 1)
        for (size_t i = 0; i < words; i++)
            a[i] = val(round, i);
    size_t off = 100, len = 2 * ps;      /* touches pages 0, 1 and 2 */
    dsm_bcast((char *)a + off, len, n - 1);
    expect_all("5: every page a partial range touches", a, 3 * ps / 8, round, 1);
    round++;

    /* 6: cyclic homes. */
    size_t cp = 4 * (size_t)n;
    uint64_t *c = mt_malloc_home(cp * ps, DSM_HOME_CYCLIC, 0);
    if (me == 0)
        for (size_t i = 0; i < cp * ps / 8; i++)
            c[i] = val(round, i);
    dsm_bcast(c, cp * ps, 0);
    expect_all("6: cyclic homes", c, cp * ps / 8, round, 1);
    round++;

    /* 7: lock hand-over after a broadcast, no barrier in between: node k
     * waits (under lock 0) until word 1 of b says it is its turn, adds k+1
     * to word 0 of every page, and passes the turn on.  Every node starts
     * from a broadcast copy, so each acquire must invalidate it. */
    if (me == 1)
        b[1] = 0;
    dsm_bcast(b, 4 * ps, 1);
    for (;;) {
        dsm_lock_acquire(0);
        uint64_t turn = *(volatile uint64_t *)&b[1];
        if (turn == (uint64_t)me) {
            for (size_t p = 0; p < 4; p++)
                b[p * ps / 8] += (uint64_t)me + 1;
            b[1] = turn + 1;
        }
        dsm_lock_release(0);
        if (turn >= (uint64_t)me)
            break;
    }
    dsm_barrier();
    for (size_t p = 0; p < 4; p++)
        mt_expect_u64("7: lock-ordered writes after dsm_bcast", &b[p * ps / 8],
                      val(r4, p * ps / 8) + (uint64_t)n * (n + 1) / 2);
    mt_expect_u64("7: the turn word", &b[1], (uint64_t)n);
    mt_check_point("7: lock-ordered writes after dsm_bcast");

    /* 8: copies that only the broadcast made.  Home 0 fills fresh pages
     * (nobody fetches them), broadcasts them, the last node writes word 0
     * of each page (it keeps its copy as sole writer), then the home writes
     * word 1.  The home still traps that write only because the broadcast
     * put the last node into the copyset; otherwise the page would have gone
     * back to untracked at the barrier, and the last node's copy would miss
     * the home's write. */
    uint64_t *e = mt_malloc_home(4 * ps, DSM_HOME_NODE, 0);
    size_t ew = 4 * ps / 8;
    if (me == 0)
        for (size_t i = 0; i < ew; i++)
            e[i] = val(round, i);
    dsm_barrier();
    dsm_bcast(e, 4 * ps, 0);
    if (me == n - 1)
        for (size_t p = 0; p < 4; p++)
            e[p * ps / 8] = val(round + 1, p * ps / 8);
    dsm_barrier();
    if (me == 0)
        for (size_t p = 0; p < 4; p++)
            e[p * ps / 8 + 1] = val(round + 1, p * ps / 8 + 1);
    dsm_barrier();
    for (size_t i = 0; i < ew; i++)
        mt_expect_u64("8: a home write after the sole writer of a broadcast copy", &e[i],
                      val(i % (ps / 8) <= 1 ? round + 1 : round, i));
    mt_check_point("8: a home write after the sole writer of a broadcast copy");
    dsm_barrier();

    /* 9: PREFETCHED pages at the root (node 0) and at every receiver but
     * the home (node 1).  Nobody writes them, so the barrier that drains the
     * prefetches leaves them PREFETCHED. */
    round += 2;
    uint64_t *f = mt_malloc_home(4 * ps, DSM_HOME_NODE, 1);
    size_t fw = 4 * ps / 8;
    if (me == 1)
        for (size_t i = 0; i < fw; i++)
            f[i] = val(round, i);
    dsm_barrier();
    if (me != 1 && dsm_prefetch(f, 4) != 0)
        mt_error("9: dsm_prefetch failed");
    dsm_barrier();
    dsm_bcast(f, 4 * ps, 0);
    expect_all("9: pages PREFETCHED at the root and the receivers", f, fw, round, 1);
    /* The same with the home as the root. */
    if (me != 1)
        dsm_prefetch(f, 4);
    dsm_barrier();
    dsm_bcast(f, 4 * ps, 1);
    expect_all("9: pages PREFETCHED at the receivers, home root", f, fw, round, 1);
    dsm_free(f);

    /* 10: node n-1 homes and broadcasts 2 pages; right after, node k <
     * n-1 writes word k+1 of each page and releases a lock, which sends its
     * diff to node n-1 at once, maybe while its broadcast still runs.  Many
     * times, as the window is a matter of timing. */
    size_t gp = 2, gw = gp * ps / 8;
    int gr = n - 1;
    uint64_t *g = mt_malloc_home(gp * ps, DSM_HOME_NODE, gr);
    for (int it = 0; it < 40; it++) {
        round++;
        if (me == gr)
            for (size_t i = 0; i < gw; i++)
                g[i] = val(round, i);
        dsm_barrier();
        dsm_bcast(g, gp * ps, gr);
        if (me != gr) {
            for (size_t p = 0; p < gp; p++)
                g[p * ps / 8 + (size_t)me + 1] = val(round + 1, p * ps / 8 + (size_t)me + 1);
            dsm_lock_acquire(me);
            dsm_lock_release(me);
        }
        dsm_barrier();
        for (size_t i = 0; i < gw; i++) {
            size_t k = i % (ps / 8);
            mt_expect_u64("10: a write released while the home broadcasts", &g[i],
                          val(k >= 1 && k < (size_t)n ? round + 1 : round, i));
        }
        mt_check_point("10: a write released while the home broadcasts");
        dsm_barrier();
        round++;
    }
    dsm_free(g);

    dsm_free(e);
    dsm_free(c);
    dsm_free(b);
    dsm_free(a);
    mt_note("ok: %d nodes", n);
    mt_finalize();
    return 0;
}
