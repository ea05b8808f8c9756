/*
 * flush_flags.c - dsm_flush(): data handed from rank to rank through flags,
 * with no barrier and no lock between the write and the read.
 *
 * In round k the owner, rank k % N, waits until every rank has acknowledged
 * round k-1, writes a block of values derived from k, calls dsm_flush(),
 * sets the turn word to k + 1 (and its own ack) and calls dsm_flush() again.
 * Every other rank calls dsm_flush() and reads the turn word until it is
 * k + 1, and calls dsm_flush() once more (the acquire that orders the flag
 * before the data, as the flush after a flag loop does in OpenMP); then it
 * checks the block and acknowledges the round in its own word of the ack page
 * (every rank writes a word of that one page: diffs of several writers).
 * The block spans pages with cyclic homes, so every reader holds copies of
 * it from the round before, homed on the owner, on itself and on others;
 * a flush that did not drop them shows a value of an earlier round, and one
 * that did not send the owner's writes home shows the turn never changing
 * (the wait gives up after MPITEST_WAIT_S seconds, default 60, and fails).
 *
 * Run by run-mpi-test.sh with 2, 3 and 4 ranks, for each DSM_COMM variant.
 * MPITEST_ROUNDS overrides the number of rounds.
 */
#include "mpitest.h"

#define BLOCK_PAGES 3

static uint32_t value(int round, size_t j)
{
    return (uint32_t)(round + 1) << 20 ^ (uint32_t)j ^ 0x5A000000u;
}

/* Flush and read *word until cond(*word) holds or the deadline passes. */
static void wait_for(volatile uint32_t *word, uint32_t want, int at_least,
                     double limit, const char *what, int round)
{
    double t0 = dsm_wtime();
    for (;;) {
        dsm_flush();
        uint32_t v = *word;
        if (at_least ? v >= want : v == want)
            return;
        if (dsm_wtime() - t0 > limit)
            mt_fail("round %d: %s is %u after %.0f s of flushes, expected %s%u",
                    round, what, v, limit, at_least ? ">= " : "", want);
    }
}

int main(int argc, char **argv)
{
    int rounds, me, n;
    size_t ps, words;
    uint32_t *block, *ctl;
    char what[64];

    mt_init(&argc, &argv);
    rounds = (int)mt_param("MPITEST_ROUNDS", 100);
    double limit = (double)mt_param("MPITEST_WAIT_S", 60);
    me = dsm_node_id();
    n = dsm_node_count();
    ps = dsm_page_size();

    block = mt_malloc_home(BLOCK_PAGES * ps, DSM_HOME_CYCLIC, 0);
    /* Two control pages homed on the last rank: the turn word, and the
     * ack page with one word per rank. */
    ctl = mt_malloc_home(2 * ps, DSM_HOME_NODE, n - 1);
    volatile uint32_t *turn = ctl;
    volatile uint32_t *ack = ctl + ps / sizeof *ctl;
    words = BLOCK_PAGES * ps / sizeof *block;
    mt_note("%d ranks, %d rounds, block of %zu words", n, rounds, words);
    dsm_barrier();

    for (int round = 0; round < rounds; round++) {
        int owner = round % n;

        if (me == owner) {
            for (int r = 0; r < n; r++)
                if (r != me) {
                    snprintf(what, sizeof what, "rank %d's ack", r);
                    wait_for(&ack[r], (uint32_t)round, 1, limit, what, round);
                }
            dsm_flush();
            for (size_t j = 0; j < words; j++)
                block[j] = value(round, j);
            dsm_flush();
            *turn = (uint32_t)round + 1;
            ack[me] = (uint32_t)round + 1;
            dsm_flush();
        } else {
            wait_for(turn, (uint32_t)round + 1, 0, limit, "the turn word", round);
            dsm_flush();    /* the acquire after the flag, before the data */
            snprintf(what, sizeof what, "round %d, owner %d", round, owner);
            for (size_t j = 0; j < words; j++)
                mt_expect_u32(what, &block[j], value(round, j));
            mt_check_point(what);
            ack[me] = (uint32_t)round + 1;
            dsm_flush();
        }
    }

    struct dsm_stats st;
    dsm_stats_get(&st);
    if (st.flushes < (uint64_t)rounds)
        mt_fail("dsm_stats: %" PRIu64 " flushes counted, at least %d made",
                st.flushes, rounds);
    dsm_barrier();
    dsm_free(ctl);
    dsm_free(block);
    mt_finalize();
    return 0;
}
