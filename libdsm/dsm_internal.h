/*
 * dsm_internal.h - libdsm's internal interface, grouped by file.  Nothing
 * here is exported (hidden visibility plus libdsm.map).  The part that a
 * runtime on top of libdsm uses too is in dsm_runtime.h, included here.
 */
#ifndef DSM_INTERNAL_H
#define DSM_INTERNAL_H

#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "libc.h"        /* the C library and pthreads: glibc's own, see there */
#include "dsm.h"
#include "dsm_pure.h"
#include "wire.h"
#include "dsm_runtime.h"    /* what a runtime on top of libdsm uses, declared there */
#include "comm/comm.h"
#include "trace.h"

/* Address ranges outside the region that can be brought under the DSM
 * (segment.c): e.g. a program's executable and the libraries it needs. */
#define DSM_MAX_SEGMENTS 128

/* ---- init.c: the one global state ---------------------------------------- */
enum dsm_lifecycle { DSM_STATE_NEW = 0, DSM_STATE_RUNNING, DSM_STATE_FINALIZED };

struct dsm_page {
    uint8_t  state;      /* enum dsm_pstate */
    uint8_t  flags;      /* DSM_PF_* */
    uint16_t home;       /* home node (valid unless UNALLOC) */
    uint32_t listed;     /* page_table.c: on the written-page list of this
                          * generation (under its list lock, not the page's) */
    uint64_t copyset;    /* home only: nodes that may hold a copy */
};

#define DSM_PF_TWIN   0x01   /* a twin exists (non-home page written) */
#define DSM_PF_MARKED 0x02   /* written since the last release or barrier */
/* 0x04: free (was "written since the last barrier": struct dsm_page.listed) */
#define DSM_PF_STALE  0x08   /* in flight, but invalidated meanwhile */
#define DSM_PF_MIGRATE 0x10  /* home moves to the first sole writer (same on all nodes) */
#define DSM_PF_NOTRAP  0x20  /* a stack: the home never write-protects it (segment.c) */
#define DSM_PF_PREFETCHING 0x40  /* IN_FLIGHT because of a prefetch (prefetch.c) */

struct dsm_global {
    int state;                       /* enum dsm_lifecycle */
    struct dsm_config cfg;
    int rank, nodes;
    int own_mpi;                     /* we called MPI_Init_thread */
    MPI_Comm comm;                   /* our duplicate of MPI_COMM_WORLD */
    const struct dsm_comm_ops *ops;

    /* vm.c */
    int memfd;
    unsigned char *app;              /* application view, at cfg.base */
    unsigned char *sys;              /* system view: always read-write */
    unsigned char *twins;            /* twin of page p at twins + p*page_size */
    size_t page_size, npages;
    unsigned page_shift;
    unsigned page_chunks;            /* messages per page (DSM_PAGE_CHUNK) */
    size_t chunk_size;               /* page_size / page_chunks */
    size_t os_page;
    /* Attached segments (segment.c): pages [segs_first, segs_first +
     * segs_npages), one run for all of them; segment i's pages [first,
     * first+npages) appear at its app instead of at app + p*page_size, and
     * its last page may be shorter (bytes in all). */
    struct dsm_segment {
        unsigned char *app;
        size_t first, npages, bytes;
    } segs[DSM_MAX_SEGMENTS];
    int nsegs;
    size_t segs_first, segs_npages;
    size_t segs_reserved;            /* pages of the run, spare ones included */
    int keep_mapped;                 /* dsm_finalize leaves every mapping in place */
    int exec_pages;                  /* accessible pages are also executable (the
                                      * shim: a program that needs an executable
                                      * stack, for GCC's nested-function trampolines) */

    /* page_table.c */
    struct dsm_page *pages;
    uint32_t installs;               /* futex word: bumped at each install */
    uint32_t install_waiters;

    /* barrier.c / lock.c: epoch = barriers completed here */
    uint32_t epoch;

    pthread_t comm_thread;
    int comm_stop;

    /* host.c: this node's host, probed by dsm_init */
    struct dsm_host host;
    /* The barrier tree's shape, the same on every node (init.c, from
     * DSM_BARRIER: flat where any host has more ranks' application threads
     * than CPUs, binomial otherwise; dsm_pure.h, dsm__tree_*). */
    int tree_flat;
};

extern struct dsm_global dsm__g DSM_HIDDEN;

/* ---- host.c --------------------------------------------------------------- */
/* This host's ranks and CPUs (collective over dsm__g.comm). */
DSM_HIDDEN void dsm__host_probe(struct dsm_host *h);

/* ---- error.c -------------------------------------------------------------- */
/* dsm__fatal, dsm__dying: dsm_runtime.h. */
/* The second half of dsm__fatal, for a report already printed: end the job. */
DSM_HIDDEN void dsm__die(void) __attribute__((noreturn));
/* Public entry check: fatal unless dsm_init() ran and dsm_finalize() did not.
 * func: the public name the program called, never an internal one (a helper
 * or a runtime's entry passes the caller's name: DSM_CHECK_RUNNING_AS). */
