/*
 * ordered.c - the receiving side of dsm_flush's ordered release: pages
 * held at their home while the copies elsewhere are brought up to date,
 * and those updates applied to this node's copies.
 *
 * Why (also docs/design/protocol.md, Flush): programs written for x86 hand data
 * from thread to thread with a flag, a writer that stores its data, then
 * the flag, then flushes, and a reader that spins on the flag (flushing)
 * and reads the data with no flush after the loop.  On x86 stores become
 * visible in program order, so that is enough there.  On the DSM a reader
 * could see the new flag (its home applied the flag's diff, or it fetched
 * the flag's page fresh) and then read the data from a copy its node held
 * from before: the write notices that drop such copies only come after
 * the release, and only take effect at the reader's next flush.
 *
 * The ordered release (writeout.c, dsm__release_writes_ordered) makes a
 * flush one step for the other nodes' threads: they see all of its pages
 * new, or none.  Order within a flush cannot do it: the DSM learns only the
 * first write to a page in an interval, and "data, then the flag on the
 * page of the data's first row" (tests/omp flag_pipeline, variant 5) puts
 * the flag's page first.  So:
 *   1. the writer sends every home its diffs at once (DIFF, ORDERED); each
 *      home applies them with the pages shut (PROT_NONE: its own threads
 *      wait in the fault handler) and held (page requests for them wait
 *      here), and acks, naming the nodes that may hold copies (its
 *      copysets; every node when pages are read one-sidedly);
 *   2. the writer sends each of those nodes the diffs of the pages it may
 *      hold (UPDATE; its own home pages too, as diffs against the twin made
 *      at the first write after a serve, or whole); each node shuts its
 *      copies, applies them (also to a twin, so that its own diff later
 *      leaves the writer's bytes out; a copy in flight keeps them and
 *      takes them when it lands: update_copy), reopens them all at the
 *      last message, and acks;
 *   3. the writer releases the holds (UNHOLD); the homes reopen the pages
 *      and serve the requests that waited.
 * A thread that sees any byte of the flush (a copy reopened at step 2, a
 * home page reopened at step 3, or a page fetched after step 3) finds
 * every other page of the flush new too: its own copies were updated at
 * step 2 all at once, and every home either reopened its pages or still
 * holds them.  Not covered: a stack at its home (never shut there: a
 * thread runs on it), whose home threads see other nodes' writes to it
 * page by page; and the writer's own home pages, which its own threads see
 * as written.
 *
 * Threads: on_update, on_unhold (the handlers of UPDATE and UNHOLD),
 * dsm__held_defer and dsm__serve_held under the progress token (the
 * communication thread, or a waiting thread where the transport lets it
 * poll); dsm__hold and dsm__unhold_own in the application thread that
 * flushes; dsm__page_shut in the fault handler.  held[] counts change with atomic operations, shut[]
 * under the page's lock: a page may be held or shut by several writers'
 * flushes at once.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm_internal.h"

/* Per page: how many ordered flushes hold it at this home. */
static uint16_t *held;
/* Per page: how many ordered flushes keep it shut here (at its home until
 * UNHOLD, in a copy until the last UPDATE of the flush). */
static uint16_t *shut;
/* Per sender: the copies its UPDATEs so far shut, reopened at its last. */
static struct shut_list { uint32_t *p; size_t n, cap; } pending[DSM_MAX_NODES];
/* Set once this node flushed or was updated: from then on pages are
 * fetched by message (a one-sided read cannot wait for a hold). */
int dsm__ordered_mode;
/* Set at this node's first ordered flush: its home pages are tracked from
 * then on (never left writable without a trap), so that a page it serves
 * holds only released bytes (dsm__track_home_pages). */
int dsm__home_tracked;

/* Diffs of ordered flushes for copies that were in flight when they came
 * (update_copy), applied when the copy lands (dsm__inflight_install).  Per
 * page, entries of a 4-byte length and a diff, in arrival order. */
struct inflight_upd {
    uint32_t page;
    size_t len, cap;
    unsigned char *buf;
};
static pthread_mutex_t ifu_mu = PTHREAD_MUTEX_INITIALIZER;
static struct inflight_upd *ifu;
static size_t nifu, capifu;

/* Requests for held pages, served when the holds are gone. */
struct held_req {
    struct held_req *next;
    struct dsm_wire_hdr h;
    unsigned char payload[];
};
static struct held_req *hq_head, **hq_tail = &hq_head;
static unsigned hq_count;
/* An application thread released holds of its own pages: the next progress
 * round serves what waited for them. */
