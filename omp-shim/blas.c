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
 * Threads: shim_blas_one_thread on the main thread of every rank
 * (start-up, dlopen.c's join); goto_set_num_threads on any.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "shim.h"

static int one_thread(void)
{
    return shim.nodes > 1;      /* 0 before start-up, and on one rank */
}

SHIM_EXPORT void goto_set_num_threads(int n)
{
    static void (*real)(int);
    if (!real)
        real = (void (*)(int))dlsym(RTLD_NEXT, "goto_set_num_threads");
    if (real)
        real(one_thread() ? 1 : n);
}

void shim_blas_one_thread(void)
{
    /* OpenBLAS: void f(int); BLIS: void f(dim_t), a 64-bit integer. */
    void (*openblas)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    void (*blis)(long) = (void (*)(long))dlsym(RTLD_DEFAULT, "bli_thread_set_num_threads");

    if (!one_thread())
        return;
    if (openblas)
        openblas(1);
    if (blis)
        blis(1);
}
