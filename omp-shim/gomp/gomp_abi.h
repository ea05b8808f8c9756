/*
 * gomp_abi.h - the compiler-facing ABI the shim implements: every GOMP_*
 * entry point it defines, with GCC's signatures (GCC 12's libgomp_g.h),
 * grouped by construct, each group with the file that defines it.
 *
 * The files that define these include this header, so the compiler checks
 * each definition against GCC's declaration (a wrong argument type would
 * otherwise link, and read garbage); and from here on they are compiled
 * with -Wmissing-prototypes, so that an entry point defined without a
 * declaration here is a warning.  (Only here: the C library functions the
 * shim defines and the omp_* functions are declared by system headers or
 * not at all.)  The entry points of libgomp that the
 * shim does not implement are not here: unsupported.c, generated from
 * gomp-abi.txt by tools/gen-gomp-abi.py, defines each as a stub that stops
 * the job.  The omp_* functions are the user's API (omp.h), not this one.
 *
 * Everything declared here is exported (default visibility; the library is
 * built with -fvisibility=hidden), at libgomp's symbol versions
 * (libompshim.map).
 *
 * Threads: any thread of a team; GOMP_parallel* on the thread that meets
 * the region (rank 0's main thread, or any thread for a nested region).
 */
#ifndef OMPSHIM_GOMP_ABI_H
#define OMPSHIM_GOMP_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC diagnostic warning "-Wmissing-prototypes"

#pragma GCC visibility push(default)

/* Parallel regions, fork and join (parallel.c on team.c). */
void GOMP_parallel(void (*fn)(void *), void *data, unsigned nthreads, unsigned flags);
void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned nthreads);
void GOMP_parallel_end(void);

/* The barrier, and cancellation, which is off (parallel.c). */
void GOMP_barrier(void);
bool GOMP_barrier_cancel(void);
bool GOMP_cancel(int which, bool do_cancel);
bool GOMP_cancellation_point(int which);

/* critical, named critical and the atomic fallback (sync.c). */
void GOMP_critical_start(void);
void GOMP_critical_end(void);
void GOMP_critical_name_start(void **pptr);
void GOMP_critical_name_end(void **pptr);
void GOMP_atomic_start(void);
void GOMP_atomic_end(void);

/* Worksharing loops on long: start with a schedule, next chunk (loop.c). */
bool GOMP_loop_static_start(long start, long end, long incr, long chunk, long *istart,
                            long *iend);
bool GOMP_loop_dynamic_start(long start, long end, long incr, long chunk, long *istart,
                             long *iend);
bool GOMP_loop_guided_start(long start, long end, long incr, long chunk, long *istart,
                            long *iend);
bool GOMP_loop_runtime_start(long start, long end, long incr, long *istart, long *iend);
bool GOMP_loop_nonmonotonic_dynamic_start(long start, long end, long incr, long chunk,
                                          long *istart, long *iend);
bool GOMP_loop_nonmonotonic_guided_start(long start, long end, long incr, long chunk,
                                         long *istart, long *iend);
bool GOMP_loop_nonmonotonic_runtime_start(long start, long end, long incr, long *istart,
                                          long *iend);
bool GOMP_loop_maybe_nonmonotonic_runtime_start(long start, long end, long incr,
                                                long *istart, long *iend);
bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk, long *istart,
                     long *iend, uintptr_t *reductions, void **mem);
bool GOMP_loop_static_next(long *istart, long *iend);
bool GOMP_loop_dynamic_next(long *istart, long *iend);
bool GOMP_loop_guided_next(long *istart, long *iend);
bool GOMP_loop_runtime_next(long *istart, long *iend);
bool GOMP_loop_nonmonotonic_dynamic_next(long *istart, long *iend);
bool GOMP_loop_nonmonotonic_guided_next(long *istart, long *iend);
bool GOMP_loop_nonmonotonic_runtime_next(long *istart, long *iend);
bool GOMP_loop_maybe_nonmonotonic_runtime_next(long *istart, long *iend);

/* Ordered loops on long, and the ordered block (loop.c). */
bool GOMP_loop_ordered_static_start(long start, long end, long incr, long chunk,
                                    long *istart, long *iend);
bool GOMP_loop_ordered_dynamic_start(long start, long end, long incr, long chunk,
                                     long *istart, long *iend);
bool GOMP_loop_ordered_guided_start(long start, long end, long incr, long chunk,
                                    long *istart, long *iend);
bool GOMP_loop_ordered_runtime_start(long start, long end, long incr, long *istart,
                                     long *iend);
bool GOMP_loop_ordered_start(long start, long end, long incr, long sched, long chunk,
                             long *istart, long *iend, uintptr_t *reductions, void **mem);
