/*
 * test_diff_encode.c - making a diff from a twin and a page (dsm__diff_make
 * and dsm__diff_max_size in libdsm/diff.c).
 *
 * Every expected value comes from the format documented in dsm_pure.h, not
 * from the code under test: each diff is decoded here by hand
 * (check_canonical, test_diff_util.c) and compared with the bytes we
 * changed, then applied to a copy of the twin, which must become the page,
 * and to a page another writer changed, of which only our bytes may change.
 * The expected encoding is the canonical one: a run is a maximal stretch of
 * consecutive 8-byte chunks (aligned to the page start) that each hold a
 * changed byte; it is masked exactly when one of its bytes is unchanged,
 * one mask byte per chunk (bit j: byte j changed), and its data is cur's
 * bytes of the whole chunks.  Last, a page another thread changes while
 * its diff is made: the diff must stay well formed.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "test_diff_util.h"

/* A random twin and a current page equal to it, from seed. */
static void random_twin(unsigned char *twin, unsigned char *cur, size_t page_size,
                        uint64_t seed)
{
    rng_seed(seed);
    fill_random(twin, page_size);
    memcpy(cur, twin, page_size);
}

static size_t count_changed(const unsigned char *twin, const unsigned char *cur,
                            size_t page_size)
{
    size_t n = 0;
    for (size_t i = 0; i < page_size; i++)
        n += twin[i] != cur[i];
    return n;
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

/* ---- a page that changes while its diff is made ------------------------ */

/* A home's stack page stays writable while its diff is taken (a thread runs
 * on it: libdsm/writeout.c og_add).  Another thread flips every third
 * chunk between the twin's value and another (all of it, or two bytes)
 * while diffs are made.  Each diff must be well formed (the diff read each
 * chunk twice and once made a run of no chunks, which its home rejected:
 * tests/omp flush_flag, about 1 run in 150), and, applied to the twin,
 * give each chunk a value it held. */
struct flipper {
    uint64_t *cur;
    const uint64_t *a, *b;      /* per chunk: the twin's value, the other one */
    size_t chunks;
    int stop;
};

static void *flip(void *arg)
{
    struct flipper *f = arg;
    while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED)) {
        for (size_t k = 1; k < f->chunks; k += 3)
            __atomic_store_n(&f->cur[k], f->b[k], __ATOMIC_RELAXED);
        for (size_t k = 1; k < f->chunks; k += 3)
            __atomic_store_n(&f->cur[k], f->a[k], __ATOMIC_RELAXED);
    }
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The flipper writes the page while dsm__diff_make reads it, on purpose
 * (a home's stack page stays writable while it is diffed): ThreadSanitizer
 * (make check-tsan) would report exactly that race, so it skips this one. */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

static void test_concurrent_change(void **state)
{
#ifdef UNDER_TSAN
    (void)state;
    skip();
#endif
    const size_t ps = 4096, chunks = ps / CHUNK;
    uint64_t *twin = (uint64_t *)(void *)page_alloc(ps), *cur = (uint64_t *)(void *)page_alloc(ps);
    uint64_t *b = (uint64_t *)(void *)page_alloc(ps), *copy = (uint64_t *)(void *)page_alloc(ps);
    struct outbuf o = out_alloc(ps);
    struct flipper f = { cur, twin, b, chunks, 0 };
    pthread_t th;

    (void)state;
    rng_seed(0xf11b);
    fill_random((unsigned char *)twin, ps);
    for (size_t k = 0; k < chunks; k++)
        b[k] = twin[k] ^ (k % 2 ? 0xffffull << 16 : ~0ull);
    memcpy(cur, twin, ps);
    cur[0] = b[0];                      /* one chunk changed for good */
    assert_int_equal(pthread_create(&th, NULL, flip, &f), 0);
    /* Until enough diffs were made with the flipper running (it may wait
     * for a core on a busy machine), or a time limit. */
    double t0 = now_s();
    long busy = 0, it, malformed = 0, wrong = 0;
    for (it = 0; busy < 100000 && now_s() - t0 < 5.0 && !malformed && !wrong; it++) {
        size_t len = dsm__diff_make(twin, cur, ps, o.p, o.cap);
        if (len > o.cap || dsm__diff_check(ps, o.p, len) != 0) {
            malformed = 1;
            break;
        }
        memcpy(copy, twin, ps);
        wrong += dsm__diff_apply(copy, ps, o.p, len) <= 0 || copy[0] != b[0];
        for (size_t k = 1; k < chunks; k++)
            wrong += copy[k] != twin[k] && !(k % 3 == 1 && copy[k] == b[k]);
        busy += len > HDR + CHUNK + 1;  /* a flipped chunk was in it */
    }
    /* The flipper stops before any assertion can leave this function. */
    __atomic_store_n(&f.stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    print_message("%ld diffs, %ld with flipped chunks\n", it, busy);
    out_check_guard(&o);
    assert_int_equal(malformed, 0);
    assert_int_equal(wrong, 0);
    free(twin); free(cur); free(b); free(copy); free(o.p);
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
        cmocka_unit_test(test_random_round_trip),
        cmocka_unit_test(test_concurrent_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
