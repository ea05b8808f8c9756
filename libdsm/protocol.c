/*
 * protocol.c - the coherence engine: validation and dispatch of received
 * messages, the home's page service, diffs, flushing a node's writes at a
 * release, and invalidating copies.
 *
 * Threads: dsm__dispatch and the on_* handlers run under the progress token
 * (communication thread, or a waiting thread under the direct transport), one
 * at a time.  dsm__fetch_page, dsm__flush and dsm__invalidate_copy run in
 * application threads (fault handler, barrier, locks).  Lock order: flush
 * mutex -> page lock -> MPI mutex; no page lock is held while waiting for a
 * reply, because the thread that must deliver the reply may need it.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm_internal.h"
#include "wire_check.h"

static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;
/* Diffs of this node go out one batch at a time, and each batch is acked
 * before the next starts: a release (dsm__release_writes) takes pages other
 * threads of this node wrote too, and an acquire's invalidation or an
 * atomic sends other threads' writes early (dsm__invalidate_copy,
 * dsm__flush_page_now).  Whoever sends them, a release must not hand out
 * its notices before every diff of its pages is at the home.  Taken before
 * any page lock. */
static pthread_mutex_t release_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int flushing_for_barrier;     /* DSM_CHECK=races */
/* DIFF messages this node sent whose acks have not all come back.  Diffs go
 * out under release_lock only, and each sender waits for its acks before
 * letting go of it, so the count drops to zero at the end of every such
 * wait.  A one-sided read (DSM_COMM=rma) of a page whose diff from this
 * node may still be on the way could overtake it (seen: tests/omp/critical
 * n2t2 lost updates, a thread refetching the page its neighbour was
 * invalidating-and-flushing); a PAGE_REQ cannot, since MPI keeps the order
 * of messages between two ranks.  So while this is non-zero, pages are
 * fetched by message. */
static uint32_t diffs_unacked;

static void send_diff(struct dsm_msg *m)
{
    __atomic_fetch_add(&diffs_unacked, 1, __ATOMIC_SEQ_CST);
    dsm__msg_send(m);
}

/* After the wait for a flush's acks (caller holds release_lock). */
static void diffs_acked(void)
{
    __atomic_store_n(&diffs_unacked, 0, __ATOMIC_SEQ_CST);
}

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

static int too_early(const struct dsm_wire_hdr *h, const void *payload)
{
    if (h->epoch <= __atomic_load_n(&dsm__g.epoch, __ATOMIC_ACQUIRE))
        return 0;
    defer(h, payload);       /* before any check: the page may not exist yet */
    return 1;
}

static void on_page_req(const struct dsm_wire_hdr *h);
static void on_prefetch_req(const struct dsm_wire_hdr *h, const unsigned char *pl);
static void on_diff(const struct dsm_wire_hdr *h, const unsigned char *pl);
static void on_flush_notice(const struct dsm_wire_hdr *h, const unsigned char *pl);

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
            if (d->h.type == DSM_MSG_PAGE_REQ)
                on_page_req(&d->h);
            else if (d->h.type == DSM_MSG_DIFF)
                on_diff(&d->h, d->payload);
            else if (d->h.type == DSM_MSG_FLUSH_NOTICE)
                on_flush_notice(&d->h, d->payload);
            else if (d->h.type == DSM_MSG_PREFETCH_REQ)
                on_prefetch_req(&d->h, d->payload);
            else if (d->h.type == DSM_MSG_UPDATE)
                dsm__on_update(&d->h, d->payload);
            else if (d->h.type == DSM_MSG_UNHOLD)
                dsm__on_unhold(&d->h, d->payload);
            else
                dsm__on_atomic_req(&d->h, d->payload);
            free(d);
        } else {
            pp = &d->next;
        }
    }
}

/* ---- the home side ---- */

/* Serve page p to node src, on tag DSM_TAG_PAGE + waiter (a fault's fetch or
 * one page of a prefetch batch). */
