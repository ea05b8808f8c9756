/*
 * team.c - parallel regions: fork, join, the team barrier, and the threads
 * of one rank.
 *
 * Fork (rank 0): write the region (function, data, team size, any preset
 * work-share) into the control block, then a DSM barrier: a release for
 * everything rank 0 wrote before it and an acquire for the others, who are
 * waiting in the same barrier (shim_worker_loop).  Rank r runs thread numbers
 * r*tpr .. r*tpr+tpr-1 (those below the team size): thread r*tpr on its main
 * thread, the others on helper pthreads, each on its own stack in the DSM.
 * The team barrier is a node-local barrier whose last thread makes the DSM
 * barrier.  Join: every rank's threads finish, then one more DSM barrier.
 * A rank with no thread in the team still takes part in every DSM barrier
 * until the control block says the region's master has finished.
 *
 * Nested parallel regions run as teams of one thread.
 *
 * Threads: shim_parallel* on the thread that meets the construct (rank 0, or
 * any thread inside a region for nested ones); shim_worker_loop on the main
 * thread of ranks other than 0; helpers in helper_main.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/syscall.h>

#include "shim.h"

static __thread struct shim_thr *cur;

/* This rank's part of the current team. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t gen;               /* bumped at each region start */
    int count;                  /* local threads in the region */
    int base;                   /* thread number of local thread 0 */
    int size;                   /* team size */
    uint64_t seq;
    void (*fn)(void *);
    void *data;
    int ws_kind;
    struct shim_loop_desc loop;
    int finished;
    int arrived;
    uint64_t bgen;
    int member0;                /* the calling thread is local thread 0 */
    unsigned char started[SHIM_MAX_LOCAL];   /* helper pthreads running */
} L = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

struct shim_thr *shim_self(void)
{
    if (dsm__likely(cur != NULL))
        return cur;
    cur = calloc(1, sizeof *cur);
    if (!cur)
        dsm__fatal("out of private memory for a thread");
    cur->size = 1;
    if (syscall(SYS_gettid) == getpid()) {
        cur->uid = shim.rank * SHIM_MAX_LOCAL + 1;
    } else {
        /* A thread the program started itself (or one of the shim's
         * helpers, before it joins a team): an owner id of its own for
         * recursive mutexes and nest locks, apart from the OpenMP
         * threads' ids. */
        static uint32_t made;
        uint32_t k = __atomic_add_fetch(&made, 1, __ATOMIC_RELAXED) & 0xfffff;
        cur->uid = -(int)(((uint32_t)shim.rank << 20 | k) & 0x7fffffff) - 1;
        cur->program_thread = 1;
    }
    return cur;
}

static void enter_member(struct shim_thr *t, int local)
{
    t->num = L.base + local;
    t->size = L.size;
    t->level = 1;
    t->active_level = L.size > 1;
    t->local = local;
    t->uid = shim.rank * SHIM_MAX_LOCAL + local + 1;
    t->program_thread = 0;
    t->seq = L.seq;
    t->ws = 0;
    t->turn = 0;
    if (L.ws_kind) {
        shim_ws_begin(t);
        shim_loop_init(t, &L.loop, 0);
    }
}

static void leave_member(struct shim_thr *t)
{
    t->icv_nthreads = 0;
    t->num = 0;
    t->size = 1;
    t->level = 0;
    t->active_level = 0;
}

struct member_call { void (*fn)(void *); void *data; };

static void call_member(void *arg)
{
    struct member_call *m = arg;
    m->fn(m->data);
    /* The region's end: its tasks run here, on this thread's stack in
     * the DSM, where a task may leave addresses for others to use. */
    if (shim_self()->size > 1)
        shim_task_quiesce();
}

/* Run fn(data) on this thread's stack in the DSM (if it has one). */
static void run_on_own_stack(int local, void (*fn)(void *), void *data)
{
    void *top = shim_stack_top(shim.rank, local);
    struct member_call m = { fn, data };
    if (top)
        shim_call_on_stack(call_member, &m, top);
    else
        call_member(&m);
}

