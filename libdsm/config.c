/*
 * config.c - every DSM_* environment variable, parsed in one place.
 *
 * Called once by dsm_init() on the main thread, before anything else starts.
 * Pure: reads the array it is given and fills a struct, so that the unit
 * tests can feed it any environment.  Any variable whose name starts with
 * DSM_ must be known and well formed: a typo must not silently fall back to
 * a default.  A runtime on top of libdsm parses its own DSM_* variables and
 * names them before dsm_init (dsm_rt_preinit): they are passed over here,
 * and without such a runtime they are unknown too.  Also three rules on
 * the variables and the host, tested the same way: whether the host is
 * full (dsm__host_full), the spin a node's waiting threads use
 * (dsm__spin_us_for) and its communication thread's (dsm__comm_spin_us_for).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libc.h"
#include "dsm_pure.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -DSM_EINVAL;
}

int dsm__parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;
    unsigned shift = 0;

    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
        return -DSM_EINVAL;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -DSM_EINVAL;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (*end == 'i' && shift)       /* accept "16Ki" as well as "16K" */
        end++;
    if (*end == 'B' && shift)
        end++;
    if (*end != '\0')
        return -DSM_EINVAL;
    if (shift && v > (~0ULL >> shift))
        return -DSM_EINVAL;
    *out = (size_t)(v << shift);
    return 0;
}

static int is_pow2(size_t v) { return v && !(v & (v - 1)); }

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    unsigned long v;
    if (!*s || *s == '-' || *s == '+' || *s == ' ')
        return -1;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || *end || v > max)
        return -1;
    *out = v;
    return 0;
}

#define KNOWN "DSM_HEAP_SIZE, DSM_PAGE_SIZE, DSM_PAGE_CHUNK, DSM_BASE, DSM_COMM, DSM_POLL, " \
              "DSM_STATS, DSM_HOME, DSM_MAX_LOCKS, DSM_SPIN_US, DSM_PREFETCH, DSM_TRACE, " \
              "DSM_TIMEOUT, DSM_SYNC_TIMEOUT, DSM_CHECK, DSM_BARRIER_DIFFS, DSM_BARRIER"

/* Whether the name of nlen bytes at e is one of the runtime's (rt_names). */
static int runtime_name(const char *const *rt_names, const char *e, size_t nlen)
{
    for (; rt_names && *rt_names; rt_names++)
        if (strlen(*rt_names) == nlen && strncmp(*rt_names, e, nlen) == 0)
            return 1;
    return 0;
}

/* The refusal of an unknown name: libdsm's names, then the runtime's (or
 * that no runtime reads any, so that a variable of one, set for a program
 * that runs without it, is explained too). */
static int unknown(char *err, size_t errlen, const char *e, size_t nlen,
                   const char *const *rt_names, const char *rt_who)
{
    char theirs[512];
    size_t n = 0;

    theirs[0] = '\0';
    for (; rt_names && *rt_names && n < sizeof theirs; rt_names++)
        n += (size_t)snprintf(theirs + n, sizeof theirs - n, "%s%s",
                              n ? ", " : "", *rt_names);
    if (!theirs[0])
        return fail(err, errlen,
            "unknown environment variable %.*s; libdsm knows " KNOWN
            " (see libdsm(7)), and this program runs no runtime on top of libdsm that "
            "reads others; unset it or fix its name", (int)nlen, e);
    return fail(err, errlen,
        "unknown environment variable %.*s; libdsm knows " KNOWN
        " (see libdsm(7)), and %s reads %s; unset it or fix its name", (int)nlen, e,
        rt_who ? rt_who : "the runtime on top of libdsm", theirs);
}

