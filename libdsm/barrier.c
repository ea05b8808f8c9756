/*
 * barrier.c - the DSM barrier: flush diffs, exchange write notices through
 * node 0, invalidate.
 *
 * dsm_barrier() runs on one application thread per node while the node's
 * other threads keep off shared memory.  Node 0's communication thread is
 * the barrier master: it merges the pages every node wrote, records for each
 * whether one node or several wrote it, and sends the merged notices to all.
 * A node keeps its copy of a page only if it was the page's only writer; a
 * home keeps in its copyset only such a sole writer, and stops trapping its
 * own writes to a page nobody else held during the interval.
 *
 * The same exchange carries a check value, so that collective calls
 * (dsm_malloc, dsm_free, dsm_finalize) can verify that every node made the
 * same call with the same arguments.
 *
 * Bystanders: a runtime (the shim) runs threads of the program that take no part
 * in barriers and may use shared memory and locks while one runs.  Their
 * writes during a barrier belong to the next interval (page_table.c, lock.c
 * stamp them so).  What they cannot live with is a page changing its home
 * under them: first-touch placement needs the new home's copy to stay valid
 * from the barrier's entry to its end, and a bystander's lock acquire may
 * drop it.  So once any node declares bystanders, the master tells every
 * node in every release from then on that no page migrates.
 *
 * Messages: on_barrier_enter (node 0) and on_barrier_release, registered
 * by dsm__barrier_handlers, run under the progress token.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm_internal.h"


/* Set once by dsm__barrier_bystanders; read by the barrier's thread. */
static int bystanders;

/* ---- node side: the barrier's unacknowledged diffs (DSM_MF_NOACK) ----
 *
 * At a plain barrier a node may send its diffs without asking for acks and
 * enter at once, naming in its BARRIER_ENTER the homes it sent diffs to
 * (a 64-bit mask in arg2, which a plain barrier does not use).  The master
 * counts, per home, the nodes that sent it diffs, and tells each home its
 * count in the release (arg).  A home does not finish the barrier (its
 * epoch stays, so requests of nodes already past it wait: protocol.c,
 * dsm__defer_early) until the last chunk of each of those senders has been
 * applied.  One round trip less per barrier on every node that wrote
 * another's pages.  Chunks are counted by the epoch of their sender, two
 * counters by parity: a sender can be at most one barrier ahead of us.
 * bd_lock guards the counters and the published waiter; taken by
 * on_diff's thread (progress token) and the barrier's, never held while
 * waiting. */
static pthread_mutex_t bd_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t bd_count[2];
static uint32_t bd_epoch;
static int bd_waiting;
static uint32_t bd_waiter;

void dsm__barrier_diff_arrived(const struct dsm_wire_hdr *h)
{
    pthread_mutex_lock(&bd_lock);
    if (bd_waiting && bd_epoch == h->epoch)
        dsm__waiter_complete(dsm__waiter_at(bd_waiter, DSM_WAIT_DIFFS));
    else
        bd_count[h->epoch & 1]++;
    pthread_mutex_unlock(&bd_lock);
}

/* Wait until the last chunks of the expected senders of barrier epoch have
 * been applied here (see above). */
static void wait_barrier_diffs(uint32_t epoch, uint32_t expected)
{
    uint32_t id = dsm__waiter_get(DSM_WAIT_DIFFS, 0, NULL);
    dsm__waiter_note(id, -1, epoch);
    pthread_mutex_lock(&bd_lock);
    uint32_t have = bd_count[epoch & 1];
    bd_count[epoch & 1] = 0;
    if (have > expected)
        dsm__fatal("protocol error: %u ranks sent diffs without acks for barrier %u, "
                   "the master counted %u", have, epoch, expected);
    dsm__waiter_add_expected(id, (int)(expected - have));
    bd_epoch = epoch;
    bd_waiting = 1;
    bd_waiter = id;
    pthread_mutex_unlock(&bd_lock);
    dsm__waiter_wait(id);
    pthread_mutex_lock(&bd_lock);
    bd_waiting = 0;
    pthread_mutex_unlock(&bd_lock);
    dsm__waiter_put(id);
}

