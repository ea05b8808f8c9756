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
 * C library.
 *
 * A condition variable that waits on such a mutex (cdo's pipeline of
 * threads, C++'s std::condition_variable over a std::mutex in the heap)
 * cannot be the C library's: its wait would unlock the mutex behind the
 * shim's back.  The shim's wait unlocks the mutex, sleeps on a futex word of
 * this process chosen by the condition variable's address, and locks the
 * mutex again.  pthread_cond_signal and broadcast on this rank change that
 * word and wake every sleeper on it; a signal from another rank cannot reach
 * the futex, so a sleep also ends after a timeout, 50 us doubling to 5 ms
 * while a thread's waits keep timing out.  Every such return is a spurious
 * wake-up, which POSIX allows: a program re-checks its predicate, under the
 * mutex, whose DSM lock makes the other ranks' writes visible.
 *
 * Threads: any.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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
    if (!dsm_rt_in_region(m))
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
                       "pthread_mutex_lock, or was it copied while held?", (void *)g, v);
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
            if (!dsm__lock_try(id, "pthread_mutex_trylock"))
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
        /* a normal mutex: any thread may unlock it */
        dsm__lock_release_handoff(mutex_lock_id(g), "pthread_mutex_unlock");
    return 0;
}

/* ---- condition variables on a shared mutex ---- */

#define COND_WORDS 256              /* a power of 2; sharing one only adds wake-ups */
#define COND_POLL_MIN_NS 50000L
#define COND_POLL_MAX_NS 5000000L

static uint32_t cond_word[COND_WORDS];
static uint32_t cond_sleepers[COND_WORDS];      /* threads in a futex wait on the word */
static __thread long cond_poll_ns;  /* this thread's next sleep without a local wake */

static uint32_t *word_of(const pthread_cond_t *c)
{
    uintptr_t a = (uintptr_t)c;
    return &cond_word[(a >> 4 ^ a >> 12) & (COND_WORDS - 1)];
}

/* Every signal of the process comes here (the shim's own team included),
 * so one with no sleeper of the shim's costs a load.  A sleeper counts
 * itself while it holds the mutex, before it reads the word: a waker that
 * holds the mutex sees the count; one that does not and sees no sleeper
 * signalled before that wait began, which POSIX lets go unseen.  A waker
 * that sees a sleeper changes the word, and the sleeper's futex wait either
 * finds it changed or is woken. */
static void wake_local(const pthread_cond_t *c)
{
    uint32_t *w = word_of(c);
    if (!__atomic_load_n(&cond_sleepers[w - cond_word], __ATOMIC_SEQ_CST))
        return;
    __atomic_fetch_add(w, 1, __ATOMIC_SEQ_CST);
    int saved = errno;
    syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
    errno = saved;
}

static long ns_until(clockid_t clk, const struct timespec *t)
{
    struct timespec now;
    clock_gettime(clk, &now);
    return (long)(t->tv_sec - now.tv_sec) * 1000000000L + (t->tv_nsec - now.tv_nsec);
}

/* Unlock m, sleep until a signal on this rank, the poll timeout or the
 * deadline t (on clock clk; NULL: none), lock m again.  ETIMEDOUT once t
 * has passed. */
static int cond_wait_shared(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                            const struct timespec *t)
{
    uint32_t *w = word_of(c), *sleepers = &cond_sleepers[w - cond_word];
    long ns = cond_poll_ns ? cond_poll_ns : COND_POLL_MIN_NS, left = 0;

    if (t && (t->tv_nsec < 0 || t->tv_nsec >= 1000000000L))
        return EINVAL;
    if (t && (left = ns_until(clk, t)) <= 0)
        return ETIMEDOUT;
    /* Read under the mutex: a signal after our unlock changes it. */
    __atomic_fetch_add(sleepers, 1, __ATOMIC_SEQ_CST);
    uint32_t seen = __atomic_load_n(w, __ATOMIC_SEQ_CST);
    int rc = pthread_mutex_unlock(m);
    if (rc != 0) {
        __atomic_fetch_sub(sleepers, 1, __ATOMIC_SEQ_CST);
        return rc;
    }
    if (t && left < ns)
        ns = left;
    struct timespec ts = { ns / 1000000000L, ns % 1000000000L };
    int saved = errno;
    long r = syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
    int timed_out = r != 0 && errno == ETIMEDOUT;
    errno = saved;
    __atomic_fetch_sub(sleepers, 1, __ATOMIC_SEQ_CST);
    /* Woken on this rank: short sleeps again; timed out: longer ones. */
    cond_poll_ns = !timed_out ? COND_POLL_MIN_NS
                 : ns * 2 < COND_POLL_MAX_NS ? ns * 2 : COND_POLL_MAX_NS;
    pthread_mutex_lock(m);
    return t && ns_until(clk, t) <= 0 ? ETIMEDOUT : 0;
}

/* The clock a condition variable's timed wait uses: glibc keeps it in a
 * bit of __wrefs (pthread_condattr_setclock). */
static clockid_t cond_clock(const pthread_cond_t *c)
{
    return (c->__data.__wrefs & 2) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

SHIM_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    SHIM_REAL(pthread_cond_wait);
    if (shared_mutex(m))
        return cond_wait_shared(c, m, CLOCK_REALTIME, NULL);
    return real_pthread_cond_wait(c, m);
}

SHIM_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                       const struct timespec *t)
{
    SHIM_REAL(pthread_cond_timedwait);
    if (shared_mutex(m))
        return cond_wait_shared(c, m, cond_clock(c), t);
    return real_pthread_cond_timedwait(c, m, t);
}

SHIM_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                                       const struct timespec *t)
{
    SHIM_REAL(pthread_cond_clockwait);
    if (shared_mutex(m)) {
        if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC)
            return EINVAL;
        return cond_wait_shared(c, m, clk, t);
    }
    return real_pthread_cond_clockwait(c, m, clk, t);
}

/* Both wake this rank's sleepers of the shim's waits (all of them: a
 * spurious wake-up is allowed) and the C library's waiters. */
SHIM_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
    SHIM_REAL(pthread_cond_signal);
    wake_local(c);
    return real_pthread_cond_signal(c);
}

SHIM_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
    SHIM_REAL(pthread_cond_broadcast);
    wake_local(c);
    return real_pthread_cond_broadcast(c);
}
