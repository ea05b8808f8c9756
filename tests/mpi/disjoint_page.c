/*
 * disjoint_page.c - multiple writers of one page.
 *
 * Every rank writes its own 4-byte words, or its own bytes, of ONE shared
 * page in the same interval; after a barrier every rank must see the writes
 * of all ranks.  This is what the twin/diff protocol is for: a node that sent
 * its whole page instead of a diff, a diff that carried a byte its writer did
 * not change, or a home that let one diff overwrite another, loses the other
 * ranks' writes.  Four layouts:
 *   interleaved:       rank r writes the words i with i % N == r (every
 *                      run of the diff is one word long, neighbours belong
 *                      to others);
 *   slices:            rank r writes the contiguous words [r*W/N, (r+1)*W/N);
 *   bytes interleaved: rank r writes the bytes i with i % N == r, so every
 *                      word has bytes of several ranks;
 *   byte slices:       rank r writes the bytes [r*P/N, (r+1)*P/N), whose
 *                      ends fall inside words when 4N does not divide P.
 * In some rounds a rank writes only part of its words, so the words it skips
 * must keep their value from an earlier round although other ranks' copies
 * of the page were invalidated in between.  The page used changes with the
 * round, so that each node in turn is the home, writing its own page.
 *
 * Run by run-mpi-test.sh with 2, 3 and 4 ranks, for each DSM_COMM variant.
 * MPITEST_ROUNDS overrides the number of rounds.
 */
#include "mpitest.h"

enum layout { INTERLEAVED, SLICES, BYTES_INTERLEAVED, BYTE_SLICES };

static const char *layout_name[] = { "interleaved", "slices", "bytes interleaved",
                                     "byte slices" };

/* Bytes a layout writes at a time. */
static size_t unit_of(enum layout lay)
{
    return lay == INTERLEAVED || lay == SLICES ? sizeof(uint32_t) : 1;
}

/* Which rank owns unit i of a page of w units with n ranks. */
static int owner(enum layout lay, size_t i, size_t w, int n)
{
    if (lay == INTERLEAVED || lay == BYTES_INTERLEAVED)
        return (int)(i % (size_t)n);
    /* Slices [r*w/n, (r+1)*w/n): find r from the top. */
    for (int r = n - 1; r > 0; r--)
        if (i >= (size_t)r * w / (size_t)n)
            return r;
    return 0;
}

/* Whether the owner writes unit i in this round: all words in even rounds,
 * about two in three in odd rounds. */
static int written(size_t i, int round)
{
    return round % 2 == 0 || (i / 2 + (size_t)round) % 3 != 0;
}

static uint32_t value(int round, size_t i, enum layout lay)
{
    return (uint32_t)((round + 1) * 0x9E3779B1u) ^ (uint32_t)(i * 2654435761u)
           ^ (uint32_t)lay << 31;
}

int main(int argc, char **argv)
{
    int rounds, me, n;
    size_t ps, w;
    uint32_t *pages, *expect;
    char what[96];

    mt_init(&argc, &argv);
    rounds = (int)mt_param("MPITEST_ROUNDS", 12);
    me = dsm_node_id();
    n = dsm_node_count();
    ps = dsm_page_size();
    w = ps / sizeof(uint32_t);

    /* One page per node, cyclic: page k is homed on node k. */
    pages = mt_malloc_home((size_t)n * ps, DSM_HOME_CYCLIC, 0);
    for (int k = 0; k < n; k++)
        if (dsm_home_of((char *)pages + (size_t)k * ps) != k)
            mt_fail("page %d of a cyclic allocation is homed on %d, "
                    "expected %d", k,
                    dsm_home_of((char *)pages + (size_t)k * ps), k);
    expect = calloc((size_t)n * w, sizeof *expect);
    if (expect == NULL)
        mt_fail("out of private memory");
    mt_note("%d ranks, page %zu bytes, %d rounds per layout", n, ps, rounds);

    for (int lay = INTERLEAVED; lay <= BYTE_SLICES; lay++) {
        size_t unit = unit_of(lay), units = ps / unit;
        for (int round = 0; round < rounds; round++) {
            int k = round % n;
            unsigned char *page = (unsigned char *)(pages + (size_t)k * w);
            unsigned char *exp = (unsigned char *)(expect + (size_t)k * w);

            for (size_t i = 0; i < units; i++) {
                if (!written(i, round))
                    continue;
                uint32_t v = value(round, i, lay);
                memcpy(exp + i * unit, &v, unit);
                if (owner(lay, i, units, n) == me)
                    memcpy(page + i * unit, &v, unit);
            }
            dsm_barrier();

            /* Check every page, not only the one written: the others
             * must not have changed. */
            for (int q = 0; q < n; q++) {
                snprintf(what, sizeof what,
                         "%s round %d, page %d (written: page %d)",
                         layout_name[lay], round, q, k);
                for (size_t i = 0; i < w; i++)
                    mt_expect_u32(what, pages + (size_t)q * w + i,
                                  expect[(size_t)q * w + i]);
            }
            mt_check_point(layout_name[lay]);
            /* Nobody writes the next round while another rank reads. */
            dsm_barrier();
        }
    }

    dsm_free(pages);
    free(expect);
    mt_finalize();
    return 0;
}
