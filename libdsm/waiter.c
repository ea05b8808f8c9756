/*
 * waiter.c - threads waiting for replies.
 *
 * A thread that sends a request takes a waiter slot, sends the slot number
 * with the request, and waits; the reply names the slot, and whoever
 * dispatches it (the communication thread, or a waiting thread driving
 * progress itself under the direct transport) completes it.  A slot may
 * expect several replies (the acks of diffs sent to several homes).
 *
 * Waiting: spin briefly (replies often come within microseconds), then yield
 * the CPU (with more threads than cores the thread that must answer may need
 * ours), then, under DSM_POLL=adaptive, sleep on a futex until completed.
 * Used from the SIGSEGV handler: no malloc, no stdio; the slot mutex is never
 * held while touching shared memory.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <limits.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dsm_internal.h"

#define DSM_MAX_WAITERS 1024

static struct dsm_waiter table[DSM_MAX_WAITERS];
static uint32_t free_ids[DSM_MAX_WAITERS];
static int nfree;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
uint32_t dsm__waiting;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

int dsm__waiter_init(void)
{
    nfree = 0;
    for (int i = DSM_MAX_WAITERS - 1; i >= 0; i--) {
        table[i].in_use = 0;
        free_ids[nfree++] = (uint32_t)i;
    }
    dsm__waiting = 0;
    return 0;
}

uint32_t dsm__waiter_get(int expected, void *ctx)
{
    uint32_t id;
    pthread_mutex_lock(&table_lock);
    if (nfree == 0)
        dsm__fatal("more than %d threads of this process wait for replies at once; "
                   "use fewer application threads per node", DSM_MAX_WAITERS);
    id = free_ids[--nfree];
    pthread_mutex_unlock(&table_lock);
    table[id].ctx = ctx;
    table[id].remaining = expected;
    __atomic_store_n(&table[id].done, expected <= 0, __ATOMIC_RELAXED);
    /* Publishes ctx/remaining before the request carrying id is sent. */
    __atomic_store_n(&table[id].in_use, 1, __ATOMIC_RELEASE);
    return id;
}

struct dsm_waiter *dsm__waiter_at(uint32_t id)
{
    if (id >= DSM_MAX_WAITERS || !__atomic_load_n(&table[id].in_use, __ATOMIC_ACQUIRE))
        return NULL;
    return &table[id];
}

void dsm__waiter_add_expected(uint32_t id, int n)
{
    __atomic_fetch_add(&table[id].remaining, n, __ATOMIC_SEQ_CST);
    if (n > 0)
        __atomic_store_n(&table[id].done, 0, __ATOMIC_RELEASE);
}

void dsm__waiter_complete(struct dsm_waiter *w)
{
    if (__atomic_sub_fetch(&w->remaining, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    /* Release: the reply's effects (installed page, collected notices) are
     * visible to the waiter once it sees done. */
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &w->done, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void dsm__waiter_wait(uint32_t id)
{
    struct dsm_waiter *w = &table[id];
    const int adaptive = dsm__g.cfg.poll == DSM_POLL_ADAPTIVE;
    const int self_progress = dsm__g.ops->waiter_progress;
    unsigned long i;

    if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
        return;
    __atomic_fetch_add(&dsm__waiting, 1, __ATOMIC_SEQ_CST);
    dsm__comm_wake();
    for (i = 0;; i++) {
        if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
            break;
        if (self_progress && dsm__comm_try_progress() > 0) {
            i = 0;
            continue;
        }
        if (i < 256) {
            cpu_relax();
        } else if (!adaptive || i < 256 + 2000) {
            sched_yield();
        } else {
            /* Bounded sleep: under the direct transport this thread also
             * polls, so it must not sleep for long. */
            struct timespec ts = { 0, self_progress ? 100000 : 2000000 };
            syscall(SYS_futex, &w->done, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
        }
    }
    __atomic_fetch_sub(&dsm__waiting, 1, __ATOMIC_SEQ_CST);
}

void dsm__waiter_put(uint32_t id)
{
    __atomic_store_n(&table[id].in_use, 0, __ATOMIC_RELEASE);
    table[id].ctx = NULL;
    pthread_mutex_lock(&table_lock);
    free_ids[nfree++] = id;
    pthread_mutex_unlock(&table_lock);
}
