/*
 * prefetch.c - prefetch through the communication thread (paper 003,
 * section 6): dsm_prefetch(), the explicit form, and DSM_PREFETCH=history.
 *
 * Threads: dsm_prefetch() and the history hooks run in application threads:
 * they mark each page that has no copy here IN_FLIGHT (with
 * DSM_PF_PREFETCHING, under the page's lock, so that a thread that touches
 * it from then on waits for this prefetch instead of asking itself) and
 * queue the list as a job for the communication thread.
 * dsm__prefetch_run() runs in the communication thread, under the progress
 * token: it groups a job's pages by home and sends one PREFETCH_REQ per
 * home, its list sorted, after posting a receive per run of consecutive
 * pages (dsm__batch_run: at most 128 KiB, contiguous in the system view) on
 * the tag DSM_TAG_PAGE + the batch's waiter slot.  The home serves every
 * page and answers with a message per run, cut the same way (protocol.c
 * on_prefetch_req), where it sent a message per DSM_PAGE_CHUNK piece of
 * every page before (NPB BT class W on 2 ranks: 20.4 -> 9.1 messages per
 * barrier).
 * dsm__prefetch_arrived() (progress token) installs each page as
 * PREFETCHED: valid in the system view, still PROT_NONE in the application
 * view, so the first access faults and only opens it (fault.c), which is
 * also how a prefetched page is known to be used.  At most DSM_PREFETCH_MAX
 * pages are in flight; pages beyond are left to faults.

 * Coherence.  A prefetch must never let a thread read a copy older than the
 * memory model allows.  The argument, against the page states of
 * page_state.c and the synchronisation of barrier.c and lock.c:
 *
 * 1. No prefetch crosses a barrier.  dsm__barrier_checked() first calls
 *    dsm__prefetch_drain(), which waits until every queued job is issued and
 *    every prefetched page has arrived, and holds new jobs until the barrier
 *    is over.  The barrier's write notices therefore meet only settled
 *    states, and a PREFETCHED copy named by a notice is dropped exactly like
 *    a READ_ONLY one.  This is the "prefetched, then modified by its home
 *    before the barrier" case: serving the page write-protected the home's
 *    copy and put this node in its copyset, so the home's later write traps,
 *    is recorded, becomes a notice of the barrier and invalidates the copy;
 *    a third node's write reaches the home as a diff and us as a notice the
 *    same way.  Draining also keeps two invariants that rest on "every
 *    request is answered before its sender enters a barrier": a home that
 *    migrates at a barrier (barrier.c, migrate) never sees a request for a
 *    page it no longer homes, and dsm_free, which unallocates pages after its
 *    barrier, never sees one of them arrive.
 * 2. Prefetches issued after a barrier (history, or the program's own right
 *    after dsm_barrier returns) carry the new epoch; a home that has not yet
 *    applied that barrier defers them (protocol.c, dsm__defer_early), so the copy
 *    holds every write released at the barrier and the home's copyset update
 *    of that barrier cannot forget the copy.
 * 3. A lock acquire's notices may meet a page IN_FLIGHT for a prefetch
 *    issued before the grant arrived.  invalidate_locked() marks it STALE,
 *    and the arrival drops a STALE page (INVALID, counted wasted): the home
 *    may have served it before the releaser's diff reached it.  A later
 *    access faults and fetches it again, with a request sent after the
 *    grant, hence after the releaser's diffs were acknowledged by the home.
 *    A thread that faulted meanwhile waited for the install and retries.
 * 4. A fault on an IN_FLIGHT page waits for the fetch under way (no second
 *    request); a fault on a PREFETCHED page only opens it read-only.  Until
 *    then the copy is PROT_NONE, so no access can have used a copy that a
 *    notice dropped without going through the fault path.
 * 5. Only INVALID non-home pages are requested (DSM_EV_PREFETCH): a valid
 *    copy, a home page, a page being fetched or not allocated is left alone.
 *
 * History (DSM_PREFETCH=history): the fault handler records every page it
 * fetched or found prefetched, with the epoch of that use and the number of
 * epochs since the previous use (its period).  After each dsm_barrier (not
 * those of dsm_malloc, dsm_free or dsm_finalize) the pages that are INVALID
 * now and were used in one of the last DSM_HISTORY_WINDOW intervals, or
 * exactly one period ago, are prefetched; pages not used for longer than
 * both are dropped from the history (aged out).  The window of two covers
 * codes that alternate between two arrays (laplace swaps u and unew: the
 * halo read in interval k is read again in k + 2).  After a lock acquire,
 * the pages the grant invalidated that are in the history are prefetched.
 * A page whose prefetched copy was dropped unused (invalidated first, by a
 * barrier or a grant: the statistic prefetch_wasted) is passed over by the
 * next 7, 15, ... 255 acquires that would prefetch it, the number doubling
 * with each waste in a row and cleared by a use of a prefetched copy: a
 * task runtime's lock grants invalidate tiles that the next grant
 * invalidates again (tasks/cholesky on 2 ranks: 95,384 of 103,987
 * prefetched pages wasted without it).  Barriers do not back off: NPB BT
 * uses a page in some of the intervals where it is prefetched, and with
 * the back-off there too its class W faulted 5,500-6,000 times against
 * 600.
 * Off, none of this is allocated and the fault path tests one flag.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm_internal.h"

#define DSM_HISTORY_WINDOW 2
#define DSM_HISTORY_MAX_GAP 64

struct pf_job {
    struct dsm_qnode q;
    uint32_t *list;              /* n pages, marked IN_FLIGHT (malloc'd) */
    size_t n;
};

