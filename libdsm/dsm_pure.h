/*
 * dsm_pure.h - the parts of libdsm that are pure logic: no MPI, no signals,
 * no global state.  They are built into libdsmpure.la so that the cmocka unit
 * tests (tests/unit) can exercise them in one process.  Grouped by file.
 */
#ifndef DSM_PURE_H
#define DSM_PURE_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include "dsm.h"

#if defined(__GNUC__)
#define DSM_HIDDEN __attribute__((visibility("hidden")))
#else
#define DSM_HIDDEN
#endif

/* ---- diff.c: twins and byte-exact diffs ---------------------------------
 *
 * A diff encodes the bytes of a page that differ from its twin.  The page is
 * cut into 8-byte chunks (DSM_DIFF_CHUNK); a run is a stretch of consecutive
 * chunks that each have at least one changed byte:
 *   struct dsm_diff_run { uint32 offset; uint32 count; }
 * offset is in bytes from the page start (a multiple of 8), and the low 31
 * bits of count are the number of chunks, at least 1.  count * 8 bytes of
 * the page's new contents follow.  If some byte of the run is unchanged,
 * DSM_DIFF_MASKED is set in count and one mask byte per chunk follows the
 * data: bit j of mask byte k says that byte j of chunk k changed; only
 * those bytes are written when the diff is applied (a zero mask byte, which
 * dsm__diff_make never writes, is accepted and writes nothing).  Runs are in increasing
 * offset order and do not overlap.  An empty diff (length 0) means
 * "unchanged".  So a diff carries exactly the bytes its writer changed, and
 * two nodes that write different bytes of one word in one interval merge
 * at the home (libdsm(7), Granularity).
 */
struct dsm_diff_run {
    uint32_t offset;
    uint32_t count;
};

#define DSM_DIFF_CHUNK 8u
#define DSM_DIFF_MASKED 0x80000000u

static inline uint32_t dsm__diff_run_chunks(const struct dsm_diff_run *r)
{
    return r->count & ~DSM_DIFF_MASKED;
}

/* Bytes of the encoded run r after its header: data, then the mask. */
static inline size_t dsm__diff_run_body(const struct dsm_diff_run *r)
{
    size_t c = dsm__diff_run_chunks(r);
    return c * DSM_DIFF_CHUNK + ((r->count & DSM_DIFF_MASKED) ? c : 0);
}

/* Worst-case encoded size of a diff of a page of page_size bytes. */
DSM_HIDDEN size_t dsm__diff_max_size(size_t page_size);

/* Encode cur against twin into out (capacity out_cap, which must be at least
 * dsm__diff_max_size(page_size)).  Returns the encoded length (0 when the
 * page is unchanged), or (size_t)-1 if out_cap was too small.  page_size must
 * be a multiple of DSM_DIFF_CHUNK. */
DSM_HIDDEN size_t dsm__diff_make(const void *twin, const void *cur,
                                 size_t page_size, void *out, size_t out_cap);

/* Check an encoded diff: offsets in range and multiples of 8, chunk counts
 * above 0, lengths consistent, increasing order.  0 or -DSM_EPROTO. */
DSM_HIDDEN int dsm__diff_check(size_t page_size, const void *diff, size_t len);

/* Apply an encoded diff to page.  Every run is validated first; a malformed
 * diff changes nothing and returns -DSM_EPROTO.  Returns the number of bytes
 * written (the masked bytes of masked runs, every byte of the others). */
DSM_HIDDEN long dsm__diff_apply(void *page, size_t page_size,
                                const void *diff, size_t len);

/* ---- page_state.c: the per-page state machine ---------------------------
 *
 * The fault handler, the barrier and the lock code ask this table what to do;
 * they carry out the returned actions (protection changes, fetch, twin).
 */
enum dsm_pstate {
    DSM_P_UNALLOC = 0,   /* not part of any allocation: a fault is a real segfault */
    DSM_P_INVALID,       /* no valid copy here: PROT_NONE.  At the page's home:
                            valid but not mapped yet (first touch maps it) */
    DSM_P_IN_FLIGHT,     /* a fetch is under way: PROT_NONE, faulting threads wait */
    DSM_P_READ_ONLY,     /* valid copy, writes trapped: PROT_READ */
    DSM_P_READ_WRITE,    /* valid copy, writable: PROT_READ|PROT_WRITE */
    DSM_P_PREFETCHED,    /* valid copy brought by a prefetch and not touched
                            yet: still PROT_NONE, so that the first access
                            faults, which only opens it (and counts it used) */
    DSM_P_NSTATES
};

