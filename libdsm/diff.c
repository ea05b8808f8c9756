/*
 * diff.c - twins and byte-exact diffs (pure functions).
 *
 * A non-home writer keeps a twin of a page from before its first write; at a
 * release it encodes the bytes that differ as runs of 8-byte chunks, with a
 * byte mask where a run also holds unchanged bytes (format in dsm_pure.h),
 * and sends them to the home, which applies them.  Several writers of
 * disjoint bytes of one page, even of one word, merge at the home this way.
 * Any thread may call these; they touch only the buffers they are given.
 */
#include <string.h>

#include "libc.h"
#include "dsm_pure.h"

#define ONES  0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* x has a zero byte: some byte of the chunk is unchanged. */
static inline int has_zero_byte(uint64_t x)
{
    return ((x - ONES) & ~x & HIGHS) != 0;
}

/* Bit j set where byte j of x (in memory order: little-endian loads) is not
 * zero: set the high bit of each non-zero byte, then gather the eight high
 * bits into the top byte with one multiplication (each lands on its own bit
 * there, and no two partial products meet, so nothing carries). */
static inline uint8_t nonzero_bytes(uint64_t x)
{
    uint64_t y = (((x & ~HIGHS) + ~HIGHS) | x) & HIGHS;
    return (uint8_t)(((y >> 7) * 0x0102040810204080ull) >> 56);
}

size_t dsm__diff_max_size(size_t page_size)
{
    /* r runs covering k chunks in all (k <= C - r + 1, C chunks in the
     * page, a gap of at least one chunk between runs) take at most
     * 8r + 9k bytes (header, data, mask), which is largest with one masked
     * run over the whole page. */
    size_t chunks = page_size / DSM_DIFF_CHUNK;
    return sizeof(struct dsm_diff_run) + chunks * (DSM_DIFF_CHUNK + 1);
}

/* Each chunk of cur is read once, and the value read is both compared and
 * copied: a home's stack page stays writable while its diff is taken (a
 * thread runs on it: writeout.c og_add, refresh_stack_twin), and a chunk
 * read twice could differ from the twin the first time and not the second,
 * which made a run of no chunks (a malformed DIFF, tests/omp flush_flag).
 * The twin is the caller's, unchanged meanwhile: a run's mask is taken from
 * the twin and the data as copied. */
size_t dsm__diff_make(const void *twin, const void *cur, size_t page_size,
                      void *out, size_t out_cap)
{
    const unsigned char *t = twin, *c = cur;
    size_t chunks = page_size / DSM_DIFF_CHUNK;
    unsigned char *o = out;
    size_t len = 0, i = 0;

    while (i < chunks) {
        uint64_t tv = 0, cv = 0;
        /* Skip equal chunks: most of a page is unchanged. */
        for (; i < chunks; i++) {
            tv = load64(t + 8 * i);
            cv = load64(c + 8 * i);
            if (tv != cv)
                break;
        }
        if (i == chunks)
            break;
        /* A run from chunk i (differing as read), data straight into out. */
        struct dsm_diff_run run;
        unsigned char *data = o + len + sizeof run;
        size_t start = i, n = 0;
        int masked = 0;
        do {
            if (len + sizeof run + (n + 1) * DSM_DIFF_CHUNK > out_cap)
                return (size_t)-1;   /* caller broke the capacity contract */
            memcpy(data + 8 * n, &cv, 8);
            masked |= has_zero_byte(tv ^ cv);
            n++;
            if (++i == chunks)
                break;
            tv = load64(t + 8 * i);
            cv = load64(c + 8 * i);
        } while (tv != cv);
        run.offset = (uint32_t)(start * DSM_DIFF_CHUNK);
        run.count = (uint32_t)n | (masked ? DSM_DIFF_MASKED : 0);
        if (len + sizeof run + dsm__diff_run_body(&run) > out_cap)
            return (size_t)-1;
        memcpy(o + len, &run, sizeof run);
        len += sizeof run + n * DSM_DIFF_CHUNK;
        if (masked) {
            for (size_t k = 0; k < n; k++)
                o[len++] = nonzero_bytes(load64(t + 8 * (start + k)) ^ load64(data + 8 * k));
        }
    }
    return len;
}

int dsm__diff_check(size_t page_size, const void *diff, size_t len)
{
    const unsigned char *d = diff;
    size_t pos = 0, next_min = 0;

    while (pos < len) {
        struct dsm_diff_run run;
        if (len - pos < sizeof run)
            return -DSM_EPROTO;
        memcpy(&run, d + pos, sizeof run);
        pos += sizeof run;
        size_t n = dsm__diff_run_chunks(&run);
        if (n == 0 || run.offset % DSM_DIFF_CHUNK || run.offset < next_min ||
            run.offset >= page_size || n > (page_size - run.offset) / DSM_DIFF_CHUNK)
            return -DSM_EPROTO;
        if (len - pos < dsm__diff_run_body(&run))
            return -DSM_EPROTO;
        pos += dsm__diff_run_body(&run);
        next_min = (size_t)run.offset + n * DSM_DIFF_CHUNK;
    }
    return 0;
}

long dsm__diff_apply(void *page, size_t page_size, const void *diff, size_t len)
{
    const unsigned char *d = diff;
    unsigned char *pg = page;
    size_t pos = 0;
    long written = 0;

    /* Validate everything before writing anything: a malformed diff from the
     * wire must not leave a half-applied page behind. */
    if (dsm__diff_check(page_size, diff, len) < 0)
        return -DSM_EPROTO;
    while (pos < len) {
        struct dsm_diff_run run;
        memcpy(&run, d + pos, sizeof run);
        pos += sizeof run;
        size_t n = dsm__diff_run_chunks(&run);
        const unsigned char *data = d + pos;
        unsigned char *dst = pg + run.offset;
        if (!(run.count & DSM_DIFF_MASKED)) {
            memcpy(dst, data, n * DSM_DIFF_CHUNK);
            written += (long)(n * DSM_DIFF_CHUNK);
        } else {
            const unsigned char *mask = data + n * DSM_DIFF_CHUNK;
            for (size_t k = 0; k < n; k++) {
                unsigned m = mask[k];
                if (m == 0xff) {
                    memcpy(dst + 8 * k, data + 8 * k, 8);
                    written += 8;
                    continue;
                }
                /* Byte stores only: the bytes around them may be another
                 * writer's, or the home's own threads' (writing now). */
                while (m) {
                    int j = __builtin_ctz(m);
                    dst[8 * k + j] = data[8 * k + j];
                    written++;
                    m &= m - 1;
                }
            }
        }
        pos += dsm__diff_run_body(&run);
    }
    return written;
}
