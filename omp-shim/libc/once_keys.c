/*
 * once_keys.c - pthread_once and thread-specific data keys whose control
 * word or key variable is in shared memory.
 *
 * The libraries' global variables are shared (applibs.c), and with them
 * their pthread_once_t and pthread_key_t variables; but what those name
 * lives in one process.  GNU gettext's msgmerge (gnulib's fstrcmp) makes a
 * key once and then sets a value under it in every thread: the rank that
 * had not run the once function set a value under a key its process never
 * made, pthread_setspecific failed, and gnulib called abort().  So in a run:
 *   - pthread_once on a control word in the region runs the function once
 *     in the whole job, under a DSM lock of its own (the word holds
 *     SHIM_WORD_TAG | lock id + 1 until the function has returned, then
 *     glibc's "done", 2); a thread that finds it done acquires the
 *     shim's once lock, which the runner released after writing "done",
 *     so the function's writes are visible to it; each process remembers
 *     the words it found done, so later calls cost nothing;
 *   - pthread_key_create into a variable in the region gives a job-wide
 *     number, VKEY_BASE + index (index from a counter at node 0, the
 *     destructor in a table beside it), and each process makes its own
 *     key for it at its first use there; pthread_getspecific,
 *     pthread_setspecific and pthread_key_delete translate such numbers
 *     (any other key goes to the C library at the cost of one compare).
 * Before the start and after the end of the run, everything goes to the C
 * library; a word left done (2) stays done for it.
 *
 * Threads: any.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "shim.h"

#define ONCE_DONE 2u                /* glibc's value of a finished pthread_once_t */
#define VKEY_BASE 0x40000000u       /* job-wide keys; the C library's are < 1024 */

/* ---- pthread_once ---- */

/* Words this process found done, so that it acquired the runner's writes.
 * An open-addressed set: a word is never removed. */
#define DONE_SLOTS 1024
static uintptr_t done_set[DONE_SLOTS];
static pthread_mutex_t done_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t slot_of(uintptr_t a)
{
    return (size_t)((a >> 2) * 0x9e3779b97f4a7c15ull >> 54) % DONE_SLOTS;
}

static int known_done(const void *w)
{
    uintptr_t a = (uintptr_t)w;
    for (size_t i = slot_of(a), k = 0; k < DONE_SLOTS; i = (i + 1) % DONE_SLOTS, k++) {
        uintptr_t v = __atomic_load_n(&done_set[i], __ATOMIC_ACQUIRE);
        if (v == a)
            return 1;
        if (!v)
            return 0;
    }
    return 0;
}

static void remember_done(const void *w)
{
    uintptr_t a = (uintptr_t)w;
    pthread_mutex_lock(&done_mu);
    for (size_t i = slot_of(a), k = 0; k < DONE_SLOTS; i = (i + 1) % DONE_SLOTS, k++) {
        if (done_set[i] == a)
            break;
        if (!done_set[i]) {
            __atomic_store_n(&done_set[i], a, __ATOMIC_RELEASE);
            break;
        }
    }
    /* A full set only costs the lock round trip below at every call. */
    pthread_mutex_unlock(&done_mu);
}

/* The word's value at its home. */
static uint32_t home_word(uint32_t *w)
{
    return (uint32_t)dsm__atomic(w, DSM_AOP_LOAD, 4, 0, 0, 0, 0, NULL);
}

/* Found done: take and give back the once lock, under which the runner
 * wrote "done" after its function returned, for the function's writes. */
static void acquire_done(uint32_t *w)
{
    dsm_lock_acquire(SHIM_LOCK_ONCE);
    dsm_lock_release(SHIM_LOCK_ONCE);
    if (*(volatile uint32_t *)w != ONCE_DONE)
        *(volatile uint32_t *)w = ONCE_DONE;
    remember_done(w);
}

static int shared_once(pthread_once_t *c, void (*fn)(void))
{
    uint32_t *w = (uint32_t *)(void *)c;
    uint32_t v;

    if (known_done(w))
        return 0;
    v = home_word(w);
    if (v == ONCE_DONE) {
        acquire_done(w);
        return 0;
    }
    if (!(v & SHIM_WORD_TAG)) {
        /* Give the word a DSM lock of its own (as a mutex gets, mutex.c). */
        v = shim_word_tag(w, v);
        if (v == ONCE_DONE) {
            acquire_done(w);
            return 0;
        }
        if (!(v & SHIM_WORD_TAG))
            dsm__fatal("pthread_once(%p): its control word is %#x, neither new, nor "
                       "taken by the shim, nor done; is it written by other code?",
                       (void *)c, v);
    }
    int id = (int)(v & ~SHIM_WORD_TAG) - 1;
    dsm_lock_acquire(id);
    if (home_word(w) != ONCE_DONE) {
        fn();
        dsm_lock_acquire(SHIM_LOCK_ONCE);
        dsm__atomic(w, DSM_AOP_STORE, 4, ONCE_DONE, 0, 0, 0, NULL);
        *(volatile uint32_t *)w = ONCE_DONE;   /* this copy too (see shim_word_tag) */
        dsm_lock_release(SHIM_LOCK_ONCE);
    } else if (*(volatile uint32_t *)w != ONCE_DONE) {
        *(volatile uint32_t *)w = ONCE_DONE;
    }
    dsm_lock_release(id);
    remember_done(w);
    return 0;
}

