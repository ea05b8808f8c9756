/*
 * test_diff.c - twins and diffs (libdsm/diff.c).
 *
 * Every expected value comes from the format documented in dsm_pure.h, not
 * from the code under test: diffs are decoded here by hand and compared with
 * the words we changed, hand-built diffs are applied, and malformed diffs
 * must be refused without touching the page.  The expected encoding is the
 * canonical one: exactly the changed words, in maximal runs (one run per
 * stretch of consecutive changed words), so that a diff never carries a word
 * its writer did not change - that is what lets diffs of several writers merge.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dsm_pure.h"

#define HDR ((size_t)sizeof(struct dsm_diff_run))   /* 8 bytes */

static const size_t page_sizes[] = { 4096, 16384, 65536 };
#define NPAGE_SIZES (sizeof(page_sizes) / sizeof(page_sizes[0]))

/* A small deterministic generator (xorshift64*) so that the random cases
 * are the same on every libc. */
static uint64_t rng_state;

static void rng_seed(uint64_t s) { rng_state = s ? s : 0x9e3779b97f4a7c15ull; }

static uint32_t rng32(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

static uint32_t *page_alloc(size_t page_size)
{
    uint32_t *p = malloc(page_size);
    assert_non_null(p);
    return p;
}

static void fill_random(uint32_t *p, size_t page_size)
{
    for (size_t i = 0; i < page_size / 4; i++)
        p[i] = rng32();
}

/* Change word i of cur so that it surely differs from the twin. */
static void change_word(const uint32_t *twin, uint32_t *cur, size_t i)
{
    cur[i] = ~twin[i];
}

/* Diff output buffer: capacity dsm__diff_max_size() followed by a guard
 * zone that the encoder must never write. */
#define GUARD 64
#define GUARD_BYTE 0xA5

struct outbuf {
    unsigned char *p;
    size_t cap;
};

static struct outbuf out_alloc(size_t page_size)
{
    struct outbuf o;
    o.cap = dsm__diff_max_size(page_size);
    assert_true(o.cap >= HDR + page_size);   /* at least "whole page changed" */
    o.p = malloc(o.cap + GUARD);
    assert_non_null(o.p);
    memset(o.p, GUARD_BYTE, o.cap + GUARD);
    return o;
}

static void out_check_guard(const struct outbuf *o)
{
    for (size_t i = 0; i < GUARD; i++)
        assert_int_equal(o->p[o->cap + i], GUARD_BYTE);
}

/* Decode a diff by hand and check that it is the canonical encoding of
 * cur against twin: runs in increasing order, no run empty, out of the page,
 * overlapping or touching the previous one; the covered words are exactly
 * the changed words and carry cur's values.  Returns the number of runs. */
static size_t check_canonical(const uint32_t *twin, const uint32_t *cur,
                              size_t page_size, const unsigned char *diff,
                              size_t len)
{
    size_t nwords = page_size / 4;
    unsigned char *covered = calloc(nwords, 1);
    size_t pos = 0, runs = 0, prev_end = 0, changed = 0, expect_runs = 0;

    assert_non_null(covered);
    while (pos < len) {
        struct dsm_diff_run r;
        assert_true(len - pos >= HDR);
        memcpy(&r, diff + pos, HDR);
        pos += HDR;
        assert_true(r.words > 0);
        assert_true(r.word_offset < nwords);
        assert_true(r.words <= nwords - r.word_offset);
        if (runs > 0)   /* strictly after, and not touching: maximal runs */
            assert_true(r.word_offset > prev_end);
        assert_true(len - pos >= (size_t)r.words * 4);
        for (size_t k = 0; k < r.words; k++) {
            uint32_t w;
            size_t i = r.word_offset + k;
            memcpy(&w, diff + pos + 4 * k, 4);
            assert_int_equal(w, cur[i]);
            assert_int_not_equal(twin[i], cur[i]);  /* only changed words */
            covered[i] = 1;
        }
        pos += (size_t)r.words * 4;
        prev_end = r.word_offset + r.words;
        runs++;
    }
    assert_int_equal(pos, len);
    for (size_t i = 0; i < nwords; i++) {
        int ch = twin[i] != cur[i];
        if (ch) {
            changed++;
            if (i == 0 || twin[i - 1] == cur[i - 1])
                expect_runs++;
        }
        assert_int_equal(covered[i], ch);           /* every changed word */
    }
    assert_int_equal(runs, expect_runs);
    assert_int_equal(len, expect_runs * HDR + changed * 4);
    free(covered);
    return runs;
}

/* make + canonical check + apply to a copy of the twin; the copy must
 * become cur.  Returns the encoded length. */
static size_t round_trip(const uint32_t *twin, const uint32_t *cur,
                         size_t page_size)
{
    struct outbuf o = out_alloc(page_size);
    uint32_t *copy = page_alloc(page_size);
    size_t changed = 0, len;
    long n;

    for (size_t i = 0; i < page_size / 4; i++)
        changed += twin[i] != cur[i];
    len = dsm__diff_make(twin, cur, page_size, o.p, o.cap);
    assert_true(len <= o.cap);
    out_check_guard(&o);
    check_canonical(twin, cur, page_size, o.p, len);

    memcpy(copy, twin, page_size);
    n = dsm__diff_apply(copy, page_size, o.p, len);
    assert_int_equal(n, (long)changed);
    assert_memory_equal(copy, cur, page_size);
    free(copy);
    free(o.p);
    return len;
}

/* ---- simple cases ------------------------------------------------------ */

static void test_unchanged(void **state)
{
    (void)state;
    for (size_t s = 0; s < NPAGE_SIZES; s++) {
        size_t ps = page_sizes[s];
        uint32_t *twin = page_alloc(ps), *cur = page_alloc(ps);
        uint32_t *page = page_alloc(ps), *before = page_alloc(ps);
        struct outbuf o = out_alloc(ps);

        rng_seed(1);
        fill_random(twin, ps);
        memcpy(cur, twin, ps);
        assert_int_equal(dsm__diff_make(twin, cur, ps, o.p, o.cap), 0);
        out_check_guard(&o);

        /* An empty diff is a no-op and writes no word. */
        fill_random(page, ps);
        memcpy(before, page, ps);
        assert_int_equal(dsm__diff_apply(page, ps, o.p, 0), 0);
        assert_memory_equal(page, before, ps);
        free(twin); free(cur); free(page); free(before); free(o.p);
    }
}

static void test_whole_page(void **state)
{
    (void)state;
    for (size_t s = 0; s < NPAGE_SIZES; s++) {
        size_t ps = page_sizes[s], nwords = ps / 4;
        uint32_t *twin = page_alloc(ps), *cur = page_alloc(ps);
        struct outbuf o = out_alloc(ps);
        struct dsm_diff_run r;
        size_t len;

        rng_seed(2);
        fill_random(twin, ps);
        for (size_t i = 0; i < nwords; i++)
            change_word(twin, cur, i);
        len = dsm__diff_make(twin, cur, ps, o.p, o.cap);
        assert_int_equal(len, HDR + ps);            /* one run of every word */
        memcpy(&r, o.p, HDR);
        assert_int_equal(r.word_offset, 0);
        assert_int_equal(r.words, nwords);
        assert_memory_equal(o.p + HDR, cur, ps);
        out_check_guard(&o);
        assert_int_equal(round_trip(twin, cur, ps), HDR + ps);
        free(twin); free(cur); free(o.p);
    }
}

/* One changed word at index i: one run {i, 1} and its data. */
static void check_single_word(size_t ps, size_t i)
{
    uint32_t *twin = page_alloc(ps), *cur = page_alloc(ps);
    struct outbuf o = out_alloc(ps);
    struct dsm_diff_run r;
    uint32_t w;

    rng_seed(3 + i);
    fill_random(twin, ps);
    memcpy(cur, twin, ps);
    change_word(twin, cur, i);
    assert_int_equal(dsm__diff_make(twin, cur, ps, o.p, o.cap), HDR + 4);
    memcpy(&r, o.p, HDR);
    memcpy(&w, o.p + HDR, 4);
    assert_int_equal(r.word_offset, i);
    assert_int_equal(r.words, 1);
    assert_int_equal(w, ~twin[i]);
    round_trip(twin, cur, ps);
    free(twin); free(cur); free(o.p);
}

static void test_first_word(void **state)
{
    (void)state;
    for (size_t s = 0; s < NPAGE_SIZES; s++)
        check_single_word(page_sizes[s], 0);
}

static void test_last_word(void **state)
{
    (void)state;
    for (size_t s = 0; s < NPAGE_SIZES; s++)
        check_single_word(page_sizes[s], page_sizes[s] / 4 - 1);
}

/* A change of a single byte inside a word still makes the whole word part
 * of the diff (4-byte granularity). */
static void test_byte_change_is_word(void **state)
{
    size_t ps = 4096;
    uint32_t *twin = page_alloc(ps), *cur = page_alloc(ps);
    struct outbuf o = out_alloc(ps);
    struct dsm_diff_run r;

    (void)state;
    memset(twin, 0, ps);
    memcpy(cur, twin, ps);
    ((unsigned char *)cur)[4 * 7 + 2] = 0x5a;       /* byte 2 of word 7 */
    assert_int_equal(dsm__diff_make(twin, cur, ps, o.p, o.cap), HDR + 4);
    memcpy(&r, o.p, HDR);
    assert_int_equal(r.word_offset, 7);
    assert_int_equal(r.words, 1);
    assert_memory_equal(o.p + HDR, &cur[7], 4);
    free(twin); free(cur); free(o.p);
}

static void test_scattered_words(void **state)
{
    static const size_t idx[] = { 3, 17, 18, 100, 511, 600, 1000 };
    size_t ps = 4096;
    uint32_t *twin = page_alloc(ps), *cur = page_alloc(ps);
    struct outbuf o = out_alloc(ps);
    /* Expected runs: {3,1} {17,2} {100,1} {511,1} {600,1} {1000,1}. */
    static const uint32_t exp_off[] = { 3, 17, 100, 511, 600, 1000 };
    static const uint32_t exp_words[] = { 1, 2, 1, 1, 1, 1 };
    size_t len, pos = 0;

    (void)state;
    rng_seed(4);
    fill_random(twin, ps);
    memcpy(cur, twin, ps);
    for (size_t k = 0; k < sizeof(idx) / sizeof(idx[0]); k++)
        change_word(twin, cur, idx[k]);
    len = dsm__diff_make(twin, cur, ps, o.p, o.cap);
    assert_int_equal(len, 6 * HDR + 7 * 4);
    for (size_t k = 0; k < 6; k++) {
        struct dsm_diff_run r;
        memcpy(&r, o.p + pos, HDR);
        assert_int_equal(r.word_offset, exp_off[k]);
        assert_int_equal(r.words, exp_words[k]);
        assert_memory_equal(o.p + pos + HDR, &cur[exp_off[k]], 4 * exp_words[k]);
        pos += HDR + 4 * exp_words[k];
    }
    round_trip(twin, cur, ps);
    free(twin); free(cur); free(o.p);
}

/* Every other word changed: one run per changed word. */
static void test_alternating(void **state)
{
    (void)state;
    for (size_t s = 0; s < NPAGE_SIZES; s++) {
        size_t ps = page_sizes[s], nwords = ps / 4;
        for (size_t parity = 0; parity < 2; parity++) {
            uint32_t *twin = page_alloc(ps), *cur = page_alloc(ps);
            size_t len;

            rng_seed(5 + parity);
            fill_random(twin, ps);
            memcpy(cur, twin, ps);
            for (size_t i = parity; i < nwords; i += 2)
                change_word(twin, cur, i);
            len = round_trip(twin, cur, ps);
            assert_int_equal(len, (nwords / 2) * (HDR + 4));
            assert_true(len <= dsm__diff_max_size(ps));
            free(twin); free(cur);
        }
    }
}

/* The true worst case of the canonical encoding is not the alternating
 * pattern: with W words (W even) at most W/2 runs fit, and then one word
 * more can be changed: words 0,1 then 3,5,...,W-1 give W/2 runs and W/2+1
 * words, 8*(W/2) + 4*(W/2+1) = 6W + 4 bytes (alternating: 6W). */
static void test_worst_case_fits(void **state)
{
    (void)state;
    for (size_t s = 0; s < NPAGE_SIZES; s++) {
        size_t ps = page_sizes[s], nwords = ps / 4;
        uint32_t *twin = page_alloc(ps), *cur = page_alloc(ps);
        size_t worst = 6 * nwords + 4;

        assert_true(dsm__diff_max_size(ps) >= worst);
        rng_seed(7);
        fill_random(twin, ps);
        memcpy(cur, twin, ps);
        change_word(twin, cur, 0);
        for (size_t i = 1; i < nwords; i += 2)
            change_word(twin, cur, i);
        assert_int_equal(round_trip(twin, cur, ps), worst);
        free(twin); free(cur);
    }
}

/* Changed stretches that touch form one run; stretches one word apart are
 * two runs. */
static void test_touching_runs(void **state)
{
    size_t ps = 4096;
    uint32_t *twin = page_alloc(ps), *cur = page_alloc(ps);
    struct outbuf o = out_alloc(ps);
    struct dsm_diff_run r;
    size_t len;

    (void)state;
    rng_seed(8);
    fill_random(twin, ps);
    memcpy(cur, twin, ps);
    for (size_t i = 2; i < 10; i++)     /* [2,6) and [6,10) touch: one run */
        change_word(twin, cur, i);
    for (size_t i = 11; i < 15; i++)    /* one unchanged word in between */
        change_word(twin, cur, i);
    len = dsm__diff_make(twin, cur, ps, o.p, o.cap);
    assert_int_equal(len, 2 * HDR + 12 * 4);
    memcpy(&r, o.p, HDR);
    assert_int_equal(r.word_offset, 2);
    assert_int_equal(r.words, 8);
    memcpy(&r, o.p + HDR + 8 * 4, HDR);
    assert_int_equal(r.word_offset, 11);
    assert_int_equal(r.words, 4);
    round_trip(twin, cur, ps);

    /* Runs that touch are still a valid diff when built by someone else. */
    {
        uint32_t d[2 + 4 + 2 + 4];
        uint32_t *page = page_alloc(ps), *expect = page_alloc(ps);

        d[0] = 2; d[1] = 4; d[2] = 10; d[3] = 11; d[4] = 12; d[5] = 13;
        d[6] = 6; d[7] = 4; d[8] = 20; d[9] = 21; d[10] = 22; d[11] = 23;
        memset(page, 0, ps);
        memset(expect, 0, ps);
        for (size_t i = 0; i < 4; i++) {
            expect[2 + i] = 10 + i;
            expect[6 + i] = 20 + i;
        }
        assert_int_equal(dsm__diff_apply(page, ps, d, sizeof(d)), 8);
        assert_memory_equal(page, expect, ps);
        free(page); free(expect);
    }
    free(twin); free(cur); free(o.p);
}

/* Apply a diff built by hand, independent of dsm__diff_make. */
static void test_apply_handmade(void **state)
{
    size_t ps = 4096, nwords = ps / 4;
    uint32_t *page = page_alloc(ps), *expect = page_alloc(ps);
    /* {0,1,a} {5,3,b,c,d} {1023,1,e} */
    uint32_t d[] = { 0, 1, 0xaaaaaaaa,
                     5, 3, 0xbbbbbbbb, 0xcccccccc, 0xdddddddd,
                     (uint32_t)nwords - 1, 1, 0xeeeeeeee };

    (void)state;
    for (size_t i = 0; i < nwords; i++)
        page[i] = expect[i] = (uint32_t)i;
    expect[0] = 0xaaaaaaaa;
    expect[5] = 0xbbbbbbbb;
    expect[6] = 0xcccccccc;
    expect[7] = 0xdddddddd;
    expect[nwords - 1] = 0xeeeeeeee;
    assert_int_equal(dsm__diff_apply(page, ps, d, sizeof(d)), 5);
    assert_memory_equal(page, expect, ps);
    free(page); free(expect);
}

/* ---- random round trips ------------------------------------------------ */

static void test_random_round_trip(void **state)
{
    /* Change densities: every word with probability 1/2, 1/16, 1/512, and
     * random stretches. */
    static const uint32_t one_in[] = { 2, 16, 512 };

    (void)state;
    rng_seed(0x5eed);
    for (size_t s = 0; s < NPAGE_SIZES; s++) {
        size_t ps = page_sizes[s], nwords = ps / 4;
        uint32_t *twin = page_alloc(ps), *cur = page_alloc(ps);

        for (int iter = 0; iter < 20; iter++) {
            fill_random(twin, ps);
            memcpy(cur, twin, ps);
            if (iter % 4 < 3) {
                uint32_t m = one_in[iter % 4];
                for (size_t i = 0; i < nwords; i++)
                    if (rng32() % m == 0)
                        change_word(twin, cur, i);
            } else {
                int stretches = 1 + rng32() % 40;
                for (int k = 0; k < stretches; k++) {
                    size_t a = rng32() % nwords;
                    size_t n = 1 + rng32() % 64;
                    for (size_t i = a; i < a + n && i < nwords; i++)
                        change_word(twin, cur, i);
                }
            }
            round_trip(twin, cur, ps);
        }
        free(twin); free(cur);
    }
}

/* ---- multiple writers -------------------------------------------------- */

/* Two nodes change disjoint words of the same page against the same twin
 * (interleaved, and in stretches that touch each other); their diffs
 * applied to a copy of the twin in either order give the merge. */
static void test_multiple_writers(void **state)
{
    (void)state;
    rng_seed(0xab);
    for (size_t s = 0; s < NPAGE_SIZES; s++) {
        size_t ps = page_sizes[s], nwords = ps / 4;
        uint32_t *twin = page_alloc(ps), *a = page_alloc(ps);
        uint32_t *b = page_alloc(ps), *merge = page_alloc(ps);
        uint32_t *home = page_alloc(ps);
        struct outbuf da = out_alloc(ps), db = out_alloc(ps);
        size_t la, lb, na = 0, nb = 0;

        fill_random(twin, ps);
        memcpy(a, twin, ps);
        memcpy(b, twin, ps);
        memcpy(merge, twin, ps);
        for (size_t i = 0; i < nwords; i++) {
            int who;
            if (i < nwords / 4)
                who = i % 2;                    /* interleaved words */
            else if (i < nwords / 2)
                who = (i / 8) % 2;              /* touching stretches */
            else
                who = rng32() % 3;              /* random, some untouched */
            if (who == 0) {
                a[i] = rng32() | 1;
                if (a[i] == twin[i])
                    a[i] ^= 2;
                merge[i] = a[i];
                na++;
            } else if (who == 1) {
                b[i] = rng32() | 1;
                if (b[i] == twin[i])
                    b[i] ^= 2;
                merge[i] = b[i];
                nb++;
            }
        }
        la = dsm__diff_make(twin, a, ps, da.p, da.cap);
        lb = dsm__diff_make(twin, b, ps, db.p, db.cap);
        check_canonical(twin, a, ps, da.p, la);
        check_canonical(twin, b, ps, db.p, lb);

        memcpy(home, twin, ps);
        assert_int_equal(dsm__diff_apply(home, ps, da.p, la), (long)na);
        assert_int_equal(dsm__diff_apply(home, ps, db.p, lb), (long)nb);
        assert_memory_equal(home, merge, ps);

        memcpy(home, twin, ps);
        assert_int_equal(dsm__diff_apply(home, ps, db.p, lb), (long)nb);
        assert_int_equal(dsm__diff_apply(home, ps, da.p, la), (long)na);
        assert_memory_equal(home, merge, ps);

        free(twin); free(a); free(b); free(merge); free(home);
        free(da.p); free(db.p);
    }
}

/* ---- malformed diffs --------------------------------------------------- */

/* Apply d (len bytes) to a page of known content: must return -DSM_EPROTO
 * and leave every byte as it was.  Most cases start with a valid run so
 * that an implementation that applies runs before validating them all is
 * caught. */
static void expect_eproto(const void *d, size_t len, size_t ps)
{
    uint32_t *page = page_alloc(ps), *before = page_alloc(ps);

    for (size_t i = 0; i < ps / 4; i++)
        page[i] = 0x11110000u + (uint32_t)i;
    memcpy(before, page, ps);
    assert_int_equal(dsm__diff_apply(page, ps, d, len), -DSM_EPROTO);
    assert_memory_equal(page, before, ps);
    free(page); free(before);
}

static void test_malformed_offset_past_end(void **state)
{
    size_t ps = 4096;
    uint32_t W = (uint32_t)(ps / 4);
    uint32_t d1[] = { 0, 1, 0xdead, W, 1, 0xbeef };
    uint32_t d2[] = { 0, 1, 0xdead, 0xffffffffu, 1, 0xbeef };
    uint32_t d3[] = { W + 100, 1, 0xbeef };

    (void)state;
    expect_eproto(d1, sizeof(d1), ps);
    expect_eproto(d2, sizeof(d2), ps);
    expect_eproto(d3, sizeof(d3), ps);
}

static void test_malformed_words_overflow(void **state)
{
    size_t ps = 4096;
    uint32_t W = (uint32_t)(ps / 4);
    uint32_t d1[] = { 0, 1, 0xdead, W - 1, 2, 0xbeef, 0xbeef };
    /* word_offset + words wraps around in 32 bits: 0xffffffff + 2 == 1. */
    uint32_t d2[] = { 0, 1, 0xdead, 0xffffffffu, 2, 0xbeef, 0xbeef };
    /* words * 4 wraps around in 32 bits: 0x40000001 * 4 == 4. */
    uint32_t d3[] = { 0, 1, 0xdead, 2, 0x40000001u, 0xbeef };
    uint32_t d4[W + 3];

    (void)state;
    expect_eproto(d1, sizeof(d1), ps);
    expect_eproto(d2, sizeof(d2), ps);
    expect_eproto(d3, sizeof(d3), ps);
    /* One word too many from offset 0. */
    d4[0] = 0;
    d4[1] = W + 1;
    for (uint32_t i = 0; i < W + 1; i++)
        d4[2 + i] = 0xbeef;
    expect_eproto(d4, sizeof(d4), ps);
}

static void test_malformed_truncated_header(void **state)
{
    size_t ps = 4096;
    uint32_t d[] = { 0, 1, 0xdead, 5, 1, 0xbeef };

    (void)state;
    expect_eproto(d, 4, ps);                    /* half a header alone */
    expect_eproto(d, 12 + 4, ps);               /* valid run + half a header */
    expect_eproto(d, 12 + 7, ps);
    expect_eproto(d, 12 + 1, ps);
}

static void test_malformed_truncated_data(void **state)
{
    size_t ps = 4096;
    uint32_t d[] = { 0, 1, 0xdead, 5, 3, 1, 2, 3 };

    (void)state;
    expect_eproto(d, sizeof(d) - 4, ps);        /* last word missing */
    expect_eproto(d, sizeof(d) - 1, ps);        /* last byte missing */
    expect_eproto(d, 12 + 8, ps);               /* header, no data */
    expect_eproto(d, 8, ps);                    /* first run: header only */
}

static void test_malformed_order(void **state)
{
    size_t ps = 4096;
    uint32_t dec[] = { 10, 1, 0xdead, 5, 1, 0xbeef };
    uint32_t same[] = { 4, 1, 0xdead, 4, 1, 0xbeef };
    uint32_t overlap[] = { 4, 3, 1, 2, 3, 6, 2, 0xbeef, 0xbeef };

    (void)state;
    expect_eproto(dec, sizeof(dec), ps);
    expect_eproto(same, sizeof(same), ps);
    expect_eproto(overlap, sizeof(overlap), ps);
}

static void test_malformed_zero_words(void **state)
{
    size_t ps = 4096;
    uint32_t d1[] = { 0, 0 };
    uint32_t d2[] = { 0, 1, 0xdead, 3, 0 };
    uint32_t d3[] = { 0, 1, 0xdead, 3, 0, 5, 1, 0xbeef };

    (void)state;
    expect_eproto(d1, sizeof(d1), ps);
    expect_eproto(d2, sizeof(d2), ps);
    expect_eproto(d3, sizeof(d3), ps);
}

/* Trailing bytes after the last complete run are not a diff either. */
static void test_malformed_trailing_bytes(void **state)
{
    size_t ps = 4096;
    uint32_t d[] = { 0, 1, 0xdead, 0 };

    (void)state;
    expect_eproto(d, sizeof(d), ps);            /* 4 stray bytes */
    expect_eproto(d, 12 + 2, ps);               /* 2 stray bytes */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unchanged),
        cmocka_unit_test(test_whole_page),
        cmocka_unit_test(test_first_word),
        cmocka_unit_test(test_last_word),
        cmocka_unit_test(test_byte_change_is_word),
        cmocka_unit_test(test_scattered_words),
        cmocka_unit_test(test_alternating),
        cmocka_unit_test(test_worst_case_fits),
        cmocka_unit_test(test_touching_runs),
        cmocka_unit_test(test_apply_handmade),
        cmocka_unit_test(test_random_round_trip),
        cmocka_unit_test(test_multiple_writers),
        cmocka_unit_test(test_malformed_offset_past_end),
        cmocka_unit_test(test_malformed_words_overflow),
        cmocka_unit_test(test_malformed_truncated_header),
        cmocka_unit_test(test_malformed_truncated_data),
        cmocka_unit_test(test_malformed_order),
        cmocka_unit_test(test_malformed_zero_words),
        cmocka_unit_test(test_malformed_trailing_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
