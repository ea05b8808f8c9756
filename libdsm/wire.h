/*
 * wire.h - the message format between nodes.
 *
 * Every control message is one MPI message on the library's own communicator
 * with tag DSM_TAG: a fixed header followed by len bytes of payload.  The receiver
 * validates the header (type known, source matches MPI's, length matches the
 * received count, ids in range) before acting on anything (dispatch.c).
 */
#ifndef DSM_WIRE_H
#define DSM_WIRE_H

#include <stdint.h>

#define DSM_TAG 7001
/* A page travels alone, from the home's system view straight into the
 * requester's system view, on tag DSM_TAG_PAGE + the requester's waiter
 * slot, as dsm__g.page_chunks messages (DSM_PAGE_CHUNK) in order; the
 * requester posted those receives, in the same order, before asking
 * (comm.c). */
#define DSM_TAG_PAGE 10000

enum dsm_msg_type {
    DSM_MSG_PAGE_REQ = 1,     /* id=page, waiter: ask the home for a copy */
    DSM_MSG_PAGE_REPLY,       /* unused: pages travel on DSM_TAG_PAGE + waiter */
    DSM_MSG_DIFF,             /* payload={u32 page,u32 len,diff}*, LAST asks an ack */
    DSM_MSG_DIFF_ACK,         /* waiter */
    DSM_MSG_BARRIER_ENTER,    /* to node 0; payload=u32 pages written; arg=check, arg2=aux */
    DSM_MSG_BARRIER_RELEASE,  /* from node 0; payload={u32 page,i32 writer}* */
    DSM_MSG_LOCK_REQ,         /* id=lock, waiter: to the lock's manager */
    DSM_MSG_LOCK_GRANT,       /* id=lock, waiter, payload=u32 pages to invalidate */
    DSM_MSG_LOCK_REL,         /* id=lock, waiter, payload=u32 pages written */
    DSM_MSG_LOCK_REL_ACK,     /* waiter */
    DSM_MSG_ATOMIC_REQ,       /* id=page, waiter, payload=struct dsm_wire_atomic */
    DSM_MSG_ATOMIC_REPLY,     /* waiter, arg=result, arg2=second result */
    DSM_MSG_PREFETCH_REQ,     /* waiter, payload=u32 pages: the home sends each page
                                 alone on DSM_TAG_PAGE + waiter, in payload order */
    DSM_MSG_CALL_REQ,         /* id=service, waiter, payload=request (service.c) */
    DSM_MSG_CALL_REPLY,       /* id=service, waiter, arg=result, payload=reply bytes */
    DSM_MSG_FLUSH_NOTICE,     /* waiter, payload=u32 pages the sender released since its
                                 last dsm_flush; LAST asks a DIFF_ACK (flush.c) */
    DSM_MSG_UPDATE,           /* waiter, payload as DIFF, or with FULL {u32 page,u32 len=page
                                 size,bytes}*: an ordered flush's new bytes for this node's
                                 copies; always acked with UPDATE_ACK (ordered.c) */
    DSM_MSG_UPDATE_ACK,       /* waiter */
    DSM_MSG_UNHOLD,           /* payload=u32 pages: the ordered flush of the sender that
                                 held them at this home is over; no reply (ordered.c) */
    DSM_MSG_HEARTBEAT,        /* empty: the sender's communication thread runs; no reply,
                                 not counted or traced (liveness.c) */
    DSM_MSG_NTYPES
};

/* Service calls (service.c): services per process, bytes of a request or reply. */
#define DSM_SERVICE_MAX 8
#define DSM_CALL_MAX    32768

#define DSM_MF_LAST  0x1u     /* last chunk of a multi-message transfer */
#define DSM_MF_TRY   0x2u     /* LOCK_REQ: do not queue; a busy lock is refused */
#define DSM_MF_BUSY  0x4u     /* LOCK_GRANT: refused (the lock is held) */
#define DSM_MF_BARRIER 0x8u   /* DIFF: flushed at a barrier (DSM_CHECK=races) */
#define DSM_MF_HANDOFF 0x10u  /* LOCK_REL: may release a lock another rank holds
                               * (the shim: unset by a thread that did not set it) */
#define DSM_MF_NOMIGRATE 0x20u /* BARRIER_ENTER: the sender has bystander threads;
                                * BARRIER_RELEASE: no page moves its home (barrier.c) */
#define DSM_MF_ORDERED 0x40u  /* DIFF: from an ordered flush: the home applies each page
                               * unseen by its own threads, holds the pages until the
                               * sender's UNHOLD, and its DIFF_ACK (also ORDERED) carries
                               * in arg the nodes that may hold copies (ordered.c) */
#define DSM_MF_FULL 0x80u     /* UPDATE: whole pages, not diffs */
#define DSM_MF_NOACK 0x100u   /* DIFF: a barrier's, not acknowledged: the home counts
                               * the last chunk of each sender and waits for the
                               * count in its BARRIER_RELEASE (barrier.c) */

#define DSM_WRITER_MANY (-2)  /* barrier release: more than one node wrote */
/* Page numbers stay below this (init.c refuses larger regions).  It was the
 * bit of a BARRIER_ENTER page whose sender held no copy; since the barrier
 * tree such a page enters with DSM_WRITER_MANY as its writer. */
#define DSM_NOTICE_NOCOPY 0x80000000u

/* BARRIER_ENTER (a subtree's entry, to the node's parent in the barrier
 * tree, or a node's own, to itself) and BARRIER_RELEASE (down the tree)
 * carry the same payload: one u32 per node, the number of nodes of the
 * subtree (ENTER) or of the job (RELEASE) that sent that node a barrier's
 * unacked diffs, then struct dsm_wire_notice entries: each page written,
 * with its only writer or DSM_WRITER_MANY.  Every chunk carries the counts;
 * the receiver takes them from the last.  A RELEASE chunk may end with arg
 * bytes (at most DSM_BARRIER_CARRY_MAX) that node 0 sends every node
 * (dsm__barrier_carry). */

struct dsm_wire_hdr {
    uint16_t type;
    uint16_t flags;
    int32_t  src;      /* sender's rank */
    uint32_t epoch;    /* sender's barrier epoch */
    uint32_t id;       /* page or lock id */
    uint32_t waiter;   /* waiter slot on the requester, echoed in replies */
    uint32_t len;      /* payload bytes */
    uint64_t arg;      /* message-specific */
    uint64_t arg2;     /* message-specific */
};

/* One entry of a DIFF payload. */
struct dsm_wire_diff {
    uint32_t page;
    uint32_t len;      /* bytes of encoded diff that follow */
};

/* One entry of a BARRIER_RELEASE payload. */
struct dsm_wire_notice {
    uint32_t page;
    int32_t  writer;   /* the only writer, or DSM_WRITER_MANY */
};

/* An ATOMIC_REQ payload: one operation on the word at offset of the page,
 * run by the home on its master copy (atomic.c). */
struct dsm_wire_atomic {
    uint32_t offset;
    uint8_t  op;       /* enum dsm_aop */
    uint8_t  size;     /* 1, 2, 4 or 8 (16 for the work-share ops) */
    uint16_t pad;
    uint64_t a, b, c, d;
};

#endif /* DSM_WIRE_H */
