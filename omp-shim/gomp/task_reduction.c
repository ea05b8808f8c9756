/*
 * task_reduction.c - task reductions: taskgroup task_reduction, task and
 * taskloop in_reduction, taskloop reduction, and parallel with the task
 * reduction modifier (not yet the modifier on for, sections and scope).
 *
 * GCC describes a taskgroup's reduction variables with an array it owns
 * (GCC 12, omp-low.cc; libgomp's task.c reads the same words):
 *   d[0] variables, d[1] bytes of one thread's private copies, d[2] their
 *   alignment (the runtime replaces it with the copies' address), d[3] an
 *   allocator (-1: none), d[4] the next array of the same registration
 *   (0: the last; the runtime links the last one to the enclosing
 *   taskgroup's), d[5] the runtime's (here: 1 on the first array of a
 *   registration, 0 on the others), d[6] the end of the copies (set here);
 *   per variable i: d[7+3i] its address, d[8+3i] the offset of its copy in a
 *   thread's block, d[9+3i] the runtime's.
 * Each thread of the team owns one block of d[1] bytes; a copy is followed
 * by a flag that GCC's code in the task sets when it initialises the copy
 * (so the blocks start zeroed), and after the taskgroup ends GCC's code
 * merges the blocks of omp_get_num_threads() threads into the variables and
 * calls unregister.
 *
 * Across ranks: the blocks are in shared memory, one per team thread (the
 * team's thread numbers span ranks), so a task stolen by another rank
 * updates its thief thread's block; the task's completion report is a
 * release and the end of the taskgroup an acquire (task.c), so the merging
 * thread reads every block as the tasks left it.  The descriptor itself is
 * on the registering thread's stack, which is shared memory too: a stolen
 * task reads it where it runs (task.c sends the descriptor's address with
 * the task).
 *
 * Threads: OpenMP threads (the taskgroup's task, and tasks with
 * in_reduction).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "shim.h"
#include "gomp_abi.h"

/* Give each of nthreads threads its block of copies, zeroed, in shared
 * memory; link the registration's last array to outer. */
static void register_copies(uintptr_t *data, size_t nthreads, uintptr_t *outer)
{
    for (uintptr_t *d = data;; d = (uintptr_t *)d[4]) {
        size_t align = d[2] ? (size_t)d[2] : 8;
        size_t size = (size_t)d[1] * nthreads;
        if (align & (align - 1))
            dsm__fatal("task_reduction: alignment %zu of the private copies is not a "
                       "power of two (a compiler the shim does not know?)", align);
        unsigned char *copies = shim_dsm_malloc(size ? size : 1, align < 16 ? 16 : align);
        if (!copies)
            dsm__fatal("out of shared memory for the private copies of a task_reduction "
                       "(%zu bytes: %zu threads x %lu); raise DSM_HEAP_SIZE",
                       size, nthreads, (unsigned long)d[1]);
        memset(copies, 0, size);
        d[2] = (uintptr_t)copies;
        d[6] = (uintptr_t)(copies + size);
        d[5] = d == data;
        if (!d[4]) {
            d[4] = (uintptr_t)outer;
            break;
        }
    }
}

SHIM_EXPORT void GOMP_taskgroup_reduction_register(uintptr_t *data)
{
    /* omp_get_num_threads(): the team's threads, on every rank */
    register_copies(data, (size_t)shim_self()->size, shim_task_reductions());
    if (shim_task_set_reductions(data))
        dsm__fatal("internal error: a task_reduction outside a taskgroup");
}

SHIM_EXPORT void GOMP_taskgroup_reduction_unregister(uintptr_t *data)
{
    /* This registration's arrays: up to the enclosing taskgroup's first. */
    uintptr_t *d = data;
    do {
        shim_dsm_free((void *)d[2]);
        d[2] = 0;
        d = (uintptr_t *)d[4];
    } while (d && !d[5]);
}

/* The copy of variable j of descriptor d for thread id. */
static void *copy_of(const uintptr_t *d, size_t j, int id)
{
    return (void *)(d[2] + (uintptr_t)id * d[1] + d[8 + 3 * j]);
}

/* ptrs[0..cnt) are addresses of in_reduction list items: the original
 * variables, or (in a nested task) copies another task remapped; each
 * becomes this thread's copy.  For i < cntorig, ptrs[cnt + i] gets the
 * original variable's address. */
SHIM_EXPORT void GOMP_task_reduction_remap(size_t cnt, size_t cntorig, void **ptrs)
{
    uintptr_t *chain = shim_task_reductions();
    int id = shim_self()->num;                  /* omp_get_thread_num() */
    for (size_t i = 0; i < cnt; i++) {
        uintptr_t p = (uintptr_t)ptrs[i];
        const uintptr_t *hit = NULL;
        size_t j = 0;
        /* An original variable, innermost taskgroup first. */
        for (const uintptr_t *d = chain; d && !hit; d = (const uintptr_t *)d[4])
            for (j = 0; j < d[0]; j++)
                if (d[7 + 3 * j] == p) {
                    hit = d;
                    break;
                }
        /* A copy: the same variable's copy of this thread. */
        for (const uintptr_t *d = chain; d && !hit; d = (const uintptr_t *)d[4]) {
            if (p < d[2] || p >= d[6] || !d[1])
                continue;
            uintptr_t off = (p - d[2]) % d[1];
            for (j = 0; j < d[0]; j++)
                if (d[8 + 3 * j] == off) {
                    hit = d;
                    break;
                }
            if (!hit)
                break;
        }
        if (!hit)
            dsm__fatal("in_reduction: the list item at %p is not a variable of a "
                       "task_reduction (or taskloop reduction) of an enclosing taskgroup; "
                       "OpenMP requires one",
                       ptrs[i]);
        ptrs[i] = copy_of(hit, j, id);
        if (i < cntorig)
            ptrs[cnt + i] = (void *)hit[7 + 3 * j];
    }
}

/* parallel with reduction(task, ...): GCC passes the descriptor in the
 * first word of the region's data, expects the team's size back (it merges
 * that many blocks after the region, then calls unregister), and each
 * implicit task initialises its own copy at the region's start.  The
 * region's tasks find the descriptor through T.region_red (task.c), which
 * the fork carries to the other ranks (shim_ctl.task_red). */
SHIM_EXPORT unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data,
                                              unsigned num_threads, unsigned flags)
{
    (void)flags;
    if (shim_self()->level > 0 || shim_task_region_red())
        shim_unsupported("a parallel region with the task reduction modifier inside "
                         "another parallel region (GOMP_parallel_reductions)");
    uintptr_t *rdata;
    memcpy(&rdata, data, sizeof rdata);
    int n = shim_team_size_next(num_threads);
    register_copies(rdata, (size_t)n, shim_task_reductions());
    shim_task_set_region_red(rdata);
    shim_parallel(fn, data, num_threads, 0, NULL, 0);
    shim_task_set_region_red(NULL);
    return (unsigned)n;
}

