/*
 * test_config.c - parsing of the DSM_* environment (libdsm/config.c).
 *
 * Each variable is given alone in an environ-style array and its parsed
 * value compared with the number written here; every bad value must fail
 * with -DSM_EINVAL and a message that names the variable, and the message
 * must never overrun the caller's buffer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dsm_pure.h"

#define OS_PAGE 4096
#define KIB ((size_t)1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)
#define TIB (GIB * 1024)

static char errbuf[512];

/* Parse envp (NULL-terminated) and require success. */
static struct dsm_config parse_ok(char *const *envp, size_t os_page)
{
    struct dsm_config cfg;
    int rc;

    memset(&cfg, 0xee, sizeof(cfg));
    errbuf[0] = '\0';
    rc = dsm__config_parse(&cfg, envp, os_page, NULL, NULL, errbuf, sizeof(errbuf));
    if (rc != 0)
        fail_msg("expected success, got %d: %s", rc, errbuf);
    return cfg;
}

/* Parse envp and require -DSM_EINVAL with a message containing both
 * needles (the second may be NULL). */
static void parse_err(char *const *envp, size_t os_page,
                      const char *needle1, const char *needle2)
{
    struct dsm_config cfg;
    int rc;

    memset(errbuf, 0, sizeof(errbuf));
    rc = dsm__config_parse(&cfg, envp, os_page, NULL, NULL, errbuf, sizeof(errbuf));
    if (rc != -DSM_EINVAL)
        fail_msg("%s: expected -DSM_EINVAL, got %d", envp[0], rc);
    if (memchr(errbuf, '\0', sizeof(errbuf)) == NULL)
        fail_msg("%s: message not terminated", envp[0]);
    if (strstr(errbuf, needle1) == NULL)
        fail_msg("%s: message \"%s\" lacks \"%s\"", envp[0], errbuf, needle1);
    if (needle2 && strstr(errbuf, needle2) == NULL)
        fail_msg("%s: message \"%s\" lacks \"%s\"", envp[0], errbuf, needle2);
}

/* One variable alone. */
static struct dsm_config one_ok(const char *var)
{
    char *envp[2] = { (char *)var, NULL };
    return parse_ok(envp, OS_PAGE);
}

static void one_bad(const char *var, const char *name)
{
    char *envp[2] = { (char *)var, NULL };
    parse_err(envp, OS_PAGE, "bad value", name);
}

static void check_defaults(const struct dsm_config *c)
{
    assert_int_equal(c->heap_size, GIB);
    assert_int_equal(c->page_size, 16384);
    assert_int_equal(c->page_chunk, 8192);
    assert_int_equal(c->base, (uintptr_t)0x200000000000ull);
    assert_int_equal(c->comm, DSM_COMM_DIRECT);
    assert_int_equal(c->poll, DSM_POLL_ADAPTIVE);
    assert_int_equal(c->stats, DSM_STATS_OFF);
    assert_int_equal(c->home, DSM_HOME_BLOCK);
    assert_int_equal(c->max_locks, 4096);
    assert_int_equal(c->spin_us, 50);
    assert_int_equal(c->timeout_s, 30);
    assert_int_equal(c->sync_timeout_s, 0);
}

static void test_defaults(void **state)
{
    struct dsm_config c;
    char *empty[] = { NULL };

    (void)state;
    c = parse_ok(NULL, OS_PAGE);
    check_defaults(&c);
    c = parse_ok(empty, OS_PAGE);
    check_defaults(&c);
}

static void test_non_dsm_ignored(void **state)
{
    char *envp[] = { "PATH=/usr/bin:/bin", "HOME=/root", "DSM=1", "DSMX_FOO=1",
                     "MY_DSM_HEAP_SIZE=garbage", "dsm_heap_size=garbage",
                     "XDSM_COMM=bogus", "EMPTY=", NULL };
    struct dsm_config c;

    (void)state;
    c = parse_ok(envp, OS_PAGE);
    check_defaults(&c);
}

static void test_heap_size(void **state)
{
    (void)state;
    assert_int_equal(one_ok("DSM_HEAP_SIZE=65536").heap_size, 65536);
    assert_int_equal(one_ok("DSM_HEAP_SIZE=16K").heap_size, 16 * KIB);
    assert_int_equal(one_ok("DSM_HEAP_SIZE=256M").heap_size, 256 * MIB);
    assert_int_equal(one_ok("DSM_HEAP_SIZE=4G").heap_size, 4 * GIB);
    assert_int_equal(one_ok("DSM_HEAP_SIZE=1T").heap_size, TIB);
    assert_int_equal(one_ok("DSM_HEAP_SIZE=1073741824").heap_size, GIB);
    /* The other fields keep their defaults. */
    assert_int_equal(one_ok("DSM_HEAP_SIZE=16K").page_size, 16384);
}

