/*
 * mutex.c - POSIX mutexes in shared memory, as DSM locks.
 *
 * The libraries a program needs keep their mutexes in memory the shim
 * shares: their heap blocks and their global variables (applibs.c).
 * GraphicsMagick's semaphores are such mutexes.  The C library's mutex is a
 * word that each rank would change in its own copy of the page: two ranks
 * could hold it at once, and a rank that saw it held would sleep on a futex
 * that nobody on its rank wakes (a hang, seen with `gm convert -rotate` on
 * 3 ranks).  So in a run, for a mutex inside the region, the shim takes
 * over pthread_mutex_init, destroy, lock, trylock, timedlock and unlock:
 *   - the mutex's first word holds SHIM_WORD_TAG | (DSM lock id + 1), set by a
 *     compare-and-swap at its home when the mutex is first locked (a
 *     mutex initialised with zeros, statically or before start-up, works);
 *   - a recursive mutex keeps its owner (the OpenMP thread's uid) and depth
 *     in the C library's owner and count fields, written only by the
 *     holder, as omp nest locks do; an error-checking one reports a
 *     relock and an unlock by another thread as the C library does.
 * After the end of the run (exit handlers on rank 0) such a mutex is a
 * process-local lock keyed by its address.  Every other mutex goes to the
 * C library.  A condition variable cannot
 * wait on such a mutex (its wake-ups do not cross ranks):
 * pthread_cond_wait and timedwait stop the job with a message.
 *
 * Threads: any.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "shim.h"

/* glibc's pthread_mutex_t on Linux: the fields the shim uses. */
struct gmutex {
    uint32_t word;                  /* __lock */
    uint32_t depth;                 /* __count */
    int32_t owner;                  /* __owner */
    uint32_t nusers;
    int32_t kind;                   /* __kind: PTHREAD_MUTEX_* in its low bits */
};
_Static_assert(sizeof(pthread_mutex_t) >= sizeof(struct gmutex), "pthread_mutex_t layout");

/* 1: a mutex of the run, in the region (a DSM lock); 2: one that became
 * such a lock and is used after the end of the run (a process-local lock
 * keyed by its address, as omp locks then, local_sync.c); 0: the C
 * library's. */
static int shared_mutex(const void *m)
{
    if (!dsm__in_region(m))
        return 0;
    if (shim.active)
        return 1;
    return (*(const volatile uint32_t *)m & SHIM_WORD_TAG) ? 2 : 0;
}

static int kind_of(const struct gmutex *g)
{
    return g->kind & 3;             /* NORMAL 0, RECURSIVE 1, ERRORCHECK 2, ADAPTIVE 3 */
}

/* The mutex's DSM lock, given one at its first use. */
static int mutex_lock_id(struct gmutex *g)
{
    uint32_t v = *(volatile uint32_t *)&g->word;
    if (!(v & SHIM_WORD_TAG)) {
        v = shim_word_tag(&g->word, v);
        if (!(v & SHIM_WORD_TAG))       /* reset meanwhile (an init at the home): again */
            v = shim_word_tag(&g->word, v);
        if (!(v & SHIM_WORD_TAG))
            dsm__fatal("pthread_mutex_lock(%p): a mutex in shared memory changed under the "
                       "shim (its first word is %#x); is it used by code that does not call "
                       "pthread_mutex_lock, such as pthread_cond_wait?", (void *)g, v);
    }
    return (int)(v & ~SHIM_WORD_TAG) - 1;
}

static int me(void)
{
    return shim_self()->uid;
}