DSM_HIDDEN void dsm__check_running(const char *func);
#define DSM_CHECK_RUNNING_AS(func) \
    do { if (dsm__unlikely(dsm__g.state != DSM_STATE_RUNNING)) \
             dsm__check_running(func); } while (0)
#define DSM_CHECK_RUNNING() DSM_CHECK_RUNNING_AS(__func__)

/* ---- vm.c: the shared region ---------------------------------------------- */
DSM_HIDDEN int  dsm__vm_init(void);
DSM_HIDDEN void dsm__vm_fini(void);
/* Every page readable and writable with the contents it has here (the end
 * of a keep_mapped run: no more fetches). */
DSM_HIDDEN void dsm__vm_open_all(void);
/* dsm__vm_detach_child: dsm_runtime.h. */
/* mprotect pages [first, first+count) of the application view; fatal on error. */
DSM_HIDDEN void dsm__vm_protect(size_t first, size_t count, int prot);
DSM_HIDDEN void dsm__vm_release(size_t first, size_t count);  /* drop backing */
DSM_HIDDEN void dsm__vm_back(size_t p);     /* allocate before a first copy */
static inline int dsm__page_in_segment(size_t p)
{ return p - dsm__g.segs_first < dsm__g.segs_npages; }
/* The segment that holds page p (dsm__page_in_segment(p) is true). */
static inline const struct dsm_segment *dsm__segment_of_page(size_t p)
{
    const struct dsm_segment *s = dsm__g.segs;
    while (p - s->first >= s->npages)
        s++;
    return s;
}
static inline unsigned char *dsm__app_page(size_t p)
{
    if (dsm__unlikely(dsm__page_in_segment(p))) {
        const struct dsm_segment *s = dsm__segment_of_page(p);
        return s->app + ((p - s->first) << dsm__g.page_shift);
    }
    return dsm__g.app + (p << dsm__g.page_shift);
}
static inline unsigned char *dsm__sys_page(size_t p)
{ return dsm__g.sys + (p << dsm__g.page_shift); }
static inline unsigned char *dsm__twin_page(size_t p)
{ return dsm__g.twins + (p << dsm__g.page_shift); }
/* The segment whose bytes hold a, or NULL. */
static inline const struct dsm_segment *dsm__segment_at(const void *a)
{
    uintptr_t x = (uintptr_t)a;
    for (int i = 0; i < dsm__g.nsegs; i++)
        if (x - (uintptr_t)dsm__g.segs[i].app < dsm__g.segs[i].bytes)
            return &dsm__g.segs[i];
    return NULL;
}
static inline int dsm__in_main_view(const void *a)
{
    return (uintptr_t)a - (uintptr_t)dsm__g.app < (dsm__g.npages << dsm__g.page_shift);
}
static inline int dsm__in_region(const void *a)
{
    if (dsm__in_main_view(a))
        return !dsm__page_in_segment(((uintptr_t)a - (uintptr_t)dsm__g.app) >>
                                     dsm__g.page_shift);
    return dsm__segment_at(a) != NULL;
}
/* The page of a, an address in the region (dsm__in_region). */
static inline size_t dsm__page_of(const void *a)
{
    if (dsm__likely(dsm__in_main_view(a)))
        return ((uintptr_t)a - (uintptr_t)dsm__g.app) >> dsm__g.page_shift;
    const struct dsm_segment *s = dsm__segment_at(a);
    if (!s)
        return ((uintptr_t)a - (uintptr_t)dsm__g.app) >> dsm__g.page_shift;
    return s->first + (((uintptr_t)a - (uintptr_t)s->app) >> dsm__g.page_shift);
}

/* Coalescing of protection changes: consecutive pages with the same target
 * protection become one mprotect. */
struct dsm_protect_batch { size_t first, count; int prot; };
DSM_HIDDEN void dsm__pb_add(struct dsm_protect_batch *b, size_t page, int prot);
DSM_HIDDEN void dsm__pb_flush(struct dsm_protect_batch *b);

/* ---- page_table.c ---------------------------------------------------------- */
DSM_HIDDEN int  dsm__pt_init(void);
DSM_HIDDEN void dsm__pt_fini(void);
DSM_HIDDEN void dsm__page_lock(size_t p);
DSM_HIDDEN void dsm__page_unlock(size_t p);
/* dsm_flush's page sets (flush.c), each a list without repeats, cleared at
 * every barrier.  announce: pages this node released (or changed with an
 * atomic operation at their home) since its last flush; pending: pages
 * other nodes' flushes released since this node's last flush.  Any thread
 * (pending also inside a signal handler: no allocation); take returns a
 * malloc'd copy and empties the set. */
DSM_HIDDEN void dsm__pt_add_announce(const uint32_t *pages, size_t n);
DSM_HIDDEN size_t dsm__pt_take_announce(uint32_t **out);
DSM_HIDDEN void dsm__pt_add_pending(const uint32_t *pages, size_t n);
DSM_HIDDEN size_t dsm__pt_take_pending(uint32_t **out);
/* Record page p as written (caller holds its lock). */
DSM_HIDDEN void dsm__pt_mark_written(size_t p);
/* Take the list of pages marked since the last flush (clears it), or copy the
 * list of pages written in this epoch, or take it at a barrier's entry
 * (writes after it start the next epoch's list).  Caller frees *out. */
