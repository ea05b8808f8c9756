/*
 * dsm_runtime.h - the interface a runtime built on top of libdsm uses,
 * beyond the public dsm.h, such as the shim in omp-shim/, which is linked
 * together with libdsm's core (libdsmcore.la) into one shared object and
 * includes only dsm.h and this header.  libdsm knows nothing of what the
 * runtime implements: the runtime tells it what it needs before dsm_init
 * (dsm_rt_preinit), registers its remote operations and services, and
 * answers its hooks.  Nothing here is
 * exported (hidden visibility); libdsm's own files get it through
 * dsm_internal.h, which includes it.
 *
 * The runtime never touches libdsm's global state (dsm__g) directly: it
 * reads and sets what it needs with the dsm_rt_* accessors below
 * (runtime.c), and gives libdsm its callbacks in one struct
 * (dsm_rt_set_hooks).  The other declarations are libdsm's own internal
 * functions that a runtime calls, declared here instead of in
 * dsm_internal.h.
 *
 * Threads:
 *   - The accessors and the region queries read or write one value each:
 *     any thread, also a signal handler.  The configuration, rank, nodes,
 *     communicator and the region's geometry are set by dsm_init and valid
 *     after it (before it they read as 0).
 *   - Errors (dsm__fatal, dsm__pass_signal) and the report lines
 *     (dsm__sb_*): any thread; dsm__pass_signal and dsm__sb_* are
 *     async-signal-safe.
 *   - Collective calls (dsm__segments_attach, dsm__segments_add,
 *     dsm__set_migrate, dsm__bcast): the same calls on every node, in the
 *     same order, from one application thread per node.
 *   - Remote operations (dsm__atomic, dsm__call, dsm__lock_try,
 *     dsm__lock_release_handoff): application threads, never libdsm's
 *     communication thread (they wait for its replies); dsm__atomic also
 *     from a SIGSEGV handler of an application thread (the shim's inline
 *     atomics).
 *   - Registration (dsm_rt_preinit, dsm__atomic_register,
 *     dsm__service_register): the main thread at start-up, the same on
 *     every rank.
 *   - A registered service runs on the serving rank's service thread; a
 *     registered pair operation at the pair's home (see dsm__pair_fn).
 *   - The hooks: see struct dsm_runtime_hooks.
 */
#ifndef DSM_RUNTIME_H
#define DSM_RUNTIME_H

#include <mpi.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "dsm.h"
#include "dsm_pure.h"       /* DSM_HIDDEN, DSM_MAX_NODES, struct dsm_range, the
                             * range allocator (dsm__ranges_*), dsm__parse_size */
#include "wire.h"           /* DSM_CALL_MAX: bytes of a service request or reply */
#include "trace_format.h"   /* the event kinds of dsm_rt_trace (DSM_TR_FORK, ...) */

#define dsm__likely(x)   __builtin_expect(!!(x), 1)
#define dsm__unlikely(x) __builtin_expect(!!(x), 0)

/* ---- errors (error.c, watchdog.c) ----------------------------------------- */
/* Print "libdsm[rank N]: <message>" and end the whole job with exit status 1. */
DSM_HIDDEN void dsm__fatal(const char *fmt, ...)
    __attribute__((noreturn, format(printf, 1, 2)));
/* Non-zero once a fatal report has begun (the signal reports stay quiet). */
extern int dsm__dying DSM_HIDDEN;
/* Hand a signal on to the action that a handler in front of it replaced
 * (fault.c's in front of libsigsegv's, a runtime's in front of that); if
 * that was the default, restore it, and the faulting instruction runs again
 * and kills as it would have. */
DSM_HIDDEN void dsm__pass_signal(const struct sigaction *next, int sig, siginfo_t *si,
                                 void *uc);

