/*
 * barrier_tree.c - the barrier's messages follow a binomial tree
 * (barrier_tree, DSM_BARRIER=tree), or all go through rank 0
 * (barrier_flat, built from this file with -DFLAT, DSM_BARRIER=flat: the
 * shape chosen where ranks outnumber CPUs).
 *
 * In an empty barrier each rank other than 0 sends one entry to its parent
 * and receives one release from it, and every rank receives one entry from
 * each child and sends each child one release (libdsm/barrier_tree.c): rank
 * 0 handles ceil(log2 N) messages of each kind per barrier instead of N - 1,
 * no rank more than ceil(log2 N) + 1, the job 2(N - 1) in all, and the
 * longest chain from the last arrival to the last departure is at most
 * 2 ceil(log2 N) messages (up the tree, then down it with the largest
 * subtree served first).  Checked from the library's own message counts
 * (dsm_stats_get) over many barriers, whatever the timing; then, with
 * written pages, every rank still sees every other rank's writes (the
 * notices merged on the way up).  Run with 2 to 16 ranks.
 *
 * The expected counts are computed here from the tree's definition, not
 * taken from libdsm: rank r's parent clears r's lowest set bit, its
 * children are r + 2^k below that bit (every 2^k < N for rank 0).  Each
 * program sets DSM_BARRIER itself: auto would choose flat on a host with
 * fewer CPUs than ranks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#ifdef FLAT
#define SHAPE "flat"
#else
#define SHAPE "tree"
#endif

static int children(int r, int n)
{
#ifdef FLAT
    return r ? 0 : n - 1;
#endif
    int span = r ? (r & -r) : n, c = 0;
    for (int d = 1; d < span && r + d < n; d <<= 1)
        c++;
    return c;
}

static int ceil_log2(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

/* The longest chain of messages from the moment the last rank enters until
 * the last rank leaves, along the tree: up from the deepest rank, then down
 * to each rank, a parent's k-th release (largest subtree first) leaving k
 * sends after its first. */
static int chain_down(int r, int n, int at)
{
    int worst = at, nc = children(r, n);
    for (int k = 0; k < nc; k++) {
#ifdef FLAT
        int child = 1 + k;
#else
        int child = r + (1 << (nc - 1 - k));
#endif
        int c = chain_down(child, n, at + k + 1);
        if (c > worst)
            worst = c;
    }
    return worst;
}

static int depth(int r)
{
#ifdef FLAT
    return r ? 1 : 0;
#endif
    return __builtin_popcount((unsigned)r);
}

int main(int argc, char **argv)
{
    if (setenv("DSM_BARRIER", SHAPE, 1) != 0)
        mt_fail("setenv: %s", strerror(errno));
    mt_init(&argc, &argv);
    int rounds = (int)mt_param("MPITEST_ROUNDS", 50);
    int me = dsm_node_id(), n = dsm_node_count();
    int nc = children(me, n), up = me ? 1 : 0;
    struct dsm_stats st;

    /* The tree's bound, from its shape: the deepest rank's entry travels
     * depth hops up, the release then reaches the last rank. */
    int deepest = 0;
    for (int r = 0; r < n; r++)
        if (depth(r) > deepest)
            deepest = depth(r);
    int chain = deepest + chain_down(0, n, 0);
#ifndef FLAT
    if (chain > 2 * ceil_log2(n))
        mt_fail("the tree's longest chain is %d messages, more than 2 ceil(log2 %d) = %d",
                chain, n, 2 * ceil_log2(n));
#endif
    mt_note("%s, %d ranks: rank 0 has %d children, longest chain %d (2 ceil(log2 N) = %d)",
            SHAPE, n, children(0, n), chain, 2 * ceil_log2(n));

    dsm_barrier();
    dsm_stats_reset();
    MPI_Barrier(MPI_COMM_WORLD);     /* every reset before any entry counts */
    for (int i = 0; i < rounds; i++)
        dsm_barrier();
    if (dsm_stats_get(&st) != 0)
        mt_fail("dsm_stats_get failed");
    /* Before any rank enters the next DSM barrier, whose entry would count
     * here (an MPI barrier sends no DSM message). */
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t want = (uint64_t)rounds * (uint64_t)(nc + up);
    if (st.msgs_sent != want || st.msgs_received != want)
        mt_fail("%d empty barriers: sent %" PRIu64 " and received %" PRIu64 " messages, "
                "expected %" PRIu64 " each (%d children%s)", rounds, st.msgs_sent,
                st.msgs_received, want, nc, up ? " and a parent" : "");
#ifndef FLAT
    if (nc + up > ceil_log2(n) + 1)
#else
    if (nc + up != (me ? 1 : n - 1))
#endif
        mt_fail("rank %d handles %d barrier messages of each kind, more than "
                "ceil(log2 %d) + 1", me, nc + up, n);

    /* Written pages: notices merged on the way up reach everyone. */
    size_t ps = dsm_page_size();
    uint32_t *a = mt_malloc_home((size_t)n * ps, DSM_HOME_CYCLIC, 0);
    size_t w = ps / sizeof *a;
    for (int round = 0; round < 10; round++) {
        /* Rank r writes word r of every page (several writers per page),
         * and the words beyond n of page (r + round) % n. */
        int mine = (me + round) % n;
        for (int p = 0; p < n; p++) {
            a[(size_t)p * w + (size_t)me] = (uint32_t)(round * 1000 + me * 10 + p);
            if (p == mine)
                for (size_t i = (size_t)n; i < w; i++)
                    a[(size_t)p * w + i] = (uint32_t)(round * 7 + i);
        }
        dsm_barrier();
        for (int p = 0; p < n; p++) {
            for (int r = 0; r < n; r++)
                mt_expect_u32("tree notices", &a[(size_t)p * w + (size_t)r],
                              (uint32_t)(round * 1000 + r * 10 + p));
            for (size_t i = (size_t)n; i < w; i += 97)
                mt_expect_u32("tree notices (page of one writer)", &a[(size_t)p * w + i],
                              (uint32_t)(round * 7 + i));
        }
        mt_check_point("tree notices");
        dsm_barrier();
    }
    dsm_free(a);
    mt_finalize();
    return 0;
}
