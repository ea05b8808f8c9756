/*
 * waiter.c - threads waiting for replies.
 *
 * A thread that sends a request takes a waiter slot, sends the slot number
 * with the request, and waits; the reply names the slot, and whoever
 * dispatches it (the communication thread, or a waiting thread driving
 * progress itself under the direct transport) completes it.  A slot may
 * expect several replies (the acks of diffs sent to several homes).
 *
 * Waiting depends on who can make progress.  Under the queue transport only
 * the communication thread can: the waiter sleeps on a futex at once,
 * leaving the core to the communication threads.  Under the direct
 * transport the waiter polls MPI itself; under DSM_POLL=adaptive it yields
 * the CPU between empty polls after a short spin, and after
 * DSM_POLL_WINDOW_NS without an event it sleeps and lets the communication
 * thread poll.  DSM_POLL=spin never sleeps.
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

static struct dsm_waiter table[DSM_MAX_WAITERS];
__thread const char *dsm__wait_what;
static uint32_t free_ids[DSM_MAX_WAITERS];
static int nfree;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
uint32_t dsm__waiting;
uint32_t dsm__sleepers;
uint32_t dsm__polling_long;

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
    dsm__polling_long = 0;
    return 0;
}

uint32_t dsm__waiter_get(enum dsm_wait_kind kind, int expected, void *ctx)
{
    uint32_t id;
    pthread_mutex_lock(&table_lock);
    if (nfree == 0)
        dsm__fatal("more than %d threads of this process wait for replies at once; "
                   "use fewer application threads per node", DSM_MAX_WAITERS);
    id = free_ids[--nfree];
    pthread_mutex_unlock(&table_lock);
    table[id].ctx = ctx;
    table[id].kind = kind;
    table[id].remaining = expected;
    table[id].sleeping = 0;
    table[id].peer = -1;
    table[id].obj = 0;
    table[id].what = dsm__wait_what;
    table[id].t0 = dsm__now_ns();
    __atomic_store_n(&table[id].done, expected <= 0, __ATOMIC_RELAXED);
    /* Publishes ctx/remaining before the request carrying id is sent. */
    __atomic_store_n(&table[id].in_use, 1, __ATOMIC_RELEASE);
    return id;
}

void dsm__waiter_note(uint32_t id, int peer, uint64_t obj)
{
    table[id].peer = peer;
    table[id].obj = obj;
}

const struct dsm_waiter *dsm__waiter_slot(uint32_t i)
{
    return &table[i];
}

