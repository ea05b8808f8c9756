/*
 * barrier_tree.c - a barrier's entries gathered and its release spread
 * along a binomial tree rooted at node 0 (dsm_pure.h, dsm__tree_*), so that
 * no node handles more than ceil(log2 N) + 1 barrier messages and the
 * longest chain of messages from the last arrival to the last departure
 * is at most 2 ceil(log2 N) (with one master, node 0 received N - 1 entries
 * and sent N - 1 releases in turn).
 *
 * Every node with children enters by sending its own BARRIER_ENTER to
 * itself, a node without goes straight to its parent (the pages
 * it wrote in the interval, with itself or DSM_WRITER_MANY as writer, the
 * homes it sent unacked diffs, the collective's kind and check values).
 * A node merges the entries of itself and of its children: per page, the
 * sole writer or several; per node, the count of senders of unacked diffs;
 * and checks that every child's subtree made the same collective call with
 * the same arguments as itself (a node is the lowest rank of its subtree,
 * so the message names the lower rank first, rank 0 at the top).  When all
 * have arrived, a node other than 0 sends the merged entry to its parent;
 * node 0 sends the release, the merged notices and counts, to its children
 * (largest subtree first) and to itself.  Any other node that receives a
 * release forwards each chunk to its children and collects it for its own
 * barrier thread (barrier.c).
 *
 * State per node, under the progress token: on_barrier_enter and
 * on_barrier_release (the handlers of BARRIER_ENTER and BARRIER_RELEASE,
 * registered by barrier.c) run there; dsm__tree_enter runs on the barrier's
 * application thread and only sends.  Nodes with children keep a writer per
 * page (mapped lazily, as the pages written).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm_internal.h"

struct entry_rec {
    uint32_t kind;
    uint64_t check, aux;
};

static struct {
    uint32_t epoch;                 /* barriers this node has passed up (or released) */
    int expect;                     /* 1 + children */
    int arrived;
    int nomigrate;                  /* this barrier (node 0: for good) */
    uint8_t *in;                    /* per node: its entry is in (self and children) */
    struct entry_rec *rec;          /* per node: its entry's collective and checks */
    uint32_t *waiter;               /* per node: the slot its release goes to */
    uint32_t *down_waiter;          /* per node: the same, for the release under way */
    uint32_t *counts;               /* per node: senders of unacked diffs to it */
    int32_t *writer;                /* per page: 0 none, r+1 sole writer r, -1 many */
    uint32_t *touched;
    size_t ntouched;
    /* Node 0: what the next release carries (dsm__tree_carry, written by
     * the barrier's thread before it enters, read when all have). */
    unsigned char carry[DSM_BARRIER_CARRY_MAX];
    size_t carry_len;
} T;

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

