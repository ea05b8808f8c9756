/*
 * barrier_carry.c - node 0's bytes in a barrier's release
 * (dsm__barrier_carry, what the OpenMP shim's fork uses to hand the
 * region's descriptor to the other ranks without a page fault).
 *
 * Rounds of: rank 0 carries a pattern of a length that changes with the
 * round (0, 1, ... up to DSM_BARRIER_CARRY_MAX bytes), every rank checks
 * the length returned and every byte; on some rounds rank 0 calls a plain
 * dsm_barrier instead while the others call dsm__barrier_carry, which must
 * then return 0 and leave the buffer as it was.  On some rounds every rank
 * writes its own pages, 9000 in all, so that the release's notices take
 * two messages and the carried bytes ride on the last (the writes checked
 * after the barrier as any).  Linked with libdsm's internals for
 * dsm__barrier_carry.  Run with 2, 3 and 4 ranks, every transport.
 */
#include <string.h>

#include "mpitest.h"

size_t dsm__barrier_carry(const void *send, void *recv, size_t len);

#define CARRY_MAX 1024           /* DSM_BARRIER_CARRY_MAX */

static unsigned char pattern(int round, size_t i)
{
    return (unsigned char)(round * 31 + i * 7 + (i >> 8));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rounds = (int)mt_param("MPITEST_ROUNDS", 40);
    int me = dsm_node_id(), n = dsm_node_count();
    size_t ps = dsm_page_size(), w = ps / sizeof(uint32_t);
    (void)me;
    /* Enough pages that a release's notices need several messages when
     * every rank writes all of them: 64 KiB / 8 bytes per notice. */
    size_t npages = 9000;
    uint32_t *a = mt_malloc_home(npages * ps, DSM_HOME_CYCLIC, 0);
    unsigned char send[CARRY_MAX], recv[CARRY_MAX];

    mt_note("%d ranks, %d rounds, %zu pages", n, rounds, npages);
    for (int round = 0; round < rounds; round++) {
        size_t len = round % 4 == 3 ? CARRY_MAX : (size_t)(round * 37) % (CARRY_MAX + 1);
        int plain = round % 5 == 4;      /* rank 0 sends nothing this time */
        int many = round % 8 == 1;       /* the notices take several messages */
        for (size_t i = 0; i < len; i++)
            send[i] = pattern(round, i);
        memset(recv, 0xA5, sizeof recv);
        if (many)
            for (size_t p = (size_t)me; p < npages; p += (size_t)n)
                a[p * w] = (uint32_t)(round * 100 + (int)(p % (size_t)n));
        size_t got;
        if (plain && me == 0) {
            dsm_barrier();
            got = 0;
        } else {
            got = dsm__barrier_carry(me == 0 ? send : NULL, recv, len);
        }
        size_t want = plain ? 0 : len;
        if (got != want)
            mt_fail("round %d: %zu bytes arrived, %zu sent", round, got, want);
        for (size_t i = 0; i < sizeof recv; i++) {
            unsigned char e = i < want ? pattern(round, i) : 0xA5;
            if (recv[i] != e && !(plain && me == 0))
                mt_error("round %d: carried byte %zu is %#x, expected %#x", round, i,
                         recv[i], e);
        }
        if (many)
            for (size_t p = 0; p < npages; p += 61)
                mt_expect_u32("pages written with the carry", &a[p * w],
                              (uint32_t)(round * 100 + (int)(p % (size_t)n)));
        mt_check_point("carried bytes");
        dsm_barrier();
    }
    dsm_free(a);
    mt_finalize();
    return 0;
}
