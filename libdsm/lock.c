/*
 * lock.c - DSM locks: a manager per lock (id % nodes) keeps the holder, a
 * FIFO of waiting requesters, and the write notices of the releases since the
 * last barrier.
 *
 * Release (application thread): flush this node's diffs to their homes and
 * wait for the acks, then hand the manager every page this node wrote since
 * the last barrier and every page it learned of from grants since; the
 * manager's ack is waited for only at the next barrier.  Acquire: ask the
 * manager; the grant carries the notices accumulated in the current epoch,
 * and the acquirer invalidates its copies of those pages.  Sending all pages written since the barrier (not
 * only since the last release) keeps it right when several threads of a node
 * hold different locks at once; passing on the learned ones keeps a chain of
 * different locks right (A writes x, releases L1; B acquires L1, releases
 * L2; C acquires L2 and sees x).
 *
 * A lock managed by the caller's own node takes no message: the acquiring
 * or releasing application thread runs the manager's code itself (a lock
 * that is free is granted at once; a requester that must wait is queued as
 * a remote one is, and its grant comes as a message from this node to
 * itself when the holder releases).  Only the release's flush still talks
 * to the homes of the pages written.
 *
 * Manager side: on_lock_* run under the progress token; they and the
 * application threads' local path take mgr_mu, so that the manager's
 * state changes one request at a time.  Lock order: mgr_mu, then the
 * transport's own locks (a grant is sent under mgr_mu).
 */
#include <stdlib.h>
#include <string.h>

#include "dsm_internal.h"

struct lock_waiter { int node; uint32_t waiter; uint32_t epoch; };

struct mlock {
    int held, holder;
    struct lock_waiter *q;          /* FIFO of requesters */
    size_t qhead, qn, qcap;
    uint32_t *notices;
    size_t n, cap, sorted;          /* sorted: prefix length already deduplicated */
    uint32_t notice_epoch;
};

static struct mlock *locks;          /* locks managed here: id / nodes */
static size_t nlocal;
static pthread_mutex_t mgr_mu = PTHREAD_MUTEX_INITIALIZER;

struct grant_ctx { uint32_t *pages; size_t n, cap; int busy; };

int dsm__lock_init(void)
{
    int n = dsm__g.nodes, me = dsm__g.rank, max = dsm__g.cfg.max_locks;
    nlocal = (size_t)(max / n + (me < max % n ? 1 : 0));
    locks = calloc(nlocal ? nlocal : 1, sizeof *locks);
    return locks ? 0 : -DSM_ENOMEM;
}

static void check_id(const char *func, int id)
{
    DSM_CHECK_RUNNING_AS(func);
    if (id < 0 || id >= dsm__g.cfg.max_locks)
        dsm__fatal("%s(%d): lock id out of range; ids go from 0 to %d "
                   "(raise DSM_MAX_LOCKS for more)", func, id, dsm__g.cfg.max_locks - 1);
}

static int grow_u32(uint32_t **a, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 64;
    while (nc < need)
        nc *= 2;
    void *p = realloc(*a, nc * sizeof **a);
    if (!p)
        return -1;
    *a = p;
    *cap = nc;
    return 0;
}

/* ---- manager ---- */

