/*
 * test_diff.c - twins and byte-exact diffs (libdsm/diff.c).
 *
 * Every expected value comes from the format documented in dsm_pure.h, not
 * from the code under test: diffs are decoded here by hand and compared with
 * the bytes we changed, hand-built diffs are applied, and malformed diffs
 * must be refused without touching the page.  The expected encoding is the
 * canonical one: a run is a maximal stretch of consecutive 8-byte chunks
 * (aligned to the page start) that each hold a changed byte; it is masked
 * exactly when one of its bytes is unchanged, one mask byte per chunk (bit j:
 * byte j changed), and its data is cur's bytes of the whole chunks.  So a
 * diff writes no byte its writer did not change - that is what lets diffs of
 * several writers merge, even writers of different bytes of one word.
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
#define CHUNK 8                                     /* DSM_DIFF_CHUNK */
#define MASKED DSM_DIFF_MASKED

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

static unsigned char *page_alloc(size_t page_size)
{
    unsigned char *p = malloc(page_size);
    assert_non_null(p);
    return p;
}

static void fill_random(unsigned char *p, size_t page_size)
{
    for (size_t i = 0; i < page_size; i++)
        p[i] = (unsigned char)rng32();
}

/* A random twin and a current page equal to it, from seed. */
static void random_twin(unsigned char *twin, unsigned char *cur, size_t page_size,
                        uint64_t seed)
{
    rng_seed(seed);
    fill_random(twin, page_size);
    memcpy(cur, twin, page_size);
}

/* Change byte i of cur so that it surely differs from the twin. */
static void change_byte(const unsigned char *twin, unsigned char *cur, size_t i)
{
    cur[i] = (unsigned char)(twin[i] ^ (1 + rng32() % 255));
}

static size_t count_changed(const unsigned char *twin, const unsigned char *cur,
                            size_t page_size)
{
    size_t n = 0;
    for (size_t i = 0; i < page_size; i++)
        n += twin[i] != cur[i];
    return n;
}

/* The documented mask of chunk c: bit j set when byte j of it changed. */
static unsigned chunk_mask(const unsigned char *twin, const unsigned char *cur, size_t c)
{
    unsigned m = 0;
    for (unsigned j = 0; j < CHUNK; j++)
        if (twin[CHUNK * c + j] != cur[CHUNK * c + j])
            m |= 1u << j;
    return m;
}

static unsigned popcount8(unsigned m)
{
    unsigned n = 0;
    for (; m; m >>= 1)
        n += m & 1;
    return n;
}

/* Diff output buffer: capacity cap followed by a guard zone that the
 * encoder must never write. */
#define GUARD 64
#define GUARD_BYTE 0xA5

struct outbuf {
    unsigned char *p;
    size_t cap;
};

static struct outbuf out_alloc_cap(size_t cap)
{
    struct outbuf o;
    o.cap = cap;
    o.p = malloc(o.cap + GUARD);
    assert_non_null(o.p);
    memset(o.p, GUARD_BYTE, o.cap + GUARD);
    return o;
}

static struct outbuf out_alloc(size_t page_size)
{
    size_t cap = dsm__diff_max_size(page_size);
    assert_true(cap >= HDR + page_size);   /* at least "whole page changed" */
    return out_alloc_cap(cap);
}

static void out_check_guard(const struct outbuf *o)
{
    for (size_t i = 0; i < GUARD; i++)
        assert_int_equal(o->p[o->cap + i], GUARD_BYTE);
}

/* Read the header of the run at diff + pos. */
static struct dsm_diff_run run_at(const unsigned char *diff, size_t pos)
{
    struct dsm_diff_run r;
    memcpy(&r, diff + pos, HDR);
    return r;
}

/* Decode a diff by hand and check that it is the canonical encoding of cur
 * against twin: runs in increasing order, none empty, unaligned, out of the
 * page, overlapping or touching the previous one; the covered chunks are
 * exactly the chunks with a changed byte, their data is cur's, the run is
 * masked iff one of its bytes is unchanged and then every mask byte says
 * which bytes changed.  Returns the number of runs. */
