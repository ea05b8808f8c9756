/*
 * fortran.c - the Fortran binding of the omp_* functions: the names with a
 * trailing underscore that gfortran's omp_lib calls (omp_get_thread_num_,
 * omp_set_lock_, ...), and the _8 forms its generic interfaces pick for
 * INTEGER(8) arguments.  Each calls the shim's C function; without them a
 * Fortran program would reach libgomp's and see a team of one on every rank.
 *
 * Fortran passes every argument by reference.  Default INTEGER and LOGICAL
 * are 4 bytes (.TRUE. is 1), so a LOGICAL result is normalised to 0 or 1.
 * An INTEGER(8) argument is clamped to int's range, as libgomp does; a
 * LOGICAL(8) one counts as true when it is not zero.  omp_lock_kind is 4,
 * the same word as C's omp_lock_t, so the simple locks are the C functions;
 * omp_nest_lock_kind is 8, less than C's 16-byte nest lock, so the nest
 * locks have a layout of their own (locks.c, shim_fnest_*).  The entry
 * points whose C function the shim lacks (affinity display, allocators,
 * pause, omp_display_env) are stubs in unsupported.c; omp_fulfill_event_ is
 * task.c's
 * that stop the job naming the Fortran name (tools/gen-gomp-abi.py).
 *
 * Threads: any, as the C functions they call.
 */
#include <limits.h>
#include <omp.h>

#include "shim.h"

/* libgomp's conversion of an INTEGER(8) argument: clamped to int. */
static int to_int(int64_t v)
{
    return v < INT_MIN ? INT_MIN : v > INT_MAX ? INT_MAX : (int)v;
}

/* A function of no arguments with an INTEGER, or a LOGICAL, result. */
#define INTEGER_QUERY(fname, cfn) \
    SHIM_EXPORT int32_t fname(void); \
    int32_t fname(void) { return cfn(); }
#define LOGICAL_QUERY(fname, cfn) \
    SHIM_EXPORT int32_t fname(void); \
    int32_t fname(void) { return cfn() != 0; }
/* A setter of one INTEGER argument, its INTEGER(8) form, and the INTEGER(8)
 * form of one that takes a LOGICAL. */
#define INTEGER_SETTER(fname, cfn) \
    SHIM_EXPORT void fname(const int32_t *v); \
    void fname(const int32_t *v) { cfn(*v); }
#define INTEGER8_SETTER(fname, cfn) \
    SHIM_EXPORT void fname(const int64_t *v); \
    void fname(const int64_t *v) { cfn(to_int(*v)); }
#define LOGICAL8_SETTER(fname, cfn) \
    SHIM_EXPORT void fname(const int64_t *v); \
    void fname(const int64_t *v) { cfn(*v != 0); }
/* A query of one INTEGER argument, and its INTEGER(8) form. */
#define INTEGER_ARG_QUERY(fname, cfn) \
    SHIM_EXPORT int32_t fname(const int32_t *v); \
    int32_t fname(const int32_t *v) { return cfn(*v); }
#define INTEGER8_ARG_QUERY(fname, cfn) \
    SHIM_EXPORT int32_t fname(const int64_t *v); \
    int32_t fname(const int64_t *v) { return cfn(to_int(*v)); }

/* ---- threads and teams ---- */

INTEGER_QUERY(omp_get_thread_num_, omp_get_thread_num)
INTEGER_QUERY(omp_get_num_threads_, omp_get_num_threads)
INTEGER_QUERY(omp_get_max_threads_, omp_get_max_threads)
INTEGER_QUERY(omp_get_num_procs_, omp_get_num_procs)
INTEGER_QUERY(omp_get_thread_limit_, omp_get_thread_limit)
INTEGER_QUERY(omp_get_level_, omp_get_level)
INTEGER_QUERY(omp_get_active_level_, omp_get_active_level)
INTEGER_QUERY(omp_get_max_active_levels_, omp_get_max_active_levels)
INTEGER_QUERY(omp_get_supported_active_levels_, omp_get_supported_active_levels)
LOGICAL_QUERY(omp_in_parallel_, omp_in_parallel)
LOGICAL_QUERY(omp_in_final_, omp_in_final)
LOGICAL_QUERY(omp_get_dynamic_, omp_get_dynamic)
LOGICAL_QUERY(omp_get_nested_, omp_get_nested)
LOGICAL_QUERY(omp_get_cancellation_, omp_get_cancellation)

