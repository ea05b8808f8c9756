/*
 * dsm.h - public interface of libdsm, a page-based software distributed
 * shared memory over MPI (SCASH-style: home-based, invalidate, multiple
 * writers, eager release consistency).
 *
 * Every MPI process ("node") sees one shared region at the same virtual
 * address.  Memory obtained from dsm_malloc() is coherent at the
 * synchronisation points dsm_barrier(), dsm_lock_release() ->
 * dsm_lock_acquire(): a data-race-free program sees sequential consistency.
 * See libdsm(7) for the memory model and every DSM_*
 * environment variable; each function has its own man page.
 *
 * Threads: dsm_init() and dsm_finalize() are called once per process by one
 * thread.  Any application thread may access shared memory and take locks.
 * dsm_barrier(), dsm_malloc*() and dsm_free() are collective over nodes:
 * exactly one thread per node calls them, while no other thread of that node
 * touches shared memory.
 */
#ifndef DSM_H
#define DSM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define DSM_PUBLIC __attribute__((visibility("default")))
#else
#define DSM_PUBLIC
#endif

#define DSM_VERSION_MAJOR 0
#define DSM_VERSION_MINOR 1

/* Error codes returned (negated) by the functions that return int. */
#define DSM_OK        0
#define DSM_EINVAL    1   /* bad argument or bad DSM_* value */
#define DSM_ENOMEM    2   /* out of shared memory or of map entries */
#define DSM_EMPI      3   /* MPI failed or has the wrong thread level */
#define DSM_ESTATE    4   /* called before dsm_init() or after dsm_finalize() */
#define DSM_EPROTO    5   /* malformed message or protocol violation */
#define DSM_ESYS      6   /* a system call failed */

/* Home placement of a collective allocation (dsm_malloc_home()). */
enum dsm_home_policy {
    DSM_HOME_DEFAULT = 0, /* the policy named by DSM_HOME (default: block) */
    DSM_HOME_BLOCK   = 1, /* pages split into dsm_node_count() contiguous blocks */
    DSM_HOME_CYCLIC  = 2, /* page i homed on node i % dsm_node_count() */
    DSM_HOME_NODE    = 3  /* every page homed on the node given as argument */
};

/* Start-up and shut-down. */
DSM_PUBLIC int    dsm_init(int *argc, char ***argv);
DSM_PUBLIC int    dsm_finalize(void);
DSM_PUBLIC int    dsm_initialized(void);

/* Who am I. */
DSM_PUBLIC int    dsm_node_id(void);
DSM_PUBLIC int    dsm_node_count(void);

/* Collective allocation in the shared region.  Every node calls it with the
 * same arguments and gets the same pointer.  Sizes are rounded up to whole
 * coherence pages (DSM_PAGE_SIZE), so two allocations never share a page. */
DSM_PUBLIC void  *dsm_malloc(size_t size);
DSM_PUBLIC void  *dsm_malloc_home(size_t size, enum dsm_home_policy policy, int node);
DSM_PUBLIC void   dsm_free(void *ptr);
DSM_PUBLIC int    dsm_is_shared(const void *addr);
DSM_PUBLIC int    dsm_home_of(const void *addr);
DSM_PUBLIC size_t dsm_page_size(void);

/* Synchronisation. */
DSM_PUBLIC void   dsm_barrier(void);
DSM_PUBLIC void   dsm_lock_acquire(int lock_id);
DSM_PUBLIC void   dsm_lock_release(int lock_id);
DSM_PUBLIC int    dsm_lock_count(void);
/* Make this node's writes visible at their homes and drop its copies of
 * pages homed elsewhere (dsm_flush(3)): flag-based synchronisation. */
DSM_PUBLIC void   dsm_flush(void);

/* Prefetch (dsm_prefetch(3)): ask for the pages [addr's page, +npages) that
 * have no valid copy here, in the background; returns at once.  0, or
 * -DSM_EINVAL if the range is not inside the shared region. */
