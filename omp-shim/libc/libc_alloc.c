/*
 * libc_alloc.c - C library functions that return memory for the caller to
 * free: strdup, strndup, asprintf, vasprintf (and their _FORTIFY_SOURCE
 * forms), getline, getdelim (and __getdelim, what <stdio.h> makes of
 * getline), realpath and getcwd with a null buffer.  realpath and getcwd
 * also take a buffer in shared memory, which their system calls could not
 * write (EFAULT).
 *
 * The C library allocates that memory with its own internal malloc, which
 * the shim's malloc (heap.c) does not see, so a string the program gets from
 * strdup would be private to the rank that made it.  Called from the
 * program's code (applibs.c), these allocate in the shared heap, as the
 * program's own malloc would (before main, from the executable's
 * constructors: in the pre-main arena, premain_heap.c); called from
 * anywhere else, or during start-up, they behave as the C library's.
 *
 * Threads: any.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "shim.h"


static void *alloc_as(size_t n, int program)
{
    return program ? shim_dsm_malloc(n, 16) : __libc_malloc(n);
}

static char *dup_as(const char *s, size_t n, int program)
{
    char *p = alloc_as(n + 1, program);
    if (!p) {
        errno = ENOMEM;
        return NULL;
    }
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

SHIM_EXPORT char *strdup(const char *s)
{
    return dup_as(s, strlen(s), shim_alloc_is_program(__builtin_return_address(0)));
}

SHIM_EXPORT char *strndup(const char *s, size_t n)
{
    return dup_as(s, strnlen(s, n), shim_alloc_is_program(__builtin_return_address(0)));
}

/* ---- asprintf ---- */

static int vasprintf_as(char **out, const char *fmt, va_list ap, int program)
{
    char small[256];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        va_end(again);
        return -1;
    }
    char *p = alloc_as((size_t)n + 1, program);
    if (!p) {
        va_end(again);
        errno = ENOMEM;
        return -1;
    }
    if ((size_t)n < sizeof small)
        memcpy(p, small, (size_t)n + 1);
    else
        vsnprintf(p, (size_t)n + 1, fmt, again);
    va_end(again);
    *out = p;
    return n;
}

SHIM_EXPORT int vasprintf(char **out, const char *fmt, va_list ap)
{
    return vasprintf_as(out, fmt, ap, shim_alloc_is_program(__builtin_return_address(0)));
}

SHIM_EXPORT int asprintf(char **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf_as(out, fmt, ap, shim_alloc_is_program(__builtin_return_address(0)));
    va_end(ap);
    return n;
}

/* What -D_FORTIFY_SOURCE turns asprintf into; flag asks for %n checks, which
 * vsnprintf does not make: the format is the program's either way. */
SHIM_EXPORT int __vasprintf_chk(char **out, int flag, const char *fmt, va_list ap)
{
    (void)flag;
    return vasprintf_as(out, fmt, ap, shim_alloc_is_program(__builtin_return_address(0)));
}

SHIM_EXPORT int __asprintf_chk(char **out, int flag, const char *fmt, ...)
{
    va_list ap;
    (void)flag;
    va_start(ap, fmt);
    int n = vasprintf_as(out, fmt, ap, shim_alloc_is_program(__builtin_return_address(0)));
    va_end(ap);
    return n;
}

/* ---- the C library's own functions, behind ours ---- */

void *shim_libc_fn(void **cache, const char *name)
{
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        if (!f)
            dsm__fatal("libompshim: the C library's %s was not found", name);
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    }
    return f;
}

/* ---- getline ---- */

static ssize_t getdelim_shared(char **line, size_t *cap, int delim, FILE *f)
{
    size_t len = 0;
    int c = EOF;

    if (!line || !cap || !f) {
        errno = EINVAL;
        return -1;
    }
    if (!*line)
        *cap = 0;
    flockfile(f);
    for (;;) {
        if (len + 2 > *cap) {
            size_t nc = *cap < 120 ? 120 : *cap * 2;
            char *p = shim_realloc_as(*line, nc, 1);
            if (!p) {
                funlockfile(f);
                errno = ENOMEM;
                return -1;
            }
            *line = p;
            *cap = nc;
        }
        c = getc_unlocked(f);
        if (c == EOF)
            break;
        (*line)[len++] = (char)c;
        if (c == delim)
            break;
    }
    funlockfile(f);
    (*line)[len] = '\0';
    return len || c != EOF ? (ssize_t)len : -1;
}

SHIM_EXPORT ssize_t getdelim(char **line, size_t *cap, int delim, FILE *f)
{
    if (shim_alloc_is_program(__builtin_return_address(0)))
        return getdelim_shared(line, cap, delim, f);
    SHIM_REAL_AS(getdelim, "__getdelim");
    return real_getdelim(line, cap, delim, f);
}

/* What glibc's <stdio.h> makes of getline when optimising. */
SHIM_EXPORT ssize_t __getdelim(char **line, size_t *cap, int delim, FILE *f)
{
    if (shim_alloc_is_program(__builtin_return_address(0)))
        return getdelim_shared(line, cap, delim, f);
    SHIM_REAL_AS(getdelim, "__getdelim");
    return real_getdelim(line, cap, delim, f);
}

SHIM_EXPORT ssize_t getline(char **line, size_t *cap, FILE *f)
{
    if (shim_alloc_is_program(__builtin_return_address(0)))
        return getdelim_shared(line, cap, '\n', f);
    SHIM_REAL_AS(getdelim, "__getdelim");
    return real_getdelim(line, cap, '\n', f);
}

/* ---- realpath, getcwd ---- */

/* The kernel writes the result of realpath's and getcwd's system calls
 * (readlink, getcwd): into a buffer in shared memory, which may not be
 * valid or writable here, it would fail with EFAULT.  So the result goes
 * through a buffer on this stack, and is copied by ordinary stores, which
 * fault and are served like any other. */
SHIM_EXPORT char *realpath(const char *path, char *resolved)
{
    SHIM_REAL(realpath);
    char *(*fn)(const char *, char *) = real_realpath;
    int program = shim_alloc_is_program(__builtin_return_address(0));
    if (resolved ? !dsm_rt_in_region(resolved) : !program)
        return fn(path, resolved);
    char buf[PATH_MAX];
    if (!fn(path, buf))
        return NULL;
    if (resolved) {
        memcpy(resolved, buf, strlen(buf) + 1);
        return resolved;
    }
    return dup_as(buf, strlen(buf), 1);
}

SHIM_EXPORT char *getcwd(char *buf, size_t size)
{
    SHIM_REAL(getcwd);
    char *(*fn)(char *, size_t) = real_getcwd;
    int program = shim_alloc_is_program(__builtin_return_address(0));
    if (buf ? !dsm_rt_in_region(buf) : !program)
        return fn(buf, size);
    char tmp[PATH_MAX];
    if (!fn(tmp, size && size < sizeof tmp ? size : sizeof tmp))
        return NULL;
    size_t n = strlen(tmp);
    if (buf) {
        memcpy(buf, tmp, n + 1);
        return buf;
    }
    char *p = alloc_as(size > n ? size : n + 1, 1);
    if (!p) {
        errno = ENOMEM;
        return NULL;
    }
    memcpy(p, tmp, n + 1);
    return p;
}
