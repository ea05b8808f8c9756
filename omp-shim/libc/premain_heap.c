/*
 * premain_heap.c - the memory the program's own code allocates before main.
 *
 * The executable's constructors (C++ global objects, file-scope
 * initialisers, __attribute__((constructor)) functions) run inside the C
 * library's __libc_start_main, before the shim's start-up has a shared
 * region to allocate from.  What they allocate (a global std::vector's
 * elements, a std::map's nodes) would be the C library's private memory on
 * each rank, at addresses that differ between ranks for large blocks
 * (mmap), while the globals that point at it are shared.
 *
 * So __libc_start_main (start.c) opens a "pre-main" phase before it calls
 * the C library's: every rank reserves the same range of address space
 * (PREMAIN_AT, OMPSHIM_PREMAIN_HEAP bytes, unbacked until written), and the
 * program's calls of malloc and friends (heap.c, libc_alloc.c: the same
 * test of the return address as after start-up, applibs.c) take blocks from
 * it with a bump pointer.  Every rank runs the same constructors on the same
 * input, with address randomisation off, so a deterministic allocator hands
 * out the same addresses on every rank, and the pointers the constructors
 * keep in global variables agree.  The phase closes when the C library calls
 * the shim's main (the constructors are done); the used part is kept and the
 * rest of the range given back.  At start-up, before the heap arenas take the
 * region, the ranks check that they allocated alike (the same used size,
 * number of blocks and a sum over the blocks' offsets and sizes: not only
 * the largest size, since each rank's copy of the globals keeps its own
 * constructors' pointers, which must point where rank 0's blocks are; a
 * difference stops the job rather than give wrong answers) and the
 * used part becomes a DSM segment homed at rank 0, with rank 0's contents
 * only (dsm__segments_add: the other ranks drop theirs and fetch rank 0's
 * pages on first touch), its pages moving to their first lone writer like
 * the globals'.  So a rank that reads such memory sees rank 0's bytes, also
 * where a constructor read something rank-dependent.
 *
 * A block starts after a 32-byte header (its size, where the bump pointer
 * was before it and after it).  A freed block is given back only when it is
 * the last one (a temporary string a constructor frees at once), and realloc
 * grows the last block in place; both are as deterministic as the rest.
 * Otherwise a block is never reused, before or after start-up: after
 * start-up free ignores it, realloc copies it into the shared heap, and
 * malloc_usable_size reads its header.  The range is never unmapped while
 * blocks of it may be in use.
 *
 * Not covered: what the libraries' own constructors allocate (the loader
 * runs them before __libc_start_main), what code other than the program's
 * allocates (the C library, MPI), and programs the shim stays out of
 * (start.c's wanted()).  A process that forks in a constructor keeps a
 * private copy of the range in the child, as of all its memory.
 *
 * Threads: shim_premain_begin and shim_premain_end on the main thread, before
 * and after the constructors; allocation, free and realloc on any thread
 * (compare-and-swap on the bump pointer, no lock, so that a fork in another
 * thread cannot leave a lock held); shim_premain_check and
 * shim_premain_attach collectively on the main thread of every rank at
 * start-up.  Threads a constructor starts must not allocate while the phase
 * closes: their allocation order would differ between ranks anyway.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* 64 TiB: above the DSM region (DSM_BASE, 32 TiB, and DSM_HEAP_SIZE bytes;
 * 8 GiB by default under the shim), below where the kernel puts a
 * position-independent executable and its brk heap without randomisation
 * (85 TiB) and the dlopen arena (96 TiB, dlarena.c).  Only the used part is
 * still mapped when dsm_init maps the region; should DSM_BASE and
 * DSM_HEAP_SIZE reach it, dsm_init stops with its message about DSM_BASE. */
#define PREMAIN_AT      ((uintptr_t)0x400000000000)
#define HDR 32
#define MAGIC 0x50524d48u                      /* "PRMH" */

struct hdr {
    uint64_t size;              /* usable bytes */
    uint64_t prev, end;         /* the bump offset before and after the block */
    uint32_t magic, pad;
};
_Static_assert(sizeof(struct hdr) == HDR, "the header keeps blocks 16-byte aligned");

