/*
 * task.c - OpenMP tasks: deferred tasks queued per rank, run by any thread
 * of the team, and stolen by idle threads of other ranks.
 *
 * A deferred task's closure (its function and the argument block GCC builds,
 * copied into shared memory on the creating rank) goes on the rank's ready
 * queue, a private list under T.mu.  The rank's team threads take tasks from
 * it: the newest first where they wait for children (taskwait, the end of a
 * taskgroup: only descendants of the waiting task, as libgomp does, so that a
 * suspended tied task never waits behind an unrelated one), any task at a
 * barrier or at the end of a region.  A thread of another rank that is idle
 * at a barrier steals: one service call (SHIM_SVC_TASKS) takes a quarter of
 * the oldest published tasks of a victim (at least one, at most STEAL_MAX),
 * and tells whether the victim is done.  A thread waiting in taskwait or at
 * a taskgroup's end for tasks its rank lent asks for their descendants only
 * (the request names the lent tasks).  The stolen task runs on the thief
 * with the victim's argument block (same address everywhere: GCC's copy
 * functions may leave pointers into the block itself); completions go back
 * to the owner in batches (report_done), never held while a thread waits.
 * The statistics are T.st (DSM_STATS=1) and the trace's TASK_BEGIN,
 * TASK_END and STEAL events.
 *
 * Memory (OpenMP: creating a task, completing it and waiting for it order
 * memory): within a rank the threads share the pages, and T.mu orders them.
 * Across ranks, a passage through a DSM lock of the task's owner (rank r's
 * is task_lock(r), an id that r manages; acquiring it invalidates what its
 * earlier holders wrote, releasing it sends this node's writes home):
 *   - a task may be stolen only once published: a thread of the owner
 *     passes the owner's lock after the task was queued (only when a thief
 *     found nothing published, T.hungry), so the creator's writes, the
 *     argument block among them, are released before any thief sees it;
 *   - the thief passes the lock when it has the tasks (acquire), and again
 *     when one has run, before it reports the completion (release);
 *   - the owner passes its lock at the end of a wait (taskwait, taskgroup)
 *     and before it runs a task, if a task it lent has completed since its
 *     last passage (acquire).
 * dsm_flush (the ordered flush) was the first choice; with it, atomic
 * updates made by tasks on two ranks were lost (tests/omp/taskgroup on 2 x 2,
 * 4 runs in 30: the final count short by 1 to 156); with the lock passages,
 * 0 in 100 (the commit that made the change has the numbers).
 * The barrier that ends a region or a team barrier is a DSM barrier: a
 * release and an acquire for everything.
 *
 * The barrier: every task bound to the team is complete when the barrier
 * ends.  A rank enters the DSM barrier only when its own tasks (queued,
 * running, lent to other ranks) are complete, none it stole is left, and its
 * threads have all arrived; that alone makes it correct.  To share the
 * work, an idle rank keeps stealing until every other rank of the team says
 * it is done or is already in the DSM barrier, for the asker's phase
 * (T.phase: regions begun and team DSM barriers left on the rank).
 *
 * Elsewhere: depend clauses in task_deps.c, taskloop in taskloop.c, task
 * reductions in task_reduction.c; the records in task_internal.h.
 *
 * Threads: GOMP_task* and the waits on OpenMP threads (team members); the
 * service handler (serve) on the rank's service thread, which touches no
 * shared memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "task_internal.h"
#include "gomp_abi.h"

struct free_node { void *raw; struct free_node *next; };

/* Service requests (serve): take tasks, tasks done, tasks in use, an event
 * fulfilled. */
enum { RQ_STEAL = 1, RQ_DONE, RQ_ON, RQ_FULFILL };
#define STEAL_MAX 16            /* tasks one steal takes, at most */
#define DONE_MAX 64             /* completions one report carries, at most */
#define STEAL_ONLY_MAX 512      /* lent tasks a waiting thread's steal names */
#define THROTTLE_READY 64       /* ready tasks per thread above which a new one runs now */
#define STEAL_BACKOFF_MAX_US 2000 /* the longest pause between empty steal rounds */

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct task *head, *tail;   /* ready queue: oldest at head */
    struct task *lent_head;     /* tasks running on other ranks */
    long nready, npri;
    long live;                  /* tasks owned here and not complete */
    long foreign;               /* tasks stolen here and not complete */
    /* Publication: T.wseq counts this rank's writes that a thief may need,
     * the creation of a task (its argument block, and what its creator
     * wrote before) and the completion of a task here (what it wrote, for
     * its successors); a task needs the stamp of its creation and of each
     * predecessor that completed here, and may go to a thief once a lock
     * passage that began at T.wseq >= that has ended (T.pub_seq).  A
     * predecessor that ran on another rank released its writes there. */
    uint64_t wseq, pub_seq;
    uint64_t q_need;            /* the most any queued task needs */
    int publishing, hungry;
    int on;                     /* this rank has used deferred tasks */
    int team_ranks;             /* ranks with threads in the current team */
    int local_count;            /* this rank's threads in it */
    int arrived;                /* threads in shim_task_quiesce */
    uint64_t qgen;
    int stealing;
    int in_dsm_barrier;         /* a thread of the rank is in the team's DSM barrier */
    uint32_t phase;             /* regions begun + team DSM barriers left, here */
    uintptr_t *region_red;      /* the region's task reductions (task_reduction.c) */
    int next_victim;
    uint64_t remote_done, acquired;  /* remote completions: received, acquired */
    struct free_node *to_free;  /* blocks of lent tasks, for a team thread to free */
    int fready[DSM_MAX_NODES];  /* stolen tasks queued here, per owner */
    struct { uint64_t ref[DONE_MAX]; int n; double since; } done[DSM_MAX_NODES];
                                /* stolen tasks run, not yet reported */
    struct shim_task_stats st;
} T = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static __thread struct task *cur;           /* the task this thread runs */
/* Affinity (note_block, OMPSHIM_TASK_AFFINITY): on by default; how long a
 * task with one waits in the queue for its rank before another rank may
 * run it (0: not at all, a preference only: each rank runs or steals the
 * tasks meant for it first). */