static size_t check_canonical(const unsigned char *twin, const unsigned char *cur,
                              size_t page_size, const unsigned char *diff, size_t len)
{
    size_t nchunks = page_size / CHUNK;
    unsigned char *covered = calloc(nchunks, 1);
    size_t pos = 0, runs = 0, prev_end = 0, expect_runs = 0, expect_len = 0;

    assert_non_null(covered);
    while (pos < len) {
        assert_true(len - pos >= HDR);
        struct dsm_diff_run r = run_at(diff, pos);
        pos += HDR;
        size_t n = r.count & ~MASKED;
        int masked = (r.count & MASKED) != 0, some_unchanged = 0;
        assert_true(n > 0);
        assert_int_equal(r.offset % CHUNK, 0);
        assert_true(r.offset < page_size);
        assert_true(n <= (page_size - r.offset) / CHUNK);
        if (runs > 0)   /* strictly after, and not touching: maximal runs */
            assert_true(r.offset > prev_end);
        size_t body = n * CHUNK + (masked ? n : 0);
        assert_true(len - pos >= body);
        const unsigned char *data = diff + pos, *mask = data + n * CHUNK;
        for (size_t k = 0; k < n; k++) {
            size_t c = r.offset / CHUNK + k;
            unsigned m = chunk_mask(twin, cur, c);
            assert_int_not_equal(m, 0);             /* only changed chunks */
            if (m != 0xff)
                some_unchanged = 1;
            assert_memory_equal(data + CHUNK * k, cur + CHUNK * c, CHUNK);
            if (masked)
                assert_int_equal(mask[k], m);
            covered[c] = 1;
        }
        assert_int_equal(masked, some_unchanged);
        pos += body;
        prev_end = r.offset + n * CHUNK;
        runs++;
    }
    assert_int_equal(pos, len);

    /* What the canonical encoding must hold, from the bytes alone. */
    for (size_t c = 0; c < nchunks;) {
        if (chunk_mask(twin, cur, c) == 0) {
            assert_int_equal(covered[c], 0);
            c++;
            continue;
        }
        size_t start = c;
        int masked = 0;
        for (; c < nchunks && chunk_mask(twin, cur, c) != 0; c++) {
            assert_int_equal(covered[c], 1);        /* every changed chunk */
            masked |= chunk_mask(twin, cur, c) != 0xff;
        }
        expect_runs++;
        expect_len += HDR + (c - start) * CHUNK + (masked ? c - start : 0);
    }
    assert_int_equal(runs, expect_runs);
    assert_int_equal(len, expect_len);
    free(covered);
    return runs;
}

/* make + canonical check + apply.  Applied to a copy of the twin, the copy
 * must become cur; applied to a page another writer changed, exactly the
 * bytes this writer changed must be taken from cur and every other byte
 * left alone.  Returns the encoded length. */
static size_t round_trip(const unsigned char *twin, const unsigned char *cur,
                         size_t page_size)
{
    struct outbuf o = out_alloc(page_size);
    unsigned char *copy = page_alloc(page_size), *other = page_alloc(page_size);
    size_t changed = count_changed(twin, cur, page_size), len;

    len = dsm__diff_make(twin, cur, page_size, o.p, o.cap);
    assert_true(len <= o.cap);              /* also: not (size_t)-1 */
    out_check_guard(&o);
    check_canonical(twin, cur, page_size, o.p, len);
    assert_int_equal(dsm__diff_check(page_size, o.p, len), 0);

    memcpy(copy, twin, page_size);
    assert_int_equal(dsm__diff_apply(copy, page_size, o.p, len), (long)changed);
    assert_memory_equal(copy, cur, page_size);

    fill_random(other, page_size);
    memcpy(copy, other, page_size);
    assert_int_equal(dsm__diff_apply(copy, page_size, o.p, len), (long)changed);
    for (size_t i = 0; i < page_size; i++)
        assert_int_equal(copy[i], twin[i] != cur[i] ? cur[i] : other[i]);
    free(copy);
    free(other);
    free(o.p);
    return len;
}

/* ---- hand-built diffs -------------------------------------------------- */

struct dbuf {
    unsigned char b[2 * 65536];
    size_t len;
};

static void d_bytes(struct dbuf *d, const void *p, size_t n)
{
    assert_true(n <= sizeof d->b - d->len);
    memcpy(d->b + d->len, p, n);
    d->len += n;
}

static void d_fill(struct dbuf *d, unsigned char v, size_t n)
{
    assert_true(n <= sizeof d->b - d->len);
    memset(d->b + d->len, v, n);
    d->len += n;
}

static void d_hdr(struct dbuf *d, uint32_t offset, uint32_t count)
{
    struct dsm_diff_run r = { offset, count };
    d_bytes(d, &r, HDR);
}

/* A run with a body of the documented length: count & ~MASKED chunks of
 * data bytes v, then as many mask bytes m if count has MASKED. */
static void d_run(struct dbuf *d, uint32_t offset, uint32_t count, unsigned char v,
                  unsigned char m)
{
    size_t n = count & ~MASKED;
    d_hdr(d, offset, count);
    d_fill(d, v, n * CHUNK);
    if (count & MASKED)
        d_fill(d, m, n);
}

static struct dbuf *dbuf_new(void)
{
    struct dbuf *d = calloc(1, sizeof *d);
    assert_non_null(d);
    return d;
}

/* ---- simple cases ------------------------------------------------------ */

/* The documented layout: an 8-byte header, 8-byte chunks, the mask flag in
 * the top bit of count, and the body length helpers agree with it. */
