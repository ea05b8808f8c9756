/*
 * ordered.c - the receiving side of dsm_flush's ordered release: pages
 * held at their home while the copies elsewhere are brought up to date,
 * and those updates applied to this node's copies.
 *
 * Why (also libdsm(7), FLUSH ORDER): programs written for x86 hand data
 * from thread to thread with a flag, a writer that stores its data, then
 * the flag, then flushes, and a reader that spins on the flag (flushing)
 * and reads the data with no flush after the loop.  On x86 stores become
 * visible in program order, so that is enough there.  On the DSM a reader
 * could see the new flag (its home applied the flag's diff, or it fetched
 * the flag's page fresh) and then read the data from a copy its node held
 * from before: the write notices that drop such copies only come after
 * the release, and only take effect at the reader's next flush.
 *
 * The ordered release (protocol.c, dsm__release_writes_ordered) sends the
 * pages written since the last release in groups, one per home, in the
 * order in which the pages were first written, and starts a group only
 * when the one before is visible everywhere:
 *   1. the home applies the group's diffs, each page unseen by its own
 *      threads (the page is PROT_NONE while its diff goes in), and holds
 *      the pages: requests for them wait here;
 *   2. it acks, naming the nodes that may hold copies (its copysets; every
 *      node when pages are read one-sidedly);
 *   3. the writer sends those nodes the same diffs (UPDATE); each applies
 *      them to the copies it holds, unseen by its threads, also to a twin,
 *      so that its own diff later leaves the writer's bytes out; a copy in
 *      flight is marked stale and fetched again; and acks;
 *   4. the writer releases the hold (UNHOLD); the held requests are served.
 * The writer's own home pages are a group too: it holds them itself and
 * sends whole pages.  So when a thread sees a value of a later group, every
 * earlier group's bytes are in every copy and at every home; within a
 * group a home applies pages in the order they were first written.
 *
 * Threads: dsm__on_update, dsm__on_unhold, dsm__held_defer and
 * dsm__serve_held under the progress token (the communication thread, or a
 * waiting thread where the transport lets it poll); dsm__hold and
 * dsm__unhold_own in the application thread that flushes.  held[] counts
 * change with atomic operations: a page may be held by several writers'
 * flushes at once.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm_internal.h"

/* Per page: how many ordered flushes hold it at this home. */
static uint16_t *held;
/* Set once this node flushed or was updated: from then on pages are
 * fetched by message (a one-sided read cannot wait for a hold). */
int dsm__ordered_mode;

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
    if (held == MAP_FAILED) {
        held = NULL;
        return -DSM_ENOMEM;
    }
    hq_head = NULL;
    hq_tail = &hq_head;
    hq_count = 0;
    held_kick = 0;
    dsm__ordered_mode = 0;
    return 0;
}

void dsm__ordered_fini(void)
{
    if (held)
        munmap(held, dsm__g.npages * sizeof *held);
    held = NULL;
    while (hq_head) {
        struct held_req *r = hq_head;
        hq_head = r->next;
        free(r);
    }
    hq_tail = &hq_head;
    hq_count = 0;
}

int dsm__page_held(size_t p)
{
    return held && __atomic_load_n(&held[p], __ATOMIC_ACQUIRE) != 0;
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
    __atomic_fetch_sub(&held[p], 1, __ATOMIC_ACQ_REL);
}

void dsm__unhold_own(const uint32_t *pages, size_t n)
{
    for (size_t i = 0; i < n; i++)
        unhold(pages[i], dsm__g.rank);
    if (__atomic_load_n(&hq_count, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&held_kick, 1, __ATOMIC_RELEASE);
        dsm__comm_wake();
    }
}

/* A page or prefetch request that names a held page waits, payload and
 * all, until no hold is left on its pages. */
int dsm__held_defer(const struct dsm_wire_hdr *h, const void *payload)
{
    int any = 0;
    if (!held)
        return 0;
    if (h->type == DSM_MSG_PAGE_REQ) {
        any = dsm__page_held(h->id);
    } else {
        for (size_t i = 0; i + 4 <= h->len && !any; i += 4) {
            uint32_t p;
            memcpy(&p, (const unsigned char *)payload + i, 4);
            any = p < dsm__g.npages && dsm__page_held(p);
        }
    }
    if (!any)
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
    __atomic_fetch_add(&hq_count, 1, __ATOMIC_RELEASE);
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

/* Apply one entry to this node's copy of page p, unseen by its threads. */
static void update_copy(size_t p, const unsigned char *bytes, uint32_t len, int full,
                        int src)
{
    struct dsm_page *pg = &dsm__g.pages[p];
    size_t ps = dsm__g.page_size;

    dsm__page_lock(p);
    if (pg->state == DSM_P_UNALLOC || pg->home == dsm__g.rank) {
        dsm__page_unlock(p);
        return;
    }
    if (pg->state == DSM_P_IN_FLIGHT) {
        /* The copy under way may have left the home before the diff went
         * in there: the faulting thread fetches it again. */
        pg->flags |= DSM_PF_STALE;
        dsm__page_unlock(p);
        return;
    }
    if (pg->state == DSM_P_PREFETCHED) {
        pg->state = dsm__page_transition(pg->state, DSM_EV_INVALIDATE, 0).next;
        dsm__page_unlock(p);
        DSM_STAT_ADD(prefetch_wasted, 1);
        return;
    }
    if (pg->state != DSM_P_READ_ONLY && pg->state != DSM_P_READ_WRITE) {
        dsm__page_unlock(p);
        return;
    }
    /* Closed while the bytes go in: a thread that reads the page now
     * faults and waits for the page lock, so it sees all of this page's
     * update or none of it.  Not a stack: a thread may run on it. */
    const int close = !(pg->flags & DSM_PF_NOTRAP);
    if (close)
        dsm__vm_protect(p, 1, PROT_NONE);
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
    if (close) {
        int prot = dsm__page_prot(pg->state);
        if (prot & PROT_WRITE)
            __atomic_fetch_add(&dsm__upgrades, 1, __ATOMIC_SEQ_CST);
        dsm__vm_protect(p, 1, prot);
    }
    dsm__page_unlock(p);
    DSM_STAT_ADD(flush_updates, 1);
}

void dsm__on_update(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    size_t pos = 0;
    int full = (h->flags & DSM_MF_FULL) != 0;

    __atomic_store_n(&dsm__ordered_mode, 1, __ATOMIC_RELEASE);
    while (pos < h->len) {
        struct dsm_wire_diff e;
        memcpy(&e, pl + pos, sizeof e);     /* checked by dsm__wire_check */
        pos += sizeof e;
        update_copy(e.page, pl + pos, e.len, full, h->src);
        pos += e.len;
    }
    struct dsm_msg *m = dsm__msg_new(DSM_MSG_UPDATE_ACK, h->src, 0);
    m->hdr.waiter = h->waiter;
    dsm__msg_send(m);
}

void dsm__on_unhold(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    for (size_t i = 0; i < h->len / 4; i++) {
        uint32_t p;
        memcpy(&p, pl + 4 * i, 4);
        unhold(p, h->src);
    }
    if (hq_head)
        dsm__serve_held();
}