static int aff_on = 1;
static double aff_wait_s;
static __thread int aff_skipped;            /* pop left a task for its rank */
static __thread struct task implicit_task;  /* when cur is NULL */

static struct task *current(void)
{
    if (cur)
        return cur;
    implicit_task.implicit = 1;
    implicit_task.state = ST_RUNNING;
    return &implicit_task;
}

/* The taskgroup a new child of t counts in: t's innermost own one, else
 * the one t counts in. */
static struct task_group *group_of(const struct task *t)
{
    return t->groups ? t->groups : t->group;
}

/* ---- service requests ---- */


/* phase: the requester's T.phase (RQ_STEAL: "done" answers for that phase
 * only). */
struct rq_head { uint32_t kind, n, phase, pad; };
struct steal_desc {
    uint64_t fn, arg, ref, red;
    int32_t priority;
    uint32_t flags, npf, pad;
    struct pf_block pf[PF_DEPS];
};
enum { SD_GROUP = 1, SD_FINAL = 2 };
struct steal_reply { uint32_t n, done; struct steal_desc d[STEAL_MAX]; };

/* ---- allocation (private memory) ---- */

void *shim_task_xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n, sz);
    if (!p)
        dsm__fatal("out of private memory for OpenMP tasks");
    return p;
}

void *shim_task_xrealloc(void *p, size_t sz)
{
    p = realloc(p, sz);
    if (!p)
        dsm__fatal("out of private memory for OpenMP tasks");
    return p;
}

/* T.mu held for all of the following until "without T.mu". */


void shim_task_unref(struct task *t)
{
    if (t->implicit || --t->refs > 0)
        return;
    shim_dep_table_free(t->deps);
    free(t->succ);
    struct task *p = t->parent;
    free(t);
    if (p)
        shim_task_unref(p);
}

static void enqueue(struct task *t)
{
    t->state = ST_READY;
    t->qseq = t->foreign ? UINT64_MAX : t->needs;
    if (!t->foreign && t->needs > T.q_need)
        T.q_need = t->needs;
    if (t->blk.aff1 && aff_wait_s > 0)
        t->qtime = dsm_wtime();
    t->next = NULL;
    t->prev = T.tail;
    if (T.tail)
        T.tail->next = t;
    else
        T.head = t;
    T.tail = t;
    T.nready++;
    if (t->priority > 0)
        T.npri++;
    if (t->foreign)
        T.fready[t->owner]++;
    pthread_cond_broadcast(&T.cv);
}

static void unlink_task(struct task *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        T.head = t->next;
    if (t->next)
        t->next->prev = t->prev;
    else
        T.tail = t->prev;
    t->next = t->prev = NULL;
    T.nready--;
    if (t->priority > 0)
        T.npri--;
    if (t->foreign)
        T.fready[t->owner]--;
}

static int is_descendant(const struct task *t, const struct task *anc)
{
    for (const struct task *p = t->parent; p; p = p->parent)
        if (p == anc)
            return 1;
    return 0;
}

/* The next task for a thread: the newest (or, with priorities, the one of
 * highest priority) descendant of anc, or any task if anc is NULL. */
/* Whether rank r may run t now: 2 if t has no affinity or r is its rank;
 * 1 if it has waited aff_wait_s in the queue (a busy rank must not hold up
 * the others: r runs it when it has nothing of its own); else 0.  *now:
 * the time, read once. */
static int may_run(const struct task *t, int r, double *now)
{
    if (!t->blk.aff1 || t->blk.aff1 - 1 == r || t->foreign)
        return 2;
    if (aff_wait_s <= 0)
        return 1;
    if (!*now)
        *now = dsm_wtime();
    return *now - t->qtime >= aff_wait_s;
}

static struct task *pop(const struct task *anc)
{
    struct task *best = NULL, *other = NULL;
    double now = 0;
    aff_skipped = 0;
    for (struct task *t = T.tail; t; t = t->prev) {
        if (anc && !is_descendant(t, anc))
            continue;
        int m = may_run(t, shim.rank, &now);
        if (m < 2) {
            if (m && !other)
                other = t;      /* another rank's, waited long enough */
            else if (!m)
                aff_skipped = 1;
            continue;
        }
        if (!best || t->priority > best->priority)
            best = t;
        if (!T.npri)
            break;
    }
    if (!best)
        best = other;
    if (best)
        unlink_task(best);
    return best;
}

/* Task t (owned here) is complete: its parent, taskgroup and successors
 * learn it. */
static void complete(struct task *t)
{
    t->state = ST_DONE;
    /* A body that ran elsewhere was released there; a detached task's
     * event fulfilled here follows this rank's writes. */
    uint64_t stamp = t->ran_remote && !t->fulfilled_here ? 0 : ++T.wseq;
    if (t->parent && --t->parent->kids == 0)
        pthread_cond_broadcast(&T.cv);
    if (t->group && --t->group->count == 0)
        pthread_cond_broadcast(&T.cv);
    for (int i = 0; i < t->nsucc; i++) {
        struct task *s = t->succ[i];
        if (stamp > s->needs)
            s->needs = stamp;
        if (--s->npred == 0 && s->state == ST_WAITING)
            enqueue(s);
    }
    t->nsucc = 0;
    shim_dep_table_free(t->deps);
    t->deps = NULL;
    if (--T.live == 0)
        pthread_cond_broadcast(&T.cv);
    pthread_cond_broadcast(&T.cv);
}

