/*
 * guard.c - C++ function-local statics whose guard is in shared memory:
 * __cxa_guard_acquire, __cxa_guard_release and __cxa_guard_abort.
 *
 * g++ guards "static T x = ...;" in a function with a 64-bit word next to
 * x: its first byte says "made", read inline before any call; the C++
 * runtime's __cxa_guard_acquire makes one thread the constructor and puts
 * the others to sleep on a futex on the word's first int until
 * __cxa_guard_release.  Under the shim that word is in the DSM, one copy
 * per rank: each rank's runtime saw its own copy, so every rank built the
 * object (a constructor with side effects ran once per rank), and a thread
 * asleep on one rank's futex was never woken by a release on another (the
 * tests/omp cxx_local_static hang).  So in a run, for a guard in the region:
 *   - the second int of the word (unused by libstdc++, which keeps its
 *     state in the first) takes a DSM lock of its own (SHIM_WORD_TAG |
 *     lock id + 1, as a mutex word does, locks.c), and the thread that
 *     takes that lock and finds the first byte still 0 at the home
 *     constructs the object: exactly one in the job;
 *   - release writes the object to the homes first (by taking and giving
 *     back the shim's once lock), then "made" at the home, and gives the
 *     guard's lock back; a thread that finds
 *     "made" at the home takes and gives back the once lock, for the
 *     constructor's writes; either way this rank's copy of the first byte
 *     becomes 1, so that its later calls take the compiler's inline path;
 *   - a constructor that reaches its own guard again (libstdc++ throws
 *     recursive_init_error) stops the job with a message instead of
 *     waiting for itself.
 * Outside a run, or for a guard outside the region (a library's own
 * statics), the C++ runtime does it all.
 *
 * Threads: any thread of the program.
 */
#define _GNU_SOURCE
#include <stdint.h>

#include "shim.h"

int __cxa_guard_acquire(int64_t *g);
void __cxa_guard_release(int64_t *g);
void __cxa_guard_abort(int64_t *g);

/* The guards this thread is constructing under their locks, innermost
 * last: a constructor may reach other local statics. */
#define GUARD_DEPTH 32
static __thread int64_t *held_guard[GUARD_DEPTH];
static __thread int held_lock[GUARD_DEPTH];
static __thread int held_n;

static int held_index(const int64_t *g)
{
    for (int i = held_n - 1; i >= 0; i--)
        if (held_guard[i] == g)
            return i;
    return -1;
}

static uint32_t home_u32(uint32_t *w)
{
    return (uint32_t)dsm__atomic(w, DSM_AOP_LOAD, 4, 0, 0, 0, 0, NULL);
}

static void mark_made_here(int64_t *g)
{
    if (*(volatile uint8_t *)g != 1)
        *(volatile uint8_t *)g = 1;
}

/* Made by another thread: its writes come with the once lock. */
static int found_made(int64_t *g)
{
    dsm_lock_acquire(SHIM_LOCK_ONCE);
    dsm_lock_release(SHIM_LOCK_ONCE);
    mark_made_here(g);
    return 0;
}

static int guard_lock_id(int64_t *g)
{
    uint32_t *tag = (uint32_t *)(void *)g + 1;
    uint32_t v = home_u32(tag);
    if (!(v & SHIM_WORD_TAG))
        v = shim_word_tag(tag, v);
    if (!(v & SHIM_WORD_TAG))
        dsm__fatal("a C++ local static's guard at %p holds %#x in its second half, "
                   "which the shim uses for the guard's lock; is the guard written by "
                   "code other than the C++ runtime?", (void *)g, v);
    return (int)(v & ~SHIM_WORD_TAG) - 1;
}

SHIM_EXPORT int __cxa_guard_acquire(int64_t *g)
{
    SHIM_REAL(__cxa_guard_acquire);
    if (!shim.active || !dsm_rt_in_region(g))
        return real___cxa_guard_acquire(g);
    if (__atomic_load_n((uint8_t *)g, __ATOMIC_ACQUIRE))
        return 0;
    if (held_index(g) >= 0)
        dsm__fatal("a C++ local static's initialiser reached its own declaration again "
                   "(guard at %p): recursive initialisation, which C++ leaves undefined "
                   "and libstdc++ reports by throwing recursive_init_error", (void *)g);
    if (home_u32((uint32_t *)(void *)g) & 0xff)
        return found_made(g);
    if (held_n == GUARD_DEPTH)
        dsm__fatal("more than %d C++ local statics are being initialised inside each "
                   "other's initialisers in one thread; the shim keeps at most %d",
                   GUARD_DEPTH, GUARD_DEPTH);
    int id = guard_lock_id(g);
    dsm_lock_acquire(id);
    if (home_u32((uint32_t *)(void *)g) & 0xff) {
        /* Another thread made it while this one waited: its writes came
         * with the lock. */
        dsm_lock_release(id);
        mark_made_here(g);
        return 0;
    }
    held_guard[held_n] = g;
    held_lock[held_n++] = id;
    return 1;
}

static int take_held(int64_t *g)
{
    int i = held_index(g);
    if (i < 0)
        return -1;
    int id = held_lock[i];
    for (int k = i; k + 1 < held_n; k++) {
        held_guard[k] = held_guard[k + 1];
        held_lock[k] = held_lock[k + 1];
    }
    held_n--;
    return id;
}

SHIM_EXPORT void __cxa_guard_release(int64_t *g)
{
    SHIM_REAL(__cxa_guard_release);
    int id = take_held(g);
    if (id < 0) {
        /* Acquired by the C++ runtime (before the run, or outside it). */
        real___cxa_guard_release(g);
        return;
    }
    /* The object at its homes (the once lock's release) before anyone can
     * see "made"; a thread that sees it takes the once lock after that. */
    dsm_lock_acquire(SHIM_LOCK_ONCE);
    dsm_lock_release(SHIM_LOCK_ONCE);
    dsm__atomic((uint32_t *)(void *)g, DSM_AOP_STORE, 4, 1, 0, 0, 0, NULL);
    mark_made_here(g);
    dsm_lock_release(id);
}

SHIM_EXPORT void __cxa_guard_abort(int64_t *g)
{
    SHIM_REAL(__cxa_guard_abort);
    int id = take_held(g);
    if (id < 0) {
        real___cxa_guard_abort(g);
        return;
    }
    /* The initialiser threw: not made, the next caller tries again. */
    dsm_lock_release(id);
}