enum dsm_pevent {
    DSM_EV_FAULT = 0,      /* an access trapped (read or write: not known yet) */
    DSM_EV_FETCHED,        /* the page arrived from its home */
    DSM_EV_INVALIDATE,     /* a write notice from another node */
    DSM_EV_DOWNGRADE,      /* release/barrier: our writes are flushed, trap again */
    DSM_EV_SERVE,          /* home: another node takes a copy */
    DSM_EV_UNTRACK,        /* home: no other node holds a copy any more */
    DSM_EV_PREFETCH,       /* the communication thread considers prefetching */
    DSM_EV_PREFETCHED,     /* a prefetched page arrived from its home */
    DSM_EV_NEVENTS
};

/* Actions, or-ed together in dsm_ptrans.actions. */
#define DSM_ACT_FETCH      0x01u  /* request the page from its home */
#define DSM_ACT_TWIN       0x02u  /* copy the page into its twin (non-home) */
#define DSM_ACT_MARK       0x04u  /* record the page as written in this interval */
#define DSM_ACT_WAIT       0x08u  /* wait for the fetch under way */
#define DSM_ACT_PROTECT    0x10u  /* set the protection of the new state */
#define DSM_ACT_DROP_TWIN  0x20u  /* the twin is no longer needed */
#define DSM_ACT_SEGV       0x40u  /* not ours: pass the fault on */
#define DSM_ACT_ERROR      0x80u  /* impossible in this state: protocol bug */

struct dsm_ptrans {
    enum dsm_pstate next;
    unsigned actions;
};

DSM_HIDDEN struct dsm_ptrans dsm__page_transition(enum dsm_pstate s,
                                                  enum dsm_pevent ev,
                                                  int is_home);
DSM_HIDDEN int dsm__page_prot(enum dsm_pstate s);  /* PROT_* of a state */
DSM_HIDDEN const char *dsm__page_state_name(enum dsm_pstate s);

/* ---- msgqueue.c: the multi-producer single-consumer send queue ----------
 *
 * Compute threads push, the communication thread takes everything at once
 * in FIFO order.  Intrusive: the element embeds struct dsm_qnode.
 */
struct dsm_qnode {
    struct dsm_qnode *next;
};

struct dsm_mqueue {
    pthread_mutex_t lock;
    struct dsm_qnode *head;
    struct dsm_qnode *tail;
    unsigned long pushed;
};

DSM_HIDDEN void dsm__mq_init(struct dsm_mqueue *q);
DSM_HIDDEN void dsm__mq_destroy(struct dsm_mqueue *q);
/* Returns 1 if the queue was empty before the push (the consumer may sleep). */
DSM_HIDDEN int dsm__mq_push(struct dsm_mqueue *q, struct dsm_qnode *n);
/* Detaches the whole queue; returns its first node (FIFO order) or NULL. */
DSM_HIDDEN struct dsm_qnode *dsm__mq_take_all(struct dsm_mqueue *q);
DSM_HIDDEN int dsm__mq_empty(struct dsm_mqueue *q);

/* ---- config.c: every DSM_* environment variable, parsed in one place ---- */
enum dsm_comm_kind { DSM_COMM_QUEUE = 0, DSM_COMM_DIRECT = 1, DSM_COMM_MULTIPLE = 2,
                     DSM_COMM_RMA = 3 };
enum dsm_poll_kind { DSM_POLL_SPIN = 0, DSM_POLL_ADAPTIVE = 1 };
enum dsm_stats_kind { DSM_STATS_OFF = 0, DSM_STATS_TEXT = 1, DSM_STATS_JSON = 2 };
/* DSM_PREFETCH: none; history after barriers and lock acquires; history
 * after barriers only (prefetch.c). */
enum dsm_prefetch_kind {
    DSM_PREFETCH_NONE = 0, DSM_PREFETCH_HISTORY = 1, DSM_PREFETCH_BARRIERS = 2
};

static inline const char *dsm__prefetch_name(enum dsm_prefetch_kind k)
{
    return k == DSM_PREFETCH_HISTORY ? "history" :
           k == DSM_PREFETCH_BARRIERS ? "barriers" : "none";
}
enum dsm_barrier_shape { DSM_BARRIER_AUTO = 0, DSM_BARRIER_TREE = 1, DSM_BARRIER_FLAT = 2 };