/* Whether this barrier's diffs may go without acks: only a plain barrier
 * (its arg2 carries the mask), and not where a node may read a home's page
 * without asking it (DSM_COMM=rma: a one-sided read is not deferred), where
 * bystander threads may take locks during the barrier (a lock passed on
 * meanwhile would order the unacked writes before a reader that never
 * waits for this barrier), or where DSM_CHECK=races checks each diff
 * against the barrier it belongs to. */
static int noack_allowed(enum dsm_coll_kind kind)
{
    return kind == DSM_COLL_BARRIER && dsm__g.cfg.barrier_noack && !dsm__remote_reads() &&
           !dsm__g.cfg.check_races && !__atomic_load_n(&bystanders, __ATOMIC_ACQUIRE);
}

int dsm__barrier_init(void)
{
    bystanders = 0;
    return dsm__tree_init();
}

void dsm__barrier_dump(struct dsm_sbuf *sb)
{
    dsm__tree_dump(sb);
}

/* A chunk of the release, from the parent in the barrier tree (from itself
 * on node 0): forwarded and collected by barrier_tree.c. */
static void on_barrier_release(const struct dsm_wire_hdr *h, const unsigned char *payload)
{
    struct dsm_waiter *w = dsm__reply_waiter(h, DSM_WAIT_BARRIER);
    dsm__tree_on_release(h, payload, w->ctx);
    if (h->flags & DSM_MF_LAST)
        dsm__waiter_complete(w);
}

/* First-touch placement (DSM_PF_MIGRATE pages): page p, written in the
 * interval by node w alone, gets w as its home on every node.  w kept its
 * copy (sole writer) and its diffs reached the old home, so both copies are
 * the page; the old home drops its copy and w serves it from now on.  Every
 * other copy is invalidated as for any write notice.  No request for p is
 * in flight: requests are answered before their sender enters the barrier,
 * and later ones are deferred by the new home until it has applied this. */
static void migrate(size_t p, int w, struct dsm_protect_batch *pb)
{
    struct dsm_global *g = &dsm__g;
    struct dsm_page *pg = &g->pages[p];

    dsm__page_lock(p);
    int old = pg->home;
    pg->home = (uint16_t)w;
    pg->flags &= (uint8_t)~DSM_PF_MIGRATE;
    pg->copyset = 0;
    if (g->rank == w) {
        if (pg->state != DSM_P_READ_ONLY && pg->state != DSM_P_READ_WRITE)
            dsm__fatal("protocol error: page %zu migrates here but is %s here", p,
                       dsm__page_state_name(pg->state));
        if (dsm__remote_reads()) {
            /* Others may read it unseen: trap our next write. */
            dsm__pb_add(pb, p, PROT_READ);
            pg->state = DSM_P_READ_ONLY;
        } else {
            if (pg->state != DSM_P_READ_WRITE)
                dsm__pb_add(pb, p, PROT_READ | PROT_WRITE);
            pg->state = DSM_P_READ_WRITE;
        }
        pg->flags &= (uint8_t)~DSM_PF_TWIN;
        DSM_STAT_ADD(pages_migrated, 1);
        dsm__page_unlock(p);
    } else if (g->rank == old) {
        if (pg->state != DSM_P_INVALID)
            dsm__pb_add(pb, p, PROT_NONE);
        pg->state = DSM_P_INVALID;
        dsm__page_unlock(p);
    } else {
        dsm__page_unlock(p);
        dsm__invalidate_copy(p, pb);
    }
}