struct dsm_waiter *dsm__waiter_at(uint32_t id, enum dsm_wait_kind kind)
{
    if (id >= DSM_MAX_WAITERS || !__atomic_load_n(&table[id].in_use, __ATOMIC_ACQUIRE) ||
        table[id].kind != (int)kind)
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
    /* Before done is set: the waiter's WAIT_END comes later in time. */
    DSM_TRACE(DSM_TR_COMPLETE, w->kind, -1, (uint64_t)(w - table), 0);
    /* Release: the reply's effects (installed page, collected notices) are
     * visible to the waiter once it sees done.  The waiter sets sleeping
     * before its last check of done, and we set done before reading
     * sleeping (both seq_cst), so one of us sees the other: no lost wake. */
    __atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&w->sleeping, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &w->done, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void sleep_on(struct dsm_waiter *w, long ns)
{
    struct timespec ts = { 0, ns };
    __atomic_store_n(&w->sleeping, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&dsm__sleepers, 1, __ATOMIC_SEQ_CST);
    dsm__comm_wake();     /* it must poll for us now */
    if (!__atomic_load_n(&w->done, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &w->done, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
    __atomic_fetch_sub(&dsm__sleepers, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&w->sleeping, 0, __ATOMIC_SEQ_CST);
}

void dsm__waiter_wait(uint32_t id)
{
    struct dsm_waiter *w = &table[id];
    const int adaptive = dsm__g.cfg.poll == DSM_POLL_ADAPTIVE;
    const int self_progress = dsm__g.ops->waiter_progress;
    const uint64_t spin_ns = (uint64_t)(dsm__g.cfg.spin_us < 20 ? dsm__g.cfg.spin_us : 20) * 1000;
    /* A wait that may be long and polls: the communication thread stands
     * by until it ends or sleeps (comm.c, standby_ns). */
    const int polls_long = self_progress && adaptive &&
        (w->kind == DSM_WAIT_BARRIER || w->kind == DSM_WAIT_GRANT || w->kind == DSM_WAIT_COLL);
    uint64_t t0 = 0;
    unsigned long i;
    int slept = 0;     /* for the trace: this wait slept (a wake-up cost) */

    DSM_TRACE(DSM_TR_WAIT_BEGIN, w->kind, -1, id, 0);
    if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) {
        /* 0x80: no waiting (the replies were in, or none was expected). */
        DSM_TRACE(DSM_TR_WAIT_END, w->kind | 0x80, -1, id, 0);
        return;
    }
    __atomic_fetch_add(&dsm__waiting, 1, __ATOMIC_SEQ_CST);
    if (polls_long)
        __atomic_fetch_add(&dsm__polling_long, 1, __ATOMIC_SEQ_CST);
    for (i = 0;; i++) {
        if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
            break;
        if (dsm__unlikely(__atomic_load_n(&dsm__job_dead, __ATOMIC_RELAXED)) && !dsm__in_die)
            dsm__die();     /* another rank is dead, and reported (watchdog.c) */
        /* DSM_TIMEOUT: every 256 rounds (a round polls, yields or sleeps
         * at most 10 ms), see whether this wait has gone on too long. */
        if (i % 256 == 255)
            dsm__watchdog_check(w, dsm__now_ns());
        if (self_progress) {
            if (dsm__comm_try_progress() > 0) {
                t0 = 0;
                continue;
            }
            if (!adaptive) {
                cpu_relax();
                continue;
            }
            if (!t0)
                t0 = dsm__now_ns();
            uint64_t idle = dsm__now_ns() - t0;
            if (idle < spin_ns)
                cpu_relax();
            else if (idle < DSM_POLL_WINDOW_NS)
                sched_yield();
            else {
                if (polls_long)
                    __atomic_fetch_sub(&dsm__polling_long, 1, __ATOMIC_SEQ_CST);
                sleep_on(w, 1000000);   /* the communication thread polls */
                if (polls_long)
                    __atomic_fetch_add(&dsm__polling_long, 1, __ATOMIC_SEQ_CST);
                slept = 1;
            }
            continue;
        }
        if (!adaptive) {
            /* Spin, but let a thread of this core that must answer run. */
            if (i % 64 == 63)
                sched_yield();
            else
                cpu_relax();
            continue;
        }
        /* Sleep at once: the communication threads on the reply's path
         * need the cores more than we do (a spinning waiter measured 49 us
         * per RMR on 2 cores, a sleeping one 29 us). */
        sleep_on(w, 10000000);
        slept = 1;
    }
    __atomic_fetch_sub(&dsm__waiting, 1, __ATOMIC_SEQ_CST);
    if (polls_long) {
        /* Nobody may poll now: the communication thread must not stand by. */
        __atomic_fetch_sub(&dsm__polling_long, 1, __ATOMIC_SEQ_CST);
        dsm__comm_wake();
    }
    DSM_TRACE(DSM_TR_WAIT_END, w->kind | (slept ? 0x40 : 0), -1, id, 0);
}

void dsm__waiter_wake_all(void)
{
    for (uint32_t i = 0; i < DSM_MAX_WAITERS; i++)
        if (__atomic_load_n(&table[i].in_use, __ATOMIC_ACQUIRE) &&
            __atomic_load_n(&table[i].sleeping, __ATOMIC_SEQ_CST))
            syscall(SYS_futex, &table[i].done, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void dsm__waiter_put(uint32_t id)
{
    __atomic_store_n(&table[id].in_use, 0, __ATOMIC_RELEASE);
    table[id].ctx = NULL;
    pthread_mutex_lock(&table_lock);
    free_ids[nfree++] = id;
    pthread_mutex_unlock(&table_lock);
}
