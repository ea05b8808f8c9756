/*
 * page_table.c - per-page state, striped page locks, the lists of written
 * pages, and waiting for page installs.
 *
 * Threads: application threads (fault handler, barrier, locks) and the
 * communication thread.  A page's state, flags and copyset change only under
 * its page lock.  Page locks are never held while touching the application
 * view, so a fault cannot interrupt a holder.  The written-page lists have
 * their own mutex, taken inside a page lock, never the other way round.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dsm_internal.h"

#define DSM_PAGE_LOCKS 1024   /* stripes: enough to make collisions rare */

static pthread_mutex_t page_locks[DSM_PAGE_LOCKS];
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *marked, *epoch_list;   /* page ids, npages capacity each */
static size_t nmarked, nepoch;
/* The epoch whose writes epoch_list collects: dsm__g.epoch, except from a
 * barrier's entry (dsm__pt_take_epoch) to its end, when it is already the
 * next one.  Under list_lock. */
static uint32_t list_epoch;
/* A page is on epoch_list when its `listed` equals this (never 0). */
static uint32_t list_gen = 1;
/* Pages this node learned of from lock grants since the last barrier (written
 * by others): each later lock release passes them on, so that a chain of
 * locks orders writes as shared memory would (A writes x and releases L1; B
 * acquires L1, then releases L2; C acquires L2 and must see x).  learned_at
 * marks the listed ones.  Under list_lock. */
static uint32_t *learned_list;
static unsigned char *learned_at;
static size_t nlearned;
/* dsm_flush's sets (flush.c): a list of pages and a byte map of the
 * listed ones, npages each, changed under the set's own mutex (never held
 * while taking another lock); the count is also read without it, so that
 * a flush with nothing to take takes no lock and allocates nothing. */
struct page_set {
    pthread_mutex_t mu;
    uint32_t *list;
    unsigned char *at;
    size_t n;
};
static struct page_set announce = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0 };
static struct page_set pending = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0 };

static int set_map(struct page_set *s, size_t npages)
{
    s->list = mmap(NULL, npages * 4, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    s->at = mmap(NULL, npages, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    s->n = 0;
    return s->list == MAP_FAILED || s->at == MAP_FAILED ? -1 : 0;
}

static void set_unmap(struct page_set *s, size_t npages)
{
    if (s->list && s->list != MAP_FAILED) munmap(s->list, npages * 4);
    if (s->at && s->at != MAP_FAILED) munmap(s->at, npages);
    s->list = NULL;
    s->at = NULL;
}

static void set_add(struct page_set *s, const uint32_t *pages, size_t n)
{
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < n; i++)
        if (pages[i] < dsm__g.npages && !s->at[pages[i]]) {
            s->at[pages[i]] = 1;
            s->list[s->n] = pages[i];
            __atomic_store_n(&s->n, s->n + 1, __ATOMIC_RELEASE);
        }
    pthread_mutex_unlock(&s->mu);
}

/* A malloc'd copy of list[0..n), with room for `room` entries (at least
 * one), taken under the lock of the list it copies. */
static uint32_t *copy_list(const uint32_t *list, size_t n, size_t room)
{
    uint32_t *out = malloc((room ? room : 1) * sizeof *out);
    if (!out)
        dsm__fatal("out of private memory for a list of %zu pages", room);
    memcpy(out, list, n * sizeof *out);
    return out;
}

static size_t set_take(struct page_set *s, uint32_t **out)
{
    *out = NULL;
    if (__atomic_load_n(&s->n, __ATOMIC_ACQUIRE) == 0)
        return 0;               /* a flush that polls a flag: no lock, no malloc */
    pthread_mutex_lock(&s->mu);
    size_t n = s->n;
    *out = copy_list(s->list, n, n);
    for (size_t i = 0; i < n; i++)
        s->at[s->list[i]] = 0;
    __atomic_store_n(&s->n, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&s->mu);
    return n;
}

static void set_clear(struct page_set *s)
{
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->n; i++)
        s->at[s->list[i]] = 0;
    __atomic_store_n(&s->n, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&s->mu);
}