static void test_page_size(void **state)
{
    char *big_os[] = { "DSM_PAGE_SIZE=65536", NULL };

    (void)state;
    assert_int_equal(one_ok("DSM_PAGE_SIZE=4096").page_size, 4096);
    assert_int_equal(one_ok("DSM_PAGE_SIZE=8K").page_size, 8192);
    assert_int_equal(one_ok("DSM_PAGE_SIZE=65536").page_size, 65536);
    assert_int_equal(parse_ok(big_os, 65536).page_size, 65536);
}

/* DSM_PAGE_CHUNK, and how many messages a page then takes. */
static void test_page_chunk(void **state)
{
    (void)state;
    assert_int_equal(one_ok("DSM_PAGE_CHUNK=4096").page_chunk, 4096);
    assert_int_equal(one_ok("DSM_PAGE_CHUNK=16K").page_chunk, 16384);
    assert_int_equal(one_ok("DSM_PAGE_CHUNK=1K").page_chunk, 1024);
    assert_int_equal(one_ok("DSM_PAGE_CHUNK=16M").page_chunk, 16 * MIB);
    assert_int_equal(one_ok("DSM_PAGE_CHUNK=16K").page_size, 16384);
    one_bad("DSM_PAGE_CHUNK=512", "DSM_PAGE_CHUNK");     /* below 1K */
    one_bad("DSM_PAGE_CHUNK=12K", "DSM_PAGE_CHUNK");     /* not a power of two */
    one_bad("DSM_PAGE_CHUNK=32M", "DSM_PAGE_CHUNK");     /* above 16M */
    one_bad("DSM_PAGE_CHUNK=0", "DSM_PAGE_CHUNK");
    one_bad("DSM_PAGE_CHUNK=", "DSM_PAGE_CHUNK");
    one_bad("DSM_PAGE_CHUNK=8k9", "DSM_PAGE_CHUNK");
    /* page / chunk messages, at least 1, at most DSM_MAX_PAGE_CHUNKS (16). */
    assert_int_equal(dsm__page_chunks(16384, 8192), 2);
    assert_int_equal(dsm__page_chunks(16384, 16384), 1);
    assert_int_equal(dsm__page_chunks(16384, 65536), 1);
    assert_int_equal(dsm__page_chunks(4096, 8192), 1);
    assert_int_equal(dsm__page_chunks(65536, 4096), 16);
    assert_int_equal(dsm__page_chunks(65536, 1024), DSM_MAX_PAGE_CHUNKS);
    assert_int_equal(dsm__page_chunks((size_t)16 << 20, 8192), DSM_MAX_PAGE_CHUNKS);
}

/* The heap must be a multiple of the page size that is in force, whatever
 * the order of the two variables. */
static void test_heap_and_page_order(void **state)
{
    char *e1[] = { "DSM_HEAP_SIZE=8K", "DSM_PAGE_SIZE=4096", NULL };
    char *e2[] = { "DSM_PAGE_SIZE=4096", "DSM_HEAP_SIZE=8K", NULL };
    char *e3[] = { "DSM_HEAP_SIZE=96K", "DSM_PAGE_SIZE=32K", NULL };
    char *e4[] = { "DSM_HEAP_SIZE=48K", "DSM_PAGE_SIZE=32K", NULL };
    char *e5[] = { "DSM_PAGE_SIZE=32K", "DSM_HEAP_SIZE=48K", NULL };
    struct dsm_config c;

    (void)state;
    c = parse_ok(e1, OS_PAGE);
    assert_int_equal(c.heap_size, 8192);
    assert_int_equal(c.page_size, 4096);
    c = parse_ok(e2, OS_PAGE);
    assert_int_equal(c.heap_size, 8192);
    assert_int_equal(c.page_size, 4096);
    c = parse_ok(e3, OS_PAGE);
    assert_int_equal(c.heap_size, 96 * KIB);
    assert_int_equal(c.page_size, 32 * KIB);
    parse_err(e4, OS_PAGE, "bad value", "DSM_HEAP_SIZE");
    parse_err(e5, OS_PAGE, "bad value", "DSM_HEAP_SIZE");
}