static void defer_free(void *raw)
{
    if (!raw)
        return;
    struct free_node *f = shim_task_xcalloc(1, sizeof *f);
    f->raw = raw;
    f->next = T.to_free;
    T.to_free = f;
}

/* Without T.mu: free the blocks of tasks completed elsewhere. */
static void drain_frees(void)
{
    pthread_mutex_lock(&T.mu);
    struct free_node *f = T.to_free;
    T.to_free = NULL;
    pthread_mutex_unlock(&T.mu);
    while (f) {
        struct free_node *n = f->next;
        shim_dsm_free(f->raw);
        free(f);
        f = n;
    }
}

/* ---- publishing, acquiring (without T.mu) ---- */

/* Rank r's task lock: the id of SHIM_LOCK_TASKS' 64 that rank r manages
 * (id % nodes == r), so that the owner's own passages (publication) cost
 * no message: libdsm grants a lock to its manager's node in place.  With
 * more than 64 ranks, ranks r and r + 64 share one (still a release and an
 * acquire of the same lock per passage, only slower). */
static int task_lock(int r)
{
    const int ids = SHIM_LOCK_FIRST_FREE - SHIM_LOCK_TASKS, n = shim.nodes;
    if (n > ids)
        return SHIM_LOCK_TASKS + r % ids;
    int first = SHIM_LOCK_TASKS % n;              /* the rank managing id SHIM_LOCK_TASKS */
    return SHIM_LOCK_TASKS + (r - first + n) % n;
}

/* Release this node's writes to rank r's task lock and acquire what its
 * earlier holders released: a lock passage (DSM locks are node-wide, and
 * their grants carry the pages their releasers wrote). */
static void pass_lock(int r)
{
    dsm_lock_acquire(task_lock(r));
    dsm_lock_release(task_lock(r));
}

/* A thief found nothing published: release what the queued tasks need. */
static void publish_if_hungry(void)
{
    pthread_mutex_lock(&T.mu);
    if (!T.hungry || T.publishing || T.pub_seq >= T.q_need) {
        pthread_mutex_unlock(&T.mu);
        return;
    }
    T.hungry = 0;
    T.publishing = 1;
    uint64_t upto = T.wseq;
    pthread_mutex_unlock(&T.mu);
    /* The passage is an acquire too: remote completions counted before it
     * need no other. */
    uint64_t seen = __atomic_load_n(&T.remote_done, __ATOMIC_ACQUIRE);
    pass_lock(shim.rank);
    pthread_mutex_lock(&T.mu);
    if (seen > T.acquired)
        __atomic_store_n(&T.acquired, seen, __ATOMIC_RELAXED);
    T.publishing = 0;
    if (upto > T.pub_seq)
        T.pub_seq = upto;
    T.st.publishes++;
    pthread_mutex_unlock(&T.mu);
}

/* Tasks completed on other ranks since this rank's last acquire: see their
 * writes (each runner released them before its report, which counted in
 * T.remote_done under T.mu before any waiter could see the completion).
 * Nothing else needs an acquire: a task that ran here wrote this node's
 * own memory.  Run before a task that may depend on such a task, at the end
 * of taskwait and taskgroup, and before a stolen task's report (so that its
 * release passes on what its descendants' runners released: libdsm's locks
 * forward what an acquire learned). */
static void acquire_remote(void)
{
    uint64_t seen = __atomic_load_n(&T.remote_done, __ATOMIC_ACQUIRE);
    if (seen == __atomic_load_n(&T.acquired, __ATOMIC_RELAXED))
        return;
    pass_lock(shim.rank);
    pthread_mutex_lock(&T.mu);
    if (seen > T.acquired)
        __atomic_store_n(&T.acquired, seen, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&T.mu);
}

/* ---- running a task (without T.mu) ---- */

static void wait_group(struct task_group *g, struct task *self);
static void finish(struct task *t);

/* Prefetch the blocks t's dependences name (after the acquire that makes
 * their contents current: a prefetch never crosses a synchronisation). */
static void prefetch_blocks(const struct task *t)
{
    size_t ps = dsm_rt_page_size();
    for (int i = 0; i < t->blk.npf; i++) {
        uintptr_t a = (uintptr_t)t->blk.pf[i].addr;
        uintptr_t first = a & ~(uintptr_t)(ps - 1);
        uintptr_t last = (a + t->blk.pf[i].bytes - 1) & ~(uintptr_t)(ps - 1);
        (void)dsm_prefetch((const void *)first, (last - first) / ps + 1);
    }
}

static void run_task(struct task *t)
{
    struct task *prev = cur;
    acquire_remote();           /* a predecessor that ran elsewhere */
    if (t->blk.npf && T.team_ranks > 1)
        prefetch_blocks(t);
    t->state = ST_RUNNING;
    cur = t;
    uint64_t id = t->foreign ? t->owner_ref : (uint64_t)(uintptr_t)t;
    uint64_t from = t->foreign ? (uint64_t)t->owner + 1 : 0;
    dsm_rt_trace(DSM_TR_TASK_BEGIN, id, from);
    t->fn(t->arg);
    dsm_rt_trace(DSM_TR_TASK_END, id, from);
    if (t->foreign && t->group == &t->proxy) {
        wait_group(&t->proxy, t);       /* its descendants in the owner's group */
        acquire_remote();       /* theirs, if they ran elsewhere, so that the
                                 * report's release passes them on */
    }
    cur = prev;
    finish(t);
}

/* A stolen task has run: its completion goes to the owner together with
 * the others of the same owner that ran here, once none is left in this
 * rank's queue or the oldest has waited REPORT_S (one lock passage and one
 * call for the batch: tiny tasks cost a round trip each otherwise, while
 * the owner may wait for them in a taskwait). */
