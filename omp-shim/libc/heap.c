/*
 * heap.c - malloc and friends for the program, from the DSM.
 *
 * The shim defines malloc, calloc, realloc, free, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc and malloc_usable_size.  A call
 * from the program's code (its return address is in the executable's text
 * or in a library the executable needs, applibs.c) after start-up gets
 * memory in the DSM region, so that every rank sees what the program
 * allocates; a call from the runtime (the C library, MPI, the shim) gets the
 * C library's private heap.  free and realloc decide by the address.
 * Before main, while the executable's constructors run, the program's calls
 * get blocks of the pre-main arena instead (premain_heap.c), which start-up
 * shares too; such a block is never given to the C library's free or
 * realloc, before or after start-up.
 *
 * Each rank has its own arena in the region, homed on it (and migrating to
 * the first node that alone writes a page, like the globals), so a thread
 * allocates without talking to other ranks.  Arena bookkeeping is private:
 * small blocks come from size classes carved from 256 KiB chunks, big ones
 * are whole pages from a first-fit range allocator.  Every block starts with
 * a 32-byte header in the DSM (size, start of the underlying run, class,
 * owner rank), read by realloc and malloc_usable_size on any rank.  A block
 * freed on a rank other than its owner's is not reused (only counted).
 *
 * Threads: any; one mutex per rank.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

#define HDR 32
#define MAGIC 0x5348494du          /* "SHIM" */
#define CHUNK ((size_t)256 << 10)
#define NCLASS 18
static const uint32_t class_size[NCLASS] = {
    16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072,
    4096, 6144, 8192
};
#define LARGE_CLASS 0xffff

struct hdr {
    uint64_t size;              /* usable bytes */
    uint64_t run;               /* large: first byte of the page run */
    uint32_t magic;
    uint16_t cls;               /* size class, or LARGE_CLASS */
    uint16_t rank;
    uint64_t pad;
};

struct freelist { void **v; size_t n, cap; };

static struct {
    int ready;
    unsigned char *base;        /* this rank's arena */
    size_t size;
    struct dsm_ranges pages;    /* in coherence pages of the arena */
    unsigned char *cur, *end;   /* small-block chunk being carved */
    struct freelist fl[NCLASS];
    uint64_t foreign_frees;
    pthread_mutex_t mu;
    unsigned char *all_lo, *all_hi;   /* every rank's arena */
} H = { .mu = PTHREAD_MUTEX_INITIALIZER };

void shim_heap_init(void)
{
    size_t ps = dsm_rt_page_size();
    size_t avail = dsm__alloc_largest_free();
    size_t per = (avail / (size_t)shim.nodes) / ps * ps;
    if (per < 64 * ps)
        dsm__fatal("the shared region has %zu bytes left for the program's heap; "
                   "raise DSM_HEAP_SIZE", avail);
    per -= ps;                 /* leave room: allocations round up */
    for (int r = 0; r < shim.nodes; r++) {
        unsigned char *a = dsm_malloc_home(per, DSM_HOME_NODE, r);
        if (!a)
            dsm__fatal("cannot allocate the heap arena of rank %d (%zu bytes); "
                       "raise DSM_HEAP_SIZE", r, per);
        dsm__set_migrate(a, per);
        if (r == 0)
            H.all_lo = a;
        H.all_hi = a + per;
        if (r == shim.rank) {
            H.base = a;
            H.size = per;
        }
    }
    if (dsm__ranges_init(&H.pages, H.size / ps) != 0)
        dsm__fatal("out of private memory for the heap's bookkeeping");
    H.ready = 1;
}

int shim_in_heap(const void *p)
{
    return H.ready && (const unsigned char *)p >= H.all_lo &&
           (const unsigned char *)p < H.all_hi;
}

size_t shim_heap_block_size(const void *p)
{
    if (!shim.active || !shim_in_heap(p) || (uintptr_t)p % 16)
        return 0;
    /* The header before p is inside the chunk or run of p's block when p
     * is in an allocated block, whether or not p is the block's start. */
    struct hdr h;
    memcpy(&h, (const unsigned char *)p - HDR, sizeof h);
    return h.magic == MAGIC ? (size_t)h.size : 0;
}