INTEGER_SETTER(omp_set_num_threads_, omp_set_num_threads)
INTEGER8_SETTER(omp_set_num_threads_8_, omp_set_num_threads)
INTEGER_SETTER(omp_set_max_active_levels_, omp_set_max_active_levels)
INTEGER8_SETTER(omp_set_max_active_levels_8_, omp_set_max_active_levels)
INTEGER_SETTER(omp_set_dynamic_, omp_set_dynamic)
LOGICAL8_SETTER(omp_set_dynamic_8_, omp_set_dynamic)
INTEGER_SETTER(omp_set_nested_, omp_set_nested)
LOGICAL8_SETTER(omp_set_nested_8_, omp_set_nested)

INTEGER_ARG_QUERY(omp_get_ancestor_thread_num_, omp_get_ancestor_thread_num)
INTEGER8_ARG_QUERY(omp_get_ancestor_thread_num_8_, omp_get_ancestor_thread_num)
INTEGER_ARG_QUERY(omp_get_team_size_, omp_get_team_size)
INTEGER8_ARG_QUERY(omp_get_team_size_8_, omp_get_team_size)

/* ---- teams, devices, places: a machine without them (api.c) ---- */

INTEGER_QUERY(omp_get_num_teams_, omp_get_num_teams)
INTEGER_QUERY(omp_get_team_num_, omp_get_team_num)
INTEGER_QUERY(omp_get_max_teams_, omp_get_max_teams)
INTEGER_QUERY(omp_get_teams_thread_limit_, omp_get_teams_thread_limit)
INTEGER_SETTER(omp_set_num_teams_, omp_set_num_teams)
INTEGER8_SETTER(omp_set_num_teams_8_, omp_set_num_teams)
INTEGER_SETTER(omp_set_teams_thread_limit_, omp_set_teams_thread_limit)
INTEGER8_SETTER(omp_set_teams_thread_limit_8_, omp_set_teams_thread_limit)
INTEGER_QUERY(omp_get_default_device_, omp_get_default_device)
INTEGER_SETTER(omp_set_default_device_, omp_set_default_device)
INTEGER8_SETTER(omp_set_default_device_8_, omp_set_default_device)
INTEGER_QUERY(omp_get_num_devices_, omp_get_num_devices)
INTEGER_QUERY(omp_get_device_num_, omp_get_device_num)
INTEGER_QUERY(omp_get_initial_device_, omp_get_initial_device)
LOGICAL_QUERY(omp_is_initial_device_, omp_is_initial_device)
INTEGER_QUERY(omp_get_max_task_priority_, omp_get_max_task_priority)
INTEGER_QUERY(omp_get_proc_bind_, omp_get_proc_bind)
INTEGER_QUERY(omp_get_num_places_, omp_get_num_places)
INTEGER_QUERY(omp_get_place_num_, omp_get_place_num)
INTEGER_QUERY(omp_get_partition_num_places_, omp_get_partition_num_places)
INTEGER_ARG_QUERY(omp_get_place_num_procs_, omp_get_place_num_procs)
INTEGER8_ARG_QUERY(omp_get_place_num_procs_8_, omp_get_place_num_procs)

/* There are no places: every place has no processors, and a partition has
 * no places, so these write nothing (as omp_get_place_num_procs and
 * omp_get_partition_num_places say). */
SHIM_EXPORT void omp_get_place_proc_ids_(const int32_t *place, int32_t *ids);
void omp_get_place_proc_ids_(const int32_t *place, int32_t *ids)
{
    omp_get_place_proc_ids(*place, ids);
}

SHIM_EXPORT void omp_get_place_proc_ids_8_(const int64_t *place, int64_t *ids);
void omp_get_place_proc_ids_8_(const int64_t *place, int64_t *ids)
{
    (void)place;
    (void)ids;
}

SHIM_EXPORT void omp_get_partition_place_nums_(int32_t *nums);
void omp_get_partition_place_nums_(int32_t *nums)
{
    omp_get_partition_place_nums(nums);
}

SHIM_EXPORT void omp_get_partition_place_nums_8_(int64_t *nums);
void omp_get_partition_place_nums_8_(int64_t *nums)
{
    (void)nums;
}

/* ---- schedule ---- */