#define REPORT_S 200e-6
/* Send the completions held for owner (T.mu held; dropped meanwhile). */
static void send_reports(int owner)
{
    uint64_t refs[DONE_MAX];
    int n = T.done[owner].n;
    if (!n)
        return;
    memcpy(refs, T.done[owner].ref, (size_t)n * sizeof refs[0]);
    T.done[owner].n = 0;
    pthread_mutex_unlock(&T.mu);
    /* Release the tasks' writes, then tell the owner. */
    pass_lock(owner);
    struct rq_head h = { RQ_DONE, (uint32_t)n, 0, 0 };
    (void)dsm__call(owner, SHIM_SVC_TASKS, &h, sizeof h, refs, (size_t)n * sizeof refs[0],
                    NULL, 0, NULL);
    pthread_mutex_lock(&T.mu);
    T.foreign -= n;
    T.st.reports++;
    pthread_cond_broadcast(&T.cv);
}

/* Before a thread waits: no completion stays held here (its owner may be
 * waiting for it while this rank waits for the owner).  T.mu held. */
static void send_all_reports(void)
{
    for (int r = 0; r < T.team_ranks && r < DSM_MAX_NODES; r++)
        if (T.done[r].n)
            send_reports(r);
}

static void report_done(struct task *t)
{
    int owner = t->owner;
    double now = dsm_wtime();
    pthread_mutex_lock(&T.mu);
    if (T.done[owner].n == 0)
        T.done[owner].since = now;
    T.done[owner].ref[T.done[owner].n++] = t->owner_ref;
    shim_task_unref(t);              /* its children may still hold it */
    if (T.fready[owner] == 0 || T.done[owner].n == DONE_MAX ||
        now - T.done[owner].since >= REPORT_S)
        send_reports(owner);
    pthread_mutex_unlock(&T.mu);
}

static void finish(struct task *t)
{
    if (t->foreign) {
        report_done(t);
        return;
    }
    pthread_mutex_lock(&T.mu);
    t->body_done = 1;
    void *raw = NULL;
    if (!t->detach_pending) {  /* else omp_fulfill_event completes it */
        complete(t);
        raw = t->raw;
        t->raw = NULL;
        shim_task_unref(t);
    }
    pthread_mutex_unlock(&T.mu);
    if (raw)
        shim_dsm_free(raw);
}

static void timed_wait(long us)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += us * 1000;
    while (ts.tv_nsec >= 1000000000L) {
        ts.tv_nsec -= 1000000000L;
        ts.tv_sec++;
    }
    (void)pthread_cond_timedwait(&T.cv, &T.mu, &ts);
}

/* Wait for news on T.cv; if pop left a task for its rank, only until any
 * rank may run it. */
static void idle_wait(void)
{
    if (aff_skipped)
        timed_wait((long)(aff_wait_s * 1e6 / 2) + 1);
    else
        pthread_cond_wait(&T.cv, &T.mu);
}

static int steal_round(int *all_done, const uint64_t *only, size_t nonly,
                       struct task *waiter);

/* T.mu held (dropped meanwhile): a thief waits, publish before running more
 * here; 1 if it did. */
static int publish_locked(void)
{
    if (!T.hungry || T.pub_seq >= T.q_need || T.publishing)
        return 0;
    pthread_mutex_unlock(&T.mu);
    publish_if_hungry();
    pthread_mutex_lock(&T.mu);
    return 1;
}

/* T.mu held (dropped meanwhile): run the next ready task (a descendant of
 * anc, any if NULL); 1 if there was one. */
static int run_one_locked(const struct task *anc)
{
    struct task *t = pop(anc);
    if (!t)
        return 0;
    pthread_mutex_unlock(&T.mu);
    run_task(t);
    pthread_mutex_lock(&T.mu);
    return 1;
}

/* Wait, running tasks, until *count is 0 (a task's children or a
 * taskgroup); T.mu held on entry and exit.  Only descendants of self may
 * run here; when none is ready here but some descend from a task this rank
 * lent, ask the ranks that run those for their descendants. */
static void wait_zero(long *count, struct task *self)
{
    long backoff = 50;
    while (*count > 0) {
        if (publish_locked() || run_one_locked(self)) {
            backoff = 50;
            continue;
        }
        if (T.team_ranks > 1 && !T.stealing) {
            uint64_t only[STEAL_ONLY_MAX];
            size_t n = 0;
            for (struct task *l = T.lent_head; l && n < STEAL_ONLY_MAX; l = l->lnext)
                if (l == self || is_descendant(l, self))
                    only[n++] = (uint64_t)(uintptr_t)l;
            if (n) {
                T.stealing = 1;
                pthread_mutex_unlock(&T.mu);
                int all_done;
                int got = steal_round(&all_done, only, n, self);
                pthread_mutex_lock(&T.mu);
                T.stealing = 0;
                pthread_cond_broadcast(&T.cv);
                if (got) {
                    backoff = 50;
                    continue;
                }
                send_all_reports();
                if (*count > 0)
                    timed_wait(backoff);
                if (backoff < STEAL_BACKOFF_MAX_US)
                    backoff *= 2;
                continue;
            }
        }
        send_all_reports();
        if (*count <= 0)
            break;
        if (T.stealing)
            timed_wait(1000);
        else
            idle_wait();
    }
}

static void wait_group(struct task_group *g, struct task *self)
{
    pthread_mutex_lock(&T.mu);
    wait_zero(&g->count, self);
    pthread_mutex_unlock(&T.mu);
}

/* ---- creating tasks ---- */

static int deferrable(void)
{
    struct shim_thr *th = shim_self();
    return shim.active && th->size > 1 && th->level == 1 && !th->program_thread;
}

/* This rank uses tasks from now on: tell the team's other ranks, so that
 * their idle threads come to steal. */
