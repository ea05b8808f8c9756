/*
 * mpitest.h - helpers shared by the multi-rank tests in tests/mpi.
 *
 * Each test is a plain program run under mpiexec by run-mpi-test.sh, once per
 * rank count and DSM_COMM variant.  A test checks real values and, when one
 * differs, says which (rank, address, expected, got) and makes the whole job
 * exit non-zero with MPI_Abort: a failing rank must not leave the others
 * waiting in a barrier until the harness times out.  Mismatches are counted
 * and the first few printed, so that one run shows the shape of a failure
 * (one word, one page, everything) rather than only its first symptom.
 *
 * Exit status: 0 pass, 77 skipped (with the reason printed), anything else
 * fail.  The helpers are static inline so that each test is one file.
 */
#ifndef MPITEST_H
#define MPITEST_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "dsm.h"

/* At most this many mismatches are printed per rank; all are counted. */
#define MT_MAX_REPORTS 10

static const char *mt_name = "mpitest";
static unsigned long mt_errors;

static inline int mt_rank(void)
{
    return dsm_initialized() ? dsm_node_id() : -1;
}

/* Abort the whole job: every rank stops, mpiexec exits non-zero. */
static inline void mt_abort(void) __attribute__((noreturn));
static inline void mt_abort(void)
{
    int up = 0, done = 0;

    fflush(stdout);
    fflush(stderr);
    MPI_Initialized(&up);
    MPI_Finalized(&done);
    if (up && !done)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static inline void mt_vmsg(const char *kind, const char *fmt, va_list ap)
{
    char line[512];

    vsnprintf(line, sizeof line, fmt, ap);
    /* One fprintf per line so that lines of different ranks do not mix. */
    fprintf(stderr, "%s[rank %d]: %s%s\n", mt_name, mt_rank(), kind, line);
    fflush(stderr);
}

/* Print a failure and abort the job at once. */
static inline void mt_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
static inline void mt_fail(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    mt_vmsg("FAIL: ", fmt, ap);
    va_end(ap);
    mt_abort();
}

/* Count a mismatch; print it if fewer than MT_MAX_REPORTS were printed.
 * Several threads of a rank may report at once: the count is atomic (no
 * ordering needed, it is only read at a check point after the reads). */
static inline void mt_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static inline void mt_error(const char *fmt, ...)
{
    va_list ap;

    if (__atomic_fetch_add(&mt_errors, 1, __ATOMIC_RELAXED) < MT_MAX_REPORTS) {
        va_start(ap, fmt);
        mt_vmsg("FAIL: ", fmt, ap);
        va_end(ap);
    }
}

/* Progress or context line (seed, sizes), printed by rank 0 only. */
static inline void mt_note(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static inline void mt_note(const char *fmt, ...)
{
    va_list ap;

    if (mt_rank() > 0)
        return;
    va_start(ap, fmt);
    mt_vmsg("", fmt, ap);
    va_end(ap);
}

/* End of a verification step: abort if this rank saw any mismatch. */
static inline void mt_check_point(const char *what)
{
    unsigned long errors = __atomic_load_n(&mt_errors, __ATOMIC_RELAXED);

    if (errors == 0)
        return;
    fprintf(stderr, "%s[rank %d]: FAIL: %lu mismatch(es) in %s\n",
            mt_name, mt_rank(), errors, what);
    mt_abort();
}

/* Compare two 32-bit words; report the address and its home. */
static inline void mt_expect_u32(const char *what, const uint32_t *addr,
                                 uint32_t expected)
{
    uint32_t got = *(const volatile uint32_t *)addr;

    if (got != expected)
        mt_error("%s: word at %p (home %d) is 0x%08" PRIx32
                 ", expected 0x%08" PRIx32,
                 what, (const void *)addr, dsm_home_of(addr), got, expected);
}

static inline void mt_expect_u64(const char *what, const uint64_t *addr,
                                 uint64_t expected)
{
    uint64_t got = *(const volatile uint64_t *)addr;

    if (got != expected)
        mt_error("%s: word at %p (home %d) is 0x%016" PRIx64
                 ", expected 0x%016" PRIx64,
                 what, (const void *)addr, dsm_home_of(addr), got, expected);
}

/* dsm_init with the test's name taken from argv[0] for messages. */
static inline void mt_init(int *argc, char ***argv)
{
    const char *slash;
    int rc;

    if (*argc > 0 && (*argv)[0]) {
        slash = strrchr((*argv)[0], '/');
        mt_name = slash ? slash + 1 : (*argv)[0];
        /* A libtool wrapper may run the program as lt-NAME. */
        if (strncmp(mt_name, "lt-", 3) == 0)
            mt_name += 3;
    }
    rc = dsm_init(argc, argv);
    if (rc != 0)
        mt_fail("dsm_init returned %d", rc);
}

static inline void mt_finalize(void)
{
    int rc = dsm_finalize();

    if (rc != 0)
        mt_fail("dsm_finalize returned %d", rc);
}

/* Collective allocation that must succeed and be page aligned. */
static inline void *mt_malloc_home(size_t size, enum dsm_home_policy policy,
                                   int node)
{
    void *p = dsm_malloc_home(size, policy, node);

    if (p == NULL)
        mt_fail("dsm_malloc_home(%zu, %d, %d) returned NULL",
                size, (int)policy, node);
    if ((uintptr_t)p % dsm_page_size() != 0)
        mt_fail("dsm_malloc_home(%zu) returned %p, not aligned to the "
                "page size %zu", size, p, dsm_page_size());
    if (!dsm_is_shared(p))
        mt_fail("dsm_is_shared(%p) is 0 for memory from dsm_malloc_home", p);
    return p;
}

/* Number of the test's own iterations: the default, or MPITEST_<NAME>
 * when set (e.g. to make a run longer while hunting a bug). */
static inline long mt_param(const char *env, long dflt)
{
    const char *s = getenv(env);
    char *end;
    long v;

    if (s == NULL || *s == '\0')
        return dflt;
    errno = 0;
    v = strtol(s, &end, 0);
    if (errno != 0 || *end != '\0' || v <= 0)
        mt_fail("%s=%s is not a positive integer", env, s);
    return v;
}

/* splitmix64: a small generator whose whole state is one word, so that
 * every rank replays exactly the same sequence from the same seed. */
static inline uint64_t mt_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static inline uint64_t mt_rand_below(uint64_t *state, uint64_t n)
{
    return mt_rand(state) % n;
}

/* The home node of page `page` of an allocation of `pages` pages made with
 * DSM_HOME_BLOCK over `nodes` nodes: block k holds [k*P/N, (k+1)*P/N). */
static inline int mt_block_home(size_t page, size_t pages, int nodes)
{
    int k;

    for (k = nodes - 1; k > 0; k--)
        if (page >= (size_t)k * pages / (size_t)nodes)
            return k;
    return 0;
}

#endif /* MPITEST_H */