/* ---- before dsm_init (runtime.c) ------------------------------------------- */
/* What a runtime tells libdsm before dsm_init.  libdsm alone runs one
 * application thread per rank and refuses every DSM_* variable it does not
 * know (config.c); a runtime that runs more threads, or reads DSM_*
 * variables of its own, says so here. */
struct dsm_runtime_params {
    /* Application threads each rank runs (0 counts as 1): whether the host
     * is full and the communication thread's spin (config.c), the
     * statistics report and the trace header. */
    unsigned app_threads;
    /* The DSM_* variables the runtime parses itself, NULL-terminated (or
     * NULL): dsm_init accepts them, and its refusal of an unknown name
     * lists them.  The strings must outlive dsm_init. */
    const char *const *env_names;
    /* Who reads env_names, for that message: the runtime's name and where
     * its variables are described; must outlive dsm_init. */
    const char *name;
    /* A bad value among the runtime's own variables (NULL: none): dsm_init
     * reports it, as its own, once MPI runs (with the rank, ending the
     * job).  Must outlive dsm_init. */
    const char *error;
    /* DSM_PREFETCH where the variable is not set: DSM_PREFETCH_NONE (0,
     * libdsm's own default), _HISTORY or _BARRIERS. */
    int prefetch;
};
/* Call once, on the main thread, before dsm_init; libdsm keeps a copy of
 * *p (the pointers in it are not copied). */
DSM_HIDDEN void dsm_rt_preinit(const struct dsm_runtime_params *p);

/* ---- the job and the configuration (runtime.c) ---------------------------- */
/* Non-zero between dsm_init and dsm_finalize (dsm_initialized, unexported). */
DSM_HIDDEN int dsm_rt_running(void);
DSM_HIDDEN int dsm_rt_rank(void);
DSM_HIDDEN int dsm_rt_nodes(void);
/* libdsm's duplicate of MPI_COMM_WORLD: a runtime's own collectives. */
DSM_HIDDEN MPI_Comm dsm_rt_comm(void);
/* The calling thread is libdsm's communication thread. */
DSM_HIDDEN int dsm_rt_on_comm_thread(void);
/* The configuration (DSM_* variables, config.c): DSM_BASE, DSM_MAX_LOCKS,
 * DSM_CHECK=races (the race check, whose reports a runtime may name
 * addresses for: struct dsm_runtime_hooks). */
DSM_HIDDEN uintptr_t dsm_rt_base(void);
DSM_HIDDEN int dsm_rt_max_locks(void);
DSM_HIDDEN int dsm_rt_check_races(void);

/* ---- the region (runtime.c, vm.c, segment.c, alloc.c) ---------------------- */
/* The OS page size, and the coherence page (DSM_PAGE_SIZE, a power of two). */
DSM_HIDDEN size_t dsm_rt_os_page(void);
DSM_HIDDEN size_t dsm_rt_page_size(void);
/* Coherence pages of the main view (DSM_HEAP_SIZE / DSM_PAGE_SIZE), which
 * starts at dsm_rt_base(). */
DSM_HIDDEN size_t dsm_rt_npages(void);
/* Whether a is shared memory: in the main view (outside the pages set
 * aside for segments) or in an attached segment. */
DSM_HIDDEN int dsm_rt_in_region(const void *a);
/* The page of a, an address in the region (dsm_rt_in_region). */
DSM_HIDDEN size_t dsm_rt_page_of(const void *a);
/* Page p (dsm_rt_page_of) is a page of the main view's page table that is
 * allocated and homed at another node (racy read, signal-safe). */
DSM_HIDDEN int dsm_rt_page_homed_elsewhere(size_t p);
/* The home of page p (dsm_rt_page_of), or -1 if it is not an allocated page
 * of the main view (racy read: homes move only at barriers). */
DSM_HIDDEN int dsm_rt_page_home(size_t p);
/* dsm_finalize leaves every mapping in place (the runtime's threads and
 * exit handlers still run on the region's stacks and data).  Set after
 * dsm_init. */