static int class_of(size_t n)
{
    for (int c = 0; c < NCLASS; c++)
        if (n <= class_size[c])
            return c;
    return -1;
}

static void *run_alloc(size_t bytes)
{
    size_t ps = dsm_rt_page_size(), start;
    if (dsm__ranges_alloc(&H.pages, (bytes + ps - 1) / ps, &start) != 0)
        return NULL;
    return H.base + start * ps;
}

static void run_free(void *p)
{
    size_t count;
    dsm__ranges_free(&H.pages, (size_t)((unsigned char *)p - H.base) / dsm_rt_page_size(), &count);
}

static void put_hdr(void *user, uint64_t size, void *run, uint16_t cls)
{
    struct hdr h = { size, (uint64_t)(uintptr_t)run, MAGIC, cls, (uint16_t)shim.rank, 0 };
    memcpy((unsigned char *)user - HDR, &h, sizeof h);
}

static struct hdr *hdr_of(void *p)
{
    struct hdr *h = (struct hdr *)(void *)((unsigned char *)p - HDR);
    if (h->magic != MAGIC)
        dsm__fatal("free/realloc(%p): not a block from the shared heap, or its header "
                   "was overwritten (a write before the start of an allocation?)", p);
    return h;
}

void *shim_dsm_malloc(size_t size, size_t align)
{
    void *user = NULL;
    if (!H.ready || !shim.active) {
        if (__atomic_load_n(&shim_premain_open, __ATOMIC_RELAXED))
            return shim_premain_alloc(size, align);
        return align > 16 ? __libc_memalign(align, size) : __libc_malloc(size);
    }
    if (align < 16)
        align = 16;
    if (align & (align - 1))
        return NULL;
    if (size > ((size_t)1 << 46))
        return NULL;
    int c = align == 16 ? class_of(size ? size : 1) : -1;
    pthread_mutex_lock(&H.mu);
    if (c >= 0) {
        struct freelist *f = &H.fl[c];
        if (f->n) {
            user = f->v[--f->n];
        } else {
            size_t need = HDR + class_size[c];
            if (!H.cur || (size_t)(H.end - H.cur) < need) {
                H.cur = run_alloc(CHUNK);
                H.end = H.cur ? H.cur + CHUNK : NULL;
            }
            if (H.cur) {
                user = H.cur + HDR;
                H.cur += need;
                put_hdr(user, class_size[c], NULL, (uint16_t)c);
            }
        }
    } else {
        unsigned char *run = run_alloc(size + HDR + align);
        if (run) {
            user = (void *)(((uintptr_t)run + HDR + align - 1) & ~(uintptr_t)(align - 1));
            put_hdr(user, size, run, LARGE_CLASS);
        }
    }
    pthread_mutex_unlock(&H.mu);
    if (!user)
        errno = ENOMEM;
    return user;
}

void shim_dsm_free(void *p)
{
    if (!p)
        return;
    if (!shim_in_heap(p)) {
        if (shim_premain_contains(p))
            shim_premain_free(p);
        else
            __libc_free(p);
        return;
    }
    if (!shim.active)
        return;                /* after the end: the process is exiting */
    struct hdr *h = hdr_of(p);
    pthread_mutex_lock(&H.mu);
    if (h->rank != shim.rank) {
        H.foreign_frees++;
    } else if (h->cls == LARGE_CLASS) {
        h->magic = 0;
        run_free((void *)(uintptr_t)h->run);
    } else if (h->cls < NCLASS) {
        struct freelist *f = &H.fl[h->cls];
        if (f->n == f->cap) {
            size_t nc = f->cap ? f->cap * 2 : 256;
            void **v = __libc_realloc(f->v, nc * sizeof *v);
            if (!v) {
                pthread_mutex_unlock(&H.mu);
                return;        /* keep going: the block is leaked */
            }
            f->v = v;
            f->cap = nc;
        }
        f->v[f->n++] = p;
    }
    pthread_mutex_unlock(&H.mu);
}