void dsm__pt_add_announce(const uint32_t *pages, size_t n) { set_add(&announce, pages, n); }
size_t dsm__pt_take_announce(uint32_t **out) { return set_take(&announce, out); }
void dsm__pt_add_pending(const uint32_t *pages, size_t n) { set_add(&pending, pages, n); }
size_t dsm__pt_take_pending(uint32_t **out) { return set_take(&pending, out); }

int dsm__pt_init(void)
{
    struct dsm_global *g = &dsm__g;
    size_t bytes = g->npages * sizeof(struct dsm_page);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -DSM_ENOMEM;
    g->pages = p;                 /* zero: every page UNALLOC */
    marked = mmap(NULL, g->npages * 4, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    epoch_list = mmap(NULL, g->npages * 4, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    learned_list = mmap(NULL, g->npages * 4, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    learned_at = mmap(NULL, g->npages, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (marked == MAP_FAILED || epoch_list == MAP_FAILED || learned_list == MAP_FAILED ||
        learned_at == MAP_FAILED || set_map(&announce, g->npages) != 0 ||
        set_map(&pending, g->npages) != 0)
        return -DSM_ENOMEM;
    for (int i = 0; i < DSM_PAGE_LOCKS; i++)
        pthread_mutex_init(&page_locks[i], NULL);
    nmarked = nepoch = nlearned = 0;
    list_epoch = 0;
    list_gen = 1;
    return 0;
}

void dsm__pt_fini(void)
{
    struct dsm_global *g = &dsm__g;
    if (g->pages)
        munmap(g->pages, g->npages * sizeof(struct dsm_page));
    if (marked) munmap(marked, g->npages * 4);
    if (epoch_list) munmap(epoch_list, g->npages * 4);
    if (learned_list) munmap(learned_list, g->npages * 4);
    if (learned_at) munmap(learned_at, g->npages);
    set_unmap(&announce, g->npages);
    set_unmap(&pending, g->npages);
    g->pages = NULL;
    marked = epoch_list = learned_list = NULL;
    learned_at = NULL;
}

void dsm__page_lock(size_t p)   { pthread_mutex_lock(&page_locks[p % DSM_PAGE_LOCKS]); }
void dsm__page_unlock(size_t p) { pthread_mutex_unlock(&page_locks[p % DSM_PAGE_LOCKS]); }

void dsm__pt_mark_written(size_t p)
{
    struct dsm_page *pg = &dsm__g.pages[p];
    if ((pg->flags & DSM_PF_MARKED) &&
        __atomic_load_n(&pg->listed, __ATOMIC_RELAXED) ==
            __atomic_load_n(&list_gen, __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&list_lock);
    if (!(pg->flags & DSM_PF_MARKED)) {
        pg->flags |= DSM_PF_MARKED;
        marked[nmarked++] = (uint32_t)p;
    }
    if (pg->listed != list_gen) {
        __atomic_store_n(&pg->listed, list_gen, __ATOMIC_RELAXED);
        epoch_list[nepoch++] = (uint32_t)p;
    }
    pthread_mutex_unlock(&list_lock);
}

size_t dsm__pt_take_marked(uint32_t **out)
{
    size_t n;
    pthread_mutex_lock(&list_lock);
    n = nmarked;
    *out = copy_list(marked, n, n);
    nmarked = 0;
    pthread_mutex_unlock(&list_lock);
    /* DSM_PF_MARKED is cleared by dsm__flush under each page's lock. */
    return n;
}

size_t dsm__pt_copy_epoch(uint32_t **out)
{
    size_t n;
    pthread_mutex_lock(&list_lock);
    n = nepoch;
    *out = copy_list(epoch_list, n, n);
    pthread_mutex_unlock(&list_lock);
    return n;
}

/* A barrier's entry, after its flush: its notices are the pages written so
 * far.  A thread of this node that takes no part in the barrier
 * (dsm__barrier_bystanders) may write on while it runs; those writes belong
 * to the next interval, so they go on a new list (a new generation), which
 * the barrier's end leaves alone.  A page such a thread wrote after the
 * flush is still marked (its diff not sent yet): it is on both.  The pages'
 * flags belong to their page locks, which cannot be taken here: the
 * generation number is what says "listed". */
size_t dsm__pt_take_epoch(uint32_t **out)
{
    size_t n, keep = 0;
    pthread_mutex_lock(&list_lock);
    n = nepoch;
    *out = copy_list(epoch_list, n, n);
    __atomic_store_n(&list_gen, list_gen + 1 ? list_gen + 1 : 1, __ATOMIC_RELAXED);
    for (size_t i = 0; i < n; i++) {
        struct dsm_page *pg = &dsm__g.pages[epoch_list[i]];
        if (__atomic_load_n(&pg->flags, __ATOMIC_RELAXED) & DSM_PF_MARKED) {
            __atomic_store_n(&pg->listed, list_gen, __ATOMIC_RELAXED);
            epoch_list[keep++] = epoch_list[i];
        }
    }
    nepoch = keep;
    /* What lock grants taught this node so far is covered by this barrier
     * too; what such a thread learns during it is the next interval's. */
    for (size_t i = 0; i < nlearned; i++)
        learned_at[learned_list[i]] = 0;
    nlearned = 0;
    list_epoch = __atomic_load_n(&dsm__g.epoch, __ATOMIC_ACQUIRE) + 1;
    pthread_mutex_unlock(&list_lock);
    return n;
}

size_t dsm__pt_copy_release(uint32_t **out, uint32_t *epoch)
{
    size_t n;
    pthread_mutex_lock(&list_lock);
    *epoch = list_epoch;
    n = nepoch + nlearned;
    *out = copy_list(epoch_list, nepoch, n);
    memcpy(*out + nepoch, learned_list, nlearned * sizeof **out);
    pthread_mutex_unlock(&list_lock);
    return n;
}

void dsm__pt_note_learned(const uint32_t *pages, size_t n)
{
    pthread_mutex_lock(&list_lock);
    for (size_t i = 0; i < n; i++)
        if (!learned_at[pages[i]]) {
            learned_at[pages[i]] = 1;
            learned_list[nlearned++] = pages[i];
        }
    pthread_mutex_unlock(&list_lock);
}

void dsm__pt_clear_epoch(void)
{
    /* Barrier only.  dsm__pt_take_epoch emptied the written and learned
     * lists at the entry: what they hold now came during the barrier, for
     * the next one.  dsm_flush's sets: every page in them was written in
     * the interval that ends here, so the barrier's notices have dropped
     * the stale copies already.  A notice of a flush after this barrier
     * waits for the next epoch (protocol.c). */
    set_clear(&announce);
    set_clear(&pending);
}

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

void dsm__pt_install_wait(uint32_t seen)
{
    /* The install counter moves at every page install; a waiter rechecks its
     * page after any of them.  The waiter count lets the installer skip the
     * wake system call when nobody waits. */
    __atomic_fetch_add(&dsm__g.install_waiters, 1, __ATOMIC_SEQ_CST);
    /* Counted as a sleeping waiter, so that the communication thread keeps
     * polling for the page (a prefetch's page has no other waiter). */
    __atomic_fetch_add(&dsm__waiting, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&dsm__sleepers, 1, __ATOMIC_SEQ_CST);
    dsm__comm_wake();
    while (__atomic_load_n(&dsm__g.installs, __ATOMIC_ACQUIRE) == seen)
        futex(&dsm__g.installs, FUTEX_WAIT_PRIVATE, seen, NULL);
    __atomic_fetch_sub(&dsm__sleepers, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_sub(&dsm__waiting, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_sub(&dsm__g.install_waiters, 1, __ATOMIC_SEQ_CST);
}

void dsm__pt_install_done(void)
{
    __atomic_fetch_add(&dsm__g.installs, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&dsm__g.install_waiters, __ATOMIC_SEQ_CST))
        futex(&dsm__g.installs, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}
