/*
 * comm/comm.c - what every transport shares: the posted receive, the list of
 * sends in flight, and the communication thread with its polling policy.
 * The library's periodic work (prefetch issue, deferred and held requests,
 * the watchdog) is progress.c's; the loop here only calls it.
 *
 * Threads: the communication thread runs comm_main(); under the direct
 * transport a thread waiting for a reply may also run one progress round.
 * The progress token (progress_lock) lets one thread at a time receive and
 * dispatch, so protocol handlers never run concurrently with each other.
 * MPI calls made here are wrapped in MPI_LOCK, which is the single MPI mutex
 * under the direct transport (paper 003's implementation (1)) and nothing
 * under the queue transport, where only the communication thread calls MPI.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dsm_internal.h"

pthread_mutex_t dsm__mpi_lock = PTHREAD_MUTEX_INITIALIZER;
int dsm__comm_use_mpi_lock DSM_HIDDEN;
static __thread int is_comm_thread;   /* this thread is the communication thread */
#define MPI_LOCK()   do { if (dsm__comm_use_mpi_lock) dsm__mpi_lock_take(); } while (0)
#define MPI_UNLOCK() do { if (dsm__comm_use_mpi_lock) pthread_mutex_unlock(&dsm__mpi_lock); } while (0)

/* The lists below are shared by every thread that sends (any thread under
 * the direct, multiple and rma transports) and the thread holding the
 * progress token.  Their own small locks are held only to link and unlink,
 * never across an MPI call that waits, and nest inside the MPI mutex. */
static pthread_mutex_t inflight_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t precv_lock = PTHREAD_MUTEX_INITIALIZER;

void dsm__mpi_lock_take(void)
{
    /* Paper 003 measured how long a compute thread waits here for the
     * polling thread (490 us per RMR); count it for application threads. */
    if (pthread_mutex_trylock(&dsm__mpi_lock) == 0)
        return;
    if (is_comm_thread) {
        pthread_mutex_lock(&dsm__mpi_lock);
        return;
    }
    uint64_t t0 = dsm__now_ns();
    pthread_mutex_lock(&dsm__mpi_lock);
    DSM_STAT_ADD(mpi_lock_waits, 1);
    DSM_STAT_ADD(mpi_lock_wait_ns, dsm__now_ns() - t0);
}

static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned char *rbuf;
static size_t rbuf_size;
static MPI_Request rreq = MPI_REQUEST_NULL;
static MPI_Status rstatus;

static struct dsm_msg *inflight;     /* sends MPI still owns */

/* A page arrives as dsm__g.page_chunks messages on one tag, in order (MPI
 * matches messages of one sender and tag to receives in the order posted);
 * a run of a prefetch batch's consecutive pages as one message (nreq 1). */
struct page_recv {
    MPI_Request req[DSM_MAX_PAGE_CHUNKS];
    unsigned nreq;
    size_t page;                /* one page; a batch's run: its first */
    size_t nbatch;              /* a batch's run: its pages; else 0 */
    uint32_t waiter;
    int home;
};
/* Posted page receives.  Each belongs to a waiting thread's slot, or is one
 * of at most DSM_PREFETCH_MAX prefetched pages in flight: the array is
 * allocated once, because under the direct transport the faulting thread
 * posts its receive itself, inside the SIGSEGV handler, where it must not
 * allocate. */
#define DSM_MAX_PAGE_RECVS (DSM_MAX_WAITERS + DSM_PREFETCH_MAX)
static struct page_recv precv[DSM_MAX_PAGE_RECVS];
static size_t nprecv;

static uint32_t wake_word;           /* futex the sleeping thread waits on */
static int comm_sleeping;

/* ---- receive ---- */

