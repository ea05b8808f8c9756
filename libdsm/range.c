/*
 * range.c - the deterministic first-fit allocator of page ranges.
 *
 * Collective allocation runs the same sequence of calls on every node, so
 * every node computes the same offsets without a message.  Called by the one
 * thread per node that makes collective calls; no locking.
 */
#include <stdlib.h>
#include <string.h>

#include "libc.h"
#include "dsm_pure.h"

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    void *p = realloc(*arr, nc * elem);
    if (!p)
        return -DSM_ENOMEM;
    *arr = p;
    *cap = nc;
    return 0;
}

int dsm__ranges_init(struct dsm_ranges *r, size_t total)
{
    memset(r, 0, sizeof *r);
    r->total = total;
    if (total == 0)
        return 0;
    if (grow((void **)&r->free, &r->capfree, 1, sizeof *r->free))
        return -DSM_ENOMEM;
    r->free[0].start = 0;
    r->free[0].count = total;
    r->nfree = 1;
    return 0;
}

void dsm__ranges_destroy(struct dsm_ranges *r)
{
    free(r->free);
    free(r->used);
    memset(r, 0, sizeof *r);
}

int dsm__ranges_alloc(struct dsm_ranges *r, size_t count, size_t *start)
{
    size_t i, j;

    if (count == 0)
        return -DSM_EINVAL;
    for (i = 0; i < r->nfree && r->free[i].count < count; i++)
        ;
    if (i == r->nfree)
        return -DSM_ENOMEM;
    if (grow((void **)&r->used, &r->capused, r->nused + 1, sizeof *r->used))
        return -DSM_ENOMEM;
    *start = r->free[i].start;
    r->free[i].start += count;
    r->free[i].count -= count;
    if (r->free[i].count == 0) {
        memmove(&r->free[i], &r->free[i + 1], (r->nfree - i - 1) * sizeof *r->free);
        r->nfree--;
    }
    for (j = 0; j < r->nused && r->used[j].start < *start; j++)
        ;
    memmove(&r->used[j + 1], &r->used[j], (r->nused - j) * sizeof *r->used);
    r->used[j].start = *start;
    r->used[j].count = count;
    r->nused++;
    return 0;
}

int dsm__ranges_free(struct dsm_ranges *r, size_t start, size_t *count)
{
    size_t lo = 0, hi = r->nused, i, n;

    while (lo < hi) {                       /* binary search in used[] */
        size_t mid = (lo + hi) / 2;
        if (r->used[mid].start < start) lo = mid + 1; else hi = mid;
    }
    if (lo == r->nused || r->used[lo].start != start)
        return -DSM_EINVAL;
    n = r->used[lo].count;
    memmove(&r->used[lo], &r->used[lo + 1], (r->nused - lo - 1) * sizeof *r->used);
    r->nused--;
    if (count)
        *count = n;

    for (i = 0; i < r->nfree && r->free[i].start < start; i++)
        ;
    int merge_prev = i > 0 && r->free[i - 1].start + r->free[i - 1].count == start;
    int merge_next = i < r->nfree && start + n == r->free[i].start;
    if (merge_prev && merge_next) {
        r->free[i - 1].count += n + r->free[i].count;
        memmove(&r->free[i], &r->free[i + 1], (r->nfree - i - 1) * sizeof *r->free);
        r->nfree--;
    } else if (merge_prev) {
        r->free[i - 1].count += n;
    } else if (merge_next) {
        r->free[i].start = start;
        r->free[i].count += n;
    } else {
        if (grow((void **)&r->free, &r->capfree, r->nfree + 1, sizeof *r->free))
            return -DSM_ENOMEM;
        memmove(&r->free[i + 1], &r->free[i], (r->nfree - i) * sizeof *r->free);
        r->free[i].start = start;
        r->free[i].count = n;
        r->nfree++;
    }
    return 0;
}

size_t dsm__ranges_largest_free(const struct dsm_ranges *r)
{
    size_t best = 0;
    for (size_t i = 0; i < r->nfree; i++)
        if (r->free[i].count > best)
            best = r->free[i].count;
    return best;
}

size_t dsm__ranges_free_total(const struct dsm_ranges *r)
{
    size_t sum = 0;
    for (size_t i = 0; i < r->nfree; i++)
        sum += r->free[i].count;
    return sum;
}