static void test_format(void **state)
{
    struct dsm_diff_run u = { 24, 3 }, m = { 24, 3 | MASKED };

    (void)state;
    assert_int_equal(HDR, 8);
    assert_int_equal(DSM_DIFF_CHUNK, 8);
    assert_int_equal(DSM_DIFF_MASKED, 0x80000000u);
    assert_int_equal(offsetof(struct dsm_diff_run, offset), 0);
    assert_int_equal(offsetof(struct dsm_diff_run, count), 4);
    assert_int_equal(dsm__diff_run_chunks(&u), 3);
    assert_int_equal(dsm__diff_run_chunks(&m), 3);
    assert_int_equal(dsm__diff_run_body(&u), 24);
    assert_int_equal(dsm__diff_run_body(&m), 27);
}

static void test_unchanged(void **state)
{
    (void)state;
    for (size_t s = 0; s < NPAGE_SIZES; s++) {
        size_t ps = page_sizes[s];
        unsigned char *twin = page_alloc(ps), *cur = page_alloc(ps);
        unsigned char *page = page_alloc(ps), *before = page_alloc(ps);
        struct outbuf o = out_alloc(ps);

        random_twin(twin, cur, ps, 1);
        assert_int_equal(dsm__diff_make(twin, cur, ps, o.p, o.cap), 0);
        out_check_guard(&o);

        /* An empty diff is valid, a no-op, and writes no byte. */
        fill_random(page, ps);
        memcpy(before, page, ps);
        assert_int_equal(dsm__diff_check(ps, o.p, 0), 0);
        assert_int_equal(dsm__diff_apply(page, ps, o.p, 0), 0);
        assert_memory_equal(page, before, ps);
        free(twin); free(cur); free(page); free(before); free(o.p);
    }
}

/* Every byte changed: one unmasked run of every chunk. */
static void test_whole_page(void **state)
{
    (void)state;
    for (size_t s = 0; s < NPAGE_SIZES; s++) {
        size_t ps = page_sizes[s];
        unsigned char *twin = page_alloc(ps), *cur = page_alloc(ps);
        struct outbuf o = out_alloc(ps);
        struct dsm_diff_run r;
        size_t len;

        rng_seed(2);
        fill_random(twin, ps);
        for (size_t i = 0; i < ps; i++)
            change_byte(twin, cur, i);
        len = dsm__diff_make(twin, cur, ps, o.p, o.cap);
        assert_int_equal(len, HDR + ps);
        r = run_at(o.p, 0);
        assert_int_equal(r.offset, 0);
        assert_int_equal(r.count, ps / CHUNK);      /* no MASKED */
        assert_memory_equal(o.p + HDR, cur, ps);
        out_check_guard(&o);
        assert_int_equal(round_trip(twin, cur, ps), HDR + ps);
        free(twin); free(cur); free(o.p);
    }
}

/* The worst case of the canonical encoding: r runs covering k chunks of the
 * C chunks of a page (k <= C - r + 1: a gap of a chunk between runs) take
 * at most 8r + 9k <= 9C + 9 - r bytes, the most with one masked run over
 * the whole page: 8 + page_size + page_size / 8.  dsm__diff_max_size must
 * be that, and the encoder must fill exactly that much and no more. */
static void test_worst_case(void **state)
{
    (void)state;
    for (size_t s = 0; s < NPAGE_SIZES; s++) {
        size_t ps = page_sizes[s], worst = HDR + ps + ps / CHUNK;
        const size_t keep[] = { 0, ps / 2 + 3, ps - 1 };   /* the unchanged byte */

        assert_int_equal(dsm__diff_max_size(ps), worst);
        for (size_t t = 0; t < sizeof keep / sizeof keep[0]; t++) {
            unsigned char *twin = page_alloc(ps), *cur = page_alloc(ps);
            struct outbuf o = out_alloc(ps);
            struct dsm_diff_run r;

            rng_seed(7 + t);
            fill_random(twin, ps);
            for (size_t i = 0; i < ps; i++)
                change_byte(twin, cur, i);
            cur[keep[t]] = twin[keep[t]];
            assert_int_equal(dsm__diff_make(twin, cur, ps, o.p, o.cap), worst);
            out_check_guard(&o);
            r = run_at(o.p, 0);
            assert_int_equal(r.offset, 0);
            assert_int_equal(r.count, (ps / CHUNK) | MASKED);
            for (size_t c = 0; c < ps / CHUNK; c++)
                assert_int_equal(o.p[HDR + ps + c],
                                 c == keep[t] / CHUNK ? 0xff & ~(1u << keep[t] % CHUNK) : 0xff);
            assert_int_equal(round_trip(twin, cur, ps), worst);

            /* One byte short of the worst case: refused, nothing written
             * past the capacity. */
            struct outbuf small = out_alloc_cap(worst - 1);
            assert_int_equal(dsm__diff_make(twin, cur, ps, small.p, small.cap), (size_t)-1);
            out_check_guard(&small);
            free(small.p);
            free(twin); free(cur); free(o.p);
        }
    }
}