static struct dsm_mqueue jobs;
static uint32_t jobs_pending;    /* queued and not yet issued */
static uint32_t inflight;        /* pages marked for prefetch, not arrived */
static int hold;                 /* a barrier is under way: issue nothing */
static uint32_t **batch;         /* per home: pages of the job being issued */
static size_t *nbatch;

static uint32_t *h_last;         /* per page: 1 + epoch of its last use, 0 never */
static uint8_t *h_gap;           /* per page: epochs between its last two uses */
static uint8_t *h_in;            /* per page: listed in h_list */
static uint8_t *h_level;         /* per page: wastes in a row, at most 6 */
static uint8_t *h_skip;          /* per page: prefetches still to pass over */
static uint32_t *h_list;
static size_t h_n;
static pthread_mutex_t h_lock = PTHREAD_MUTEX_INITIALIZER;

static void *map_zero(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int dsm__prefetch_init(void)
{
    struct dsm_global *g = &dsm__g;

    dsm__mq_init(&jobs);
    jobs_pending = inflight = 0;
    hold = 0;
    batch = calloc((size_t)g->nodes, sizeof *batch);
    nbatch = calloc((size_t)g->nodes, sizeof *nbatch);
    if (!batch || !nbatch)
        return -DSM_ENOMEM;
    for (int r = 0; r < g->nodes; r++)
        if (!(batch[r] = malloc(DSM_PREFETCH_MAX * sizeof **batch)))
            return -DSM_ENOMEM;
    if (g->cfg.prefetch != DSM_PREFETCH_NONE) {
        h_last = map_zero(g->npages * sizeof *h_last);
        h_gap = map_zero(g->npages);
        h_in = map_zero(g->npages);
        h_level = map_zero(g->npages);
        h_skip = map_zero(g->npages);
        h_list = map_zero(g->npages * sizeof *h_list);
        h_n = 0;
        if (!h_last || !h_gap || !h_in || !h_level || !h_skip || !h_list)
            return -DSM_ENOMEM;
    }
    return 0;
}

/* Mark page p IN_FLIGHT for a prefetch if it has no copy here (point 5),
 * within the cap on pages in flight.  Returns 1 if marked, 0 if not wanted,
 * -1 if the cap is reached.  Any thread; the page lock orders it with
 * faults, so a fault that comes after waits for this prefetch. */
static int mark(size_t p)
{
    struct dsm_global *g = &dsm__g;
    struct dsm_page *pg = &g->pages[p];
    int marked = 0;

    if (__atomic_fetch_add(&inflight, 1, __ATOMIC_SEQ_CST) >= DSM_PREFETCH_MAX) {
        __atomic_fetch_sub(&inflight, 1, __ATOMIC_SEQ_CST);
        return -1;
    }
    dsm__page_lock(p);
    struct dsm_ptrans t = dsm__page_transition(pg->state, DSM_EV_PREFETCH,
                                               pg->home == g->rank);
    if (t.actions & DSM_ACT_FETCH) {
        pg->state = t.next;
        pg->flags = (uint8_t)((pg->flags & ~DSM_PF_STALE) | DSM_PF_PREFETCHING);
        marked = 1;
    }
    dsm__page_unlock(p);
    if (!marked)
        __atomic_fetch_sub(&inflight, 1, __ATOMIC_SEQ_CST);
    return marked;
}

/* Mark the candidates (cand[i], or first + i when cand is NULL) and hand
 * those marked to the communication thread as one job. */
static void prefetch_pages(const uint32_t *cand, size_t first, size_t n)
{
    uint32_t *list = NULL;
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        size_t p = cand ? cand[i] : first + i;
        int r = mark(p);
        if (r < 0)
            break;              /* beyond the cap: left to faults */
        if (!r)
            continue;
        if (!list && !(list = malloc((n - i < DSM_PREFETCH_MAX ? n - i : DSM_PREFETCH_MAX) *
                                     sizeof *list)))
            dsm__fatal("out of private memory for a prefetch of %zu pages", n);
        list[k++] = (uint32_t)p;
    }
    if (!k)
        return;
    struct pf_job *j = malloc(sizeof *j);
    if (!j)
        dsm__fatal("out of private memory for a prefetch");
    j->list = list;
    j->n = k;
    __atomic_fetch_add(&jobs_pending, 1, __ATOMIC_SEQ_CST);
    dsm__mq_push(&jobs, &j->q);
    dsm__comm_wake();
}

