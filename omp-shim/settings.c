/*
 * settings.c - the shim's own environment variables, OMP_* and OMPSHIM_*:
 * every one is read and parsed here, and nowhere else (libgomp's env.c).
 * The table below has one row per variable: its name, its default and what
 * it means; ompshim(7) documents them for users.
 *
 * A variable is read and parsed when it is first asked for, and kept: the
 * first request comes at the moment the shim needs the value, which for
 * some is before there is a DSM or even a main.  In start-up order:
 *   - OMPSHIM_REEXECED, in __libc_start_main (start.c), before anything;
 *   - OMPSHIM_PREMAIN_HEAP, when the pre-main arena opens, before the
 *     executable's constructors and before dsm_init (premain_heap.c);
 *   - OMPSHIM_LIB_DATA, when the globals are attached after dsm_init
 *     (start.c), and at each dlopen (dlopen.c);
 *   - OMP_NUM_THREADS and OMP_SCHEDULE, for the initial ICVs (start.c);
 *   - OMPSHIM_FLUSH, OMPSHIM_INLINE_ATOMICS, OMPSHIM_MMAP and
 *     OMPSHIM_DLOPEN, when each module starts (flush_trap.c,
 *     inline_atomics.c, mmap.c, dlopen.c);
 *   - OMPSHIM_TEST_GAP, at the first dlopen (dlarena.c).
 * So a bad value stops the job at the same point, with the same message,
 * as when each module read its own.  Not here: DSM_* (libdsm's own, parsed
 * by libdsm; DSM_THREADS_PER_RANK and DSM_STACK_SIZE, dsm_settings.c), and
 * LD_PRELOAD and LD_LIBRARY_PATH, which are the loader's (start.c and
 * dlopen.c read them as the loader would).
 *
 * Threads: the main thread makes the first request of each but
 * OMPSHIM_TEST_GAP, which comes from the thread that calls dlopen first
 * (dlopen.c serialises the program's dlopen calls).  Later requests, from
 * any thread, read the kept value: a release store of the "parsed" flag
 * after the value, an acquire load before reading it.  Two first requests
 * that raced would parse the same string into the same value.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shim.h"

/* OMPSHIM_PREMAIN_HEAP: 64 GiB by default, at most 16 TiB, so that the
 * arena at premain_heap.c's PREMAIN_AT (64 TiB) ends below 80 TiB. */
#define PREMAIN_DEFAULT ((size_t)64 << 30)
#define PREMAIN_MAX     ((size_t)16 << 40)

enum setting {
    S_OMP_NUM_THREADS, S_OMP_SCHEDULE, S_REEXECED, S_PREMAIN_HEAP, S_LIB_DATA, S_DLOPEN,
    S_MMAP, S_FLUSH, S_INLINE_ATOMICS, S_TASK_AFFINITY, S_TEST_GAP, S_COUNT
};

union value {
    int i;                                  /* a number, a flag or a mode */
    size_t size;                            /* a size in bytes */
    struct { int kind; uint64_t chunk; } sched;
};

/* Each parser gets the variable's value, or NULL when it is unset, and
 * fills in the default for NULL. */
typedef void parse_fn(const char *s, union value *v);

static parse_fn parse_num_threads, parse_schedule, parse_present, parse_premain_heap,
    parse_shared_lib_data, parse_shared_dlopen, parse_shared_mmap, parse_flush, parse_on_off,
    parse_task_affinity, parse_test_gap;

static const struct {
    const char *name;
    const char *dflt;
    const char *meaning;
    parse_fn *parse;
} table[S_COUNT] = {
    [S_OMP_NUM_THREADS] = { "OMP_NUM_THREADS", "ranks x threads per rank",
        "the team size of a parallel region: the first number of the list", parse_num_threads },
    [S_OMP_SCHEDULE] = { "OMP_SCHEDULE", "dynamic,1",
        "the schedule of schedule(runtime) loops: [non]monotonic:kind[,chunk]", parse_schedule },
    [S_REEXECED] = { "OMPSHIM_REEXECED", "unset",
        "set by the shim when it restarts the program without address randomisation: "
        "do not restart again", parse_present },
    [S_PREMAIN_HEAP] = { "OMPSHIM_PREMAIN_HEAP", "64G",
        "address space for what the program allocates before main; 0: private to each rank",
        parse_premain_heap },
    [S_LIB_DATA] = { "OMPSHIM_LIB_DATA", "shared",
        "the global variables of the libraries the program needs: shared or private",
        parse_shared_lib_data },
    [S_DLOPEN] = { "OMPSHIM_DLOPEN", "shared",
        "a library the program loads with dlopen: on every rank (shared) or the calling "
        "rank's only (private)", parse_shared_dlopen },
    [S_MMAP] = { "OMPSHIM_MMAP", "shared",
        "the program's mmap: shared memory, or the kernel's, this rank's only (private)",
        parse_shared_mmap },
    [S_FLUSH] = { "OMPSHIM_FLUSH", "on",
        "the program's flush instructions: made DSM flushes (on), trapped only (trap), or "
        "left alone (off)", parse_flush },
    [S_INLINE_ATOMICS] = { "OMPSHIM_INLINE_ATOMICS", "on",
        "the program's inline atomic instructions on shared memory: run at the home (on) or "
        "not (off)", parse_on_off },
    [S_TASK_AFFINITY] = { "OMPSHIM_TASK_AFFINITY", "home",
        "a task that writes a heap block its depend clause names: preferably run at the "
        "block's home (home), also held there up to N microseconds (a number), or anywhere "
        "(off)", parse_task_affinity },
    [S_TEST_GAP] = { "OMPSHIM_TEST_GAP", "unset",
        "tests only: the first dlopen on each rank (1) or every one (always) finds the "
        "gaps above its arena open", parse_test_gap },
};