/* One changed byte at index i: one masked run of its chunk, one mask bit. */
static void check_single_byte(size_t ps, size_t i)
{
    unsigned char *twin = page_alloc(ps), *cur = page_alloc(ps);
    struct outbuf o = out_alloc(ps);
    struct dsm_diff_run r;

    random_twin(twin, cur, ps, 3 + i);
    change_byte(twin, cur, i);
    assert_int_equal(dsm__diff_make(twin, cur, ps, o.p, o.cap), HDR + CHUNK + 1);
    r = run_at(o.p, 0);
    assert_int_equal(r.offset, i - i % CHUNK);
    assert_int_equal(r.count, 1 | MASKED);
    assert_memory_equal(o.p + HDR, cur + (i - i % CHUNK), CHUNK);
    assert_int_equal(o.p[HDR + CHUNK], 1u << (i % CHUNK));
    assert_int_equal(round_trip(twin, cur, ps), HDR + CHUNK + 1);
    free(twin); free(cur); free(o.p);
}

static void test_first_byte(void **state)
{
    (void)state;
    for (size_t s = 0; s < NPAGE_SIZES; s++)
        check_single_byte(page_sizes[s], 0);
}

static void test_last_byte(void **state)
{
    (void)state;
    for (size_t s = 0; s < NPAGE_SIZES; s++)
        check_single_byte(page_sizes[s], page_sizes[s] - 1);
}

/* Each byte position of a chunk sets its own mask bit. */
static void test_each_byte_of_chunk(void **state)
{
    (void)state;
    for (size_t j = 0; j < CHUNK; j++)
        check_single_byte(4096, 8 * 37 + j);
}

/* A fully changed aligned chunk (or stretch of them) is an unmasked run. */
static void test_full_chunks(void **state)
{
    size_t ps = 4096;
    unsigned char *twin = page_alloc(ps), *cur = page_alloc(ps);
    struct outbuf o = out_alloc(ps);
    struct dsm_diff_run r;

    (void)state;
    random_twin(twin, cur, ps, 9);
    for (size_t i = 16; i < 24; i++)
        change_byte(twin, cur, i);
    assert_int_equal(dsm__diff_make(twin, cur, ps, o.p, o.cap), HDR + 8);
    r = run_at(o.p, 0);
    assert_int_equal(r.offset, 16);
    assert_int_equal(r.count, 1);
    assert_memory_equal(o.p + HDR, cur + 16, 8);

    for (size_t i = ps - 24; i < ps; i++)   /* the last three chunks */
        change_byte(twin, cur, i);
    assert_int_equal(dsm__diff_make(twin, cur, ps, o.p, o.cap), 2 * HDR + 8 + 24);
    r = run_at(o.p, HDR + 8);
    assert_int_equal(r.offset, ps - 24);
    assert_int_equal(r.count, 3);
    assert_memory_equal(o.p + 2 * HDR + 8, cur + ps - 24, 24);
    out_check_guard(&o);
    round_trip(twin, cur, ps);
    free(twin); free(cur); free(o.p);
}

/* Eight changed bytes that straddle two chunks: one masked run of both,
 * each mask naming its own bytes. */
static void test_straddling_bytes(void **state)
{
    size_t ps = 4096;
    unsigned char *twin = page_alloc(ps), *cur = page_alloc(ps);
    struct outbuf o = out_alloc(ps);
    struct dsm_diff_run r;

    (void)state;
    random_twin(twin, cur, ps, 10);
    for (size_t i = 5; i < 13; i++)
        change_byte(twin, cur, i);
    assert_int_equal(dsm__diff_make(twin, cur, ps, o.p, o.cap), HDR + 16 + 2);
    r = run_at(o.p, 0);
    assert_int_equal(r.offset, 0);
    assert_int_equal(r.count, 2 | MASKED);
    assert_memory_equal(o.p + HDR, cur, 16);
    assert_int_equal(o.p[HDR + 16], 0xe0);      /* bytes 5, 6, 7 */
    assert_int_equal(o.p[HDR + 17], 0x1f);      /* bytes 8..12 */
    round_trip(twin, cur, ps);
    free(twin); free(cur); free(o.p);
}