int dsm__comm_recv_start(void)
{
    int rc;
    if (!rbuf) {
        rbuf_size = sizeof(struct dsm_wire_hdr) + dsm__msg_max_payload();
        rbuf = aligned_alloc(64, (rbuf_size + 63) & ~(size_t)63);
        if (!rbuf)
            return -DSM_ENOMEM;
    }
    MPI_LOCK();
    rc = MPI_Irecv(rbuf, (int)rbuf_size, MPI_BYTE, MPI_ANY_SOURCE, DSM_TAG,
                   dsm__g.comm, &rreq);
    MPI_UNLOCK();
    return rc == MPI_SUCCESS ? 0 : -DSM_EMPI;
}

int dsm__comm_recv_test(int *got)
{
    int flag = 0;
    MPI_LOCK();
    MPI_Test(&rreq, &flag, &rstatus);
    MPI_UNLOCK();
    *got = flag;
    return 0;
}

void dsm__comm_recv_dispatch(void)
{
    int count = 0;
    MPI_Get_count(&rstatus, MPI_BYTE, &count);
    if (count < (int)sizeof(struct dsm_wire_hdr))
        dsm__fatal("malformed message from rank %d: %d bytes, shorter than a header",
                   rstatus.MPI_SOURCE, count);
    /* A heartbeat is not the program's traffic: not counted, not traced. */
    int quiet = ((const struct dsm_wire_hdr *)rbuf)->type == DSM_MSG_HEARTBEAT;
    if (rstatus.MPI_SOURCE != dsm__g.rank && !quiet)
        DSM_STAT_ADD(msgs_received, 1);
    if (dsm__unlikely(dsm__trace_on) && !quiet) {
        const struct dsm_wire_hdr *h = (const struct dsm_wire_hdr *)rbuf;
        dsm__trace_ev(DSM_TR_RECV, h->type, rstatus.MPI_SOURCE,
                      (uint64_t)count | (uint64_t)h->waiter << 32,
                      h->id | (uint64_t)h->flags << 32);
    }
    dsm__dispatch((const struct dsm_wire_hdr *)rbuf, rbuf + sizeof(struct dsm_wire_hdr),
                  rstatus.MPI_SOURCE, count);
    if (!quiet)
        DSM_TRACE(DSM_TR_HANDLED, ((const struct dsm_wire_hdr *)rbuf)->type,
                  rstatus.MPI_SOURCE, 0, 0);
    if (dsm__comm_recv_start() != 0)
        dsm__fatal("MPI_Irecv failed; the MPI library is in trouble");
}

int dsm__comm_poll(void)
{
    int n = dsm__comm_sends_test(), got;
    dsm__comm_recv_test(&got);
    if (got) {
        dsm__comm_recv_dispatch();
        n++;
    }
    return n;
}

void dsm__comm_recv_cancel(void)
{
    if (rreq != MPI_REQUEST_NULL) {
        MPI_Cancel(&rreq);
        MPI_Wait(&rreq, MPI_STATUS_IGNORE);
    }
    free(rbuf);
    rbuf = NULL;
}

/* ---- page receives ---- */

void dsm__comm_post_page_recv(size_t p, int home, uint32_t waiter)
{
    MPI_Request req[DSM_MAX_PAGE_CHUNKS];
    const unsigned n = dsm__g.page_chunks;
    const size_t cs = dsm__g.chunk_size;
    /* Posted before the request goes out, so the page always finds them. */
    for (unsigned i = 0; i < n; i++)
        if (MPI_Irecv(dsm__sys_page(p) + i * cs, (int)cs, MPI_BYTE, home,
                      DSM_TAG_PAGE + (int)waiter, dsm__g.comm, &req[i]) != MPI_SUCCESS)
            dsm__fatal("MPI_Irecv of page %zu from rank %d failed", p, home);
    pthread_mutex_lock(&precv_lock);
    if (nprecv == DSM_MAX_PAGE_RECVS)
        dsm__fatal("internal error: more page receives than waiter slots and prefetches");
    struct page_recv *r = &precv[nprecv];
    memcpy(r->req, req, n * sizeof req[0]);
    r->nreq = n;
    r->page = p;
    r->nbatch = 0;
    r->waiter = waiter;
    r->home = home;
    __atomic_store_n(&nprecv, nprecv + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&precv_lock);
}