static union value values[S_COUNT];
static int parsed[S_COUNT];

static const union value *get(enum setting s)
{
    /* Acquire: pairs with the release below, so that values[s] is whole. */
    if (!__atomic_load_n(&parsed[s], __ATOMIC_ACQUIRE)) {
        union value v;
        memset(&v, 0, sizeof v);
        table[s].parse(getenv(table[s].name), &v);
        values[s] = v;
        __atomic_store_n(&parsed[s], 1, __ATOMIC_RELEASE);
    }
    return &values[s];
}

/* ---- the parsers: one per kind of value, the messages as ompshim(7) and
 * docs/ERRORS.md give them ---- */

/* OMP_NUM_THREADS: the first number of a list (nested levels get one
 * thread anyway); 0 when unset, for the caller's default.  At most the
 * largest team there can be (omp_get_thread_limit with the most ranks):
 * SHIM_MAX_LOCAL threads on each of DSM_MAX_NODES ranks. */
#define NUM_THREADS_MAX (SHIM_MAX_LOCAL * DSM_MAX_NODES)
static void parse_num_threads(const char *s, union value *v)
{
    if (!s)
        return;
    char *end;
    long n = strtol(s, &end, 10);
    if (end == s || n <= 0 || n > NUM_THREADS_MAX || (*end && *end != ',' && *end != ' '))
        dsm__fatal("OMP_NUM_THREADS=%s: bad value; give a number of threads from 1 to %d "
                   "(at most %d per rank on at most %d ranks; a team larger than the job's "
                   "ranks x %d is cut to that)", s, NUM_THREADS_MAX, SHIM_MAX_LOCAL,
                   DSM_MAX_NODES, SHIM_MAX_LOCAL);
    v->i = (int)n;
}

static void parse_schedule(const char *s, union value *v)
{
    v->sched.kind = SHIM_SCHED_DYNAMIC;     /* libgomp's default run-sched-var */
    v->sched.chunk = 1;
    if (!s)
        return;
    const char *p = s;
    int mono = 0;
    if (!strncmp(p, "monotonic:", 10)) p += 10, mono = 1;
    else if (!strncmp(p, "nonmonotonic:", 13)) p += 13;
    size_t n = strcspn(p, ",");
    if (n == 6 && !strncasecmp(p, "static", 6)) v->sched.kind = SHIM_SCHED_STATIC, v->sched.chunk = 0;
    else if (n == 7 && !strncasecmp(p, "dynamic", 7)) v->sched.kind = SHIM_SCHED_DYNAMIC;
    else if (n == 6 && !strncasecmp(p, "guided", 6)) v->sched.kind = SHIM_SCHED_GUIDED;
    else if (n == 4 && !strncasecmp(p, "auto", 4)) v->sched.kind = SHIM_SCHED_AUTO;
    else
        dsm__fatal("OMP_SCHEDULE=%s: bad value; give static, dynamic, guided or auto, "
                   "optionally followed by ,CHUNK", s);
    if (p[n] == ',') {
        long c = strtol(p + n + 1, NULL, 10);
        if (c <= 0)
            dsm__fatal("OMP_SCHEDULE=%s: bad chunk size; give a positive number", s);
        v->sched.chunk = (uint64_t)c;
    }
    if (mono)
        v->sched.kind = (int)((unsigned)v->sched.kind | SHIM_SCHED_MONOTONIC);
}

/* Set to anything: 1. */
static void parse_present(const char *s, union value *v)
{
    v->i = s != NULL;
}

