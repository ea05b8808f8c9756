/*
 * libc.c - finds the C library's own pthread functions for libdsm (libc.h
 * says why and which).  glibc exports no second name for them, so they are
 * looked up by name in the C library's handle (glibc before 2.34: in
 * libpthread's too), which holds glibc's definitions whoever else defines
 * the same names (the shim, the program).
 *
 * Threads: the constructor, before main and before any thread of libdsm's;
 * or, when a constructor of another library calls into libdsm before this
 * one ran, that caller (start-up: the only thread).  A second bind writes
 * the same values.  Never the fault handler: dlopen and dlsym are not
 * async-signal-safe, and libdsm installs its handler after the constructor.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libc.h"

#ifdef DSM_LIBC_THREADS
struct dsm_libc_threads dsm__libc_threads;

/* No dsm__fatal here (the pure library has no MPI): say it and stop. */
static void no_libc(const char *name)
{
    char msg[256];
    int n = snprintf(msg, sizeof msg, "libdsm: cannot find %s in the C library (%s); "
                     "libdsm needs glibc, dynamically linked\n", name, LIBC_SO);
    if (n > 0 && __write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1) < 0) {
        /* nowhere else to say it */
    }
    abort();
}

static void *find(void *libc, void *libpthread, const char *name)
{
    void *f = libc ? dlsym(libc, name) : NULL;
    if (!f && libpthread)
        f = dlsym(libpthread, name);
    if (!f)
        no_libc(name);
    return f;
}

__attribute__((constructor(101)))
void dsm__libc_bind(void)
{
    /* RTLD_NOLOAD: both are loaded already (libdsm needs them); the
     * handles are kept, as the libraries stay anyway. */
    void *libc = dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
    void *libpthread = dlopen(LIBPTHREAD_SO, RTLD_LAZY | RTLD_NOLOAD);
    struct dsm_libc_threads *t = &dsm__libc_threads;
#define DSM_LIBC_FIND(name, ret, params) t->name = (ret (*) params)find(libc, libpthread, #name);
    DSM_LIBC_THREADS(DSM_LIBC_FIND)
#undef DSM_LIBC_FIND
    /* Release: a thread that sees .bound sees the pointers above. */
    __atomic_store_n(&t->bound, 1, __ATOMIC_RELEASE);
}
#endif
