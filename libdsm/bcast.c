/*
 * bcast.c - dsm_bcast: give every node a valid read-only copy of a range of
 * pages with one tree broadcast (MPI_Ibcast on the library's communicator)
 * instead of every node faulting on the same home.
 *
 * Threads: dsm_bcast runs on one application thread per node (a collective,
 * like dsm_barrier); the broadcast itself is started and tested by comm.c's
 * progress round (dsm__comm_collective), so it obeys the transport's rules
 * for MPI calls, and the communication thread keeps serving page requests
 * while it runs.
 *
 * Steps, each node:
 *  1. a checked barrier (DSM_COLL_BCAST): flushes every node's writes to the
 *     homes, applies the write notices, and checks that every node passed
 *     the same address, length and root;
 *  2. the root makes its copy of every page current: a page it neither homes
 *     nor holds a valid copy of is fetched from its home (a read fault);
 *  3. one broadcast from a copy of the root's system view, made before any
 *     receiver can leave the broadcast (chunk_buffers).  A node receives
 *     the pages it does not home into its system view (their application
 *     view is still PROT_NONE or read-only, so nobody sees a half-written
 *     page); the pages it homes go to their twin slots, which are free
 *     between barriers, so the master copies are never written by the
 *     broadcast (a chunk with a twin in use, DSM_CHECK=races, goes to a
 *     private buffer instead: chunk_buffers);
 *  4. a node makes the pages it does not home READ_ONLY; a home adds every
 *     other node to the copyset of its pages and write-protects them, so that
 *     its own next write traps and becomes a write notice.
 * Why the data is current and stays coherent is argued in libdsm(7),
 * "BROADCAST".
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm_internal.h"

/* One MPI_Ibcast moves at most this many bytes (its count is an int). */
#define BCAST_CHUNK ((size_t)1 << 30)

struct bcast_op {
    struct dsm_coll c;
    size_t first, count;         /* pages */
    int root;
    size_t nchunks;
    MPI_Request *reqs;
    MPI_Datatype *types;         /* per chunk, MPI_DATATYPE_NULL if contiguous */
    unsigned char **buf;         /* per chunk: the contiguous buffer it is sent from
                                    (root) or received into (a receiver; NULL: in
                                    place, recv_type) */
    unsigned char **own;         /* per chunk: buf if malloc'd (freed after), or NULL */
};

/* Chunk k of o: pages [*p, *p + *n). */
static void chunk_of(const struct bcast_op *o, size_t k, size_t *p, size_t *n)
{
    size_t per = BCAST_CHUNK >> dsm__g.page_shift;
    *p = o->first + k * per;
    *n = o->count - k * per < per ? o->count - k * per : per;
}

/* The receive layout of pages [p, p+n) on this node: runs of pages homed
 * here go to their twin slots, the others to the system view.  Returns the
 * datatype (over MPI_BOTTOM), or MPI_DATATYPE_NULL if the whole chunk goes
 * contiguously into the system view. */
static MPI_Datatype recv_type(size_t p, size_t n)
{
    struct dsm_global *g = &dsm__g;
    size_t runs = 0;
    int any_home = 0;

    for (size_t i = 0; i < n; i++) {
        int h = g->pages[p + i].home == g->rank;
        any_home |= h;
        if (i == 0 || h != (g->pages[p + i - 1].home == g->rank))
            runs++;
    }
    if (!any_home)
        return MPI_DATATYPE_NULL;
    int *lens = malloc(runs * sizeof *lens);
    MPI_Aint *disp = malloc(runs * sizeof *disp);
    if (!lens || !disp)
        dsm__fatal("out of private memory for dsm_bcast's layout (%zu runs)", runs);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        int h = g->pages[p + i].home == g->rank;
        size_t j = i + 1;
        while (j < n && (g->pages[p + j].home == g->rank) == h)
            j++;
        unsigned char *at = h ? dsm__twin_page(p + i) : dsm__sys_page(p + i);
        MPI_Get_address(at, &disp[k]);
        lens[k] = (int)((j - i) << g->page_shift);
        k++;
        i = j;
    }
    MPI_Datatype t;
    if (MPI_Type_create_hindexed((int)runs, lens, disp, MPI_BYTE, &t) != MPI_SUCCESS ||
        MPI_Type_commit(&t) != MPI_SUCCESS)
        dsm__fatal("dsm_bcast: MPI could not build the receive layout (%zu runs)", runs);
    free(lens);
    free(disp);
    return t;
}

