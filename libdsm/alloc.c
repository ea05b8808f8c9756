/*
 * alloc.c - collective allocation in the shared region, and home placement.
 *
 * Every node makes the same sequence of dsm_malloc/dsm_free calls, runs the
 * same deterministic allocator (range.c) and so gets the same pointers
 * without exchanging them; a checked barrier verifies that the calls and
 * their arguments agree.  Allocations are whole coherence pages, so two
 * allocations never share a page.  Called by one thread per node.
 */
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm_internal.h"

static struct dsm_ranges ranges;

int dsm__alloc_init(void)
{
    return dsm__ranges_init(&ranges, dsm__g.npages);
}

void dsm__alloc_fini(void)
{
    dsm__ranges_destroy(&ranges);
}

size_t dsm__alloc_largest_free(void)
{
    return dsm__ranges_largest_free(&ranges) << dsm__g.page_shift;
}

static int home_of(enum dsm_home_policy policy, int node, size_t i, size_t count)
{
    int n = dsm__g.nodes;
    switch (policy) {
    case DSM_HOME_CYCLIC:
        return (int)(i % (size_t)n);
    case DSM_HOME_NODE:
        return node;
    default: {
        /* Block k holds pages [k*count/n, (k+1)*count/n). */
        int k = (int)((i * (size_t)n) / count);
        while (k + 1 < n && (size_t)(k + 1) * count / (size_t)n <= i)
            k++;
        while (k > 0 && (size_t)k * count / (size_t)n > i)
            k--;
        return k;
    }
    }
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

struct alloc_req {
    size_t size, count, start;
    enum dsm_home_policy policy;
    int node;
    const char *name;
};

/* Runs inside the allocation's barrier (see dsm__barrier_checked). */
static void place(void *arg)
{
    struct alloc_req *a = arg;
    struct dsm_global *g = &dsm__g;

    if (dsm__ranges_alloc(&ranges, a->count, &a->start) != 0)
        dsm__fatal("%s(%zu bytes): out of shared memory: %zu of %zu bytes are "
                   "free, the largest free block is %zu bytes; raise DSM_HEAP_SIZE "
                   "(now %zu) or free memory first", a->name, a->size,
                   dsm__ranges_free_total(&ranges) * g->page_size, g->cfg.heap_size,
                   dsm__ranges_largest_free(&ranges) * g->page_size, g->cfg.heap_size);
    for (size_t i = 0; i < a->count; i++) {
        struct dsm_page *pg = &g->pages[a->start + i];
        int h = home_of(a->policy, a->node, i, a->count);
        dsm__page_lock(a->start + i);
        pg->home = (uint16_t)h;
        pg->flags = 0;
        pg->copyset = 0;
        /* Every page starts PROT_NONE.  A copy is fetched on first touch;
         * a home page is only mapped then (no message), and stays writable
         * at no cost while nobody else holds it.  Mapping lazily keeps the
         * number of kernel map entries proportional to the pages touched,
         * not to the allocation (a cyclic allocation would otherwise need
         * one entry per page). */
        pg->state = DSM_P_INVALID;
        dsm__page_unlock(a->start + i);
    }
}

void *dsm_malloc_home(size_t size, enum dsm_home_policy policy, int node)
{
    struct dsm_global *g = &dsm__g;
    struct alloc_req a;

    /* dsm_malloc comes through here: name the call the program made. */
    a.name = policy == DSM_HOME_DEFAULT ? "dsm_malloc" : "dsm_malloc_home";
    DSM_CHECK_RUNNING_AS(a.name);
    if (policy == DSM_HOME_DEFAULT)
        policy = g->cfg.home;
    if (policy != DSM_HOME_BLOCK && policy != DSM_HOME_CYCLIC && policy != DSM_HOME_NODE)
        dsm__fatal("dsm_malloc_home: bad value %d for the home policy; use "
                   "DSM_HOME_BLOCK, DSM_HOME_CYCLIC or DSM_HOME_NODE", (int)policy);
    if (policy == DSM_HOME_NODE && (node < 0 || node >= g->nodes))
        dsm__fatal("dsm_malloc_home: bad value %d for the home node; nodes are 0 to %d",
                   node, g->nodes - 1);
    if (policy != DSM_HOME_NODE)
        node = 0;
    a.size = size;
    a.policy = policy;
    a.node = node;
    a.count = size == 0 ? 1 : (size + g->page_size - 1) / g->page_size;
    if (size > g->npages * g->page_size)
        a.count = g->npages + 1;   /* no overflow in the rounding above */
    dsm__barrier_checked(DSM_COLL_MALLOC,
                         mix(mix(mix(1, size), (uint64_t)policy), (uint64_t)node), size,
                         place, &a);
    return dsm__app_page(a.start);
}

void *dsm_malloc(size_t size)
{
    return dsm_malloc_home(size, DSM_HOME_DEFAULT, 0);
}

static int is_allocation_start(size_t p)
{
    size_t lo = 0, hi = ranges.nused;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ranges.used[mid].start < p) lo = mid + 1; else hi = mid;
    }
    return lo < ranges.nused && ranges.used[lo].start == p;
}

void dsm_free(void *ptr)
{
    struct dsm_global *g = &dsm__g;
    size_t p, count;

    DSM_CHECK_RUNNING();
    if (!ptr)
        return;
    if (!dsm__in_region(ptr) || ((uintptr_t)ptr & (g->page_size - 1)) ||
        !is_allocation_start(p = dsm__page_of(ptr)))
        dsm__fatal("dsm_free(%p): %p is not a pointer returned by dsm_malloc (or it "
                   "was freed already); pass dsm_free exactly what dsm_malloc returned",
                   ptr, ptr);
    dsm__barrier_checked(DSM_COLL_FREE, mix(2, (uintptr_t)ptr), (uintptr_t)ptr, NULL, NULL);
    dsm__ranges_free(&ranges, p, &count);
    for (size_t i = 0; i < count; i++) {
        struct dsm_page *pg = &g->pages[p + i];
        dsm__page_lock(p + i);
        pg->state = DSM_P_UNALLOC;
        pg->flags = 0;
        pg->copyset = 0;
        dsm__page_unlock(p + i);
    }
    dsm__vm_protect(p, count, PROT_NONE);
    dsm__vm_release(p, count);
}

int dsm_is_shared(const void *addr)
{
    DSM_CHECK_RUNNING();
    return dsm__in_region(addr) &&
           dsm__g.pages[dsm__page_of(addr)].state != DSM_P_UNALLOC;
}

int dsm_home_of(const void *addr)
{
    DSM_CHECK_RUNNING();
    if (!dsm__in_region(addr))
        return -1;
    struct dsm_page *pg = &dsm__g.pages[dsm__page_of(addr)];
    return pg->state == DSM_P_UNALLOC ? -1 : pg->home;
}

size_t dsm_page_size(void)
{
    DSM_CHECK_RUNNING();
    return dsm__g.page_size;
}
