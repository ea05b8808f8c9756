/*
 * locks.c - the omp_*_lock API on DSM locks.
 *
 * omp_init_lock takes a fresh DSM lock id from a counter at node 0 (remote
 * fetch-and-add) and stores id + 1 in the lock variable (omp_lock_t is 4
 * bytes in libgomp's ABI), with a remote store when the variable is shared,
 * so the home's copy has it at once and the next synchronisation shows it to
 * everyone.  A nest lock (16 bytes) also keeps its owner and depth; both are
 * written only by the holder, so the lock orders them.
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

int shim_new_lock_id(void)
{
    uint64_t id = dsm__atomic(&shim.ctl->next_lock, DSM_AOP_FETCH_ADD, 8, 1, 0, 0, 0, NULL);
    if (id >= (uint64_t)dsm__g.cfg.max_locks)
        dsm__fatal("the program initialised more OpenMP locks and named criticals "
                   "(%lu) than there are DSM locks (%d); raise DSM_MAX_LOCKS",
                   (unsigned long)(id - SHIM_LOCK_FIRST_FREE + 1), dsm__g.cfg.max_locks);
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
    if (dsm__in_region(p))
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
        if (!dsm__in_region(p)) {
            __atomic_compare_exchange_n(p, &v, (uint32_t)id, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST);
            v = *(volatile uint32_t *)p;
        } else {
            uint64_t old = dsm__atomic(p, DSM_AOP_CAS, 4, id, LOCAL_LOCK, 0, 0, &ok);
            v = ok ? (uint32_t)id : (uint32_t)old;
        }
    }
    if (v == 0 || v > (uint32_t)dsm__g.cfg.max_locks)
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
        dsm__lock_release_handoff(lock_id("omp_unset_lock", lock));
}

SHIM_EXPORT int omp_test_lock(void *lock)
{
    if (!shim.active)
        return shim_local_trylock(lock);
    return dsm__lock_try(lock_id("omp_test_lock", lock));
}

SHIM_EXPORT void omp_init_nest_lock(void *lock)
{
    struct nest *n = lock;
    if (!shim.active) {
        n->owner = 0;
        n->depth = 0;
        n->id1 = LOCAL_LOCK;
        return;
    }
    if (dsm__in_region(n)) {
        dsm__atomic(&n->owner, DSM_AOP_STORE, 8, 0, 0, 0, 0, NULL);
        dsm__atomic(&n->depth, DSM_AOP_STORE, 4, 0, 0, 0, 0, NULL);
    } else {
        n->owner = 0;
        n->depth = 0;
    }
    store_u32(&n->id1, (uint32_t)shim_new_lock_id() + 1);
}

SHIM_EXPORT void omp_init_nest_lock_with_hint(void *lock, int hint)
{
    (void)hint;
    omp_init_nest_lock(lock);
}

SHIM_EXPORT void omp_destroy_nest_lock(void *lock)
{
    if (!shim.active)
        ((struct nest *)lock)->id1 = 0;
    else
        store_u32(&((struct nest *)lock)->id1, 0);
}

static uint64_t me(void)
{
    return (uint64_t)shim_self()->uid;
}

SHIM_EXPORT void omp_set_nest_lock(void *lock)
{
    struct nest *n = lock;
    if (n->owner == me()) {
        n->depth++;
        return;
    }
    if (!shim.active)
        shim_local_lock(n);
    else
        dsm_lock_acquire(lock_id("omp_set_nest_lock", &n->id1));
    n->owner = me();
    n->depth = 1;
}

SHIM_EXPORT void omp_unset_nest_lock(void *lock)
{
    struct nest *n = lock;
    if (n->owner != me() || n->depth <= 0)
        dsm__fatal("omp_unset_nest_lock(%p): this thread does not hold the lock", lock);
    if (--n->depth == 0) {
        n->owner = 0;
        if (!shim.active)
            shim_local_unlock(n);
        else
            dsm_lock_release(lock_id("omp_unset_nest_lock", &n->id1));
    }
}

SHIM_EXPORT int omp_test_nest_lock(void *lock)
{
    struct nest *n = lock;
    if (n->owner == me())
        return ++n->depth;
    if (!shim.active ? !shim_local_trylock(n)
                     : !dsm__lock_try(lock_id("omp_test_nest_lock", &n->id1)))
        return 0;
    n->owner = me();
    n->depth = 1;
    return 1;
}