SHIM_EXPORT void omp_set_schedule_(const int32_t *kind, const int32_t *chunk);
void omp_set_schedule_(const int32_t *kind, const int32_t *chunk)
{
    omp_set_schedule((omp_sched_t)*kind, *chunk);
}

SHIM_EXPORT void omp_set_schedule_8_(const int32_t *kind, const int64_t *chunk);
void omp_set_schedule_8_(const int32_t *kind, const int64_t *chunk)
{
    omp_set_schedule((omp_sched_t)*kind, to_int(*chunk));
}

/* As libgomp's: without the monotonic modifier, which code written for
 * OpenMP 4.5's omp_sched_kind values does not expect. */
SHIM_EXPORT void omp_get_schedule_(int32_t *kind, int32_t *chunk);
void omp_get_schedule_(int32_t *kind, int32_t *chunk)
{
    omp_sched_t k;
    int c;
    omp_get_schedule(&k, &c);
    *kind = (int32_t)((unsigned)k & ~SHIM_SCHED_MONOTONIC);
    *chunk = c;
}

SHIM_EXPORT void omp_get_schedule_8_(int32_t *kind, int64_t *chunk);
void omp_get_schedule_8_(int32_t *kind, int64_t *chunk)
{
    omp_sched_t k;
    int c;
    omp_get_schedule(&k, &c);
    *kind = (int32_t)((unsigned)k & ~SHIM_SCHED_MONOTONIC);
    *chunk = c;
}

/* ---- timing ---- */

SHIM_EXPORT double omp_get_wtime_(void);
double omp_get_wtime_(void) { return omp_get_wtime(); }
SHIM_EXPORT double omp_get_wtick_(void);
double omp_get_wtick_(void) { return omp_get_wtick(); }

/* ---- locks: INTEGER(omp_lock_kind) is C's omp_lock_t ---- */

_Static_assert(sizeof(omp_lock_t) == 4, "omp_lock_kind is C's omp_lock_t");

SHIM_EXPORT void omp_init_lock_(int32_t *lock);
void omp_init_lock_(int32_t *lock) { omp_init_lock((omp_lock_t *)(void *)lock); }
SHIM_EXPORT void omp_destroy_lock_(int32_t *lock);
void omp_destroy_lock_(int32_t *lock) { omp_destroy_lock((omp_lock_t *)(void *)lock); }
SHIM_EXPORT void omp_set_lock_(int32_t *lock);
void omp_set_lock_(int32_t *lock) { omp_set_lock((omp_lock_t *)(void *)lock); }
SHIM_EXPORT void omp_unset_lock_(int32_t *lock);
void omp_unset_lock_(int32_t *lock) { omp_unset_lock((omp_lock_t *)(void *)lock); }
SHIM_EXPORT int32_t omp_test_lock_(int32_t *lock);
int32_t omp_test_lock_(int32_t *lock)
{
    return omp_test_lock((omp_lock_t *)(void *)lock) != 0;
}

/* INTEGER(omp_nest_lock_kind): 8 bytes, the layout of locks.c. */
SHIM_EXPORT void omp_init_nest_lock_(int64_t *lock);
void omp_init_nest_lock_(int64_t *lock) { shim_fnest_init(lock); }
SHIM_EXPORT void omp_destroy_nest_lock_(int64_t *lock);
void omp_destroy_nest_lock_(int64_t *lock) { shim_fnest_destroy(lock); }
SHIM_EXPORT void omp_set_nest_lock_(int64_t *lock);
void omp_set_nest_lock_(int64_t *lock) { shim_fnest_set(lock); }
SHIM_EXPORT void omp_unset_nest_lock_(int64_t *lock);
void omp_unset_nest_lock_(int64_t *lock) { shim_fnest_unset(lock); }
/* The new nesting count, or 0. */
SHIM_EXPORT int32_t omp_test_nest_lock_(int64_t *lock);
int32_t omp_test_nest_lock_(int64_t *lock) { return shim_fnest_test(lock); }

/* ---- memory allocators: INTEGER(omp_allocator_handle_kind), a pointer's
 * size ---- */

SHIM_EXPORT intptr_t omp_get_default_allocator_(void);
intptr_t omp_get_default_allocator_(void)
{
    return (intptr_t)omp_get_default_allocator();
}

SHIM_EXPORT void omp_set_default_allocator_(const intptr_t *allocator);
void omp_set_default_allocator_(const intptr_t *allocator)
{
    omp_set_default_allocator((omp_allocator_handle_t)*allocator);
}
