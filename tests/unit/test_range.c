/*
 * test_range.c - the deterministic first-fit allocator of page ranges
 * (libdsm/range.c).
 *
 * Fixed cases check first fit, coalescing and the error codes; a long
 * seeded random sequence of allocations and frees is checked step by step
 * against a plain bitmap model kept here (first fit = the lowest start of
 * `count` free pages in a row).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dsm_pure.h"

static void alloc_ok(struct dsm_ranges *r, size_t count, size_t expect_start)
{
    size_t start = (size_t)-1;
    int rc = dsm__ranges_alloc(r, count, &start);
    if (rc != 0 || start != expect_start)
        fail_msg("alloc(%zu): expected 0 and start %zu, got %d and %zu",
                 count, expect_start, rc, start);
}

static void free_ok(struct dsm_ranges *r, size_t start, size_t expect_count)
{
    size_t count = (size_t)-1;
    int rc = dsm__ranges_free(r, start, &count);
    if (rc != 0 || count != expect_count)
        fail_msg("free(%zu): expected 0 and count %zu, got %d and %zu",
                 start, expect_count, rc, count);
}

static void test_init(void **state)
{
    struct dsm_ranges r;

    (void)state;
    assert_int_equal(dsm__ranges_init(&r, 1000), 0);
    assert_int_equal(dsm__ranges_free_total(&r), 1000);
    assert_int_equal(dsm__ranges_largest_free(&r), 1000);
    dsm__ranges_destroy(&r);
}

static void test_first_fit_increasing(void **state)
{
    struct dsm_ranges r;

    (void)state;
    assert_int_equal(dsm__ranges_init(&r, 100), 0);
    alloc_ok(&r, 10, 0);
    alloc_ok(&r, 1, 10);
    alloc_ok(&r, 20, 11);
    alloc_ok(&r, 5, 31);
    assert_int_equal(dsm__ranges_free_total(&r), 64);
    assert_int_equal(dsm__ranges_largest_free(&r), 64);
    alloc_ok(&r, 64, 36);                       /* exactly the rest */
    assert_int_equal(dsm__ranges_free_total(&r), 0);
    assert_int_equal(dsm__ranges_largest_free(&r), 0);
    dsm__ranges_destroy(&r);
}

/* A hole is reused by the first allocation that fits in it; a larger one
 * goes past it. */
static void test_first_fit_hole(void **state)
{
    struct dsm_ranges r;

    (void)state;
    assert_int_equal(dsm__ranges_init(&r, 100), 0);
    alloc_ok(&r, 10, 0);
    alloc_ok(&r, 10, 10);
    alloc_ok(&r, 10, 20);
    free_ok(&r, 10, 10);                        /* hole [10,20) */
    alloc_ok(&r, 11, 30);                       /* too big for the hole */
    alloc_ok(&r, 4, 10);                        /* first fit: in the hole */
    alloc_ok(&r, 6, 14);                        /* the rest of the hole */
    alloc_ok(&r, 1, 41);
    assert_int_equal(dsm__ranges_free_total(&r), 58);
    dsm__ranges_destroy(&r);
}

static void test_coalescing(void **state)
{
    struct dsm_ranges r;

    (void)state;
    assert_int_equal(dsm__ranges_init(&r, 50), 0);
    alloc_ok(&r, 10, 0);                        /* A [0,10) */
    alloc_ok(&r, 10, 10);                       /* B [10,20) */
    alloc_ok(&r, 10, 20);                       /* C [20,30) */
    alloc_ok(&r, 20, 30);                       /* D [30,50) */
    assert_int_equal(dsm__ranges_largest_free(&r), 0);

    free_ok(&r, 10, 10);                        /* middle first */
    assert_int_equal(dsm__ranges_largest_free(&r), 10);
    assert_int_equal(dsm__ranges_free_total(&r), 10);
    free_ok(&r, 0, 10);                         /* left neighbour */
    assert_int_equal(dsm__ranges_largest_free(&r), 20);
    free_ok(&r, 20, 10);                        /* right neighbour */
    assert_int_equal(dsm__ranges_largest_free(&r), 30);
    assert_int_equal(dsm__ranges_free_total(&r), 30);
    alloc_ok(&r, 30, 0);                        /* one range now */
    free_ok(&r, 0, 30);
    free_ok(&r, 30, 20);                        /* last one: all free */
    assert_int_equal(dsm__ranges_largest_free(&r), 50);
    assert_int_equal(dsm__ranges_free_total(&r), 50);
    alloc_ok(&r, 50, 0);
    dsm__ranges_destroy(&r);
}