static void test_base(void **state)
{
    (void)state;
    assert_int_equal(one_ok("DSM_BASE=0x100000000000").base,
                     (uintptr_t)0x100000000000ull);
    assert_int_equal(one_ok("DSM_BASE=0x7f0000000000").base,
                     (uintptr_t)0x7f0000000000ull);
    assert_int_equal(one_ok("DSM_BASE=0x7AbC0000C000").base,
                     (uintptr_t)0x7abc0000c000ull);
}

static void test_enums(void **state)
{
    (void)state;
    assert_int_equal(one_ok("DSM_COMM=queue").comm, DSM_COMM_QUEUE);
    assert_int_equal(one_ok("DSM_COMM=direct").comm, DSM_COMM_DIRECT);
    assert_int_equal(one_ok("DSM_COMM=multiple").comm, DSM_COMM_MULTIPLE);
    assert_int_equal(one_ok("DSM_COMM=rma").comm, DSM_COMM_RMA);
    assert_int_equal(one_ok("DSM_POLL=spin").poll, DSM_POLL_SPIN);
    assert_int_equal(one_ok("DSM_POLL=adaptive").poll, DSM_POLL_ADAPTIVE);
    assert_int_equal(one_ok("DSM_STATS=0").stats, DSM_STATS_OFF);
    assert_int_equal(one_ok("DSM_STATS=1").stats, DSM_STATS_TEXT);
    assert_int_equal(one_ok("DSM_STATS=json").stats, DSM_STATS_JSON);
    assert_int_equal(one_ok("DSM_HOME=block").home, DSM_HOME_BLOCK);
    assert_int_equal(one_ok("DSM_HOME=cyclic").home, DSM_HOME_CYCLIC);
}

static void test_numbers(void **state)
{
    (void)state;
    assert_int_equal(one_ok("DSM_MAX_LOCKS=1").max_locks, 1);
    assert_int_equal(one_ok("DSM_MAX_LOCKS=100").max_locks, 100);
    assert_int_equal(one_ok("DSM_MAX_LOCKS=10000").max_locks, 10000);
    assert_int_equal(one_ok("DSM_SPIN_US=200").spin_us, 200);
    assert_int_equal(one_ok("DSM_SPIN_US=1").spin_us, 1);
}

/* dsm__host_full: each rank runs its application threads and a
 * communication thread; the host is full when they outnumber its CPUs, or a
 * rank's own CPUs where it is bound to fewer. */
static void test_host_full(void **state)
{
    struct dsm_config c = one_ok("TERM=xterm"), omp3 = c;
    struct dsm_host two_on_two = { 2, 2, 2 }, one_on_two = { 1, 2, 2 };
    struct dsm_host two_on_eight = { 2, 8, 8 }, four_on_eight = { 4, 8, 8 };
    struct dsm_host five_on_eight = { 5, 8, 8 }, bound_one = { 1, 8, 1 };
    struct dsm_host unknown = { 1, 0, 0 };

    (void)state;
    omp3.threads_per_rank = 3;          /* as a runtime says (dsm_rt_preinit) */
    assert_int_equal(c.threads_per_rank, 1);
    assert_true(dsm__host_full(&c, &two_on_two));
    assert_false(dsm__host_full(&c, &one_on_two));
    assert_false(dsm__host_full(&c, &two_on_eight));
    assert_false(dsm__host_full(&c, &four_on_eight));
    assert_true(dsm__host_full(&c, &five_on_eight));
    assert_false(dsm__host_full(&omp3, &two_on_eight));
    assert_true(dsm__host_full(&omp3, &four_on_eight));
    assert_true(dsm__host_full(&c, &bound_one));
    assert_false(dsm__host_full(&c, &unknown));
}

/* dsm__spin_us_for: DSM_SPIN_US where given; otherwise the default spin,
 * or none where the host's ranks outnumber its CPUs (threads per rank and
 * a process's own CPUs do not count). */