static void turn_on(void)
{
    if (__atomic_load_n(&T.on, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&T.on, 1, __ATOMIC_RELEASE);
    struct rq_head h = { RQ_ON, 0, 0, 0 };
    for (int r = 0; r < T.team_ranks; r++)
        if (r != shim.rank)
            (void)dsm__call(r, SHIM_SVC_TASKS, &h, sizeof h, NULL, 0, NULL, 0, NULL);
}

/* Copy the argument block into shared memory on this rank. */
static void *copy_args(void *data, void (*cpyfn)(void *, void *), long arg_size,
                       long arg_align, void **raw)
{
    size_t align = arg_align > 0 ? (size_t)arg_align : 8;
    size_t size = arg_size > 0 ? (size_t)arg_size : 1;
    unsigned char *r = shim_dsm_malloc(size + align, 16);
    if (!r)
        dsm__fatal("out of shared memory for a task's data (%zu bytes); raise "
                   "DSM_HEAP_SIZE", size);
    unsigned char *buf = (unsigned char *)(((uintptr_t)r + align - 1) & ~(uintptr_t)(align - 1));
    if (cpyfn)
        cpyfn(buf, data);
    else if (arg_size > 0)
        memcpy(buf, data, (size_t)arg_size);
    *raw = r;
    return buf;
}

/* Create a task record, a child of the current task, with its dependences;
 * T.mu held. */
static struct task *new_task(void (*fn)(void *), void *arg, void *raw, void **depend,
                             int priority)
{
    struct task *parent = current();
    while (parent->onstack)     /* a detached task inside an included one: */
        parent = parent->parent;    /* it may outlive run_now's record */
    struct task *t = shim_task_xcalloc(1, sizeof *t);
    t->fn = fn;
    t->arg = arg;
    t->raw = raw;
    t->priority = priority > 0 ? priority : 0;
    t->refs = 1;
    t->state = ST_WAITING;
    t->parent = parent;
    parent->refs++;
    parent->kids++;
    t->group = group_of(parent);
    if (t->group)
        t->group->count++;
    T.live++;
    T.st.created++;
    t->needs = ++T.wseq;
    if (depend)
        shim_deps_of(parent, t, depend);
    return t;
}

/* Run fn on a copy of data at once, as an included task of the current
 * one (inside a final task), or where there is no team to share it with;
 * its own children run at once too. */
static void run_now(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                    long arg_size, long arg_align, int final, long *bounds, int nb)
{
    void *raw = NULL, *arg = data;
    if (cpyfn || bounds)
        arg = copy_args(data, cpyfn, arg_size, arg_align, &raw);
    if (bounds)
        memcpy(arg, bounds, (size_t)nb * sizeof(long));
    struct task self = { 0 };
    struct task *prev = cur, *parent = current();
    self.implicit = 1;          /* on this stack: never freed */
    self.onstack = 1;
    self.state = ST_RUNNING;
    self.final = (unsigned char)final;
    self.parent = parent;
    self.group = group_of(parent);
    cur = &self;
    fn(arg);
    cur = prev;
    if (raw)
        shim_dsm_free(raw);
}

void shim_task_create(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                      long arg_size, long arg_align, bool deferred, unsigned flags,
                      void **depend, int priority, void **detach, long *bounds, int nb)
{
    struct task *parent = current();
    int final = (flags & TF_FINAL) != 0 || parent->final;
    if (parent->final || !deferrable()) {
        /* Included (inside a final task), or no team to share it with:
         * the task runs now, which also satisfies its dependences in
         * order.  A detached one still needs its record. */
        if (!detach) {
            run_now(fn, data, cpyfn, arg_size, arg_align, final, bounds, nb);
            return;
        }
        deferred = 0;
    }
    if (deferred && !(flags & TF_DEPEND) && !detach) {
        /* As libgomp does: with more than THROTTLE_READY tasks ready per
         * thread of the rank, there is work enough to share, and a new
         * task runs now, undeferred (its own children may be deferred).
         * Not one with dependences: it keeps its place in their order. */
        pthread_mutex_lock(&T.mu);
        if (T.nready > THROTTLE_READY * (long)(T.local_count > 0 ? T.local_count : 1)) {
            deferred = 0;
            T.st.throttled++;
        }
        pthread_mutex_unlock(&T.mu);
    }
    if (deferred || detach)
        turn_on();
    void *raw = NULL, *arg = data;
    /* An undeferred task runs before GOMP_task returns: GCC's block is
     * still there, and no other rank will read it. */
    if (deferred || cpyfn || bounds)
        arg = copy_args(data, cpyfn, arg_size, arg_align, &raw);
    if (bounds)
        memcpy(arg, bounds, (size_t)nb * sizeof(long));
    drain_frees();
    struct task_blocks blocks = { .npf = 0 };
    if (flags & TF_DEPEND)
        shim_deps_blocks(depend, aff_on ? T.team_ranks : 0, &blocks);
    pthread_mutex_lock(&T.mu);
    struct task *t = new_task(fn, arg, raw, (flags & TF_DEPEND) ? depend : NULL,
                              (flags & TF_PRIORITY) ? priority : 0);
    t->blk = blocks;
    t->final = (unsigned char)final;
    if (detach) {
        t->detach_pending = 1;
        *detach = (void *)((uintptr_t)t | ((uintptr_t)(shim.rank + 1) << 48));
    }
    if (deferred) {
        if (t->npred == 0)
            enqueue(t);
        pthread_mutex_unlock(&T.mu);
        publish_if_hungry();
        return;
    }
    /* Undeferred: wait for its predecessors, then run it here. */
    t->state = ST_HELD;
    while (t->npred > 0) {
        if (run_one_locked(parent))
            continue;
        send_all_reports();
        if (t->npred > 0)
            idle_wait();
    }
    pthread_mutex_unlock(&T.mu);
    run_task(t);
}

/* ---- the service: steal, done, on, fulfill (service thread) ---- */

/* This rank is done with phase (a thief's T.phase): in the DSM barrier that
 * ends it, or every thread arrived and no task left.  Not while it is still
 * in or just out of the barrier before it (or before the region's start):
 * its T.phase is behind then, and the thief must wait for its tasks. */
static int rank_done(uint32_t phase)
{
    return T.phase == phase &&
           (T.in_dsm_barrier ||
            (T.on && T.arrived == T.local_count && T.live == 0 && T.foreign == 0 &&
             T.nready == 0));
}

/* Task t may go to rank src: any task if the request names none, else one
 * that descends from a task src lent here whose reference is in only[]. */
static int stealable(const struct task *t, int src, const uint64_t *only, size_t nonly)
{
    if (!nonly)
        return 1;
    while (t->parent && !t->foreign)
        t = t->parent;
    if (!t->foreign || t->owner != src)
        return 0;
    for (size_t i = 0; i < nonly; i++) {
        uint64_t v;
        memcpy(&v, &only[i], 8);
        if (v == t->owner_ref)
            return 1;
    }
    return 0;
}

static int64_t serve(int src, const void *req, size_t len, void *reply, size_t *reply_len)
{
    struct rq_head h;
    if (len < sizeof h)
        dsm__fatal("internal error: a task request of %zu bytes from rank %d", len, src);
    memcpy(&h, req, sizeof h);
    const unsigned char *body = (const unsigned char *)req + sizeof h;
    *reply_len = 0;
    pthread_mutex_lock(&T.mu);
    switch (h.kind) {
    case RQ_ON:
        __atomic_store_n(&T.on, 1, __ATOMIC_RELEASE);
        break;
    case RQ_STEAL: {
        /* The body, if any, lists tasks the thief lent to this rank that
         * descend from a task it waits for: only their descendants may go
         * (it may run nothing else there). */
        struct steal_reply *r = reply;
        const uint64_t *only = (const uint64_t *)(const void *)body;
        size_t nonly = (len - sizeof h) / 8;
        long pub = 0;
        double now = 0;
        for (struct task *t = T.head; t; t = t->next)
            if (t->qseq <= T.pub_seq && stealable(t, src, only, nonly) &&
                may_run(t, src, &now))
                pub++;
        long want = (pub + 3) / 4;      /* leave most: a subtree each */
        if (want > STEAL_MAX)
            want = STEAL_MAX;
        uint32_t n = 0;
        /* The tasks meant for src first, then others that waited. */
        for (int pass = 2; pass >= 1; pass--)
        for (struct task *t = T.head, *nx; t && n < want; t = nx) {
            nx = t->next;
            if (t->qseq > T.pub_seq || !stealable(t, src, only, nonly) ||
                may_run(t, src, &now) != pass)
                continue;
            unlink_task(t);
            t->lent = 1;
            t->state = ST_RUNNING;
            t->lprev = NULL;
            t->lnext = T.lent_head;
            if (T.lent_head)
                T.lent_head->lprev = t;
            T.lent_head = t;
            struct steal_desc *d = &r->d[n++];
            d->fn = (uint64_t)(uintptr_t)t->fn;
            d->arg = (uint64_t)(uintptr_t)t->arg;
            d->ref = (uint64_t)(uintptr_t)t;
            d->priority = t->priority;
            d->flags = (t->group ? SD_GROUP : 0) | (t->final ? SD_FINAL : 0);
            d->red = t->group ? (uint64_t)(uintptr_t)t->group->red : 0;
            d->npf = (uint32_t)t->blk.npf;
            memcpy(d->pf, t->blk.pf, sizeof d->pf);
        }
        if (n == 0) {
            /* Even with nothing ready: a task that becomes ready (a
             * dependence met) is then published at once. */
            T.hungry = 1;
            pthread_cond_broadcast(&T.cv);
        }
        T.st.lent += n;
        r->n = n;
        r->done = (uint32_t)rank_done(h.phase);
        *reply_len = sizeof *r - (STEAL_MAX - n) * sizeof r->d[0];
        break;
    }
    case RQ_DONE:
        for (uint32_t i = 0; i < h.n && (i + 1) * 8 <= len - sizeof h; i++) {
            uint64_t ref;
            memcpy(&ref, body + 8 * i, 8);
            struct task *t = (struct task *)(uintptr_t)ref;
            t->body_done = 1;
            if (t->lent) {
                if (t->lprev)
                    t->lprev->lnext = t->lnext;
                else
                    T.lent_head = t->lnext;
                if (t->lnext)
                    t->lnext->lprev = t->lprev;
                t->lent = 0;
                t->ran_remote = 1;
            }
            if (!t->detach_pending) {
                complete(t);
                defer_free(t->raw);
                t->raw = NULL;
                shim_task_unref(t);
            }
        }
        __atomic_add_fetch(&T.remote_done, 1, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&T.cv);
        break;
    case RQ_FULFILL: {
        uint64_t ref;
        memcpy(&ref, body, 8);
        struct task *t = (struct task *)(uintptr_t)ref;
        t->detach_pending = 0;
        if (t->body_done) {
            complete(t);
            defer_free(t->raw);
            t->raw = NULL;
            shim_task_unref(t);
        }
        __atomic_add_fetch(&T.remote_done, 1, __ATOMIC_RELEASE);
        break;
    }
    default:
        pthread_mutex_unlock(&T.mu);
        dsm__fatal("internal error: a task request of kind %u from rank %d", h.kind, src);
    }
    pthread_mutex_unlock(&T.mu);
    return 0;
}

/* One thread of an idle rank asks the team's other ranks for tasks, one
 * after the other, from the last one that gave some: returns the number taken; *all_done
 * is set if every one said it was done. */
static int steal_round(int *all_done, const uint64_t *only, size_t nonly, struct task *waiter)
{
    /* The reply lands in private memory (dsm__call's contract: it is
     * written under the progress token), not on this thread's stack,
     * which is shared memory. */
    static __thread struct steal_reply *rp;
    if (!rp)
        rp = shim_task_xcalloc(1, sizeof *rp);
    struct steal_reply r;
    pthread_mutex_lock(&T.mu);
    struct rq_head h = { RQ_STEAL, (uint32_t)nonly, T.phase, 0 };
    pthread_mutex_unlock(&T.mu);
    int ranks = T.team_ranks;
    *all_done = 1;
    for (int k = 0; k < ranks; k++) {
        int v = (T.next_victim + k) % ranks;   /* the last victim first */
        if (v == shim.rank)
            continue;
        size_t got = 0;
        rp->n = rp->done = 0;
        (void)dsm__call(v, SHIM_SVC_TASKS, &h, sizeof h, only, nonly * 8, rp, sizeof *rp, &got);
        memcpy(&r, rp, sizeof r);
        pthread_mutex_lock(&T.mu);
        T.st.steal_calls++;
        pthread_mutex_unlock(&T.mu);
        dsm_rt_trace(DSM_TR_STEAL, (uint64_t)v, r.n);
        if (!r.done)
            *all_done = 0;
        if (r.n == 0)
            continue;
        T.next_victim = v;
        /* Acquire what the victim released when it published them. */
        pass_lock(v);
        pthread_mutex_lock(&T.mu);
        for (uint32_t i = 0; i < r.n; i++) {
            struct task *t = shim_task_xcalloc(1, sizeof *t);
            t->fn = (void (*)(void *))(uintptr_t)r.d[i].fn;
            t->arg = (void *)(uintptr_t)r.d[i].arg;
            t->owner = v;
            t->owner_ref = r.d[i].ref;
            t->foreign = 1;
            t->refs = 1;
            t->priority = r.d[i].priority;
            t->final = (r.d[i].flags & SD_FINAL) != 0;
            t->blk.npf = (int)(r.d[i].npf <= PF_DEPS ? r.d[i].npf : 0);
            memcpy(t->blk.pf, r.d[i].pf, sizeof t->blk.pf);
            if (r.d[i].flags & SD_GROUP) {
                t->group = &t->proxy;
                t->proxy.red = (uintptr_t *)(uintptr_t)r.d[i].red;
            }
            if (waiter) {
                /* Taken for a waiting task: counted as its descendant,
                 * so that the wait may run it. */
                t->parent = waiter;
                waiter->refs++;
            }
            T.foreign++;
            enqueue(t);
        }
        T.st.stolen += r.n;
        pthread_mutex_unlock(&T.mu);
        *all_done = 0;
        return (int)r.n;
    }
    return 0;
}

/* ---- the barrier's part ---- */

int shim_task_on(void)
{
    return __atomic_load_n(&T.on, __ATOMIC_ACQUIRE);
}

void shim_task_set_on(void)
{
    __atomic_store_n(&T.on, 1, __ATOMIC_RELEASE);
}

/* shim_task_barrier_end: the barrier is over (its DSM barrier passed, or
 * the region ended): the next one counts arrivals from zero. */
void shim_task_region_begin(int local_count, int team_ranks)
{
    pthread_mutex_lock(&T.mu);
    T.local_count = local_count;
    T.team_ranks = team_ranks;
    T.arrived = 0;
    T.phase++;
    pthread_mutex_unlock(&T.mu);
}

void shim_task_dsm_barrier(int in)
{
    pthread_mutex_lock(&T.mu);
    T.in_dsm_barrier = in;
    if (!in) {
        /* Out of it: the next phase, whose arrivals count from zero. */
        T.phase++;
        T.arrived = 0;
    }
    pthread_mutex_unlock(&T.mu);
}


void shim_task_barrier_end(void)
{
    pthread_mutex_lock(&T.mu);
    T.arrived = 0;
    pthread_mutex_unlock(&T.mu);
}

void shim_task_quiesce(void)
{
    pthread_mutex_lock(&T.mu);
    T.arrived++;
    if (!T.on) {
        /* No task on this rank (yet): nothing to wait for.  Counted all
         * the same, since the rank may turn tasks on (a thief's RQ_ON)
         * before its other threads arrive. */
        pthread_cond_broadcast(&T.cv);
        pthread_mutex_unlock(&T.mu);
        return;
    }
    pthread_mutex_unlock(&T.mu);
    drain_frees();
    pthread_mutex_lock(&T.mu);
    uint64_t gen = T.qgen;
    pthread_cond_broadcast(&T.cv);
    long backoff = 50;
    for (;;) {
        if (T.qgen != gen)
            break;
        if (publish_locked() || run_one_locked(NULL)) {
            backoff = 50;
            continue;
        }
        send_all_reports();
        int here_done = T.arrived == T.local_count && T.live == 0 && T.foreign == 0;
        if (T.team_ranks > 1 && !T.stealing) {
            T.stealing = 1;
            pthread_mutex_unlock(&T.mu);
            int all_done;
            int got = steal_round(&all_done, NULL, 0, NULL);
            pthread_mutex_lock(&T.mu);
            T.stealing = 0;
            if (got) {
                backoff = 50;
                continue;
            }
            here_done = T.arrived == T.local_count && T.live == 0 && T.foreign == 0 &&
                        T.nready == 0;
            if (here_done && all_done)
                goto release;
            timed_wait(backoff);
            if (backoff < STEAL_BACKOFF_MAX_US)
                backoff *= 2;
            continue;
        }
        if (here_done && T.team_ranks <= 1)
            goto release;
        if (T.stealing)
            timed_wait(1000);
        else
            idle_wait();
    }
    pthread_mutex_unlock(&T.mu);
    goto out;
release:
    T.qgen++;                   /* T.arrived: shim_task_barrier_end */
    pthread_cond_broadcast(&T.cv);
    pthread_mutex_unlock(&T.mu);
out:
    /* Every task bound to the team is complete: the implicit task's
     * dependences name only completed tasks now. */
    pthread_mutex_lock(&T.mu);
    shim_dep_table_free(implicit_task.deps);
    implicit_task.deps = NULL;
    pthread_mutex_unlock(&T.mu);
    drain_frees();
}

/* ---- the entry points ---- */

SHIM_EXPORT void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                           long arg_size, long arg_align, bool if_clause, unsigned flags,
                           void **depend, int priority, void *detach)
{
    shim_task_create(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority,
           (flags & TF_DETACH) ? (void **)detach : NULL, NULL, 0);
}

