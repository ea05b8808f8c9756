/*
 * api.c - the omp_* query and setting functions.
 *
 * The internal control variables live per rank; rank 0's (where main runs)
 * are the program's, and a fork hands the run-sched-var to the other ranks.
 * Nested parallelism is not supported (max-active-levels is 1: inner
 * regions get one thread), dynamic adjustment is off, and there are no
 * devices, places or cancellation, as libgomp reports them on a machine
 * without offloading and with those features unset.
 *
 * Threads: any.
 */
#include <string.h>
#include <time.h>

#include "shim.h"

SHIM_EXPORT int omp_get_thread_num(void) { return shim_self()->num; }
SHIM_EXPORT int omp_get_num_threads(void) { return shim_self()->size; }
SHIM_EXPORT int omp_get_max_threads(void)
{
    struct shim_thr *t = shim_self();
    if (t->level > 0 && t->icv_nthreads)
        return t->icv_nthreads;
    return shim.icv_nthreads ? shim.icv_nthreads : 1;
}

/* Outside any region: the program's value (rank 0's, handed to the team at
 * each fork).  Inside one: this thread's own, until the region ends. */
SHIM_EXPORT void omp_set_num_threads(int n)
{
    struct shim_thr *t = shim_self();
    if (n <= 0)
        return;
    if (t->level > 0)
        t->icv_nthreads = n;
    else
        shim.icv_nthreads = n;
}

SHIM_EXPORT int omp_get_num_procs(void)
{
    return shim.active ? shim.nodes * shim.tpr : 1;
}

SHIM_EXPORT int omp_in_parallel(void) { return shim_self()->active_level > 0; }
SHIM_EXPORT void omp_set_dynamic(int v) { (void)v; }
SHIM_EXPORT int omp_get_dynamic(void) { return 0; }
SHIM_EXPORT void omp_set_nested(int v) { (void)v; }
SHIM_EXPORT int omp_get_nested(void) { return 0; }
SHIM_EXPORT int omp_get_level(void) { return shim_self()->level; }
SHIM_EXPORT int omp_get_active_level(void) { return shim_self()->active_level; }
SHIM_EXPORT int omp_get_max_active_levels(void) { return shim.icv_max_levels; }
SHIM_EXPORT void omp_set_max_active_levels(int n) { (void)n; }
SHIM_EXPORT int omp_get_supported_active_levels(void) { return 1; }
SHIM_EXPORT int omp_get_thread_limit(void) { return SHIM_MAX_LOCAL * (shim.nodes ? shim.nodes : 1); }

SHIM_EXPORT int omp_get_ancestor_thread_num(int level)
{
    struct shim_thr *t = shim_self();
    int num, size;
    if (level == t->level)
        return t->num;
    if (level == 0)
        return 0;
    if (level > 0 && level < t->level && shim_outer(level, &num, &size) == 0)
        return num;
    return -1;
}

SHIM_EXPORT int omp_get_team_size(int level)
{
    struct shim_thr *t = shim_self();
    int num, size;
    if (level == t->level)
        return t->size;
    if (level == 0)
        return 1;
    if (level > 0 && level < t->level && shim_outer(level, &num, &size) == 0)
        return size;
    return -1;
}

/* As libgomp: the kind is kept as given (with the monotonic modifier);
 * auto keeps the chunk size it had. */
SHIM_EXPORT void omp_set_schedule(int kind, int chunk)
{
    switch (kind & 0x7fffffff) {
    case SHIM_SCHED_STATIC:
        shim.icv_chunk = chunk < 1 ? 0 : (uint64_t)chunk;
        break;
    case SHIM_SCHED_DYNAMIC:
    case SHIM_SCHED_GUIDED:
        shim.icv_chunk = chunk < 1 ? 1 : (uint64_t)chunk;
        break;
    case SHIM_SCHED_AUTO:
        break;
    default:
        return;
    }
    shim.icv_sched = kind;
}

SHIM_EXPORT void omp_get_schedule(int *kind, int *chunk)
{
    *kind = shim.icv_sched;
    *chunk = (int)shim.icv_chunk;
}

SHIM_EXPORT double omp_get_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

SHIM_EXPORT double omp_get_wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

SHIM_EXPORT int omp_in_final(void) { return shim_task_in_final(); }
SHIM_EXPORT int omp_get_cancellation(void) { return 0; }
SHIM_EXPORT int omp_get_proc_bind(void) { return 0; }
SHIM_EXPORT int omp_get_num_places(void) { return 0; }
SHIM_EXPORT int omp_get_place_num(void) { return -1; }
SHIM_EXPORT int omp_get_partition_num_places(void) { return 0; }
SHIM_EXPORT int omp_get_place_num_procs(int p) { (void)p; return 0; }
SHIM_EXPORT void omp_get_place_proc_ids(int p, int *ids) { (void)p; (void)ids; }
SHIM_EXPORT void omp_get_partition_place_nums(int *p) { (void)p; }
SHIM_EXPORT int omp_get_default_device(void) { return 0; }
SHIM_EXPORT void omp_set_default_device(int d) { (void)d; }
SHIM_EXPORT int omp_get_num_devices(void) { return 0; }
SHIM_EXPORT int omp_get_device_num(void) { return 0; }
SHIM_EXPORT int omp_get_initial_device(void) { return 0; }
SHIM_EXPORT int omp_is_initial_device(void) { return 1; }
SHIM_EXPORT int omp_get_num_teams(void) { return 1; }
SHIM_EXPORT int omp_get_team_num(void) { return 0; }
SHIM_EXPORT int omp_get_max_task_priority(void) { return 0; }
SHIM_EXPORT int omp_get_max_teams(void) { return 1; }
SHIM_EXPORT void omp_set_num_teams(int n) { (void)n; }
SHIM_EXPORT int omp_get_teams_thread_limit(void) { return omp_get_thread_limit(); }
SHIM_EXPORT void omp_set_teams_thread_limit(int n) { (void)n; }

/* Memory allocators: every allocator gives memory from the DSM heap. */
SHIM_EXPORT void *omp_alloc(size_t size, uintptr_t allocator)
{
    (void)allocator;
    return shim_dsm_malloc(size, 16);
}

SHIM_EXPORT void *omp_aligned_alloc(size_t align, size_t size, uintptr_t allocator)
{
    (void)allocator;
    return shim_dsm_malloc(size, align);
}

SHIM_EXPORT void *omp_calloc(size_t n, size_t size, uintptr_t allocator)
{
    (void)allocator;
    if (size && n > (size_t)-1 / size)
        return NULL;
    void *p = shim_dsm_malloc(n * size, 16);
    if (p)
        memset(p, 0, n * size);
    return p;
}

SHIM_EXPORT void *omp_aligned_calloc(size_t align, size_t n, size_t size, uintptr_t allocator)
{
    (void)allocator;
    if (size && n > (size_t)-1 / size)
        return NULL;
    void *p = shim_dsm_malloc(n * size, align);
    if (p)
        memset(p, 0, n * size);
    return p;
}

SHIM_EXPORT void omp_free(void *p, uintptr_t allocator)
{
    (void)allocator;
    shim_dsm_free(p);
}

SHIM_EXPORT uintptr_t omp_get_default_allocator(void) { return 1; }   /* omp_default_mem_alloc */
SHIM_EXPORT void omp_set_default_allocator(uintptr_t a) { (void)a; }
