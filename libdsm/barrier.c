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

/* ---- master state (node 0's communication thread only) ---- */
static struct {
    int arrived;
    uint32_t epoch;                 /* barriers released so far */
    uint64_t *check, *aux;          /* per node */
    uint32_t *kind, *waiter;        /* per node */
    uint8_t *in;                    /* per node: entered this barrier (dumps) */
    int nomigrate;                  /* a node declared bystanders: for good */
    int32_t *writer;                /* per page: 0 none, r+1 sole writer r, -1 many */
    uint32_t *diffs_to;             /* per node: senders of unacked diffs to it */
    uint32_t *touched;
    size_t ntouched;
} M;

/* ---- node side: the collector of the release ---- */
struct release_ctx {
    struct dsm_wire_notice *items;
    size_t n, cap;
    int nomigrate;                  /* DSM_MF_NOMIGRATE */
    uint32_t diffs_expected;        /* senders of unacked diffs to this node */
};

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


static const char *kind_name(uint32_t k)
{
    switch (k) {
    case DSM_COLL_BARRIER:  return "dsm_barrier";
    case DSM_COLL_MALLOC:   return "dsm_malloc";
    case DSM_COLL_FREE:     return "dsm_free";
    case DSM_COLL_FINALIZE: return "dsm_finalize";
    case DSM_COLL_BCAST:    return "dsm_bcast";
    default:                return "an unknown collective";
    }
}

