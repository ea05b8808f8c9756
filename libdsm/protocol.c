/*
 * protocol.c - the coherence engine's requests and replies: the home's page
 * service (PAGE_REQ, PREFETCH_REQ) and its application of other nodes'
 * diffs (DIFF), requests deferred until this node's epoch catches up, and
 * fetching and installing pages.  This node's own writes going out (diffs at
 * a release, invalidation) are writeout.c's.
 *
 * Threads: the on_* handlers (registered by dsm__protocol_handlers, called
 * by dispatch.c) and dsm__page_arrived run under the progress token
 * (communication thread, or a waiting thread under the direct transport),
 * one at a time.  dsm__fetch_page runs in the faulting application thread
 * (fault.c).  No page lock is held while waiting for a
 * reply, because the thread that must deliver the reply may need it.
 */
#include <stdlib.h>
#include <string.h>

#include "dsm_internal.h"
/* The epoch page requests carry (msg.c): dsm__g.epoch, except while this
 * node applies the release of a barrier, when it is already the next one
 * (barrier.c sets it before apply_release).  A copy fetched then (by a
 * prefetch, or by another thread right after the release invalidated the
 * page) must be recorded in the home's copyset after the home's own reset
 * for that barrier: stamped with the old epoch, the home could serve it
 * before its reset and forget it; if this node then wrote the page alone
 * in the next interval it kept its copy, the home stopped trapping its own
 * writes (nobody else on record), and a later home write never reached
 * that copy.  Found by the protocol model (models/dsm.pml, MUT_STAMP_OLD). */
uint32_t dsm__fetch_epoch;

int dsm__cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- requests that arrive before this node finished the barrier ---------
 * A node that left barrier k early may ask for a page (or send a diff, or
 * an atomic operation) before this home has applied barrier k's write
 * notices (which reset copysets, and may have made this node the page's
 * home).  Such a message waits here, payload and all, until this node's
 * epoch catches up, so that the copyset update of barrier k never forgets a
 * copy handed out after it. */
struct deferred {
    struct deferred *next;
    struct dsm_wire_hdr h;
    unsigned char payload[];
};
static struct deferred *dhead, **dtail = &dhead;
/* How many wait: read without the progress token by a thread leaving a
 * barrier (barrier.c), to see whether to take it. */
static unsigned ndeferred;

int dsm__deferred_pending(void)
{
    return __atomic_load_n(&ndeferred, __ATOMIC_ACQUIRE) != 0;
}

static void defer(const struct dsm_wire_hdr *h, const void *payload)
{
    struct deferred *d = malloc(sizeof *d + h->len);
    if (!d)
        dsm__fatal("out of private memory deferring a request");
    d->h = *h;
    if (h->len)
        memcpy(d->payload, payload, h->len);
    d->next = NULL;
    *dtail = d;
    dtail = &d->next;
    __atomic_fetch_add(&ndeferred, 1, __ATOMIC_RELEASE);
}

int dsm__defer_early(const struct dsm_wire_hdr *h, const void *payload)
{
    if (h->epoch <= __atomic_load_n(&dsm__g.epoch, __ATOMIC_ACQUIRE))
        return 0;
    defer(h, payload);       /* before any check: the page may not exist yet */
    return 1;
}

void dsm__serve_deferred(void)
{
    uint32_t epoch = __atomic_load_n(&dsm__g.epoch, __ATOMIC_ACQUIRE);
    struct deferred **pp = &dhead, *d;

    while ((d = *pp) != NULL) {
        if (d->h.epoch <= epoch) {
            *pp = d->next;
            if (!*pp)
                dtail = pp;
            __atomic_fetch_sub(&ndeferred, 1, __ATOMIC_RELEASE);
            /* Its handler again (dispatch.c), which finds it no longer early:
             * the epoch only grows. */
            dsm__handle(&d->h, d->payload);
            free(d);
        } else {
            pp = &d->next;
        }
    }
}

/* ---- the home side ---- */

/* Page p served to node src: recorded in its copyset and write-protected
 * here; copied into buf when buf is not NULL.  Returns where the page's
 * bytes go from: buf, or (zero copy) the system view. */