static void bcast_start(struct dsm_coll *c)
{
    struct bcast_op *o = (struct bcast_op *)c;
    struct dsm_global *g = &dsm__g;

    for (size_t k = 0; k < o->nchunks; k++) {
        size_t p, n;
        chunk_of(o, k, &p, &n);
        int rc;
        o->types[k] = o->buf[k] ? MPI_DATATYPE_NULL : recv_type(p, n);
        if (o->buf[k])
            rc = MPI_Ibcast(o->buf[k], (int)(n << g->page_shift), MPI_BYTE, o->root,
                            g->comm, &o->reqs[k]);
        else if (o->types[k] == MPI_DATATYPE_NULL)
            rc = MPI_Ibcast(dsm__sys_page(p), (int)(n << g->page_shift), MPI_BYTE,
                            o->root, g->comm, &o->reqs[k]);
        else
            rc = MPI_Ibcast(MPI_BOTTOM, 1, o->types[k], o->root, g->comm, &o->reqs[k]);
        if (rc != MPI_SUCCESS)
            dsm__fatal("dsm_bcast: MPI_Ibcast of %zu pages failed", n);
    }
}

static int bcast_test(struct dsm_coll *c)
{
    struct bcast_op *o = (struct bcast_op *)c;
    int flag = 1;
    for (size_t k = 0; k < o->nchunks; k++) {
        int f = 0;
        if (MPI_Test(&o->reqs[k], &f, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            dsm__fatal("dsm_bcast: the broadcast failed in MPI");
        flag &= f;
    }
    if (flag)
        for (size_t k = 0; k < o->nchunks; k++)
            if (o->types[k] != MPI_DATATYPE_NULL)
                MPI_Type_free(&o->types[k]);
    return flag;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

/* The checks every node makes on its own arguments before the collective
 * part, so that a bad call stops with its reason rather than in MPI. */
static void check_args(void *addr, size_t len, int root, size_t *first, size_t *count)
{
    struct dsm_global *g = &dsm__g;
    unsigned char *a = addr;

    if (root < 0 || root >= g->nodes)
        dsm__fatal("dsm_bcast(%p, %zu, %d): root %d is not a node; nodes are 0 to %d",
                   addr, len, root, root, g->nodes - 1);
    *first = *count = 0;
    if (len == 0)
        return;
    if (!dsm__in_region(a) || (uintptr_t)a + len < (uintptr_t)a ||
        !dsm__in_region(a + len - 1) || dsm__segment_at(a) != dsm__segment_at(a + len - 1))
        dsm__fatal("dsm_bcast(%p, %zu, %d): the range [%p, %p) is not inside the shared "
                   "region; pass memory from dsm_malloc (or memory that a runtime on top "
                   "of libdsm shares, such as the program's heap or globals under the "
                   "shim)", addr, len, root, addr,
                   (void *)(a + len));
    size_t p0 = dsm__page_of(a), p1 = dsm__page_of(a + len - 1);
    for (size_t p = p0; p <= p1; p++)
        if (g->pages[p].state == DSM_P_UNALLOC)
            dsm__fatal("dsm_bcast(%p, %zu, %d): the range covers %p, which is not "
                       "allocated (freed, or never returned by dsm_malloc); broadcast "
                       "only allocated memory", addr, len, root,
                       (void *)dsm__app_page(p));
    *first = p0;
    *count = p1 - p0 + 1;
}

/* Step 2: the root's copy of every page becomes current.  After the
 * barrier a page the root does not home is a valid read-only copy (nobody
 * else wrote it), a valid PREFETCHED one (a prefetch answered before the
 * barrier, which drained it, and not dropped by its notices: libdsm(7),
 * "Why a prefetch is never used stale"; its system view is current even
 * though its application view is still PROT_NONE), or invalid; reading an
 * invalid one fetches it from its home through the ordinary fault path. */
static void root_make_current(size_t first, size_t count)
{
    struct dsm_global *g = &dsm__g;
    for (size_t p = first; p < first + count; p++) {
        struct dsm_page *pg = &g->pages[p];
        if (pg->home == g->rank)
            continue;
        if (__atomic_load_n(&pg->state, __ATOMIC_ACQUIRE) == DSM_P_INVALID)
            (void)*(volatile unsigned char *)dsm__app_page(p);
        if (pg->state != DSM_P_READ_ONLY && pg->state != DSM_P_PREFETCHED)
            dsm__fatal("dsm_bcast: page %zu is %s at the root after its fetch; another "
                       "thread of this node touched shared memory during the collective "
                       "(only one thread per node may run while dsm_bcast runs)", p,
                       dsm__page_state_name(pg->state));
    }
}

/* Whether pages [p, p+n) include one with a twin in use: a home page
 * twinned for DSM_CHECK=races and never released (DSM_PF_NOTRAP,
 * segment.c).  Its twin slot must be neither a buffer of the broadcast nor
 * given back afterwards. */
static int twin_in_use(size_t p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (dsm__g.pages[p + i].flags & DSM_PF_TWIN)
            return 1;
    return 0;
}

/* At a receiver, after the broadcast: a chunk received into a private
 * buffer (chunk_buffers) puts the pages this node does not home into the
 * system view (their application view is still PROT_NONE or read-only);
 * those it homes are dropped (its master copy is current). */
static void receiver_unpack(const struct bcast_op *o)
{
    struct dsm_global *g = &dsm__g;

    for (size_t k = 0; k < o->nchunks; k++) {
        size_t p, n;
        chunk_of(o, k, &p, &n);
        if (!o->buf[k])
            continue;
        for (size_t i = 0; i < n; i++)
            if (g->pages[p + i].home != g->rank)
                memcpy(dsm__sys_page(p + i), o->buf[k] + (i << g->page_shift),
                       g->page_size);
    }
}

/* Step 3: each chunk's buffer.  The root copies the range out of its
 * system view and broadcasts the copy.  The system view of a page the root
 * homes is the master copy, which the communication thread changes under
 * the broadcast as soon as a receiver has left it, written, and released (a
 * lock release sends its diff at once).  A buffer changed during a
 * nonblocking collective is erroneous in MPI, and MPI may write the root's
 * buffer too: MPICH's default on one host (sched_smp) sends from a root
 * other than local rank 0 to that rank and broadcasts from there to
 * everyone, the root included; its scatter-allgather algorithms give the
 * root back the pieces the others received.  Either way the words sent came
 * back over a diff applied meanwhile, and the diff was lost at the home
 * (found by the stress test; tests/mpi/bcast.c, step 10).  The copy is
 * exact: no receiver can leave before the root has started to send, so no
 * diff for the range reaches the root before this copy is made.  The copy
 * goes to the pages' twin slots, which are free after the barrier (twins
 * live from a write fault to the next release).  A receiver receives in
 * place (recv_type: its own pages to their twin slots).  Except: a chunk
 * with a twin in use (twin_in_use) gets a private buffer at every node. */
static void chunk_buffers(struct bcast_op *o, int root)
{
    struct dsm_global *g = &dsm__g;

    for (size_t k = 0; k < o->nchunks; k++) {
        size_t p, n;
        chunk_of(o, k, &p, &n);
        o->own[k] = NULL;
        o->buf[k] = root ? dsm__twin_page(p) : NULL;
        if (twin_in_use(p, n)) {
            if (!(o->own[k] = malloc(n << g->page_shift)))
                dsm__fatal("out of private memory for dsm_bcast's buffer of %zu pages", n);
            o->buf[k] = o->own[k];
        }
        if (root)
            memcpy(o->buf[k], dsm__sys_page(p), n << g->page_shift);
    }
}

/* Step 4. */
static void install(size_t first, size_t count, int root)
{
    struct dsm_global *g = &dsm__g;
    struct dsm_protect_batch pb = { 0, 0, 0 };
    uint64_t others = (g->nodes == 64 ? ~(uint64_t)0 : ((uint64_t)1 << g->nodes) - 1) &
                      ~((uint64_t)1 << g->rank);
    int scratch = 0;

    for (size_t p = first; p < first + count; p++) {
        struct dsm_page *pg = &g->pages[p];
        dsm__page_lock(p);
        if (pg->home == g->rank) {
            scratch = 1;
            /* A stack page (NOTRAP) is listed, and its twin made, only when
             * its copyset was empty: before the copyset grows, as in
             * serve_page (protocol.c). */
            if (pg->flags & DSM_PF_NOTRAP)
                dsm__notrap_served(p);
            pg->copyset |= others;
            if (!(pg->flags & DSM_PF_NOTRAP)) {
                struct dsm_ptrans t = dsm__page_transition(pg->state, DSM_EV_SERVE, 1);
                if (t.actions & DSM_ACT_ERROR)
                    dsm__fatal("protocol error: home page %zu is %s in dsm_bcast", p,
                               dsm__page_state_name(pg->state));
                if (t.actions & DSM_ACT_PROTECT)
                    dsm__pb_add(&pb, p, dsm__page_prot(t.next));
                pg->state = t.next;
            }
        } else if (pg->state == DSM_P_INVALID || pg->state == DSM_P_PREFETCHED) {
            /* A PREFETCHED copy (still PROT_NONE) was as current as the
             * broadcast's; either way the system view now holds the root's
             * page and is opened read-only.  Neither is counted as fetched
             * from a home, nor a prefetch as used or wasted. */
            dsm__pb_add(&pb, p, PROT_READ);
            pg->state = DSM_P_READ_ONLY;
        } else if (pg->state != DSM_P_READ_ONLY) {
            dsm__fatal("dsm_bcast: page %zu is %s here after the broadcast; another "
                       "thread of this node touched shared memory during the collective "
                       "(only one thread per node may run while dsm_bcast runs)", p,
                       dsm__page_state_name(pg->state));
        }
        dsm__page_unlock(p);
    }
    dsm__pb_flush(&pb);
    if (twin_in_use(first, count))
        return;     /* keep the slots (chunk_buffers) */
    if (scratch || g->rank == root) {
        /* Give back the twin slots used as scratch for our own pages, or
         * at the root for the copy it sent. */
        uintptr_t lo = (uintptr_t)dsm__twin_page(first) & ~(uintptr_t)(g->os_page - 1);
        madvise((void *)lo, (uintptr_t)dsm__twin_page(first + count) - lo, MADV_DONTNEED);
    }
}

void dsm__bcast(void *addr, size_t len, int root)
{
    struct dsm_global *g = &dsm__g;
    size_t first, count;

    check_args(addr, len, root, &first, &count);
    dsm__barrier_checked(DSM_COLL_BCAST,
                         mix(mix(mix(3, (uintptr_t)addr), len), (uint64_t)root),
                         (uintptr_t)addr, NULL, NULL);
    if (count == 0 || g->nodes == 1)
        return;        /* alone, every page is homed here and current */
    if (g->rank == root)
        root_make_current(first, count);

    struct bcast_op o;
    size_t per = BCAST_CHUNK >> g->page_shift;
    memset(&o, 0, sizeof o);
    o.c.start = bcast_start;
    o.c.test = bcast_test;
    o.first = first;
    o.count = count;
    o.root = root;
    o.nchunks = (count + per - 1) / per;
    o.reqs = malloc(o.nchunks * sizeof *o.reqs);
    o.types = malloc(o.nchunks * sizeof *o.types);
    o.buf = malloc(o.nchunks * sizeof *o.buf);
    o.own = calloc(o.nchunks, sizeof *o.own);
    if (!o.reqs || !o.types || !o.buf || !o.own)
        dsm__fatal("out of private memory for dsm_bcast");
    chunk_buffers(&o, g->rank == root);
    dsm__comm_collective(&o.c);
    if (g->rank != root)
        receiver_unpack(&o);
    for (size_t k = 0; k < o.nchunks; k++)
        free(o.own[k]);
    free(o.reqs);
    free(o.types);
    free(o.buf);
    free(o.own);
    install(first, count, root);
}

void dsm_bcast(void *addr, size_t len, int root)
{
    DSM_CHECK_RUNNING();
    if (dsm__hooks.bcast && dsm__hooks.bcast(addr, len, root))
        return;
    dsm__bcast(addr, len, root);
}