static void test_spin_us_for(void **state)
{
    struct dsm_config c = one_ok("TERM=xterm"), omp2 = c;
    struct dsm_config set7 = one_ok("DSM_SPIN_US=7"), set50 = one_ok("DSM_SPIN_US=50");
    struct dsm_host two_on_two = { 2, 2, 2 }, three_on_two = { 3, 2, 2 };
    struct dsm_host four_on_two = { 4, 2, 2 }, one_on_two = { 1, 2, 2 };
    struct dsm_host eight_on_eight = { 8, 8, 8 }, nine_on_eight = { 9, 8, 8 };
    struct dsm_host bound_one = { 1, 8, 1 }, unknown = { 4, 0, 0 };

    (void)state;
    omp2.threads_per_rank = 2;
    assert_false(c.spin_us_set);
    assert_true(set7.spin_us_set);
    assert_int_equal(dsm__spin_us_for(&c, &one_on_two), DSM_DEFAULT_SPIN_US);
    assert_int_equal(dsm__spin_us_for(&c, &two_on_two), DSM_DEFAULT_SPIN_US);
    assert_int_equal(dsm__spin_us_for(&c, &three_on_two), 0);
    assert_int_equal(dsm__spin_us_for(&c, &four_on_two), 0);
    assert_int_equal(dsm__spin_us_for(&c, &eight_on_eight), DSM_DEFAULT_SPIN_US);
    assert_int_equal(dsm__spin_us_for(&c, &nine_on_eight), 0);
    assert_int_equal(dsm__spin_us_for(&omp2, &two_on_two), DSM_DEFAULT_SPIN_US);
    assert_int_equal(dsm__spin_us_for(&omp2, &three_on_two), 0);
    assert_int_equal(dsm__spin_us_for(&omp2, &bound_one), DSM_DEFAULT_SPIN_US);
    assert_int_equal(dsm__spin_us_for(&c, &unknown), DSM_DEFAULT_SPIN_US);
    /* A value given is kept, on any host. */
    assert_int_equal(dsm__spin_us_for(&set7, &four_on_two), 7);
    assert_int_equal(dsm__spin_us_for(&set50, &four_on_two), 50);
    assert_int_equal(dsm__spin_us_for(&set7, &two_on_two), 7);
}

/* dsm__comm_spin_us_for: DSM_SPIN_US where given; otherwise the node's
 * spin, or none where the host is full (its ranks' application threads and
 * communication threads outnumber its CPUs). */
static void test_comm_spin_us_for(void **state)
{
    struct dsm_config c = one_ok("TERM=xterm"), omp2 = c;
    struct dsm_config set7 = one_ok("DSM_SPIN_US=7");
    struct dsm_host one_on_two = { 1, 2, 2 }, two_on_two = { 2, 2, 2 };
    struct dsm_host four_on_two = { 4, 2, 2 }, two_on_four = { 2, 4, 4 };
    struct dsm_host three_on_four = { 3, 4, 4 }, bound_one = { 1, 8, 1 };
    struct dsm_host unknown = { 4, 0, 0 };

    (void)state;
    omp2.threads_per_rank = 2;
    assert_int_equal(dsm__comm_spin_us_for(&c, &one_on_two), DSM_DEFAULT_SPIN_US);
    assert_int_equal(dsm__comm_spin_us_for(&c, &two_on_two), 0);
    assert_int_equal(dsm__comm_spin_us_for(&c, &four_on_two), 0);
    assert_int_equal(dsm__comm_spin_us_for(&c, &two_on_four), DSM_DEFAULT_SPIN_US);
    assert_int_equal(dsm__comm_spin_us_for(&c, &three_on_four), 0);
    assert_int_equal(dsm__comm_spin_us_for(&omp2, &one_on_two), 0);
    assert_int_equal(dsm__comm_spin_us_for(&omp2, &two_on_four), 0);
    assert_int_equal(dsm__comm_spin_us_for(&c, &bound_one), 0);
    assert_int_equal(dsm__comm_spin_us_for(&c, &unknown), DSM_DEFAULT_SPIN_US);
    /* The waiting threads keep theirs where only the threads overflow. */
    assert_int_equal(dsm__spin_us_for(&c, &two_on_two), DSM_DEFAULT_SPIN_US);
    /* A value given is kept, on any host. */
    assert_int_equal(dsm__comm_spin_us_for(&set7, &two_on_two), 7);
    assert_int_equal(dsm__comm_spin_us_for(&set7, &four_on_two), 7);
}

static void test_prefetch(void **state)
{
    (void)state;
    assert_int_equal(one_ok("TERM=xterm").prefetch, DSM_PREFETCH_NONE);
    assert_int_equal(one_ok("DSM_PREFETCH=none").prefetch, DSM_PREFETCH_NONE);
    assert_int_equal(one_ok("DSM_PREFETCH=history").prefetch, DSM_PREFETCH_HISTORY);
    assert_int_equal(one_ok("DSM_PREFETCH=barriers").prefetch, DSM_PREFETCH_BARRIERS);
    one_bad("DSM_PREFETCH=explicit", "DSM_PREFETCH");
    one_bad("DSM_PREFETCH=", "DSM_PREFETCH");
    one_bad("DSM_PREFETCH=History", "DSM_PREFETCH");
    /* Whether it was given: a runtime's default (the shim's history) yields
     * to an explicit none. */
    assert_int_equal(one_ok("TERM=xterm").prefetch_set, 0);
    assert_int_equal(one_ok("DSM_PREFETCH=none").prefetch_set, 1);
    assert_int_equal(one_ok("DSM_PREFETCH=history").prefetch_set, 1);
}

