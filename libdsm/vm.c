/*
 * vm.c - the shared region: one memfd mapped twice.
 *
 * The application view sits at the same address on every node (DSM_BASE) and
 * carries the per-page protection that drives the protocol.  The system view
 * maps the same memory at a private address and is always read-write: the
 * communication thread installs fetched pages and applies diffs through it,
 * so another thread can never see a half-installed page through the
 * application view.  Twins live in a third, private, lazily backed mapping.
 * Main thread at init/finalize; dsm__vm_protect and dsm__vm_back from any
 * thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dsm_internal.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23          /* Linux 5.14 */
#endif

/* backed[p]: this node's memory behind page p exists (dsm__vm_back). */
static unsigned char *backed;
static int populate = 1;                /* 0: the kernel cannot (EINVAL) */

int dsm__vm_init(void)
{
    struct dsm_global *g = &dsm__g;
    size_t size = g->cfg.heap_size;
    void *p;

    g->memfd = memfd_create("libdsm-heap", MFD_CLOEXEC);
    if (g->memfd < 0)
        dsm__fatal("memfd_create failed: %s", strerror(errno));
    if (ftruncate(g->memfd, (off_t)size) != 0)
        dsm__fatal("cannot size the shared heap to %zu bytes (ftruncate: %s); "
                   "lower DSM_HEAP_SIZE", size, strerror(errno));
    p = mmap((void *)g->cfg.base, size, PROT_NONE,
             MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE, g->memfd, 0);
    if (p == MAP_FAILED || p != (void *)g->cfg.base) {
        int e = errno;
        if (p != MAP_FAILED)
            munmap(p, size);
        return -(e == EEXIST || p != MAP_FAILED ? DSM_EINVAL : DSM_ENOMEM);
    }
    g->app = p;
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
             g->memfd, 0);
    if (p == MAP_FAILED)
        dsm__fatal("cannot map the system view of the shared heap (%zu bytes): %s; "
                   "lower DSM_HEAP_SIZE", size, strerror(errno));
    g->sys = p;
    p = mmap(NULL, size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        dsm__fatal("cannot reserve twin space (%zu bytes): %s; lower DSM_HEAP_SIZE",
                   size, strerror(errno));
    g->twins = p;
    p = mmap(NULL, g->npages, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    backed = p == MAP_FAILED ? NULL : p;
    return 0;
}

/* Before this node's first copy of page p is asked for: have the kernel
 * allocate the memory behind it now, on the faulting thread (or the
 * communication thread, for a prefetch).  Otherwise the kernel allocates and
 * zeroes it as the page lands, inside MPI on whichever thread completes the
 * receive, where it costs 15-50 us on a virtual machine and a trace shows it
 * as the page's time in transit (docs/TRACING.md, "A rank's first copy of a
 * page").  Here it is the fault's own work, before the request goes out. */
void dsm__vm_back(size_t p)
{
    if (!backed || __atomic_load_n(&backed[p], __ATOMIC_RELAXED) ||
        !__atomic_load_n(&populate, __ATOMIC_RELAXED))
        return;
    if (madvise(dsm__sys_page(p), dsm__g.page_size, MADV_POPULATE_WRITE) != 0 &&
        errno == EINVAL)
        __atomic_store_n(&populate, 0, __ATOMIC_RELAXED);   /* before Linux 5.14 */
    __atomic_store_n(&backed[p], 1, __ATOMIC_RELAXED);
}

void dsm__vm_open_all(void)
{
    struct dsm_global *g = &dsm__g;
    int prot = PROT_READ | PROT_WRITE | (g->exec_pages ? PROT_EXEC : 0);
    mprotect(g->app, g->npages << g->page_shift, prot);
    for (int i = 0; i < g->nsegs; i++)
        mprotect(g->segs[i].app, g->segs[i].bytes, prot);
}

/* In a child of fork(): the region's views are MAP_SHARED mappings of the
 * memfd, so the child's writes (to a stack in the region, before it execs)
 * would land in the parent's memory.  Map every view of the program's
 * addresses privately instead: the child starts from this node's copies
 * and writes only its own.  Runs in the child only, on a stack outside the
 * region, before anything touches the region. */
int dsm__vm_detach_child(void)
{
    struct dsm_global *g = &dsm__g;
    int prot = PROT_READ | PROT_WRITE | (g->exec_pages ? PROT_EXEC : 0);
    int rc = 0;
    if (!g->app || g->memfd < 0)
        return 0;
    if (mmap(g->app, g->npages << g->page_shift, prot, MAP_PRIVATE | MAP_FIXED |
             MAP_NORESERVE, g->memfd, 0) != g->app)
        rc = -1;
    for (int i = 0; i < g->nsegs; i++)
        if (mmap(g->segs[i].app, g->segs[i].bytes, prot, MAP_PRIVATE | MAP_FIXED, g->memfd,
                 (off_t)(g->segs[i].first << g->page_shift)) != g->segs[i].app)
            rc = -1;
    return rc;
}

void dsm__vm_fini(void)
{
    struct dsm_global *g = &dsm__g;
    size_t size = g->npages << g->page_shift;
    if (g->keep_mapped) {
        /* The process goes on using these addresses until it exits (the
         * shim: a stack, the program's globals and heap).  Leave the
         * memory where it is, readable and writable; copies keep the
         * contents they had. */
        (void)size;
        dsm__vm_open_all();
        return;
    }
    if (g->app) munmap(g->app, size);
    if (g->sys) munmap(g->sys, size);
    if (g->twins) munmap(g->twins, size);
    if (backed) munmap(backed, g->npages);
    if (g->memfd >= 0) close(g->memfd);
    backed = NULL;
    g->app = g->sys = g->twins = NULL;
    g->memfd = -1;
}

static void protect_run(size_t first, size_t count, int prot)
{
    size_t len = count << dsm__g.page_shift;
    if (dsm__page_in_segment(first)) {
        /* The segment's last page may be cut short. */
        const struct dsm_segment *sg = dsm__segment_of_page(first);
        size_t off = (first - sg->first) << dsm__g.page_shift;
        if (len > sg->bytes - off)
            len = sg->bytes - off;
    }
    DSM_STAT_ADD(mprotect_calls, 1);
    if (prot != PROT_NONE && dsm__g.exec_pages)
        prot |= PROT_EXEC;
    if (mprotect(dsm__app_page(first), len, prot) == 0)
        return;
    if (errno == ENOMEM)
        dsm__fatal("mprotect failed with ENOMEM: this process reached the kernel's "
                   "limit of memory map entries (vm.max_map_count, see "
                   "/proc/sys/vm/max_map_count). Remedies: a larger DSM_PAGE_SIZE "
                   "(fewer, larger pages), a smaller working set, or raise the limit "
                   "as root: sysctl -w vm.max_map_count=1048576");
    dsm__fatal("mprotect(page %zu, %zu pages, prot %d) failed: %s",
               first, count, prot, strerror(errno));
}

void dsm__vm_protect(size_t first, size_t count, int prot)
{
    struct dsm_global *g = &dsm__g;
    while (count) {
        /* Split the run where it enters or leaves an attached segment. */
        size_t n = count, s0 = g->segs_first;
        if (g->segs_npages) {
            if (first < s0 && first + n > s0) {
                n = s0 - first;
            } else if (dsm__page_in_segment(first)) {
                const struct dsm_segment *sg = dsm__segment_of_page(first);
                if (first + n > sg->first + sg->npages)
                    n = sg->first + sg->npages - first;
            }
        }
        protect_run(first, n, prot);
        first += n;
        count -= n;
    }
}

void dsm__vm_release(size_t first, size_t count)
{
    off_t off = (off_t)(first << dsm__g.page_shift);
    off_t len = (off_t)(count << dsm__g.page_shift);
    /* Give the memory back: freed pages read as zero when reallocated. */
    if (backed)
        memset(backed + first, 0, count);
    if (fallocate(dsm__g.memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) != 0)
        memset(dsm__sys_page(first), 0, (size_t)len);
    madvise(dsm__twin_page(first), (size_t)len, MADV_DONTNEED);
}

void dsm__pb_add(struct dsm_protect_batch *b, size_t page, int prot)
{
    if (b->count && b->prot == prot && b->first + b->count == page) {
        b->count++;
        return;
    }
    dsm__pb_flush(b);
    b->first = page;
    b->count = 1;
    b->prot = prot;
}

void dsm__pb_flush(struct dsm_protect_batch *b)
{
    if (b->count)
        dsm__vm_protect(b->first, b->count, b->prot);
    b->count = 0;
}