int dsm__barrier_init(void)
{
    int n = dsm__g.nodes;
    memset(&M, 0, sizeof M);
    bystanders = 0;
    if (dsm__g.rank != 0)
        return 0;
    M.check = calloc((size_t)n, sizeof *M.check);
    M.aux = calloc((size_t)n, sizeof *M.aux);
    M.kind = calloc((size_t)n, sizeof *M.kind);
    M.waiter = calloc((size_t)n, sizeof *M.waiter);
    M.in = calloc((size_t)n, 1);
    M.diffs_to = calloc((size_t)n, sizeof *M.diffs_to);
    M.writer = mmap(NULL, dsm__g.npages * sizeof *M.writer, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    M.touched = mmap(NULL, dsm__g.npages * sizeof *M.touched, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (!M.check || !M.aux || !M.kind || !M.waiter || !M.in || !M.diffs_to ||
        M.writer == MAP_FAILED ||
        M.touched == MAP_FAILED)
        return -DSM_ENOMEM;
    return 0;
}

static void master_check(void)
{
    for (int r = 1; r < dsm__g.nodes; r++) {
        if (M.kind[r] == M.kind[0] && M.check[r] == M.check[0])
            continue;
        if (M.kind[r] != M.kind[0])
            dsm__fatal("ranks disagree on a collective call: rank 0 called %s while "
                       "rank %d called %s; every rank must make the same collective "
                       "calls (dsm_malloc, dsm_free, dsm_barrier) in the same order",
                       kind_name(M.kind[0]), r, kind_name(M.kind[r]));
        if (M.kind[0] == DSM_COLL_MALLOC)
            dsm__fatal("ranks disagree on dsm_malloc: rank 0 asked for %" PRIu64
                       " bytes, rank %d for %" PRIu64 " bytes (or a different home "
                       "policy); every rank must pass the same size and placement",
                       M.aux[0], r, M.aux[r]);
        if (M.kind[0] == DSM_COLL_FREE)
            dsm__fatal("ranks disagree on dsm_free: rank 0 freed %#" PRIx64 ", rank %d "
                       "freed %#" PRIx64 "; every rank must free the same pointer",
                       M.aux[0], r, M.aux[r]);
        if (M.kind[0] == DSM_COLL_BCAST)
            dsm__fatal("ranks disagree on dsm_bcast: rank 0 passed address %#" PRIx64
                       ", rank %d address %#" PRIx64 " (or a different length or "
                       "root); every rank must pass the same address, length and root",
                       M.aux[0], r, M.aux[r]);
        dsm__fatal("ranks disagree on %s (check %#" PRIx64 " vs %#" PRIx64 ")",
                   kind_name(M.kind[0]), M.check[0], M.check[r]);
    }
}

static void master_release(void)
{
    size_t maxp = dsm__msg_max_payload();
    size_t per = maxp / sizeof(struct dsm_wire_notice);

    master_check();
    qsort(M.touched, M.ntouched, sizeof *M.touched, dsm__cmp_u32);
    for (int r = 0; r < dsm__g.nodes; r++) {
        size_t i = 0;
        do {
            size_t k = M.ntouched - i < per ? M.ntouched - i : per;
            struct dsm_msg *m = dsm__msg_new(DSM_MSG_BARRIER_RELEASE, r,
                                             k * sizeof(struct dsm_wire_notice));
            struct dsm_wire_notice *out = (struct dsm_wire_notice *)m->payload;
            for (size_t j = 0; j < k; j++) {
                uint32_t p = M.touched[i + j];
                out[j].page = p;
                out[j].writer = M.writer[p] > 0 ? M.writer[p] - 1 : DSM_WRITER_MANY;
            }
            i += k;
            m->hdr.len = (uint32_t)(k * sizeof *out);
            m->hdr.waiter = M.waiter[r];
            m->hdr.id = M.epoch;
            m->hdr.arg = M.diffs_to[r];
            if (i == M.ntouched)
                m->hdr.flags |= DSM_MF_LAST;
            if (M.nomigrate)
                m->hdr.flags |= DSM_MF_NOMIGRATE;
            dsm__msg_send(m);
        } while (i < M.ntouched);
    }
    for (size_t i = 0; i < M.ntouched; i++)
        M.writer[M.touched[i]] = 0;
    M.ntouched = 0;
    M.arrived = 0;
    memset(M.in, 0, (size_t)dsm__g.nodes);
    memset(M.diffs_to, 0, (size_t)dsm__g.nodes * sizeof *M.diffs_to);
    M.epoch++;
}

static void on_barrier_enter(const struct dsm_wire_hdr *h, const unsigned char *payload)
{
    const uint32_t *pages = (const uint32_t *)(const void *)payload;
    size_t n = h->len / 4;
    int src = h->src;

    if (dsm__g.rank != 0 || h->len % 4)
        dsm__msg_malformed(h);
    if (h->id != M.epoch)
        dsm__fatal("protocol error: rank %d entered barrier %u while node 0 is at "
                   "barrier %u", src, h->id, M.epoch);
    for (size_t i = 0; i < n; i++) {
        uint32_t p = pages[i] & ~DSM_NOTICE_NOCOPY;
        if (p >= dsm__g.npages)
            dsm__fatal("malformed BARRIER_ENTER from rank %d: page %u out of range", src, p);
        int32_t w = M.writer[p];
        if (w == 0) {
            M.writer[p] = src + 1;
            M.touched[M.ntouched++] = p;
        } else if (w != src + 1) {
            M.writer[p] = -1;
        }
        if (pages[i] & DSM_NOTICE_NOCOPY)
            M.writer[p] = -1;   /* as if several wrote it: nobody keeps or takes it */
    }
    if (h->flags & DSM_MF_NOMIGRATE)
        M.nomigrate = 1;
    M.check[src] = h->arg;
    M.aux[src] = h->arg2;
    M.kind[src] = h->flags >> 8;
    M.waiter[src] = h->waiter;
    if (h->flags & DSM_MF_LAST) {
        M.in[src] = 1;
        /* A plain barrier's arg2: the homes this node sent unacked diffs. */
        uint64_t homes = M.kind[src] == DSM_COLL_BARRIER ? h->arg2 : 0;
        for (int r = 0; r < dsm__g.nodes; r++)
            if (homes & ((uint64_t)1 << r))
                M.diffs_to[r]++;
        if (dsm__g.nodes < 64 && (homes >> dsm__g.nodes))
            dsm__fatal("malformed BARRIER_ENTER from rank %d: diffs sent to rank(s) beyond "
                       "the %d ranks (mask %#" PRIx64 ")", src, dsm__g.nodes, homes);
    }
    if ((h->flags & DSM_MF_LAST) && ++M.arrived == dsm__g.nodes)
        master_release();
}

void dsm__barrier_dump(struct dsm_sbuf *sb)
{
    if (dsm__g.rank != 0 || !M.in)
        return;
    dsm__sb_begin(sb);
    dsm__sb_str(sb, "  barrier master: barrier ");
    dsm__sb_u(sb, M.epoch);
    dsm__sb_str(sb, ", ");
    dsm__sb_u(sb, (uint64_t)M.arrived);
    dsm__sb_str(sb, " of ");
    dsm__sb_u(sb, (uint64_t)dsm__g.nodes);
    dsm__sb_str(sb, " nodes arrived");
    if (M.arrived) {
        dsm__sb_str(sb, "; not yet:");
        for (int r = 0; r < dsm__g.nodes; r++)
            if (!M.in[r]) {
                dsm__sb_str(sb, " ");
                dsm__sb_u(sb, (uint64_t)r);
            }
    }
    dsm__sb_end(sb);
}

static void on_barrier_release(const struct dsm_wire_hdr *h, const unsigned char *payload)
{
    if (h->len % sizeof(struct dsm_wire_notice) || h->src != 0)
        dsm__msg_malformed(h);
    struct dsm_waiter *w = dsm__reply_waiter(h, DSM_WAIT_BARRIER);
    struct release_ctx *c = w->ctx;
    size_t n = h->len / sizeof(struct dsm_wire_notice);

    if (c->n + n > c->cap) {
        size_t nc = c->cap ? c->cap : 256;
        while (nc < c->n + n)
            nc *= 2;
        void *p = realloc(c->items, nc * sizeof *c->items);
        if (!p)
            dsm__fatal("out of private memory for %zu write notices", c->n + n);
        c->items = p;
        c->cap = nc;
    }
    memcpy(c->items + c->n, payload, n * sizeof *c->items);
    for (size_t i = 0; i < n; i++)
        if (c->items[c->n + i].page >= dsm__g.npages)
            dsm__fatal("malformed BARRIER_RELEASE: page %u out of range",
                       c->items[c->n + i].page);
    c->n += n;
    if (h->flags & DSM_MF_NOMIGRATE)
        c->nomigrate = 1;
    if (h->arg > (uint64_t)dsm__g.nodes)
        dsm__msg_malformed(h);
    c->diffs_expected = (uint32_t)h->arg;
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
static void apply_release(const struct release_ctx *c)
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

void dsm__barrier_checked(enum dsm_coll_kind kind, uint64_t check, uint64_t aux,
                          void (*at_release)(void *), void *arg)
{
    struct dsm_global *g = &dsm__g;
    uint64_t t0 = dsm__now_ns(), m0 = __atomic_load_n(&dsm__st.msgs_sent, __ATOMIC_RELAXED);
    struct release_ctx ctx = { NULL, 0, 0, 0, 0 };
    uint32_t *list, waiter;
    uint64_t noack_homes = 0;
    size_t n;

    DSM_TRACE_ENTER(DSM_TR_BARRIER_ENTER, kind, 0, g->epoch, 0);
    /* No prefetch crosses a barrier (prefetch.c, point 1). */
    dsm__prefetch_drain();
    dsm__release_writes(g->nodes > 1 && noack_allowed(kind) ? DSM_FLUSH_BARRIER_NOACK
                                                           : DSM_FLUSH_BARRIER,
                        &noack_homes);

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
    } else {
        /* A page written here whose copy was dropped since (a lock
         * acquire's notice) cannot move its home here: say so
         * (DSM_NOTICE_NOCOPY). */
        for (size_t i = 0; i < n; i++) {
            struct dsm_page *pg = &g->pages[list[i]];
            if ((pg->flags & DSM_PF_MIGRATE) && pg->home != g->rank &&
                pg->state != DSM_P_READ_ONLY && pg->state != DSM_P_READ_WRITE)
                list[i] |= DSM_NOTICE_NOCOPY;
        }
        waiter = dsm__waiter_get(DSM_WAIT_BARRIER, 1, &ctx);
        dsm__waiter_note(waiter, 0, g->epoch);
        uint16_t flags = (uint16_t)(kind << 8);
        if (__atomic_load_n(&bystanders, __ATOMIC_ACQUIRE))
            flags |= DSM_MF_NOMIGRATE;
        if (kind == DSM_COLL_BARRIER)
            aux = noack_homes;      /* unused by a plain barrier's check */
        dsm__msg_send_pages(DSM_MSG_BARRIER_ENTER, 0, list, n, g->epoch, waiter, flags,
                            check, aux);
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
    dsm__handler_register(DSM_MSG_BARRIER_ENTER, on_barrier_enter);
    dsm__handler_register(DSM_MSG_BARRIER_RELEASE, on_barrier_release);
}