DSM_HIDDEN size_t dsm__pt_take_marked(uint32_t **out);
DSM_HIDDEN size_t dsm__pt_copy_epoch(uint32_t **out);
DSM_HIDDEN size_t dsm__pt_take_epoch(uint32_t **out);
DSM_HIDDEN void dsm__pt_clear_epoch(void);
/* Lock releases: the pages written here since the last barrier and those
 * learned of from lock grants since (dsm__pt_note_learned); malloc'd.
 * *epoch: the epoch those writes belong to (dsm__g.epoch, or the next one
 * while this node is in a barrier). */
DSM_HIDDEN size_t dsm__pt_copy_release(uint32_t **out, uint32_t *epoch);
DSM_HIDDEN void dsm__pt_note_learned(const uint32_t *pages, size_t n);
/* Installs: a thread that faults on an IN_FLIGHT page waits for the next
 * (the communication thread then keeps polling, as for any sleeping waiter). */
DSM_HIDDEN void dsm__pt_install_wait(uint32_t seen);
DSM_HIDDEN void dsm__pt_install_done(void);

/* ---- waiter.c: threads waiting for replies --------------------------------- */
#define DSM_MAX_WAITERS 1024    /* also bounds the posted page receives */
enum dsm_wait_kind { DSM_WAIT_PAGE = 1, DSM_WAIT_ACKS, DSM_WAIT_BARRIER,
                     DSM_WAIT_GRANT, DSM_WAIT_RELEASE, DSM_WAIT_ATOMIC,
                     DSM_WAIT_PREFETCH, /* nobody waits: pages of one prefetch batch */
                     DSM_WAIT_COLL, /* comm.c: a collective (bcast.c) */
                     DSM_WAIT_CALL, /* service.c: a service call's reply */
                     DSM_WAIT_DIFFS /* barrier.c: other nodes' unacked diffs */ };
struct dsm_waiter {
    uint32_t done;          /* futex word: 0 while waiting */
    int32_t  remaining;     /* replies still expected */
    int      in_use;
    int      kind;          /* enum dsm_wait_kind: which reply it accepts */
    uint32_t sleeping;      /* the waiter sleeps on done: wake it */
    void    *ctx;           /* reply-specific collector (barrier, lock) */
    /* What is awaited, for DSM_TIMEOUT and state dumps (watchdog.c): the
     * node that must answer (-1: several or unknown) and the page, lock or
     * barrier number; when the wait began. */
    int      peer;
    uint64_t obj;
    uint64_t t0;
    /* What the runtime above says the wait is (dsm_rt_wait_for), or NULL:
     * "an OpenMP fork: ...".  A static string. */
    const char *what;
};
/* This thread's description of its waits (dsm_rt_wait_for), copied into
 * each waiter it takes. */
extern __thread const char *dsm__wait_what DSM_HIDDEN;
DSM_HIDDEN int  dsm__waiter_init(void);
DSM_HIDDEN uint32_t dsm__waiter_get(enum dsm_wait_kind kind, int expected, void *ctx);
/* The waiter named by a reply, or NULL unless it is in use and waits for a
 * reply of this kind. */
DSM_HIDDEN struct dsm_waiter *dsm__waiter_at(uint32_t id, enum dsm_wait_kind kind);
DSM_HIDDEN void dsm__waiter_wait(uint32_t id);
/* Wake every sleeping waiter without completing it (it looks again). */
DSM_HIDDEN void dsm__waiter_wake_all(void);
/* Record what waiter id awaits: from node peer, about page/lock/barrier obj. */
DSM_HIDDEN void dsm__waiter_note(uint32_t id, int peer, uint64_t obj);
/* Slot i of the table (0 <= i < DSM_MAX_WAITERS), for reports; racy reads. */
DSM_HIDDEN const struct dsm_waiter *dsm__waiter_slot(uint32_t i);
DSM_HIDDEN void dsm__waiter_put(uint32_t id);
/* The ctx of a page wait that is an MPI_Rget (comm/rma.c), not a PAGE_REQ. */
extern char dsm__rget_wait DSM_HIDDEN;
/* Communication side: one reply arrived; wakes the waiter at the last one. */
DSM_HIDDEN void dsm__waiter_complete(struct dsm_waiter *w);
DSM_HIDDEN void dsm__waiter_add_expected(uint32_t id, int n);
/* Number of threads waiting for a reply (the communication thread does not
 * sleep while it is non-zero). */
extern uint32_t dsm__waiting DSM_HIDDEN;
/* Of those, the ones asleep: only the communication thread can wake them. */
extern uint32_t dsm__sleepers DSM_HIDDEN;
/* Of the polling waiters, those in a barrier, a lock acquire or a
 * collective: waits that may be long, and that wake the communication
 * thread when they end or go to sleep. */
extern uint32_t dsm__polling_long DSM_HIDDEN;
/* The communication thread's sleep while an application thread polls for
 * itself (comm.c, standby_ns): while only short waits poll, and while a
 * long one does (bounded only for the watchdog's sake). */