/* Apply the merged write notices (see the file comment). */
static void apply_release(const struct dsm_release *c)
{
    struct dsm_global *g = &dsm__g;
    struct dsm_protect_batch pb = { 0, 0, 0 };

    for (size_t i = 0; i < c->n; i++) {
        size_t p = c->items[i].page;
        int w = c->items[i].writer;
        struct dsm_page *pg = &g->pages[p];

        if (pg->state == DSM_P_UNALLOC)
            continue;
        if ((pg->flags & DSM_PF_MIGRATE) && w >= 0 && w != pg->home && !c->nomigrate) {
            migrate(p, w, &pb);
            continue;
        }
        if (pg->home == g->rank) {
            dsm__page_lock(p);
            uint64_t bit = w >= 0 ? (uint64_t)1 << w : 0, was = pg->copyset;
            pg->copyset = (w >= 0 && w != g->rank && (was & bit)) ? bit : 0;
            /* Stop trapping our own writes only to a page nobody read in
             * the interval that ends here.  A page others read now is likely
             * read again next interval (laplace's boundary rows): keeping it
             * write-protected lets us serve it without an mprotect on the
             * reader's critical path; our next write to it traps once.
             * Never once this node made an ordered flush (ordered.c). */
            if (pg->copyset == 0 && was == 0 &&
                ((!dsm__remote_reads() && !__atomic_load_n(&dsm__home_tracked,
                                                            __ATOMIC_ACQUIRE)) ||
                 (pg->flags & DSM_PF_NOTRAP))) {
                struct dsm_ptrans t = dsm__page_transition(pg->state, DSM_EV_UNTRACK, 1);
                if (t.actions & DSM_ACT_PROTECT)
                    dsm__pb_add(&pb, p, dsm__page_prot(t.next));
                if (!(t.actions & DSM_ACT_ERROR))
                    pg->state = t.next;
            }
            dsm__page_unlock(p);
        } else if (w != g->rank) {
            dsm__invalidate_copy(p, &pb);
        }
    }
    dsm__pb_flush(&pb);
}

/* Application thread, leaving the barrier, where the transport lets it make
 * progress (waiter_progress).  Nodes that left before us have usually asked
 * for pages already, and those requests waited for this epoch (protocol.c).
 * Serve them here rather than leave them to a communication thread that
 * must first get a core from the computing thread we are about to become:
 * with 2 ranks on 2 cores that wait measured 0.4-4 ms per request in
 * laplace, against 0.01 ms for an RMR to an idle home.  Such requests come
 * in bursts (the pages of one halo row, faulted on a few us apart), so keep
 * serving until DSM_SPIN_US passes without an event, as the communication
 * thread would. */
static void serve_early_requests(void)
{
    if (!dsm__g.ops->waiter_progress || !dsm__deferred_pending())
        return;
    const uint64_t spin_ns = (uint64_t)dsm__g.cfg.spin_us * 1000;
    uint64_t last = dsm__now_ns(), now = last;
    do {
        if (dsm__comm_try_progress() > 0)
            last = now;
        now = dsm__now_ns();
    } while (now - last < spin_ns);
}

/* The barrier; send/recv/len: dsm__barrier_carry's (NULL, NULL, 0 for
 * none).  Returns the bytes of node 0's that arrived in recv. */