SHIM_EXPORT void GOMP_taskwait(void)
{
    struct task *self = current();
    pthread_mutex_lock(&T.mu);
    wait_zero(&self->kids, self);
    pthread_mutex_unlock(&T.mu);
    acquire_remote();
    drain_frees();
}

/* taskwait depend(...): waits for every child, a superset of those it
 * names (OpenMP allows a wait to last longer). */
SHIM_EXPORT void GOMP_taskwait_depend(void **depend)
{
    (void)depend;
    GOMP_taskwait();
}

SHIM_EXPORT void GOMP_taskyield(void)
{
    struct task *self = current();
    pthread_mutex_lock(&T.mu);
    struct task *t = pop(self);
    pthread_mutex_unlock(&T.mu);
    if (t)
        run_task(t);
}

SHIM_EXPORT void GOMP_taskgroup_start(void)
{
    struct task *self = current();
    struct task_group *g = shim_task_xcalloc(1, sizeof *g);
    struct task_group *outer = group_of(self);
    g->red = outer ? outer->red : T.region_red;
    pthread_mutex_lock(&T.mu);
    g->prev = self->groups;
    self->groups = g;
    pthread_mutex_unlock(&T.mu);
}

SHIM_EXPORT void GOMP_taskgroup_end(void)
{
    struct task *self = current();
    struct task_group *g = self->groups;
    if (!g)
        dsm__fatal("internal error: the end of a taskgroup that did not start");
    pthread_mutex_lock(&T.mu);
    wait_zero(&g->count, self);
    self->groups = g->prev;
    pthread_mutex_unlock(&T.mu);
    free(g);
    acquire_remote();
    drain_frees();
}