static void test_scattered_bytes(void **state)
{
    size_t ps = 4096;
    unsigned char *twin = page_alloc(ps), *cur = page_alloc(ps);
    struct outbuf o = out_alloc(ps);
    static const size_t idx[] = { 3, 17, 18, 23, 24, 100, 511, 4095 };
    /* Expected runs: chunk 1 unchanged separates chunk 0 from chunks 2-3;
     * 600..615 is two whole chunks. */
    static const struct {
        uint32_t offset, chunks;
        int masked;
        unsigned char mask[2];
    } exp[] = {
        { 0, 1, 1, { 0x08 } },            /* byte 3 */
        { 16, 2, 1, { 0x86, 0x01 } },     /* bytes 17, 18, 23 | 24 */
        { 96, 1, 1, { 0x10 } },           /* byte 100 */
        { 504, 1, 1, { 0x80 } },          /* byte 511 */
        { 600, 2, 0, { 0 } },             /* bytes 600..615 */
        { 4088, 1, 1, { 0x80 } },         /* byte 4095 */
    };
    size_t len, pos = 0;

    (void)state;
    random_twin(twin, cur, ps, 4);
    for (size_t k = 0; k < sizeof idx / sizeof idx[0]; k++)
        change_byte(twin, cur, idx[k]);
    for (size_t i = 600; i < 616; i++)
        change_byte(twin, cur, i);
    len = dsm__diff_make(twin, cur, ps, o.p, o.cap);
    assert_int_equal(len, 17 + 26 + 17 + 17 + 24 + 17);
    for (size_t k = 0; k < sizeof exp / sizeof exp[0]; k++) {
        struct dsm_diff_run r = run_at(o.p, pos);
        size_t n = exp[k].chunks;
        assert_int_equal(r.offset, exp[k].offset);
        assert_int_equal(r.count, n | (exp[k].masked ? MASKED : 0));
        assert_memory_equal(o.p + pos + HDR, cur + exp[k].offset, n * CHUNK);
        if (exp[k].masked)
            assert_memory_equal(o.p + pos + HDR + n * CHUNK, exp[k].mask, n);
        pos += HDR + n * CHUNK + (exp[k].masked ? n : 0);
    }
    assert_int_equal(pos, len);
    round_trip(twin, cur, ps);
    free(twin); free(cur); free(o.p);
}

/* Every other chunk changed: one run per changed chunk, unmasked when the
 * whole chunk changed, masked when one byte of it did. */
static void test_alternating_chunks(void **state)
{
    (void)state;
    for (size_t s = 0; s < NPAGE_SIZES; s++) {
        size_t ps = page_sizes[s], nchunks = ps / CHUNK;
        for (size_t parity = 0; parity < 2; parity++) {
            for (int whole = 0; whole < 2; whole++) {
                unsigned char *twin = page_alloc(ps), *cur = page_alloc(ps);
                size_t len;

                random_twin(twin, cur, ps, 5 + parity + 2 * whole);
                for (size_t c = parity; c < nchunks; c += 2) {
                    if (whole)
                        for (size_t j = 0; j < CHUNK; j++)
                            change_byte(twin, cur, CHUNK * c + j);
                    else
                        change_byte(twin, cur, CHUNK * c + c % CHUNK);
                }
                len = round_trip(twin, cur, ps);
                assert_int_equal(len, (nchunks / 2) * (HDR + CHUNK + (whole ? 0 : 1)));
                assert_true(len < dsm__diff_max_size(ps));
                free(twin); free(cur);
            }
        }
    }
}

/* Changed stretches that touch form one run, and so do changed bytes with
 * unchanged bytes between them inside neighbouring chunks; one unchanged
 * chunk splits runs. */
static void test_touching_runs(void **state)
{
    size_t ps = 4096;
    unsigned char *twin = page_alloc(ps), *cur = page_alloc(ps);
    struct outbuf o = out_alloc(ps);
    struct dsm_diff_run r;
    size_t len;

    (void)state;
    random_twin(twin, cur, ps, 8);
    for (size_t i = 16; i < 80; i++)        /* [16,48) and [48,80): one run */
        change_byte(twin, cur, i);
    for (size_t c = 11; c < 15; c++)        /* chunk 10 unchanged in between */
        change_byte(twin, cur, CHUNK * c + 3);
    change_byte(twin, cur, 200);            /* bytes 201..214 unchanged */
    change_byte(twin, cur, 215);
    len = dsm__diff_make(twin, cur, ps, o.p, o.cap);
    assert_int_equal(len, (HDR + 64) + (HDR + 32 + 4) + (HDR + 16 + 2));
    r = run_at(o.p, 0);
    assert_int_equal(r.offset, 16);
    assert_int_equal(r.count, 8);
    r = run_at(o.p, HDR + 64);
    assert_int_equal(r.offset, 88);
    assert_int_equal(r.count, 4 | MASKED);
    for (size_t k = 0; k < 4; k++)
        assert_int_equal(o.p[2 * HDR + 64 + 32 + k], 0x08);
    r = run_at(o.p, 2 * HDR + 64 + 36);
    assert_int_equal(r.offset, 200);
    assert_int_equal(r.count, 2 | MASKED);
    assert_int_equal(o.p[3 * HDR + 64 + 36 + 16], 0x01);
    assert_int_equal(o.p[3 * HDR + 64 + 36 + 17], 0x80);
    round_trip(twin, cur, ps);

    /* Runs that touch are still a valid diff when built by someone else. */
    {
        struct dbuf *d = dbuf_new();
        unsigned char *page = page_alloc(ps), *expect = page_alloc(ps);

        d_run(d, 16, 2, 0x10, 0);
        d_run(d, 32, 1 | MASKED, 0x20, 0x81);
        memset(page, 0, ps);
        memset(expect, 0, ps);
        memset(expect + 16, 0x10, 16);
        expect[32] = expect[39] = 0x20;
        assert_int_equal(dsm__diff_check(ps, d->b, d->len), 0);
        assert_int_equal(dsm__diff_apply(page, ps, d->b, d->len), 18);
        assert_memory_equal(page, expect, ps);
        free(page); free(expect); free(d);
    }
    free(twin); free(cur); free(o.p);
}