struct dsm_config {
    size_t   heap_size;           /* DSM_HEAP_SIZE */
    size_t   page_size;           /* DSM_PAGE_SIZE */
    size_t   page_chunk;          /* DSM_PAGE_CHUNK: bytes per MPI message of a page */
    uintptr_t base;               /* DSM_BASE */
    enum dsm_comm_kind comm;      /* DSM_COMM */
    enum dsm_poll_kind poll;      /* DSM_POLL */
    enum dsm_stats_kind stats;    /* DSM_STATS */
    enum dsm_home_policy home;    /* DSM_HOME: block or cyclic */
    int      max_locks;           /* DSM_MAX_LOCKS */
    unsigned spin_us;             /* DSM_SPIN_US: adaptive polling spin phase */
    int      spin_us_set;         /* DSM_SPIN_US was given (else dsm__spin_us_for) */
    unsigned comm_spin_us;        /* the communication thread's (dsm__comm_spin_us_for) */
    /* Application threads per rank: 1, or what a runtime on top of libdsm
     * said before dsm_init (dsm_rt_preinit, set by init.c; not a variable). */
    unsigned threads_per_rank;
    int      check_races;         /* DSM_CHECK=races */
    int      barrier_noack;       /* DSM_BARRIER_DIFFS=unacked (barrier.c) */
    int      barrier_shape;       /* DSM_BARRIER: DSM_BARRIER_AUTO, _TREE or _FLAT */
    int      heap_size_set;       /* DSM_HEAP_SIZE was given */
    enum dsm_prefetch_kind prefetch;  /* DSM_PREFETCH */
    int      prefetch_set;        /* DSM_PREFETCH was given */
    const char *trace_prefix;     /* DSM_TRACE: event log PREFIX.RANK, or NULL */
    /* watchdog.c: seconds a request may wait for its reply (page, diff
     * acks, atomic, lock release ack), and a barrier or lock acquire for
     * the other nodes; 0 is no limit. */
    unsigned timeout_s;           /* DSM_TIMEOUT */
    unsigned sync_timeout_s;      /* DSM_SYNC_TIMEOUT */
};

#define DSM_DEFAULT_HEAP_SIZE  ((size_t)1 << 30)            /* 1 GiB */
#define DSM_DEFAULT_PAGE_SIZE  ((size_t)16384)              /* SCASH's 16 KiB */
/* A page moves as messages of at most this many bytes: MPICH over UCX sends
 * up to 8 KiB at once through shared memory and larger messages by
 * rendezvous, which doubles a 16 KiB page's round trip (docs/RESULTS.md). */
#define DSM_DEFAULT_PAGE_CHUNK ((size_t)8192)
#define DSM_MAX_PAGE_CHUNKS    16   /* messages per page, at most */
#define DSM_DEFAULT_BASE       ((uintptr_t)0x200000000000)  /* 32 TiB */
#define DSM_DEFAULT_MAX_LOCKS  4096
#define DSM_DEFAULT_SPIN_US    50
#define DSM_DEFAULT_TIMEOUT    30                           /* seconds */
#define DSM_MAX_NODES          64   /* copysets are one 64-bit word per page */
#define DSM_BARRIER_CARRY_MAX  1024 /* bytes node 0 may send in a release */

/* The barrier tree (barrier_tree.c): a binomial tree over the nodes rooted
 * at 0.  Node r's parent clears r's lowest set bit; its children are r + 2^k
 * for every 2^k below r's lowest set bit (every 2^k for node 0) that is a
 * node.  Node r's subtree holds ranks r .. r + 2^lowbit - 1, so r is the
 * lowest rank of its subtree; the depth is ceil(log2 nodes).  flat (where
 * ranks outnumber CPUs, DSM_BARRIER): every other node is node 0's child. */
static inline int dsm__tree_parent(int r, int flat)
{
    return flat ? 0 : r & (r - 1);
}

/* The limit below which r's children lie: r's lowest set bit (nodes for
 * node 0). */
static inline int dsm__tree_span(int r, int nodes)
{
    return r ? (r & -r) : nodes;
}

/* Number of children of r, and the k-th of them, largest subtree first
 * (k = 0 is r + the largest power of two below the span that is a node). */
static inline int dsm__tree_nchildren(int r, int nodes, int flat)
{
    int n = 0;
    if (flat)
        return r ? 0 : nodes - 1;
    for (int d = 1; d < dsm__tree_span(r, nodes) && r + d < nodes; d <<= 1)
        n++;
    return n;
}

static inline int dsm__tree_child(int r, int nodes, int flat, int k)
{
    if (flat)
        return 1 + k;
    return r + (1 << (dsm__tree_nchildren(r, nodes, 0) - 1 - k));
}

/* How many messages carry one page: page / chunk (both powers of two), at
 * least 1 and at most DSM_MAX_PAGE_CHUNKS; each carries page / that many
 * bytes. */
static inline unsigned dsm__page_chunks(size_t page, size_t chunk)
{
    size_t n = page > chunk ? page / chunk : 1;
    return n > DSM_MAX_PAGE_CHUNKS ? DSM_MAX_PAGE_CHUNKS : (unsigned)n;
}