DSM_HIDDEN void dsm_rt_set_keep_mapped(int on);
/* Accessible pages are also executable (a program that needs an
 * executable stack, for GCC's nested-function trampolines).  Set after
 * dsm_init, before any page is mapped accessible. */
DSM_HIDDEN int  dsm_rt_exec_pages(void);
DSM_HIDDEN void dsm_rt_set_exec_pages(int on);
/* Bytes of the largest free run of pages (the same on every node). */
DSM_HIDDEN size_t dsm__alloc_largest_free(void);
/* In a child of fork(): private views of the region (vm.c); -1 on failure. */
DSM_HIDDEN int dsm__vm_detach_child(void);

/* Segments: memory outside the region brought under the DSM (segment.c).
 * Collective, once: put the address ranges of spec[0..n) (os-page aligned,
 * e.g. an executable's .data and .bss and its libraries') under the DSM,
 * homed at node `home`, at most DSM_MAX_SEGMENTS (dsm_internal.h).  Every
 * node must have the same contents there (the same program image); they
 * start as valid read-only copies.  Only the byte ranges copy[0..ncopy) of
 * each (offsets from its addr) are copied; the rest reads as zero.  spare
 * bytes of pages are set aside after them for dsm__segments_add. */
struct dsm_segment_spec {
    void *addr;
    size_t len;
    const struct dsm_range *copy;
    size_t ncopy;
};
DSM_HIDDEN void dsm__segments_attach(const struct dsm_segment_spec *spec, size_t n, int home,
                                     size_t spare);
/* Collective, later (a library loaded with dlopen on every node): the same
 * for more ranges, in the spare pages.  Only the home's contents count; the
 * other nodes fetch them on first touch.  Fatal if the spare pages or the
 * DSM_MAX_SEGMENTS entries run out; the message ends with advice (what the
 * user can do about it, e.g. a setting of the runtime's; NULL: nothing). */
DSM_HIDDEN void dsm__segments_add(const struct dsm_segment_spec *spec, size_t n, int home,
                                  const char *advice);
/* Mark the pages of [addr, addr+len) as migrating: at the first barrier
 * where one node alone wrote such a page, that node becomes its home.  Every
 * node must make the same calls. */
DSM_HIDDEN void dsm__set_migrate(const void *addr, size_t len);
/* Mark [addr, addr+len) as stacks (DSM_PF_NOTRAP): a thread may run on them,
 * so the home never write-protects them (it could not even push the frame of
 * the handler); instead, while another node holds a copy, the home counts
 * them as written at every release (dsm__notrap_mark). */
DSM_HIDDEN void dsm__set_notrap(const void *addr, size_t len);
/* Per thread: an alternate signal stack, so that a fault on a stack that
 * lives in the region can be handled. */
DSM_HIDDEN void dsm__altstack_setup(void);

/* ---- synchronisation and remote operations -------------------------------- */
/* barrier.c: this node has threads that use shared memory and locks while
 * another of its threads is in a barrier (bystanders: the program's own
 * threads under the shim).  From the next barrier on, no page moves its home
 * (first-touch placement, DSM_PF_MIGRATE) anywhere. */
DSM_HIDDEN void dsm__barrier_bystanders(void);
/* barrier.c: dsm_barrier, and node 0's len bytes at send (NULL on the other
 * nodes) arrive in every node's recv: they travel in the barrier's release,
 * so that what node 0 decided before the barrier costs the others no page
 * fault after it (the shim's fork: the region's descriptor).  len at most
 * DSM_BARRIER_CARRY_MAX.  Returns the bytes received: len, or 0 where node 0
 * called dsm_barrier (or this with no send). */
DSM_HIDDEN size_t dsm__barrier_carry(const void *send, void *recv, size_t len);

