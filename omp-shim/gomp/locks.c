/*
 * locks.c - the omp_*_lock API on DSM locks.
 *
 * omp_init_lock takes a fresh DSM lock id from a counter at node 0 (remote
 * fetch-and-add) and stores id + 1 in the lock variable (omp_lock_t is 4
 * bytes in libgomp's ABI), with a remote store when the variable is shared,
 * so the home's copy has it at once and the next synchronisation shows it to
 * everyone.  A nest lock also keeps its owner and depth; both are written
 * only by the holder, so the lock orders them, and a thread that does not
 * hold it reads at worst an old owner, never itself.  Two layouts share the
 * nest logic: C's omp_nest_lock_t (16 bytes: lock word, depth, owner) and
 * Fortran's INTEGER(omp_nest_lock_kind) (8 bytes: lock word, and one word
 * with the owner's code in its high 16 bits and the depth in its low 16;
 * fortran.c calls the shim_fnest_* functions).  Both begin with the word an
 * omp_lock_t is, so lock_id serves all three.
 *
 * Outside the run (before start-up and after the end, local_sync.c) the
 * locks are process-local mutexes keyed by the lock's address; a lock
 * initialised before start-up (by a constructor) holds LOCAL_LOCK until it
 * is first used in the run, which then gives it a DSM lock id.
 *
 * Threads: OpenMP threads.
 */
#include "shim.h"

struct nest { uint32_t id1; int32_t depth; uint64_t owner; };
struct fnest { uint32_t id1; uint32_t od; };

int shim_new_lock_id(void)
{
    uint64_t id = dsm__atomic(&shim.ctl->next_lock, DSM_AOP_FETCH_ADD, 8, 1, 0, 0, 0, NULL);
    if (id >= (uint64_t)dsm_rt_max_locks())
        dsm__fatal("the program initialised more OpenMP locks and named criticals "
                   "(%lu) than there are DSM locks (%d); raise DSM_MAX_LOCKS",
                   (unsigned long)(id - SHIM_LOCK_FIRST_FREE + 1), dsm_rt_max_locks());
    return (int)id;
}

uint32_t shim_word_tag(uint32_t *w, uint32_t seen)
{
    uint64_t id = (uint64_t)shim_new_lock_id() + 1, ok = 0;
    uint64_t old = dsm__atomic(w, DSM_AOP_CAS, 4, SHIM_WORD_TAG | id, seen, 0, 0, &ok);
    uint32_t v = ok ? SHIM_WORD_TAG | (uint32_t)id : (uint32_t)old;
    /* This node's copy says so too: it may hold a write of the word (an
     * initialisation, or a memset of the structure around it) whose diff,
     * applied at the home at this node's next release, would otherwise put
     * the old value back over the id. */
    if ((v & SHIM_WORD_TAG) && *(volatile uint32_t *)w != v)
        *(volatile uint32_t *)w = v;
    return v;
}