static void *helper_main(void *arg)
{
    int local = (int)(intptr_t)arg;
    uint64_t seen = 0;
    struct shim_thr *t = shim_self();

    dsm__altstack_setup();
    pthread_mutex_lock(&L.mu);
    seen = L.gen - 1;           /* started for the region under way */
    for (;;) {
        while (L.gen == seen)
            pthread_cond_wait(&L.cv, &L.mu);
        seen = L.gen;
        if (local >= L.count)
            continue;
        enter_member(t, local);
        void (*fn)(void *) = L.fn;
        void *data = L.data;
        pthread_mutex_unlock(&L.mu);
        run_on_own_stack(local, fn, data);
        pthread_mutex_lock(&L.mu);
        leave_member(t);
        L.finished++;
        pthread_cond_broadcast(&L.cv);
    }
    return NULL;
}

/* Start this rank's threads of the region described by the arguments;
 * the calling thread becomes local thread 0. */
static void local_start(int count, int base, int size, uint64_t seq, void (*fn)(void *),
                        void *data, int ws_kind, const struct shim_loop_desc *loop,
                        int member0)
{
    pthread_mutex_lock(&L.mu);
    L.count = count;
    L.base = base;
    L.size = size;
    L.seq = seq;
    L.fn = fn;
    L.data = data;
    L.ws_kind = ws_kind;
    if (ws_kind)
        L.loop = *loop;
    L.finished = 0;
    L.arrived = 0;
    L.member0 = member0;
    L.gen++;
    for (int l = member0 ? 1 : 0; l < count; l++) {
        pthread_t th;
        if (L.started[l])
            continue;
        L.started[l] = 1;
        if (pthread_create(&th, NULL, helper_main, (void *)(intptr_t)l) != 0)
            dsm__fatal("cannot start OpenMP thread %d on rank %d", base + l, shim.rank);
        pthread_detach(th);
    }
    pthread_cond_broadcast(&L.cv);
    if (member0)
        enter_member(shim_self(), 0);
    pthread_mutex_unlock(&L.mu);
}

/* Wait for this rank's other threads to finish the region. */
static void local_join(void)
{
    pthread_mutex_lock(&L.mu);
    while (L.finished < L.count - (L.member0 ? 1 : 0))
        pthread_cond_wait(&L.cv, &L.mu);
    pthread_mutex_unlock(&L.mu);
    if (L.member0)
        leave_member(shim_self());
}

/* A DSM barrier described for the reports (a timeout, a silent rank, a
 * state dump): which OpenMP step this rank is in. */
static const char W_FORK_MASTER[] = "an OpenMP fork: the start of a parallel region";
static const char W_FORK_WORKER[] = "an OpenMP fork: this rank waits for the next parallel "
                                    "region (or the program's end)";
static const char W_JOIN[] = "an OpenMP join: the end of a parallel region";
static const char W_TEAM[] = "an OpenMP barrier of the team";

static void barrier_as(const char *what)
{
    dsm_rt_wait_for(what);
    shim_task_dsm_barrier(1);
    dsm_barrier();
    shim_task_dsm_barrier(0);
    dsm_rt_wait_for(NULL);
}

void shim_team_barrier(void)
{
    struct shim_thr *t = shim_self();
    if (t->size == 1 || t->level != 1)
        return;
    shim_task_quiesce();            /* the team's tasks are complete */
    if (L.count == 1) {
        barrier_as(W_TEAM);
        shim_task_barrier_end();
        return;
    }
    pthread_mutex_lock(&L.mu);
    uint64_t my = L.bgen;
    if (++L.arrived == L.count) {
        L.arrived = 0;
        pthread_mutex_unlock(&L.mu);
        barrier_as(W_TEAM); /* the others wait below, off shared memory */
        shim_task_barrier_end();
        pthread_mutex_lock(&L.mu);
        L.bgen++;
        pthread_cond_broadcast(&L.cv);
    } else {
        while (L.bgen == my)
            pthread_cond_wait(&L.cv, &L.mu);
    }
    pthread_mutex_unlock(&L.mu);
}