int shim_task_in_final(void)
{
    return current()->final;
}

uintptr_t *shim_task_reductions(void)
{
    struct task_group *g = group_of(current());
    return g ? g->red : T.region_red;
}

void shim_task_set_region_red(uintptr_t *red)
{
    T.region_red = red;
}

uintptr_t *shim_task_region_red(void)
{
    return T.region_red;
}

int shim_task_set_reductions(uintptr_t *red)
{
    struct task *self = current();
    if (!self->groups)
        return -1;
    self->groups->red = red;
    return 0;
}

SHIM_EXPORT void omp_fulfill_event(uintptr_t event)
{
    int owner = (int)(event >> 48) - 1;
    struct task *t = (struct task *)(event & (((uintptr_t)1 << 48) - 1));
    if (owner < 0 || owner >= shim.nodes || !t)
        dsm__fatal("omp_fulfill_event(%#lx): not an event handle of a detached task "
                   "(or one already fulfilled)", (unsigned long)event);
    if (owner != shim.rank) {
        pass_lock(owner);       /* the fulfilling thread's writes, released */
        struct rq_head h = { RQ_FULFILL, 1, 0, 0 };
        uint64_t ref = (uint64_t)(uintptr_t)t;
        (void)dsm__call(owner, SHIM_SVC_TASKS, &h, sizeof h, &ref, sizeof ref, NULL, 0,
                        NULL);
        return;
    }
    void *raw = NULL;
    pthread_mutex_lock(&T.mu);
    t->detach_pending = 0;
    t->fulfilled_here = 1;
    if (t->body_done) {
        complete(t);
        raw = t->raw;
        t->raw = NULL;
        shim_task_unref(t);
    }
    pthread_mutex_unlock(&T.mu);
    if (raw)
        shim_dsm_free(raw);
}