/* A byte written with the value it already had is not changed: it is not
 * in the mask, and applying the diff leaves that byte alone at the home. */
static void test_same_value_not_changed(void **state)
{
    size_t ps = 4096;
    unsigned char *twin = page_alloc(ps), *cur = page_alloc(ps);
    unsigned char *home = page_alloc(ps), *expect = page_alloc(ps);
    struct outbuf o = out_alloc(ps);
    struct dsm_diff_run r;

    (void)state;
    random_twin(twin, cur, ps, 11);
    for (size_t i = 0; i < ps; i += 3)      /* rewrites of the same values */
        cur[i] = twin[i];
    assert_int_equal(dsm__diff_make(twin, cur, ps, o.p, o.cap), 0);

    /* Bytes 64 and 66 change; 65 and 67 are written with their own value. */
    change_byte(twin, cur, 64);
    cur[65] = twin[65];
    change_byte(twin, cur, 66);
    cur[67] = (unsigned char)(twin[67] + 1);
    cur[67] = twin[67];
    assert_int_equal(dsm__diff_make(twin, cur, ps, o.p, o.cap), HDR + CHUNK + 1);
    r = run_at(o.p, 0);
    assert_int_equal(r.offset, 64);
    assert_int_equal(r.count, 1 | MASKED);
    assert_int_equal(o.p[HDR + CHUNK], 0x05);

    /* Another writer changed byte 65 at the home: it stays. */
    memcpy(home, twin, ps);
    home[65] ^= 0xff;
    memcpy(expect, home, ps);
    expect[64] = cur[64];
    expect[66] = cur[66];
    assert_int_equal(dsm__diff_apply(home, ps, o.p, HDR + CHUNK + 1), 2);
    assert_memory_equal(home, expect, ps);

    /* A whole chunk written, one byte of it with its old value: masked. */
    memcpy(cur, twin, ps);
    for (size_t i = 128; i < 136; i++)
        change_byte(twin, cur, i);
    cur[133] = twin[133];
    assert_int_equal(dsm__diff_make(twin, cur, ps, o.p, o.cap), HDR + CHUNK + 1);
    r = run_at(o.p, 0);
    assert_int_equal(r.offset, 128);
    assert_int_equal(r.count, 1 | MASKED);
    assert_int_equal(o.p[HDR + CHUNK], 0xdf);
    round_trip(twin, cur, ps);
    free(twin); free(cur); free(home); free(expect); free(o.p);
}

/* Apply a diff built by hand, independent of dsm__diff_make.  The return
 * value is the number of bytes written: every byte of an unmasked run's
 * chunks (even one equal to the page's), the mask bits of a masked run. */
static void test_apply_handmade(void **state)
{
    size_t ps = 4096;
    unsigned char *page = page_alloc(ps), *expect = page_alloc(ps);
    unsigned char a[8], b[16], c[8], mb[2] = { 0x81, 0xff }, mc = 0x3c;
    struct dbuf *d = dbuf_new();

    (void)state;
    for (size_t i = 0; i < ps; i++)
        page[i] = expect[i] = (unsigned char)(i * 7);
    for (size_t i = 0; i < 8; i++) {
        a[i] = (unsigned char)(0xa0 + i);
        c[i] = (unsigned char)(0xc0 + i);
    }
    a[3] = page[3];                         /* still written, still counted */
    for (size_t i = 0; i < 16; i++)
        b[i] = (unsigned char)(0xb0 + i);
    d_hdr(d, 0, 1);                         /* 8 bytes */
    d_bytes(d, a, 8);
    d_hdr(d, 40, 2 | MASKED);               /* 2 + 8 bytes */
    d_bytes(d, b, 16);
    d_bytes(d, mb, 2);
    d_hdr(d, (uint32_t)ps - 8, 1 | MASKED); /* 4 bytes */
    d_bytes(d, c, 8);
    d_bytes(d, &mc, 1);
    assert_int_equal(d->len, (HDR + 8) + (HDR + 18) + (HDR + 9));

    memcpy(expect, a, 8);
    expect[40] = b[0];
    expect[47] = b[7];
    memcpy(expect + 48, b + 8, 8);
    for (size_t j = 2; j < 6; j++)
        expect[ps - 8 + j] = c[j];
    assert_int_equal(dsm__diff_check(ps, d->b, d->len), 0);
    assert_int_equal(dsm__diff_apply(page, ps, d->b, d->len),
                     8 + popcount8(mb[0]) + popcount8(mb[1]) + popcount8(mc));
    assert_int_equal(8 + popcount8(mb[0]) + popcount8(mb[1]) + popcount8(mc), 22);
    assert_memory_equal(page, expect, ps);

    /* The same diff at an odd address (runs after a masked one are not
     * aligned anyway): same result. */
    {
        unsigned char *odd = malloc(d->len + 1);
        assert_non_null(odd);
        memcpy(odd + 1, d->b, d->len);
        for (size_t i = 0; i < ps; i++)
            page[i] = (unsigned char)(i * 7);
        assert_int_equal(dsm__diff_apply(page, ps, odd + 1, d->len), 22);
        assert_memory_equal(page, expect, ps);
        free(odd);
    }
    free(page); free(expect); free(d);
}