int dsm__tree_init(void)
{
    int n = dsm__g.nodes, me = dsm__g.rank;
    memset(&T, 0, sizeof T);
    T.expect = 1 + dsm__tree_nchildren(me, n, dsm__g.tree_flat);
    T.in = calloc((size_t)n, 1);
    T.rec = calloc((size_t)n, sizeof *T.rec);
    T.waiter = calloc((size_t)n, sizeof *T.waiter);
    T.down_waiter = calloc((size_t)n, sizeof *T.down_waiter);
    T.counts = calloc((size_t)n, sizeof *T.counts);
    if (!T.in || !T.rec || !T.waiter || !T.down_waiter || !T.counts)
        return -DSM_ENOMEM;
    if (T.expect == 1)
        return 0;                   /* a leaf sends its entry as it is: nothing to merge */
    T.writer = mmap(NULL, dsm__g.npages * sizeof *T.writer, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    T.touched = mmap(NULL, dsm__g.npages * sizeof *T.touched, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (T.writer == MAP_FAILED || T.touched == MAP_FAILED)
        return -DSM_ENOMEM;
    return 0;
}

/* ---- sending: entries up, releases down ---- */

/* Send the counts and notices as type to dest, in as many chunks as needed;
 * waiter, flags, arg, arg2 as given, the last chunk marked DSM_MF_LAST and
 * ending with the carry bytes (a RELEASE's: their length in arg). */
static void send_tree_msg(int type, int dest, const uint32_t *counts,
                          const struct dsm_wire_notice *nt, size_t n, uint32_t waiter,
                          uint16_t flags, uint64_t arg, uint64_t arg2,
                          const void *carry, size_t carry_len)
{
    size_t cb = (size_t)dsm__g.nodes * sizeof *counts;
    size_t per = (dsm__msg_max_payload() - cb - carry_len) / sizeof *nt, i = 0;
    do {
        size_t k = n - i < per ? n - i : per;
        int last = i + k == n;
        size_t len = cb + k * sizeof *nt + (last ? carry_len : 0);
        struct dsm_msg *m = dsm__msg_new(type, dest, len);
        memcpy(m->payload, counts, cb);
        memcpy(m->payload + cb, nt + i, k * sizeof *nt);
        if (last && carry_len)
            memcpy(m->payload + cb + k * sizeof *nt, carry, carry_len);
        i += k;
        m->hdr.len = (uint32_t)len;
        m->hdr.id = T.epoch;
        m->hdr.waiter = waiter;
        m->hdr.flags = flags;
        m->hdr.arg = last && carry_len ? carry_len : arg;
        m->hdr.arg2 = arg2;
        if (last)
            m->hdr.flags |= DSM_MF_LAST;
        dsm__msg_send(m);
    } while (i < n);
}

void dsm__tree_carry(const void *send, size_t len)
{
    if (len > DSM_BARRIER_CARRY_MAX)
        dsm__fatal("internal error: %zu bytes to carry in a barrier's release, at most %d",
                   len, DSM_BARRIER_CARRY_MAX);
    memcpy(T.carry, send, len);
    T.carry_len = len;
}

void dsm__tree_enter(enum dsm_coll_kind kind, uint64_t check, uint64_t aux,
                     const uint32_t *list, size_t n, const uint32_t *nocopy,
                     uint64_t noack_homes, uint32_t waiter, int nomigrate)
{
    struct dsm_global *g = &dsm__g;
    uint32_t *counts = calloc((size_t)g->nodes, sizeof *counts);
    struct dsm_wire_notice *nt = malloc((n ? n : 1) * sizeof *nt);
    if (!counts || !nt)
        dsm__fatal("out of private memory for a barrier entry of %zu pages", n);
    for (int r = 0; r < g->nodes; r++)
        counts[r] = (noack_homes >> r) & 1;
    for (size_t i = 0; i < n; i++) {
        nt[i].page = list[i];
        nt[i].writer = nocopy && nocopy[i] ? DSM_WRITER_MANY : g->rank;
    }
    /* A node without children has nothing to merge: its entry goes to its
     * parent at once, as its subtree's (a message to itself first would
     * wait for the progress engine, under DSM_COMM=queue a wake-up of the
     * communication thread).  T.epoch is then this thread's alone; a node
     * with children reads it here without the token: it moves only when
     * this node's entry and its children's are in, which this send
     * precedes. */
    int leaf = g->rank != 0 && dsm__tree_nchildren(g->rank, g->nodes, g->tree_flat) == 0;
    send_tree_msg(DSM_MSG_BARRIER_ENTER,
                  leaf ? dsm__tree_parent(g->rank, g->tree_flat) : g->rank, counts, nt, n,
                  waiter, (uint16_t)((kind << 8) | (nomigrate ? DSM_MF_NOMIGRATE : 0)),
                  check, aux, NULL, 0);
    if (leaf)
        T.epoch++;
    free(counts);
    free(nt);
}

/* ---- merging entries ---- */

/* Every child's subtree made this node's call with its arguments. */
static void check_children(void)
{
    int me = dsm__g.rank, nodes = dsm__g.nodes;
    const struct entry_rec *a = &T.rec[me];
    /* In rank order, whatever the shape: the lowest disagreeing rank. */
    for (int r = me + 1; r < nodes; r++) {
        if (dsm__tree_parent(r, dsm__g.tree_flat) != me)
            continue;
        const struct entry_rec *b = &T.rec[r];
        if (b->kind == a->kind && b->check == a->check)
            continue;
        if (b->kind != a->kind)
            dsm__fatal("ranks disagree on a collective call: rank %d called %s while "
                       "rank %d called %s; every rank must make the same collective "
                       "calls (dsm_malloc, dsm_free, dsm_barrier) in the same order",
                       me, kind_name(a->kind), r, kind_name(b->kind));
        if (a->kind == DSM_COLL_MALLOC)
            dsm__fatal("ranks disagree on dsm_malloc: rank %d asked for %" PRIu64
                       " bytes, rank %d for %" PRIu64 " bytes (or a different home "
                       "policy); every rank must pass the same size and placement",
                       me, a->aux, r, b->aux);
        if (a->kind == DSM_COLL_FREE)
            dsm__fatal("ranks disagree on dsm_free: rank %d freed %#" PRIx64 ", rank %d "
                       "freed %#" PRIx64 "; every rank must free the same pointer",
                       me, a->aux, r, b->aux);
        if (a->kind == DSM_COLL_BCAST)
            dsm__fatal("ranks disagree on dsm_bcast: rank %d passed address %#" PRIx64
                       ", rank %d address %#" PRIx64 " (or a different length or "
                       "root); every rank must pass the same address, length and root",
                       me, a->aux, r, b->aux);
        dsm__fatal("ranks disagree on %s (check %#" PRIx64 " vs %#" PRIx64 ")",
                   kind_name(a->kind), a->check, b->check);
    }
}

/* The merged notices, sorted by page; resets the merge state. */
static struct dsm_wire_notice *take_merged(size_t *n)
{
    qsort(T.touched, T.ntouched, sizeof *T.touched, dsm__cmp_u32);
    struct dsm_wire_notice *nt = malloc((T.ntouched ? T.ntouched : 1) * sizeof *nt);
    if (!nt)
        dsm__fatal("out of private memory for %zu write notices", T.ntouched);
    for (size_t i = 0; i < T.ntouched; i++) {
        uint32_t p = T.touched[i];
        nt[i].page = p;
        nt[i].writer = T.writer[p] > 0 ? T.writer[p] - 1 : DSM_WRITER_MANY;
        T.writer[p] = 0;
    }
    *n = T.ntouched;
    T.ntouched = 0;
    return nt;
}

/* Every entry of this node's subtree is in: pass it up, or release. */
static void subtree_complete(void)
{
    struct dsm_global *g = &dsm__g;
    int me = g->rank;
    const struct entry_rec *own = &T.rec[me];
    size_t n;

    check_children();
    struct dsm_wire_notice *nt = take_merged(&n);
    uint32_t *counts = malloc((size_t)g->nodes * sizeof *counts);
    if (!counts)
        dsm__fatal("out of private memory for a barrier of %d nodes", g->nodes);
    memcpy(counts, T.counts, (size_t)g->nodes * sizeof *counts);
    memset(T.counts, 0, (size_t)g->nodes * sizeof *T.counts);
    memcpy(T.down_waiter, T.waiter, (size_t)g->nodes * sizeof *T.waiter);
    memset(T.in, 0, (size_t)g->nodes);
    T.arrived = 0;
    int nomigrate = T.nomigrate;
    if (me != 0)
        T.nomigrate = 0;           /* node 0: for good, from the first */
    if (me == 0) {
        /* To the children first (largest subtree first), then to itself:
         * node 0 does not forward its own release (dsm__tree_on_release). */
        int nch = dsm__tree_nchildren(0, g->nodes, g->tree_flat);
        for (int k = 0; k <= nch; k++) {
            int r = k < nch ? dsm__tree_child(0, g->nodes, g->tree_flat, k) : 0;
            send_tree_msg(DSM_MSG_BARRIER_RELEASE, r, counts, nt, n, T.down_waiter[r],
                          nomigrate ? DSM_MF_NOMIGRATE : 0, 0, 0, T.carry, T.carry_len);
        }
        T.carry_len = 0;
    } else {
        send_tree_msg(DSM_MSG_BARRIER_ENTER, dsm__tree_parent(me, dsm__g.tree_flat), counts,
                      nt, n, T.down_waiter[me],
                      (uint16_t)((own->kind << 8) | (nomigrate ? DSM_MF_NOMIGRATE : 0)),
                      own->check, own->aux, NULL, 0);
    }
    T.epoch++;
    free(nt);
    free(counts);
}

void dsm__tree_on_enter(const struct dsm_wire_hdr *h, const unsigned char *payload)
{
    struct dsm_global *g = &dsm__g;
    int src = h->src, me = g->rank;
    size_t cb = (size_t)g->nodes * 4;

    if (src != me && (src <= 0 || dsm__tree_parent(src, dsm__g.tree_flat) != me))
        dsm__msg_malformed(h);
    if (h->len < cb || (h->len - cb) % sizeof(struct dsm_wire_notice))
        dsm__msg_malformed(h);
    if (h->id != T.epoch)
        dsm__fatal("protocol error: rank %d entered barrier %u while rank %d is at "
                   "barrier %u", src, h->id, me, T.epoch);
    size_t n = (h->len - cb) / sizeof(struct dsm_wire_notice);
    for (size_t i = 0; i < n; i++) {
        struct dsm_wire_notice e;
        memcpy(&e, payload + cb + i * sizeof e, sizeof e);
        if (e.page >= g->npages)
            dsm__fatal("malformed BARRIER_ENTER from rank %d: page %u out of range", src,
                       e.page);
        int32_t w = e.writer == DSM_WRITER_MANY ? -1 : e.writer + 1;
        int32_t cur = T.writer[e.page];
        if (cur == 0) {
            T.writer[e.page] = w;
            T.touched[T.ntouched++] = e.page;
        } else if (cur != w) {
            T.writer[e.page] = -1;
        }
    }
    if (h->flags & DSM_MF_NOMIGRATE)
        T.nomigrate = 1;
    if (!(h->flags & DSM_MF_LAST))
        return;
    for (int r = 0; r < g->nodes; r++) {
        uint32_t c;
        memcpy(&c, payload + (size_t)r * 4, 4);
        if (c > (uint32_t)g->nodes)
            dsm__msg_malformed(h);
        T.counts[r] += c;
    }
    T.rec[src].kind = h->flags >> 8;
    T.rec[src].check = h->arg;
    T.rec[src].aux = h->arg2;
    T.waiter[src] = h->waiter;
    T.in[src] = 1;
    if (++T.arrived == T.expect)
        subtree_complete();
}

/* A chunk of the release: on to the children, largest subtree first, and
 * into this node's collector. */
void dsm__tree_on_release(const struct dsm_wire_hdr *h, const unsigned char *payload,
                          struct dsm_release *c)
{
    struct dsm_global *g = &dsm__g;
    int me = g->rank, nodes = g->nodes;
    size_t cb = (size_t)nodes * 4;

    if (h->src != (me ? dsm__tree_parent(me, dsm__g.tree_flat) : 0) || h->len < cb ||
        h->arg > DSM_BARRIER_CARRY_MAX || h->arg > h->len - cb ||
        (h->len - cb - h->arg) % sizeof(struct dsm_wire_notice))
        dsm__msg_malformed(h);
    /* Node 0 sent its children theirs when it sent its own. */
    for (int k = 0; me != 0 && k < dsm__tree_nchildren(me, nodes, dsm__g.tree_flat); k++) {
        int r = dsm__tree_child(me, nodes, dsm__g.tree_flat, k);
        struct dsm_msg *m = dsm__msg_new(DSM_MSG_BARRIER_RELEASE, r, h->len);
        memcpy(m->payload, payload, h->len);
        m->hdr.len = h->len;
        m->hdr.id = h->id;
        m->hdr.waiter = T.down_waiter[r];
        m->hdr.flags = h->flags;
        m->hdr.arg = h->arg;
        dsm__msg_send(m);
    }
    size_t n = (h->len - cb - h->arg) / sizeof(struct dsm_wire_notice);
    if (h->arg) {
        /* Node 0's bytes (dsm__barrier_carry): into the caller's buffer. */
        size_t k = h->arg < c->carry_cap ? h->arg : c->carry_cap;
        if (c->carry)
            memcpy(c->carry, payload + h->len - h->arg, k);
        c->carry_len = h->arg;
    }
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
    memcpy(c->items + c->n, payload + cb, n * sizeof *c->items);
    for (size_t i = 0; i < n; i++)
        if (c->items[c->n + i].page >= g->npages)
            dsm__fatal("malformed BARRIER_RELEASE: page %u out of range",
                       c->items[c->n + i].page);
    c->n += n;
    if (h->flags & DSM_MF_NOMIGRATE)
        c->nomigrate = 1;
    uint32_t mine;
    memcpy(&mine, payload + (size_t)me * 4, 4);
    if (mine > (uint32_t)nodes)
        dsm__msg_malformed(h);
    c->diffs_expected = mine;
}

void dsm__tree_dump(struct dsm_sbuf *sb)
{
    int me = dsm__g.rank, nodes = dsm__g.nodes, nch = dsm__tree_nchildren(me, nodes, dsm__g.tree_flat);
    if (!T.in || (me != 0 && nch == 0))
        return;
    dsm__sb_begin(sb);
    dsm__sb_str(sb, me == 0 ? "  barrier master: barrier " : "  barrier tree node: barrier ");
    dsm__sb_u(sb, T.epoch);
    dsm__sb_str(sb, ", ");
    dsm__sb_u(sb, (uint64_t)T.arrived);
    dsm__sb_str(sb, " of ");
    dsm__sb_u(sb, (uint64_t)T.expect);
    dsm__sb_str(sb, " nodes arrived");
    if (T.arrived) {
        int sub = 0;
        dsm__sb_str(sb, "; not yet:");
        if (!T.in[me]) {
            dsm__sb_str(sb, " ");
            dsm__sb_u(sb, (uint64_t)me);
        }
        for (int r = me + 1; r < nodes; r++) {
            if (dsm__tree_parent(r, dsm__g.tree_flat) != me || T.in[r])
                continue;
            dsm__sb_str(sb, " ");
            dsm__sb_u(sb, (uint64_t)r);
            sub |= dsm__tree_nchildren(r, nodes, dsm__g.tree_flat) > 0;
        }
        if (sub)
            dsm__sb_str(sb, " (a rank here stands for its subtree of the barrier tree)");
    }
    dsm__sb_end(sb);
}
