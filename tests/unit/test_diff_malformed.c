/*
 * test_diff_malformed.c - malformed diffs are refused (dsm__diff_check and
 * dsm__diff_apply in libdsm/diff.c).
 *
 * Every expected value comes from the format documented in dsm_pure.h, not
 * from the code under test: each diff here is built by hand and breaks one
 * rule of the format (a run of no chunk, an offset unaligned or past the
 * page, a run past the page's end, runs out of order or overlapping, a
 * header, data or mask cut short, bytes after the last run).  Both calls
 * must return -DSM_EPROTO and leave every byte of the page as it was.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_diff_util.h"

/* ---- malformed diffs --------------------------------------------------- */

/* Apply d (len bytes) to a page of known content: must return -DSM_EPROTO
 * (and dsm__diff_check too) and leave every byte as it was.  Most cases
 * start with a valid run so that an implementation that applies runs
 * before validating them all is caught. */
static void expect_eproto_ps(const struct dbuf *d, size_t len, size_t ps)
{
    unsigned char *page = page_alloc(ps), *before = page_alloc(ps);

    assert_true(len <= d->len);
    for (size_t i = 0; i < ps; i++)
        page[i] = (unsigned char)(0x11 + i);
    memcpy(before, page, ps);
    assert_int_equal(dsm__diff_check(ps, d->b, len), -DSM_EPROTO);
    assert_int_equal(dsm__diff_apply(page, ps, d->b, len), -DSM_EPROTO);
    assert_memory_equal(page, before, ps);
    free(page); free(before);
}

#define PS 4096u

static void expect_eproto(const struct dbuf *d)
{
    expect_eproto_ps(d, d->len, PS);
}

/* A fresh diff that starts with a valid run: chunk 0, unmasked. */
static struct dbuf *valid_start(void)
{
    struct dbuf *d = dbuf_new();
    d_run(d, 0, 1, 0xde, 0);
    return d;
}

static void test_malformed_zero_chunks(void **state)
{
    struct dbuf *d;

    (void)state;
    d = dbuf_new();
    d_hdr(d, 0, 0);
    expect_eproto(d);
    free(d);
    d = dbuf_new();
    d_hdr(d, 0, MASKED);                    /* masked, still no chunk */
    expect_eproto(d);
    free(d);
    d = valid_start();
    d_hdr(d, 24, 0);
    expect_eproto(d);
    free(d);
    d = valid_start();
    d_hdr(d, 24, MASKED);
    expect_eproto(d);
    free(d);
    d = valid_start();
    d_hdr(d, 24, 0);
    d_run(d, 40, 1, 0xbe, 0);
    expect_eproto(d);
    free(d);
}

static void test_malformed_offset_unaligned(void **state)
{
    static const uint32_t after[] = { 9, 12, 17, PS - 4, PS - 1 };
    static const uint32_t first[] = { 1, 4, 7 };
    struct dbuf *d;

    (void)state;
    for (size_t k = 0; k < sizeof after / sizeof after[0]; k++) {
        d = valid_start();
        d_run(d, after[k], 1, 0xbe, 0);
        expect_eproto(d);
        free(d);
        d = valid_start();
        d_run(d, after[k], 1 | MASKED, 0xbe, 0x01);
        expect_eproto(d);
        free(d);
    }
    for (size_t k = 0; k < sizeof first / sizeof first[0]; k++) {
        d = dbuf_new();
        d_run(d, first[k], 1, 0xbe, 0);
        expect_eproto(d);
        free(d);
    }
}

static void test_malformed_offset_past_end(void **state)
{
    static const uint32_t offs[] = { PS, PS + 8, PS + 800, 0x7ffffff8u, 0xfffffff8u };
    struct dbuf *d;

    (void)state;
    for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
        d = valid_start();
        d_run(d, offs[k], 1, 0xbe, 0);
        expect_eproto(d);
        free(d);
        d = dbuf_new();
        d_run(d, offs[k], 1 | MASKED, 0xbe, 0xff);
        expect_eproto(d);
        free(d);
    }
    /* Past a 4096-byte page, inside a 16384-byte one: only that one takes
     * it. */
    d = dbuf_new();
    d_run(d, PS, 1, 0xbe, 0);
    assert_int_equal(dsm__diff_check(16384, d->b, d->len), 0);
    expect_eproto(d);
    free(d);
}

static void test_malformed_run_past_end(void **state)
{
    struct dbuf *d;

    (void)state;
    d = valid_start();
    d_run(d, PS - 8, 2, 0xbe, 0);           /* one chunk too many */
    expect_eproto(d);
    free(d);
    d = valid_start();
    d_run(d, PS - 16, 3 | MASKED, 0xbe, 0x01);
    expect_eproto(d);
    free(d);
    d = dbuf_new();
    d_run(d, 0, PS / CHUNK + 1, 0xbe, 0);   /* from 0, one chunk too many */
    expect_eproto(d);
    free(d);
    d = dbuf_new();
    d_run(d, 0, (PS / CHUNK + 1) | MASKED, 0xbe, 0x01);
    expect_eproto(d);
    free(d);
    /* chunks * 8 wraps around in 32 bits: 0x20000001 * 8 == 8; with the
     * mask, * 9 == 9. */
    d = valid_start();
    d_hdr(d, PS - 8, 0x20000001u);
    d_fill(d, 0xbe, 8);
    expect_eproto(d);
    free(d);
    d = valid_start();
    d_hdr(d, PS - 8, 0x20000001u | MASKED);
    d_fill(d, 0xbe, 9);
    expect_eproto(d);
    free(d);
    /* The largest count, with as much data as fits after it. */
    d = valid_start();
    d_hdr(d, 8, 0x7fffffffu);
    d_fill(d, 0xbe, PS);
    expect_eproto(d);
    free(d);
}