#define DSM_STANDBY_NS      1000000
#define DSM_STANDBY_LONG_NS 100000000
/* Adaptive polling: how long a waiter or the communication thread keeps
 * polling (yielding the CPU between polls) after the last event before it
 * sleeps.  Longer waits are not latency-critical, and polling through them
 * takes the core from another process's compute thread. */
#define DSM_POLL_WINDOW_NS 500000

/* ---- msg.c: messages ---------------------------------------------------- */
struct dsm_msg {
    struct dsm_qnode q;      /* send queue / in-flight list link */
    int dest;
    int pooled;
    MPI_Request req[DSM_MAX_PAGE_CHUNKS];   /* [0], or a page's chunks */
    unsigned nreq;
    /* A page send: ext/ext_len/tag replace header+payload, sent as
     * dsm__g.page_chunks messages of chunk_size bytes.  A page request
     * under the queue transport: recv_page >= 0 asks the communication
     * thread to post the page's receive before sending. */
    const void *ext;
    size_t ext_len;
    /* A run of a prefetch batch's pages: ext_n consecutive pages from
     * hdr.id on, ext_len = ext_n pages at ext, sent as one message (0: not
     * such a run). */
    size_t ext_n;
    int tag;
    long recv_page;
    /* A prefetch request: post the receives of the recv_npages pages listed
     * in the payload (u32 ids), in order, before sending. */
    size_t recv_npages;
    size_t cap;              /* payload capacity */
    struct dsm_wire_hdr hdr; /* immediately followed by the payload */
    unsigned char payload[];
};
#define DSM_SMALL_PAYLOAD 64
DSM_HIDDEN int  dsm__msg_init(void);
DSM_HIDDEN struct dsm_msg *dsm__msg_new(int type, int dest, size_t cap);
DSM_HIDDEN void dsm__msg_free(struct dsm_msg *m);
DSM_HIDDEN void dsm__msg_send(struct dsm_msg *m);     /* fills src/epoch, counts */
/* A prefetch batch's reply goes as a message per run of consecutive pages
 * of its (sorted) list, at most about DSM_BATCH_BYTES long: one message per
 * batch made the first access wait for the whole batch (NPB BT class A, 20
 * steps, 2 ranks: 2.69 -> 3.01 s), a message per page costs a message per
 * page.  A run is contiguous in both nodes' system views, so it needs no
 * MPI datatype: MPICH builds its first one lazily and reads the
 * environment then (getenv), which under the OpenMP shim is shared memory
 * that the communication thread may not touch. */
#define DSM_BATCH_BYTES ((size_t)131072)
static inline size_t dsm__batch_pages(void)
{
    size_t n = DSM_BATCH_BYTES / dsm__g.page_size;
    return n ? n : 1;
}
/* The length of the run that starts at list[i0] of the k u32 page ids at
 * list (unaligned), as both the requester and the home cut it. */
static inline size_t dsm__batch_run(const unsigned char *list, size_t k, size_t i0)
{
    const size_t max = dsm__batch_pages();
    uint32_t prev, p;
    size_t n = 1;
    memcpy(&prev, list + 4 * i0, 4);
    while (i0 + n < k && n < max) {
        memcpy(&p, list + 4 * (i0 + n), 4);
        if (p != prev + 1)
            break;
        prev = p;
        n++;
    }
    return n;
}
/* Send a list of page ids as one or more messages of this type, each with
 * the given header fields; the last carries DSM_MF_LAST (an empty list is one
 * empty message). */
DSM_HIDDEN void dsm__msg_send_pages(int type, int dest, const uint32_t *pages, size_t n,
                                    uint32_t id, uint32_t waiter, uint16_t flags,
                                    uint64_t arg, uint64_t arg2);
/* Largest payload of one message (the posted receive's size minus header). */
DSM_HIDDEN size_t dsm__msg_max_payload(void);

/* ---- comm/comm.c: the communication thread -------------------------------- */
DSM_HIDDEN int  dsm__comm_start(void);
DSM_HIDDEN void dsm__comm_stop(void);
DSM_HIDDEN void dsm__comm_wake(void);          /* work queued or a waiter waits */
/* Post the receive of page p from its home into the system view, completed
 * by dsm__page_arrived(p, waiter) under the progress token.  Caller holds the
 * MPI mutex (direct) or is the communication thread (queue). */
DSM_HIDDEN void dsm__comm_post_page_recv(size_t p, int home, uint32_t waiter);
DSM_HIDDEN int  dsm__comm_page_recvs_test(void);
DSM_HIDDEN int  dsm__comm_try_progress(void);  /* by a waiting thread */
/* The MPI mutex of the direct transport (also used by comm.c's helpers). */
extern pthread_mutex_t dsm__mpi_lock DSM_HIDDEN;
extern int dsm__comm_use_mpi_lock DSM_HIDDEN;
/* Take the MPI mutex, counting an application thread's wait in the stats. */
DSM_HIDDEN void dsm__mpi_lock_take(void);

/* ---- progress.c: the library's periodic work, called by comm.c's loop ----- */
/* Communication thread, once, before its first round. */
DSM_HIDDEN void dsm__progress_start(void);
/* Communication thread, progress token held, before each round: issue the
 * queued prefetches.  Returns the number of events. */
