/*
 * test_diff_util.c - the helpers the diff tests share (test_diff_util.h):
 * a deterministic random generator, pages and guarded output buffers, the
 * hand decoder check_canonical and the builder of diffs by hand.
 *
 * The decoder takes what a diff must be from the format documented in
 * dsm_pure.h, not from libdsm/diff.c: the canonical encoding of cur against
 * twin, a maximal run of consecutive changed 8-byte chunks, masked exactly
 * when one of its bytes is unchanged.  The helpers fail the calling cmocka
 * test through its assertions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_diff_util.h"

const size_t page_sizes[NPAGE_SIZES] = { 4096, 16384, 65536 };

/* A small deterministic generator (xorshift64*) so that the random cases
 * are the same on every libc. */
static uint64_t rng_state;

void rng_seed(uint64_t s) { rng_state = s ? s : 0x9e3779b97f4a7c15ull; }

uint32_t rng32(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

unsigned char *page_alloc(size_t page_size)
{
    unsigned char *p = malloc(page_size);
    assert_non_null(p);
    return p;
}

void fill_random(unsigned char *p, size_t page_size)
{
    for (size_t i = 0; i < page_size; i++)
        p[i] = (unsigned char)rng32();
}

/* Change byte i of cur so that it surely differs from the twin. */
void change_byte(const unsigned char *twin, unsigned char *cur, size_t i)
{
    cur[i] = (unsigned char)(twin[i] ^ (1 + rng32() % 255));
}

/* The documented mask of chunk c: bit j set when byte j of it changed. */
unsigned chunk_mask(const unsigned char *twin, const unsigned char *cur, size_t c)
{
    unsigned m = 0;
    for (unsigned j = 0; j < CHUNK; j++)
        if (twin[CHUNK * c + j] != cur[CHUNK * c + j])
            m |= 1u << j;
    return m;
}

struct outbuf out_alloc_cap(size_t cap)
{
    struct outbuf o;
    o.cap = cap;
    o.p = malloc(o.cap + GUARD);
    assert_non_null(o.p);
    memset(o.p, GUARD_BYTE, o.cap + GUARD);
    return o;
}

struct outbuf out_alloc(size_t page_size)
{
    size_t cap = dsm__diff_max_size(page_size);
    assert_true(cap >= HDR + page_size);   /* at least "whole page changed" */
    return out_alloc_cap(cap);
}

void out_check_guard(const struct outbuf *o)
{
    for (size_t i = 0; i < GUARD; i++)
        assert_int_equal(o->p[o->cap + i], GUARD_BYTE);
}

/* Read the header of the run at diff + pos. */
struct dsm_diff_run run_at(const unsigned char *diff, size_t pos)
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
size_t check_canonical(const unsigned char *twin, const unsigned char *cur,
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

/* ---- hand-built diffs -------------------------------------------------- */

void d_bytes(struct dbuf *d, const void *p, size_t n)
{
    assert_true(n <= sizeof d->b - d->len);
    memcpy(d->b + d->len, p, n);
    d->len += n;
}

void d_fill(struct dbuf *d, unsigned char v, size_t n)
{
    assert_true(n <= sizeof d->b - d->len);
    memset(d->b + d->len, v, n);
    d->len += n;
}

void d_hdr(struct dbuf *d, uint32_t offset, uint32_t count)
{
    struct dsm_diff_run r = { offset, count };
    d_bytes(d, &r, HDR);
}

/* A run with a body of the documented length: count & ~MASKED chunks of
 * data bytes v, then as many mask bytes m if count has MASKED. */
void d_run(struct dbuf *d, uint32_t offset, uint32_t count, unsigned char v,
                  unsigned char m)
{
    size_t n = count & ~MASKED;
    d_hdr(d, offset, count);
    d_fill(d, v, n * CHUNK);
    if (count & MASKED)
        d_fill(d, m, n);
}

struct dbuf *dbuf_new(void)
{
    struct dbuf *d = calloc(1, sizeof *d);
    assert_non_null(d);
    return d;
}