static void serve_page(size_t p, int src, uint32_t waiter)
{
    size_t ps = dsm__g.page_size;
    struct dsm_page *pg = &dsm__g.pages[p];
    struct dsm_msg *m;

    if (pg->state == DSM_P_UNALLOC || pg->home != dsm__g.rank)
        dsm__fatal("protocol error: rank %d asked for page %zu, which is %s here; "
                   "this is a libdsm bug or ranks made different allocations",
                   src, p, pg->state == DSM_P_UNALLOC ? "not allocated" : "not homed");
    /* Once this node makes ordered flushes (ordered.c), the page is copied
     * under its lock, after the protection: a zero-copy send reads the page
     * when it goes, and could carry a flag this node wrote after the serve
     * before the flush that orders it after its data. */
    const int copy = __atomic_load_n(&dsm__ordered_mode, __ATOMIC_ACQUIRE);
    m = dsm__msg_new(DSM_MSG_PAGE_REPLY, src, copy ? ps : 0);
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
    if (copy)
        /* As of this node's last release: written since, its twin. */
        memcpy(m->payload, (pg->flags & DSM_PF_TWIN) ? dsm__twin_page(p) : dsm__sys_page(p),
               ps);
    dsm__page_unlock(p);

    /* Zero copy: the page goes from our system view straight into the
     * requester's (see DSM_TAG_PAGE).  A home write racing with the send is
     * in this epoch's write notices and invalidates the copy at the next
     * release, before the requester may read the words it changed. */
    m->ext = copy ? (const void *)m->payload : (const void *)dsm__sys_page(p);
    m->ext_len = ps;
    m->tag = DSM_TAG_PAGE + (int)waiter;
    m->hdr.id = (uint32_t)p;          /* not sent (ext): for the trace */
    m->hdr.waiter = waiter;
    DSM_STAT_ADD(pages_served, 1);
    dsm__msg_send(m);
}

static void on_page_req(const struct dsm_wire_hdr *h)
{
    if (too_early(h, NULL) || dsm__held_defer(h, NULL))
        return;
    serve_page(h->id, h->src, h->waiter);
}

/* A prefetch batch: every page, in the order of the list, on one tag (the
 * requester posted its receives in that order; prefetch.c). */