/* Coalescing on both sides at once: free the two outer ones, then the
 * middle one joins them. */
static void test_coalescing_both_sides(void **state)
{
    struct dsm_ranges r;

    (void)state;
    assert_int_equal(dsm__ranges_init(&r, 40), 0);
    alloc_ok(&r, 5, 0);
    alloc_ok(&r, 5, 5);
    alloc_ok(&r, 5, 10);
    alloc_ok(&r, 5, 15);                        /* [20,40) stays free */
    free_ok(&r, 5, 5);
    free_ok(&r, 15, 5);                         /* joins [20,40) */
    assert_int_equal(dsm__ranges_largest_free(&r), 25);
    free_ok(&r, 10, 5);                         /* joins [5,10) and [15,40) */
    assert_int_equal(dsm__ranges_largest_free(&r), 35);
    assert_int_equal(dsm__ranges_free_total(&r), 35);
    alloc_ok(&r, 35, 5);
    dsm__ranges_destroy(&r);
}

static void test_enomem(void **state)
{
    struct dsm_ranges r;
    size_t start = 777;

    (void)state;
    assert_int_equal(dsm__ranges_init(&r, 30), 0);
    assert_int_equal(dsm__ranges_alloc(&r, 31, &start), -DSM_ENOMEM);
    alloc_ok(&r, 10, 0);
    alloc_ok(&r, 10, 10);
    alloc_ok(&r, 10, 20);
    free_ok(&r, 0, 10);
    free_ok(&r, 20, 10);                        /* 20 free, largest 10 */
    assert_int_equal(dsm__ranges_free_total(&r), 20);
    assert_int_equal(dsm__ranges_alloc(&r, 11, &start), -DSM_ENOMEM);
    assert_int_equal(dsm__ranges_alloc(&r, 20, &start), -DSM_ENOMEM);
    /* A failed allocation changes nothing. */
    assert_int_equal(dsm__ranges_free_total(&r), 20);
    assert_int_equal(dsm__ranges_largest_free(&r), 10);
    alloc_ok(&r, 10, 0);
    alloc_ok(&r, 10, 20);
    assert_int_equal(dsm__ranges_alloc(&r, 1, &start), -DSM_ENOMEM);
    dsm__ranges_destroy(&r);
}

static void test_free_not_an_allocation(void **state)
{
    struct dsm_ranges r;
    size_t count = 0;

    (void)state;
    assert_int_equal(dsm__ranges_init(&r, 100), 0);
    assert_int_equal(dsm__ranges_free(&r, 0, &count), -DSM_EINVAL);  /* nothing yet */
    alloc_ok(&r, 10, 0);
    alloc_ok(&r, 10, 10);
    assert_int_equal(dsm__ranges_free(&r, 5, &count), -DSM_EINVAL);  /* inside one */
    assert_int_equal(dsm__ranges_free(&r, 19, &count), -DSM_EINVAL);
    assert_int_equal(dsm__ranges_free(&r, 20, &count), -DSM_EINVAL); /* free space */
    assert_int_equal(dsm__ranges_free(&r, 50, &count), -DSM_EINVAL);
    assert_int_equal(dsm__ranges_free(&r, 100, &count), -DSM_EINVAL); /* past end */
    assert_int_equal(dsm__ranges_free(&r, (size_t)-1, &count), -DSM_EINVAL);
    free_ok(&r, 10, 10);
    assert_int_equal(dsm__ranges_free(&r, 10, &count), -DSM_EINVAL); /* twice */
    /* The refused frees changed nothing. */
    assert_int_equal(dsm__ranges_free_total(&r), 90);
    assert_int_equal(dsm__ranges_largest_free(&r), 90);
    free_ok(&r, 0, 10);
    assert_int_equal(dsm__ranges_free_total(&r), 100);
    dsm__ranges_destroy(&r);
}

/* ---- random sequence against a bitmap model ---------------------------- */

static uint64_t rng_state = 0x12345678abcdefull;