bool GOMP_loop_ordered_static_next(long *istart, long *iend);
bool GOMP_loop_ordered_dynamic_next(long *istart, long *iend);
bool GOMP_loop_ordered_guided_next(long *istart, long *iend);
bool GOMP_loop_ordered_runtime_next(long *istart, long *iend);
void GOMP_ordered_start(void);
void GOMP_ordered_end(void);

/* The end of a worksharing loop (loop.c). */
void GOMP_loop_end(void);
void GOMP_loop_end_nowait(void);
bool GOMP_loop_end_cancel(void);

/* Worksharing loops on unsigned long long, ordered or not (loop.c). */
bool GOMP_loop_ull_static_start(bool up, unsigned long long start, unsigned long long end,
                                unsigned long long incr, unsigned long long chunk,
                                unsigned long long *istart, unsigned long long *iend);
bool GOMP_loop_ull_dynamic_start(bool up, unsigned long long start, unsigned long long end,
                                 unsigned long long incr, unsigned long long chunk,
                                 unsigned long long *istart, unsigned long long *iend);
bool GOMP_loop_ull_guided_start(bool up, unsigned long long start, unsigned long long end,
                                unsigned long long incr, unsigned long long chunk,
                                unsigned long long *istart, unsigned long long *iend);
bool GOMP_loop_ull_runtime_start(bool up, unsigned long long start, unsigned long long end,
                                 unsigned long long incr, unsigned long long *istart,
                                 unsigned long long *iend);
bool GOMP_loop_ull_nonmonotonic_dynamic_start(bool up, unsigned long long start,
                                              unsigned long long end,
                                              unsigned long long incr,
                                              unsigned long long chunk,
                                              unsigned long long *istart,
                                              unsigned long long *iend);
bool GOMP_loop_ull_nonmonotonic_guided_start(bool up, unsigned long long start,
                                             unsigned long long end,
                                             unsigned long long incr,
                                             unsigned long long chunk,
                                             unsigned long long *istart,
                                             unsigned long long *iend);
bool GOMP_loop_ull_nonmonotonic_runtime_start(bool up, unsigned long long start,
                                              unsigned long long end,
                                              unsigned long long incr,
                                              unsigned long long *istart,
                                              unsigned long long *iend);
bool GOMP_loop_ull_maybe_nonmonotonic_runtime_start(bool up, unsigned long long start,
                                                    unsigned long long end,
                                                    unsigned long long incr,
                                                    unsigned long long *istart,
                                                    unsigned long long *iend);
bool GOMP_loop_ull_start(bool up, unsigned long long start, unsigned long long end,
                         unsigned long long incr, long sched, unsigned long long chunk,
                         unsigned long long *istart, unsigned long long *iend,
                         uintptr_t *reductions, void **mem);
bool GOMP_loop_ull_ordered_static_start(bool up, unsigned long long start,
                                        unsigned long long end, unsigned long long incr,
                                        unsigned long long chunk, unsigned long long *istart,
                                        unsigned long long *iend);
bool GOMP_loop_ull_ordered_dynamic_start(bool up, unsigned long long start,
                                         unsigned long long end, unsigned long long incr,
                                         unsigned long long chunk,
                                         unsigned long long *istart,
                                         unsigned long long *iend);
bool GOMP_loop_ull_ordered_guided_start(bool up, unsigned long long start,
                                        unsigned long long end, unsigned long long incr,
                                        unsigned long long chunk, unsigned long long *istart,
                                        unsigned long long *iend);
bool GOMP_loop_ull_ordered_runtime_start(bool up, unsigned long long start,
                                         unsigned long long end, unsigned long long incr,
                                         unsigned long long *istart,
                                         unsigned long long *iend);
bool GOMP_loop_ull_ordered_start(bool up, unsigned long long start, unsigned long long end,
                                 unsigned long long incr, long sched,
                                 unsigned long long chunk, unsigned long long *istart,
                                 unsigned long long *iend, uintptr_t *reductions,
                                 void **mem);
bool GOMP_loop_ull_static_next(unsigned long long *istart, unsigned long long *iend);
bool GOMP_loop_ull_dynamic_next(unsigned long long *istart, unsigned long long *iend);
bool GOMP_loop_ull_guided_next(unsigned long long *istart, unsigned long long *iend);
bool GOMP_loop_ull_runtime_next(unsigned long long *istart, unsigned long long *iend);
bool GOMP_loop_ull_nonmonotonic_dynamic_next(unsigned long long *istart,
                                             unsigned long long *iend);
bool GOMP_loop_ull_nonmonotonic_guided_next(unsigned long long *istart,
                                            unsigned long long *iend);
bool GOMP_loop_ull_nonmonotonic_runtime_next(unsigned long long *istart,
                                             unsigned long long *iend);
bool GOMP_loop_ull_maybe_nonmonotonic_runtime_next(unsigned long long *istart,
                                                   unsigned long long *iend);