int dsm__config_parse(struct dsm_config *cfg, char *const *envp, size_t os_page,
                      const char *const *rt_names, const char *rt_who,
                      char *err, size_t errlen)
{
    const char *heap = NULL;

    cfg->heap_size = DSM_DEFAULT_HEAP_SIZE;
    cfg->page_size = DSM_DEFAULT_PAGE_SIZE < os_page ? os_page : DSM_DEFAULT_PAGE_SIZE;
    cfg->page_chunk = DSM_DEFAULT_PAGE_CHUNK;
    cfg->base = DSM_DEFAULT_BASE;
    cfg->comm = DSM_COMM_DIRECT;   /* measured faster: docs/RESULTS.md */
    cfg->poll = DSM_POLL_ADAPTIVE;
    cfg->stats = DSM_STATS_OFF;
    cfg->home = DSM_HOME_BLOCK;
    cfg->max_locks = DSM_DEFAULT_MAX_LOCKS;
    cfg->spin_us = DSM_DEFAULT_SPIN_US;
    cfg->spin_us_set = 0;
    cfg->barrier_noack = 1;
    cfg->barrier_shape = DSM_BARRIER_AUTO;
    cfg->threads_per_rank = 1;
    cfg->check_races = 0;
    cfg->heap_size_set = 0;
    cfg->prefetch = DSM_PREFETCH_NONE;
    cfg->prefetch_set = 0;
    cfg->trace_prefix = NULL;
    cfg->timeout_s = DSM_DEFAULT_TIMEOUT;
    cfg->sync_timeout_s = 0;
    if (err && errlen)
        err[0] = '\0';

    for (; envp && *envp; envp++) {
        const char *e = *envp, *eq = strchr(e, '='), *v;
        size_t nlen;
        if (strncmp(e, "DSM_", 4) != 0 || !eq)
            continue;
        nlen = (size_t)(eq - e);
        v = eq + 1;
#define IS(name) (nlen == sizeof(name) - 1 && strncmp(e, name, nlen) == 0)
        if (IS("DSM_HEAP_SIZE")) {
            heap = v;   /* checked once the page size is known */
        } else if (IS("DSM_PAGE_SIZE")) {
            size_t ps;
            if (dsm__parse_size(v, &ps) || !is_pow2(ps) || ps < os_page ||
                ps > ((size_t)1 << 24))
                return fail(err, errlen,
                    "DSM_PAGE_SIZE=%s: bad value; give a power of two between the OS "
                    "page size (%zu) and 16M, e.g. DSM_PAGE_SIZE=16K", v, os_page);
            cfg->page_size = ps;
        } else if (IS("DSM_PAGE_CHUNK")) {
            size_t c;
            if (dsm__parse_size(v, &c) || !is_pow2(c) || c < 1024 || c > ((size_t)1 << 24))
                return fail(err, errlen,
                    "DSM_PAGE_CHUNK=%s: bad value; give a power of two between 1K and 16M "
                    "(the largest MPI message a page is cut into; the page size or more "
                    "sends a page whole), e.g. DSM_PAGE_CHUNK=16K", v);
            cfg->page_chunk = c;
        } else if (IS("DSM_BASE")) {
            char *end;
            unsigned long long b;
            errno = 0;
            b = (*v == '-' || *v == '+' || *v == ' ') ? 0 : strtoull(v, &end, 16);
            if (!*v || b == 0 || *end || errno || (b & (os_page - 1)) ||
                b >= ((unsigned long long)1 << 47))
                return fail(err, errlen,
                    "DSM_BASE=%s: bad value; give a page-aligned hexadecimal address "
                    "below 0x800000000000, such as DSM_BASE=0x200000000000", v);
            cfg->base = (uintptr_t)b;
        } else if (IS("DSM_COMM")) {
            if (!strcmp(v, "queue")) cfg->comm = DSM_COMM_QUEUE;
            else if (!strcmp(v, "direct")) cfg->comm = DSM_COMM_DIRECT;
            else if (!strcmp(v, "multiple")) cfg->comm = DSM_COMM_MULTIPLE;
            else if (!strcmp(v, "rma")) cfg->comm = DSM_COMM_RMA;
            else return fail(err, errlen,
                    "DSM_COMM=%s: bad value; choose DSM_COMM=queue, direct, multiple or rma", v);
        } else if (IS("DSM_POLL")) {
            if (!strcmp(v, "spin")) cfg->poll = DSM_POLL_SPIN;
            else if (!strcmp(v, "adaptive")) cfg->poll = DSM_POLL_ADAPTIVE;
            else return fail(err, errlen,
                    "DSM_POLL=%s: bad value; choose DSM_POLL=spin or DSM_POLL=adaptive", v);
        } else if (IS("DSM_STATS")) {
            if (!strcmp(v, "0")) cfg->stats = DSM_STATS_OFF;
            else if (!strcmp(v, "1")) cfg->stats = DSM_STATS_TEXT;
            else if (!strcmp(v, "json")) cfg->stats = DSM_STATS_JSON;
            else return fail(err, errlen,
                    "DSM_STATS=%s: bad value; choose DSM_STATS=0, 1 or json", v);
        } else if (IS("DSM_HOME")) {
            if (!strcmp(v, "block")) cfg->home = DSM_HOME_BLOCK;
            else if (!strcmp(v, "cyclic")) cfg->home = DSM_HOME_CYCLIC;
            else return fail(err, errlen,
                    "DSM_HOME=%s: bad value; choose DSM_HOME=block or DSM_HOME=cyclic", v);
        } else if (IS("DSM_MAX_LOCKS")) {
            unsigned long n;
            if (parse_uint(v, 1UL << 20, &n) || n == 0)
                return fail(err, errlen,
                    "DSM_MAX_LOCKS=%s: bad value; give a number of locks from 1 to 1048576", v);
            cfg->max_locks = (int)n;
        } else if (IS("DSM_SPIN_US")) {
            unsigned long n;
            if (parse_uint(v, 1000000UL, &n))
                return fail(err, errlen,
                    "DSM_SPIN_US=%s: bad value; give microseconds from 0 to 1000000", v);
            cfg->spin_us = (unsigned)n;
            cfg->spin_us_set = 1;
        } else if (IS("DSM_CHECK")) {
            if (!strcmp(v, "races")) cfg->check_races = 1;
            else if (!strcmp(v, "0") || !strcmp(v, "none")) cfg->check_races = 0;
            else return fail(err, errlen,
                    "DSM_CHECK=%s: bad value; choose DSM_CHECK=races or DSM_CHECK=none", v);
        } else if (IS("DSM_BARRIER_DIFFS")) {
            if (!strcmp(v, "unacked")) cfg->barrier_noack = 1;
            else if (!strcmp(v, "acked")) cfg->barrier_noack = 0;
            else return fail(err, errlen,
                    "DSM_BARRIER_DIFFS=%s: bad value; choose DSM_BARRIER_DIFFS=unacked (the "
                    "default) or DSM_BARRIER_DIFFS=acked", v);
        } else if (IS("DSM_BARRIER")) {
            if (!strcmp(v, "auto")) cfg->barrier_shape = DSM_BARRIER_AUTO;
            else if (!strcmp(v, "tree")) cfg->barrier_shape = DSM_BARRIER_TREE;
            else if (!strcmp(v, "flat")) cfg->barrier_shape = DSM_BARRIER_FLAT;
            else return fail(err, errlen,
                    "DSM_BARRIER=%s: bad value; choose DSM_BARRIER=auto (the default), "
                    "tree or flat", v);
        } else if (IS("DSM_PREFETCH")) {
            cfg->prefetch_set = 1;
            if (!strcmp(v, "none")) cfg->prefetch = DSM_PREFETCH_NONE;
            else if (!strcmp(v, "history")) cfg->prefetch = DSM_PREFETCH_HISTORY;
            else if (!strcmp(v, "barriers")) cfg->prefetch = DSM_PREFETCH_BARRIERS;
            else return fail(err, errlen,
                    "DSM_PREFETCH=%s: bad value; choose DSM_PREFETCH=none, "
                    "DSM_PREFETCH=history (after barriers and lock acquires) or "
                    "DSM_PREFETCH=barriers (after barriers only)", v);
        } else if (IS("DSM_TRACE")) {
            /* The log of rank N goes to PREFIX.N (trace.c); empty is off. */
            if (strlen(v) > 4000)
                return fail(err, errlen,
                    "DSM_TRACE=%.40s...: bad value; give a file name prefix shorter than "
                    "4000 bytes, e.g. DSM_TRACE=/tmp/run (writes /tmp/run.0, /tmp/run.1, ...)", v);
            cfg->trace_prefix = *v ? v : NULL;
        } else if (IS("DSM_TIMEOUT") || IS("DSM_SYNC_TIMEOUT")) {
            unsigned long n;
            if (parse_uint(v, 31536000UL, &n))
                return fail(err, errlen,
                    "%.*s=%s: bad value; give whole seconds from 0 (no limit) to 31536000, "
                    "e.g. %.*s=60", (int)nlen, e, v, (int)nlen, e);
            if (IS("DSM_TIMEOUT"))
                cfg->timeout_s = (unsigned)n;
            else
                cfg->sync_timeout_s = (unsigned)n;
        } else if (!runtime_name(rt_names, e, nlen)) {
            return unknown(err, errlen, e, nlen, rt_names, rt_who);
        }
#undef IS
    }
    if (heap) {
        size_t hs;
        if (dsm__parse_size(heap, &hs) || hs == 0 || hs % cfg->page_size ||
            hs > ((size_t)1 << 46))
            return fail(err, errlen,
                "DSM_HEAP_SIZE=%s: bad value; give a size that is a multiple of the "
                "page size (%zu), at most 64T, e.g. DSM_HEAP_SIZE=4G", heap, cfg->page_size);
        cfg->heap_size = hs;
        cfg->heap_size_set = 1;
    }
    if (cfg->heap_size % cfg->page_size)
        return fail(err, errlen,
            "DSM_HEAP_SIZE (%zu) is not a multiple of DSM_PAGE_SIZE (%zu): bad value",
            cfg->heap_size, cfg->page_size);
    if (cfg->base % cfg->page_size)
        return fail(err, errlen,
            "DSM_BASE=%#lx: bad value; it must be a multiple of DSM_PAGE_SIZE (%zu)",
            (unsigned long)cfg->base, cfg->page_size);
    return 0;
}