static void store_u32(uint32_t *p, uint32_t v)
{
    if (dsm_rt_in_region(p))
        dsm__atomic(p, DSM_AOP_STORE, 4, v, 0, 0, 0, NULL);
    else
        __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* The value of a lock initialised outside the run. */
#define LOCAL_LOCK 0xffffffffu

static int lock_id(const char *fn, uint32_t *p)
{
    uint32_t v = *(const volatile uint32_t *)p;
    if (v == LOCAL_LOCK) {
        /* Initialised by a constructor: give it an id now, once for all
         * ranks when the variable is shared. */
        uint64_t id = (uint64_t)shim_new_lock_id() + 1, ok = 0;
        if (!dsm_rt_in_region(p)) {
            __atomic_compare_exchange_n(p, &v, (uint32_t)id, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST);
            v = *(volatile uint32_t *)p;
        } else {
            uint64_t old = dsm__atomic(p, DSM_AOP_CAS, 4, id, LOCAL_LOCK, 0, 0, &ok);
            v = ok ? (uint32_t)id : (uint32_t)old;
        }
    }
    if (v == 0 || v > (uint32_t)dsm_rt_max_locks())
        dsm__fatal("%s(%p): the lock is not initialised (call omp_init_lock first, "
                   "and make it visible to the other threads before they use it)",
                   fn, (const void *)p);
    return (int)v - 1;
}

SHIM_EXPORT void omp_init_lock(void *lock)
{
    if (!shim.active)
        *(volatile uint32_t *)lock = LOCAL_LOCK;
    else
        store_u32(lock, (uint32_t)shim_new_lock_id() + 1);
}

SHIM_EXPORT void omp_init_lock_with_hint(void *lock, int hint)
{
    (void)hint;
    omp_init_lock(lock);
}

SHIM_EXPORT void omp_destroy_lock(void *lock)
{
    if (!shim.active)
        *(volatile uint32_t *)lock = 0;
    else
        store_u32(lock, 0);
}

SHIM_EXPORT void omp_set_lock(void *lock)
{
    if (!shim.active)
        shim_local_lock(lock);
    else
        dsm_lock_acquire(lock_id("omp_set_lock", lock));
}

SHIM_EXPORT void omp_unset_lock(void *lock)
{
    if (!shim.active)
        shim_local_unlock(lock);
    else
        dsm__lock_release_handoff(lock_id("omp_unset_lock", lock), "omp_unset_lock");
}

SHIM_EXPORT int omp_test_lock(void *lock)
{
    if (!shim.active)
        return shim_local_trylock(lock);
    return dsm__lock_try(lock_id("omp_test_lock", lock), "omp_test_lock");
}

/* ---- nest locks, in C's layout (f = 0) or Fortran's (f = 1) ---- */

/* Fortran: an OpenMP thread's code is its uid (rank * 64 + local + 1, at
 * most 4096); a thread the program started itself (a negative uid) gets one
 * of the codes above those, from its rank's share of what 16 bits leave. */
#define FNEST_OMP_CODES ((uint32_t)DSM_MAX_NODES * SHIM_MAX_LOCAL)
#define FNEST_DEPTH_MAX 0xffffu
_Static_assert(FNEST_OMP_CODES < 0xffff, "OpenMP threads' uids fit the owner field");
static __thread uint32_t program_thread_code;

static uint32_t fnest_me(const char *fn)
{
    int uid = shim_self()->uid;
    if (uid > 0)
        return (uint32_t)uid;
    if (!program_thread_code) {
        static uint32_t made;   /* this rank's program threads given a code */
        uint32_t per = (0xffff - FNEST_OMP_CODES) / DSM_MAX_NODES;
        uint32_t k = __atomic_fetch_add(&made, 1, __ATOMIC_RELAXED);
        if (k >= per)
            dsm__fatal("%s: more than %u threads the program started itself on this rank "
                       "used Fortran nest locks, more than the 8-byte lock can tell apart; "
                       "use them from fewer such threads, or from OpenMP threads",
                       fn, per);
        program_thread_code = FNEST_OMP_CODES + 1 + (uint32_t)shim.rank * per + k;
    }
    return program_thread_code;
}

static uint64_t nest_me(const char *fn, int f)
{
    return f ? fnest_me(fn) : (uint64_t)shim_self()->uid;
}

static uint64_t nest_owner(const void *lock, int f)
{
    if (f)
        return ((const volatile struct fnest *)lock)->od >> 16;
    return ((const volatile struct nest *)lock)->owner;
}

static uint32_t nest_depth(const void *lock, int f)
{
    if (f)
        return ((const volatile struct fnest *)lock)->od & FNEST_DEPTH_MAX;
    return (uint32_t)((const volatile struct nest *)lock)->depth;
}

/* By the holder only (or at initialisation). */
static void nest_put(void *lock, int f, uint64_t owner, uint32_t depth, const char *fn)
{
    if (f) {
        if (depth > FNEST_DEPTH_MAX)
            dsm__fatal("%s(%p): this thread would hold the nest lock %u times over, "
                       "deeper than the 8-byte Fortran nest lock counts (%u); unset it "
                       "before nesting so deep", fn, lock, depth, FNEST_DEPTH_MAX);
        ((volatile struct fnest *)lock)->od = (uint32_t)owner << 16 | depth;
    } else {
        ((volatile struct nest *)lock)->owner = owner;
        ((volatile struct nest *)lock)->depth = (int32_t)depth;
    }
}

static void nest_init(void *lock, int f)
{
    uint32_t *id1 = lock;       /* the first word in both layouts */
    if (!shim.active) {
        nest_put(lock, f, 0, 0, NULL);
        *id1 = LOCAL_LOCK;
        return;
    }
    if (!dsm_rt_in_region(lock)) {
        nest_put(lock, f, 0, 0, NULL);
    } else if (f) {
        dsm__atomic(&((struct fnest *)lock)->od, DSM_AOP_STORE, 4, 0, 0, 0, 0, NULL);
    } else {
        dsm__atomic(&((struct nest *)lock)->owner, DSM_AOP_STORE, 8, 0, 0, 0, 0, NULL);
        dsm__atomic(&((struct nest *)lock)->depth, DSM_AOP_STORE, 4, 0, 0, 0, 0, NULL);
    }
    store_u32(id1, (uint32_t)shim_new_lock_id() + 1);
}

static void nest_destroy(void *lock)
{
    if (!shim.active)
        *(uint32_t *)lock = 0;
    else
        store_u32(lock, 0);
}

static void nest_set(void *lock, int f, const char *fn)
{
    uint64_t me = nest_me(fn, f);
    if (nest_owner(lock, f) == me) {
        nest_put(lock, f, me, nest_depth(lock, f) + 1, fn);
        return;
    }
    if (!shim.active)
        shim_local_lock(lock);
    else
        dsm_lock_acquire(lock_id(fn, lock));
    nest_put(lock, f, me, 1, fn);
}

static void nest_unset(void *lock, int f, const char *fn)
{
    uint64_t me = nest_me(fn, f);
    uint32_t depth = nest_depth(lock, f);
    if (nest_owner(lock, f) != me || depth == 0)
        dsm__fatal("%s(%p): this thread does not hold the lock", fn, lock);
    if (depth > 1) {
        nest_put(lock, f, me, depth - 1, fn);
        return;
    }
    nest_put(lock, f, 0, 0, fn);
    if (!shim.active)
        shim_local_unlock(lock);
    else
        dsm_lock_release(lock_id(fn, lock));
}

static int nest_test(void *lock, int f, const char *fn)
{
    uint64_t me = nest_me(fn, f);
    if (nest_owner(lock, f) == me) {
        uint32_t depth = nest_depth(lock, f) + 1;
        nest_put(lock, f, me, depth, fn);
        return (int)depth;
    }
    if (!shim.active ? !shim_local_trylock(lock) : !dsm__lock_try(lock_id(fn, lock), fn))
        return 0;
    nest_put(lock, f, me, 1, fn);
    return 1;
}

SHIM_EXPORT void omp_init_nest_lock(void *lock) { nest_init(lock, 0); }

SHIM_EXPORT void omp_init_nest_lock_with_hint(void *lock, int hint)
{
    (void)hint;
    omp_init_nest_lock(lock);
}

SHIM_EXPORT void omp_destroy_nest_lock(void *lock) { nest_destroy(lock); }
SHIM_EXPORT void omp_set_nest_lock(void *lock) { nest_set(lock, 0, "omp_set_nest_lock"); }
SHIM_EXPORT void omp_unset_nest_lock(void *lock) { nest_unset(lock, 0, "omp_unset_nest_lock"); }
SHIM_EXPORT int omp_test_nest_lock(void *lock) { return nest_test(lock, 0, "omp_test_nest_lock"); }

void shim_fnest_init(void *lock) { nest_init(lock, 1); }
void shim_fnest_destroy(void *lock) { nest_destroy(lock); }
void shim_fnest_set(void *lock) { nest_set(lock, 1, "omp_set_nest_lock_"); }
void shim_fnest_unset(void *lock) { nest_unset(lock, 1, "omp_unset_nest_lock_"); }
int shim_fnest_test(void *lock) { return nest_test(lock, 1, "omp_test_nest_lock_"); }