static const void *serve_prepare(size_t p, int src, unsigned char *buf)
{
    size_t ps = dsm__g.page_size;
    struct dsm_page *pg = &dsm__g.pages[p];

    if (pg->state == DSM_P_UNALLOC || pg->home != dsm__g.rank)
        dsm__fatal("protocol error: rank %d asked for page %zu, which is %s here; "
                   "this is a libdsm bug or ranks made different allocations",
                   src, p, pg->state == DSM_P_UNALLOC ? "not allocated" : "not homed");
    /* Write-protect first, copy second: a home write racing with the copy
     * either lands before the protection (and is in the copy) or traps and
     * becomes a write notice that invalidates the copy at the next release. */
    dsm__page_lock(p);
    if (pg->flags & DSM_PF_NOTRAP) {
        dsm__notrap_served(p);
        pg->copyset |= (uint64_t)1 << src;
        goto send;
    }
    pg->copyset |= (uint64_t)1 << src;
    struct dsm_ptrans t = dsm__page_transition(pg->state, DSM_EV_SERVE, 1);
    if (t.actions & DSM_ACT_ERROR)
        dsm__fatal("protocol error: page %zu in state %s cannot be served",
                   p, dsm__page_state_name(pg->state));
    if (t.actions & DSM_ACT_PROTECT)
        dsm__vm_protect(p, 1, dsm__page_prot(t.next));
    pg->state = t.next;
send:
    if (buf)
        /* As of this node's last release: written since, its twin. */
        memcpy(buf, (pg->flags & DSM_PF_TWIN) ? dsm__twin_page(p) : dsm__sys_page(p), ps);
    dsm__page_unlock(p);
    DSM_STAT_ADD(pages_served, 1);
    /* Zero copy: the page goes from our system view straight into the
     * requester's (see DSM_TAG_PAGE).  A home write racing with the send is
     * in this epoch's write notices and invalidates the copy at the next
     * release, before the requester may read the words it changed. */
    return buf ? (const void *)buf : (const void *)dsm__sys_page(p);
}

/* Once this node makes ordered flushes (ordered.c), a served page is copied
 * under its lock, after the protection: a zero-copy send reads the page
 * when it goes, and could carry a flag this node wrote after the serve
 * before the flush that orders it after its data. */
static int serve_copies(void)
{
    return __atomic_load_n(&dsm__ordered_mode, __ATOMIC_ACQUIRE);
}

/* Serve page p to node src, on tag DSM_TAG_PAGE + waiter (a fault's fetch). */
static void serve_page(size_t p, int src, uint32_t waiter)
{
    const size_t ps = dsm__g.page_size;
    const int copy = serve_copies();
    struct dsm_msg *m = dsm__msg_new(DSM_MSG_PAGE_REPLY, src, copy ? ps : 0);

    m->ext = serve_prepare(p, src, copy ? m->payload : NULL);
    m->ext_len = ps;
    m->tag = DSM_TAG_PAGE + (int)waiter;
    m->hdr.id = (uint32_t)p;          /* not sent (ext): for the trace */
    m->hdr.waiter = waiter;
    dsm__msg_send(m);
}

static void on_page_req(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    (void)pl;
    if (h->id >= dsm__g.npages || h->len != 0)
        dsm__msg_malformed(h);
    if (dsm__defer_early(h, NULL) || dsm__held_defer(h, NULL))
        return;
    serve_page(h->id, h->src, h->waiter);
}

/* A prefetch batch: every page, in the order of the list, a message per run
 * of consecutive pages (dsm__batch_run) on tag DSM_TAG_PAGE + waiter, from
 * the system view where the run lies contiguous (or from a copy); the
 * requester posted a receive per run in that order (prefetch.c, comm.c). */
static void on_prefetch_req(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    const size_t k = h->len / 4, ps = dsm__g.page_size;

    if (h->len == 0 || h->len % 4 || k > DSM_PREFETCH_MAX)
        dsm__msg_malformed(h);
    for (size_t i = 0; i < k; i++) {
        uint32_t p;
        memcpy(&p, pl + 4 * i, 4);
        if (p >= dsm__g.npages)
            dsm__fatal("malformed PREFETCH_REQ from rank %d: page %u out of range",
                       h->src, p);
    }
    if (dsm__defer_early(h, pl) || dsm__held_defer(h, pl))
        return;
    const int copy = serve_copies();
    for (size_t i0 = 0, n; i0 < k; i0 += n) {
        n = dsm__batch_run(pl, k, i0);
        uint32_t first;
        memcpy(&first, pl + 4 * i0, 4);
        struct dsm_msg *m = dsm__msg_new(DSM_MSG_PAGE_REPLY, h->src, copy ? n * ps : 0);
        for (size_t i = 0; i < n; i++)
            (void)serve_prepare(first + i, h->src, copy ? m->payload + i * ps : NULL);
        m->ext = copy ? (const void *)m->payload : (const void *)dsm__sys_page(first);
        m->ext_len = n * ps;
        m->ext_n = n;
        m->tag = DSM_TAG_PAGE + (int)h->waiter;
        m->hdr.id = first;            /* not sent (ext): for the trace */
        m->hdr.waiter = h->waiter;
        dsm__msg_send(m);
    }
}