static void test_malformed_order(void **state)
{
    struct dbuf *d;

    (void)state;
    d = dbuf_new();                         /* decreasing */
    d_run(d, 80, 1, 0xde, 0);
    d_run(d, 40, 1, 0xbe, 0);
    expect_eproto(d);
    free(d);
    d = dbuf_new();                         /* the same chunk twice */
    d_run(d, 32, 1, 0xde, 0);
    d_run(d, 32, 1, 0xbe, 0);
    expect_eproto(d);
    free(d);
    d = dbuf_new();                         /* [32,56) then [48,56) */
    d_run(d, 32, 3, 0xde, 0);
    d_run(d, 48, 1, 0xbe, 0);
    expect_eproto(d);
    free(d);
    d = dbuf_new();                         /* masked, disjoint bytes, still overlapping */
    d_run(d, 32, 3 | MASKED, 0xde, 0x0f);
    d_run(d, 40, 1 | MASKED, 0xbe, 0xf0);
    expect_eproto(d);
    free(d);
    d = dbuf_new();                         /* overlapping by the last chunk */
    d_run(d, 32, 2, 0xde, 0);
    d_run(d, 40, 1, 0xbe, 0);
    expect_eproto(d);
    free(d);
    d = dbuf_new();                         /* third run goes back */
    d_run(d, 0, 1, 0xde, 0);
    d_run(d, 64, 1, 0xde, 0);
    d_run(d, 8, 1, 0xbe, 0);
    expect_eproto(d);
    free(d);
}

static void test_malformed_truncated_header(void **state)
{
    struct dbuf *d = valid_start();

    (void)state;
    d_run(d, 40, 1, 0xbe, 0);
    expect_eproto_ps(d, 4, PS);             /* half a header alone */
    expect_eproto_ps(d, 16 + 4, PS);        /* valid run + half a header */
    expect_eproto_ps(d, 16 + 7, PS);
    expect_eproto_ps(d, 16 + 1, PS);
    free(d);
}

static void test_malformed_truncated_data(void **state)
{
    struct dbuf *d = valid_start();

    (void)state;
    d_run(d, 40, 3, 0xbe, 0);               /* 16 + 32 bytes */
    expect_eproto_ps(d, d->len - 8, PS);    /* last chunk missing */
    expect_eproto_ps(d, d->len - 1, PS);    /* last byte missing */
    expect_eproto_ps(d, 16 + 8, PS);        /* header, no data */
    expect_eproto_ps(d, 8, PS);             /* first run: header only */
    expect_eproto_ps(d, 12, PS);
    free(d);
    d = valid_start();
    d_run(d, 40, 3 | MASKED, 0xbe, 0xff);   /* 16 + 35 bytes */
    expect_eproto_ps(d, 16 + 8 + 20, PS);   /* data cut short */
    free(d);
}

static void test_malformed_truncated_mask(void **state)
{
    struct dbuf *d = valid_start();

    (void)state;
    d_run(d, 40, 3 | MASKED, 0xbe, 0x11);   /* 16 + 8 + 24 + 3 bytes */
    assert_int_equal(d->len, 51);
    expect_eproto_ps(d, 50, PS);            /* last mask byte missing */
    expect_eproto_ps(d, 49, PS);
    expect_eproto_ps(d, 48, PS);            /* no mask: an unmasked run's length */
    free(d);
    d = dbuf_new();
    d_run(d, 0, 1 | MASKED, 0xbe, 0x01);
    expect_eproto_ps(d, HDR + 8, PS);
    free(d);
}

/* Trailing bytes after the last complete run are not a diff either. */
static void test_malformed_trailing_bytes(void **state)
{
    struct dbuf *d = valid_start();

    (void)state;
    d_fill(d, 0, 4);
    expect_eproto(d);                       /* 4 stray bytes */
    expect_eproto_ps(d, 16 + 2, PS);        /* 2 stray bytes */
    free(d);
    d = dbuf_new();
    d_run(d, 0, 1 | MASKED, 0xbe, 0x01);
    d_fill(d, 0x01, 1);                     /* one mask byte too many */
    expect_eproto(d);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed_zero_chunks),
        cmocka_unit_test(test_malformed_offset_unaligned),
        cmocka_unit_test(test_malformed_offset_past_end),
        cmocka_unit_test(test_malformed_run_past_end),
        cmocka_unit_test(test_malformed_order),
        cmocka_unit_test(test_malformed_truncated_header),
        cmocka_unit_test(test_malformed_truncated_data),
        cmocka_unit_test(test_malformed_truncated_mask),
        cmocka_unit_test(test_malformed_trailing_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