static int wants(size_t p)
{
    const struct dsm_page *pg = &dsm__g.pages[p];
    return __atomic_load_n(&pg->state, __ATOMIC_RELAXED) == DSM_P_INVALID &&
           pg->home != dsm__g.rank;
}

int dsm_prefetch(const void *addr, size_t npages)
{
    struct dsm_global *g = &dsm__g;
    size_t p0, end, i;

    DSM_CHECK_RUNNING();
    if (npages == 0)
        return 0;
    if (!dsm__in_region(addr))
        return -DSM_EINVAL;
    p0 = dsm__page_of(addr);
    if (dsm__page_in_segment(p0)) {
        const struct dsm_segment *sg = dsm__segment_of_page(p0);
        end = sg->first + sg->npages;
    } else if (g->segs_npages && p0 < g->segs_first) {
        end = g->segs_first;
    } else {
        end = g->npages;
    }
    if (npages > end - p0)
        return -DSM_EINVAL;
    /* A first look without locks, so that prefetching what is here already
     * costs nothing; mark() looks again under each page's lock. */
    for (i = 0; i < npages && !wants(p0 + i); i++)
        ;
    if (i < npages)
        prefetch_pages(NULL, p0 + i, npages - i);
    return 0;
}

int dsm__prefetch_queued(void)
{
    return __atomic_load_n(&jobs_pending, __ATOMIC_RELAXED) &&
           !__atomic_load_n(&hold, __ATOMIC_ACQUIRE);
}

/* Communication thread: one PREFETCH_REQ per home for the pages of a job. */
static void send_batches(const struct pf_job *j)
{
    struct dsm_global *g = &dsm__g;

    for (size_t i = 0; i < j->n; i++) {
        int h = g->pages[j->list[i]].home;
        dsm__vm_back(j->list[i]);
        batch[h][nbatch[h]++] = j->list[i];
    }
    for (int h = 0; h < g->nodes; h++) {
        size_t k = nbatch[h];
        if (!k)
            continue;
        nbatch[h] = 0;
        /* Sorted, so that the home answers runs of consecutive pages with a
         * message each (dsm__batch_run). */
        qsort(batch[h], k, sizeof **batch, dsm__cmp_u32);
        uint32_t id = dsm__waiter_get(DSM_WAIT_PREFETCH, (int)k, NULL);
        dsm__waiter_note(id, h, batch[h][0]);    /* for the watchdog's report */
        struct dsm_msg *m = dsm__msg_new(DSM_MSG_PREFETCH_REQ, h, k * sizeof(uint32_t));
        memcpy(m->payload, batch[h], k * sizeof(uint32_t));
        m->hdr.len = (uint32_t)(k * sizeof(uint32_t));
        m->hdr.id = batch[h][0];
        m->hdr.waiter = id;
        m->recv_npages = k;      /* the transport posts the k receives first */
        DSM_STAT_ADD(prefetch_issued, k);
        DSM_TRACE_PREFETCH(batch[h][0], k);
        dsm__msg_send(m);
    }
}

