/*
 * common.c - start-up, options, clock, statistics and result lines shared by
 * the benchmarks (see common.h for the output contract).
 *
 * Everything here runs on the main thread of each rank.  Results are kept in
 * a small table until bench_emit() so that the JSON lines come last whatever
 * the benchmark or the library printed in between.
 */
#define _GNU_SOURCE
#include "common.h"
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct bench_state bench = { .comm = MPI_COMM_NULL };

#define MAX_PARAMS 16
#define MAX_RESULTS 128

static struct { const char *key; long value; const char *str; } params[MAX_PARAMS];
static int nparams;

static struct {
    char metric[64];
    char unit[16];
    double value;
    int exact;
} results[MAX_RESULTS];
static int nresults;

void bench_fatal(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "bench %s (rank %d): ", bench.name ? bench.name : "?",
            bench.rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);  /* not reached: MPI_Abort does not return */
}

void bench_say(const char *fmt, ...)
{
    va_list ap;

    if (bench.rank != 0)
        return;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

static void usage(FILE *out, const char *what, const struct bench_opt *opts)
{
    const struct bench_opt *o;
    const struct bench_list *l;
    int i;

    fprintf(out, "usage: %s [options]\n%s\noptions:\n", bench.name, what);
    for (o = opts; o->name; o++) {
        fprintf(out, "  --%-10s %s (default ", o->name, o->help);
        switch (o->type) {
        case BENCH_OPT_LONG:
            fprintf(out, "%ld", *(const long *)o->value);
            break;
        case BENCH_OPT_LIST:
            l = o->value;
            for (i = 0; i < l->n; i++)
                fprintf(out, "%s%ld", i ? "," : "", l->v[i]);
            break;
        case BENCH_OPT_STRING:
            fprintf(out, "%s", *(const char *const *)o->value);
            break;
        }
        fprintf(out, ")\n");
    }
    fprintf(out, "  --help       this text\n"
            "environment: DSM_COMM, DSM_POLL, DSM_PAGE_SIZE, ... (see libdsm(7))\n");
}

static int parse_long(const char *s, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1)
        return -1;
    *out = v;
    return 0;
}

static int parse_list(const char *s, struct bench_list *l)
{
    char buf[256], *tok, *save;

    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    l->n = 0;
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (l->n == BENCH_LIST_MAX || parse_long(tok, &l->v[l->n]) < 0)
            return -1;
        l->n++;
    }
    return l->n > 0 ? 0 : -1;
}

/* Every rank parses the same argv and reaches the same verdict, so all of
 * them leave together without any communication. */
static void parse_options(int argc, char **argv, const char *what,
                          const struct bench_opt *opts)
{
    const struct bench_opt *o;
    const char *arg, *val;
    size_t len;
    int i, bad = 0;

    for (i = 1; i < argc && !bad; i++) {
        arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            if (bench.rank == 0)
                usage(stdout, what, opts);
            MPI_Finalize();
            exit(0);
        }
        if (strncmp(arg, "--", 2) != 0) {
            bad = 1;
            break;
        }
        arg += 2;
        for (o = opts; o->name; o++) {
            len = strlen(o->name);
            if (strncmp(arg, o->name, len) == 0 && (arg[len] == '\0' || arg[len] == '='))
                break;
        }
        if (!o->name) {
            bad = 1;
            break;
        }
        if (arg[strlen(o->name)] == '=')
            val = arg + strlen(o->name) + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else {
            bad = 1;
            break;
        }
        switch (o->type) {
        case BENCH_OPT_LONG:
            bad = parse_long(val, o->value) < 0;
            break;
        case BENCH_OPT_LIST:
            bad = parse_list(val, o->value) < 0;
            break;
        case BENCH_OPT_STRING:
            *(const char **)o->value = val;
            break;
        }
    }
    if (bad) {
        if (bench.rank == 0) {
            fprintf(stderr, "bench %s: bad option or value near '%s'"
                    " (numbers must be whole and >= 1)\n", bench.name, argv[i]);
            usage(stderr, what, opts);
        }
        MPI_Finalize();
        exit(2);
    }
}