/* A run of a prefetch batch: pages [first, first + n), contiguous in the
 * system view, as one message; the receive is posted before the request
 * goes (dsm__batch_run says how the home cuts the list). */
static void post_batch_recv(size_t first, size_t n, int home, uint32_t waiter)
{
    MPI_Request req;
    if (MPI_Irecv(dsm__sys_page(first), (int)(n * dsm__g.page_size), MPI_BYTE, home,
                  DSM_TAG_PAGE + (int)waiter, dsm__g.comm, &req) != MPI_SUCCESS)
        dsm__fatal("MPI_Irecv of %zu pages from rank %d failed", n, home);
    pthread_mutex_lock(&precv_lock);
    if (nprecv == DSM_MAX_PAGE_RECVS)
        dsm__fatal("internal error: more page receives than waiter slots and prefetches");
    struct page_recv *r = &precv[nprecv];
    r->req[0] = req;
    r->nreq = 1;
    r->page = first;
    r->nbatch = n;
    r->waiter = waiter;
    r->home = home;
    __atomic_store_n(&nprecv, nprecv + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&precv_lock);
}

int dsm__comm_page_recvs_test(void)
{
    int n = 0;
    MPI_LOCK();
    pthread_mutex_lock(&precv_lock);
    for (size_t i = 0; i < nprecv;) {
        int flag = 0, count = 0;
        const unsigned nc = precv[i].nreq;
        MPI_Status st[DSM_MAX_PAGE_CHUNKS];
        MPI_Testall((int)nc, precv[i].req, &flag, st);
        if (!flag) {
            i++;
            continue;
        }
        if (precv[i].nbatch) {
            MPI_Get_count(&st[0], MPI_BYTE, &count);
            if ((size_t)count != precv[i].nbatch * dsm__g.page_size)
                dsm__fatal("malformed prefetch reply from rank %d: %d bytes for %zu pages "
                           "of %zu bytes", precv[i].home, count, precv[i].nbatch,
                           dsm__g.page_size);
        }
        for (unsigned c = 0; c < nc && !precv[i].nbatch; c++) {
            MPI_Get_count(&st[c], MPI_BYTE, &count);
            if ((size_t)count != dsm__g.chunk_size)
                dsm__fatal("malformed page from rank %d: %d bytes in message %u of %u of "
                           "page %zu (%zu bytes each expected)", precv[i].home, count,
                           c + 1, nc, precv[i].page, dsm__g.chunk_size);
        }
        count = (int)dsm__g.page_size;
        size_t p = precv[i].page;
        const size_t nbatch = precv[i].nbatch ? precv[i].nbatch : 1;
        uint32_t w = precv[i].waiter;
        int home = precv[i].home;
        precv[i] = precv[nprecv - 1];
        __atomic_store_n(&nprecv, nprecv - 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&precv_lock);
        MPI_UNLOCK();
        DSM_STAT_ADD(msgs_received, 1);
        /* A batch is traced as a receive per page (msg.c traces its send so). */
        for (size_t b = 0; b < nbatch; b++) {
            DSM_TRACE(DSM_TR_RECV, DSM_MSG_PAGE_REPLY, home,
                      (uint64_t)count | (uint64_t)w << 32, p + b);
            dsm__page_arrived(p + b, w);
            DSM_TRACE(DSM_TR_HANDLED, DSM_MSG_PAGE_REPLY, home, 0, 0);
        }
        MPI_LOCK();
        pthread_mutex_lock(&precv_lock);
        n++;
    }
    pthread_mutex_unlock(&precv_lock);
    MPI_UNLOCK();
    return n;
}

/* ---- sends in flight ---- */