int dsm__prefetch_run(void)
{
    struct dsm_qnode *q;
    int done = 0;

    if (__atomic_load_n(&hold, __ATOMIC_ACQUIRE))
        return 0;
    q = dsm__mq_take_all(&jobs);
    while (q) {
        struct pf_job *j = (struct pf_job *)q;
        q = q->next;
        send_batches(j);
        free(j->list);
        free(j);
        __atomic_fetch_sub(&jobs_pending, 1, __ATOMIC_SEQ_CST);
        done++;
    }
    if (done)
        dsm__pt_install_done();     /* a draining barrier looks again */
    return done;
}

void dsm__prefetch_arrived(size_t p, struct dsm_waiter *w, uint32_t id)
{
    struct dsm_page *pg = &dsm__g.pages[p];

    dsm__page_lock(p);
    if (pg->state != DSM_P_IN_FLIGHT || !(pg->flags & DSM_PF_PREFETCHING))
        dsm__fatal("protocol error: prefetched page %zu arrived but is %s here",
                   p, dsm__page_state_name(pg->state));
    pg->flags &= (uint8_t)~DSM_PF_PREFETCHING;
    if (pg->flags & DSM_PF_STALE) {
        /* Invalidated while in flight (point 3 above): drop it. */
        pg->flags &= (uint8_t)~DSM_PF_STALE;
        pg->state = DSM_P_INVALID;
        DSM_STAT_ADD(prefetch_wasted, 1);
        dsm__history_wasted(p);
    } else {
        pg->state = dsm__page_transition(pg->state, DSM_EV_PREFETCHED, 0).next;
    }
    /* Counted before the page can be used, so that a thread that used it
     * sees it counted. */
    DSM_STAT_ADD(pages_fetched, 1);
    DSM_STAT_ADD(bytes_fetched, dsm__g.page_size);
    dsm__page_unlock(p);
    /* The count first, the install second: a draining barrier that sees
     * the install sees the count too. */
    __atomic_fetch_sub(&inflight, 1, __ATOMIC_SEQ_CST);
    dsm__pt_install_done();
    if (__atomic_sub_fetch(&w->remaining, 1, __ATOMIC_ACQ_REL) == 0)
        dsm__waiter_put(id);
}

void dsm__prefetch_drain(void)
{
    struct dsm_global *g = &dsm__g;

    if (__atomic_load_n(&jobs_pending, __ATOMIC_SEQ_CST) ||
        __atomic_load_n(&inflight, __ATOMIC_SEQ_CST)) {
        dsm__comm_wake();
        for (;;) {
            uint32_t seen = __atomic_load_n(&g->installs, __ATOMIC_SEQ_CST);
            if (!__atomic_load_n(&jobs_pending, __ATOMIC_SEQ_CST) &&
                !__atomic_load_n(&inflight, __ATOMIC_SEQ_CST))
                break;
            dsm__pt_install_wait(seen);
        }
    }
    __atomic_store_n(&hold, 1, __ATOMIC_RELEASE);
}

/* After the barrier: jobs may go out again (their requests carry the new
 * epoch).  Not after dsm_finalize's barrier: no request may follow it. */
static void resume(void)
{
    __atomic_store_n(&hold, 0, __ATOMIC_RELEASE);
    if (__atomic_load_n(&jobs_pending, __ATOMIC_SEQ_CST))
        dsm__comm_wake();
}

void dsm__prefetch_after_barrier(enum dsm_coll_kind kind)
{
    if (kind == DSM_COLL_FINALIZE)
        return;
    resume();
    if (kind == DSM_COLL_BARRIER && dsm__g.cfg.prefetch != DSM_PREFETCH_NONE)
        dsm__history_after_barrier();
}

/* ---- history ---- */