DSM_PUBLIC int    dsm_prefetch(const void *addr, size_t npages);
/* Broadcast of read-shared data (collective, like dsm_barrier, which it
 * includes): afterwards every node holds a valid read-only copy of every page
 * of [addr, addr+len), sent from node root by one tree broadcast.  See
 * dsm_bcast(3). */
DSM_PUBLIC void   dsm_bcast(void *addr, size_t len, int root);

/* Time. */
DSM_PUBLIC double dsm_wtime(void);

/* Statistics.  Counters of this node since dsm_init() or the last
 * dsm_stats_reset(); times in seconds. */
struct dsm_stats {
    uint64_t read_faults;       /* faults on invalid pages (each fetches the page) */
    uint64_t write_faults;      /* faults on write-protected valid pages */
    uint64_t rmr_count;         /* remote memory reads (pages fetched on a fault) */
    double   rmr_time;          /* total time spent in remote memory reads */
    uint64_t pages_fetched;     /* pages received from their homes */
    uint64_t bytes_fetched;     /* payload bytes of those pages */
    uint64_t pages_served;      /* pages sent to other nodes as their home */
    uint64_t twins;             /* twins made */
    uint64_t diffs;             /* diffs sent to homes */
    uint64_t diff_bytes;        /* encoded bytes of those diffs */
    uint64_t diffs_applied;     /* diffs applied here as home */
    uint64_t invalidations;     /* copies dropped because of write notices */
    uint64_t barriers;          /* barriers, including those inside dsm_malloc,
                                   dsm_free and dsm_finalize */
    double   barrier_time;      /* total time inside dsm_barrier() */
    uint64_t barrier_msgs;      /* messages sent by this node during barriers */
    uint64_t lock_acquires;     /* dsm_lock_acquire() calls */
    double   lock_wait_time;    /* total time waiting for grants */
    uint64_t msgs_sent;         /* all messages sent to other nodes */
    uint64_t bytes_sent;        /* all payload and header bytes sent */
    uint64_t msgs_received;     /* all messages received from other nodes */
    uint64_t mprotect_calls;    /* mprotect() calls made */
    uint64_t atomics;           /* atomic operations on shared words (a runtime's) */
    uint64_t remote_atomics;    /* of those, sent to another node's home */
    double   atomic_time;       /* total time waiting for remote atomics */
    uint64_t pages_migrated;    /* pages whose home moved to their sole writer */
    /* Prefetch (dsm_prefetch(), DSM_PREFETCH=history) and page waits. */
    uint64_t prefetch_issued;   /* pages requested by prefetches */
    uint64_t prefetch_used;     /* of those, installed and then accessed here */
    uint64_t prefetch_wasted;   /* of those, dropped unused (invalidated first) */
    uint64_t prefetch_late;     /* faults that waited for a prefetch under way */
    uint64_t prefetch_aged;     /* DSM_PREFETCH=history: pages dropped from the
                                   history because the program stopped using them */
    double   page_wait_time;    /* time faulting threads waited for page data:
                                   their own fetches and fetches under way */
    uint64_t mpi_lock_waits;    /* DSM_COMM=direct: times an application thread
                                   found the MPI mutex taken */
    double   mpi_lock_wait_time; /* total time application threads waited for it */
    uint64_t flushes;           /* dsm_flush() calls */
    double   flush_time;        /* total time inside dsm_flush() */
    uint64_t flush_drops;       /* of those, flushes that dropped copies of pages
                                   that other nodes' flushes had released */
    uint64_t flush_updates;     /* copies of pages brought up to date in place by
                                   other nodes' flushes (the ordered release) */
    uint64_t held_requests;     /* page requests that waited at this home for an
                                   ordered flush to reach every copy */
    uint64_t locks_local;       /* of lock_acquires, locks this node manages that
                                   were free: granted without a message */
};

DSM_PUBLIC int    dsm_stats_get(struct dsm_stats *out);
DSM_PUBLIC void   dsm_stats_reset(void);
DSM_PUBLIC int    dsm_stats_print(FILE *out, int json);

#ifdef __cplusplus
}
#endif

#endif /* DSM_H */