/* An ordered flush's diffs (ordered.c): per sender, the nodes that may
 * hold copies of the pages of its chunks so far, sent back with the ack of
 * the last one.  Progress token only. */
static uint64_t ordered_targets[DSM_MAX_NODES];

/* The nodes other than src and this one that may hold a copy of page p:
 * its copyset, or every node when pages are read one-sidedly. */
static uint64_t copy_holders(size_t p, int src)
{
    uint64_t all = dsm__g.nodes >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << dsm__g.nodes) - 1;
    uint64_t t = dsm__remote_reads() ? all : dsm__g.pages[p].copyset;
    return t & ~((uint64_t)1 << src) & ~((uint64_t)1 << dsm__g.rank);
}

static void on_diff(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    size_t pos = 0, ps = dsm__g.page_size;
    const int ordered = (h->flags & DSM_MF_ORDERED) != 0;

    if (dsm__defer_early(h, pl))
        return;
    while (pos < h->len) {
        struct dsm_wire_diff e;
        if (h->len - pos < sizeof e)
            dsm__fatal("malformed DIFF message from rank %d: truncated entry", h->src);
        memcpy(&e, pl + pos, sizeof e);
        pos += sizeof e;
        if (e.page >= dsm__g.npages || dsm__g.pages[e.page].home != dsm__g.rank ||
            dsm__g.pages[e.page].state == DSM_P_UNALLOC || e.len > h->len - pos)
            dsm__fatal("malformed DIFF message from rank %d: page %u is not homed here "
                       "or the diff overruns the message", h->src, e.page);
        /* DSM_CHECK=races: the home's own writes are its twin against its
         * page (races.c, diffed at the barrier under the page lock); another
         * node's bytes must not count as the home's, so they go into the
         * twin too, in the same critical section.  The home's writes so far
         * are claimed first: once the diff is in the twin, a byte both wrote
         * with the same value (two ranks' lost increments from 0 to 1000)
         * would no longer show as the home's. */
        const int races = dsm__unlikely(dsm__g.cfg.check_races);
        /* A home twins a page it writes after a serve (fault.c), so that an
         * ordered flush sends only its own writes: others' bytes go into
         * the twin too, under the page lock. */
        const int locked = races || ordered ||
                           (dsm__g.pages[e.page].flags & DSM_PF_TWIN);
        if (locked)
            dsm__page_lock(e.page);
        if (ordered) {
            /* Shut and held until the sender's UNHOLD (ordered.c). */
            ordered_targets[h->src] |= copy_holders(e.page, h->src);
            dsm__hold(e.page);
            dsm__shut(e.page);
        }
        if (h->flags & DSM_MF_BARRIER) {
            if (races && (dsm__g.pages[e.page].flags & DSM_PF_TWIN))
                dsm__race_home_at(e.page, h->epoch);
            dsm__race_diff(e.page, h->epoch, h->src, pl + pos, e.len);
        }
        long rc = dsm__diff_apply(dsm__sys_page(e.page), ps, pl + pos, e.len);
        if (rc >= 0 && (dsm__g.pages[e.page].flags & DSM_PF_TWIN))
            (void)dsm__diff_apply(dsm__twin_page(e.page), ps, pl + pos, e.len);
        if (locked)
            dsm__page_unlock(e.page);
        if (rc < 0)
            dsm__fatal("malformed diff from rank %d for page %u", h->src, e.page);
        pos += e.len;
        DSM_STAT_ADD(diffs_applied, 1);
    }
    if ((h->flags & DSM_MF_LAST) && (h->flags & DSM_MF_NOACK)) {
        dsm__barrier_diff_arrived(h);        /* counted, not acked (barrier.c) */
    } else if (h->flags & DSM_MF_LAST) {
        struct dsm_msg *m = dsm__msg_new(DSM_MSG_DIFF_ACK, h->src, 0);
        m->hdr.waiter = h->waiter;
        if (ordered) {
            m->hdr.flags |= DSM_MF_ORDERED;
            m->hdr.arg = ordered_targets[h->src];
            ordered_targets[h->src] = 0;
        }
        dsm__msg_send(m);
    }
}

