/*
 * writeout.c - this node's writes going out to their homes.  At a release
 * (a barrier, a lock release: dsm__release_writes -> dsm__flush) every page
 * written since the last release is write-protected, its diff against its
 * twin goes to its home (DIFF messages, one chain per home, the last asking
 * for a DIFF_ACK), the page is downgraded and its twin dropped, and the
 * releaser waits for every home's ack.  Also here: dsm_flush's ordered
 * release (dsm__release_writes_ordered; ordered.c says why and how), one
 * page's diff sent early (dsm__flush_page_now, before an atomic at the
 * home), and dropping a copy (dsm__invalidate_copy), which first sends the
 * copy's unreleased writes.  The homes' side (applying the diffs) is
 * protocol.c's on_diff.
 *
 * Threads: application threads (the thread in a barrier, a lock release or
 * acquire, dsm_flush, an atomic operation); on_diff_ack and on_update_ack,
 * the handlers of DIFF_ACK and UPDATE_ACK, under the progress token.  Lock
 * order: release_lock -> flush mutex (flush_lock) -> page lock -> MPI mutex;
 * no page lock is held while waiting for acks, because the thread that must
 * deliver them may need it.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm_internal.h"

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
static __thread int flushing_noack;           /* DSM_FLUSH_BARRIER_NOACK */
/* Tests (tests/mpi/barrier_diffs): hold the last chunk of each home's
 * unacked diffs until the barrier's release has arrived here, so that the
 * homes get their releases first; the protocol allows it (a home waits for
 * the count however late the diffs come), and the wait is then what a test
 * checks.  Barrier thread only. */
int dsm__barrier_late_diffs;
static struct dsm_msg *late_last[DSM_MAX_NODES];

void dsm__flush_send_late(void)
{
    for (int r = 0; r < dsm__g.nodes; r++)
        if (late_last[r]) {
            dsm__msg_send(late_last[r]);
            late_last[r] = NULL;
        }
}
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

int dsm__diffs_unacked(void)
{
    return __atomic_load_n(&diffs_unacked, __ATOMIC_SEQ_CST) != 0;
}

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

/* ---- acknowledgements of this node's flushes ---- */

/* A home applied a flush's diffs (or a node recorded a FLUSH_NOTICE); an
 * ordered flush's ack names the nodes that may hold copies (ordered.c). */
static void on_diff_ack(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    (void)pl;
    if (h->len != 0)
        dsm__msg_malformed(h);
    struct dsm_waiter *w = dsm__reply_waiter(h, DSM_WAIT_ACKS);
    if ((h->flags & DSM_MF_ORDERED) && w->ctx)
        __atomic_fetch_or((uint64_t *)w->ctx, h->arg, __ATOMIC_RELAXED);
    dsm__waiter_complete(w);
}

/* A node applied an ordered flush's updates to its copies (ordered.c). */
static void on_update_ack(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    (void)pl;
    if (h->len != 0)
        dsm__msg_malformed(h);
    dsm__waiter_complete(dsm__reply_waiter(h, DSM_WAIT_ACKS));
}

/* ---- flushing this node's writes (release and barrier) ---- */

struct diff_batch {
    struct dsm_msg *m;       /* chunk being filled, or NULL */
};

static void batch_send(struct dsm_msg *m, int last, uint32_t waiter)
{
    if (m->hdr.flags & DSM_MF_NOACK) {
        dsm__msg_send(m);           /* a barrier's: no ack, not counted */
        return;
    }
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
        if (flushing_noack)
            b[home].m->hdr.flags |= DSM_MF_NOACK;
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

uint64_t dsm__flush(const uint32_t *list, size_t n, enum dsm_flush_mode mode)
{
    struct dsm_global *g = &dsm__g;
    struct dsm_protect_batch pb = { 0, 0, 0 };
    struct diff_batch *b;
    size_t maxp = dsm__msg_max_payload();
    const int at_barrier = mode != DSM_FLUSH_RELEASE;
    uint64_t homes = 0;
    uint32_t waiter;

    if (n == 0)
        return 0;
    b = calloc((size_t)g->nodes, sizeof *b);
    unsigned char *protected_ = calloc(n, 1);
    if (!b || !protected_)
        dsm__fatal("out of private memory flushing %zu pages", n);
    /* Unacked diffs name no waiter: nothing comes back. */
    waiter = mode == DSM_FLUSH_BARRIER_NOACK ? 0 : dsm__waiter_get(DSM_WAIT_ACKS, 0, NULL);
    pthread_mutex_lock(&flush_lock);
    flushing_for_barrier = at_barrier && dsm__g.cfg.check_races;
    flushing_noack = mode == DSM_FLUSH_BARRIER_NOACK;
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
    flushing_noack = 0;
    pthread_mutex_unlock(&flush_lock);
    if (mode == DSM_FLUSH_BARRIER_NOACK) {
        /* No ack: each home counts the last chunks and waits for the number
         * the barrier's release tells it (barrier.c). */
        for (int r = 0; r < g->nodes; r++)
            if (b[r].m) {
                b[r].m->hdr.flags |= DSM_MF_LAST;
                if (dsm__barrier_late_diffs)
                    late_last[r] = b[r].m;
                else
                    dsm__msg_send(b[r].m);
                homes |= (uint64_t)1 << r;
            }
        free(b);
        free(protected_);
        return homes;
    }
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
    return 0;
}


size_t dsm__release_writes(enum dsm_flush_mode mode, uint64_t *noack_homes)
{
    uint32_t *list;
    pthread_mutex_lock(&release_lock);
    dsm__notrap_mark();
    size_t n = dsm__pt_take_marked(&list);
    uint64_t homes = dsm__flush(list, n, mode);
    if (noack_homes)
        *noack_homes = homes;
    /* A dsm_flush after this release announces these pages (flush.c); a
     * barrier's own notices cover them, and it empties the list. */
    if (mode == DSM_FLUSH_RELEASE)
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
        dsm__history_wasted(p);
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

void dsm__writeout_handlers(void)
{
    dsm__handler_register(DSM_MSG_DIFF_ACK, on_diff_ack);
    dsm__handler_register(DSM_MSG_UPDATE_ACK, on_update_ack);
}
