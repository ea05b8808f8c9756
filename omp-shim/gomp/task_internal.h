/*
 * task_internal.h - the task runtime's records, shared by task.c (queues,
 * stealing, waits), task_deps.c (depend clauses) and taskloop.c.
 *
 * Threads: every function declared here is called with T.mu (task.c) held,
 * except shim_task_create.
 */
#ifndef SHIM_TASK_INTERNAL_H
#define SHIM_TASK_INTERNAL_H

#include <stdint.h>

#include "shim.h"

/* libgomp's flags of GOMP_task and GOMP_taskloop (gomp-constants.h). */
enum {
    TF_UNTIED = 1 << 0, TF_FINAL = 1 << 1, TF_MERGEABLE = 1 << 2, TF_DEPEND = 1 << 3,
    TF_PRIORITY = 1 << 4, TF_UP = 1 << 8, TF_GRAINSIZE = 1 << 9, TF_IF = 1 << 10,
    TF_NOGROUP = 1 << 11, TF_REDUCTION = 1 << 12, TF_DETACH = 1 << 13, TF_STRICT = 1 << 14
};

/* Kinds of a dependence (the encoding of depend objects, omp_depend_t). */
enum { DEP_IN = 1, DEP_OUT = 2, DEP_INOUT = 3, DEP_MUTEXINOUTSET = 4, DEP_INOUTSET = 5 };

struct task;

struct task_group {
    struct task_group *prev;    /* the enclosing taskgroup of the same task */
    long count;                 /* its tasks and their descendants not complete */
    uintptr_t *red;             /* its task reductions (task_reduction.c), else
                                   the enclosing group's */
};

/* The last writer and the readers since, of one address, among the children
 * of one task. */
struct dep_entry {
    void *addr;
    struct task *last_out;
    struct task **readers;
    int nreaders, cap;
    struct dep_entry *next;
};
#define DEP_BUCKETS 64
struct dep_table { struct dep_entry *b[DEP_BUCKETS]; };

/* A task's depend addresses that start blocks of the shared heap (a tile
 * each, say) are prefetched, up to PF_BLOCK_MAX bytes each, before it runs
 * where another rank may have written them: one request per home instead of
 * a fault per page. */
#define PF_DEPS 4
#define PF_BLOCK_MAX (256 * 1024)
struct pf_block { uint64_t addr; uint32_t bytes, pad; };

/* The heap blocks a task's dependences name (prefetched before it runs)
 * and its affinity: shim_deps_blocks. */
struct task_blocks {
    struct pf_block pf[PF_DEPS];
    int npf;
    int aff1;                   /* 1 + the rank it should run on, 0: any */
};

/* ST_HELD: undeferred, its creator waits for its predecessors and runs it
 * (a predecessor's completion must not queue it). */
enum { ST_WAITING, ST_READY, ST_RUNNING, ST_DONE, ST_HELD };

struct task {
    void (*fn)(void *);
    void *arg;                  /* the argument block, in shared memory */
    void *raw;                  /* its allocation (NULL: not ours to free) */
    struct task *parent;        /* the creating task (NULL: foreign, or implicit) */
    struct task_group *group;   /* the taskgroup it counts in (NULL: none) */
    struct task_group *groups;  /* its own taskgroups, innermost first */
    struct dep_table *deps;     /* dependences among its children */
    struct task **succ;         /* tasks waiting for this one */
    int nsucc, capsucc;
    long kids;                  /* children not complete */
    int npred;                  /* predecessors not complete */
    int refs;
    int state;
    int priority;
    unsigned char final;        /* its children are included (run at once) */
    unsigned char implicit;     /* a thread's implicit task (never freed) */
    unsigned char onstack;      /* run_now's record: gone when it returns */
    unsigned char foreign;      /* stolen from rank owner */
    unsigned char lent;         /* running on another rank */
    unsigned char body_done;
    unsigned char detach_pending; /* detach: omp_fulfill_event not yet called */
    unsigned char ran_remote;   /* its body ran on another rank (lent) */
    unsigned char fulfilled_here; /* detach: omp_fulfill_event called on this rank */
    uint64_t needs;             /* T.wseq its thief must see published (see T) */
    uint64_t qseq;              /* queued: needs; foreign: UINT64_MAX */
    struct task_blocks blk;     /* blocks its dependences name, its affinity */
    double qtime;               /* when it was queued (aff1 only) */
    int owner;                  /* foreign: the owning rank and its record */
    uint64_t owner_ref;
    struct task_group proxy;    /* foreign with a taskgroup: its descendants */
    struct task *next, *prev;   /* the ready queue */
    struct task *lnext, *lprev; /* lent: T.lent_head's list */
};

/* ---- task.c ---- */
/* calloc and realloc that stop the job when private memory runs out. */
SHIM_HIDDEN void *shim_task_xcalloc(size_t n, size_t sz);
SHIM_HIDDEN void *shim_task_xrealloc(void *p, size_t sz);
/* Drop a reference to t; the last one frees it (and drops its parent's). */
SHIM_HIDDEN void shim_task_unref(struct task *t);
/* GOMP_task's work (T.mu not held): a child of the current task, deferred
 * or not; bounds (nb longs) are written at the start of its argument block
 * (a taskloop's range). */
SHIM_HIDDEN void shim_task_create(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                                  long arg_size, long arg_align, bool deferred, unsigned flags,
                                  void **depend, int priority, void **detach, long *bounds,
                                  int nb);

/* ---- task_deps.c ---- */
/* Order t after its earlier siblings as GCC's depend array says (T.mu). */
SHIM_HIDDEN void shim_deps_of(struct task *parent, struct task *t, void **depend);
SHIM_HIDDEN void shim_dep_table_free(struct dep_table *d);
/* The heap blocks a depend array names (for the prefetch) and, with
 * aff_ranks > 1, the affinity to the home of a block it writes, if that rank
 * is below aff_ranks.  Reads the blocks' headers (shared memory: maybe a
 * page fetch), so without T.mu. */
SHIM_HIDDEN void shim_deps_blocks(void **depend, int aff_ranks, struct task_blocks *b);

#endif
