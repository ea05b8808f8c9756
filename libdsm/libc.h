/*
 * libc.h - how libdsm calls the C library and POSIX threads: glibc's own
 * entry points, never a definition that interposes glibc's name.
 *
 * libompshim.so carries libdsm inside, and defines malloc, free, write,
 * sigaction, pthread_mutex_lock, pthread_create, ... for the program
 * (omp-shim/libc/heap.c, syscalls.c, signals.c, mutex.c, program_threads.c).  A
 * call of libdsm's to such a name binds, like any call to a global name, to
 * the first definition in the process: the shim's wrapper, or the program's
 * own function of that name.  The wrapper passes a call from libdsm on to
 * the C library, but only after its own checks (a page lock would pay the
 * shim's shared-memory check on every fault), and a program's own function
 * would run on libdsm's threads.  So every file of libdsm includes this
 * header (dsm_internal.h does; the pure files include it themselves) and
 * keeps calling the plain names, which the macros below send to glibc:
 *
 *   malloc calloc realloc free    glibc's exported allocator entry points
 *   aligned_alloc                 (__libc_malloc ...; aligned_alloc is
 *                                 __libc_memalign), bound by the linker.
 *                                 The same private heap the shim's malloc
 *                                 gives libdsm's calls, so memory may pass
 *                                 between the shim and libdsm either way;
 *                                 never free here what the program allocated.
 *   write sigaction signal        glibc's second exported names of the same
 *                                 functions (__write, __sigaction,
 *                                 bsd_signal), bound by the linker.
 *   sigaltstack                   the system call, as glibc makes it.
 *   pthread_create, mutex init    glibc exports no second name for these,
 *   destroy lock trylock unlock,  and a versioned reference does not help
 *   cond wait signal              (the shim's definitions keep the base
 *                                 version, which matches every version, and
 *                                 the linker binds such a reference to the
 *                                 definition in the same library): looked up
 *                                 once in the C library's own handle, by a
 *                                 constructor that runs before any other of
 *                                 the library's (libc.c); a call before it
 *                                 binds them first.
 *
 * tests/shim/libc_bound.sh fails while libdsm's objects refer to a name that
 * libompshim.so defines: a call of libdsm's to a new such name needs a line
 * here.  Other names (open, read, close, ...) go to the first definition
 * too, which may be the program's own (ntcard defines open): where that
 * matters, on libdsm's threads, libdsm makes the system call itself
 * (trace.c, watchdog.c).  A sanitizer build keeps the plain names, so that AddressSanitizer
 * and ThreadSanitizer see libdsm's memory and locks.
 *
 * Threads: any, the fault handler included: after the constructor, every
 * binding is a direct call of glibc's function.
 */
#ifndef DSM_LIBC_H
#define DSM_LIBC_H

/* Every header that declares a name bound here comes first, so that a file
 * that includes one of them again afterwards sees only its include guard. */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dsm_pure.h"

/* GCC says which sanitizer with these macros, clang with __has_feature. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DSM_LIBC_SANITIZED 1
#endif
#endif
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && !defined(DSM_LIBC_SANITIZED)

/* glibc's exported second names (GLIBC_2.2.5, the default version). */
extern void *__libc_malloc(size_t n) __attribute__((malloc, alloc_size(1)));
extern void *__libc_calloc(size_t k, size_t n) __attribute__((malloc, alloc_size(1, 2)));
extern void *__libc_realloc(void *p, size_t n) __attribute__((alloc_size(2)));
extern void *__libc_memalign(size_t align, size_t n) __attribute__((malloc, alloc_size(2)));
extern void __libc_free(void *p);
extern ssize_t __write(int fd, const void *buf, size_t n);
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
extern void (*bsd_signal(int sig, void (*handler)(int)))(int);

/* The pthread functions, as found in the C library (libc.c): one line each,
 * X(name, return type, parameters). */
#define DSM_LIBC_THREADS(X) \
    X(pthread_create, int, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)) \
    X(pthread_mutex_init, int, (pthread_mutex_t *, const pthread_mutexattr_t *)) \
    X(pthread_mutex_destroy, int, (pthread_mutex_t *)) \
    X(pthread_mutex_lock, int, (pthread_mutex_t *)) \
    X(pthread_mutex_trylock, int, (pthread_mutex_t *)) \
    X(pthread_mutex_unlock, int, (pthread_mutex_t *)) \
    X(pthread_cond_wait, int, (pthread_cond_t *, pthread_mutex_t *)) \
    X(pthread_cond_signal, int, (pthread_cond_t *))

#define DSM_LIBC_FIELD(name, ret, params) ret (*name) params;
struct dsm_libc_threads {
    int bound;                       /* set last, with release order */
    DSM_LIBC_THREADS(DSM_LIBC_FIELD)
};
#undef DSM_LIBC_FIELD
extern struct dsm_libc_threads dsm__libc_threads DSM_HIDDEN;
/* libc.c: fill dsm__libc_threads (the constructor; again is harmless). */
DSM_HIDDEN void dsm__libc_bind(void);

/* The table, bound: the acquire load pairs with dsm__libc_bind's release
 * store of .bound, so that the function pointers it wrote are seen. */
static inline const struct dsm_libc_threads *dsm__libc_thr(void)
{
    if (__builtin_expect(!__atomic_load_n(&dsm__libc_threads.bound, __ATOMIC_ACQUIRE), 0))
        dsm__libc_bind();
    return &dsm__libc_threads;
}

static inline int dsm__libc_sigaltstack(const stack_t *ss, stack_t *old)
{
    return (int)syscall(SYS_sigaltstack, ss, old);
}

/* Function-like, so that only calls change: struct sigaction, a member
 * named free and a pointer to a function keep their meaning. */
#define malloc(n)                   __libc_malloc(n)
#define calloc(k, n)                __libc_calloc(k, n)
#define realloc(p, n)               __libc_realloc(p, n)
#define free(p)                     __libc_free(p)
#define aligned_alloc(a, n)         __libc_memalign(a, n)
#define write(fd, b, n)             __write(fd, b, n)
#define sigaction(s, a, o)          __sigaction(s, a, o)
#define signal(s, h)                bsd_signal(s, h)
#define sigaltstack(s, o)           dsm__libc_sigaltstack(s, o)
#define pthread_create(t, a, f, p)  (dsm__libc_thr()->pthread_create(t, a, f, p))
#define pthread_mutex_init(m, a)    (dsm__libc_thr()->pthread_mutex_init(m, a))
#define pthread_mutex_destroy(m)    (dsm__libc_thr()->pthread_mutex_destroy(m))
#define pthread_mutex_lock(m)       (dsm__libc_thr()->pthread_mutex_lock(m))
#define pthread_mutex_trylock(m)    (dsm__libc_thr()->pthread_mutex_trylock(m))
#define pthread_mutex_unlock(m)     (dsm__libc_thr()->pthread_mutex_unlock(m))
#define pthread_cond_wait(c, m)     (dsm__libc_thr()->pthread_cond_wait(c, m))
#define pthread_cond_signal(c)      (dsm__libc_thr()->pthread_cond_signal(c))

#endif /* not a sanitizer build */
#endif