/* The back-off.  Bytes read and written with relaxed atomics: the fault
 * path and the invalidations reach them under the page's lock, the
 * prefetches under h_lock; a lost update only changes a guess. */
void dsm__history_wasted(size_t p)
{
    if (dsm__g.cfg.prefetch != DSM_PREFETCH_HISTORY)
        return;             /* only the acquires' prefetch backs off */
    unsigned l = __atomic_load_n(&h_level[p], __ATOMIC_RELAXED);
    if (l < 6)
        __atomic_store_n(&h_level[p], (uint8_t)++l, __ATOMIC_RELAXED);
    __atomic_store_n(&h_skip[p], (uint8_t)((4u << l) - 1), __ATOMIC_RELAXED);
}

/* Page p is a candidate for a history prefetch: 1 to take it, 0 to pass
 * it over (one of its skips counted off). */
static int backoff_allows(size_t p)
{
    unsigned s = __atomic_load_n(&h_skip[p], __ATOMIC_RELAXED);
    if (!s)
        return 1;
    __atomic_store_n(&h_skip[p], (uint8_t)(s - 1), __ATOMIC_RELAXED);
    return 0;
}

void dsm__history_record(size_t p, int prefetched)
{
    if (prefetched && __atomic_load_n(&h_level[p], __ATOMIC_RELAXED)) {
        __atomic_store_n(&h_level[p], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&h_skip[p], 0, __ATOMIC_RELAXED);
    }

    uint32_t now = __atomic_load_n(&dsm__g.epoch, __ATOMIC_RELAXED) + 1;

    pthread_mutex_lock(&h_lock);
    uint32_t last = h_last[p];
    if (last != now) {
        if (last) {
            uint32_t gap = now - last;
            h_gap[p] = (uint8_t)(gap <= DSM_HISTORY_MAX_GAP ? gap : 0);
        }
        h_last[p] = now;
        if (!h_in[p]) {
            h_in[p] = 1;
            h_list[h_n++] = (uint32_t)p;
        }
    }
    pthread_mutex_unlock(&h_lock);
}

void dsm__history_after_barrier(void)
{
    struct dsm_global *g = &dsm__g;
    /* A use in the interval that starts now would record now; one in the
     * interval that just ended recorded now - 1 (age 1). */
    uint32_t now = __atomic_load_n(&g->epoch, __ATOMIC_RELAXED) + 1;
    uint32_t *list = NULL;
    size_t n = 0, k = 0;

    pthread_mutex_lock(&h_lock);
    for (size_t i = 0; i < h_n; i++) {
        uint32_t p = h_list[i], age = now - h_last[p], gap = h_gap[p];
        const struct dsm_page *pg = &g->pages[p];
        int keep = age <= DSM_HISTORY_WINDOW || (gap > DSM_HISTORY_WINDOW && age <= gap);
        if (!keep || pg->state == DSM_P_UNALLOC || pg->home == g->rank) {
            h_in[p] = 0;
            if (!keep)
                DSM_STAT_ADD(prefetch_aged, 1);
            continue;
        }
        h_list[k++] = p;
        if (pg->state == DSM_P_INVALID && (age <= DSM_HISTORY_WINDOW || age == gap)) {
            if (!list && !(list = malloc(h_n * sizeof *list)))
                dsm__fatal("out of private memory for a history prefetch");
            list[n++] = p;
        }
    }
    h_n = k;
    pthread_mutex_unlock(&h_lock);
    /* Marked outside h_lock: the fault path takes h_lock inside a page lock. */
    if (n)
        prefetch_pages(list, 0, n);
    free(list);
}

void dsm__history_after_acquire(const uint32_t *pages, size_t n)
{
    uint32_t *list = NULL;
    size_t k = 0;

    pthread_mutex_lock(&h_lock);
    for (size_t i = 0; i < n; i++) {
        uint32_t p = pages[i];
        if (!h_in[p] || !wants(p) || !backoff_allows(p))
            continue;
        if (!list && !(list = malloc(n * sizeof *list)))
            dsm__fatal("out of private memory for a history prefetch");
        list[k++] = p;
    }
    pthread_mutex_unlock(&h_lock);
    if (k)
        prefetch_pages(list, 0, k);
    free(list);
}
