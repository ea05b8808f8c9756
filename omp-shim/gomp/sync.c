/*
 * sync.c - the libgomp entry points for critical, atomic, single,
 * sections, the error directive and the allocate directive
 * (parallel regions, the barrier and cancellation are parallel.c's).
 *
 * critical and the atomic fallback are DSM locks (a release makes the
 * holder's writes visible to the next holder); a named critical gets its own
 * lock id, kept in the pointer-sized variable GCC gives each name (which is
 * in the executable's data, hence shared).  single takes a work-share
 * counter: the first grab wins.  Tasks are task.c's.
 *
 * Threads: OpenMP threads.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "gomp_abi.h"

/* ---- critical and atomic ---- */

/* Keys of the process-local mutexes used outside the run (local_sync.c). */
static const char critical_key, atomic_key;

SHIM_EXPORT void GOMP_critical_start(void)
{
    if (!shim.active)
        shim_local_lock(&critical_key);
    else
        dsm_lock_acquire(SHIM_LOCK_CRITICAL);
}

SHIM_EXPORT void GOMP_critical_end(void)
{
    if (!shim.active)
        shim_local_unlock(&critical_key);
    else
        dsm_lock_release(SHIM_LOCK_CRITICAL);
}

SHIM_EXPORT void GOMP_atomic_start(void)
{
    if (!shim.active)
        shim_local_lock(&atomic_key);
    else
        dsm_lock_acquire(SHIM_LOCK_ATOMIC);
}

SHIM_EXPORT void GOMP_atomic_end(void)
{
    if (!shim.active)
        shim_local_unlock(&atomic_key);
    else
        dsm_lock_release(SHIM_LOCK_ATOMIC);
}

static int named_lock(void **pptr)
{
    if (!dsm_rt_in_region(pptr)) {
        /* Not shared (a library's critical): the same address on every
         * rank picks the same one of a few hashed locks. */
        uintptr_t h = (uintptr_t)pptr;
        h ^= h >> 17;
        h *= 0x9e3779b97f4a7c15ULL;
        return SHIM_LOCK_HASHED + (int)((h >> 32) % 256);
    }
    /* The id lives in the name's variable, set once by a remote CAS. */
    uint64_t v = dsm__atomic(pptr, DSM_AOP_LOAD, 8, 0, 0, 0, 0, NULL);
    if (v)
        return (int)(v - 1);
    uint64_t id = (uint64_t)shim_new_lock_id(), ok = 0;
    uint64_t old = dsm__atomic(pptr, DSM_AOP_CAS, 8, id + 1, 0, 0, 0, &ok);
    return ok ? (int)id : (int)(old - 1);
}

/* Per rank, remember the ids already looked up. */
#define NAMED_CACHE 64
static struct { void **key; int id; } named_cache[NAMED_CACHE];
static pthread_mutex_t named_mu = PTHREAD_MUTEX_INITIALIZER;

static int named_id(void **pptr)
{
    size_t h = ((uintptr_t)pptr >> 3) % NAMED_CACHE;
    pthread_mutex_lock(&named_mu);
    if (named_cache[h].key == pptr) {
        int id = named_cache[h].id;
        pthread_mutex_unlock(&named_mu);
        return id;
    }
    pthread_mutex_unlock(&named_mu);
    int id = named_lock(pptr);
    pthread_mutex_lock(&named_mu);
    named_cache[h].key = pptr;
    named_cache[h].id = id;
    pthread_mutex_unlock(&named_mu);
    return id;
}

SHIM_EXPORT void GOMP_critical_name_start(void **pptr)
{
    if (!shim.active)
        shim_local_lock(pptr);
    else
        dsm_lock_acquire(named_id(pptr));
}

SHIM_EXPORT void GOMP_critical_name_end(void **pptr)
{
    if (!shim.active)
        shim_local_unlock(pptr);
    else
        dsm_lock_release(named_id(pptr));
}

/* ---- single ---- */

static bool single_grab(struct shim_thr *t)
{
    uint64_t sz;
    shim_ws_begin(t);
    shim_ws_grab(t, 1, 1, 0, &sz);
    return sz != 0;
}

SHIM_EXPORT bool GOMP_single_start(void)
{
    struct shim_thr *t = shim_self();
    if (t->size == 1)
        return true;
    return single_grab(t);
}

SHIM_EXPORT void *GOMP_single_copy_start(void)
{
    struct shim_thr *t = shim_self();
    if (t->size == 1 || single_grab(t))
        return NULL;
    shim_team_barrier();            /* the winner's GOMP_single_copy_end */
    return shim.ctl->copy_ptr;
}

SHIM_EXPORT void GOMP_single_copy_end(void *data)
{
    struct shim_thr *t = shim_self();
    if (t->size == 1)
        return;
    shim.ctl->copy_ptr = data;
    shim_team_barrier();
}

/* ---- sections: a dynamic loop over 1..count, one at a time ---- */

static unsigned sections_next(void)
{
    uint64_t a, b;
    struct shim_thr *t = shim_self();
    if (!shim_loop_next_iter(t, &a, &b))
        return 0;
    return (unsigned)a + 1;
}

SHIM_EXPORT unsigned GOMP_sections_start(unsigned count)
{
    struct shim_thr *t = shim_self();
    struct shim_loop_desc d;
    memset(&d, 0, sizeof d);
    d.sched = SHIM_SCHED_DYNAMIC;
    d.up = 1;
    d.lincr = 1;
    d.n = count;
    d.chunk = 1;
    shim_ws_begin(t);
    shim_loop_init(t, &d, 0);
    return sections_next();
}

SHIM_EXPORT unsigned GOMP_sections2_start(unsigned count, uintptr_t *reductions, void **mem)
{
    if (reductions || mem)
        shim_unsupported("sections with task reductions (GOMP_sections2_start)");
    return GOMP_sections_start(count);
}

SHIM_EXPORT unsigned GOMP_sections_next(void)
{
    return sections_next();
}

SHIM_EXPORT void GOMP_sections_end(void)
{
    shim_team_barrier();
}

SHIM_EXPORT void GOMP_sections_end_nowait(void)
{
}

SHIM_EXPORT bool GOMP_sections_end_cancel(void)
{
    shim_team_barrier();
    return false;
}

SHIM_EXPORT void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned nthreads,
                                        unsigned count, unsigned flags)
{
    (void)flags;
    shim_parallel(fn, data, nthreads, 2, NULL, count);
}

SHIM_EXPORT void GOMP_parallel_sections_start(void (*fn)(void *), void *data,
                                              unsigned nthreads, unsigned count)
{
    shim_parallel_start(fn, data, nthreads, 2, NULL, count);
}

/* ---- the error directive and allocate clause ---- */

SHIM_EXPORT void GOMP_warning(const char *msg, size_t len)
{
    if (msg)
        fprintf(stderr, "libgomp: error directive encountered: %.*s\n", (int)len, msg);
    else
        fprintf(stderr, "libgomp: error directive encountered\n");
}

SHIM_EXPORT void GOMP_error(const char *msg, size_t len)
{
    if (msg)
        dsm__fatal("fatal error: error directive encountered: %.*s", (int)len, msg);
    dsm__fatal("fatal error: error directive encountered");
}

SHIM_EXPORT void *GOMP_alloc(size_t alignment, size_t size, uintptr_t allocator)
{
    (void)allocator;
    return shim_dsm_malloc(size, alignment);
}

SHIM_EXPORT void GOMP_free(void *ptr, uintptr_t allocator)
{
    (void)allocator;
    shim_dsm_free(ptr);
}
