/*
 * dispatch.c - received control messages to the module that owns their
 * type.  Each module registers a handler for each of its types
 * (dsm__handler_register) from dsm__dispatch_init, at start-up, before the
 * transport posts its first receive; dsm__dispatch validates a message
 * (wire_check.c) and calls the handler of its type: one array index and one
 * indirect call a message.  Which module owns what:
 *
 *   protocol.c  PAGE_REQ, PREFETCH_REQ, DIFF       (the home's page service)
 *   writeout.c  DIFF_ACK, UPDATE_ACK               (acks of this node's flushes)
 *   flush.c     FLUSH_NOTICE
 *   ordered.c   UPDATE, UNHOLD
 *   barrier.c   BARRIER_ENTER, BARRIER_RELEASE
 *   lock.c      LOCK_REQ, LOCK_GRANT, LOCK_REL, LOCK_REL_ACK
 *   atomic.c    ATOMIC_REQ, ATOMIC_REPLY
 *   service.c   CALL_REQ, CALL_REPLY
 *
 * PAGE_REPLY is no message (pages travel on their own tag, comm.c) and has
 * no handler.
 *
 * Threads: dsm__dispatch_init in the thread that calls dsm_init, before the
 * communication thread starts (so the table is read-only afterwards and
 * needs no lock); dsm__dispatch, dsm__handle and every handler under the
 * progress token (comm/comm.c), one at a time.
 */
#include "dsm_internal.h"
#include "wire_check.h"

static dsm__handler_fn handlers[DSM_MSG_NTYPES];

void dsm__handler_register(enum dsm_msg_type type, dsm__handler_fn fn)
{
    if ((unsigned)type >= DSM_MSG_NTYPES || handlers[type])
        dsm__fatal("internal error: message type %u registered twice or out of range",
                   (unsigned)type);
    handlers[type] = fn;
}

void dsm__dispatch_init(void)
{
    dsm__protocol_handlers();
    dsm__writeout_handlers();
    dsm__flush_handlers();
    dsm__ordered_handlers();
    dsm__barrier_handlers();
    dsm__lock_handlers();
    dsm__atomic_handlers();
    dsm__service_handlers();
    dsm__liveness_handlers();
}

struct dsm_waiter *dsm__reply_waiter(const struct dsm_wire_hdr *h, enum dsm_wait_kind kind)
{
    struct dsm_waiter *w = dsm__waiter_at(h->waiter, kind);
    if (!w)
        dsm__fatal("malformed message from rank %d: type %u names waiter %u, "
                   "which is not waiting", h->src, h->type, h->waiter);
    return w;
}

void dsm__msg_malformed(const struct dsm_wire_hdr *h)
{
    dsm__fatal("malformed message from rank %d: type %u, id %u, length %u out of range",
               h->src, h->type, h->id, h->len);
}

void dsm__handle(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    /* h->type < DSM_MSG_NTYPES: dsm__wire_check accepted the message. */
    dsm__handler_fn fn = handlers[h->type];
    if (dsm__unlikely(!fn))
        /* Cannot happen: wire_check.c accepts only types that some module
         * registers at start-up (a new type needs both). */
        dsm__fatal("internal error: message type %u from rank %d passed validation but "
                   "no module handles it (dsm__dispatch_init registers none)",
                   h->type, h->src);
    fn(h, pl);
}

void dsm__dispatch(const struct dsm_wire_hdr *h, const void *payload, int mpi_src,
                   int count)
{
    const unsigned char *pl = payload;
    struct dsm_wire_limits lim = {
        .rank = dsm__g.rank, .nodes = dsm__g.nodes, .tree_flat = dsm__g.tree_flat,
        .npages = dsm__g.npages,
        .page_size = dsm__g.page_size, .max_locks = (uint32_t)dsm__g.cfg.max_locks,
        .max_aop = DSM_AOP_PAIR_FN + DSM_PAIR_FN_MAX - 1,
        .pair_fn0 = DSM_AOP_PAIR_FN, .pair_fns = dsm__atomic_pair_fns(),
    };
    char why[160];

    /* Everything static about the message is checked here, in one pure
     * function (wire_check.c, fuzzed by tests/fuzz); the handlers check
     * what depends on the protocol state when they act. */
    if (pl != (const unsigned char *)(h + 1))
        dsm__fatal("internal error: a message's payload does not follow its header");
    if (count < 0 || dsm__wire_check(&lim, h, (size_t)count, mpi_src, why, sizeof why) < 0)
        dsm__fatal("malformed message from rank %d: %s", mpi_src,
                   count < 0 ? "negative length" : why);
    dsm__liveness_heard(h->src);
    dsm__handle(h, pl);
}