SHIM_EXPORT int pthread_once(pthread_once_t *c, void (*fn)(void))
{
    SHIM_REAL(pthread_once);
    if (!shim.active || !dsm_rt_in_region(c))
        return real_pthread_once(c, fn);
    return shared_once(c, fn);
}

/* ---- keys ---- */

/* This process's key for each job-wide key index (0: not made here yet). */
static pthread_key_t local_key[SHIM_MAX_KEYS];
static unsigned char local_made[SHIM_MAX_KEYS];
static pthread_mutex_t key_mu = PTHREAD_MUTEX_INITIALIZER;

static int vkey_index(pthread_key_t k)
{
    if (k < VKEY_BASE || k >= VKEY_BASE + SHIM_MAX_KEYS)
        return -1;
    return (int)(k - VKEY_BASE);
}

/* This process's key for index i, made at its first use here. */
static int local_of(int i, pthread_key_t *out)
{
    SHIM_REAL(pthread_key_create);
    if (__atomic_load_n(&local_made[i], __ATOMIC_ACQUIRE)) {
        *out = local_key[i];
        return 0;
    }
    pthread_mutex_lock(&key_mu);
    if (!local_made[i]) {
        void (*dtor)(void *) = (void (*)(void *))(uintptr_t)
            dsm__atomic(&shim.ctl->key_dtor[i], DSM_AOP_LOAD, 8, 0, 0, 0, 0, NULL);
        int rc = real_pthread_key_create(&local_key[i], dtor);
        if (rc) {
            pthread_mutex_unlock(&key_mu);
            return rc;
        }
        __atomic_store_n(&local_made[i], 1, __ATOMIC_RELEASE);
    }
    *out = local_key[i];
    pthread_mutex_unlock(&key_mu);
    return 0;
}

SHIM_EXPORT int pthread_key_create(pthread_key_t *k, void (*dtor)(void *))
{
    SHIM_REAL(pthread_key_create);
    if (!shim.active || !dsm_rt_in_region(k))
        return real_pthread_key_create(k, dtor);
    uint64_t i = dsm__atomic(&shim.ctl->next_key, DSM_AOP_FETCH_ADD, 8, 1, 0, 0, 0, NULL);
    if (i >= SHIM_MAX_KEYS)
        return EAGAIN;              /* as the C library when out of keys */
    dsm__atomic(&shim.ctl->key_dtor[i], DSM_AOP_STORE, 8, (uint64_t)(uintptr_t)dtor,
                0, 0, 0, NULL);
    pthread_key_t lk;
    int rc = local_of((int)i, &lk);
    if (rc)
        return rc;
    *k = VKEY_BASE + (pthread_key_t)i;
    return 0;
}

SHIM_EXPORT void *pthread_getspecific(pthread_key_t k)
{
    SHIM_REAL(pthread_getspecific);
    int i = vkey_index(k);
    pthread_key_t lk;
    if (i < 0)
        return real_pthread_getspecific(k);
    if (local_of(i, &lk))
        return NULL;
    return real_pthread_getspecific(lk);
}

SHIM_EXPORT int pthread_setspecific(pthread_key_t k, const void *v)
{
    SHIM_REAL(pthread_setspecific);
    int i = vkey_index(k);
    pthread_key_t lk;
    if (i < 0)
        return real_pthread_setspecific(k, v);
    int rc = local_of(i, &lk);
    return rc ? rc : real_pthread_setspecific(lk, v);
}

SHIM_EXPORT int pthread_key_delete(pthread_key_t k)
{
    SHIM_REAL(pthread_key_delete);
    int i = vkey_index(k);
    if (i < 0)
        return real_pthread_key_delete(k);
    /* This process's key; the index is not reused. */
    pthread_mutex_lock(&key_mu);
    int rc = local_made[i] ? real_pthread_key_delete(local_key[i]) : 0;
    local_made[i] = 0;
    pthread_mutex_unlock(&key_mu);
    return rc;
}