DSM_HIDDEN int  dsm__progress_issue(void);
/* Whoever holds the progress token (the communication thread, or a waiting
 * thread under waiter_progress), at the end of every round: serve the
 * requests deferred until this epoch, then those held by an ordered flush. */
DSM_HIDDEN void dsm__progress_serve(void);
/* Communication thread, token released, after each round, with the round's
 * count of events: the watchdog, about ten times a second. */
DSM_HIDDEN void dsm__progress_tick(int events);

/* Pages may be read one-sidedly, unseen by their home (DSM_COMM=rma): a
 * home cannot know whether anybody holds a copy, so it traps its first
 * write to every page (except stacks, which are still fetched by message)
 * in every interval instead of trusting its copysets. */
static inline int dsm__remote_reads(void)
{ return dsm__g.ops->get_page != NULL && dsm__g.nodes > 1; }

/* ---- dispatch.c: received messages to the module that owns their type ---- */
/* The handler of one message type: runs under the progress token, after
 * dsm__wire_check accepted the message; pl is its payload (h->len bytes,
 * right after h). */
typedef void (*dsm__handler_fn)(const struct dsm_wire_hdr *h, const unsigned char *pl);
/* Start-up only (dsm__dispatch_init): fn handles every message of type. */
DSM_HIDDEN void dsm__handler_register(enum dsm_msg_type type, dsm__handler_fn fn);
/* dsm_init, before the communication thread starts: every module registers
 * its handlers (dsm__<module>_handlers, declared with each module below). */
DSM_HIDDEN void dsm__dispatch_init(void);
/* Validate a received message (wire_check.c), then handle it. */
DSM_HIDDEN void dsm__dispatch(const struct dsm_wire_hdr *h, const void *payload,
                              int mpi_src, int count);
/* Handle a message validated before (a deferred request: protocol.c). */
DSM_HIDDEN void dsm__handle(const struct dsm_wire_hdr *h, const unsigned char *pl);
/* The waiter a reply names, waiting for a reply of this kind; if none, a
 * fatal protocol error. */
DSM_HIDDEN struct dsm_waiter *dsm__reply_waiter(const struct dsm_wire_hdr *h,
                                                enum dsm_wait_kind kind);
/* A field out of range for the message's type: a fatal protocol error. */
DSM_HIDDEN void dsm__msg_malformed(const struct dsm_wire_hdr *h) __attribute__((noreturn));

/* ---- protocol.c: the page service and the home's diffs -------------------- */
/* Epoch stamped on page requests; see protocol.c. */
DSM_HIDDEN extern uint32_t dsm__fetch_epoch;
DSM_HIDDEN void dsm__protocol_handlers(void);
/* A request, diff or update from a node already past a barrier this node
 * has not finished: kept (payload and all) and handled again once this
 * node's epoch catches up; returns 1 then.  Progress token. */
DSM_HIDDEN int  dsm__defer_early(const struct dsm_wire_hdr *h, const void *payload);
/* Fetch page p from its home into the system view and make it readable.
 * The caller has set it IN_FLIGHT. */
DSM_HIDDEN void dsm__fetch_page(size_t p);
DSM_HIDDEN void dsm__page_arrived(size_t p, uint32_t waiter);
/* A page or prefetch request that waited for held pages (ordered.c). */
DSM_HIDDEN void dsm__dispatch_held(const struct dsm_wire_hdr *h, const unsigned char *pl);
DSM_HIDDEN void dsm__serve_deferred(void);
DSM_HIDDEN int  dsm__deferred_pending(void);
DSM_HIDDEN void dsm__protocol_init(void);
DSM_HIDDEN int  dsm__cmp_u32(const void *a, const void *b);

/* ---- writeout.c: this node's writes to their homes, invalidation ---------- */
DSM_HIDDEN void dsm__writeout_handlers(void);   /* DIFF_ACK, UPDATE_ACK */
/* How a flush's diffs go out: a release's (lock release, acked), a
 * barrier's (acked), or a barrier's without acks (DSM_MF_NOACK: each home
 * waits at the barrier's release for the count the master sends it;
 * barrier.c says when a barrier may flush so). */
enum dsm_flush_mode { DSM_FLUSH_RELEASE, DSM_FLUSH_BARRIER, DSM_FLUSH_BARRIER_NOACK };
/* Send diffs of the dirty pages among list to their homes, wait for the acks
 * (not under DSM_FLUSH_BARRIER_NOACK), downgrade every page of list
 * (write-protect) and drop twins.  Returns the homes sent diffs without
 * acks (a bit per node; 0 unless DSM_FLUSH_BARRIER_NOACK). */
DSM_HIDDEN uint64_t dsm__flush(const uint32_t *list, size_t n, enum dsm_flush_mode mode);
/* A release's first half: send the diffs of every page this node wrote
 * since the last release, and wait for the homes' acks (one release at a
 * time per node).  Returns the number of pages this node had written since
 * its last release; *noack_homes (if not NULL) gets dsm__flush's mask. */
DSM_HIDDEN size_t dsm__release_writes(enum dsm_flush_mode mode, uint64_t *noack_homes);
/* Tests only: when set, a barrier's unacked diffs keep their last chunks
 * until dsm__flush_send_late, which the barrier calls once its release has
 * arrived (a legal schedule that makes every home wait for them). */