static void on_prefetch_req(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    if (too_early(h, pl) || dsm__held_defer(h, pl))
        return;
    for (size_t i = 0; i < h->len / 4; i++) {
        uint32_t p;
        memcpy(&p, pl + 4 * i, 4);
        if (p >= dsm__g.npages)
            dsm__fatal("malformed PREFETCH_REQ from rank %d: page %u out of range",
                       h->src, p);
        serve_page(p, h->src, h->waiter);
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

    if (too_early(h, pl))
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
    if (h->flags & DSM_MF_LAST) {
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
        on_page_req(h);
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
    } else {
        struct dsm_ptrans t = dsm__page_transition(pg->state, DSM_EV_FETCHED, 0);
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
    /* Not while diffs of this node are on the way (above), nor once this
     * node takes part in ordered flushes: a home holds a page there until
     * every copy is up to date, and a one-sided read would not wait. */
    if (dsm__g.ops->get_page && !(dsm__g.pages[p].flags & DSM_PF_NOTRAP) &&
        !__atomic_load_n(&diffs_unacked, __ATOMIC_SEQ_CST) &&
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

/* ---- dispatch ---- */

static struct dsm_waiter *reply_waiter(const struct dsm_wire_hdr *h,
                                       enum dsm_wait_kind kind)
{
    struct dsm_waiter *w = dsm__waiter_at(h->waiter, kind);
    if (!w)
        dsm__fatal("malformed message from rank %d: type %u names waiter %u, "
                   "which is not waiting", h->src, h->type, h->waiter);
    return w;
}

void dsm__dispatch(const struct dsm_wire_hdr *h, const void *payload, int mpi_src,
                   int count)
{
    const unsigned char *pl = payload;
    struct dsm_wire_limits lim = {
        .rank = dsm__g.rank, .nodes = dsm__g.nodes, .npages = dsm__g.npages,
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
    switch (h->type) {
    case DSM_MSG_PAGE_REQ:
        if (h->id >= dsm__g.npages || h->len != 0)
            goto bad;
        on_page_req(h);
        break;
    case DSM_MSG_DIFF:
        on_diff(h, pl);
        break;
    case DSM_MSG_DIFF_ACK: {
        if (h->len != 0)
            goto bad;
        struct dsm_waiter *w = reply_waiter(h, DSM_WAIT_ACKS);
        if ((h->flags & DSM_MF_ORDERED) && w->ctx)
            __atomic_fetch_or((uint64_t *)w->ctx, h->arg, __ATOMIC_RELAXED);
        dsm__waiter_complete(w);
        break;
    }
    case DSM_MSG_UPDATE:
        if (!too_early(h, pl))
            dsm__on_update(h, pl);
        break;
    case DSM_MSG_UPDATE_ACK:
        if (h->len != 0)
            goto bad;
        dsm__waiter_complete(reply_waiter(h, DSM_WAIT_ACKS));
        break;
    case DSM_MSG_UNHOLD:
        if (h->len % 4)
            goto bad;
        if (!too_early(h, pl))
            dsm__on_unhold(h, pl);
        break;
    case DSM_MSG_LOCK_REL_ACK:
        if (h->len != 0 || h->id >= (uint32_t)dsm__g.cfg.max_locks ||
            h->id % (uint32_t)dsm__g.nodes != (uint32_t)h->src)
            goto bad;
        dsm__waiter_complete(reply_waiter(h, DSM_WAIT_RELEASE));
        break;
    case DSM_MSG_BARRIER_ENTER:
        if (dsm__g.rank != 0 || h->len % 4)
            goto bad;
        dsm__on_barrier_enter(h, pl);
        break;
    case DSM_MSG_BARRIER_RELEASE:
        if (h->len % sizeof(struct dsm_wire_notice) || h->src != 0)
            goto bad;
        reply_waiter(h, DSM_WAIT_BARRIER);
        dsm__on_barrier_release(h, pl);
        break;
    case DSM_MSG_LOCK_REQ:
        if (h->id >= (uint32_t)dsm__g.cfg.max_locks ||
            h->id % (uint32_t)dsm__g.nodes != (uint32_t)dsm__g.rank || h->len)
            goto bad;
        dsm__on_lock_req(h);
        break;
    case DSM_MSG_LOCK_GRANT:
        if (h->len % 4 || h->id >= (uint32_t)dsm__g.cfg.max_locks ||
            h->id % (uint32_t)dsm__g.nodes != (uint32_t)h->src)
            goto bad;
        reply_waiter(h, DSM_WAIT_GRANT);
        dsm__on_lock_grant(h, pl);
        break;
    case DSM_MSG_ATOMIC_REQ:
        if (h->id >= dsm__g.npages || h->len != sizeof(struct dsm_wire_atomic))
            goto bad;
        if (!too_early(h, pl))
            dsm__on_atomic_req(h, pl);
        break;
    case DSM_MSG_ATOMIC_REPLY:
        if (h->len != 0)
            goto bad;
        dsm__on_atomic_reply(h);
        break;
    case DSM_MSG_PREFETCH_REQ:
        if (h->len == 0 || h->len % 4 || h->len / 4 > DSM_PREFETCH_MAX)
            goto bad;
        on_prefetch_req(h, pl);
        break;
    case DSM_MSG_CALL_REQ:
        dsm__on_call_req(h, pl);
        break;
    case DSM_MSG_CALL_REPLY:
        dsm__on_call_reply(h, pl);
        break;
    case DSM_MSG_FLUSH_NOTICE:
        if (h->len % 4)
            goto bad;
        on_flush_notice(h, pl);
        break;
    case DSM_MSG_LOCK_REL:
        if (h->id >= (uint32_t)dsm__g.cfg.max_locks ||
            h->id % (uint32_t)dsm__g.nodes != (uint32_t)dsm__g.rank || h->len % 4)
            goto bad;
        dsm__on_lock_rel(h, pl);
        break;
    }
    return;
bad:
    dsm__fatal("malformed message from rank %d: type %u, id %u, length %u out of range",
               h->src, h->type, h->id, h->len);
}

/* ---- flushing this node's writes (release and barrier) ---- */

struct diff_batch {
    struct dsm_msg *m;       /* chunk being filled, or NULL */
};

static void batch_send(struct dsm_msg *m, int last, uint32_t waiter)
{
    if (last) {
        m->hdr.flags |= DSM_MF_LAST;
        m->hdr.waiter = waiter;
        dsm__waiter_add_expected(waiter, 1);
    }
    send_diff(m);
}

/* Append the diff of page p (dirty, non-home, under its lock) to its home's
 * chunk; a full chunk goes out at once, without asking for an ack. */
static void batch_add(struct diff_batch *b, size_t p, size_t maxp, uint32_t waiter)
{
    size_t ps = dsm__g.page_size, need = sizeof(struct dsm_wire_diff) + dsm__diff_max_size(ps);
    int home = dsm__g.pages[p].home;
    struct dsm_wire_diff e;

    if (b[home].m && b[home].m->hdr.len + need > maxp) {
        batch_send(b[home].m, 0, waiter);
        b[home].m = NULL;
    }
    if (!b[home].m) {
        b[home].m = dsm__msg_new(DSM_MSG_DIFF, home, maxp);
        b[home].m->hdr.len = 0;
        if (flushing_for_barrier)
            b[home].m->hdr.flags |= DSM_MF_BARRIER;
    }
    struct dsm_msg *m = b[home].m;
    size_t len = dsm__diff_make(dsm__twin_page(p), dsm__sys_page(p), ps,
                                m->payload + m->hdr.len + sizeof e, need - sizeof e);
    if (len == (size_t)-1)
        dsm__fatal("internal error: diff of page %zu overflowed its buffer", p);
    if (len == 0)
        return;                      /* written, but back to the old values */
    e.page = (uint32_t)p;
    e.len = (uint32_t)len;
    memcpy(m->payload + m->hdr.len, &e, sizeof e);
    m->hdr.len += (uint32_t)(sizeof e + len);
    DSM_STAT_ADD(diffs, 1);
    DSM_STAT_ADD(diff_bytes, len);
}

/* A home's stack page stays writable: its twin takes the page's bytes by a
 * diff, so that a byte written meanwhile still differs.  Page lock held. */
static void refresh_stack_twin(size_t p)
{
    size_t ps = dsm__g.page_size, cap = dsm__diff_max_size(ps);
    unsigned char *d = malloc(cap);
    if (!d)
        dsm__fatal("out of private memory refreshing the twin of page %zu", p);
    size_t n = dsm__diff_make(dsm__twin_page(p), dsm__sys_page(p), ps, d, cap);
    if (n != (size_t)-1 && n)
        (void)dsm__diff_apply(dsm__twin_page(p), ps, d, n);
    free(d);
}

void dsm__flush(const uint32_t *list, size_t n, int at_barrier)
{
    struct dsm_global *g = &dsm__g;
    struct dsm_protect_batch pb = { 0, 0, 0 };
    struct diff_batch *b;
    size_t maxp = dsm__msg_max_payload();
    uint32_t waiter;

    if (n == 0)
        return;
    b = calloc((size_t)g->nodes, sizeof *b);
    unsigned char *protected_ = calloc(n, 1);
    if (!b || !protected_)
        dsm__fatal("out of private memory flushing %zu pages", n);
    waiter = dsm__waiter_get(DSM_WAIT_ACKS, 0, NULL);
    pthread_mutex_lock(&flush_lock);
    flushing_for_barrier = at_barrier && dsm__g.cfg.check_races;
    /* Write-protect every written page first (runs coalesced), so that no
     * write can slip in between making a page's diff and downgrading it; a
     * thread that writes meanwhile traps and waits for its page lock.  The
     * state is read without the page lock here, and until the loop below
     * takes a page's lock another thread may make it writable again (a
     * fault after the look, or at a home a serve then a fault): if any page
     * was upgraded since, the loop protects again under the lock. */
    uint32_t upgrades0 = __atomic_load_n(&dsm__upgrades, __ATOMIC_SEQ_CST);
    for (size_t i = 0; i < n; i++)
        if (g->pages[list[i]].state == DSM_P_READ_WRITE &&
            !(g->pages[list[i]].flags & DSM_PF_NOTRAP && g->pages[list[i]].home == g->rank)) {
            dsm__pb_add(&pb, list[i], PROT_READ);
            protected_[i] = 1;
        }
    dsm__pb_flush(&pb);
    for (size_t i = 0; i < n; i++) {
        size_t p = list[i];
        struct dsm_page *pg = &g->pages[p];
        int home = pg->home == g->rank;
        dsm__page_lock(p);
        if ((pg->flags & DSM_PF_MARKED) && pg->state == DSM_P_READ_WRITE &&
            !(home && (pg->flags & DSM_PF_NOTRAP)) &&
            (!protected_[i] || __atomic_load_n(&dsm__upgrades, __ATOMIC_SEQ_CST) != upgrades0))
            dsm__vm_protect(p, 1, PROT_READ);     /* made writable since the look */
        if (pg->flags & DSM_PF_MARKED) {
            if (!home && pg->state == DSM_P_READ_WRITE && (pg->flags & DSM_PF_TWIN))
                batch_add(b, p, maxp, waiter);
            if (home && (pg->flags & DSM_PF_TWIN) && at_barrier && g->cfg.check_races)
                dsm__race_home(p);      /* DSM_CHECK=races twins home pages */
            struct dsm_ptrans t = dsm__page_transition(pg->state, DSM_EV_DOWNGRADE, home);
            if (!(t.actions & DSM_ACT_ERROR) && !(home && (pg->flags & DSM_PF_NOTRAP)))
                pg->state = t.next;
            pg->flags &= (uint8_t)~DSM_PF_MARKED;
            if (home && (pg->flags & DSM_PF_NOTRAP) && (pg->flags & DSM_PF_TWIN) &&
                !g->cfg.check_races)
                refresh_stack_twin(p);  /* a stack keeps its twin (ordered flush) */
            else
                pg->flags &= (uint8_t)~DSM_PF_TWIN;
        }
        dsm__page_unlock(p);
    }
    flushing_for_barrier = 0;
    pthread_mutex_unlock(&flush_lock);
    /* Count every ack before sending any last chunk: an ack that arrived
     * between two sends could otherwise see the count at zero and end the
     * wait early. */
    int lasts = 0;
    for (int r = 0; r < g->nodes; r++)
        lasts += b[r].m != NULL;
    if (lasts)
        dsm__waiter_add_expected(waiter, lasts);
    for (int r = 0; r < g->nodes; r++)
        if (b[r].m) {
            b[r].m->hdr.flags |= DSM_MF_LAST;
            b[r].m->hdr.waiter = waiter;
            send_diff(b[r].m);
        }
    dsm__waiter_wait(waiter);
    dsm__waiter_put(waiter);
    diffs_acked();
    free(b);
    free(protected_);
}


size_t dsm__release_writes(int at_barrier)
{
    uint32_t *list;
    pthread_mutex_lock(&release_lock);
    dsm__notrap_mark();
    size_t n = dsm__pt_take_marked(&list);
    dsm__flush(list, n, at_barrier);
    /* A dsm_flush after this release announces these pages (flush.c); a
     * barrier's own notices cover them, and it empties the list. */
    if (!at_barrier)
        dsm__pt_add_announce(list, n);
    pthread_mutex_unlock(&release_lock);
    free(list);
    return n;
}

/* ---- the ordered release of dsm_flush (ordered.c says why and how) ---- */

/* One group of an ordered release: the pages of one home, as chunks of at
 * most one message's payload each (diffs for another home's pages, whole
 * pages for this node's own). */
struct ochunk { uint32_t len; unsigned char *buf; };
struct ogroup {
    int home;
    struct ochunk *c;
    size_t nc, capc;
    uint32_t *pages;
    size_t np, capp;
    uint64_t targets;       /* own group: the nodes that may hold copies */
    int whole;              /* own group of whole pages (DSM_MF_FULL) */
};

static void *grow(void *v, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return v;
    size_t nc = *cap ? *cap * 2 : 8;
    void *w = realloc(v, nc * elem);
    if (!w)
        dsm__fatal("out of private memory for an ordered flush");
    *cap = nc;
    return w;
}

/* Room for need bytes in the group's last chunk (a new chunk if not). */
static unsigned char *og_room(struct ogroup *g, size_t need, size_t maxp)
{
    if (!g->nc || g->c[g->nc - 1].len + need > maxp) {
        g->c = grow(g->c, &g->capc, g->nc, sizeof *g->c);
        g->c[g->nc].len = 0;
        g->c[g->nc].buf = malloc(maxp);
        if (!g->c[g->nc].buf)
            dsm__fatal("out of private memory for an ordered flush");
        g->nc++;
    }
    return g->c[g->nc - 1].buf + g->c[g->nc - 1].len;
}

static void og_page(struct ogroup *g, uint32_t p, size_t used)
{
    g->c[g->nc - 1].len += (uint32_t)used;
    g->pages = grow(g->pages, &g->capp, g->np, sizeof *g->pages);
    g->pages[g->np++] = p;
}

static int pg_is_home_stack(size_t p)
{
    return dsm__g.pages[p].home == dsm__g.rank && (dsm__g.pages[p].flags & DSM_PF_NOTRAP);
}

/* Page p's diff (a non-home page) or its whole content (a home page), at
 * the end of its home's group; under the page's lock. */
static void og_add(struct ogroup *g, size_t p, int whole, size_t maxp)
{
    size_t ps = dsm__g.page_size;
    struct dsm_wire_diff e = { (uint32_t)p, 0 };
    size_t need = sizeof e + (whole ? ps : dsm__diff_max_size(ps));
    unsigned char *out = og_room(g, need, maxp);
    if (whole) {
        memcpy(out + sizeof e, dsm__sys_page(p), ps);
        e.len = (uint32_t)ps;
    } else {
        size_t len = dsm__diff_make(dsm__twin_page(p), dsm__sys_page(p), ps,
                                    out + sizeof e, need - sizeof e);
        if (len == (size_t)-1)
            dsm__fatal("internal error: diff of page %zu overflowed its buffer", p);
        if (len == 0)
            return;                  /* written, but back to the old values */
        if (pg_is_home_stack(p))
            /* A stack stays writable and keeps its twin: the twin takes the
             * bytes sent, so that a write after the diff was made still
             * differs next time (a copy of the page would lose it). */
            (void)dsm__diff_apply(dsm__twin_page(p), ps, out + sizeof e, len);
        e.len = (uint32_t)len;
        DSM_STAT_ADD(diffs, 1);
        DSM_STAT_ADD(diff_bytes, len);
    }
    memcpy(out, &e, sizeof e);
    og_page(g, (uint32_t)p, sizeof e + e.len);
}

/* Step 2 of ordered.c: every node in a group's targets gets the group's
 * chunks, all groups' in one sequence per node, the last marked LAST (the
 * node reopens its copies then); wait until every chunk is applied. */
static void og_update_all(const struct ogroup *grp, size_t ng, const uint64_t *gt)
{
    int total = 0;
    for (int r = 0; r < dsm__g.nodes; r++)
        for (size_t k = 0; k < ng; k++)
            if ((gt[k] >> r) & 1)
                total += (int)grp[k].nc;
    if (!total)
        return;
    uint32_t w = dsm__waiter_get(DSM_WAIT_ACKS, 0, NULL);
    dsm__waiter_note(w, -1, grp[0].np ? grp[0].pages[0] : 0);
    dsm__waiter_add_expected(w, total);
    for (int r = 0; r < dsm__g.nodes; r++) {
        int left = 0;
        for (size_t k = 0; k < ng; k++)
            if ((gt[k] >> r) & 1)
                left += (int)grp[k].nc;
        for (size_t k = 0; k < ng && left; k++) {
            if (!((gt[k] >> r) & 1))
                continue;
            for (size_t i = 0; i < grp[k].nc; i++) {
                struct dsm_msg *m = dsm__msg_new(DSM_MSG_UPDATE, r, grp[k].c[i].len);
                memcpy(m->payload, grp[k].c[i].buf, grp[k].c[i].len);
                m->hdr.len = grp[k].c[i].len;
                m->hdr.waiter = w;
                if (grp[k].whole)
                    m->hdr.flags |= DSM_MF_FULL;
                if (--left == 0)
                    m->hdr.flags |= DSM_MF_LAST;
                dsm__msg_send(m);
            }
        }
    }
    dsm__waiter_wait(w);
    dsm__waiter_put(w);
}

/* Step 1: another home's diffs, applied, shut and held there; its ack
 * names the nodes that may hold copies (into *targets). */
static uint32_t og_send_diffs(const struct ogroup *g, uint64_t *targets)
{
    uint32_t w = dsm__waiter_get(DSM_WAIT_ACKS, 0, targets);
    dsm__waiter_note(w, g->home, g->pages[0]);
    dsm__waiter_add_expected(w, 1);
    for (size_t i = 0; i < g->nc; i++) {
        struct dsm_msg *m = dsm__msg_new(DSM_MSG_DIFF, g->home, g->c[i].len);
        memcpy(m->payload, g->c[i].buf, g->c[i].len);
        m->hdr.len = g->c[i].len;
        m->hdr.flags |= DSM_MF_ORDERED;
        if (i + 1 == g->nc) {
            m->hdr.flags |= DSM_MF_LAST;
            m->hdr.waiter = w;
        }
        send_diff(m);
    }
    return w;
}

static void flush_ordered(const uint32_t *list, size_t n)
{
    struct dsm_global *g = &dsm__g;
    struct dsm_protect_batch pb = { 0, 0, 0 };
    size_t maxp = dsm__msg_max_payload(), ngroups = 0;
    uint64_t all = g->nodes >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << g->nodes) - 1;
    uint64_t me = (uint64_t)1 << g->rank;

    if (n == 0)
        return;
    /* Groups by home; this node's own pages sent whole (a stack without a
     * twin) are a group of their own, key g->nodes. */
    int *gi = malloc(((size_t)g->nodes + 1) * sizeof *gi);
    struct ogroup *grp = calloc((size_t)g->nodes + 1, sizeof *grp);
    unsigned char *protected_ = calloc(n, 1);
    if (!gi || !grp || !protected_)
        dsm__fatal("out of private memory flushing %zu pages", n);
    for (int r = 0; r <= g->nodes; r++)
        gi[r] = -1;
    pthread_mutex_lock(&flush_lock);
    /* As in dsm__flush: every written page write-protected first. */
    uint32_t upgrades0 = __atomic_load_n(&dsm__upgrades, __ATOMIC_SEQ_CST);
    for (size_t i = 0; i < n; i++)
        if (g->pages[list[i]].state == DSM_P_READ_WRITE &&
            !(g->pages[list[i]].flags & DSM_PF_NOTRAP && g->pages[list[i]].home == g->rank)) {
            dsm__pb_add(&pb, list[i], PROT_READ);
            protected_[i] = 1;
        }
    dsm__pb_flush(&pb);
    for (size_t i = 0; i < n; i++) {
        size_t p = list[i];
        struct dsm_page *pg = &g->pages[p];
        int home = pg->home == g->rank;
        dsm__page_lock(p);
        if ((pg->flags & DSM_PF_MARKED) && pg->state == DSM_P_READ_WRITE &&
            !(home && (pg->flags & DSM_PF_NOTRAP)) &&
            (!protected_[i] || __atomic_load_n(&dsm__upgrades, __ATOMIC_SEQ_CST) != upgrades0))
            dsm__vm_protect(p, 1, PROT_READ);
        if (pg->flags & DSM_PF_MARKED) {
            int to = -1, whole = 0;
            uint64_t holders = 0;
            if (!home && pg->state == DSM_P_READ_WRITE && (pg->flags & DSM_PF_TWIN)) {
                to = pg->home;
            } else if (home) {
                /* The home's own writes since its copies were made: its twin
                 * (made at the write that trapped after a serve, or at the
                 * serve of a stack page) against the page.  Without a twin
                 * nothing was written since the copies left, except on a
                 * stack page (no twin yet: the whole page). */
                holders = (dsm__remote_reads() ? all : pg->copyset) & ~me;
                if (holders && ((pg->flags & DSM_PF_TWIN) || (pg->flags & DSM_PF_NOTRAP))) {
                    to = g->rank;
                    whole = !(pg->flags & DSM_PF_TWIN);
                }
            }
            if (to >= 0) {
                int key = whole ? g->nodes : to;
                if (gi[key] < 0) {
                    gi[key] = (int)ngroups;
                    grp[ngroups].whole = whole;
                    grp[ngroups++].home = to;
                }
                struct ogroup *og = &grp[gi[key]];
                size_t np0 = og->np;
                og_add(og, p, whole, maxp);
                if (to == g->rank && og->np > np0) {
                    /* Held from here (page lock held): a request for it
                     * waits until the copies are up to date. */
                    dsm__hold(p);
                    og->targets |= holders;
                }
            }
            struct dsm_ptrans t = dsm__page_transition(pg->state, DSM_EV_DOWNGRADE, home);
            if (!(t.actions & DSM_ACT_ERROR) && !(home && (pg->flags & DSM_PF_NOTRAP)))
                pg->state = t.next;
            pg->flags &= (uint8_t)~DSM_PF_MARKED;
            if (!(home && (pg->flags & DSM_PF_NOTRAP)))
                pg->flags &= (uint8_t)~DSM_PF_TWIN;
        }
        dsm__page_unlock(p);
    }
    pthread_mutex_unlock(&flush_lock);
    /* ordered.c, steps 1 to 3. */
    uint64_t *gt = calloc(ngroups ? ngroups : 1, sizeof *gt);
    uint32_t *gw = calloc(ngroups ? ngroups : 1, sizeof *gw);
    if (!gt || !gw)
        dsm__fatal("out of private memory flushing %zu pages", n);
    for (size_t k = 0; k < ngroups; k++)
        if (grp[k].np && grp[k].home != g->rank)
            gw[k] = og_send_diffs(&grp[k], &gt[k]);
    for (size_t k = 0; k < ngroups; k++) {
        if (!grp[k].np)
            continue;
        if (grp[k].home != g->rank) {
            dsm__waiter_wait(gw[k]);
            dsm__waiter_put(gw[k]);
            gt[k] &= ~me & ~((uint64_t)1 << grp[k].home);
        } else {
            gt[k] = grp[k].targets & ~me;
        }
    }
    og_update_all(grp, ngroups, gt);
    for (size_t k = 0; k < ngroups; k++) {
        if (!grp[k].np)
            continue;
        if (grp[k].home != g->rank)
            dsm__msg_send_pages(DSM_MSG_UNHOLD, grp[k].home, grp[k].pages, grp[k].np,
                                0, 0, 0, 0, 0);
        else
            dsm__unhold_own(grp[k].pages, grp[k].np);
    }
    free(gt);
    free(gw);
    diffs_acked();
    for (size_t k = 0; k < ngroups; k++) {
        for (size_t i = 0; i < grp[k].nc; i++)
            free(grp[k].c[i].buf);
        free(grp[k].c);
        free(grp[k].pages);
    }
    free(grp);
    free(gi);
    free(protected_);
}

size_t dsm__release_writes_ordered(void)
{
    uint32_t *list;
    __atomic_store_n(&dsm__ordered_mode, 1, __ATOMIC_RELEASE);
    if (!__atomic_load_n(&dsm__home_tracked, __ATOMIC_ACQUIRE))
        dsm__track_home_pages();
    pthread_mutex_lock(&release_lock);
    dsm__notrap_mark();
    size_t n = dsm__pt_take_marked(&list);
    flush_ordered(list, n);
    dsm__pt_add_announce(list, n);
    pthread_mutex_unlock(&release_lock);
    free(list);
    return n;
}

void dsm__flush_notify(const uint32_t *pages, size_t n)
{
    struct dsm_global *g = &dsm__g;
    uint32_t waiter = dsm__waiter_get(DSM_WAIT_ACKS, 0, NULL);
    dsm__waiter_add_expected(waiter, g->nodes - 1);
    for (int r = 0; r < g->nodes; r++)
        if (r != g->rank)
            dsm__msg_send_pages(DSM_MSG_FLUSH_NOTICE, r, pages, n, 0, waiter, 0, 0, 0);
    dsm__waiter_wait(waiter);
    dsm__waiter_put(waiter);
}

/* Another node's dsm_flush released these pages: this node's next flush
 * drops its copies of them.  Acknowledged once the pages are recorded, so
 * that the sender's flush returns only when every node will drop them. */
static void on_flush_notice(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    if (too_early(h, pl))
        return;
    dsm__pt_add_pending((const uint32_t *)(const void *)pl, h->len / 4);
    if (h->flags & DSM_MF_LAST) {
        struct dsm_msg *m = dsm__msg_new(DSM_MSG_DIFF_ACK, h->src, 0);
        m->hdr.waiter = h->waiter;
        dsm__msg_send(m);
    }
}

void dsm__flush_page_now(size_t p)
{
    struct dsm_page *pg = &dsm__g.pages[p];
    size_t maxp = sizeof(struct dsm_wire_diff) + dsm__diff_max_size(dsm__g.page_size);
    struct diff_batch b1[DSM_MAX_NODES];
    uint32_t waiter;

    pthread_mutex_lock(&release_lock);
    dsm__page_lock(p);
    if (pg->home == dsm__g.rank || pg->state != DSM_P_READ_WRITE ||
        !(pg->flags & DSM_PF_TWIN)) {
        dsm__page_unlock(p);
        pthread_mutex_unlock(&release_lock);
        return;
    }
    /* Stop this node's writers while the diff is taken and the twin moves
     * up to the page: they trap, wait for the lock and retry. */
    memset(b1, 0, sizeof b1);
    dsm__vm_protect(p, 1, PROT_READ);
    waiter = dsm__waiter_get(DSM_WAIT_ACKS, 0, NULL);
    batch_add(b1, p, maxp, waiter);
    memcpy(dsm__twin_page(p), dsm__sys_page(p), dsm__g.page_size);
    dsm__vm_protect(p, 1, PROT_READ | PROT_WRITE);
    struct dsm_msg *m = b1[pg->home].m;
    dsm__page_unlock(p);
    if (m)
        batch_send(m, 1, waiter);
    dsm__waiter_wait(waiter);
    dsm__waiter_put(waiter);
    diffs_acked();
    pthread_mutex_unlock(&release_lock);
}

/* Returns 1 when the page turned out dirty but the caller does not hold
 * release_lock: try again with it. */
static int invalidate_locked(size_t p, struct dsm_protect_batch *pb, int may_flush)
{
    struct dsm_page *pg = &dsm__g.pages[p];
    struct dsm_msg *m = NULL;
    uint32_t waiter = 0;

    dsm__page_lock(p);
    if (pg->state == DSM_P_UNALLOC || pg->home == dsm__g.rank) {
        dsm__page_unlock(p);
        return 0;
    }
    if (pg->state == DSM_P_IN_FLIGHT) {
        pg->flags |= DSM_PF_STALE;
        dsm__page_unlock(p);
        return 0;
    }
    if (pg->state == DSM_P_PREFETCHED) {
        /* Never opened: still PROT_NONE, no twin; the prefetch was wasted. */
        pg->state = dsm__page_transition(pg->state, DSM_EV_INVALIDATE, 0).next;
        dsm__page_unlock(p);
        DSM_STAT_ADD(invalidations, 1);
        DSM_STAT_ADD(prefetch_wasted, 1);
        return 0;
    }
    struct dsm_ptrans t = dsm__page_transition(pg->state, DSM_EV_INVALIDATE, 0);
    if (t.next == pg->state) {
        dsm__page_unlock(p);
        return 0;
    }
    if (pg->state == DSM_P_READ_WRITE && (pg->flags & DSM_PF_TWIN)) {
        if (!may_flush) {
            dsm__page_unlock(p);
            return 1;
        }
        /* Our own unreleased writes share the page with the notice: stop
         * writers, send their diff now (before any refetch from this node
         * can reach the home), then drop the copy. */
        size_t maxp = sizeof(struct dsm_wire_diff) + dsm__diff_max_size(dsm__g.page_size);
        struct diff_batch b1[DSM_MAX_NODES];
        memset(b1, 0, sizeof b1);
        dsm__vm_protect(p, 1, PROT_NONE);
        waiter = dsm__waiter_get(DSM_WAIT_ACKS, 0, NULL);
        batch_add(b1, p, maxp, waiter);
        m = b1[pg->home].m;
        pg->state = DSM_P_INVALID;
        pg->flags &= (uint8_t)~DSM_PF_TWIN;
        if (m)
            batch_send(m, 1, waiter);
        dsm__page_unlock(p);
        dsm__waiter_wait(waiter);
        dsm__waiter_put(waiter);
        diffs_acked();
        DSM_STAT_ADD(invalidations, 1);
        return 0;
    }
    if (pb)
        dsm__pb_add(pb, p, PROT_NONE);
    else
        dsm__vm_protect(p, 1, PROT_NONE);
    pg->state = t.next;
    pg->flags &= (uint8_t)~DSM_PF_TWIN;
    dsm__page_unlock(p);
    DSM_STAT_ADD(invalidations, 1);
    return 0;
}

void dsm__invalidate_copy(size_t p, struct dsm_protect_batch *pb)
{
    /* Under release_lock (before the page lock): a dirty copy's diff goes
     * out here; and a clean copy may be clean only because another thread
     * of this node is flushing it right now, its diff made but not yet at
     * the home.  Dropping it then and fetching it again could bring back
     * the page without this node's own writes (seen: a thread lost its own
     * increment across a lock acquire).  Waiting for the flush to finish
     * prevents that. */
    pthread_mutex_lock(&release_lock);
    invalidate_locked(p, pb, 1);
    pthread_mutex_unlock(&release_lock);
}

void dsm__protocol_init(void)
{
    dsm__fetch_epoch = 0;
    dhead = NULL;
    dtail = &dhead;
}