static void test_all_together(void **state)
{
    char *envp[] = { "OMP_NUM_THREADS=4", "DSM_HEAP_SIZE=2G", "DSM_PAGE_SIZE=64K",
                     "DSM_BASE=0x300000000000", "DSM_COMM=direct", "DSM_POLL=spin",
                     "DSM_STATS=json", "DSM_HOME=cyclic", "DSM_MAX_LOCKS=77",
                     "DSM_SPIN_US=9", "TERM=xterm", NULL };
    struct dsm_config c;

    (void)state;
    c = parse_ok(envp, OS_PAGE);
    assert_int_equal(c.heap_size, 2 * GIB);
    assert_int_equal(c.page_size, 64 * KIB);
    assert_int_equal(c.base, (uintptr_t)0x300000000000ull);
    assert_int_equal(c.comm, DSM_COMM_DIRECT);
    assert_int_equal(c.poll, DSM_POLL_SPIN);
    assert_int_equal(c.stats, DSM_STATS_JSON);
    assert_int_equal(c.home, DSM_HOME_CYCLIC);
    assert_int_equal(c.max_locks, 77);
    assert_int_equal(c.spin_us, 9);
}

/* ---- errors ------------------------------------------------------------ */

static void test_unknown_variable(void **state)
{
    char *e1[] = { "DSM_FOOBAR=1", NULL };
    char *e2[] = { "PATH=/bin", "DSM_HEAP_SIZE=1G", "DSM_HEAPSIZE=1G", NULL };
    char *e3[] = { "DSM_=1", NULL };

    (void)state;
    parse_err(e1, OS_PAGE, "unknown environment variable DSM_", "DSM_FOOBAR");
    parse_err(e2, OS_PAGE, "unknown environment variable DSM_", "DSM_HEAPSIZE");
    parse_err(e3, OS_PAGE, "unknown environment variable DSM_", NULL);
}

static void test_bad_page_size(void **state)
{
    char *small_for_os[] = { "DSM_PAGE_SIZE=16384", NULL };

    (void)state;
    one_bad("DSM_PAGE_SIZE=12288", "DSM_PAGE_SIZE");   /* not a power of two */
    one_bad("DSM_PAGE_SIZE=5000", "DSM_PAGE_SIZE");
    one_bad("DSM_PAGE_SIZE=2048", "DSM_PAGE_SIZE");    /* below the OS page */
    one_bad("DSM_PAGE_SIZE=0", "DSM_PAGE_SIZE");
    one_bad("DSM_PAGE_SIZE=", "DSM_PAGE_SIZE");
    one_bad("DSM_PAGE_SIZE=big", "DSM_PAGE_SIZE");
    parse_err(small_for_os, 65536, "bad value", "DSM_PAGE_SIZE");
}

static void test_bad_heap_size(void **state)
{
    (void)state;
    one_bad("DSM_HEAP_SIZE=0", "DSM_HEAP_SIZE");
    one_bad("DSM_HEAP_SIZE=", "DSM_HEAP_SIZE");
    one_bad("DSM_HEAP_SIZE=lots", "DSM_HEAP_SIZE");
    one_bad("DSM_HEAP_SIZE=12X", "DSM_HEAP_SIZE");
    one_bad("DSM_HEAP_SIZE=-16K", "DSM_HEAP_SIZE");
    one_bad("DSM_HEAP_SIZE=99999999999T", "DSM_HEAP_SIZE");   /* overflows */
    one_bad("DSM_HEAP_SIZE=16777216T", "DSM_HEAP_SIZE");      /* exactly 2^64 */
    one_bad("DSM_HEAP_SIZE=99999999999999999999", "DSM_HEAP_SIZE");
    one_bad("DSM_HEAP_SIZE=20000", "DSM_HEAP_SIZE");    /* not page multiple */
    one_bad("DSM_HEAP_SIZE=4K", "DSM_HEAP_SIZE");       /* < one 16K page */
    one_bad("DSM_HEAP_SIZE=16K junk", "DSM_HEAP_SIZE"); /* trailing garbage */
}