/* lock.c: acquire lock id if it is free now: 1 acquired (as
 * dsm_lock_acquire), 0 held elsewhere.  what names the caller's function in
 * the message about a bad id ("what(id): lock id out of range ..."; NULL:
 * libdsm's own name). */
DSM_HIDDEN int  dsm__lock_try(int id, const char *what);
/* Release a lock that this node or another one holds (DSM_MF_HANDOFF);
 * what as for dsm__lock_try. */
DSM_HIDDEN void dsm__lock_release_handoff(int id, const char *what);

/* atomic.c: operations run at the home of the word. */
enum dsm_aop { DSM_AOP_LOAD = 0, DSM_AOP_STORE, DSM_AOP_XCHG, DSM_AOP_CAS,
               DSM_AOP_FETCH_ADD, DSM_AOP_FETCH_SUB, DSM_AOP_FETCH_AND,
               DSM_AOP_FETCH_OR, DSM_AOP_FETCH_XOR, DSM_AOP_FETCH_NAND,
               /* on a 16-byte pair of words, under the home's pair mutex: */
               DSM_AOP_PAIR_LOAD,  /* returns pair[0], *r2 = pair[1] */
               DSM_AOP_PAIR_STORE, /* pair[0] = a, pair[1] = b */
               DSM_AOP_PAIR_FN     /* DSM_AOP_PAIR_FN + id: the operation a runtime
                                    * registered as id (dsm__atomic_register) */ };
/* Ids of registered pair operations go from 0 to DSM_PAIR_FN_MAX - 1. */
#define DSM_PAIR_FN_MAX 8
/* Run op on the word of `size` bytes at addr (in the region) at its home;
 * the pair operations on 16 bytes.  CAS: b is the expected value, a the new
 * one; returns the old value and *r2 = 1 if it swapped.  r2 may be NULL.
 * The pair operations leave no copy of the pair in this node's view up to
 * date, and are not announced by dsm_flush: a pair is the runtime's own
 * bookkeeping, read and written only through them. */
DSM_HIDDEN uint64_t dsm__atomic(void *addr, enum dsm_aop op, unsigned size, uint64_t a,
                                uint64_t b, uint64_t c, uint64_t d, uint64_t *r2);
/* A runtime's operation on a 16-byte pair of words, run at the pair's home
 * under the pair mutex (on the home's communication thread for another
 * node's request, else on the calling thread): reads and updates pair with
 * the operands of dsm__atomic, returns its result and sets *r2 to the second
 * one.  It must not block or call into libdsm. */
typedef uint64_t (*dsm__pair_fn)(uint64_t pair[2], uint64_t a, uint64_t b, uint64_t c,
                                 uint64_t d, uint64_t *r2);
/* Register fn as pair operation id (< DSM_PAIR_FN_MAX), called as
 * dsm__atomic(addr, DSM_AOP_PAIR_FN + id, 16, a, b, c, d, &r2).  On every
 * rank, the same id and function, before dsm_init (the communication thread
 * reads the table); a request for an id that is not registered at the home
 * is refused as a malformed message. */
DSM_HIDDEN void dsm__atomic_register(unsigned id, dsm__pair_fn fn);

/* service.c: functions another rank runs for this one (service ids below
 * DSM_SERVICE_MAX, wire.h).  A service runs on the serving rank's service
 * thread: the request's len bytes from rank src; writes at most
 * DSM_CALL_MAX reply bytes and their count. */
typedef int64_t (*dsm__service_fn)(int src, const void *req, size_t len, void *reply,
                                   size_t *reply_len);
/* On every rank, the same id and function, before any rank calls it. */
DSM_HIDDEN void dsm__service_register(unsigned id, dsm__service_fn fn);
/* Run service id on node with the request: hlen bytes of head then blen of
 * body (together <= DSM_CALL_MAX; the body may be shared memory).  The
 * reply (at most cap bytes, private memory: it is written under the
 * progress token) goes to reply, its length to *reply_len.  Returns the
 * service's result.  Application threads. */
