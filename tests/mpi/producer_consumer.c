/*
 * producer_consumer.c - barrier visibility, round after round.
 *
 * In round k the producer, rank k % N, writes a block of values derived from
 * k; after a barrier every other rank checks the whole block; a second
 * barrier ends the round.  The block starts in the middle of a page and spans
 * several pages with cyclic homes, so each round the producer writes pages
 * homed on itself and on others, and each consumer must drop the copies it
 * read in the previous round (write notices) and fetch them again.  A missed
 * invalidation shows up as a value of an earlier round.
 *
 * Run by run-mpi-test.sh with 2, 3 and 4 ranks, for each DSM_COMM variant.
 * MPITEST_ROUNDS overrides the number of rounds.
 */
#include "mpitest.h"

#define BLOCK_PAGES 4

static uint32_t value(int round, size_t j)
{
    return (uint32_t)(round + 1) << 20 ^ (uint32_t)j ^ 0xA5000000u;
}

int main(int argc, char **argv)
{
    int rounds, me, n;
    size_t ps, words;
    uint32_t *mem, *block;
    char what[64];

    mt_init(&argc, &argv);
    rounds = (int)mt_param("MPITEST_ROUNDS", 200);
    me = dsm_node_id();
    n = dsm_node_count();
    ps = dsm_page_size();

    /* BLOCK_PAGES + 1 pages; the block covers half of the first, the
     * middle ones and half of the last. */
    mem = mt_malloc_home((BLOCK_PAGES + 1) * ps, DSM_HOME_CYCLIC, 0);
    block = mem + ps / 2 / sizeof *mem;
    words = BLOCK_PAGES * ps / sizeof *mem;
    mt_note("%d ranks, %d rounds, block of %zu words", n, rounds, words);

    for (int round = 0; round < rounds; round++) {
        int producer = round % n;

        if (me == producer)
            for (size_t j = 0; j < words; j++)
                block[j] = value(round, j);
        dsm_barrier();
        if (me != producer) {
            snprintf(what, sizeof what, "round %d, producer %d",
                     round, producer);
            for (size_t j = 0; j < words; j++)
                mt_expect_u32(what, &block[j], value(round, j));
            /* The words around the block are never written. */
            mt_expect_u32("word before the block", block - 1, 0);
            mt_expect_u32("word after the block", block + words, 0);
            mt_check_point(what);
        }
        dsm_barrier();
    }

    dsm_free(mem);
    mt_finalize();
    return 0;
}