void dsm__comm_sends_add(struct dsm_msg *m)
{
    pthread_mutex_lock(&inflight_lock);
    m->q.next = (struct dsm_qnode *)inflight;
    inflight = m;
    pthread_mutex_unlock(&inflight_lock);
}

/* Take the whole list (to test without holding its lock) and put back what
 * is still in flight, after whatever was added meanwhile. */
static struct dsm_msg *sends_take(void)
{
    pthread_mutex_lock(&inflight_lock);
    struct dsm_msg *l = inflight;
    inflight = NULL;
    pthread_mutex_unlock(&inflight_lock);
    return l;
}

static void sends_put_back(struct dsm_msg *l, struct dsm_msg *last)
{
    if (!l)
        return;
    pthread_mutex_lock(&inflight_lock);
    last->q.next = (struct dsm_qnode *)inflight;
    inflight = l;
    pthread_mutex_unlock(&inflight_lock);
}

void dsm__comm_isend(struct dsm_msg *m)
{
    int rc;
    if (m->recv_page >= 0)
        dsm__comm_post_page_recv((size_t)m->recv_page, m->dest, m->hdr.waiter);
    /* A prefetch batch: the pages in its payload, a receive per run, as the
     * home sends them (protocol.c). */
    for (size_t i = 0, n; i < m->recv_npages; i += n) {
        uint32_t first;
        n = dsm__batch_run(m->payload, m->recv_npages, i);
        memcpy(&first, m->payload + 4 * i, 4);
        post_batch_recv(first, n, m->dest, m->hdr.waiter);
    }
    if (m->ext_n) {
        /* A run of a batch's pages: one message (see post_batch_recv). */
        m->nreq = 1;
        rc = MPI_Isend(m->ext, (int)m->ext_len, MPI_BYTE, m->dest, m->tag, dsm__g.comm,
                       &m->req[0]);
    } else if (m->ext) {
        /* A page: its chunks in order, on one tag (see struct page_recv). */
        const size_t cs = dsm__g.chunk_size;   /* ext_len is a page */
        rc = MPI_SUCCESS;
        m->nreq = dsm__g.page_chunks;
        for (unsigned i = 0; i < m->nreq && rc == MPI_SUCCESS; i++)
            rc = MPI_Isend((const unsigned char *)m->ext + i * cs, (int)cs, MPI_BYTE,
                           m->dest, m->tag, dsm__g.comm, &m->req[i]);
    } else {
        m->nreq = 1;
        rc = MPI_Isend(&m->hdr, (int)(sizeof m->hdr + m->hdr.len), MPI_BYTE, m->dest,
                       DSM_TAG, dsm__g.comm, &m->req[0]);
    }
    if (rc != MPI_SUCCESS)
        dsm__fatal("MPI_Isend to rank %d failed", m->dest);
    dsm__comm_sends_add(m);
}

int dsm__comm_sends_test(void)
{
    struct dsm_msg *m, *keep = NULL, *last = NULL, *next;
    int n = 0;

    if (!__atomic_load_n(&inflight, __ATOMIC_RELAXED))
        return 0;
    MPI_LOCK();
    for (m = sends_take(); m; m = next) {
        int flag = 0;
        next = (struct dsm_msg *)m->q.next;
        MPI_Status st[DSM_MAX_PAGE_CHUNKS];
        MPI_Testall((int)m->nreq, m->req, &flag, st);
        if (flag) {
            dsm__msg_free(m);
            n++;
        } else {
            m->q.next = (struct dsm_qnode *)keep;
            if (!keep)
                last = m;
            keep = m;
        }
    }
    sends_put_back(keep, last);
    MPI_UNLOCK();
    return n;
}