static void parse_premain_heap(const char *s, union value *v)
{
    v->size = PREMAIN_DEFAULT;
    if (s && (dsm__parse_size(s, &v->size) != 0 || v->size > PREMAIN_MAX))
        dsm__fatal("OMPSHIM_PREMAIN_HEAP=%s: bad value; give the address space to reserve "
                   "for the memory the program allocates before main (default 64G, at "
                   "most 16T), or 0 to keep that memory private to each rank", s);
}

/* shared (1, the default) or private (0). */
static int shared_or_private(const char *s)
{
    return !s || strcmp(s, "private") != 0;
}

static int is_shared_or_private(const char *s)
{
    return !s || !strcmp(s, "private") || !strcmp(s, "shared");
}

static void parse_shared_lib_data(const char *s, union value *v)
{
    if (!is_shared_or_private(s))
        dsm__fatal("OMPSHIM_LIB_DATA=%s: give shared (the default: the global variables of "
                   "the libraries the program needs are shared like its own) or private",
                   s);
    v->i = shared_or_private(s);
}

static void parse_shared_dlopen(const char *s, union value *v)
{
    if (!is_shared_or_private(s))
        dsm__fatal("OMPSHIM_DLOPEN=%s: give shared (the default: a library the program "
                   "loads with dlopen is loaded on every rank) or private (on the "
                   "calling rank only)", s);
    v->i = shared_or_private(s);
}

static void parse_shared_mmap(const char *s, union value *v)
{
    if (!is_shared_or_private(s))
        dsm__fatal("OMPSHIM_MMAP=%s: give shared (the default: the program's mmap gives "
                   "memory every rank sees) or private (the kernel's, this rank's only)", s);
    v->i = shared_or_private(s);
}

static void parse_flush(const char *s, union value *v)
{
    if (s && strcmp(s, "on") && strcmp(s, "trap") && strcmp(s, "off"))
        dsm__fatal("OMPSHIM_FLUSH=%s: bad value; give on (the default), trap or off", s);
    v->i = !s || !strcmp(s, "on") ? SHIM_FLUSH_ON
         : !strcmp(s, "trap") ? SHIM_FLUSH_TRAP : SHIM_FLUSH_OFF;
}

/* OMPSHIM_INLINE_ATOMICS: on (1, the default) or off (0). */
static void parse_on_off(const char *s, union value *v)
{
    if (s && strcmp(s, "on") && strcmp(s, "off"))
        dsm__fatal("OMPSHIM_INLINE_ATOMICS=%s: bad value; give on (the default) or off", s);
    v->i = !s || strcmp(s, "off") != 0;
}

/* OMPSHIM_TASK_AFFINITY: home (0, the default), off (-1), or microseconds
 * from 0 to 1000000. */
static void parse_task_affinity(const char *s, union value *v)
{
    char *end;
    long us;
    if (!s || !strcmp(s, "home"))
        v->i = 0;
    else if (!strcmp(s, "off"))
        v->i = -1;
    else if ((us = strtol(s, &end, 10)) >= 0 && us <= 1000000 && end != s && !*end)
        v->i = (int)us;
    else
        dsm__fatal("OMPSHIM_TASK_AFFINITY=%s: bad value; give home (the default), off, or "
                   "microseconds from 0 to 1000000", s);
}

/* 1: once per rank; 2: always; anything else: off (a test's knob, not
 * checked). */
static void parse_test_gap(const char *s, union value *v)
{
    v->i = !s ? 0 : !strcmp(s, "1") ? 1 : !strcmp(s, "always") ? 2 : 0;
}

/* ---- the accessors (shim.h) ---- */

int shim_setting_num_threads(int dflt)
{
    int n = get(S_OMP_NUM_THREADS)->i;
    return n ? n : dflt;
}

void shim_setting_schedule(int *kind, uint64_t *chunk)
{
    const union value *v = get(S_OMP_SCHEDULE);
    *kind = v->sched.kind;
    *chunk = v->sched.chunk;
}

int shim_setting_reexeced(void)
{
    return get(S_REEXECED)->i;
}

size_t shim_setting_premain_heap(void)
{
    return get(S_PREMAIN_HEAP)->size;
}

int shim_share_lib_data(void)
{
    return get(S_LIB_DATA)->i;
}

int shim_setting_dlopen_shared(void)
{
    return get(S_DLOPEN)->i;
}

int shim_setting_mmap_shared(void)
{
    return get(S_MMAP)->i;
}

int shim_setting_flush(void)
{
    return get(S_FLUSH)->i;
}

int shim_setting_inline_atomics(void)
{
    return get(S_INLINE_ATOMICS)->i;
}

int shim_setting_task_affinity(void)
{
    return get(S_TASK_AFFINITY)->i;
}

int shim_setting_test_gap(void)
{
    return get(S_TEST_GAP)->i;
}