/* ---- random round trips ------------------------------------------------ */

static void test_random_round_trip(void **state)
{
    /* Change densities: every byte with probability 1/2, 1/16, 1/512 (new
     * random values, some of them equal to the old one), random stretches
     * of bytes, and random whole chunks. */
    static const uint32_t one_in[] = { 2, 16, 512 };

    (void)state;
    rng_seed(0x5eed);
    for (size_t s = 0; s < NPAGE_SIZES; s++) {
        size_t ps = page_sizes[s];
        unsigned char *twin = page_alloc(ps), *cur = page_alloc(ps);

        for (int iter = 0; iter < 25; iter++) {
            fill_random(twin, ps);
            memcpy(cur, twin, ps);
            if (iter % 5 < 3) {
                uint32_t m = one_in[iter % 5];
                for (size_t i = 0; i < ps; i++)
                    if (rng32() % m == 0)
                        cur[i] = (unsigned char)rng32();
            } else if (iter % 5 == 3) {
                int stretches = 1 + rng32() % 40;
                for (int k = 0; k < stretches; k++) {
                    size_t a = rng32() % ps, n = 1 + rng32() % 100;
                    for (size_t i = a; i < a + n && i < ps; i++)
                        change_byte(twin, cur, i);
                }
            } else {
                for (size_t c = 0; c < ps / CHUNK; c++)
                    if (rng32() % 4 == 0)
                        for (size_t j = 0; j < CHUNK; j++)
                            change_byte(twin, cur, CHUNK * c + j);
            }
            round_trip(twin, cur, ps);
        }
        free(twin); free(cur);
    }
}

/* ---- multiple writers -------------------------------------------------- */

/* Apply the diffs of two writers to a copy of their twin, a then b; the
 * home must become merge, and each apply return the bytes its writer
 * changed. */
static void apply_both(const unsigned char *twin, const unsigned char *merge, size_t ps,
                       const unsigned char *da, size_t la, long na,
                       const unsigned char *db, size_t lb, long nb)
{
    unsigned char *home = page_alloc(ps);

    memcpy(home, twin, ps);
    assert_int_equal(dsm__diff_apply(home, ps, da, la), na);
    assert_int_equal(dsm__diff_apply(home, ps, db, lb), nb);
    assert_memory_equal(home, merge, ps);
    free(home);
}

/* Two writers of different bytes of one 4-byte word, and of the even and
 * the odd bytes of a range: either order of their diffs gives the union of
 * their writes (with 4-byte granularity the second diff would undo the
 * first writer's bytes). */