/* Set and cleared by the main thread, before and after the constructors it
 * runs.  Read relaxed everywhere: it orders nothing; the arena's fields are
 * written before it is set by the same thread, and a thread a constructor
 * starts is created after that (pthread_create orders it). */
int shim_premain_open;

static struct {
    unsigned char *base;        /* PREMAIN_AT, or NULL: not reserved */
    size_t size;                /* OMPSHIM_PREMAIN_HEAP */
    const char *why;            /* the reservation failed: strerror */
    /* The bump offset, the number of blocks and the sum of mix(offset,
     * size) over them: relaxed atomics, read once the phase is closed
     * (after the constructors, on the thread that ran them). */
    uint64_t used, count, sum;
    size_t kept;                /* after the phase: bytes still mapped */
} P;

static uint64_t mix(uint64_t off, uint64_t size)
{
    uint64_t h = off * 0x9e3779b97f4a7c15u ^ (size + 0x632be59bd9b4e019u);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9u;
    return h ^ (h >> 32);
}

void shim_premain_begin(void)
{
    size_t size = shim_setting_premain_heap();    /* settings.c: 64G by default */
    if (size == 0)
        return;
    size = (size + 0xffff) & ~(size_t)0xffff;
    /* Unbacked until written, and counted against no commit limit: only
     * what the constructors use costs memory. */
    void *p = mmap((void *)PREMAIN_AT, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == (void *)PREMAIN_AT) {
        P.base = p;
        P.size = size;
    } else {
        /* Not fatal yet: a program that allocates nothing before main
         * does not need it.  A kernel without MAP_FIXED_NOREPLACE takes
         * the address as a hint. */
        P.why = p == MAP_FAILED ? strerror(errno) : "the kernel chose another address";
        if (p != MAP_FAILED)
            munmap(p, size);
        P.size = size;
    }
    __atomic_store_n(&shim_premain_open, 1, __ATOMIC_RELAXED);
}

