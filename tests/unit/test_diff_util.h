/*
 * test_diff_util.h - what the diff tests (test_diff_encode.c,
 * test_diff_apply.c, test_diff_malformed.c) share: the page sizes they run
 * over, a deterministic random generator, output buffers with a guard zone,
 * a hand decoder that checks a diff is the canonical encoding, and a
 * builder of diffs by hand.  Everything here follows the format documented
 * in dsm_pure.h, not libdsm/diff.c; it is in test_diff_util.c, linked into
 * each of the three programs.
 */
#ifndef TEST_DIFF_UTIL_H
#define TEST_DIFF_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "dsm_pure.h"

#define HDR ((size_t)sizeof(struct dsm_diff_run))   /* 8 bytes */
#define CHUNK 8                                     /* DSM_DIFF_CHUNK */
#define MASKED DSM_DIFF_MASKED

/* 4096, 16384, 65536. */
#define NPAGE_SIZES 3
extern const size_t page_sizes[NPAGE_SIZES];

/* A small deterministic generator (xorshift64*) so that the random cases
 * are the same on every libc. */
void rng_seed(uint64_t s);
uint32_t rng32(void);

unsigned char *page_alloc(size_t page_size);
void fill_random(unsigned char *p, size_t page_size);
/* Change byte i of cur so that it surely differs from the twin. */
void change_byte(const unsigned char *twin, unsigned char *cur, size_t i);
/* The documented mask of chunk c: bit j set when byte j of it changed. */
unsigned chunk_mask(const unsigned char *twin, const unsigned char *cur, size_t c);

/* Diff output buffer: capacity cap followed by a guard zone that the
 * encoder must never write. */
#define GUARD 64
#define GUARD_BYTE 0xA5

struct outbuf {
    unsigned char *p;
    size_t cap;
};

struct outbuf out_alloc_cap(size_t cap);
/* Capacity dsm__diff_max_size(page_size), checked to hold a whole page. */
struct outbuf out_alloc(size_t page_size);
void out_check_guard(const struct outbuf *o);

/* Read the header of the run at diff + pos. */
struct dsm_diff_run run_at(const unsigned char *diff, size_t pos);

/* Decode a diff by hand and check that it is the canonical encoding of cur
 * against twin (see test_diff_util.c).  Returns the number of runs. */
size_t check_canonical(const unsigned char *twin, const unsigned char *cur,
                       size_t page_size, const unsigned char *diff, size_t len);

/* ---- hand-built diffs -------------------------------------------------- */

struct dbuf {
    unsigned char b[2 * 65536];
    size_t len;
};

void d_bytes(struct dbuf *d, const void *p, size_t n);
void d_fill(struct dbuf *d, unsigned char v, size_t n);
void d_hdr(struct dbuf *d, uint32_t offset, uint32_t count);
/* A run with a body of the documented length: count & ~MASKED chunks of
 * data bytes v, then as many mask bytes m if count has MASKED. */
void d_run(struct dbuf *d, uint32_t offset, uint32_t count, unsigned char v,
           unsigned char m);
struct dbuf *dbuf_new(void);

#endif /* TEST_DIFF_UTIL_H */