/* A request that waited for held pages (ordered.c). */
void dsm__dispatch_held(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    if (h->type == DSM_MSG_PAGE_REQ)
        on_page_req(h, pl);
    else
        on_prefetch_req(h, pl);
}

/* ---- the requesting side ---- */

/* Page p (IN_FLIGHT) is in the system view now: make it readable. */
static void install(size_t p)
{
    struct dsm_page *pg = &dsm__g.pages[p];
    /* MPI wrote the page into the system view; the application view is
     * still PROT_NONE, so nobody saw it half-written. */
    dsm__page_lock(p);
    if (pg->flags & DSM_PF_STALE) {
        /* Invalidated while in flight (a lock acquire's notice): the copy may
         * predate the notice, so the faulting thread must fetch again. */
        pg->flags &= (uint8_t)~DSM_PF_STALE;
        pg->state = DSM_P_INVALID;
        dsm__inflight_install(p, 0);
    } else {
        /* Ordered flushes' diffs that came while it was on the way go in
         * first (ordered.c update_copy); it then stays shut until the last
         * UPDATE of their flush, which opens it. */
        dsm__inflight_install(p, 1);
        struct dsm_ptrans t = dsm__page_transition(pg->state, DSM_EV_FETCHED, 0);
        if (!dsm__page_shut(p))
            dsm__vm_protect(p, 1, dsm__page_prot(t.next));
        pg->state = t.next;
    }
    dsm__page_unlock(p);
    DSM_STAT_ADD(pages_fetched, 1);
    DSM_STAT_ADD(bytes_fetched, dsm__g.page_size);
    dsm__pt_install_done();
}

void dsm__page_arrived(size_t p, uint32_t waiter)
{
    struct dsm_waiter *w = dsm__waiter_at(waiter, DSM_WAIT_PAGE);

    if (!w && (w = dsm__waiter_at(waiter, DSM_WAIT_PREFETCH)) != NULL) {
        dsm__prefetch_arrived(p, w, waiter);
        return;
    }
    if (!w || dsm__g.pages[p].state != DSM_P_IN_FLIGHT)
        dsm__fatal("protocol error: page %zu arrived but is %s here (waiter %u)",
                   p, dsm__page_state_name(dsm__g.pages[p].state), waiter);
    install(p);
    dsm__waiter_complete(w);
}

void dsm__fetch_page(size_t p)
{
    uint64_t t0 = dsm__now_ns();

    dsm__vm_back(p);
    /* Not while diffs of this node are on the way (writeout.c), nor once this
     * node takes part in ordered flushes: a home holds a page there until
     * every copy is up to date, and a one-sided read would not wait. */
    if (dsm__g.ops->get_page && !(dsm__g.pages[p].flags & DSM_PF_NOTRAP) &&
        !dsm__diffs_unacked() &&
        !__atomic_load_n(&dsm__ordered_mode, __ATOMIC_ACQUIRE)) {
        /* One-sided (DSM_COMM=rma): no request, the home does not know. */
        dsm__g.ops->get_page(p, dsm__g.pages[p].home);
        install(p);
        DSM_STAT_ADD(rmr_count, 1);
        DSM_STAT_ADD(rmr_ns, dsm__now_ns() - t0);
        return;
    }
    uint32_t id = dsm__waiter_get(DSM_WAIT_PAGE, 1, NULL);
    struct dsm_msg *m = dsm__msg_new(DSM_MSG_PAGE_REQ, dsm__g.pages[p].home, 0);

    dsm__waiter_note(id, dsm__g.pages[p].home, p);

    m->hdr.id = (uint32_t)p;
    m->hdr.waiter = id;
    m->recv_page = (long)p;     /* the transport posts the page's receive */
    dsm__msg_send(m);
    dsm__waiter_wait(id);
    dsm__waiter_put(id);
    DSM_STAT_ADD(rmr_count, 1);
    DSM_STAT_ADD(rmr_ns, dsm__now_ns() - t0);
}
void dsm__protocol_handlers(void)
{
    dsm__handler_register(DSM_MSG_PAGE_REQ, on_page_req);
    dsm__handler_register(DSM_MSG_PREFETCH_REQ, on_prefetch_req);
    dsm__handler_register(DSM_MSG_DIFF, on_diff);
}

void dsm__protocol_init(void)
{
    dsm__fetch_epoch = 0;
    dhead = NULL;
    dtail = &dhead;
}
