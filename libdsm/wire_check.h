/*
 * wire_check.h - the validator every received control message goes through
 * before anything acts on it (wire_check.c).
 *
 * It is a pure function of the message bytes and a few static limits of the
 * job (ranks, pages, page size, locks), so that the unit tests and the fuzzer
 * (tests/fuzz) can run it without MPI.  What it accepts is safe to decode:
 * every page number is a page of the region, every diff run and atomic
 * operand lies inside one page, every lock id is a lock, every rank is a
 * rank.  What depends on the protocol state at the time the message is acted
 * on (is the page homed here, is that waiter waiting, does the sender hold
 * the lock) is checked by the handlers in protocol.c, barrier.c, lock.c and
 * atomic.c.
 */
#ifndef DSM_WIRE_CHECK_H
#define DSM_WIRE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "dsm_pure.h"
#include "wire.h"

struct dsm_wire_limits {
    int      rank;          /* this node */
    int      nodes;         /* ranks in the job, 1..DSM_MAX_NODES */
    int      tree_flat;     /* the barrier tree is flat (dsm_pure.h, dsm__tree_*) */
    size_t   npages;        /* coherence pages in the region */
    size_t   page_size;     /* bytes, a multiple of DSM_DIFF_CHUNK */
    uint32_t max_locks;     /* lock ids go from 0 to max_locks - 1 */
    uint32_t max_aop;       /* the largest enum dsm_aop value */
    /* Operations from pair_fn0 up are registered ones: bit k of pair_fns
     * says whether pair_fn0 + k is (pair_fn0 0: none are). */
    uint32_t pair_fn0;
    uint32_t pair_fns;
};

/* Check the message of count bytes at msg, received from MPI rank mpi_src.
 * Returns 0 when it may be decoded, or -DSM_EPROTO with what is wrong in why
 * (one line, no trailing newline). */
DSM_HIDDEN int dsm__wire_check(const struct dsm_wire_limits *l, const void *msg,
                               size_t count, int mpi_src, char *why, size_t whylen);

#endif /* DSM_WIRE_CHECK_H */