/* ---- nested regions: teams of one ---- */

struct saved { struct shim_thr t; struct saved *prev; int level; };
static __thread struct saved *saved_top;

static void serial_start(int ws_kind, const struct shim_loop_desc *loop)
{
    struct shim_thr *t = shim_self();
    struct saved *s = malloc(sizeof *s);
    if (!s)
        dsm__fatal("out of private memory for a nested parallel region");
    s->t = *t;
    s->prev = saved_top;
    saved_top = s;
    t->num = 0;
    t->size = 1;
    t->level++;
    s->level = t->level;
    t->ws = 0;
    t->turn = 0;
    if (ws_kind) {
        shim_ws_begin(t);
        shim_loop_init(t, loop, 0);
    }
}

int shim_local_count(void)
{
    return L.count;
}

int shim_outer(int level, int *num, int *size)
{
    for (struct saved *s = saved_top; s; s = s->prev)
        if (s->t.level == level) {
            *num = s->t.num;
            *size = s->t.size;
            return 0;
        }
    return -1;
}

static void serial_end(void)
{
    struct saved *s = saved_top;
    saved_top = s->prev;
    *shim_self() = s->t;
    free(s);
}

/* ---- fork and join on rank 0 ---- */

static int team_shape(unsigned nthreads, unsigned *tpr)
{
    unsigned n = nthreads ? nthreads : (unsigned)shim.icv_nthreads;
    unsigned t = (n + (unsigned)shim.nodes - 1) / (unsigned)shim.nodes;
    if (t < (unsigned)shim.tpr)
        t = (unsigned)shim.tpr;
    if (t > SHIM_MAX_LOCAL)
        t = SHIM_MAX_LOCAL;
    if (n > t * (unsigned)shim.nodes)
        n = t * (unsigned)shim.nodes;        /* the thread limit */
    *tpr = t;
    return (int)n;
}

int shim_team_size_next(unsigned nthreads)
{
    struct shim_thr *t = shim_self();
    unsigned tpr;
    if (!shim.active || t->level > 0 || shim.rank != 0 || t->program_thread)
        return 1;
    return team_shape(nthreads, &tpr);
}

void shim_parallel_start(void (*fn)(void *), void *data, unsigned nthreads, int ws_kind,
                         const struct shim_loop_desc *loop, uint64_t sections)
{
    struct shim_thr *t = shim_self();
    struct shim_loop_desc sec;
    unsigned tpr;

    if (ws_kind == 2) {
        memset(&sec, 0, sizeof sec);
        sec.sched = SHIM_SCHED_DYNAMIC;
        sec.up = 1;
        sec.lstart = 0;
        sec.lincr = 1;
        sec.n = sections;
        sec.chunk = 1;
        loop = &sec;
    }
    /* A region met by a thread the program started with pthread_create
     * has that thread alone: its variables are on a stack only rank 0
     * has, and several such threads may start regions at once, while the
     * team across ranks is one (ompshim(7), LIMITS). */
    if (!shim.active || t->level > 0 || shim.rank != 0 || t->program_thread) {
        serial_start(ws_kind, loop);
        return;
    }
    int n = team_shape(nthreads, &tpr);
    struct shim_ctl *c = shim.ctl;
    c->task_red = shim_task_region_red();
    c->fn = fn;
    c->data = data;
    c->nthreads = (uint32_t)n;
    c->tpr = tpr;
    c->run_sched = shim.icv_sched;
    c->icv_nthreads = shim.icv_nthreads;
    c->tasks_on = shim_task_on();
    c->run_chunk = shim.icv_chunk;
    c->ws_kind = ws_kind;
    if (ws_kind)
        c->loop = *loop;
    uint64_t seq = c->seq + 1;
    c->seq = seq;
    if (n == 1) {
        /* One thread: no other rank takes part. */
        local_start(1, 0, 1, seq, fn, data, ws_kind, loop, 1);
        return;
    }
    if (shim.tls_size)
        memcpy(shim.tls_image, shim.tls_main, shim.tls_size);
    shim_task_region_begin(n < (int)tpr ? n : (int)tpr, (n + (int)tpr - 1) / (int)tpr);
    shim_fork_barrier();
    dsm_rt_trace(DSM_TR_FORK, seq, n);
    local_start(n < (int)tpr ? n : (int)tpr, 0, n, seq, fn, data, ws_kind, loop, 1);
}

