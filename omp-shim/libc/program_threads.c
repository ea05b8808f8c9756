/*
 * program_threads.c - threads the program starts itself.
 *
 * Only rank 0 runs the program's sequential code, so a thread the program
 * starts with pthread_create (cdo's operator threads, FFTW's thread pool in
 * bart, std::thread) lives on rank 0, or on the rank whose region body
 * started it, and takes no part in the DSM barriers that the initial
 * thread's parallel regions start and end with: it may write shared memory
 * and lock mutexes (DSM locks) while one runs.  libdsm copes with such
 * bystanders (barrier.c) once told: the first pthread_create of the run that
 * does not come from the shim itself (its OpenMP helpers) or from libdsm
 * (communication and service threads) tells it, and from the next barrier on
 * no page of the heap or of the globals moves its home to its first writer
 * (ompshim(7), LIMITS).  C11's thrd_create calls glibc's own entry point,
 * not pthread_create's symbol, so it is caught here too.  A thread started
 * with clone directly is not seen.
 *
 * Threads: any.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <threads.h>

#include "shim.h"

/* Whether code address pc is in libompshim.so (libdsm is part of it). */
static int from_shim(const void *pc)
{
    static void *own_base;
    Dl_info self, caller;
    if (!own_base && dladdr((const void *)&from_shim, &self))
        own_base = self.dli_fbase;
    return own_base && dladdr(pc, &caller) && caller.dli_fbase == own_base;
}

void shim_program_threads(void)
{
    if (shim.active)
        dsm__barrier_bystanders();
}

/* A thread is about to be started by code at pc. */
static void starting_thread(const void *pc)
{
    if (shim.active && !from_shim(pc))
        shim_program_threads();
}

SHIM_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                               void *(*fn)(void *), void *arg)
{
    SHIM_REAL(pthread_create);
    starting_thread(__builtin_return_address(0));
    return real_pthread_create(th, attr, fn, arg);
}

SHIM_EXPORT int thrd_create(thrd_t *th, thrd_start_t fn, void *arg)
{
    SHIM_REAL(thrd_create);
    starting_thread(__builtin_return_address(0));
    return real_thrd_create(th, fn, arg);
}
