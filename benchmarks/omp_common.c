/*
 * omp_common.c - options, statistics and result lines of the plain OpenMP
 * benchmarks (see omp_common.h for the output contract).
 *
 * Everything here runs on the initial thread, outside parallel regions;
 * results are kept in a small table until obench_emit() so that the JSON
 * lines come last whatever the program or the runtime printed in between.
 */
#include "omp_common.h"
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#define MAX_PARAMS 16
#define MAX_RESULTS 64
#define MAX_EXTRAS 8

static const char *bench_name = "?";
static int team = -1;

static struct { const char *key; long value; } params[MAX_PARAMS];
static int nparams;

static struct {
    char metric[64];
    char unit[16];
    double value;
    int exact;
    int nextra;
    struct { const char *key; double value; } extra[MAX_EXTRAS];
} results[MAX_RESULTS];
static int nresults;

void obench_fatal(const char *fmt, ...)
{
    va_list ap;

    fflush(stdout);
    fprintf(stderr, "%s: ", bench_name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void usage(FILE *out, const char *what, const struct obench_opt *opts)
{
    const struct obench_opt *o;

    fprintf(out, "usage: %s [options]\n%s\noptions:\n", bench_name, what);
    for (o = opts; o->name; o++) {
        fprintf(out, "  --%-10s %s (default ", o->name, o->help);
        switch (o->type) {
        case OBENCH_LONG:
            fprintf(out, "%ld", *(const long *)o->value);
            break;
        case OBENCH_DOUBLE:
            fprintf(out, "%g", *(const double *)o->value);
            break;
        case OBENCH_STRING:
            fprintf(out, "%s", *(const char *const *)o->value);
            break;
        }
        fprintf(out, ")\n");
    }
    fprintf(out, "  --help       this text\n"
            "environment: OMP_NUM_THREADS (libgomp build); under tools/dsmrun the team\n"
            "is ranks x threads per rank, and DSM_* variables pass through.\n"
            "runtime of this build: %s\n", BENCH_OMP_RUNTIME);
}

static int parse_value(const struct obench_opt *o, const char *s)
{
    char *end;

    errno = 0;
    switch (o->type) {
    case OBENCH_LONG: {
        long v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < 0)
            return -1;
        *(long *)o->value = v;
        return 0;
    }
    case OBENCH_DOUBLE: {
        double v = strtod(s, &end);
        if (errno || end == s || *end || !(v > 0) || !isfinite(v))
            return -1;
        *(double *)o->value = v;
        return 0;
    }
    case OBENCH_STRING:
        *(const char **)o->value = s;
        return 0;
    }
    return -1;
}

void obench_start(int argc, char **argv, const char *name, const char *what,
                  const struct obench_opt *opts)
{
    const struct obench_opt *o;
    const char *arg, *val;
    size_t len;
    int i;

    bench_name = name;
    for (i = 1; i < argc; i++) {
        arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout, what, opts);
            exit(0);
        }
        if (strncmp(arg, "--", 2) != 0)
            goto bad;
        arg += 2;
        for (o = opts; o->name; o++) {
            len = strlen(o->name);
            if (strncmp(arg, o->name, len) == 0 && (arg[len] == '\0' || arg[len] == '='))
                break;
        }
        if (!o->name)
            goto bad;
        if (arg[len] == '=')
            val = arg + len + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            goto bad;
        if (parse_value(o, val) < 0)
            goto bad;
    }
    return;
bad:
    fprintf(stderr, "%s: bad option or value near '%s'\n", name, argv[i]);
    usage(stderr, what, opts);
    exit(2);
}

int obench_team_size(void)
{
    int n = 0;

#pragma omp parallel
    {
        if (omp_get_thread_num() == 0)
            n = omp_get_num_threads();
    }
    team = n;
    return n;
}

void obench_param(const char *key, long value)
{
    if (nparams == MAX_PARAMS)
        obench_fatal("too many parameters (raise MAX_PARAMS in omp_common.c)");
    params[nparams].key = key;
    params[nparams].value = value;
    nparams++;
}