DSM_HIDDEN extern int dsm__barrier_late_diffs;
DSM_HIDDEN void dsm__flush_send_late(void);
/* dsm_flush's release: the same pages, visible to the other nodes' threads
 * all at once (ordered.c). */
DSM_HIDDEN size_t dsm__release_writes_ordered(void);
/* Send this node's unreleased writes to page p (a dirty copy) to its home
 * now, and keep the copy writable (atomic.c: an atomic at the home must
 * follow this thread's earlier plain writes). */
DSM_HIDDEN void dsm__flush_page_now(size_t p);
/* Invalidate page p here if it is a copy (not home); flushes own writes first. */
DSM_HIDDEN void dsm__invalidate_copy(size_t p, struct dsm_protect_batch *pb);
/* Non-zero while DIFF messages of this node wait for their acks: pages are
 * then fetched by message, never read one-sidedly (protocol.c). */
DSM_HIDDEN int  dsm__diffs_unacked(void);

/* ---- ordered.c: holds and updates of the ordered release ------------------ */
DSM_HIDDEN int  dsm__ordered_init(void);
DSM_HIDDEN void dsm__ordered_fini(void);
/* This node flushed, or another node's flush updated it: pages are fetched
 * by message from now on. */
DSM_HIDDEN extern int dsm__ordered_mode;
/* This node made an ordered flush: its home pages stay tracked. */
DSM_HIDDEN extern int dsm__home_tracked;
DSM_HIDDEN void dsm__track_home_pages(void);
DSM_HIDDEN int  dsm__page_held(size_t p);
DSM_HIDDEN void dsm__hold(size_t p);
/* Shut: PROT_NONE (not a stack) until as many dsm__unshut; page lock held.
 * A thread that faults on a shut page waits until it opens. */
DSM_HIDDEN int  dsm__page_shut(size_t p);
DSM_HIDDEN void dsm__shut(size_t p);
DSM_HIDDEN void dsm__unshut(size_t p);
DSM_HIDDEN void dsm__unhold_own(const uint32_t *pages, size_t n);
/* A fetched copy of page p landed (protocol.c install, page lock held):
 * apply (apply = 1) or drop the ordered flushes' diffs kept for it while
 * it was on the way. */
DSM_HIDDEN void dsm__inflight_install(size_t p, int apply);
/* 1 if the request names a held page: it is kept and served later. */
DSM_HIDDEN int  dsm__held_defer(const struct dsm_wire_hdr *h, const void *payload);
DSM_HIDDEN int  dsm__held_pending(void);
DSM_HIDDEN void dsm__serve_held(void);
DSM_HIDDEN void dsm__ordered_handlers(void);   /* UPDATE, UNHOLD */

/* ---- flush.c: dsm_flush ---------------------------------------------------- */
DSM_HIDDEN void dsm__flush_handlers(void);     /* FLUSH_NOTICE */

/* ---- prefetch.c: dsm_prefetch and DSM_PREFETCH=history ------------------ */
/* Prefetched pages in flight at most (the posted page receives are sized
 * for DSM_MAX_WAITERS + this); pages beyond it are not prefetched. */
#define DSM_PREFETCH_MAX 2048
DSM_HIDDEN int  dsm__prefetch_init(void);
/* Communication thread, under the progress token: request the pages of the
 * queued prefetches.  Returns the number of jobs handled. */
DSM_HIDDEN int  dsm__prefetch_run(void);
DSM_HIDDEN int  dsm__prefetch_queued(void);
/* Under the progress token: prefetched page p arrived for waiter slot w. */
DSM_HIDDEN void dsm__prefetch_arrived(size_t p, struct dsm_waiter *w, uint32_t id);
/* Barrier entry: wait until every prefetch of this node is answered. */
DSM_HIDDEN void dsm__prefetch_drain(void);
/* History (DSM_PREFETCH=history): page p was fetched, or a prefetched copy
 * (prefetched 1) used, by a fault (fault handler, page lock held); a
 * prefetched copy of p was dropped unused (page lock held; nothing unless
 * DSM_PREFETCH=history, whose acquire prefetch backs off); after a barrier; after a lock acquire that
 * invalidated pages[0..n). */
DSM_HIDDEN void dsm__history_record(size_t p, int prefetched);
DSM_HIDDEN void dsm__history_wasted(size_t p);
DSM_HIDDEN void dsm__history_after_barrier(void);
DSM_HIDDEN void dsm__history_after_acquire(const uint32_t *pages, size_t n);

/* ---- barrier.c ------------------------------------------------------------- */
DSM_HIDDEN int  dsm__barrier_init(void);
/* on_diff: the last chunk of a barrier's unacked diffs (DSM_MF_NOACK) from
 * h->src has been applied here. */
DSM_HIDDEN void dsm__barrier_diff_arrived(const struct dsm_wire_hdr *h);
/* A barrier that also checks that every node passed the same check value;
 * on a mismatch node 0 reports what (with aux values) and ends the job. */