static uint32_t rng32(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

#define TOTAL 2000
#define MAXLIVE 400

struct model {
    unsigned char used[TOTAL];
    size_t live_start[MAXLIVE], live_count[MAXLIVE];
    size_t nlive;
};

/* Lowest start of count free pages in a row, or -1. */
static long model_first_fit(const struct model *m, size_t count)
{
    size_t run = 0;
    for (size_t i = 0; i < TOTAL; i++) {
        run = m->used[i] ? 0 : run + 1;
        if (run == count)
            return (long)(i + 1 - count);
    }
    return -1;
}

static size_t model_largest(const struct model *m)
{
    size_t run = 0, best = 0;
    for (size_t i = 0; i < TOTAL; i++) {
        run = m->used[i] ? 0 : run + 1;
        if (run > best)
            best = run;
    }
    return best;
}

static size_t model_free_total(const struct model *m)
{
    size_t n = 0;
    for (size_t i = 0; i < TOTAL; i++)
        n += !m->used[i];
    return n;
}

static void test_random_vs_model(void **state)
{
    static struct model m;
    struct dsm_ranges r;
    unsigned long allocs = 0, frees = 0, fails = 0;

    (void)state;
    memset(&m, 0, sizeof(m));
    assert_int_equal(dsm__ranges_init(&r, TOTAL), 0);
    for (int step = 0; step < 20000; step++) {
        int do_alloc = m.nlive == 0 || (m.nlive < MAXLIVE && rng32() % 100 < 55);

        if (do_alloc) {
            /* Mostly small, sometimes large requests. */
            size_t count = rng32() % 8 == 0 ? 1 + rng32() % 400 : 1 + rng32() % 20;
            long expect = model_first_fit(&m, count);
            size_t start = (size_t)-1;
            int rc = dsm__ranges_alloc(&r, count, &start);

            if (expect < 0) {
                if (rc != -DSM_ENOMEM)
                    fail_msg("step %d: alloc(%zu) expected -DSM_ENOMEM, got %d "
                             "(start %zu)", step, count, rc, start);
                fails++;
            } else {
                if (rc != 0 || start != (size_t)expect)
                    fail_msg("step %d: alloc(%zu) expected start %ld, got %d "
                             "and %zu", step, count, expect, rc, start);
                memset(m.used + start, 1, count);
                m.live_start[m.nlive] = start;
                m.live_count[m.nlive] = count;
                m.nlive++;
                allocs++;
            }
        } else {
            size_t k = rng32() % m.nlive;
            size_t count = (size_t)-1;
            int rc;

            /* Now and then a bogus free: one page inside a live allocation
             * (never its start) must be refused. */
            if (m.live_count[k] > 1 && rng32() % 10 == 0) {
                size_t inside = m.live_start[k] + 1 + rng32() % (m.live_count[k] - 1);
                assert_int_equal(dsm__ranges_free(&r, inside, &count), -DSM_EINVAL);
            }
            rc = dsm__ranges_free(&r, m.live_start[k], &count);
            if (rc != 0 || count != m.live_count[k])
                fail_msg("step %d: free(%zu) expected 0 and %zu, got %d and %zu",
                         step, m.live_start[k], m.live_count[k], rc, count);
            memset(m.used + m.live_start[k], 0, m.live_count[k]);
            m.nlive--;
            m.live_start[k] = m.live_start[m.nlive];
            m.live_count[k] = m.live_count[m.nlive];
            frees++;
        }
        if (dsm__ranges_free_total(&r) != model_free_total(&m) ||
            dsm__ranges_largest_free(&r) != model_largest(&m))
            fail_msg("step %d: free_total %zu largest %zu, model %zu and %zu", step,
                     dsm__ranges_free_total(&r), dsm__ranges_largest_free(&r),
                     model_free_total(&m), model_largest(&m));
    }
    /* Free everything left: one free range of the whole size again. */
    while (m.nlive > 0) {
        size_t count;
        m.nlive--;
        assert_int_equal(dsm__ranges_free(&r, m.live_start[m.nlive], &count), 0);
        assert_int_equal(count, m.live_count[m.nlive]);
    }
    assert_int_equal(dsm__ranges_free_total(&r), TOTAL);
    assert_int_equal(dsm__ranges_largest_free(&r), TOTAL);
    /* The sequence exercised every path. */
    assert_true(allocs > 1000 && frees > 1000 && fails > 10);
    dsm__ranges_destroy(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_first_fit_increasing),
        cmocka_unit_test(test_first_fit_hole),
        cmocka_unit_test(test_coalescing),
        cmocka_unit_test(test_coalescing_both_sides),
        cmocka_unit_test(test_enomem),
        cmocka_unit_test(test_free_not_an_allocation),
        cmocka_unit_test(test_random_vs_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
