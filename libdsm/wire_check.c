/*
 * wire_check.c - validation of a received control message (wire.h) before
 * dsm__dispatch (dispatch.c) acts on it.  A pure function: any thread may
 * call it; it reads only the bytes and the limits it is given, and copies
 * every field out with memcpy, so the buffer needs no alignment.
 *
 * The checks are those the handlers relied on, gathered in one place: the
 * header (known type, sender is MPI's sender and a rank, length is the
 * received length), the ids of each type (page, lock and its manager), and
 * the payloads (page numbers of notices and prefetch lists, every diff entry and run inside its
 * page, atomic operations known or registered and their operands inside
 * their page; service numbers and sizes).  Rejecting here, before a request
 * may be deferred (protocol.c), means a malformed message is reported when it
 * arrives rather than when it is served.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "libc.h"
#include "wire_check.h"

static int bad(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;

    if (why && whylen) {
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return -DSM_EPROTO;
}

static uint32_t u32_at(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* A list of u32 page numbers; mask clears flag bits first (BARRIER_ENTER). */
static int check_pages(const struct dsm_wire_limits *l, const unsigned char *pl,
                       uint32_t len, uint32_t mask, const char *what,
                       char *why, size_t whylen)
{
    if (len % 4)
        return bad(why, whylen, "%s payload of %u bytes is not a list of pages", what, len);
    for (uint32_t i = 0; i < len; i += 4) {
        uint32_t p = u32_at(pl + i) & ~mask;
        if (p >= l->npages)
            return bad(why, whylen, "%s names page %u, beyond the %zu pages of the region",
                       what, p, l->npages);
    }
    return 0;
}

static int check_diff(const struct dsm_wire_limits *l, const unsigned char *pl,
                      uint32_t len, char *why, size_t whylen)
{
    uint32_t pos = 0;

    while (pos < len) {
        struct dsm_wire_diff e;
        if (len - pos < sizeof e)
            return bad(why, whylen, "DIFF entry truncated at byte %u of %u", pos, len);
        memcpy(&e, pl + pos, sizeof e);
        pos += (uint32_t)sizeof e;
        if (e.page >= l->npages)
            return bad(why, whylen, "DIFF for page %u, beyond the %zu pages of the region",
                       e.page, l->npages);
        if (e.len > len - pos)
            return bad(why, whylen, "DIFF of page %u claims %u bytes, the message holds %u",
                       e.page, e.len, len - pos);
        if (dsm__diff_check(l->page_size, pl + pos, e.len) < 0)
            return bad(why, whylen, "DIFF of page %u has a run outside the page or out "
                       "of order", e.page);
        pos += e.len;
    }
    return 0;
}

/* An UPDATE with DSM_MF_FULL: whole pages, each after its {page, len}. */
static int check_full(const struct dsm_wire_limits *l, const unsigned char *pl,
                      uint32_t len, char *why, size_t whylen)
{
    uint32_t pos = 0;

    while (pos < len) {
        struct dsm_wire_diff e;
        if (len - pos < sizeof e)
            return bad(why, whylen, "UPDATE entry truncated at byte %u of %u", pos, len);
        memcpy(&e, pl + pos, sizeof e);
        pos += (uint32_t)sizeof e;
        if (e.page >= l->npages)
            return bad(why, whylen, "UPDATE of page %u, beyond the %zu pages of the region",
                       e.page, l->npages);
        if (e.len != l->page_size || e.len > len - pos)
            return bad(why, whylen, "UPDATE of page %u claims %u bytes of a page of %zu, "
                       "the message holds %u", e.page, e.len, l->page_size, len - pos);
        pos += e.len;
    }
    return 0;
}

/* BARRIER_ENTER and BARRIER_RELEASE (wire.h): a count per node, each at
 * most the number of nodes, then notices. */
static int check_notices(const struct dsm_wire_limits *l, const unsigned char *pl,
                         uint32_t len, const char *what, char *why, size_t whylen)
{
    uint32_t cb = (uint32_t)l->nodes * 4;
    if (len < cb || (len - cb) % sizeof(struct dsm_wire_notice))
        return bad(why, whylen, "%s payload of %u bytes is not %u counts and a list of "
                   "notices", what, len, (unsigned)l->nodes);
    for (uint32_t i = 0; i < cb; i += 4)
        if (u32_at(pl + i) > (uint32_t)l->nodes)
            return bad(why, whylen, "%s counts %u senders of diffs to rank %u, more than "
                       "the %d ranks", what, u32_at(pl + i), i / 4, l->nodes);
    for (uint32_t i = cb; i < len; i += (uint32_t)sizeof(struct dsm_wire_notice)) {
        struct dsm_wire_notice n;
        memcpy(&n, pl + i, sizeof n);
        if (n.page >= l->npages)
            return bad(why, whylen, "%s names page %u, beyond the %zu pages "
                       "of the region", what, n.page, l->npages);
        /* The writer becomes a home (migration) or a copyset bit. */
        if (n.writer != DSM_WRITER_MANY && (n.writer < 0 || n.writer >= l->nodes))
            return bad(why, whylen, "%s names writer %d of page %u, which is "
                       "not a rank", what, (int)n.writer, n.page);
    }
    return 0;
}