/* Fill cfg from envp (an environ-style NULL-terminated array; NULL means no
 * variables), with os_page the OS page size.  Every variable whose name starts
 * with "DSM_" must be known and well-formed, or be one of rt_names (NULL or
 * NULL-terminated: the names a runtime on top of libdsm parses itself, which
 * are passed over here; rt_who names that runtime in the message).  Returns
 * 0, or -DSM_EINVAL with a complete message (what is wrong and what to do)
 * in err. */
DSM_HIDDEN int dsm__config_parse(struct dsm_config *cfg, char *const *envp,
                                 size_t os_page, const char *const *rt_names,
                                 const char *rt_who, char *err, size_t errlen);

/* Where a node's threads run: its host's ranks (MPI_COMM_TYPE_SHARED), the
 * host's online CPUs and the CPUs this process may run on. */
struct dsm_host {
    unsigned ranks, online_cpus, my_cpus;
};
/* Whether the host is full: each rank runs cfg->threads_per_rank application
 * threads and a communication thread, and there are more such threads than
 * CPUs (on the host, or for this process where it is bound to fewer).  The
 * statistics report says so: there the communication thread's spin
 * (DSM_SPIN_US) takes a core from a compute thread (libdsm(7), POLLING). */
DSM_HIDDEN int dsm__host_full(const struct dsm_config *cfg, const struct dsm_host *h);
/* The spin (DSM_SPIN_US) a node uses: the variable's value where it was
 * given; otherwise DSM_DEFAULT_SPIN_US, or 0 where the host's ranks
 * outnumber its CPUs: there every spin takes a core from another rank's
 * thread that computes or must answer (libdsm(7), POLLING; measured with
 * 3 and 4 ranks on 2 CPUs.  2 ranks of 2 application threads each on 2 CPUs
 * were no faster without the spin, so threads do not count). */
DSM_HIDDEN unsigned dsm__spin_us_for(const struct dsm_config *cfg, const struct dsm_host *h);
/* The spin of the communication thread after an event: DSM_SPIN_US where
 * it was given; otherwise the node's spin (dsm__spin_us_for), or 0 where
 * the host is full (dsm__host_full).  There the spinning thread keeps a
 * CPU from a compute thread or from the thread that must answer: with 2
 * ranks on 2 CPUs a read from a computing home took about 200 us more than
 * from a waiting one with the spin and about 100 us more without it, and
 * NPB BT class W ran 10-13% faster (RESULTS.md, 2026-11-26).  The waiting
 * threads' own spin stays: it shortens a read from a waiting home. */
DSM_HIDDEN unsigned dsm__comm_spin_us_for(const struct dsm_config *cfg,
                                          const struct dsm_host *h);
/* Parse a size with an optional K/M/G/T suffix (binary).  0 or -DSM_EINVAL. */
DSM_HIDDEN int dsm__parse_size(const char *s, size_t *out);
/* The value v of the setting of variable var (a DSM_* name) written as the
 * variable takes it, for the message of ranks that disagree (init.c): a
 * choice by its name (DSM_COMM=queue), a size with its largest exact suffix
 * (16K), DSM_BASE in hexadecimal, anything else in decimal.  Returns buf. */
DSM_HIDDEN const char *dsm__config_value_text(const char *var, uint64_t v,
                                              char *buf, size_t len);

/* ---- range.c: the deterministic first-fit allocator of page ranges ------
 *
 * Every node runs the same sequence of collective allocations through it and
 * so computes the same offsets without talking.  Units are coherence pages.
 */
struct dsm_range { size_t start, count; };

struct dsm_ranges {
    struct dsm_range *free;      /* sorted, coalesced free ranges */
    size_t nfree, capfree;
    struct dsm_range *used;      /* sorted live allocations */
    size_t nused, capused;
    size_t total;                /* pages managed */
};

DSM_HIDDEN int  dsm__ranges_init(struct dsm_ranges *r, size_t total_pages);
DSM_HIDDEN void dsm__ranges_destroy(struct dsm_ranges *r);
/* First fit.  Returns 0 and *start, or -DSM_ENOMEM. */
DSM_HIDDEN int  dsm__ranges_alloc(struct dsm_ranges *r, size_t count, size_t *start);
/* Frees the allocation that starts at start; *count gets its size.
 * -DSM_EINVAL if no allocation starts there. */
DSM_HIDDEN int  dsm__ranges_free(struct dsm_ranges *r, size_t start, size_t *count);
DSM_HIDDEN size_t dsm__ranges_largest_free(const struct dsm_ranges *r);
DSM_HIDDEN size_t dsm__ranges_free_total(const struct dsm_ranges *r);

#endif /* DSM_PURE_H */
