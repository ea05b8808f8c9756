/*
 * barrier_diffs.c - diffs that reach their home after the barrier's release.
 *
 * At a plain barrier a node sends its diffs without waiting for acks
 * (DSM_BARRIER_DIFFS=unacked, the default; barrier.c): the release may then
 * reach a home before a third node's diffs to that home, and the home must
 * not end the barrier (read its own pages, serve requests of nodes already
 * past it) until they are applied.  Here every rank writes its own words of
 * every page homed elsewhere, many pages of every home, so that each
 * sender's diffs to a home take several messages; after the barrier each
 * home reads its own pages at once (no fault, no message: only the wait
 * keeps it right), then every rank reads every page.  With 3 and 4 ranks,
 * the writer, the master (rank 0) and the home are different ranks, which is
 * where a release can overtake diffs; with 2 ranks MPI's order between two
 * ranks already orders them.  Values change with the round, so a diff not
 * yet applied shows as the previous round's value.  A second phase does the
 * same with only one writer per page (the writer keeps its copy), and the
 * pages of one home written by every other rank in turn; a third has one
 * late writer of whole pages while everyone else waits in the barrier.
 * MPI over shared memory delivers a diff sent before a BARRIER_ENTER before
 * the release that follows it, so the three phases are run again with
 * libdsm's test switch dsm__barrier_late_diffs, which holds the last chunk
 * of each sender's diffs until the sender has its release: without the
 * homes' wait that run reads old words (checked: removing the wait fails
 * it on 3 and 4 ranks).  Linked with libdsm's internals for that switch.
 *
 * Run by run-mpi-test.sh with 2, 3 and 4 ranks, for each DSM_COMM variant
 * (under DSM_COMM=rma the barrier's diffs are acked: the same checks hold).
 * MPITEST_ROUNDS overrides the number of rounds.
 */
#include "mpitest.h"

/* libdsm's internal switch (writeout.c): hold the last diff chunks until
 * the release has arrived. */
extern int dsm__barrier_late_diffs;

#define PAGES_PER_HOME 12

static uint32_t value(int round, size_t page, size_t word)
{
    return (uint32_t)((round + 1) * 0x9E3779B1u) ^ (uint32_t)(page * 0x85EBCA6Bu) ^
           (uint32_t)(word * 2654435761u);
}

/* Word w of a page belongs to rank w % n (every rank writes every page). */
static void check_all(const char *what, uint32_t *a, size_t npages, size_t w, int round,
                      int home_first)
{
    int me = dsm_node_id(), n = dsm_node_count();
    /* The home's own pages first, before anything can fault: a home that
     * left the barrier before the others' diffs arrived reads old words. */
    for (int pass = home_first ? 0 : 1; pass < 2; pass++)
        for (size_t p = 0; p < npages; p++) {
            if ((pass == 0) != ((int)(p % (size_t)n) == me))
                continue;
            for (size_t i = 0; i < w; i++)
                mt_expect_u32(what, &a[p * w + i], value(round, p, i));
        }
    mt_check_point(what);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rounds = (int)mt_param("MPITEST_ROUNDS", 20);
    int me = dsm_node_id(), n = dsm_node_count();
    size_t ps = dsm_page_size(), w = ps / sizeof(uint32_t);
    size_t npages = (size_t)n * PAGES_PER_HOME;
    char what[96];

    /* Cyclic: page p is homed on node p % n. */
    uint32_t *a = mt_malloc_home(npages * ps, DSM_HOME_CYCLIC, 0);
    mt_note("%d ranks, %zu pages of %zu bytes, %d rounds", n, npages, ps, rounds);

  for (int late = 0; late < 2; late++) {
    /* The second time, the last chunk of each sender's diffs to each home
     * leaves only once the sender has its release: every home gets the
     * release first and must wait. */
    dsm__barrier_late_diffs = late;
    mt_note("%s", late ? "diffs held until the release" : "diffs sent before entering");
    /* Phase 1: every rank writes its words of every page. */
    for (int round = 0; round < rounds; round++) {
        for (size_t p = 0; p < npages; p++)
            for (size_t i = (size_t)me; i < w; i += (size_t)n)
                a[p * w + i] = value(round, p, i);
        dsm_barrier();
        snprintf(what, sizeof what, "phase 1 round %d", round);
        check_all(what, a, npages, w, round, 1);
        dsm_barrier();
    }

    /* Phase 2: one writer per page, not its home (round-robin over the
     * others), all of it; the home and a third rank read at once. */
    for (int round = 0; round < rounds; round++) {
        for (size_t p = 0; p < npages; p++) {
            int home = (int)(p % (size_t)n);
            int writer = (home + 1 + (int)((p / (size_t)n + (size_t)round) %
                                           (size_t)(n - 1))) % n;
            if (writer != me)
                continue;
            for (size_t i = 0; i < w; i++)
                a[p * w + i] = value(round + rounds, p, i);
        }
        dsm_barrier();
        snprintf(what, sizeof what, "phase 2 round %d", round);
        check_all(what, a, npages, w, round + rounds, 1);
        dsm_barrier();
    }

    /* Phase 3: the last rank alone writes every word of rank 1's pages (rank
     * 0's with 2 ranks) while the others enter the barrier at once: the
     * writer's diffs (several messages) are the last thing the barrier
     * waits for, and with 3 or more ranks its BARRIER_ENTER to rank 0 and
     * rank 0's release to the home race them. */
    int home3 = n > 2 ? 1 : 0;
    for (int round = 0; round < rounds; round++) {
        int r3 = round + 2 * rounds;
        if (me == n - 1)
            for (size_t p = (size_t)home3; p < npages; p += (size_t)n)
                for (size_t i = 0; i < w; i++)
                    a[p * w + i] = value(r3, p, i);
        dsm_barrier();
        snprintf(what, sizeof what, "phase 3 round %d", round);
        for (size_t p = (size_t)home3; p < npages; p += (size_t)n)
            for (size_t i = 0; i < w; i++)
                mt_expect_u32(what, &a[p * w + i], value(r3, p, i));
        mt_check_point(what);
        dsm_barrier();
    }
  }

    dsm_free(a);
    mt_finalize();
    return 0;
}