enum dsm_coll_kind { DSM_COLL_BARRIER = 0, DSM_COLL_MALLOC, DSM_COLL_FREE, DSM_COLL_FINALIZE,
                     DSM_COLL_BCAST };
/* at_release, if not NULL, runs after the write notices are applied and
 * before this node's epoch advances: requests from nodes already past the
 * barrier are still deferred, so it can set up pages they may ask for. */
DSM_HIDDEN void dsm__barrier_checked(enum dsm_coll_kind kind, uint64_t check, uint64_t aux,
                                     void (*at_release)(void *), void *arg);
/* dsm__barrier_bystanders: dsm_runtime.h. */
/* prefetch.c: after a barrier of this kind (epoch advanced): let queued
 * prefetches go, and run the history prefetch after dsm_barrier. */
DSM_HIDDEN void dsm__prefetch_after_barrier(enum dsm_coll_kind kind);
DSM_HIDDEN void dsm__barrier_handlers(void);   /* BARRIER_ENTER, BARRIER_RELEASE */
/* A barrier's release as this node collects it (barrier_tree.c fills it,
 * barrier.c applies it). */
struct dsm_release {
    struct dsm_wire_notice *items;
    size_t n, cap;
    int nomigrate;                  /* DSM_MF_NOMIGRATE */
    uint32_t diffs_expected;        /* senders of unacked diffs to this node */
    void *carry;                    /* dsm__barrier_carry: node 0's bytes go here */
    size_t carry_cap, carry_len;
};
/* ---- barrier_tree.c: entries up and releases down a binomial tree ---- */
DSM_HIDDEN int  dsm__tree_init(void);
/* This node's entry (the barrier's thread): pages written (nocopy[i]: held
 * no copy, NULL for none), homes sent unacked diffs, the collective's kind
 * and check values, the waiter its release completes. */
DSM_HIDDEN void dsm__tree_enter(enum dsm_coll_kind kind, uint64_t check, uint64_t aux,
                                const uint32_t *list, size_t n, const uint32_t *nocopy,
                                uint64_t noack_homes, uint32_t waiter, int nomigrate);
/* Node 0, before its dsm__tree_enter: the bytes its release carries. */
DSM_HIDDEN void dsm__tree_carry(const void *send, size_t len);
DSM_HIDDEN void dsm__tree_on_enter(const struct dsm_wire_hdr *h, const unsigned char *payload);
DSM_HIDDEN void dsm__tree_on_release(const struct dsm_wire_hdr *h, const unsigned char *payload,
                                     struct dsm_release *c);
DSM_HIDDEN void dsm__tree_dump(struct dsm_sbuf *sb);

/* ---- lock.c ---------------------------------------------------------------- */
DSM_HIDDEN int  dsm__lock_init(void);
DSM_HIDDEN void dsm__lock_handlers(void);  /* LOCK_REQ, LOCK_GRANT, LOCK_REL(_ACK) */
/* Barrier, before it enters: wait for the LOCK_REL_ACKs of this node's
 * releases in flight. */
DSM_HIDDEN void dsm__lock_wait_releases(void);
/* dsm__lock_try, dsm__lock_release_handoff: dsm_runtime.h. */

/* ---- atomic.c: operations run at the home of the word ---------------------- */
/* enum dsm_aop, dsm__atomic, dsm__atomic_register: dsm_runtime.h. */
DSM_HIDDEN void dsm__atomic_handlers(void);    /* ATOMIC_REQ, ATOMIC_REPLY */
/* Bit k: pair operation DSM_AOP_PAIR_FN + k is registered (wire_check's
 * limits). */
DSM_HIDDEN uint32_t dsm__atomic_pair_fns(void);

/* ---- service.c: functions another rank runs for this one ------------------ */
#define DSM_SERVICE_SLOTS 256   /* calls that may wait here at once */
/* dsm__service_fn, dsm__service_register, dsm__call: dsm_runtime.h. */
DSM_HIDDEN void dsm__service_handlers(void);   /* CALL_REQ, CALL_REPLY */
/* dsm_finalize: stop the service thread (no call is pending after the last
 * barrier). */
DSM_HIDDEN void dsm__service_stop(void);

/* ---- races.c: DSM_CHECK=races -------------------------------------------- */
/* A diff of page p from writer, flushed at a barrier of interval epoch. */
DSM_HIDDEN void dsm__race_diff(size_t p, uint32_t epoch, int writer, const void *diff,
                               size_t len);
/* This home's own writes to p (twin against system view), at a barrier. */
DSM_HIDDEN void dsm__race_home(size_t p);
/* The same, in interval epoch, before a diff of another node goes into the
 * twin (under the page lock). */
DSM_HIDDEN void dsm__race_home_at(size_t p, uint32_t epoch);
DSM_HIDDEN uint64_t dsm__races_found(void);

/* ---- segment.c: memory outside the region brought under the DSM ----------- */
/* struct dsm_segment_spec, dsm__segments_attach, dsm__segments_add,
 * dsm__set_migrate, dsm__set_notrap, dsm__altstack_setup: dsm_runtime.h. */
DSM_HIDDEN void dsm__notrap_served(size_t p);   /* on_page_req, page lock held */
DSM_HIDDEN void dsm__notrap_mark(void);         /* at barrier and lock release */