static int held_kick;

int dsm__ordered_init(void)
{
    held = mmap(NULL, dsm__g.npages * sizeof *held, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    shut = mmap(NULL, dsm__g.npages * sizeof *shut, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (held == MAP_FAILED || shut == MAP_FAILED) {
        if (held != MAP_FAILED)
            munmap(held, dsm__g.npages * sizeof *held);
        if (shut != MAP_FAILED)
            munmap(shut, dsm__g.npages * sizeof *shut);
        held = shut = NULL;
        return -DSM_ENOMEM;
    }
    hq_head = NULL;
    hq_tail = &hq_head;
    hq_count = 0;
    held_kick = 0;
    dsm__ordered_mode = 0;
    dsm__home_tracked = 0;
    return 0;
}

void dsm__ordered_fini(void)
{
    if (held)
        munmap(held, dsm__g.npages * sizeof *held);
    if (shut)
        munmap(shut, dsm__g.npages * sizeof *shut);
    held = shut = NULL;
    for (int r = 0; r < DSM_MAX_NODES; r++) {
        free(pending[r].p);
        pending[r].p = NULL;
        pending[r].n = pending[r].cap = 0;
    }
    while (hq_head) {
        struct held_req *r = hq_head;
        hq_head = r->next;
        free(r);
    }
    hq_tail = &hq_head;
    hq_count = 0;
    pthread_mutex_lock(&ifu_mu);
    for (size_t i = 0; i < nifu; i++)
        free(ifu[i].buf);
    free(ifu);
    ifu = NULL;
    nifu = capifu = 0;
    pthread_mutex_unlock(&ifu_mu);
}

int dsm__page_held(size_t p)
{
    return held && __atomic_load_n(&held[p], __ATOMIC_ACQUIRE) != 0;
}

/* A home serves a copy of its page as of its last release (its twin, when
 * its threads wrote it since: protocol.c serve_page), so that a flag a
 * thread here stored after data it has not flushed yet cannot reach
 * another node before that data.  That needs every write to a home page
 * to trap once per release, also to pages nobody else held (which a home
 * otherwise leaves writable): write-protect those now; the barrier leaves
 * them protected and a first touch maps them read-only from now on. */
void dsm__track_home_pages(void)
{
    struct dsm_protect_batch pb = { 0, 0, 0 };
    if (__atomic_exchange_n(&dsm__home_tracked, 1, __ATOMIC_ACQ_REL))
        return;
    for (size_t p = 0; p < dsm__g.npages; p++) {
        struct dsm_page *pg = &dsm__g.pages[p];
        if (pg->home != dsm__g.rank || pg->state != DSM_P_READ_WRITE ||
            (pg->flags & (DSM_PF_NOTRAP | DSM_PF_MARKED)))
            continue;
        dsm__page_lock(p);
        if (pg->state == DSM_P_READ_WRITE && !(pg->flags & (DSM_PF_NOTRAP | DSM_PF_MARKED))) {
            pg->state = DSM_P_READ_ONLY;
            dsm__pb_add(&pb, p, PROT_READ);
        }
        dsm__page_unlock(p);
    }
    dsm__pb_flush(&pb);
}

int dsm__page_shut(size_t p)
{
    return shut && __atomic_load_n(&shut[p], __ATOMIC_ACQUIRE) != 0;
}

/* A readable page that may be shut: not a stack at its home, where a
 * thread may run on it (a copy of another node's stack is shut: no thread
 * here runs on it). */
static int open_state(const struct dsm_page *pg)
{
    return !((pg->flags & DSM_PF_NOTRAP) && pg->home == dsm__g.rank) &&
           (pg->state == DSM_P_READ_ONLY || pg->state == DSM_P_READ_WRITE);
}

void dsm__shut(size_t p)
{
    if (__atomic_fetch_add(&shut[p], 1, __ATOMIC_ACQ_REL) == 0 &&
        open_state(&dsm__g.pages[p]))
        dsm__vm_protect(p, 1, PROT_NONE);
}

void dsm__unshut(size_t p)
{
    struct dsm_page *pg = &dsm__g.pages[p];
    uint16_t old = __atomic_load_n(&shut[p], __ATOMIC_ACQUIRE);
    if (old == 0)
        dsm__fatal("internal error: page %zu reopened, but it is not shut", p);
    if (old > 1) {
        __atomic_fetch_sub(&shut[p], 1, __ATOMIC_ACQ_REL);
        return;
    }
    if (open_state(pg)) {
        int prot = dsm__page_prot(pg->state);
        /* A flush of this node that write-protected the page before this
         * opens it protects it once more before taking its diff. */
        if (prot & PROT_WRITE)
            __atomic_fetch_add(&dsm__upgrades, 1, __ATOMIC_SEQ_CST);
        dsm__vm_protect(p, 1, prot);
    }
    __atomic_store_n(&shut[p], 0, __ATOMIC_RELEASE);
    dsm__pt_install_done();     /* threads waiting in the fault handler */
}

void dsm__hold(size_t p)
{
    __atomic_fetch_add(&held[p], 1, __ATOMIC_ACQ_REL);
}

static void unhold(size_t p, int src)
{
    uint16_t old = __atomic_load_n(&held[p], __ATOMIC_ACQUIRE);
    if (old == 0)
        dsm__fatal("protocol error: rank %d released its hold on page %zu, which is "
                   "not held here", src, p);
    __atomic_fetch_sub(&held[p], 1, __ATOMIC_SEQ_CST);
}

void dsm__unhold_own(const uint32_t *pages, size_t n)
{
    for (size_t i = 0; i < n; i++)
        unhold(pages[i], dsm__g.rank);
    /* Sequentially consistent with dsm__held_defer's count and second look:
     * either this sees its request counted, or it sees the hold gone. */
    if (__atomic_load_n(&hq_count, __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&held_kick, 1, __ATOMIC_RELEASE);
        dsm__comm_wake();
    }
}

/* Whether a page or prefetch request names a held page. */
static int names_held(const struct dsm_wire_hdr *h, const void *payload)
{
    if (h->type == DSM_MSG_PAGE_REQ)
        return __atomic_load_n(&held[h->id], __ATOMIC_SEQ_CST) != 0;
    for (size_t i = 0; i + 4 <= h->len; i += 4) {
        uint32_t p;
        memcpy(&p, (const unsigned char *)payload + i, 4);
        if (p < dsm__g.npages && __atomic_load_n(&held[p], __ATOMIC_SEQ_CST) != 0)
            return 1;
    }
    return 0;
}

/* A page or prefetch request that names a held page waits, payload and
 * all, until no hold is left on its pages. */
int dsm__held_defer(const struct dsm_wire_hdr *h, const void *payload)
{
    if (!held || !names_held(h, payload))
        return 0;
    struct held_req *r = malloc(sizeof *r + h->len);
    if (!r)
        dsm__fatal("out of private memory keeping a request for a held page");
    r->h = *h;
    if (h->len)
        memcpy(r->payload, payload, h->len);
    r->next = NULL;
    *hq_tail = r;
    hq_tail = &r->next;
    __atomic_fetch_add(&hq_count, 1, __ATOMIC_SEQ_CST);
    /* An application thread's own unhold (dsm__unhold_own) may have dropped
     * the last hold after the look above and before the count: it then saw
     * nothing to kick for, and the request would wait for an unrelated
     * kick (seen: a PAGE_REQ unanswered for DSM_TIMEOUT, tests/mpi
     * flush_flags n3 queue).  Look again; serving a request whose page is
     * still held only defers it once more. */
    if (!names_held(h, payload))
        __atomic_store_n(&held_kick, 1, __ATOMIC_RELEASE);
    DSM_STAT_ADD(held_requests, 1);
    return 1;
}

int dsm__held_pending(void)
{
    return __atomic_load_n(&held_kick, __ATOMIC_ACQUIRE) != 0;
}

/* Serve, in arrival order, the waiting requests none of whose pages is
 * held any more; dsm__dispatch_held defers again one that still is. */
void dsm__serve_held(void)
{
    struct held_req *list = hq_head;
    __atomic_store_n(&held_kick, 0, __ATOMIC_RELEASE);
    hq_head = NULL;
    hq_tail = &hq_head;
    __atomic_store_n(&hq_count, 0, __ATOMIC_RELEASE);
    while (list) {
        struct held_req *r = list;
        list = r->next;
        dsm__dispatch_held(&r->h, r->payload);
        free(r);
    }
}

/* Keep a diff for page p, in flight here, until its copy lands.  Page lock
 * held. */
static void inflight_add(size_t p, const unsigned char *bytes, uint32_t len)
{
    pthread_mutex_lock(&ifu_mu);
    struct inflight_upd *u = NULL;
    for (size_t i = 0; i < nifu; i++)
        if (ifu[i].page == p) {
            u = &ifu[i];
            break;
        }
    if (!u) {
        if (nifu == capifu) {
            size_t nc = capifu ? capifu * 2 : 8;
            struct inflight_upd *v = realloc(ifu, nc * sizeof *v);
            if (!v)
                dsm__fatal("out of private memory keeping an update for page %zu", p);
            ifu = v;
            capifu = nc;
        }
        u = &ifu[nifu++];
        u->page = (uint32_t)p;
        u->len = u->cap = 0;
        u->buf = NULL;
    }
    if (u->len + 4 + len > u->cap) {
        size_t nc = u->cap ? u->cap : 256;
        while (nc < u->len + 4 + len)
            nc *= 2;
        unsigned char *v = realloc(u->buf, nc);
        if (!v)
            dsm__fatal("out of private memory keeping an update for page %zu", p);
        u->buf = v;
        u->cap = nc;
    }
    memcpy(u->buf + u->len, &len, 4);
    memcpy(u->buf + u->len + 4, bytes, len);
    u->len += 4 + len;
    pthread_mutex_unlock(&ifu_mu);
}

/* Page p's copy is in the system view (protocol.c install, page lock held):
 * apply the diffs that came for it meanwhile, in order, or drop them if the
 * copy is stale and will be fetched again. */
void dsm__inflight_install(size_t p, int apply)
{
    if (!__atomic_load_n(&nifu, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&ifu_mu);
    for (size_t i = 0; i < nifu; i++) {
        if (ifu[i].page != p)
            continue;
        struct inflight_upd u = ifu[i];
        ifu[i] = ifu[nifu - 1];
        __atomic_store_n(&nifu, nifu - 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&ifu_mu);
        for (size_t pos = 0; apply && pos < u.len;) {
            uint32_t len;
            memcpy(&len, u.buf + pos, 4);
            if (dsm__diff_apply(dsm__sys_page(p), dsm__g.page_size, u.buf + pos + 4, len) < 0)
                dsm__fatal("internal error: a kept update of page %zu does not apply", p);
            pos += 4 + len;
            DSM_STAT_ADD(flush_updates, 1);
        }
        free(u.buf);
        return;
    }
    pthread_mutex_unlock(&ifu_mu);
}

/* Apply one entry to this node's copy of page p, which stays shut until
 * the sender's last UPDATE of this flush; 1 if it was shut. */
static int update_copy(size_t p, const unsigned char *bytes, uint32_t len, int full,
                       int src)
{
    struct dsm_page *pg = &dsm__g.pages[p];
    size_t ps = dsm__g.page_size;

    dsm__page_lock(p);
    if (pg->state == DSM_P_UNALLOC || pg->home == dsm__g.rank) {
        dsm__page_unlock(p);
        return 0;
    }
    if (pg->state == DSM_P_IN_FLIGHT) {
        /* The copy under way left the home either before the diff went in
         * there (it lacks the diff) or after the sender's UNHOLD (the home
         * held the page until this node acknowledged this UPDATE: it has the
         * diff).  Applying the diff when the copy lands is right either
         * way: the diff holds only the sender's bytes, and a later write of
         * them that the copy may hold reaches this node after this diff (an
         * UPDATE) or drops the copy (a notice).  The copy stays shut until
         * the sender's last UPDATE, as the others of the flush do.
         * Fetching the copy again instead (as before) starved a thread
         * here: a home that flushes in a loop (threads polling a flag)
         * sends its stack page at each flush, so that nearly every fetch of
         * it met an UPDATE (tests/omp flush_flag, "the ready flag is 15"
         * after 20 s, about 1 run in 250).  A whole page (FULL) would put
         * the home's old bytes over newer ones of other writers that the
         * copy may hold, a prefetch lands elsewhere, and a one-sided read
         * (DSM_COMM=rma) does not wait for holds: those fetch again. */
        if (!full && !(pg->flags & (DSM_PF_STALE | DSM_PF_PREFETCHING)) &&
            (!dsm__g.ops->get_page || (pg->flags & DSM_PF_NOTRAP))) {
            if (dsm__diff_check(ps, bytes, len) < 0)
                dsm__fatal("malformed update from rank %d for page %zu", src, p);
            inflight_add(p, bytes, len);
            dsm__shut(p);
            dsm__page_unlock(p);
            return 1;
        }
        pg->flags |= DSM_PF_STALE;
        dsm__page_unlock(p);
        return 0;
    }
    if (pg->state == DSM_P_PREFETCHED) {
        pg->state = dsm__page_transition(pg->state, DSM_EV_INVALIDATE, 0).next;
        dsm__history_wasted(p);
        dsm__page_unlock(p);
        DSM_STAT_ADD(prefetch_wasted, 1);
        return 0;
    }
    if (pg->state != DSM_P_READ_ONLY && pg->state != DSM_P_READ_WRITE) {
        dsm__page_unlock(p);
        return 0;
    }
    /* Shut while the flush's bytes go in: a thread that reads the page now
     * waits in the fault handler until every page of the flush is in. */
    dsm__shut(p);
    unsigned char *page = dsm__sys_page(p);
    long rc = 0;
    if (!full) {
        rc = dsm__diff_apply(page, ps, bytes, len);
        if (rc >= 0 && (pg->flags & DSM_PF_TWIN))
            rc = dsm__diff_apply(dsm__twin_page(p), ps, bytes, len);
    } else if (pg->flags & DSM_PF_TWIN) {
        /* This node's own unreleased writes go back over the new page:
         * they are the difference between its twin and its copy. */
        size_t cap = dsm__diff_max_size(ps);
        unsigned char *mine = malloc(cap);
        if (!mine)
            dsm__fatal("out of private memory updating page %zu", p);
        size_t n = dsm__diff_make(dsm__twin_page(p), page, ps, mine, cap);
        memcpy(dsm__twin_page(p), bytes, ps);
        memcpy(page, bytes, ps);
        if (n != (size_t)-1 && n)
            rc = dsm__diff_apply(page, ps, mine, n);
        free(mine);
    } else {
        memcpy(page, bytes, ps);
    }
    if (rc < 0)
        dsm__fatal("malformed update from rank %d for page %zu", src, p);
    dsm__page_unlock(p);
    DSM_STAT_ADD(flush_updates, 1);
    return 1;
}

static void pending_add(int src, uint32_t p)
{
    struct shut_list *l = &pending[src];
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 16;
        uint32_t *v = realloc(l->p, nc * sizeof *v);
        if (!v)
            dsm__fatal("out of private memory listing updated pages");
        l->p = v;
        l->cap = nc;
    }
    l->p[l->n++] = p;
}

static void on_update(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    size_t pos = 0;
    int full = (h->flags & DSM_MF_FULL) != 0;

    if (dsm__defer_early(h, pl))
        return;
    __atomic_store_n(&dsm__ordered_mode, 1, __ATOMIC_RELEASE);
    while (pos < h->len) {
        struct dsm_wire_diff e;
        memcpy(&e, pl + pos, sizeof e);     /* checked by dsm__wire_check */
        pos += sizeof e;
        if (update_copy(e.page, pl + pos, e.len, full, h->src))
            pending_add(h->src, e.page);
        pos += e.len;
    }
    if (h->flags & DSM_MF_LAST) {
        /* The sender's whole flush is in: every copy it shut opens. */
        struct shut_list *l = &pending[h->src];
        for (size_t i = 0; i < l->n; i++) {
            dsm__page_lock(l->p[i]);
            dsm__unshut(l->p[i]);
            dsm__page_unlock(l->p[i]);
        }
        l->n = 0;
    }
    struct dsm_msg *m = dsm__msg_new(DSM_MSG_UPDATE_ACK, h->src, 0);
    m->hdr.waiter = h->waiter;
    dsm__msg_send(m);
}

static void on_unhold(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    if (h->len % 4)
        dsm__msg_malformed(h);
    if (dsm__defer_early(h, pl))
        return;
    for (size_t i = 0; i < h->len / 4; i++) {
        uint32_t p;
        memcpy(&p, pl + 4 * i, 4);
        unhold(p, h->src);
        dsm__page_lock(p);
        dsm__unshut(p);
        dsm__page_unlock(p);
    }
    if (hq_head)
        dsm__serve_held();
}

void dsm__ordered_handlers(void)
{
    dsm__handler_register(DSM_MSG_UPDATE, on_update);
    dsm__handler_register(DSM_MSG_UNHOLD, on_unhold);
}