static void add_result(const char *metric, double value, const char *unit, int exact)
{
    if (nresults == MAX_RESULTS)
        obench_fatal("too many results (raise MAX_RESULTS in omp_common.c)");
    snprintf(results[nresults].metric, sizeof results[nresults].metric, "%s", metric);
    snprintf(results[nresults].unit, sizeof results[nresults].unit, "%s", unit);
    results[nresults].value = value;
    results[nresults].exact = exact;
    results[nresults].nextra = 0;
    nresults++;
}

void obench_result(const char *metric, double value, const char *unit)
{
    add_result(metric, value, unit, 0);
}

void obench_result_exact(const char *metric, double value, const char *unit)
{
    add_result(metric, value, unit, 1);
}

void obench_extra(const char *key, double value)
{
    int k;

    if (nresults == 0 || results[nresults - 1].nextra == MAX_EXTRAS)
        obench_fatal("obench_extra without a result, or too many (MAX_EXTRAS)");
    k = results[nresults - 1].nextra++;
    results[nresults - 1].extra[k].key = key;
    results[nresults - 1].extra[k].value = value;
}

static const char *env_or(const char *name, const char *def)
{
    const char *s = getenv(name);

    return s && *s ? s : def;
}

/* A whole number >= 1 from the environment, or 0. */
static long env_long(const char *name)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (!s || !*s)
        return 0;
    errno = 0;
    v = strtol(s, &end, 10);
    return errno || *end || v < 1 ? 0 : v;
}

/* DSM_PAGE_SIZE as libdsm reads it (a number with an optional K or M), or
 * its default; only a label here. */
static unsigned long page_size_label(void)
{
    const char *s = getenv("DSM_PAGE_SIZE");
    unsigned long v;
    char *end;

    if (!s || !*s)
        return 16384;
    errno = 0;
    v = strtoul(s, &end, 0);
    if (errno || end == s)
        return 16384;
    if (*end == 'k' || *end == 'K')
        v <<= 10;
    else if (*end == 'm' || *end == 'M')
        v <<= 20;
    return v;
}

void obench_emit(void)
{
    long ranks = env_long("BENCH_RANKS");
    int i, k;

    if (ranks == 0)
        ranks = env_long("PMI_SIZE");
    if (ranks == 0)
        ranks = 1;
    fflush(stdout);
    for (i = 0; i < nresults; i++) {
        fputs("{\"bench\":", stdout);
        json_string(bench_name);
        fputs(",\"metric\":", stdout);
        json_string(results[i].metric);
        fputs(",\"value\":", stdout);
        json_number(results[i].value, results[i].exact);
        fputs(",\"unit\":", stdout);
        json_string(results[i].unit);
        fputs(",\"runtime\":", stdout);
        json_string(BENCH_OMP_RUNTIME);
        printf(",\"ranks\":%ld,\"threads\":%d,\"comm\":", ranks, team);
        json_string(env_or("DSM_COMM", "direct"));
        fputs(",\"poll\":", stdout);
        json_string(env_or("DSM_POLL", "adaptive"));
        printf(",\"page_size\":%lu", page_size_label());
        for (k = 0; k < results[i].nextra; k++) {
            putchar(',');
            json_string(results[i].extra[k].key);
            putchar(':');
            json_number(results[i].extra[k].value, 0);
        }
        for (k = 0; k < nparams; k++) {
            putchar(',');
            json_string(params[k].key);
            printf(":%ld", params[k].value);
        }
        fputs("}\n", stdout);
    }
    fflush(stdout);
}

double obench_mean(const double *v, size_t n)
{
    return stats_mean(v, n);
}

double obench_median(double *v, size_t n)
{
    return stats_median(v, n);
}

double obench_min(const double *v, size_t n)
{
    double m = INFINITY;
    size_t i;

    if (n == 0)
        return NAN;
    for (i = 0; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

double obench_sd(const double *v, size_t n)
{
    double m, s = 0.0;
    size_t i;

    if (n == 0)
        return NAN;
    if (n < 2)
        return 0.0;
    m = obench_mean(v, n);
    for (i = 0; i < n; i++)
        s += (v[i] - m) * (v[i] - m);
    return sqrt(s / (double)(n - 1));
}
