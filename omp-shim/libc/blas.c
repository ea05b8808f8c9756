/*
 * blas.c - a BLAS library's own threads: one per call.
 *
 * OpenBLAS's pthread build (Debian's libopenblas0-pthread, which takes over
 * libblas.so.3 when installed) starts its worker threads from a
 * constructor on every rank and keeps their queue, mutexes and condition
 * variables in its global variables.  Those are private to each rank
 * (applibs.c).  When they were shared, a worker that went to sleep in the
 * C library's pthread_cond_wait before the run, on a mutex that the run
 * then locked as a DSM lock, never woke: gretl's and R's first threaded
 * matrix product hung.  Its workers would also be threads of the program
 * that the shim does not run (libdsm(7), THREADS), on cores the ranks
 * already fill.  So on a job of several ranks the shim gives OpenBLAS one
 * thread: at start-up on every rank, after a dlopen that brings it, and
 * whenever the program asks for more (gretl asks at start-up for as many
 * as OpenMP has): goto_set_num_threads, which OpenBLAS's
 * openblas_set_num_threads calls through its PLT, is the shim's.  Each BLAS call then runs in the thread that makes it, as with
 * the reference BLAS, and the program's parallel regions still spread its
 * calls over the ranks (ompshim(7), LIMITS).  BLIS is asked for one thread
 * at start-up too.
 *
 * A library loaded with dlopen without RTLD_GLOBAL is not in the global
 * scope: dlsym(RTLD_DEFAULT) does not find it, and neither does
 * RTLD_NEXT from the shim.  So after such a load the shim looks in the
 * loaded object itself, and keeps the object's goto_set_num_threads for
 * its own to call (the caller's address would not do: OpenBLAS's
 * openblas_set_num_threads jumps to it as a tail call).
 *
 * Threads: shim_blas_one_thread on the main thread of every rank
 * (start-up, dlopen.c's join); goto_set_num_threads on any.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "shim.h"

typedef void set_fn(int);

SHIM_EXPORT void goto_set_num_threads(int n);

/* OpenBLAS's goto_set_num_threads in an object loaded with dlopen outside
 * the global scope (shim_blas_one_thread; the last such OpenBLAS). */
static set_fn *local_goto;

/* OpenBLAS's goto_set_num_threads: the definition after the shim's in the
 * global scope, or else the one of an OpenBLAS loaded with dlopen. */
static set_fn *real_goto(void)
{
    static set_fn *global;

    if (!global)
        global = (set_fn *)dlsym(RTLD_NEXT, "goto_set_num_threads");
    return global ? global : __atomic_load_n(&local_goto, __ATOMIC_ACQUIRE);
}

static int one_thread(void)
{
    return shim.nodes > 1;      /* 0 before start-up, and on one rank */
}

SHIM_EXPORT void goto_set_num_threads(int n)
{
    set_fn *real = real_goto();
    if (real)
        real(one_thread() ? 1 : n);
}

void shim_blas_one_thread(void *scope)
{
    /* OpenBLAS: void f(int); BLIS: void f(dim_t), a 64-bit integer. */
    set_fn *openblas = (set_fn *)dlsym(scope, "openblas_set_num_threads");
    void (*blis)(long) = (void (*)(long))dlsym(scope, "bli_thread_set_num_threads");

    if (!one_thread())
        return;
    if (openblas && scope != RTLD_DEFAULT) {
        /* Its own, found first in its own scope; not the shim's. */
        set_fn *own = (set_fn *)dlsym(scope, "goto_set_num_threads");
        if (own && own != goto_set_num_threads)
            __atomic_store_n(&local_goto, own, __ATOMIC_RELEASE);
    }
    if (openblas)
        openblas(1);
    if (blis)
        blis(1);
}