static size_t barrier_run(enum dsm_coll_kind kind, uint64_t check, uint64_t aux,
                          void (*at_release)(void *), void *arg,
                          const void *send, void *recv, size_t len)
{
    struct dsm_global *g = &dsm__g;
    uint64_t t0 = dsm__now_ns(), m0 = __atomic_load_n(&dsm__st.msgs_sent, __ATOMIC_RELAXED);
    struct dsm_release ctx = { NULL, 0, 0, 0, 0, recv, len, 0 };
    uint32_t *list, waiter;
    uint64_t noack_homes = 0;
    size_t n;

    DSM_TRACE_ENTER(DSM_TR_BARRIER_ENTER, kind, 0, g->epoch, 0);
    /* No prefetch crosses a barrier (prefetch.c, point 1). */
    dsm__prefetch_drain();
    dsm__release_writes(g->nodes > 1 && noack_allowed(kind) ? DSM_FLUSH_BARRIER_NOACK
                                                           : DSM_FLUSH_BARRIER,
                        &noack_homes);
    /* Every lock release of this node is at its manager first (lock.c). */
    dsm__lock_wait_releases();

    n = dsm__pt_take_epoch(&list);
    if (g->nodes == 1) {
        /* Alone: no messages; the notices are this node's own writes. */
        ctx.items = malloc((n ? n : 1) * sizeof *ctx.items);
        if (!ctx.items)
            dsm__fatal("out of private memory for %zu write notices", n);
        for (size_t i = 0; i < n; i++) {
            ctx.items[i].page = list[i];
            ctx.items[i].writer = g->rank;
        }
        ctx.n = n;
        free(list);
        if (send && recv) {
            memmove(recv, send, len);
            ctx.carry_len = len;
        }
    } else {
        /* A page written here whose copy was dropped since (a lock
         * acquire's notice) cannot move its home here: it enters as
         * written by several (nobody keeps or takes it). */
        uint32_t *nocopy = calloc(n ? n : 1, sizeof *nocopy);
        if (!nocopy)
            dsm__fatal("out of private memory for a barrier entry of %zu pages", n);
        for (size_t i = 0; i < n; i++) {
            struct dsm_page *pg = &g->pages[list[i]];
            if ((pg->flags & DSM_PF_MIGRATE) && pg->home != g->rank &&
                pg->state != DSM_P_READ_ONLY && pg->state != DSM_P_READ_WRITE)
                nocopy[i] = 1;
        }
        if (g->rank == 0 && send)
            dsm__tree_carry(send, len);
        waiter = dsm__waiter_get(DSM_WAIT_BARRIER, 1, &ctx);
        dsm__waiter_note(waiter, g->rank ? dsm__tree_parent(g->rank, g->tree_flat) : 0, g->epoch);
        dsm__tree_enter(kind, check, aux, list, n, nocopy, noack_homes, waiter,
                        __atomic_load_n(&bystanders, __ATOMIC_ACQUIRE));
        free(nocopy);
        free(list);
        dsm__waiter_wait(waiter);
        dsm__waiter_put(waiter);
        /* Before this barrier's end: the other nodes' unacked diffs to our
         * pages, which their requests after it must find applied. */
        dsm__flush_send_late();
        if (ctx.diffs_expected)
            wait_barrier_diffs(g->epoch, ctx.diffs_expected);
    }

    /* From here on this node's page requests say "next epoch": the homes
     * defer them until they have applied this barrier too (protocol.c). */
    __atomic_store_n(&dsm__fetch_epoch, g->epoch + 1, __ATOMIC_RELEASE);
    apply_release(&ctx);
    free(ctx.items);
    dsm__pt_clear_epoch();
    if (at_release)
        at_release(arg);
    /* Release: requests deferred until this epoch may now be served. */
    __atomic_store_n(&g->epoch, g->epoch + 1, __ATOMIC_RELEASE);
    dsm__comm_wake();
    dsm__prefetch_after_barrier(kind);
    serve_early_requests();

    DSM_STAT_ADD(barriers, 1);
    DSM_STAT_ADD(barrier_ns, dsm__now_ns() - t0);
    DSM_STAT_ADD(barrier_msgs, __atomic_load_n(&dsm__st.msgs_sent, __ATOMIC_RELAXED) - m0);
    DSM_TRACE_LEAVE(DSM_TR_BARRIER_LEAVE, kind, 0, g->epoch - 1,
                    __atomic_load_n(&dsm__st.msgs_sent, __ATOMIC_RELAXED) - m0);
    return ctx.carry_len;
}

void dsm__barrier_checked(enum dsm_coll_kind kind, uint64_t check, uint64_t aux,
                          void (*at_release)(void *), void *arg)
{
    (void)barrier_run(kind, check, aux, at_release, arg, NULL, NULL, 0);
}

size_t dsm__barrier_carry(const void *send, void *recv, size_t len)
{
    /* A runtime's barrier, to the program a barrier like dsm_barrier. */
    DSM_CHECK_RUNNING_AS("dsm_barrier");
    if (len > DSM_BARRIER_CARRY_MAX)
        dsm__fatal("internal error: dsm__barrier_carry of %zu bytes, at most %d", len,
                   DSM_BARRIER_CARRY_MAX);
    size_t got = barrier_run(DSM_COLL_BARRIER, 0, 0, NULL, NULL, dsm__g.rank == 0 ? send : NULL,
                             recv, len);
    return got < len ? got : len;
}

void dsm__barrier_bystanders(void)
{
    __atomic_store_n(&bystanders, 1, __ATOMIC_RELEASE);
}

void dsm_barrier(void)
{
    DSM_CHECK_RUNNING();
    dsm__barrier_checked(DSM_COLL_BARRIER, 0, 0, NULL, NULL);
}

void dsm__barrier_handlers(void)
{
    dsm__handler_register(DSM_MSG_BARRIER_ENTER, dsm__tree_on_enter);
    dsm__handler_register(DSM_MSG_BARRIER_RELEASE, on_barrier_release);
}