static int take(struct gmutex *g, int try, int local)
{
    int k = kind_of(g);
    if (k == PTHREAD_MUTEX_RECURSIVE || k == PTHREAD_MUTEX_ERRORCHECK) {
        if (g->owner == me()) {
            if (k == PTHREAD_MUTEX_ERRORCHECK)
                return EDEADLK;
            g->depth++;
            return 0;
        }
    }
    if (local) {
        if (try) {
            if (!shim_local_trylock(g))
                return EBUSY;
        } else {
            shim_local_lock(g);
        }
    } else {
        int id = mutex_lock_id(g);
        if (try) {
            if (!dsm__lock_try(id))
                return EBUSY;
        } else {
            dsm_lock_acquire(id);
        }
    }
    g->owner = me();
    g->depth = 1;
    return 0;
}

SHIM_EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    SHIM_REAL(pthread_mutex_init);
    if (shared_mutex(m) != 1)
        return real_pthread_mutex_init(m, a);
    /* The C library sets the fields up (its kind, from a); the first word
     * then gets its DSM lock at the first lock. */
    int rc = real_pthread_mutex_init(m, a);
    if (rc == 0) {
        struct gmutex *g = (struct gmutex *)(void *)m;
        dsm__atomic(&g->word, DSM_AOP_STORE, 4, 0, 0, 0, 0, NULL);
    }
    return rc;
}

SHIM_EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
    SHIM_REAL(pthread_mutex_destroy);
    if (!shared_mutex(m))
        return real_pthread_mutex_destroy(m);
    if (shared_mutex(m) == 2)
        return 0;
    /* Its DSM lock id is not reused (ids only grow, DSM_MAX_LOCKS). */
    return 0;
}

SHIM_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
    SHIM_REAL(pthread_mutex_lock);
    int sh = shared_mutex(m);
    if (!sh)
        return real_pthread_mutex_lock(m);
    return take((struct gmutex *)(void *)m, 0, sh == 2);
}

SHIM_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
    SHIM_REAL(pthread_mutex_trylock);
    int sh = shared_mutex(m);
    if (!sh)
        return real_pthread_mutex_trylock(m);
    return take((struct gmutex *)(void *)m, 1, sh == 2);
}

/* A DSM lock has no timeout: a timed lock on a shared mutex waits until it
 * gets it (a deadline that passed meanwhile is not reported). */
SHIM_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t)
{
    SHIM_REAL(pthread_mutex_timedlock);
    int sh = shared_mutex(m);
    if (!sh)
        return real_pthread_mutex_timedlock(m, t);
    return take((struct gmutex *)(void *)m, 0, sh == 2);
}

SHIM_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
    SHIM_REAL(pthread_mutex_unlock);
    int sh = shared_mutex(m);
    if (!sh)
        return real_pthread_mutex_unlock(m);
    struct gmutex *g = (struct gmutex *)(void *)m;
    int k = kind_of(g);
    if ((k == PTHREAD_MUTEX_RECURSIVE || k == PTHREAD_MUTEX_ERRORCHECK) && g->owner != me())
        return EPERM;
    if (k == PTHREAD_MUTEX_RECURSIVE && --g->depth > 0)
        return 0;
    g->owner = 0;
    g->depth = 0;
    if (sh == 2)
        shim_local_unlock(g);
    else
        dsm__lock_release_handoff(mutex_lock_id(g));   /* a normal mutex: any thread may unlock it */
    return 0;
}

static void no_cond(const char *fn, const void *m)
{
    dsm__fatal("%s on the mutex %p, which is in shared memory: condition variables "
               "cannot wait on a mutex the OpenMP shim shares across ranks (a wake-up "
               "does not reach another rank). Synchronise the threads with OpenMP "
               "(barriers, locks) instead", fn, m);
}

SHIM_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    SHIM_REAL(pthread_cond_wait);
    if (shared_mutex(m) == 1)
        no_cond("pthread_cond_wait", m);
    return real_pthread_cond_wait(c, m);
}

SHIM_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                       const struct timespec *t)
{
    SHIM_REAL(pthread_cond_timedwait);
    if (shared_mutex(m) == 1)
        no_cond("pthread_cond_timedwait", m);
    return real_pthread_cond_timedwait(c, m, t);
}