/* ---- the interposed functions ---- */

static inline int from_program(const void *ret)
{
    return shim_alloc_is_program(ret);
}

SHIM_EXPORT void *malloc(size_t size)
{
    if (from_program(__builtin_return_address(0)))
        return shim_dsm_malloc(size, 16);
    return __libc_malloc(size);
}

SHIM_EXPORT void free(void *p)
{
    shim_dsm_free(p);
}

SHIM_EXPORT void *calloc(size_t n, size_t size)
{
    if (from_program(__builtin_return_address(0))) {
        if (size && n > (size_t)-1 / size) {
            errno = ENOMEM;
            return NULL;
        }
        void *p = shim_dsm_malloc(n * size, 16);
        if (p)
            memset(p, 0, n * size);
        return p;
    }
    return __libc_calloc(n, size);
}

void *shim_realloc_as(void *p, size_t size, int program)
{
    if (!p)
        return program ? shim_dsm_malloc(size, 16) : __libc_malloc(size);
    if (!shim_in_heap(p)) {
        if (!shim_premain_contains(p))
            return __libc_realloc(p, size);
        /* A block from before main: in place if it is the arena's last
         * while the phase lasts; else into a new block of the program's
         * heap (the arena's while the phase lasts, the shared one after
         * start-up, the C library's after the end), whoever calls: the
         * block was shared. */
        size_t old = shim_premain_size(p);
        if (size <= old && size)
            return p;
        void *q = shim_premain_resize(p, size);
        if (q)
            return q;
        q = shim_dsm_malloc(size, 16);
        if (!q)
            return NULL;
        memcpy(q, p, old < size ? old : size);
        shim_premain_free(p);
        return q;
    }
    struct hdr *h = hdr_of(p);
    size_t old = h->size;
    if (!shim.active) {
        /* After the end (exit handlers): the region is still mapped, and
         * this rank's copy is all there is; move the block out of it. */
        void *q = __libc_malloc(size ? size : 1);
        if (q)
            memcpy(q, p, old < size ? old : size);
        return q;
    }
    if (size <= old && h->cls != LARGE_CLASS)
        return p;
    void *q = shim_dsm_malloc(size, 16);
    if (!q)
        return NULL;
    memcpy(q, p, old < size ? old : size);
    shim_dsm_free(p);
    return q;
}

SHIM_EXPORT void *realloc(void *p, size_t size)
{
    return shim_realloc_as(p, size, from_program(__builtin_return_address(0)));
}

SHIM_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
    if (size && n > (size_t)-1 / size) {
        errno = ENOMEM;
        return NULL;
    }
    return shim_realloc_as(p, n * size, from_program(__builtin_return_address(0)));
}

SHIM_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = from_program(__builtin_return_address(0)) ? shim_dsm_malloc(size, align)
                                                        : __libc_memalign(align, size);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

SHIM_EXPORT void *aligned_alloc(size_t align, size_t size)
{
    if (from_program(__builtin_return_address(0)))
        return shim_dsm_malloc(size, align);
    return __libc_memalign(align, size);
}

SHIM_EXPORT void *memalign(size_t align, size_t size)
{
    if (from_program(__builtin_return_address(0)))
        return shim_dsm_malloc(size, align);
    return __libc_memalign(align, size);
}

SHIM_EXPORT void *valloc(size_t size)
{
    if (from_program(__builtin_return_address(0)))
        return shim_dsm_malloc(size, 4096);
    return __libc_memalign(4096, size);
}

SHIM_EXPORT void *pvalloc(size_t size)
{
    size = (size + 4095) & ~(size_t)4095;
    if (from_program(__builtin_return_address(0)))
        return shim_dsm_malloc(size, 4096);
    return __libc_memalign(4096, size);
}


SHIM_EXPORT size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    if (shim_in_heap(p))
        return hdr_of(p)->size;
    if (shim_premain_contains(p))
        return shim_premain_size(p);
    /* glibc exports its own under this name only; ask it through dlsym. */
    SHIM_REAL(malloc_usable_size);
    return real_malloc_usable_size(p);
}