const char *dsm__config_value_text(const char *var, uint64_t v, char *buf, size_t len)
{
    static const char *const comm[] = { "queue", "direct", "multiple", "rma" };
    static const char *const home[] = { "default", "block", "cyclic", "node" };
    static const char *const stats[] = { "0", "1", "json" };
    static const char *const poll[] = { "spin", "adaptive" };
    const char *const *names = NULL;
    size_t nnames = 0;

    if (!len)
        return buf;
    if (!strcmp(var, "DSM_COMM"))
        names = comm, nnames = 4;
    else if (!strcmp(var, "DSM_HOME"))
        names = home, nnames = 4;
    else if (!strcmp(var, "DSM_STATS"))
        names = stats, nnames = 3;
    else if (!strcmp(var, "DSM_POLL"))
        names = poll, nnames = 2;
    if (names) {
        if (v < nnames)
            snprintf(buf, len, "%s", names[v]);
        else
            snprintf(buf, len, "%llu (not a value of %s)", (unsigned long long)v, var);
    } else if (!strcmp(var, "DSM_BASE")) {
        snprintf(buf, len, "%#llx", (unsigned long long)v);
    } else if (!strcmp(var, "DSM_PAGE_SIZE") || !strcmp(var, "DSM_PAGE_CHUNK") ||
               !strcmp(var, "DSM_HEAP_SIZE")) {
        /* As a user writes it (dsm__parse_size reads it back). */
        static const char suffix[] = "KMGT";
        int k = -1;
        while (k < 3 && v && !(v & ((1ULL << (10 * (k + 2))) - 1)))
            k++;
        if (k < 0)
            snprintf(buf, len, "%llu", (unsigned long long)v);
        else
            snprintf(buf, len, "%llu%c", (unsigned long long)(v >> (10 * (k + 1))),
                     suffix[k]);
    } else {
        snprintf(buf, len, "%llu", (unsigned long long)v);
    }
    return buf;
}

int dsm__host_full(const struct dsm_config *cfg, const struct dsm_host *h)
{
    unsigned per_rank = cfg->threads_per_rank + 1;   /* + the communication thread */

    return (h->my_cpus && per_rank > h->my_cpus) ||
           (h->online_cpus && h->ranks * per_rank > h->online_cpus);
}

unsigned dsm__spin_us_for(const struct dsm_config *cfg, const struct dsm_host *h)
{
    if (cfg->spin_us_set)
        return cfg->spin_us;
    if (h->online_cpus && h->ranks > h->online_cpus)
        return 0;
    return DSM_DEFAULT_SPIN_US;
}

unsigned dsm__comm_spin_us_for(const struct dsm_config *cfg, const struct dsm_host *h)
{
    if (!cfg->spin_us_set && dsm__host_full(cfg, h))
        return 0;
    return dsm__spin_us_for(cfg, h);
}
