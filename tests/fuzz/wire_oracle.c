/*
 * wire_oracle.c - decode what dsm__wire_check accepts, the way the handlers
 * in libdsm would, and check that nothing lands outside the region: page
 * numbers below npages, lock ids below max_locks, ranks below nodes, every
 * diff run and atomic operand inside its page.  Pages are separate heap
 * buffers of exactly page_size bytes, so that under AddressSanitizer a write
 * one byte outside a page is caught even if the arithmetic check were wrong.
 * Single-threaded; used by the fuzzer and by the corpus replay unit test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire_check.h"
#include "wire_oracle.h"

#define NODES 3
#define NPAGES 16
#define NLOCKS 9
/* As libdsm has them: the pair operations a runtime may register are 12 to
 * 19, and the shim registers one (its loop's grab, id 0). */
#define MAX_AOP 19
#define PAIR_FN0 12
#define PAIR_FNS 0x1u

static char msgbuf[256];

static const char *broken(const char *what, unsigned type, unsigned long v)
{
    snprintf(msgbuf, sizeof msgbuf, "accepted type %u but %s (%lu)", type, what, v);
    return msgbuf;
}

static uint32_t u32_at(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static const char *decode_diff(const struct dsm_wire_limits *l, const struct dsm_wire_hdr *h,
                               const uint8_t *pl)
{
    size_t pos = 0;

    while (pos < h->len) {
        struct dsm_wire_diff e;
        if (h->len - pos < sizeof e)
            return broken("a truncated diff entry", h->type, pos);
        memcpy(&e, pl + pos, sizeof e);
        pos += sizeof e;
        if (e.page >= l->npages)
            return broken("a diff for a page beyond the region", h->type, e.page);
        if (e.len > h->len - pos)
            return broken("a diff longer than the message", h->type, e.len);
        /* Walk the runs independently of diff.c (format in dsm_pure.h):
         * offsets multiples of 8, at least one 8-byte chunk, inside the
         * page, in increasing order without overlap; chunks * 8 data bytes,
         * then one mask byte per chunk if the run is masked.  Count the
         * bytes applying it writes: the mask bits, or every byte. */
        size_t q = 0, next_min = 0, expect = 0;
        while (q < e.len) {
            struct dsm_diff_run r;
            if (e.len - q < sizeof r)
                return broken("a truncated diff run", h->type, q);
            memcpy(&r, pl + pos + q, sizeof r);
            q += sizeof r;
            uint64_t chunks = r.count & ~DSM_DIFF_MASKED;
            int masked = (r.count & DSM_DIFF_MASKED) != 0;
            if (chunks == 0)
                return broken("a diff run of no chunk", h->type, r.count);
            if (r.offset % DSM_DIFF_CHUNK)
                return broken("a diff run off the 8-byte grid", h->type, r.offset);
            if (r.offset < next_min)
                return broken("diff runs out of order or overlapping", h->type, r.offset);
            if (r.offset + chunks * DSM_DIFF_CHUNK > l->page_size)
                return broken("a diff run past the end of the page", h->type,
                              (unsigned long)(r.offset + chunks * DSM_DIFF_CHUNK));
            uint64_t body = chunks * DSM_DIFF_CHUNK + (masked ? chunks : 0);
            if (body > e.len - q)
                return broken("a diff run longer than its data", h->type,
                              (unsigned long)body);
            if (masked) {
                for (uint64_t k = 0; k < chunks; k++)
                    for (unsigned b = pl[pos + q + chunks * DSM_DIFF_CHUNK + k]; b; b >>= 1)
                        expect += b & 1;
            } else {
                expect += chunks * DSM_DIFF_CHUNK;
            }
            q += body;
            next_min = (size_t)(r.offset + chunks * DSM_DIFF_CHUNK);
        }
        unsigned char *page = malloc(l->page_size);
        if (!page)
            abort();
        memset(page, 0xa5, l->page_size);
        long w = dsm__diff_apply(page, l->page_size, pl + pos, e.len);
        free(page);
        if (w < 0 || (size_t)w != expect)
            return broken("dsm__diff_apply disagreed on the bytes written", h->type,
                          (unsigned long)w);
        pos += e.len;
    }
    return NULL;
}

static const char *decode(const struct dsm_wire_limits *l, const uint8_t *msg, size_t count,
                          int mpi_src)
{
    struct dsm_wire_hdr h;
    const uint8_t *pl = msg + sizeof h;

    if (count < sizeof h)
        return broken("shorter than a header", 0, count);
    memcpy(&h, msg, sizeof h);
    if (count != sizeof h + h.len)
        return broken("a length that is not the received length", h.type, h.len);
    if (h.src != mpi_src || h.src < 0 || h.src >= l->nodes)
        return broken("a source that is not the sender", h.type, (unsigned long)h.src);
    switch (h.type) {
    case DSM_MSG_PAGE_REQ:
    case DSM_MSG_ATOMIC_REQ:
        if (h.id >= l->npages)
            return broken("a page beyond the region", h.type, h.id);
        if (h.type == DSM_MSG_ATOMIC_REQ) {
            struct dsm_wire_atomic o;
            if (h.len != sizeof o)
                return broken("an atomic payload of the wrong size", h.type, h.len);
            memcpy(&o, pl, sizeof o);
            if (o.op > l->max_aop || o.size == 0 || o.offset % o.size ||
                (size_t)o.offset + o.size > l->page_size)
                return broken("an atomic operand outside its page", h.type, o.offset);
            if (l->pair_fn0 && o.op >= l->pair_fn0 &&
                !(l->pair_fns & (1u << (o.op - l->pair_fn0))))
                return broken("a pair operation that is not registered", h.type, o.op);
            unsigned char *page = malloc(l->page_size);
            if (!page)
                abort();
            memcpy(page + o.offset, &o.a, o.size > 8 ? 8 : o.size);
            free(page);
        }
        return NULL;
    case DSM_MSG_DIFF:
        return decode_diff(l, &h, pl);
    case DSM_MSG_UPDATE:
        /* ordered.c: diffs as DIFF, or whole pages with FULL. */
        if (!(h.flags & DSM_MF_FULL))
            return decode_diff(l, &h, pl);
        for (size_t pos = 0; pos < h.len;) {
            struct dsm_wire_diff e;
            if (h.len - pos < sizeof e)
                return broken("a truncated whole-page entry", h.type, pos);
            memcpy(&e, pl + pos, sizeof e);
            pos += sizeof e;
            if (e.page >= l->npages)
                return broken("a page beyond the region", h.type, e.page);
            if (e.len != l->page_size || e.len > h.len - pos)
                return broken("a whole page of the wrong size", h.type, e.len);
            static unsigned char copy[16384];
            memcpy(copy, pl + pos, e.len);
            pos += e.len;
        }
        return NULL;
    case DSM_MSG_UNHOLD:
        if (h.len % 4)
            return broken("a page list of odd length", h.type, h.len);
        for (size_t i = 0; i < h.len; i += 4)
            if (u32_at(pl + i) >= l->npages)
                return broken("a page beyond the region", h.type, u32_at(pl + i));
        return NULL;
    case DSM_MSG_DIFF_ACK:
    case DSM_MSG_UPDATE_ACK:
    case DSM_MSG_ATOMIC_REPLY:
        return h.len ? broken("a payload on a reply", h.type, h.len) : NULL;
    case DSM_MSG_HEARTBEAT:
        return h.len ? broken("a payload on a heartbeat", h.type, h.len) : NULL;
    case DSM_MSG_LOCK_REQ:
    case DSM_MSG_LOCK_REL:
    case DSM_MSG_LOCK_GRANT:
    case DSM_MSG_LOCK_REL_ACK:
        if (h.id >= l->max_locks)
            return broken("a lock beyond max_locks", h.type, h.id);
        /* fall through - the payload is a list of pages */
    case DSM_MSG_FLUSH_NOTICE:
        if (h.len % 4)
            return broken("a page list of odd length", h.type, h.len);
        for (size_t i = 0; i < h.len; i += 4) {
            uint32_t p = u32_at(pl + i);
            if (p >= l->npages)
                return broken("a page beyond the region", h.type, p);
        }
        return NULL;
    case DSM_MSG_PREFETCH_REQ:
        /* serve_page for every page of the list, in order. */
        if (h.len == 0 || h.len % 4)
            return broken("a prefetch list that is empty or of odd length", h.type, h.len);
        for (size_t i = 0; i < h.len; i += 4)
            if (u32_at(pl + i) >= l->npages)
                return broken("a prefetched page beyond the region", h.type, u32_at(pl + i));
        return NULL;
    case DSM_MSG_BARRIER_ENTER:
    case DSM_MSG_BARRIER_RELEASE:
        /* barrier_tree.c: from a child or itself (ENTER), from the parent
         * (RELEASE); a count per node, added up, then notices. */
        if (h.type == DSM_MSG_BARRIER_ENTER && h.src != l->rank &&
            (h.src == 0 || dsm__tree_parent(h.src, l->tree_flat) != l->rank))
            return broken("a BARRIER_ENTER from a node not below this one", h.type, h.src);
        if (h.type == DSM_MSG_BARRIER_RELEASE &&
            h.src != (l->rank ? dsm__tree_parent(l->rank, l->tree_flat) : 0))
            return broken("a BARRIER_RELEASE not from the parent", h.type, h.src);
        /* A RELEASE ends with arg bytes that node 0 sent (copied out). */
        uint32_t carried = 0;
        if (h.type == DSM_MSG_BARRIER_RELEASE) {
            if (h.arg > DSM_BARRIER_CARRY_MAX || h.arg + (size_t)l->nodes * 4 > h.len)
                return broken("carried bytes beyond the limit or the payload", h.type,
                              (unsigned long)h.arg);
            carried = (uint32_t)h.arg;
            static unsigned char carry[DSM_BARRIER_CARRY_MAX];
            memcpy(carry, pl + h.len - carried, carried);
        }
        if (h.len < (size_t)l->nodes * 4 ||
            (h.len - carried - (size_t)l->nodes * 4) % sizeof(struct dsm_wire_notice))
            return broken("a barrier payload that is not counts and notices", h.type, h.len);
        for (int r = 0; r < l->nodes; r++)
            if (u32_at(pl + 4 * (size_t)r) > (uint32_t)l->nodes)
                return broken("more senders of diffs than nodes", h.type,
                              u32_at(pl + 4 * (size_t)r));
        for (size_t i = (size_t)l->nodes * 4; i < h.len - carried;
             i += sizeof(struct dsm_wire_notice)) {
            struct dsm_wire_notice n;
            memcpy(&n, pl + i, sizeof n);
            if (n.page >= l->npages)
                return broken("a notice for a page beyond the region", h.type, n.page);
            if (n.writer != DSM_WRITER_MANY && (n.writer < 0 || n.writer >= l->nodes))
                return broken("a writer that is not a rank", h.type,
                              (unsigned long)(uint32_t)n.writer);
            if (n.writer >= 0) {
                /* What apply_release does with it: a copyset bit. */
                volatile uint64_t bit = (uint64_t)1 << n.writer;
                (void)bit;
            }
        }
        return NULL;
    case DSM_MSG_CALL_REQ:
    case DSM_MSG_CALL_REPLY:
        /* service.c: services[h.id], and a copy into a slot of DSM_CALL_MAX. */
        if (h.id >= DSM_SERVICE_MAX)
            return broken("a service beyond DSM_SERVICE_MAX", h.type, h.id);
        if (h.len > DSM_CALL_MAX) {
            return broken("a service call longer than DSM_CALL_MAX", h.type, h.len);
        } else {
            static unsigned char slot[DSM_CALL_MAX];
            memcpy(slot, pl, h.len);
        }
        return NULL;
    default:
        return broken("an unknown type", h.type, h.type);
    }
}

const char *wire_oracle(const uint8_t *data, size_t size, unsigned long *accepted)
{
    /* Two page sizes: a small one to reach the edges often, and the
     * default 16 KiB one. */
    static const size_t page_sizes[] = { 256, 16384 };
    char why[160];

    if (size < 1)
        return NULL;
    int rank = data[0] % NODES;
    int mpi_src = (data[0] >> 2) % 4;      /* 3 is no rank of the job */
    const uint8_t *msg = data + 1;
    size_t count = size - 1;

    /* The validator reads the header with memcpy: give it an aligned copy
     * anyway, the way MPI's receive buffer is. */
    uint8_t *copy = malloc(count ? count : 1);
    if (!copy)
        abort();
    memcpy(copy, msg, count);
    for (size_t k = 0; k < sizeof page_sizes / sizeof page_sizes[0]; k++) {
        struct dsm_wire_limits l = {
            .rank = rank, .nodes = NODES, .npages = NPAGES, .page_size = page_sizes[k],
            .max_locks = NLOCKS, .max_aop = MAX_AOP, .pair_fn0 = PAIR_FN0,
            .pair_fns = PAIR_FNS,
        };
        why[0] = 0;
        if (dsm__wire_check(&l, copy, count, mpi_src, why, sizeof why) < 0) {
            if (why[0] == 0) {
                free(copy);
                return "a rejection came without a reason";
            }
            continue;
        }
        if (accepted)
            ++*accepted;
        const char *err = decode(&l, copy, count, mpi_src);
        if (err) {
            free(copy);
            return err;
        }
    }
    free(copy);
    return NULL;
}
