/*
 * segment.c - memory outside the region brought under the DSM, first-touch
 * page placement, and alternate signal stacks.  Used by a runtime on top of
 * libdsm (the shim) to share a program's globals (.data/.bss) and to run
 * stacks in the region.
 *
 * Threads: dsm__segments_attach, dsm__segments_add and dsm__set_migrate are
 * collective, called by the main thread of every node; dsm__altstack_setup
 * by each thread that may fault on a stack inside the region.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm_internal.h"

#define ALTSTACK_SIZE (256 * 1024)

/* Put spec[0..n) into pages [p, ...) of the run.  At start-up (fresh)
 * every node holds the same program image, a valid copy: each copies its
 * own and the home traps its writes.  Later (a library loaded with dlopen)
 * only the home's image counts, since each node's constructors wrote their
 * own: the home copies it in, the others fetch it on first touch. */
static size_t place_segments(const struct dsm_segment_spec *spec, size_t n, int home,
                             size_t p, int fresh)
{
    struct dsm_global *g = &dsm__g;
    size_t ps = g->page_size, os = g->os_page;
    uint64_t others = 0;
    int nsegs = g->nsegs;

    for (int r = 0; r < g->nodes; r++)
        if (r != home)
            others |= (uint64_t)1 << r;
    for (size_t i = 0; i < n; i++) {
        struct dsm_segment *sg = &g->segs[nsegs + (int)i];
        unsigned char *addr = spec[i].addr;
        int copy_here = fresh || g->rank == home;
        sg->app = addr;
        sg->first = p;
        sg->npages = (spec[i].len + ps - 1) / ps;
        sg->bytes = spec[i].len;
        /* Page by page: all-zero pages (most of a .bss) need no copy. */
        for (size_t c = 0; copy_here && c < spec[i].ncopy; c++) {
            const struct dsm_range *cp = &spec[i].copy[c];
            for (size_t off = cp->start; off < cp->start + cp->count; off += os) {
                const uint64_t *src = (const uint64_t *)(void *)(addr + off);
                size_t k = 0;
                while (k < os / 8 && src[k] == 0)
                    k++;
                if (k < os / 8)
                    memcpy(dsm__sys_page(p) + off, src, os);
            }
        }
        for (size_t x = p; x < p + sg->npages; x++) {
            struct dsm_page *pg = &g->pages[x];
            dsm__page_lock(x);
            pg->state = fresh ? DSM_P_READ_ONLY : DSM_P_INVALID;
            pg->copyset = fresh && g->rank == home ? others : 0;
            dsm__page_unlock(x);
        }
        p += sg->npages;
    }
    return p;
}

/* Publish segments [g->nsegs, g->nsegs + n), which end at page end of the
 * run, and map them over the program's addresses.  The entries are written
 * before the counts that make them visible to the communication thread. */
static void publish_segments(size_t n, size_t end, int fresh)
{
    struct dsm_global *g = &dsm__g;
    int first = g->nsegs;
    __atomic_store_n(&g->nsegs, first + (int)n, __ATOMIC_RELEASE);
    __atomic_store_n(&g->segs_npages, end - g->segs_first, __ATOMIC_RELEASE);
    for (int i = first; i < first + (int)n; i++) {
        const struct dsm_segment *sg = &g->segs[i];
        void *m = mmap(sg->app, sg->bytes, fresh ? PROT_READ : PROT_NONE,
                       MAP_SHARED | MAP_FIXED, g->memfd,
                       (off_t)(sg->first * g->page_size));
        if (m != sg->app)
            dsm__fatal("cannot map the shared copy of the program's data over %p "
                       "(%zu bytes): %s", (void *)sg->app, sg->bytes, strerror(errno));
    }
}

static size_t pages_of(const struct dsm_segment_spec *spec, size_t n)
{
    size_t ps = dsm__g.page_size, os = dsm__g.os_page, total = 0;
    for (size_t i = 0; i < n; i++) {
        if ((uintptr_t)spec[i].addr % os || spec[i].len % os || spec[i].len == 0)
            dsm__fatal("internal error: segment %p + %zu is not page-aligned",
                       spec[i].addr, spec[i].len);
        total += (spec[i].len + ps - 1) / ps;
    }
    return total;
}

void dsm__segments_attach(const struct dsm_segment_spec *spec, size_t n, int home,
                          size_t spare)
{
    struct dsm_global *g = &dsm__g;
    size_t ps = g->page_size;

    if (g->segs_reserved)
        dsm__fatal("internal error: segments attached twice");
    if (n > DSM_MAX_SEGMENTS)
        dsm__fatal("cannot put %zu address ranges of the program under the DSM (at most %d); "
                   "the program needs too many libraries with data of their own", n,
                   DSM_MAX_SEGMENTS);
    size_t total = pages_of(spec, n) + (spare + ps - 1) / ps;
    if (total == 0)
        return;
    /* One run of pages for all, so that a page number says at once
     * whether it is a segment's (dsm__page_in_segment); the spare pages at
     * its end are for dsm__segments_add. */
    void *q = dsm_malloc_home(total * ps, DSM_HOME_NODE, home);
    if (!q)
        dsm__fatal("cannot attach %zu bytes of the program's data: the shared region "
                   "is full; raise DSM_HEAP_SIZE", total * ps);
    g->segs_first = dsm__page_of(q);
    g->segs_reserved = total;
    size_t end = place_segments(spec, n, home, g->segs_first, 1);
    publish_segments(n, end, 1);
    dsm_barrier();
}