void *shim_premain_alloc(size_t size, size_t align)
{
    if (align < 16)
        align = 16;
    if (align & (align - 1)) {
        errno = EINVAL;
        return NULL;
    }
    if (!P.base)
        dsm__fatal("cannot reserve %zu bytes at %#lx for the memory the program allocates "
                   "before main (%s): set OMPSHIM_PREMAIN_HEAP to less, or to 0 to keep "
                   "that memory private to each rank", P.size, (unsigned long)PREMAIN_AT,
                   P.why);
    /* Relaxed: the compare-and-swap only hands out disjoint ranges; the
     * header is written after it by the thread that got the block, and
     * other threads see the block through the program's own
     * synchronisation. */
    uint64_t old = __atomic_load_n(&P.used, __ATOMIC_RELAXED), user, end;
    do {
        if (size > P.size || align > P.size)
            goto full;
        user = (old + HDR + align - 1) & ~(uint64_t)(align - 1);
        end = (user + size + 15) & ~(uint64_t)15;
        if (end > P.size)
            goto full;
    } while (!__atomic_compare_exchange_n(&P.used, &old, end, 1, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    struct hdr h = { size, old, end, MAGIC, 0 };
    memcpy(P.base + user - HDR, &h, sizeof h);
    __atomic_fetch_add(&P.count, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&P.sum, mix(user, size), __ATOMIC_RELAXED);
    return P.base + user;
full:
    dsm__fatal("the program's code allocated more than OMPSHIM_PREMAIN_HEAP=%zu bytes "
               "before main (%zu used, %zu more asked for): raise OMPSHIM_PREMAIN_HEAP "
               "(address space, at most 16T), or set it to 0 to keep that memory private "
               "to each rank", P.size, (size_t)old, size);
}

int shim_premain_contains(const void *p)
{
    /* A block lies below used from its allocation on; after the phase,
     * used no longer changes. */
    return P.base && (uintptr_t)p - (uintptr_t)P.base < __atomic_load_n(&P.used, __ATOMIC_RELAXED);
}

static struct hdr *hdr_of(const void *p)
{
    struct hdr *h = (struct hdr *)(void *)((unsigned char *)p - HDR);
    if (h->magic != MAGIC)
        dsm__fatal("free/realloc(%p): not a block the program allocated before main, or "
                   "its header was overwritten (a write before the start of an "
                   "allocation?)", p);
    return h;
}

size_t shim_premain_size(const void *p)
{
    return hdr_of(p)->size;
}

/* While the phase is open: the last block goes back to the bump pointer.
 * A block is then taken out of the count and the sum, as if never made,
 * and the next block reuses its memory (which is then not all zero: calloc
 * clears what it gets). */
void shim_premain_free(void *p)
{
    if (!__atomic_load_n(&shim_premain_open, __ATOMIC_RELAXED))
        return;                 /* shared now: never reused */
    struct hdr *h = hdr_of(p);
    uint64_t end = h->end, prev = h->prev, size = h->size;
    uint64_t user = (uint64_t)((unsigned char *)p - P.base);
    if (__atomic_compare_exchange_n(&P.used, &end, prev, 0, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED)) {
        __atomic_fetch_sub(&P.count, 1, __ATOMIC_RELAXED);
        __atomic_fetch_sub(&P.sum, mix(user, size), __ATOMIC_RELAXED);
    }
}

/* While the phase is open, the last block grows or shrinks in place; NULL
 * if p is not the last block (the caller copies it). */
void *shim_premain_resize(void *p, size_t size)
{
    struct hdr *h = hdr_of(p);
    uint64_t user = (uint64_t)((unsigned char *)p - P.base), end = h->end;
    if (!__atomic_load_n(&shim_premain_open, __ATOMIC_RELAXED) || size > P.size - user)
        return NULL;
    uint64_t nend = (user + size + 15) & ~(uint64_t)15;
    if (!__atomic_compare_exchange_n(&P.used, &end, nend, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED))
        return NULL;
    __atomic_fetch_sub(&P.sum, mix(user, h->size), __ATOMIC_RELAXED);
    __atomic_fetch_add(&P.sum, mix(user, size), __ATOMIC_RELAXED);
    h->size = size;
    h->end = nend;
    return p;
}

void shim_premain_end(void)
{
    if (!__atomic_load_n(&shim_premain_open, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&shim_premain_open, 0, __ATOMIC_RELAXED);
    if (!P.base)
        return;
    /* Give back what the constructors did not use, so that nothing mapped
     * later (the DSM region, MPI's memory) can meet it. */
    size_t os = (size_t)sysconf(_SC_PAGESIZE);
    P.kept = ((size_t)__atomic_load_n(&P.used, __ATOMIC_RELAXED) + os - 1) & ~(os - 1);
    if (P.kept < P.size)
        munmap(P.base + P.kept, P.size - P.kept);
}

size_t shim_premain_check(void)
{
    /* Lowest and highest over the ranks of: used, count, sum. */
    uint64_t lo[3] = { P.kept ? P.used : 0, P.kept ? P.count : 0, P.kept ? P.sum : 0 };
    uint64_t hi[3] = { lo[0], lo[1], lo[2] };
    MPI_Allreduce(MPI_IN_PLACE, lo, 3, MPI_UINT64_T, MPI_MIN, dsm_rt_comm());
    MPI_Allreduce(MPI_IN_PLACE, hi, 3, MPI_UINT64_T, MPI_MAX, dsm_rt_comm());
    if (memcmp(lo, hi, sizeof lo))
        dsm__fatal("the program's code allocated differently before main on different "
                   "ranks (from %lu to %lu bytes in from %lu to %lu blocks; here %lu in %lu): "
                   "its constructors depend on something that differs between ranks, so "
                   "the pointers they keep differ too.  Set OMPSHIM_PREMAIN_HEAP=0 to keep "
                   "the memory allocated before main private to each rank (then a parallel "
                   "region must not use it)",
                   (unsigned long)lo[0], (unsigned long)hi[0], (unsigned long)lo[1],
                   (unsigned long)hi[1], (unsigned long)(P.kept ? P.used : 0),
                   (unsigned long)(P.kept ? P.count : 0));
    if (!P.kept)
        return 0;
    size_t ps = dsm_rt_page_size();
    return (P.kept + ps - 1) & ~(ps - 1);
}

void shim_premain_attach(void)
{
    struct dsm_range copy = { 0, P.kept };
    struct dsm_segment_spec spec = { P.base, P.kept, &copy, 1 };
    if (!P.kept)
        return;
    dsm__segments_add(&spec, 1, 0, SHIM_LIB_DATA_ADVICE);
    dsm__set_migrate(P.base, P.kept);
}
