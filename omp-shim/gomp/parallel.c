/*
 * parallel.c - the libgomp entry points for parallel regions, the barrier
 * and cancellation: what GCC calls for `#pragma omp parallel` and
 * `#pragma omp barrier`.  Fork, join and the team barrier themselves are
 * team.c's (shim_parallel*, shim_team_barrier); the combined parallel loop
 * and parallel sections constructs start their regions from loop.c and
 * sync.c with a preset work-share.
 *
 * Threads: GOMP_parallel* on the thread that meets the region (rank 0's
 * main thread, or any thread inside a region for a nested one, which runs
 * as a team of one); the barrier and cancellation on OpenMP threads.
 */
#include "shim.h"
#include "gomp_abi.h"

/* ---- parallel ---- */

SHIM_EXPORT void GOMP_parallel(void (*fn)(void *), void *data, unsigned nthreads,
                               unsigned flags)
{
    (void)flags;
    shim_parallel(fn, data, nthreads, 0, NULL, 0);
}

SHIM_EXPORT void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned nthreads)
{
    shim_parallel_start(fn, data, nthreads, 0, NULL, 0);
}

SHIM_EXPORT void GOMP_parallel_end(void)
{
    shim_parallel_end();
}

/* ---- barrier and cancellation ---- */

SHIM_EXPORT void GOMP_barrier(void)
{
    shim_team_barrier();
}

SHIM_EXPORT bool GOMP_barrier_cancel(void)
{
    shim_team_barrier();
    return false;
}

/* Cancellation is off (omp_get_cancellation() is false), so these never
 * cancel, as in libgomp with OMP_CANCELLATION unset. */
SHIM_EXPORT bool GOMP_cancel(int which, bool do_cancel)
{
    (void)which;
    (void)do_cancel;
    return false;
}

SHIM_EXPORT bool GOMP_cancellation_point(int which)
{
    (void)which;
    return false;
}