void dsm__comm_sends_finish(void)
{
    struct dsm_msg *m, *next;
    MPI_LOCK();
    for (m = sends_take(); m; m = next) {
        next = (struct dsm_msg *)m->q.next;
        MPI_Status st[DSM_MAX_PAGE_CHUNKS];
        MPI_Waitall((int)m->nreq, m->req, st);
        dsm__msg_free(m);
    }
    MPI_UNLOCK();
}

/* ---- collective operations ---- */

static struct dsm_coll *coll_cur;    /* the node's collective under way, or NULL */

void dsm__comm_collective(struct dsm_coll *c)
{
    c->started = 0;
    c->waiter = dsm__waiter_get(DSM_WAIT_COLL, 1, c);
    /* Release: c's fields are set before a progress round can see it. */
    __atomic_store_n(&coll_cur, c, __ATOMIC_RELEASE);
    dsm__comm_wake();
    dsm__waiter_wait(c->waiter);
    dsm__waiter_put(c->waiter);
}

/* Under the progress token.  MPI moves a large broadcast on only when it is
 * tested, so whoever drives it must keep polling: the waiting thread where
 * the transport lets it progress (it counts the test as an event and keeps
 * polling; the communication thread does not, and backs off as when idle,
 * so that two threads per rank do not spin for one collective), else the
 * communication thread (the test is an event for it). */
static int coll_progress(struct dsm_coll *c)
{
    int done;
    MPI_LOCK();
    if (!c->started) {
        c->start(c);
        c->started = 1;
    }
    done = c->test(c);
    MPI_UNLOCK();
    if (done) {
        __atomic_store_n(&coll_cur, NULL, __ATOMIC_RELAXED);
        dsm__waiter_complete(dsm__waiter_at(c->waiter, DSM_WAIT_COLL));
        return 1;
    }
    return !(is_comm_thread && dsm__g.ops->waiter_progress);
}

/* ---- the communication thread ---- */

static int progress_round(void)
{
    int n = dsm__g.ops->progress();
    struct dsm_coll *c = __atomic_load_n(&coll_cur, __ATOMIC_ACQUIRE);
    if (c)
        n += coll_progress(c);
    if (__atomic_load_n(&nprecv, __ATOMIC_ACQUIRE))
        n += dsm__comm_page_recvs_test();
    dsm__progress_serve();          /* deferred and held requests */
    return n;
}

int dsm__comm_try_progress(void)
{
    int n;
    if (pthread_mutex_trylock(&progress_lock) != 0)
        return 0;
    n = progress_round();
    pthread_mutex_unlock(&progress_lock);
    return n;
}

