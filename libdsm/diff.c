/*
 * diff.c - twins and word-granular diffs (pure functions).
 *
 * A non-home writer keeps a twin of a page from before its first write; at a
 * release it encodes the 4-byte words that differ as runs and sends them to
 * the home, which applies them.  Several writers of disjoint words of one
 * page merge at the home this way.  Any thread may call these; they touch
 * only the buffers they are given.
 */
#include <string.h>

#include "dsm_pure.h"

size_t dsm__diff_max_size(size_t page_size)
{
    /* With r runs separated by unchanged gaps, at most W - r + 1 of the W
     * words change, so the size 8r + 4(W - r + 1) grows with r; r is at most
     * ceil(W/2).  (Every other word changed is one word short of this.) */
    size_t words = page_size / DSM_DIFF_WORD, runs = (words + 1) / 2;
    return runs * sizeof(struct dsm_diff_run) + (words - runs + 1) * DSM_DIFF_WORD;
}

size_t dsm__diff_make(const void *twin, const void *cur, size_t page_size,
                      void *out, size_t out_cap)
{
    const uint32_t *t = twin, *c = cur;
    size_t words = page_size / DSM_DIFF_WORD;
    unsigned char *o = out;
    size_t len = 0, i = 0;

    while (i < words) {
        /* Skip equal words 8 bytes at a time: most of a page is unchanged. */
        while (i + 2 <= words) {
            uint64_t a, b;
            memcpy(&a, t + i, 8);
            memcpy(&b, c + i, 8);
            if (a != b)
                break;
            i += 2;
        }
        while (i < words && t[i] == c[i])
            i++;
        if (i == words)
            break;
        size_t start = i;
        while (i < words && t[i] != c[i])
            i++;
        struct dsm_diff_run run = { (uint32_t)start, (uint32_t)(i - start) };
        if (len + sizeof run + run.words * DSM_DIFF_WORD > out_cap)
            return (size_t)-1;   /* caller broke the capacity contract */
        memcpy(o + len, &run, sizeof run);
        len += sizeof run;
        memcpy(o + len, c + start, run.words * DSM_DIFF_WORD);
        len += run.words * DSM_DIFF_WORD;
    }
    return len;
}

int dsm__diff_check(size_t page_size, const void *diff, size_t len)
{
    const unsigned char *d = diff;
    size_t words = page_size / DSM_DIFF_WORD;
    size_t pos = 0, next_min = 0;

    while (pos < len) {
        struct dsm_diff_run run;
        if (len - pos < sizeof run)
            return -DSM_EPROTO;
        memcpy(&run, d + pos, sizeof run);
        pos += sizeof run;
        if (run.words == 0 || run.word_offset < next_min ||
            run.word_offset >= words || run.words > words - run.word_offset)
            return -DSM_EPROTO;
        if (len - pos < (size_t)run.words * DSM_DIFF_WORD)
            return -DSM_EPROTO;
        pos += (size_t)run.words * DSM_DIFF_WORD;
        next_min = (size_t)run.word_offset + run.words;
    }
    return 0;
}

long dsm__diff_apply(void *page, size_t page_size, const void *diff, size_t len)
{
    const unsigned char *d = diff;
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
        memcpy((unsigned char *)page + (size_t)run.word_offset * DSM_DIFF_WORD,
               d + pos, (size_t)run.words * DSM_DIFF_WORD);
        pos += (size_t)run.words * DSM_DIFF_WORD;
        written += run.words;
    }
    return written;
}