SHIM_EXPORT void omp_fulfill_event_(uintptr_t *event)
{
    omp_fulfill_event(*event);
}

void shim_task_stats(struct shim_task_stats *out)
{
    pthread_mutex_lock(&T.mu);
    *out = T.st;
    pthread_mutex_unlock(&T.mu);
}

/* With DSM_STATS=1 (beside libdsm's report): this rank's task counts, if
 * it used tasks.  At the end of the run, on the thread that finalises. */
void shim_task_report(void)
{
    const char *v = getenv("DSM_STATS");
    struct shim_task_stats st;
    shim_task_stats(&st);
    if (!v || strcmp(v, "1") || !(st.created || st.stolen || st.steal_calls))
        return;
    fprintf(stderr, "ompshim[rank %d]: tasks: %lu created here, %lu lent to other ranks, "
            "%lu stolen from them in %lu steal requests, %lu completion reports, %lu "
            "publications, %lu run at once (enough ready here)\n", shim.rank,
            (unsigned long)st.created, (unsigned long)st.lent, (unsigned long)st.stolen,
            (unsigned long)st.steal_calls, (unsigned long)st.reports,
            (unsigned long)st.publishes, (unsigned long)st.throttled);
}

void shim_task_init(void)
{
    int a = shim_setting_task_affinity();
    aff_on = a >= 0;
    aff_wait_s = a > 0 ? a * 1e-6 : 0;
    dsm__service_register(SHIM_SVC_TASKS, serve);
}
