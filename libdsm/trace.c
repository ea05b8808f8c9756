/*
 * trace.c - the DSM_TRACE event log: per-thread buffers written to PREFIX.RANK.
 *
 * Threads: every thread of the process records into its own buffer (found
 * through a thread-local pointer), with no lock: only the owner appends.
 * A buffer is mmap'd on the thread's first event (mmap and write are safe in
 * the fault handler, malloc and stdio are not) and registered in a fixed
 * table.  A full buffer goes to the file as one chunk with one write(2) on
 * an O_APPEND descriptor, so chunks of different threads never interleave
 * inside each other.  dsm_finalize writes what every buffer still holds,
 * after the communication thread stopped and while the application threads
 * are out of the library (finalize is the last call).
 *
 * Clocks: CLOCK_MONOTONIC for every timestamp (the same clock as
 * dsm_wtime), and CLOCK_THREAD_CPUTIME_ID for the CPU time of compute
 * intervals, so that a trace taken with more ranks than cores still says
 * how much work each interval was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dsm_internal.h"
#include "trace.h"

#define TRACE_RECS     32768      /* records per buffer: 1 MiB */
#define TRACE_THREADS  1024       /* threads per process that may record */

struct tbuf {
    struct dsm_trace_chunk_hdr ch;   /* written with the records in one go */
    struct dsm_trace_rec rec[TRACE_RECS];
    /* Owner-only state after the records (not written). */
    uint32_t n;
    int depth;                       /* library nesting of the owner */
    uint64_t last_wall;              /* when the owner last left the library */
    uint64_t last_cpu;               /* its CPU time then (maybe estimated) */
    uint64_t enter_wall, enter_cpu;  /* the current outermost library call */
    uint64_t wait_t0, waited;        /* waits inside it (WAIT_BEGIN/END) */
};

/* Reading the thread CPU clock is a system call (about 3 us in a VM,
 * against 0.1-0.4 us for CLOCK_MONOTONIC): read it only at the end of
 * compute intervals of at least this length, where being descheduled
 * matters.  A shorter interval counts as all CPU; time in the library
 * counts as CPU except its waits for replies.  Every reading corrects the
 * estimate, so errors do not add up. */
#define CPU_READ_NS 100000

int dsm__trace_on;
static int fd = -1;
static struct tbuf *bufs[TRACE_THREADS];
static uint32_t nbufs;
static int write_failed;
static __thread struct tbuf *self __attribute__((tls_model("initial-exec")));

uint64_t dsm__thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void flush(struct tbuf *b)
{
    size_t len = sizeof b->ch + (size_t)b->n * sizeof b->rec[0];
    const char *p = (const char *)&b->ch;

    if (!b->n)
        return;
    b->ch.nrec = b->n;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            write_failed = errno ? errno : EIO;   /* reported at finalize */
            break;
        }
        p += w;
        len -= (size_t)w;
    }
    b->n = 0;
}

static struct tbuf *get_buf(void)
{
    struct tbuf *b = self;
    if (dsm__likely(b != NULL))
        return b;
    uint32_t i = __atomic_fetch_add(&nbufs, 1, __ATOMIC_RELAXED);
    if (i >= TRACE_THREADS)
        dsm__fatal("DSM_TRACE: more than %d threads recorded events in this process; "
                   "trace a run with fewer threads", TRACE_THREADS);
    b = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED)
        dsm__fatal("DSM_TRACE: cannot map a %zu-byte trace buffer; trace a shorter run "
                   "or free memory", sizeof *b);
    b->ch.magic = DSM_TRACE_CHUNK_MAGIC;
    b->ch.tid = (uint16_t)i;
    b->last_wall = dsm__now_ns();
    b->last_cpu = dsm__thread_cpu_ns();
    b->enter_wall = b->last_wall;
    b->enter_cpu = b->last_cpu;
    self = b;
    /* Release: dsm__trace_fini on another thread sees an initialised buffer. */
    __atomic_store_n(&bufs[i], b, __ATOMIC_RELEASE);
    return b;
}

static inline void put(struct tbuf *b, uint64_t t, int kind, int sub, int peer,
                       uint64_t a, uint64_t x)
{
    struct dsm_trace_rec *r;
    if (dsm__unlikely(b->n == TRACE_RECS))
        flush(b);
    r = &b->rec[b->n];
    r->t = t;
    r->kind = (uint8_t)kind;
    r->sub = (uint8_t)sub;
    r->tid = b->ch.tid;
    r->peer = peer;
    r->a = a;
    r->b = x;
    /* Release: a finalize-time flush by another thread sees the record. */
    __atomic_store_n(&b->n, b->n + 1, __ATOMIC_RELEASE);
}