static void dedup(struct mlock *l)
{
    if (l->sorted == l->n)
        return;
    qsort(l->notices, l->n, sizeof *l->notices, dsm__cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        if (k == 0 || l->notices[k - 1] != l->notices[i])
            l->notices[k++] = l->notices[i];
    l->n = l->sorted = k;
}

/* The number of l's notices a grant to a requester of epoch `epoch`
 * carries (the first ones of l->notices).  mgr_mu. */
static size_t notices_for(struct mlock *l, uint32_t epoch)
{
    /* Notices of an older epoch were covered by the barrier since. */
    if (l->notice_epoch < epoch)
        return 0;
    dedup(l);
    return l->n;
}

static void grant(struct mlock *l, uint32_t id, int node, uint32_t waiter, uint32_t epoch)
{
    l->held = 1;
    l->holder = node;
    dsm__msg_send_pages(DSM_MSG_LOCK_GRANT, node, l->notices, notices_for(l, epoch), id,
                        waiter, 0, 0, 0);
}

/* Requester (node, waiter, epoch) waits for the held lock l. mgr_mu. */
static void enqueue(struct mlock *l, uint32_t id, int node, uint32_t waiter, uint32_t epoch)
{
    if (l->qn == l->qcap) {
        size_t nc = l->qcap ? l->qcap * 2 : 8;
        struct lock_waiter *q = malloc(nc * sizeof *q);
        if (!q)
            dsm__fatal("out of private memory queueing for lock %u", id);
        for (size_t i = 0; i < l->qn; i++)
            q[i] = l->q[(l->qhead + i) % l->qcap];
        free(l->q);
        l->q = q;
        l->qcap = nc;
        l->qhead = 0;
    }
    struct lock_waiter *w = &l->q[(l->qhead + l->qn) % l->qcap];
    w->node = node;
    w->waiter = waiter;
    w->epoch = epoch;
    l->qn++;
}

static void on_lock_req(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    (void)pl;
    if (h->id >= (uint32_t)dsm__g.cfg.max_locks ||
        h->id % (uint32_t)dsm__g.nodes != (uint32_t)dsm__g.rank || h->len)
        dsm__msg_malformed(h);
    struct mlock *l = &locks[h->id / (uint32_t)dsm__g.nodes];

    pthread_mutex_lock(&mgr_mu);
    if (!l->held)
        grant(l, h->id, h->src, h->waiter, h->epoch);
    else if (h->flags & DSM_MF_TRY)
        dsm__msg_send_pages(DSM_MSG_LOCK_GRANT, h->src, NULL, 0, h->id, h->waiter,
                            DSM_MF_BUSY, 0, 0);
    else
        enqueue(l, h->id, h->src, h->waiter, h->epoch);
    pthread_mutex_unlock(&mgr_mu);
}

/* Node src releases lock id (l): add its notices of epoch ne (pages[n],
 * one chunk of them).  mgr_mu. */
static void add_notices(struct mlock *l, uint32_t id, int src, uint16_t flags,
                        uint32_t ne, const uint32_t *pages, size_t n)
{
    if (!l->held || (l->holder != src && !(flags & DSM_MF_HANDOFF)))
        dsm__fatal("rank %d released lock %u, which it does not hold (%s); every "
                   "dsm_lock_release must follow a dsm_lock_acquire of the same id",
                   src, id, l->held ? "another rank holds it" : "it is free");
    /* The notices' epoch: the releaser's when it took its list, or
     * the next one when a thread of the releaser released the lock while
     * another was in a barrier (those writes are the next interval's). */
    if (ne > l->notice_epoch || l->n == 0) {
        l->n = l->sorted = 0;
        l->notice_epoch = ne;
    }
    if (grow_u32(&l->notices, &l->cap, l->n + n))
        dsm__fatal("out of private memory for the notices of lock %u", id);
    for (size_t i = 0; i < n; i++) {
        if (pages[i] >= dsm__g.npages)
            dsm__fatal("malformed LOCK_REL from rank %d: page %u out of range",
                       src, pages[i]);
        l->notices[l->n++] = pages[i];
    }
}

/* The release of lock id (l) is complete: the next requester gets it.
 * mgr_mu. */
static void pass_on(struct mlock *l, uint32_t id)
{
    if (l->qn) {
        struct lock_waiter w = l->q[l->qhead];
        l->qhead = (l->qhead + 1) % l->qcap;
        l->qn--;
        grant(l, id, w.node, w.waiter, w.epoch);
    } else {
        l->held = 0;
    }
}

static void on_lock_rel(const struct dsm_wire_hdr *h, const unsigned char *payload)
{
    if (h->id >= (uint32_t)dsm__g.cfg.max_locks ||
        h->id % (uint32_t)dsm__g.nodes != (uint32_t)dsm__g.rank || h->len % 4)
        dsm__msg_malformed(h);
    struct mlock *l = &locks[h->id / (uint32_t)dsm__g.nodes];

    pthread_mutex_lock(&mgr_mu);
    add_notices(l, h->id, h->src, h->flags, (uint32_t)h->arg,
                (const uint32_t *)(const void *)payload, h->len / 4);
    if (h->flags & DSM_MF_LAST) {
        struct dsm_msg *m = dsm__msg_new(DSM_MSG_LOCK_REL_ACK, h->src, 0);
        m->hdr.waiter = h->waiter;
        m->hdr.id = h->id;
        dsm__msg_send(m);
        pass_on(l, h->id);
    }
    pthread_mutex_unlock(&mgr_mu);
}

/* ---- requester ---- */

/* Releases in flight.  A release to another node's manager does not wait
 * for its LOCK_REL_ACK: the lock stays held at the manager until the
 * LOCK_REL arrives, so no acquirer gets it before the releaser's notices
 * are there, whatever order the messages take (the release's diffs are
 * acknowledged by their homes before the LOCK_REL is sent).  The acks are
 * counted, and a barrier waits, before it enters, for as many acks as this
 * node had sent releases then (dsm__lock_wait_releases): the releases made
 * before the barrier reach their managers before it ends (a bystander's
 * release meanwhile belongs to the next interval anyway, and cannot keep
 * the barrier waiting), and none is still in flight when dsm_finalize
 * shuts the communication down.  rel_mu guards the counts and the
 * published waiter; never held while waiting. */
static pthread_mutex_t rel_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rel_sent, rel_acked, rel_target;
static int rel_waiting;
static uint32_t rel_waiter;

void dsm__lock_wait_releases(void)
{
    pthread_mutex_lock(&rel_mu);
    if (rel_acked >= rel_sent) {
        pthread_mutex_unlock(&rel_mu);
        return;
    }
    uint32_t id = dsm__waiter_get(DSM_WAIT_RELEASE, 1, NULL);
    dsm__waiter_note(id, -1, rel_sent - rel_acked);
    rel_target = rel_sent;
    rel_waiter = id;
    rel_waiting = 1;
    pthread_mutex_unlock(&rel_mu);
    dsm__waiter_wait(id);
    dsm__waiter_put(id);
}

static void on_lock_grant(const struct dsm_wire_hdr *h, const unsigned char *payload)
{
    if (h->len % 4 || h->id >= (uint32_t)dsm__g.cfg.max_locks ||
        h->id % (uint32_t)dsm__g.nodes != (uint32_t)h->src)
        dsm__msg_malformed(h);
    struct dsm_waiter *w = dsm__reply_waiter(h, DSM_WAIT_GRANT);
    struct grant_ctx *c = w->ctx;
    size_t n = h->len / 4;

    if (grow_u32(&c->pages, &c->cap, c->n + n))
        dsm__fatal("out of private memory for %zu lock notices", c->n + n);
    memcpy(c->pages + c->n, payload, n * 4);
    for (size_t i = 0; i < n; i++)
        if (c->pages[c->n + i] >= dsm__g.npages)
            dsm__fatal("malformed LOCK_GRANT: page %u out of range", c->pages[c->n + i]);
    c->n += n;
    if (h->flags & DSM_MF_BUSY)
        c->busy = 1;
    if (h->flags & DSM_MF_LAST)
        dsm__waiter_complete(w);
}

/* A request for lock id, which this node manages, by one of its threads:
 * the manager's part of on_lock_req without the messages.  Returns 1 when
 * it is answered (granted, its notices in *c, or refused: c->busy), 0 when
 * the requester is queued (its grant will come to waiter as a message). */
static int request_here(int id, uint16_t flags, uint32_t waiter, struct grant_ctx *c)
{
    struct mlock *l = &locks[(size_t)id / (size_t)dsm__g.nodes];
    uint32_t epoch = __atomic_load_n(&dsm__g.epoch, __ATOMIC_ACQUIRE);
    int answered = 1;

    pthread_mutex_lock(&mgr_mu);
    if (!l->held) {
        l->held = 1;
        l->holder = dsm__g.rank;
        size_t n = notices_for(l, epoch);
        if (grow_u32(&c->pages, &c->cap, n))
            dsm__fatal("out of private memory for %zu lock notices", n);
        memcpy(c->pages, l->notices, n * sizeof *c->pages);
        c->n = n;
    } else if (flags & DSM_MF_TRY) {
        c->busy = 1;
    } else {
        enqueue(l, (uint32_t)id, dsm__g.rank, waiter, epoch);
        answered = 0;
    }
    pthread_mutex_unlock(&mgr_mu);
    return answered;
}

static int acquire(int id, uint16_t flags)
{
    struct grant_ctx ctx = { NULL, 0, 0, 0 };
    const int mgr = id % dsm__g.nodes;
    int here = 0;           /* granted at once by this node as manager */
    uint64_t t0;
    uint32_t waiter;

    t0 = dsm__now_ns();
    DSM_TRACE_ENTER(DSM_TR_LOCK_REQ, 0, mgr, id, 0);
    waiter = dsm__waiter_get(DSM_WAIT_GRANT, 1, &ctx);
    dsm__waiter_note(waiter, mgr, (uint64_t)id);
    if (mgr != dsm__g.rank) {
        struct dsm_msg *m = dsm__msg_new(DSM_MSG_LOCK_REQ, mgr, 0);
        m->hdr.id = (uint32_t)id;
        m->hdr.waiter = waiter;
        m->hdr.flags = flags;
        dsm__msg_send(m);
        dsm__waiter_wait(waiter);
    } else if (!(here = request_here(id, flags, waiter, &ctx))) {
        dsm__waiter_wait(waiter);
    }
    dsm__waiter_put(waiter);
    if (ctx.busy) {
        free(ctx.pages);
        DSM_TRACE_LEAVE(DSM_TR_LOCK_GRANT, 0, id % dsm__g.nodes, id, 1);
        return 0;
    }
    DSM_STAT_ADD(lock_acquires, 1);
    DSM_STAT_ADD(lock_wait_ns, dsm__now_ns() - t0);
    if (here)
        DSM_STAT_ADD(locks_local, 1);
    for (size_t i = 0; i < ctx.n; i++)
        dsm__invalidate_copy(ctx.pages[i], NULL);
    dsm__pt_note_learned(ctx.pages, ctx.n);
    if (dsm__g.cfg.prefetch == DSM_PREFETCH_HISTORY && ctx.n)
        dsm__history_after_acquire(ctx.pages, ctx.n);
    free(ctx.pages);
    DSM_TRACE_LEAVE(DSM_TR_LOCK_GRANT, 0, id % dsm__g.nodes, id, 0);
    return 1;
}

void dsm_lock_acquire(int id)
{
    check_id("dsm_lock_acquire", id);
    acquire(id, 0);
}

int dsm__lock_try(int id, const char *what)
{
    check_id(what ? what : "omp_test_lock", id);
    return acquire(id, DSM_MF_TRY);
}

static void release(const char *func, int id, uint16_t flags)
{
    uint32_t *list, epoch;
    size_t n;

    check_id(func, id);
    DSM_TRACE_ENTER(DSM_TR_LOCK_RELEASE, 0, id % dsm__g.nodes, id, 0);
    dsm__release_writes(DSM_FLUSH_RELEASE, NULL);

    n = dsm__pt_copy_release(&list, &epoch);
    if (id % dsm__g.nodes == dsm__g.rank) {
        /* The manager's part of on_lock_rel, without the messages. */
        struct mlock *l = &locks[(size_t)id / (size_t)dsm__g.nodes];
        pthread_mutex_lock(&mgr_mu);
        add_notices(l, (uint32_t)id, dsm__g.rank, flags, epoch, list, n);
        pass_on(l, (uint32_t)id);
        pthread_mutex_unlock(&mgr_mu);
        free(list);
        DSM_TRACE_LEAVE(DSM_TR_LOCK_RELEASED, 0, id % dsm__g.nodes, id, 0);
        return;
    }
    /* Not waiting for the LOCK_REL_ACK: see "releases in flight". */
    pthread_mutex_lock(&rel_mu);
    __atomic_fetch_add(&rel_sent, 1, __ATOMIC_RELAXED);   /* atomic: dsm__lock_dump */
    pthread_mutex_unlock(&rel_mu);
    dsm__msg_send_pages(DSM_MSG_LOCK_REL, id % dsm__g.nodes, list, n, (uint32_t)id,
                        0, flags, epoch, 0);
    free(list);
    DSM_TRACE_LEAVE(DSM_TR_LOCK_RELEASED, 0, id % dsm__g.nodes, id, 0);
}

void dsm_lock_release(int id)
{
    release("dsm_lock_release", id, 0);
}

/* For a runtime whose locks any thread may unlock, not only the holder
 * (a program may unset a simple lock that another thread set, as SoX's
 * readers-writer lock does: the last reader out unlocks what the first
 * reader in locked; and the C library lets it unlock a normal mutex).  It is a release
 * like any other, of this node's notices; the holder's writes reach the
 * next holder if a synchronisation ordered them before this release (in
 * SoX, the readers' count lock), through the notices learned from it.  A
 * lock that nobody holds is still an error. */
void dsm__lock_release_handoff(int id, const char *what)
{
    release(what ? what : "omp_unset_lock", id, DSM_MF_HANDOFF);
}

void dsm__lock_dump(struct dsm_sbuf *sb)
{
    size_t held = 0;
    dsm__sb_begin(sb);
    dsm__sb_str(sb, "  locks managed here and held:");
    for (size_t i = 0; locks && i < nlocal; i++) {
        if (!locks[i].held)
            continue;
        if (++held > 16)
            continue;
        dsm__sb_str(sb, " ");
        dsm__sb_u(sb, i * (size_t)dsm__g.nodes + (size_t)dsm__g.rank);
        dsm__sb_str(sb, "(by rank ");
        dsm__sb_u(sb, (uint64_t)locks[i].holder);
        dsm__sb_str(sb, ", ");
        dsm__sb_u(sb, locks[i].qn);
        dsm__sb_str(sb, " queued)");
    }
    if (held == 0)
        dsm__sb_str(sb, " none");
    else if (held > 16) {
        dsm__sb_str(sb, " ... ");
        dsm__sb_u(sb, held);
        dsm__sb_str(sb, " in all");
    }
    uint64_t sent = __atomic_load_n(&rel_sent, __ATOMIC_RELAXED);
    uint64_t acked = __atomic_load_n(&rel_acked, __ATOMIC_RELAXED);
    if (sent > acked) {
        dsm__sb_str(sb, "; releases of this node not yet acknowledged by their managers: ");
        dsm__sb_u(sb, sent - acked);
    }
    dsm__sb_end(sb);
}

int dsm_lock_count(void)
{
    DSM_CHECK_RUNNING();
    return dsm__g.cfg.max_locks;
}

/* The manager has the releaser's notices (on_lock_rel). */
static void on_lock_rel_ack(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    (void)pl;
    if (h->len != 0 || h->id >= (uint32_t)dsm__g.cfg.max_locks ||
        h->id % (uint32_t)dsm__g.nodes != (uint32_t)h->src)
        dsm__msg_malformed(h);
    pthread_mutex_lock(&rel_mu);
    if (rel_acked >= rel_sent)
        dsm__fatal("malformed message from rank %d: LOCK_REL_ACK for lock %u, but no "
                   "release of this node is in flight", h->src, h->id);
    if (__atomic_add_fetch(&rel_acked, 1, __ATOMIC_RELAXED) >= rel_target && rel_waiting) {
        rel_waiting = 0;
        dsm__waiter_complete(dsm__waiter_at(rel_waiter, DSM_WAIT_RELEASE));
    }
    pthread_mutex_unlock(&rel_mu);
}

void dsm__lock_handlers(void)
{
    dsm__handler_register(DSM_MSG_LOCK_REQ, on_lock_req);
    dsm__handler_register(DSM_MSG_LOCK_REL, on_lock_rel);
    dsm__handler_register(DSM_MSG_LOCK_GRANT, on_lock_grant);
    dsm__handler_register(DSM_MSG_LOCK_REL_ACK, on_lock_rel_ack);
}