static void test_writers_of_one_word(void **state)
{
    size_t ps = 4096;
    unsigned char *twin = page_alloc(ps), *a = page_alloc(ps);
    unsigned char *b = page_alloc(ps), *merge = page_alloc(ps);
    struct outbuf da = out_alloc(ps), db = out_alloc(ps);
    struct dsm_diff_run r;
    size_t la, lb;

    (void)state;
    rng_seed(12);
    fill_random(twin, ps);
    memcpy(a, twin, ps);
    memcpy(b, twin, ps);
    change_byte(twin, a, 12);               /* word at 12: A bytes 0..1 */
    change_byte(twin, a, 13);
    change_byte(twin, b, 14);               /* B bytes 2..3 */
    change_byte(twin, b, 15);
    memcpy(merge, twin, ps);
    memcpy(merge + 12, a + 12, 2);
    memcpy(merge + 14, b + 14, 2);

    la = dsm__diff_make(twin, a, ps, da.p, da.cap);
    lb = dsm__diff_make(twin, b, ps, db.p, db.cap);
    assert_int_equal(la, HDR + CHUNK + 1);
    assert_int_equal(lb, HDR + CHUNK + 1);
    r = run_at(da.p, 0);
    assert_int_equal(r.offset, 8);
    assert_int_equal(r.count, 1 | MASKED);
    assert_int_equal(da.p[HDR + CHUNK], 0x30);
    r = run_at(db.p, 0);
    assert_int_equal(r.offset, 8);
    assert_int_equal(r.count, 1 | MASKED);
    assert_int_equal(db.p[HDR + CHUNK], 0xc0);
    apply_both(twin, merge, ps, da.p, la, 2, db.p, lb, 2);
    apply_both(twin, merge, ps, db.p, lb, 2, da.p, la, 2);

    /* Interleaved: A the even bytes of [256, 320), B the odd ones. */
    memcpy(a, twin, ps);
    memcpy(b, twin, ps);
    for (size_t i = 256; i < 320; i++)
        change_byte(twin, (i % 2) ? b : a, i);
    memcpy(merge, twin, ps);
    for (size_t i = 256; i < 320; i++)
        merge[i] = (i % 2) ? b[i] : a[i];
    la = dsm__diff_make(twin, a, ps, da.p, da.cap);
    lb = dsm__diff_make(twin, b, ps, db.p, db.cap);
    assert_int_equal(la, HDR + 64 + 8);
    assert_int_equal(lb, HDR + 64 + 8);
    r = run_at(da.p, 0);
    assert_int_equal(r.offset, 256);
    assert_int_equal(r.count, 8 | MASKED);
    r = run_at(db.p, 0);
    assert_int_equal(r.offset, 256);
    assert_int_equal(r.count, 8 | MASKED);
    for (size_t k = 0; k < 8; k++) {
        assert_int_equal(da.p[HDR + 64 + k], 0x55);
        assert_int_equal(db.p[HDR + 64 + k], 0xaa);
    }
    check_canonical(twin, a, ps, da.p, la);
    check_canonical(twin, b, ps, db.p, lb);
    apply_both(twin, merge, ps, da.p, la, 32, db.p, lb, 32);
    apply_both(twin, merge, ps, db.p, lb, 32, da.p, la, 32);
    out_check_guard(&da);
    out_check_guard(&db);
    free(twin); free(a); free(b); free(merge); free(da.p); free(db.p);
}

/* Two nodes change disjoint bytes of the same page against the same twin
 * (alternate bytes, halves of words, stretches that touch each other at
 * any byte, random bytes): their diffs applied to a copy of the twin in
 * either order give the merge. */
static void test_multiple_writers(void **state)
{
    (void)state;
    rng_seed(0xab);
    for (size_t s = 0; s < NPAGE_SIZES; s++) {
        size_t ps = page_sizes[s];
        unsigned char *twin = page_alloc(ps), *a = page_alloc(ps);
        unsigned char *b = page_alloc(ps), *merge = page_alloc(ps);
        struct outbuf da = out_alloc(ps), db = out_alloc(ps);
        size_t la, lb;
        long na = 0, nb = 0;

        fill_random(twin, ps);
        memcpy(a, twin, ps);
        memcpy(b, twin, ps);
        memcpy(merge, twin, ps);
        for (size_t i = 0; i < ps; i++) {
            int who;
            if (i < ps / 4)
                who = i % 2;                    /* interleaved bytes */
            else if (i < ps / 2)
                who = (i / 2) % 2;              /* halves of 4-byte words */
            else if (i < 3 * ps / 4)
                who = (i / 13) % 2;             /* touching stretches */
            else
                who = rng32() % 3;              /* random, some untouched */
            if (who == 0) {
                change_byte(twin, a, i);
                merge[i] = a[i];
                na++;
            } else if (who == 1) {
                change_byte(twin, b, i);
                merge[i] = b[i];
                nb++;
            }
        }
        la = dsm__diff_make(twin, a, ps, da.p, da.cap);
        lb = dsm__diff_make(twin, b, ps, db.p, db.cap);
        check_canonical(twin, a, ps, da.p, la);
        check_canonical(twin, b, ps, db.p, lb);
        out_check_guard(&da);
        out_check_guard(&db);

        apply_both(twin, merge, ps, da.p, la, na, db.p, lb, nb);
        apply_both(twin, merge, ps, db.p, lb, nb, da.p, la, na);

        free(twin); free(a); free(b); free(merge);
        free(da.p); free(db.p);
    }
}

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
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_unchanged),
        cmocka_unit_test(test_whole_page),
        cmocka_unit_test(test_worst_case),
        cmocka_unit_test(test_first_byte),
        cmocka_unit_test(test_last_byte),
        cmocka_unit_test(test_each_byte_of_chunk),
        cmocka_unit_test(test_full_chunks),
        cmocka_unit_test(test_straddling_bytes),
        cmocka_unit_test(test_scattered_bytes),
        cmocka_unit_test(test_alternating_chunks),
        cmocka_unit_test(test_touching_runs),
        cmocka_unit_test(test_same_value_not_changed),
        cmocka_unit_test(test_apply_handmade),
        cmocka_unit_test(test_random_round_trip),
        cmocka_unit_test(test_writers_of_one_word),
        cmocka_unit_test(test_multiple_writers),
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