void shim_parallel_end(void)
{
    struct shim_thr *t = shim_self();
    if (saved_top && saved_top->level == t->level) {
        serial_end();
        return;
    }
    int size = t->size;
    if (size > 1)
        shim_task_quiesce();
    local_join();
    if (size == 1)
        return;
    /* The join carries the region's number: a rank without a thread in
     * the team tells it from the team's barriers, which carry nothing. */
    uint64_t seq = L.seq, own;
    dsm_rt_wait_for(W_JOIN);
    shim_task_dsm_barrier(1);
    (void)dsm__barrier_carry(&seq, &own, SHIM_JOIN_BYTES);
    shim_task_dsm_barrier(0);
    dsm_rt_wait_for(NULL);
    dsm_rt_trace(DSM_TR_JOIN, L.seq, 0);
}

void shim_parallel(void (*fn)(void *), void *data, unsigned nthreads, int ws_kind,
                   const struct shim_loop_desc *loop, uint64_t sections)
{
    shim_parallel_start(fn, data, nthreads, ws_kind, loop, sections);
    fn(data);
    shim_parallel_end();
}

/* ---- the other ranks ---- */

void shim_fork_barrier(void)
{
    static struct shim_ctl own;     /* rank 0's copy of its own release */
    dsm_rt_wait_for(W_FORK_MASTER);
    (void)dsm__barrier_carry(shim.ctl, &own, SHIM_FORK_BYTES);
    dsm_rt_wait_for(NULL);
}

/* What rank 0's barriers carry to the worker loop (one thread per rank runs
 * it): a fork's fields (SHIM_FORK_BYTES), a join's region number
 * (SHIM_JOIN_BYTES), or nothing (a team barrier). */
static struct shim_ctl fork_copy;
static union { struct shim_ctl ctl; uint64_t seq; } carried;

/* A barrier of the worker loop: returns the bytes rank 0's carried, which
 * are in `carried`. */
static size_t worker_barrier(const char *what)
{
    dsm_rt_wait_for(what);
    size_t got = dsm__barrier_carry(NULL, &carried, SHIM_FORK_BYTES);
    dsm_rt_wait_for(NULL);
    return got;
}

/* A join's carry, checked: rank 0 met this rank's join of region seq with
 * its own join of the same region. */
static void check_join(size_t got, uint64_t seq)
{
    if (got != SHIM_JOIN_BYTES || carried.seq != seq)
        dsm__fatal("internal error: the join of parallel region %lu met a barrier of "
                   "rank 0's that %s", (unsigned long)seq,
                   got == SHIM_FORK_BYTES ? "started a region"
                   : got != SHIM_JOIN_BYTES ? "carried nothing"
                   : "ended another region");
}

