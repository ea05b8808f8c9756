/*
 * dsm_settings.c - the DSM_* variables the shim reads itself:
 * DSM_THREADS_PER_RANK (OpenMP threads each rank runs, set by dsmrun -t) and
 * DSM_STACK_SIZE (each OpenMP thread's stack, in the region).  libdsm parses
 * only its own variables and refuses every other DSM_* name unless the
 * runtime names it before dsm_init; start.c does that with
 * shim_dsm_settings_names and the thread count parsed here
 * (dsm_rt_preinit).
 *
 * Pure: reads the array it is given and fills a struct, so that the unit
 * tests (tests/unit/test_shim_settings) can feed it any environment.
 *
 * Threads: the main thread of each process, at start-up, before dsm_init.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/* A rank's OpenMP threads each have a slot (team.c, start.c's stacks). */
_Static_assert(SHIM_MAX_LOCAL == 64, "DSM_THREADS_PER_RANK's limit is SHIM_MAX_LOCAL");

const char *const shim_dsm_settings_names[] = { "DSM_THREADS_PER_RANK", "DSM_STACK_SIZE",
                                                NULL };

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -DSM_EINVAL;
}

/* A decimal number from 1 to max, nothing else (no sign, no blank). */
static int parse_count(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    unsigned long v;
    if (!*s || *s == '-' || *s == '+' || *s == ' ')
        return -1;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || *end || v == 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

int shim_dsm_settings_parse(struct shim_dsm_settings *s, char *const *envp, char *err,
                            size_t errlen)
{
    s->threads_per_rank = 1;
    s->stack_size = SHIM_DEFAULT_STACK_SIZE;
    if (err && errlen)
        err[0] = '\0';
    for (; envp && *envp; envp++) {
        const char *e = *envp;
        if (!strncmp(e, "DSM_THREADS_PER_RANK=", 21)) {
            const char *v = e + 21;
            unsigned long n;
            if (parse_count(v, 64, &n))
                return fail(err, errlen,
                    "DSM_THREADS_PER_RANK=%s: bad value; give a number of OpenMP threads "
                    "per rank from 1 to 64", v);
            s->threads_per_rank = (unsigned)n;
        } else if (!strncmp(e, "DSM_STACK_SIZE=", 15)) {
            const char *v = e + 15;
            size_t n;
            if (dsm__parse_size(v, &n) || n < ((size_t)64 << 10) || n > ((size_t)1 << 32))
                return fail(err, errlen,
                    "DSM_STACK_SIZE=%s: bad value; give a stack size from 64K to 4G, "
                    "e.g. DSM_STACK_SIZE=16M", v);
            s->stack_size = n;
        }
    }
    return 0;
}