DSM_HIDDEN int64_t dsm__call(int node, unsigned id, const void *head, size_t hlen,
                             const void *body, size_t blen, void *reply, size_t cap,
                             size_t *reply_len);

/* bcast.c: the collective broadcast itself (dsm_bcast without the
 * runtime's hook). */
DSM_HIDDEN void dsm__bcast(void *addr, size_t len, int root);

/* ---- hooks: what libdsm asks the runtime (runtime.c) ----------------------- */
/* Every member may be NULL: libdsm then does what it does without a
 * runtime. */
struct dsm_runtime_hooks {
    /* dsm_bcast (bcast.c), on the thread that called it: run it as the
     * program's sequential code asks it (rank 0 alone calls it there);
     * returns 0 to let libdsm run it as a plain collective. */
    int (*bcast)(void *addr, size_t len, int root);
    /* Called for a SIGSEGV or SIGBUS outside the region, or one the
     * protocol does not explain, before the crash report (fault.c), in the
     * signal handler of the thread that faulted: the shim runs the
     * program's own handler there.  Returns 1 if the access may be retried
     * (the handler returned). */
    int (*foreign_fault)(void *addr);
    /* Race reports (DSM_CHECK=races, races.c): write a name for addr
     * ("symbol+offset") into out; 0 on success. */
    int (*name_address)(const void *addr, char *out, size_t outlen);
    /* What the crash report says of a fault outside the region, if not the
     * default (watchdog.c; read in a signal handler): the runtime knows
     * what is private there. */
    const char *unshared_hint;
};
/* Register the hooks: libdsm keeps a copy of *h (NULL: none).  Call it
 * while none of them can run, e.g. during start-up before the program's
 * threads. */
DSM_HIDDEN void dsm_rt_set_hooks(const struct dsm_runtime_hooks *h);

/* ---- the event log (DSM_TRACE, trace.c) ----------------------------------- */
/* Record an event of this kind (DSM_TR_FORK, DSM_TR_JOIN: trace_format.h)
 * with values a and b, if the log is on.  Any thread. */
DSM_HIDDEN void dsm_rt_trace(int kind, uint64_t a, uint64_t b);

/* ---- what a wait is, for the reports (watchdog.c) -------------------------- */
/* Until the next call, this thread's waits in libdsm are described with
 * what (a static string, e.g. "an OpenMP join: the end of a parallel
 * region") in timeout, liveness and state-dump lines; NULL: no
 * description.  Any thread, for its own waits. */
DSM_HIDDEN void dsm_rt_wait_for(const char *what);

/* ---- report lines (watchdog.c) --------------------------------------------- */
/* Line output for reports, async-signal-safe: each line is prefixed with
 * "libdsm[rank N]: " (dsm__sb_begin; or n = 0 for no prefix) and written
 * with one write(2) when ended. */
struct dsm_sbuf { char b[512]; size_t n; };
DSM_HIDDEN void dsm__sb_begin(struct dsm_sbuf *sb);
DSM_HIDDEN void dsm__sb_str(struct dsm_sbuf *sb, const char *s);
DSM_HIDDEN void dsm__sb_u(struct dsm_sbuf *sb, uint64_t v);
DSM_HIDDEN void dsm__sb_i(struct dsm_sbuf *sb, int64_t v);
DSM_HIDDEN void dsm__sb_hex(struct dsm_sbuf *sb, uint64_t v);     /* 0x... */
DSM_HIDDEN void dsm__sb_end(struct dsm_sbuf *sb);

/* The pure utilities of dsm_pure.h a runtime uses: the deterministic
 * allocator of page ranges (struct dsm_ranges, dsm__ranges_init,
 * dsm__ranges_alloc, dsm__ranges_free) and sizes with a K/M/G/T suffix
 * (dsm__parse_size). */

#endif /* DSM_RUNTIME_H */