bool GOMP_loop_ull_ordered_static_next(unsigned long long *istart, unsigned long long *iend);
bool GOMP_loop_ull_ordered_dynamic_next(unsigned long long *istart,
                                        unsigned long long *iend);
bool GOMP_loop_ull_ordered_guided_next(unsigned long long *istart, unsigned long long *iend);
bool GOMP_loop_ull_ordered_runtime_next(unsigned long long *istart,
                                        unsigned long long *iend);

/* Combined parallel loops: a region whose team starts on the loop (loop.c). */
void GOMP_parallel_loop_static_start(void (*fn)(void *), void *data, unsigned nthreads,
                                     long start, long end, long incr, long chunk);
void GOMP_parallel_loop_dynamic_start(void (*fn)(void *), void *data, unsigned nthreads,
                                      long start, long end, long incr, long chunk);
void GOMP_parallel_loop_guided_start(void (*fn)(void *), void *data, unsigned nthreads,
                                     long start, long end, long incr, long chunk);
void GOMP_parallel_loop_runtime_start(void (*fn)(void *), void *data, unsigned nthreads,
                                      long start, long end, long incr);
void GOMP_parallel_loop_static(void (*fn)(void *), void *data, unsigned nthreads,
                               long start, long end, long incr, long chunk, unsigned flags);
void GOMP_parallel_loop_dynamic(void (*fn)(void *), void *data, unsigned nthreads,
                                long start, long end, long incr, long chunk, unsigned flags);
void GOMP_parallel_loop_guided(void (*fn)(void *), void *data, unsigned nthreads,
                               long start, long end, long incr, long chunk, unsigned flags);
void GOMP_parallel_loop_runtime(void (*fn)(void *), void *data, unsigned nthreads,
                                long start, long end, long incr, unsigned flags);
void GOMP_parallel_loop_nonmonotonic_dynamic(void (*fn)(void *), void *data,
                                             unsigned nthreads, long start, long end,
                                             long incr, long chunk, unsigned flags);
void GOMP_parallel_loop_nonmonotonic_guided(void (*fn)(void *), void *data,
                                            unsigned nthreads, long start, long end,
                                            long incr, long chunk, unsigned flags);
void GOMP_parallel_loop_nonmonotonic_runtime(void (*fn)(void *), void *data,
                                             unsigned nthreads, long start, long end,
                                             long incr, unsigned flags);
void GOMP_parallel_loop_maybe_nonmonotonic_runtime(void (*fn)(void *), void *data,
                                                   unsigned nthreads, long start, long end,
                                                   long incr, unsigned flags);

/* sections, alone and combined with parallel (sync.c). */
unsigned GOMP_sections_start(unsigned count);
unsigned GOMP_sections2_start(unsigned count, uintptr_t *reductions, void **mem);
unsigned GOMP_sections_next(void);
void GOMP_parallel_sections_start(void (*fn)(void *), void *data, unsigned nthreads,
                                  unsigned count);
void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned nthreads,
                            unsigned count, unsigned flags);
void GOMP_sections_end(void);
void GOMP_sections_end_nowait(void);
bool GOMP_sections_end_cancel(void);

/* single, and single with copyprivate (sync.c). */
bool GOMP_single_start(void);
void *GOMP_single_copy_start(void);
void GOMP_single_copy_end(void *data);

/* Tasks, taskloops, taskwait and taskgroup (task.c). */
void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
               long arg_align, bool if_clause, unsigned flags, void **depend, int priority,
               void *detach);
void GOMP_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                   long arg_size, long arg_align, unsigned flags, unsigned long num_tasks,
                   int priority, long start, long end, long step);
void GOMP_taskloop_ull(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                       long arg_size, long arg_align, unsigned flags,
                       unsigned long num_tasks, int priority, unsigned long long start,
                       unsigned long long end, unsigned long long step);
void GOMP_taskwait(void);
void GOMP_taskwait_depend(void **depend);
void GOMP_taskyield(void);
void GOMP_taskgroup_start(void);
void GOMP_taskgroup_end(void);
/* Task reductions (task_reduction.c). */
void GOMP_taskgroup_reduction_register(uintptr_t *data);
void GOMP_taskgroup_reduction_unregister(uintptr_t *data);
void GOMP_task_reduction_remap(size_t cnt, size_t cntorig, void **ptrs);
unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned num_threads,
                                  unsigned flags);
/* omp_fulfill_event (C, and Fortran's by reference), with detach. */
void omp_fulfill_event(uintptr_t event);
void omp_fulfill_event_(uintptr_t *event);

/* The error directive (sync.c). */
void GOMP_warning(const char *msg, size_t len);
void GOMP_error(const char *msg, size_t len);

/* The allocate directive and clause: memory in the DSM (sync.c). */
void *GOMP_alloc(size_t alignment, size_t size, uintptr_t allocator);
void GOMP_free(void *ptr, uintptr_t allocator);

#pragma GCC visibility pop

#endif