void bench_start(int *argc, char ***argv, const char *name,
                 const char *what, const struct bench_opt *opts)
{
    int provided;

    bench.name = name;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "bench %s: MPI_Init_thread failed\n", name);
        exit(1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &bench.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &bench.size);
    if (provided < MPI_THREAD_MULTIPLE)
        bench_fatal("the MPI library gives thread level %d, libdsm needs "
                    "MPI_THREAD_MULTIPLE; use an MPICH built with thread support",
                    provided);
    MPI_Comm_dup(MPI_COMM_WORLD, &bench.comm);
    parse_options(*argc, *argv, what, opts);
}

/* BENCH_BUSY=N: N extra threads per rank that compute (spin on arithmetic,
 * touching no shared memory) from bench_settings() (after dsm_init, so
 * after any floor measured before it) to bench_end(): compute threads
 * that are busy while the library's threads need the core (paper 003
 * Table 7, HT off; bench.sh transports). */
static int busy_stop;
static pthread_t busy_tid[16];
static int nbusy;

static void *busy_main(void *arg)
{
    volatile double x = 1.0;
    (void)arg;
    while (!__atomic_load_n(&busy_stop, __ATOMIC_RELAXED))
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    return NULL;
}

static void busy_start(void)
{
    const char *s = getenv("BENCH_BUSY");
    int n = s ? atoi(s) : 0;
    if (n <= 0)
        return;
    if (n > 16)
        n = 16;
    for (nbusy = 0; nbusy < n; nbusy++)
        if (pthread_create(&busy_tid[nbusy], NULL, busy_main, NULL) != 0)
            bench_fatal("BENCH_BUSY: cannot start a busy thread");
    bench_param("busy", n);
}

static void busy_end(void)
{
    __atomic_store_n(&busy_stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < nbusy; i++)
        pthread_join(busy_tid[i], NULL);
    nbusy = 0;
}

void bench_settings(void)
{
    const char *s;

    s = getenv("DSM_COMM");
    bench.comm_var = s && *s ? s : "direct";
    s = getenv("DSM_POLL");
    bench.poll_var = s && *s ? s : "adaptive";
    bench.page_size = dsm_page_size();
    busy_start();
}

void bench_param(const char *key, long value)
{
    if (nparams == MAX_PARAMS)
        bench_fatal("too many parameters (raise MAX_PARAMS in common.c)");
    params[nparams].key = key;
    params[nparams].value = value;
    params[nparams].str = NULL;
    nparams++;
}

void bench_param_str(const char *key, const char *value)
{
    bench_param(key, 0);
    params[nparams - 1].str = value;
}

static void add_result(const char *metric, double value, const char *unit, int exact)
{
    if (nresults == MAX_RESULTS)
        bench_fatal("too many results (raise MAX_RESULTS in common.c)");
    snprintf(results[nresults].metric, sizeof results[nresults].metric, "%s", metric);
    snprintf(results[nresults].unit, sizeof results[nresults].unit, "%s", unit);
    results[nresults].value = value;
    results[nresults].exact = exact;
    nresults++;
}

void bench_result(const char *metric, double value, const char *unit)
{
    add_result(metric, value, unit, 0);
}

void bench_result_exact(const char *metric, double value, const char *unit)
{
    add_result(metric, value, unit, 1);
}

void bench_emit(void)
{
    int i, k;

    if (bench.rank != 0)
        return;
    fflush(stdout);
    for (i = 0; i < nresults; i++) {
        fputs("{\"bench\":", stdout);
        json_string(bench.name);
        fputs(",\"metric\":", stdout);
        json_string(results[i].metric);
        fputs(",\"value\":", stdout);
        json_number(results[i].value, results[i].exact);
        fputs(",\"unit\":", stdout);
        json_string(results[i].unit);
        printf(",\"ranks\":%d,\"comm\":", bench.size);
        json_string(bench.comm_var ? bench.comm_var : "direct");
        fputs(",\"poll\":", stdout);
        json_string(bench.poll_var ? bench.poll_var : "adaptive");
        printf(",\"page_size\":%zu", bench.page_size);
        for (k = 0; k < nparams; k++) {
            putchar(',');
            json_string(params[k].key);
            if (params[k].str) {
                putchar(':');
                json_string(params[k].str);
            } else {
                printf(":%ld", params[k].value);
            }
        }
        fputs("}\n", stdout);
    }
    fflush(stdout);
}