void dsm__trace_ev(int kind, int sub, int peer, uint64_t a, uint64_t b)
{
    struct tbuf *tb = get_buf();
    uint64_t t = dsm__now_ns();
    if (kind == DSM_TR_WAIT_BEGIN)
        tb->wait_t0 = t;
    else if (kind == DSM_TR_WAIT_END && tb->wait_t0)
        tb->waited += t - tb->wait_t0, tb->wait_t0 = 0;
    put(tb, t, kind, sub, peer, a, b);
}

void dsm__trace_enter_ev(int kind, int sub, int peer, uint64_t a, uint64_t x)
{
    struct tbuf *b = get_buf();
    uint64_t t = dsm__now_ns();
    if (b->depth++ == 0) {
        uint64_t wall = t - b->last_wall, cpu = wall;
        if (wall >= CPU_READ_NS) {
            uint64_t now = dsm__thread_cpu_ns();
            cpu = now > b->last_cpu ? now - b->last_cpu : 0;
            if (cpu > wall)
                cpu = wall;
            b->enter_cpu = now;
        } else {
            b->enter_cpu = b->last_cpu + wall;
        }
        b->enter_wall = t;
        b->waited = 0;
        b->wait_t0 = 0;
        put(b, t, DSM_TR_COMPUTE, 0, -1, wall, cpu);
    }
    put(b, t, kind, sub, peer, a, x);
}

void dsm__trace_leave_ev(int kind, int sub, int peer, uint64_t a, uint64_t x)
{
    struct tbuf *b = get_buf();
    uint64_t t = dsm__now_ns();
    put(b, t, kind, sub, peer, a, x);
    if (b->depth > 0)
        b->depth--;
    if (b->depth == 0) {
        uint64_t in = t - b->enter_wall, busy = in > b->waited ? in - b->waited : 0;
        b->last_wall = t;
        /* A long call outside waits may have been descheduled: read. */
        b->last_cpu = busy >= CPU_READ_NS ? dsm__thread_cpu_ns() : b->enter_cpu + busy;
    }
}

void dsm__trace_role(int role)
{
    if (dsm__trace_on)
        dsm__trace_ev(DSM_TR_THREAD, role, -1, 0, 0);
}

void dsm__trace_init(void)
{
    struct dsm_global *g = &dsm__g;
    struct dsm_trace_file_hdr h;
    char path[4096 + 16];
    int on = g->cfg.trace_prefix != NULL, all;

    /* Every rank traces or none does: the clock alignment is collective. */
    MPI_Allreduce(&on, &all, 1, MPI_INT, MPI_MIN, g->comm);
    if (all != on)
        dsm__fatal("DSM_TRACE is set on some ranks but not on others; give every rank "
                   "the same environment");
    if (!on)
        return;
    snprintf(path, sizeof path, "%s.%d", g->cfg.trace_prefix, g->rank);
    /* The system call: a program may define its own open (ntcard does). */
    fd = (int)syscall(SYS_openat, AT_FDCWD, path,
                      O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        dsm__fatal("DSM_TRACE: cannot create %s (%s); give a prefix in a writable folder",
                   path, strerror(errno));
    memset(&h, 0, sizeof h);
    memcpy(h.magic, DSM_TRACE_MAGIC, 8);
    h.version = DSM_TRACE_VERSION;
    h.endian = DSM_TRACE_ENDIAN;
    h.hdr_size = sizeof h;
    h.rec_size = sizeof(struct dsm_trace_rec);
    h.rank = g->rank;
    h.nodes = g->nodes;
    h.page_size = g->page_size;
    h.threads_per_rank = g->cfg.threads_per_rank;
    h.online_cpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
    h.pid = (int32_t)getpid();
    snprintf(h.comm, sizeof h.comm, "%s", g->ops->name);
    gethostname(h.host, sizeof h.host - 1);
    MPI_Barrier(g->comm);
    h.t_sync = dsm__now_ns();
    h.t_init = h.t_sync;
    if (write(fd, &h, sizeof h) != (ssize_t)sizeof h)
        dsm__fatal("DSM_TRACE: cannot write %s (%s)", path, strerror(errno));
    __atomic_store_n(&dsm__trace_on, 1, __ATOMIC_RELEASE);
    dsm__trace_role(DSM_TR_ROLE_APP);
}

void dsm__trace_fini(void)
{
    uint32_t n;
    if (!dsm__trace_on)
        return;
    __atomic_store_n(&dsm__trace_on, 0, __ATOMIC_RELEASE);
    n = __atomic_load_n(&nbufs, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n && i < TRACE_THREADS; i++) {
        struct tbuf *b = __atomic_load_n(&bufs[i], __ATOMIC_ACQUIRE);
        if (b)
            flush(b);
    }
    if (close(fd) != 0 && !write_failed)
        write_failed = errno;
    fd = -1;
    if (write_failed)
        fprintf(stderr, "libdsm[rank %d]: DSM_TRACE: writing %s.%d failed (%s); the trace "
                "is incomplete: free disk space or choose another folder\n",
                dsm__g.rank, dsm__g.cfg.trace_prefix, dsm__g.rank, strerror(write_failed));
}