static int check_atomic(const struct dsm_wire_limits *l, const unsigned char *pl,
                        char *why, size_t whylen)
{
    struct dsm_wire_atomic o;

    memcpy(&o, pl, sizeof o);
    if (l->pair_fn0 && o.op >= l->pair_fn0 && o.op <= l->max_aop &&
        (o.op - l->pair_fn0 >= 32 || !(l->pair_fns >> (o.op - l->pair_fn0) & 1)))
        return bad(why, whylen, "ATOMIC_REQ operation %u is not registered here "
                   "(dsm__atomic_register)", o.op);
    if (o.op > l->max_aop ||
        !(o.size == 1 || o.size == 2 || o.size == 4 || o.size == 8 || o.size == 16) ||
        o.offset % o.size != 0 || o.size > l->page_size || o.offset > l->page_size - o.size)
        return bad(why, whylen, "ATOMIC_REQ operation %u of %u bytes at offset %u does "
                   "not fit in a page of %zu bytes", o.op, o.size, o.offset, l->page_size);
    return 0;
}

/* The lock's manager is id % nodes: a request or release goes to it, a grant
 * or release ack comes from it. */
static int lock_ok(const struct dsm_wire_limits *l, uint32_t id, int manager)
{
    return id < l->max_locks && id % (uint32_t)l->nodes == (uint32_t)manager;
}

int dsm__wire_check(const struct dsm_wire_limits *l, const void *msg, size_t count,
                    int mpi_src, char *why, size_t whylen)
{
    struct dsm_wire_hdr h;
    const unsigned char *pl = (const unsigned char *)msg + sizeof h;

    if (count < sizeof h)
        return bad(why, whylen, "%zu bytes, shorter than a header", count);
    memcpy(&h, msg, sizeof h);
    if (h.type == 0 || h.type >= DSM_MSG_NTYPES || h.type == DSM_MSG_PAGE_REPLY ||
        h.src != mpi_src || h.src < 0 || h.src >= l->nodes ||
        count != sizeof h + (size_t)h.len)
        return bad(why, whylen, "type %u, claimed source %d, length %u for %zu bytes "
                   "received", h.type, (int)h.src, h.len, count);
    switch (h.type) {
    case DSM_MSG_PAGE_REQ:
        if (h.id >= l->npages || h.len != 0)
            break;
        return 0;
    case DSM_MSG_PREFETCH_REQ:
        /* A non-empty list of pages, the first of them in the id. */
        if (h.len == 0 || h.len < 4 || h.id != u32_at(pl))
            break;
        return check_pages(l, pl, h.len, 0, "PREFETCH_REQ", why, whylen);
    case DSM_MSG_DIFF:
        return check_diff(l, pl, h.len, why, whylen);
    case DSM_MSG_DIFF_ACK:
    case DSM_MSG_ATOMIC_REPLY:
        if (h.len != 0)
            break;
        return 0;
    case DSM_MSG_LOCK_REL_ACK:
        if (h.len != 0 || !lock_ok(l, h.id, h.src))
            break;
        return 0;
    case DSM_MSG_BARRIER_ENTER:
        /* From a child in the barrier tree, or this node's own. */
        if (h.src != l->rank && (h.src == 0 || dsm__tree_parent(h.src, l->tree_flat) != l->rank))
            break;
        return check_notices(l, pl, h.len, "BARRIER_ENTER", why, whylen);
    case DSM_MSG_BARRIER_RELEASE:
        /* From the parent in the barrier tree (node 0: from itself). */
        if (h.src != (l->rank ? dsm__tree_parent(l->rank, l->tree_flat) : 0))
            break;
        /* Ending with arg bytes node 0 sends (dsm__barrier_carry). */
        if (h.arg > DSM_BARRIER_CARRY_MAX || h.arg + (uint64_t)l->nodes * 4 > h.len)
            return bad(why, whylen, "BARRIER_RELEASE claims %" PRIu64 " carried bytes in a "
                       "payload of %u", h.arg, h.len);
        return check_notices(l, pl, h.len - (uint32_t)h.arg, "BARRIER_RELEASE", why, whylen);
    case DSM_MSG_LOCK_REQ:
        if (h.len != 0 || !lock_ok(l, h.id, l->rank))
            break;
        return 0;
    case DSM_MSG_LOCK_GRANT:
        if (!lock_ok(l, h.id, h.src))
            break;
        return check_pages(l, pl, h.len, 0, "LOCK_GRANT", why, whylen);
    case DSM_MSG_LOCK_REL:
        if (!lock_ok(l, h.id, l->rank))
            break;
        /* The notices' epoch: the sender's when it took its list, or the
         * next one if its node was in a barrier then (lock.c).  Barriers
         * may have passed since; a later epoch than the next is a bug. */
        if (h.arg > (uint64_t)h.epoch + 1)
            return bad(why, whylen, "LOCK_REL with notices of epoch %llu at epoch %u",
                       (unsigned long long)h.arg, h.epoch);
        return check_pages(l, pl, h.len, 0, "LOCK_REL", why, whylen);
    case DSM_MSG_ATOMIC_REQ:
        if (h.id >= l->npages || h.len != sizeof(struct dsm_wire_atomic))
            break;
        return check_atomic(l, pl, why, whylen);
    case DSM_MSG_FLUSH_NOTICE:
        return check_pages(l, pl, h.len, 0, "FLUSH_NOTICE", why, whylen);
    case DSM_MSG_UPDATE:
        if (h.flags & DSM_MF_FULL)
            return check_full(l, pl, h.len, why, whylen);
        return check_diff(l, pl, h.len, why, whylen);
    case DSM_MSG_UPDATE_ACK:
    case DSM_MSG_HEARTBEAT:
        if (h.len != 0)
            break;
        return 0;
    case DSM_MSG_UNHOLD:
        return check_pages(l, pl, h.len, 0, "UNHOLD", why, whylen);
    case DSM_MSG_CALL_REQ:
    case DSM_MSG_CALL_REPLY:
        if (h.id >= DSM_SERVICE_MAX || h.len > DSM_CALL_MAX)
            break;
        return 0;
    }
    return bad(why, whylen, "type %u, id %u, length %u out of range", h.type, h.id, h.len);
}