int bench_end(void)
{
    busy_end();
    if (bench.comm != MPI_COMM_NULL)
        MPI_Comm_free(&bench.comm);
    MPI_Finalize();
    return 0;
}

double bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_mean(const double *v, size_t n)
{
    return stats_mean(v, n);
}

double bench_median(double *v, size_t n)
{
    return stats_median(v, n);
}

void bench_idle_barrier(void)
{
    struct timespec nap = { 0, 100 * 1000 };  /* 100 us */
    MPI_Request req;
    int done = 0;

    MPI_Ibarrier(bench.comm, &req);
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        nanosleep(&nap, NULL);
    }
}

double bench_sum_double(double x)
{
    double s = 0.0;

    MPI_Reduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, 0, bench.comm);
    return s;
}

uint64_t bench_sum_u64(uint64_t x)
{
    uint64_t s = 0;

    MPI_Reduce(&x, &s, 1, MPI_UINT64_T, MPI_SUM, 0, bench.comm);
    return s;
}

double bench_max_double(double x)
{
    double m = 0.0;

    MPI_Reduce(&x, &m, 1, MPI_DOUBLE, MPI_MAX, 0, bench.comm);
    return m;
}

/* The counters of struct dsm_stats, by type, so that one reduction per type
 * sums them all; a field added to dsm.h and not listed here is left zero. */
#define U64(f) offsetof(struct dsm_stats, f)
static const size_t u64_fields[] = {
    U64(read_faults), U64(write_faults), U64(rmr_count), U64(pages_fetched),
    U64(bytes_fetched), U64(pages_served), U64(twins), U64(diffs),
    U64(diff_bytes), U64(diffs_applied), U64(invalidations), U64(barriers),
    U64(barrier_msgs), U64(lock_acquires), U64(msgs_sent), U64(bytes_sent),
    U64(msgs_received), U64(mprotect_calls),
    U64(prefetch_issued), U64(prefetch_used), U64(prefetch_wasted), U64(prefetch_late),
    U64(prefetch_aged),
};
static const size_t dbl_fields[] = {
    U64(rmr_time), U64(barrier_time), U64(lock_wait_time), U64(page_wait_time),
};
#undef U64
#define NU64 (sizeof u64_fields / sizeof u64_fields[0])
#define NDBL (sizeof dbl_fields / sizeof dbl_fields[0])

void bench_stats_sum(const struct dsm_stats *mine, struct dsm_stats *sum)
{
    uint64_t u[NU64], su[NU64];
    double d[NDBL], sd[NDBL];
    size_t i;

    for (i = 0; i < NU64; i++)
        memcpy(&u[i], (const char *)mine + u64_fields[i], sizeof u[i]);
    for (i = 0; i < NDBL; i++)
        memcpy(&d[i], (const char *)mine + dbl_fields[i], sizeof d[i]);
    MPI_Reduce(u, su, (int)NU64, MPI_UINT64_T, MPI_SUM, 0, bench.comm);
    MPI_Reduce(d, sd, (int)NDBL, MPI_DOUBLE, MPI_SUM, 0, bench.comm);
    memset(sum, 0, sizeof *sum);
    if (bench.rank != 0)
        return;
    for (i = 0; i < NU64; i++)
        memcpy((char *)sum + u64_fields[i], &su[i], sizeof su[i]);
    for (i = 0; i < NDBL; i++)
        memcpy((char *)sum + dbl_fields[i], &sd[i], sizeof sd[i]);
}