void dsm__comm_wake(void)
{
    if (__atomic_load_n(&comm_sleeping, __ATOMIC_SEQ_CST)) {
        __atomic_fetch_add(&wake_word, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* How long the idle communication thread sleeps.  While an application
 * thread polls MPI itself (direct, multiple, rma), that thread serves every
 * request, and each timed wake-up of ours on a full node takes a core from
 * a thread on some reply's path (on 2 cores with 2 ranks, nearly every one
 * made an RMR take 20-100 us instead of 11): stand by.  Until woken while
 * a thread polls in a barrier, a lock acquire or a collective: such a wait
 * wakes us when it ends or goes to sleep (waiter.c).  For 1 ms while only
 * waits for a page or acks poll: they end often and without a word, and
 * then requests would wait for us.  Called after comm_sleeping is set: a
 * long wait that ends meanwhile either sees it and wakes us, or is seen
 * here as ended. */
static long standby_ns(long idle_ns)
{
    uint32_t pollers = __atomic_load_n(&dsm__waiting, __ATOMIC_SEQ_CST) -
                       __atomic_load_n(&dsm__sleepers, __ATOMIC_SEQ_CST);

    if (!dsm__g.ops->waiter_progress || !pollers)
        return idle_ns;
    if (__atomic_load_n(&dsm__polling_long, __ATOMIC_SEQ_CST))
        return DSM_STANDBY_LONG_NS;
    return DSM_STANDBY_NS;
}

static void *comm_main(void *arg)
{
    const int adaptive = dsm__g.cfg.poll == DSM_POLL_ADAPTIVE;
    const uint64_t spin_ns = (uint64_t)dsm__g.cfg.comm_spin_us * 1000;
    uint64_t last = dsm__now_ns();
    long sleep_ns = 20000;

    (void)arg;
    dsm__trace_role(DSM_TR_ROLE_COMM);
    is_comm_thread = 1;
    /* glibc maps a thread's malloc arena at the thread's first malloc.  MPI
     * may allocate in this thread at any later moment, e.g. while a runtime
     * on top of libdsm holds an address range open for a dlopen, where no
     * new mapping may land (the shim's dlarena.c): take the arena now (volatile:
     * a malloc freed at once may be left out by the compiler). */
    void *volatile arena_probe = malloc(1);
    free(arena_probe);
    dsm__progress_start();
    while (!__atomic_load_n(&dsm__g.comm_stop, __ATOMIC_ACQUIRE)) {
        int n = 0;
        pthread_mutex_lock(&progress_lock);
        /* Prefetches are issued here only, never by a waiting thread. */
        n += dsm__progress_issue();
        n += progress_round();
        pthread_mutex_unlock(&progress_lock);
        dsm__progress_tick(n);          /* the watchdog, about 10 times a second */
        if (n > 0) {
            last = dsm__now_ns();
            sleep_ns = 20000;
            continue;
        }
        if (!adaptive) {
            cpu_relax();
            continue;
        }
        uint64_t idle = dsm__now_ns() - last;
        if (idle < spin_ns) {
            cpu_relax();
            continue;
        }
        if (__atomic_load_n(&dsm__sleepers, __ATOMIC_SEQ_CST) && idle < DSM_POLL_WINDOW_NS) {
            /* A local thread sleeps until we receive its reply: poll, but
             * let other threads of this core run between polls. */
            sched_yield();
            continue;
        }
        /* Idle, or waiting long: sleep until woken by local work or for a
         * bounded time (20 us doubling to 200 us), so that requests from
         * other nodes are still answered promptly. */
        uint32_t seen = __atomic_load_n(&wake_word, __ATOMIC_SEQ_CST);
        __atomic_store_n(&comm_sleeping, 1, __ATOMIC_SEQ_CST);
        long ns = standby_ns(sleep_ns);
        if (!__atomic_load_n(&dsm__g.comm_stop, __ATOMIC_SEQ_CST)) {
            struct timespec ts = { ns / 1000000000, ns % 1000000000 };
            syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
        }
        __atomic_store_n(&comm_sleeping, 0, __ATOMIC_SEQ_CST);
        if (sleep_ns < 200000)
            sleep_ns *= 2;
    }
    pthread_mutex_lock(&progress_lock);
    dsm__g.ops->shutdown();
    pthread_mutex_unlock(&progress_lock);
    return NULL;
}

int dsm__comm_start(void)
{
    int rc = dsm__g.ops->init();
    if (rc)
        return rc;
    __atomic_store_n(&dsm__g.comm_stop, 0, __ATOMIC_RELEASE);
    if (pthread_create(&dsm__g.comm_thread, NULL, comm_main, NULL) != 0)
        return -DSM_ESYS;
    return 0;
}

void dsm__comm_stop(void)
{
    __atomic_store_n(&dsm__g.comm_stop, 1, __ATOMIC_RELEASE);
    __atomic_fetch_add(&wake_word, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    pthread_join(dsm__g.comm_thread, NULL);
}

void dsm__comm_wait_step(unsigned long i)
{
    /* Spin first; under DSM_POLL=adaptive yield the core after a while, so
     * that a process sharing it (the one that must answer) can run. */
    if (dsm__g.cfg.poll == DSM_POLL_ADAPTIVE && i >= 64)
        sched_yield();
    else
        cpu_relax();
}