void dsm__segments_add(const struct dsm_segment_spec *spec, size_t n, int home,
                       const char *advice)
{
    struct dsm_global *g = &dsm__g;
    size_t need = pages_of(spec, n), used = g->segs_npages;

    if (n == 0)
        return;
    if (need > g->segs_reserved - used)
        dsm__fatal("cannot share the global variables of a library loaded with dlopen: "
                   "they need %zu bytes and %zu bytes are left of the room set aside "
                   "for them at start-up%s%s", need * g->page_size,
                   (g->segs_reserved - used) * g->page_size, advice ? "; " : "",
                   advice ? advice : "");
    if (n > (size_t)(DSM_MAX_SEGMENTS - g->nsegs))
        dsm__fatal("cannot share the global variables of another library loaded with "
                   "dlopen: the DSM already holds %d address ranges of the program (at "
                   "most %d)%s%s", g->nsegs, DSM_MAX_SEGMENTS, advice ? "; " : "",
                   advice ? advice : "");
    size_t end = place_segments(spec, n, home, g->segs_first + used, 0);
    publish_segments(n, end, 0);
    dsm_barrier();
}

void dsm__set_migrate(const void *addr, size_t len)
{
    struct dsm_global *g = &dsm__g;
    if (len == 0)
        return;
    size_t first = dsm__page_of(addr);
    size_t last = dsm__page_of((const unsigned char *)addr + len - 1);
    for (size_t p = first; p <= last; p++) {
        dsm__page_lock(p);
        g->pages[p].flags |= DSM_PF_MIGRATE;
        dsm__page_unlock(p);
    }
}

void dsm__altstack_setup(void)
{
    static __thread int done;
    stack_t ss;

    if (done)
        return;
    ss.ss_sp = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ss.ss_sp == MAP_FAILED)
        dsm__fatal("cannot allocate a signal stack: %s", strerror(errno));
    ss.ss_size = ALTSTACK_SIZE;
    ss.ss_flags = 0;
    if (sigaltstack(&ss, NULL) != 0)
        dsm__fatal("sigaltstack failed: %s", strerror(errno));
    done = 1;
}

/* ---- stacks: pages the home never write-protects ---- */

static pthread_mutex_t served_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *served;        /* NOTRAP pages served since their last notice */
static size_t nserved, capserved;

void dsm__set_notrap(const void *addr, size_t len)
{
    if (len == 0)
        return;
    size_t first = dsm__page_of(addr);
    size_t last = dsm__page_of((const unsigned char *)addr + len - 1);
    int home_here = 0;
    for (size_t p = first; p <= last; p++) {
        dsm__page_lock(p);
        dsm__g.pages[p].flags |= DSM_PF_NOTRAP;
        if (dsm__g.pages[p].home == dsm__g.rank && dsm__g.pages[p].state == DSM_P_INVALID) {
            /* Mapped at once: the kernel must be able to write a stack
             * (a system call's result) without a fault to catch. */
            dsm__g.pages[p].state = DSM_P_READ_WRITE;
            home_here = 1;
        }
        dsm__page_unlock(p);
    }
    if (home_here)
        dsm__vm_protect(first, last - first + 1, PROT_READ | PROT_WRITE);
}

void dsm__notrap_served(size_t p)
{
    if (dsm__g.pages[p].copyset)
        return;                 /* already listed */
    /* The home's writes from now on are diffed against this (races.c, and
     * an ordered dsm_flush sends them to the copies: ordered.c).  A twin
     * still here is stale: its page left the list with an empty copyset,
     * unflushed, and was written since (a false race). */
    memcpy(dsm__twin_page(p), dsm__sys_page(p), dsm__g.page_size);
    dsm__g.pages[p].flags |= DSM_PF_TWIN;
    pthread_mutex_lock(&served_mu);
    if (nserved == capserved) {
        size_t nc = capserved ? capserved * 2 : 64;
        uint32_t *v = realloc(served, nc * sizeof *v);
        if (!v)
            dsm__fatal("out of private memory listing served stack pages");
        served = v;
        capserved = nc;
    }
    served[nserved++] = (uint32_t)p;
    pthread_mutex_unlock(&served_mu);
}

void dsm__notrap_mark(void)
{
    /* Lock order: page lock before served_mu (on_page_req holds a page lock
     * when it calls dsm__notrap_served), so take the list out first and
     * look at the pages without served_mu. */
    pthread_mutex_lock(&served_mu);
    uint32_t *list = served;
    size_t n = nserved;
    served = NULL;
    nserved = capserved = 0;
    pthread_mutex_unlock(&served_mu);
    if (n == 0) {
        free(list);
        return;
    }
    qsort(list, n, sizeof *list, dsm__cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t p = list[i];
        if (k && list[k - 1] == p)
            continue;
        dsm__page_lock(p);
        if (dsm__g.pages[p].copyset && dsm__g.pages[p].home == dsm__g.rank) {
            dsm__pt_mark_written(p);
            list[k++] = (uint32_t)p;
        }
        dsm__page_unlock(p);
    }
    /* Put the pages still held elsewhere back (a serve meanwhile added only
     * pages whose copyset was empty). */
    pthread_mutex_lock(&served_mu);
    for (size_t i = 0; i < k; i++) {
        if (nserved == capserved) {
            size_t nc = capserved ? capserved * 2 : 64;
            uint32_t *v = realloc(served, nc * sizeof *v);
            if (!v)
                dsm__fatal("out of private memory listing served stack pages");
            served = v;
            capserved = nc;
        }
        served[nserved++] = list[i];
    }
    pthread_mutex_unlock(&served_mu);
    free(list);
}