static void test_bad_enums(void **state)
{
    (void)state;
    one_bad("DSM_COMM=bogus", "DSM_COMM");
    one_bad("DSM_COMM=", "DSM_COMM");
    one_bad("DSM_COMM=queue2", "DSM_COMM");
    one_bad("DSM_COMM=rmaa", "DSM_COMM");
    one_bad("DSM_POLL=", "DSM_POLL");
    one_bad("DSM_POLL=sleep", "DSM_POLL");
    one_bad("DSM_STATS=2", "DSM_STATS");
    one_bad("DSM_STATS=xml", "DSM_STATS");
    one_bad("DSM_HOME=random", "DSM_HOME");
    one_bad("DSM_HOME=", "DSM_HOME");
}

static void test_bad_base(void **state)
{
    (void)state;
    one_bad("DSM_BASE=0x100000000800", "DSM_BASE");    /* not page-aligned */
    one_bad("DSM_BASE=0x100000000001", "DSM_BASE");
    one_bad("DSM_BASE=0xZZ", "DSM_BASE");
    one_bad("DSM_BASE=hello", "DSM_BASE");
    one_bad("DSM_BASE=", "DSM_BASE");
    one_bad("DSM_BASE=0x100000000000 junk", "DSM_BASE");
}

static void test_bad_numbers(void **state)
{
    (void)state;
    one_bad("DSM_MAX_LOCKS=0", "DSM_MAX_LOCKS");
    one_bad("DSM_MAX_LOCKS=-1", "DSM_MAX_LOCKS");
    one_bad("DSM_MAX_LOCKS=-4096", "DSM_MAX_LOCKS");
    one_bad("DSM_MAX_LOCKS=many", "DSM_MAX_LOCKS");
    one_bad("DSM_MAX_LOCKS=", "DSM_MAX_LOCKS");
    one_bad("DSM_MAX_LOCKS=10 junk", "DSM_MAX_LOCKS");
    one_bad("DSM_MAX_LOCKS=99999999999999999999", "DSM_MAX_LOCKS");
    one_bad("DSM_SPIN_US=abc", "DSM_SPIN_US");
    one_bad("DSM_SPIN_US=", "DSM_SPIN_US");
    one_bad("DSM_SPIN_US=-5", "DSM_SPIN_US");
}

/* DSM_TIMEOUT and DSM_SYNC_TIMEOUT: whole seconds, 0 = no limit. */
static void test_timeouts(void **state)
{
    struct dsm_config c;
    (void)state;
    c = one_ok("DSM_TIMEOUT=0");
    assert_int_equal(c.timeout_s, 0);
    c = one_ok("DSM_TIMEOUT=5");
    assert_int_equal(c.timeout_s, 5);
    assert_int_equal(c.sync_timeout_s, 0);
    c = one_ok("DSM_SYNC_TIMEOUT=600");
    assert_int_equal(c.sync_timeout_s, 600);
    assert_int_equal(c.timeout_s, 30);
    c = one_ok("DSM_TIMEOUT=31536000");
    assert_int_equal(c.timeout_s, 31536000);
    one_bad("DSM_TIMEOUT=", "DSM_TIMEOUT");
    one_bad("DSM_TIMEOUT=-1", "DSM_TIMEOUT");
    one_bad("DSM_TIMEOUT=1.5", "DSM_TIMEOUT");
    one_bad("DSM_TIMEOUT=30s", "DSM_TIMEOUT");
    one_bad("DSM_TIMEOUT=31536001", "DSM_TIMEOUT");
    one_bad("DSM_SYNC_TIMEOUT=never", "DSM_SYNC_TIMEOUT");
}

/* DSM_CHECK (the race check). */
static void test_check(void **state)
{
    struct dsm_config c;
    (void)state;
    c = one_ok("DSM_CHECK=races");
    assert_int_equal(c.check_races, 1);
    c = one_ok("DSM_CHECK=none");
    assert_int_equal(c.check_races, 0);
    one_bad("DSM_CHECK=all", "DSM_CHECK");
}

/* DSM_BARRIER_DIFFS: a barrier's diffs unacked (the default) or acked. */
static void test_barrier_diffs(void **state)
{
    struct dsm_config c;
    char *none[] = { NULL };
    (void)state;
    assert_int_equal(dsm__config_parse(&c, none, OS_PAGE, NULL, NULL, errbuf, sizeof errbuf),
                     0);
    assert_int_equal(c.barrier_noack, 1);
    c = one_ok("DSM_BARRIER_DIFFS=acked");
    assert_int_equal(c.barrier_noack, 0);
    c = one_ok("DSM_BARRIER_DIFFS=unacked");
    assert_int_equal(c.barrier_noack, 1);
    one_bad("DSM_BARRIER_DIFFS=none", "DSM_BARRIER_DIFFS");
    one_bad("DSM_BARRIER_DIFFS=", "DSM_BARRIER_DIFFS");
}