void shim_worker_loop(void)
{
    struct shim_ctl *shared = shim.ctl;
    uint64_t last = 0;
    size_t got = 0;
    int have = 0;                   /* got is a fork already met */

    dsm__altstack_setup();
    shim_self();
    for (;;) {
        /* Rank 0 starts each with shim_fork_barrier, whose release brings
         * the fork's fields; were it a plain barrier, they would be read
         * from the shared block (which the barrier made current). */
        if (!have)
            got = worker_barrier(W_FORK_WORKER);
        have = 0;
        const struct shim_ctl *c = shared;
        if (got == SHIM_FORK_BYTES) {
            fork_copy = carried.ctl;
            c = &fork_copy;
        } else if (got == SHIM_JOIN_BYTES) {
            dsm__fatal("internal error: the join of parallel region %lu outside it "
                       "(rank 0's last region is %lu)", (unsigned long)carried.seq,
                       (unsigned long)last);
        }
        if (c->exit_now) {
            int status = c->status;
            shim_mmap_flush_all();
            shim_task_report();
            shim.active = 0;
            dsm_finalize();
            /* The program's exit handlers and static destructors are its
             * sequential code, which only rank 0 runs (it did, before
             * telling us): flush what this rank printed and leave without
             * them, since they would work on this rank's stale copies. */
            fflush(NULL);
            _exit(status);
        }
        if (c->seq == last)
            dsm__fatal("internal error: a barrier outside any parallel region "
                       "(region %lu; rank 0's carried %zu bytes)", (unsigned long)last, got);
        last = c->seq;
        if (c->bcast) {
            shim_bcast_worker(c);
            continue;
        }
        if (c->dlopen) {
            shim_dlopen_worker(c);
            continue;
        }
        dsm_rt_trace(DSM_TR_FORK, last, c->nthreads);
        void (*fn)(void *) = c->fn;
        void *data = c->data;
        int n = (int)c->nthreads, tpr = (int)c->tpr, ws_kind = c->ws_kind;
        struct shim_loop_desc loop = c->loop;
        shim.icv_sched = c->run_sched;
        shim.icv_nthreads = c->icv_nthreads;
        shim.icv_chunk = c->run_chunk;
        int first = shim.rank * tpr;
        int count = n - first < tpr ? n - first : tpr;
        if (count <= 0) {
            /* No thread here: take part in the team's barriers until the
             * join.  Rank 0's team barriers carry nothing and its join the
             * region's number; nothing in shared memory can say which
             * comes, since rank 0 writes it after the last team barrier,
             * as this rank reads it (a race that made CI's rmgcv stop). */
            while ((got = worker_barrier(W_TEAM)) == 0)
                ;
            if (got == SHIM_FORK_BYTES && carried.ctl.exit_now) {
                have = 1;           /* the exit, from a thread of the program's */
                continue;
            }
            check_join(got, last);
            dsm_rt_trace(DSM_TR_JOIN, last, 0);
            continue;
        }
        if (c->tasks_on)
            shim_task_set_on();
        shim_task_region_begin(count, (n + tpr - 1) / tpr);
        shim_task_set_region_red(c->task_red);
        if (shim.tls_size) {
            /* threadprivate: copyin reads the master's variables at their
             * address in rank 0's main thread.  Here that address belongs
             * to this main thread, which mirrors rank 0's values and leaves
             * the team's threads to helpers. */
            memcpy(shim.tls_main, shim.tls_image, shim.tls_size);
            local_start(count, first, n, last, fn, data, ws_kind, &loop, 0);
        } else {
            local_start(count, first, n, last, fn, data, ws_kind, &loop, 1);
            run_on_own_stack(0, fn, data);
        }
        local_join();
        shim_task_dsm_barrier(1);
        got = worker_barrier(W_JOIN);
        shim_task_dsm_barrier(0);
        check_join(got, last);
        dsm_rt_trace(DSM_TR_JOIN, last, 0);
    }
}

void shim_finish(int status)
{
    struct shim_thr *t = shim_self();
    if (!shim.active)
        return;
    if (t->level > 0)
        dsm__fatal("exit(%d) was called inside a parallel region; the OpenMP shim "
                   "can only end the program from sequential code", status);
    shim.ctl->status = status;
    shim.ctl->exit_now = 1;
    shim_fork_barrier();
    shim_mmap_flush_all();
    shim_task_report();
    shim.active = 0;
    dsm_finalize();
}