/* ---- bcast.c: dsm__bcast is in dsm_runtime.h ------------------------------- */

/* ---- runtime.c: what a runtime on top of libdsm uses (dsm_runtime.h) ------- */
/* The hooks it registered (dsm_rt_set_hooks); a NULL member is absent. */
extern struct dsm_runtime_hooks dsm__hooks DSM_HIDDEN;
/* What it said before dsm_init (dsm_rt_preinit); all zero without one. */
extern struct dsm_runtime_params dsm__rt_params DSM_HIDDEN;

/* ---- alloc.c --------------------------------------------------------------- */
DSM_HIDDEN int  dsm__alloc_init(void);
DSM_HIDDEN void dsm__alloc_fini(void);
/* dsm__alloc_largest_free: dsm_runtime.h. */

/* ---- fault.c --------------------------------------------------------------- */
DSM_HIDDEN int  dsm__fault_init(void);
/* Bumped at every fault that makes a page writable (dsm__flush checks it). */
extern uint32_t dsm__upgrades DSM_HIDDEN;
DSM_HIDDEN void dsm__fault_fini(void);

/* ---- watchdog.c: timeouts, state dumps, fatal signals --------------------- */
/* Main thread, in dsm_init after the configuration: learn every node's pid
 * and host, install the SIGUSR1 dump and the fatal-signal reports. */
DSM_HIDDEN int  dsm__watchdog_init(void);
/* Fatal (reported, job aborted) if waiter w has waited past its limit. */
DSM_HIDDEN void dsm__watchdog_check(const struct dsm_waiter *w, uint64_t now);
/* Communication thread: check every waiter of the process (a waiting thread
 * may itself be stuck before it can check). */
DSM_HIDDEN void dsm__watchdog_tick(uint64_t now);
/* Rank r sent nothing for silent_ns: report it and what this rank waits
 * for, dump the state, end the job (liveness.c calls it). */
DSM_HIDDEN void dsm__watchdog_silent(int r, uint64_t silent_ns);
/* Set once another rank is found dead or gone and reported: a waiting
 * application thread ends the job (dsm__die), the communication thread
 * only after DSM_DIE_GRACE_NS (watchdog.c says why). */
extern int dsm__job_dead DSM_HIDDEN;
/* This thread is ending the process (dsm__die): its faults on shared memory
 * open the page with this rank's copy, stale or not (fault.c). */
extern __thread int dsm__in_die DSM_HIDDEN;
#define DSM_DIE_GRACE_NS 500000000u

/* ---- liveness.c: heartbeats; a silent rank is declared dead ---------------- */

DSM_HIDDEN int  dsm__liveness_init(void);
DSM_HIDDEN void dsm__liveness_start(uint64_t now);
DSM_HIDDEN void dsm__liveness_heard(int src);
DSM_HIDDEN void dsm__liveness_tick(uint64_t now);
DSM_HIDDEN void dsm__liveness_handlers(void);
/* The fault handler declined a SIGSEGV (not ours): report it before the
 * process dies of it.  Async-signal-safe. */
DSM_HIDDEN void dsm__crash_report(int sig, const void *addr);
/* dsm__pass_signal: dsm_runtime.h. */
/* MPI_Finalize, watched: if it has not returned after timeout_s seconds
 * (0: no limit), report it and end the process with status 1 (seen: MPICH
 * 4.0.2 over UCX TCP between hosts, every rank stuck in MPI_Finalize). */
DSM_HIDDEN void dsm__finalize_mpi(unsigned timeout_s);
/* Report lines (struct dsm_sbuf, dsm__sb_*): dsm_runtime.h. */
/* Parts of the state dump kept by their owners (racy reads, signal-safe). */
DSM_HIDDEN void dsm__barrier_dump(struct dsm_sbuf *sb);
DSM_HIDDEN void dsm__lock_dump(struct dsm_sbuf *sb);

/* ---- stats.c: counters, relaxed atomics, merged at print time ------------ */
struct dsm_stats_raw {
    uint64_t read_faults, write_faults, rmr_count, rmr_ns, pages_fetched,
             bytes_fetched, pages_served, twins, diffs, diff_bytes,
             diffs_applied, invalidations, barriers, barrier_ns, barrier_msgs,
             lock_acquires, lock_wait_ns, msgs_sent, bytes_sent,
             msgs_received, mprotect_calls, atomics, remote_atomics, atomic_ns,
             pages_migrated,
             prefetch_issued, prefetch_used, prefetch_wasted, prefetch_late,
             page_wait_ns, prefetch_aged,
             mpi_lock_waits, mpi_lock_wait_ns,   /* direct: application threads */
             flushes, flush_ns, flush_drops, flush_updates, held_requests,
             locks_local;
};
extern struct dsm_stats_raw dsm__st DSM_HIDDEN;
#define DSM_STAT_ADD(field, v) \
    __atomic_fetch_add(&dsm__st.field, (uint64_t)(v), __ATOMIC_RELAXED)
DSM_HIDDEN uint64_t dsm__now_ns(void);
DSM_HIDDEN void dsm__stats_print_all(FILE *out, int json);

#endif /* DSM_INTERNAL_H */