/* DSM_BARRIER: the barrier tree's shape. */
static void test_barrier_shape(void **state)
{
    struct dsm_config c;
    char *none[] = { NULL };
    (void)state;
    assert_int_equal(dsm__config_parse(&c, none, OS_PAGE, NULL, NULL, errbuf, sizeof errbuf),
                     0);
    assert_int_equal(c.barrier_shape, DSM_BARRIER_AUTO);
    assert_int_equal(one_ok("DSM_BARRIER=tree").barrier_shape, DSM_BARRIER_TREE);
    assert_int_equal(one_ok("DSM_BARRIER=flat").barrier_shape, DSM_BARRIER_FLAT);
    assert_int_equal(one_ok("DSM_BARRIER=auto").barrier_shape, DSM_BARRIER_AUTO);
    one_bad("DSM_BARRIER=binary", "DSM_BARRIER");
}

/* A runtime's own DSM_* names (dsm_rt_preinit) are passed over, whatever
 * their value; without it they are unknown, and the message says that no
 * runtime reads them in this program. */
static void test_runtime_names(void **state)
{
    static const char *const names[] = { "DSM_THREADS_PER_RANK", "DSM_STACK_SIZE", NULL };
    char *envp[] = { "DSM_THREADS_PER_RANK=0", "DSM_STACK_SIZE=junk", "DSM_COMM=queue", NULL };
    char *typo[] = { "DSM_THREADS_PER_RAN=2", NULL };
    struct dsm_config cfg;

    (void)state;
    errbuf[0] = '\0';
    assert_int_equal(dsm__config_parse(&cfg, envp, OS_PAGE, names, "the shim",
                                       errbuf, sizeof errbuf), 0);
    assert_int_equal(cfg.comm, DSM_COMM_QUEUE);
    assert_int_equal(cfg.threads_per_rank, 1);
    assert_int_equal(dsm__config_parse(&cfg, typo, OS_PAGE, names, "the shim",
                                       errbuf, sizeof errbuf), -DSM_EINVAL);
    assert_non_null(strstr(errbuf, "unknown environment variable DSM_THREADS_PER_RAN;"));
    assert_non_null(strstr(errbuf, "and the shim reads DSM_THREADS_PER_RANK, "
                                   "DSM_STACK_SIZE; unset it"));
    parse_err(envp, OS_PAGE, "unknown environment variable DSM_THREADS_PER_RANK",
              "this program runs no runtime on top of libdsm that reads others");
}

/* A bad variable among good ones is still found, wherever it is. */
static void test_bad_among_good(void **state)
{
    char *envp[] = { "DSM_HEAP_SIZE=1G", "PATH=/bin", "DSM_COMM=direct",
                     "DSM_POLL=never", "DSM_STATS=1", NULL };

    (void)state;
    parse_err(envp, OS_PAGE, "bad value", "DSM_POLL");
}

/* The message is cut to the caller's buffer: bytes past errlen stay as
 * they were, and the message in it is terminated. */
static void test_err_buffer_bounds(void **state)
{
    char *envp[] = { "DSM_COMM=a-rather-long-bogus-value-to-fill-the-message", NULL };
    char buf[64];
    struct dsm_config cfg;
    int rc;

    (void)state;
    memset(buf, 'Z', sizeof(buf));
    rc = dsm__config_parse(&cfg, envp, OS_PAGE, NULL, NULL, buf, 16);
    assert_int_equal(rc, -DSM_EINVAL);
    assert_non_null(memchr(buf, '\0', 16));
    for (size_t i = 16; i < sizeof(buf); i++)
        assert_int_equal(buf[i], 'Z');
}

/* ---- dsm__parse_size --------------------------------------------------- */

static void size_ok(const char *s, size_t expect)
{
    size_t v = 12345;
    int rc = dsm__parse_size(s, &v);
    if (rc != 0 || v != expect)
        fail_msg("parse_size(\"%s\"): expected 0 and %zu, got %d and %zu",
                 s, expect, rc, v);
}

static void size_bad(const char *s)
{
    size_t v = 0;
    int rc = dsm__parse_size(s, &v);
    if (rc != -DSM_EINVAL)
        fail_msg("parse_size(\"%s\"): expected -DSM_EINVAL, got %d (value %zu)",
                 s, rc, v);
}

static void test_parse_size(void **state)
{
    (void)state;
    size_ok("4096", 4096);
    size_ok("1", 1);
    size_ok("16K", 16 * KIB);
    size_ok("3M", 3 * MIB);
    size_ok("2G", 2 * GIB);
    size_ok("1T", TIB);
    size_ok("1024K", MIB);
    size_ok("18446744073709551615", SIZE_MAX);   /* the largest size_t */
    size_ok("16777215T", 16777215 * TIB);        /* the largest with T */
    size_bad("12X");
    size_bad("");
    size_bad("-1");
    size_bad("-16K");
    size_bad("K");
    size_bad("16K junk");
    size_bad("16KK");
    size_bad("18446744073709551616");             /* 2^64 */
    size_bad("16777216T");                        /* 2^64 */
    size_bad("17179869184G");                     /* 2^64 */
    size_bad("99999999999T");
}

/* The values named in "ranks disagree on ...": as the variable writes them. */
static void test_value_text(void **state)
{
    char b[64];
    (void)state;
    assert_string_equal(dsm__config_value_text("DSM_COMM", DSM_COMM_QUEUE, b, sizeof b), "queue");
    assert_string_equal(dsm__config_value_text("DSM_COMM", DSM_COMM_DIRECT, b, sizeof b), "direct");
    assert_string_equal(dsm__config_value_text("DSM_COMM", DSM_COMM_MULTIPLE, b, sizeof b),
                        "multiple");
    assert_string_equal(dsm__config_value_text("DSM_COMM", DSM_COMM_RMA, b, sizeof b), "rma");
    assert_non_null(strstr(dsm__config_value_text("DSM_COMM", 9, b, sizeof b), "9"));
    assert_string_equal(dsm__config_value_text("DSM_HOME", DSM_HOME_BLOCK, b, sizeof b), "block");
    assert_string_equal(dsm__config_value_text("DSM_HOME", DSM_HOME_CYCLIC, b, sizeof b), "cyclic");
    assert_string_equal(dsm__config_value_text("DSM_STATS", DSM_STATS_JSON, b, sizeof b), "json");
    assert_string_equal(dsm__config_value_text("DSM_STATS", DSM_STATS_OFF, b, sizeof b), "0");
    assert_string_equal(dsm__config_value_text("DSM_PAGE_SIZE", 16 * KIB, b, sizeof b), "16K");
    assert_string_equal(dsm__config_value_text("DSM_PAGE_SIZE", 4 * MIB, b, sizeof b), "4M");
    assert_string_equal(dsm__config_value_text("DSM_HEAP_SIZE", GIB, b, sizeof b), "1G");
    assert_string_equal(dsm__config_value_text("DSM_HEAP_SIZE", 3 * TIB, b, sizeof b), "3T");
    assert_string_equal(dsm__config_value_text("DSM_HEAP_SIZE", 2048 * TIB, b, sizeof b),
                        "2048T");
    assert_string_equal(dsm__config_value_text("DSM_HEAP_SIZE", 1000, b, sizeof b), "1000");
    assert_string_equal(dsm__config_value_text("DSM_BASE", 0x200000000000ULL, b, sizeof b),
                        "0x200000000000");
    assert_string_equal(dsm__config_value_text("DSM_MAX_LOCKS", 4096, b, sizeof b), "4096");
    /* Never past the buffer. */
    memset(b, 'x', sizeof b);
    dsm__config_value_text("DSM_COMM", DSM_COMM_MULTIPLE, b, 4);
    assert_string_equal(b, "mul");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_non_dsm_ignored),
        cmocka_unit_test(test_heap_size),
        cmocka_unit_test(test_page_size),
        cmocka_unit_test(test_page_chunk),
        cmocka_unit_test(test_heap_and_page_order),
        cmocka_unit_test(test_base),
        cmocka_unit_test(test_enums),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_prefetch),
        cmocka_unit_test(test_all_together),
        cmocka_unit_test(test_unknown_variable),
        cmocka_unit_test(test_bad_page_size),
        cmocka_unit_test(test_bad_heap_size),
        cmocka_unit_test(test_bad_enums),
        cmocka_unit_test(test_bad_base),
        cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_timeouts),
        cmocka_unit_test(test_host_full),
        cmocka_unit_test(test_spin_us_for),
        cmocka_unit_test(test_comm_spin_us_for),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_barrier_diffs),
        cmocka_unit_test(test_barrier_shape),
        cmocka_unit_test(test_runtime_names),
        cmocka_unit_test(test_bad_among_good),
        cmocka_unit_test(test_err_buffer_bounds),
        cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_value_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
