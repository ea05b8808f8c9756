/*
 * loop.c - worksharing loops (GOMP_loop_*, long and unsigned long long),
 * their combined parallel forms, and ordered.
 *
 * Every thread of a team meets the team's work-share constructs in the same
 * order, so each construct gets the same generation number on every thread
 * (region sequence << 24 | construct count) and one of SHIM_WS_SLOTS shared
 * {generation, position} counters at node 0.  Static schedules are computed
 * locally.  Dynamic and guided chunks come from the counter with one remote
 * operation at its home (ws_grab_at_home, registered with libdsm as a pair
 * operation at start-up): the first grab of a new generation resets it, and a
 * counter already at a later generation means this loop is used up (a
 * thread moves on to a later construct only after seeing it used up), so
 * slots need no other synchronisation.  Ordered: a second counter holds the
 * token, the start of the next chunk allowed in; ordered regions also hold
 * a DSM lock, so that what one writes is visible to the next.
 *
 * Threads: OpenMP threads (any rank); ws_grab_at_home at node 0, on its
 * communication thread or on the OpenMP thread that grabs there.
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "shim.h"
#include "gomp_abi.h"

/* The grab, at the counter's home under libdsm's pair mutex: a generation,
 * b iteration count, c chunk, d guided threads (0: dynamic).  Returns the
 * chunk's first iteration and its size in *r2 (0: the loop is used up). */
static uint64_t ws_grab_at_home(uint64_t w[2], uint64_t gen, uint64_t n, uint64_t chunk,
                                uint64_t guided, uint64_t *r2)
{
    if (w[0] < gen) {
        w[0] = gen;
        w[1] = 0;
    }
    if (w[0] > gen || w[1] >= n) {
        *r2 = 0;                  /* this work-share is used up */
        return n;
    }
    uint64_t rem = n - w[1], sz = chunk ? chunk : 1;
    if (guided) {
        uint64_t q = (rem + guided - 1) / guided;
        if (q > sz)
            sz = q;
    }
    if (sz > rem)
        sz = rem;
    uint64_t r = w[1];
    *r2 = sz;
    w[1] += sz;
    return r;
}

void shim_loop_register(void)
{
    dsm__atomic_register(SHIM_PAIR_WS_GRAB, ws_grab_at_home);
}

void shim_ws_begin(struct shim_thr *t)
{
    t->ws++;
    t->gen = t->seq << 24 | (t->ws & 0xffffff);
    t->slot = (int)(t->ws % SHIM_WS_SLOTS);
    t->local_pos = 0;
}

/* Dynamic schedules with several threads on a rank: one remote grab takes
 * a chunk for each of them, and they share it here. */
static struct {
    pthread_mutex_t mu;
    struct { uint64_t gen, pos, end; } slot[SHIM_WS_SLOTS];
} batch = { .mu = PTHREAD_MUTEX_INITIALIZER };

static uint64_t batched_grab(struct shim_thr *t, uint64_t n, uint64_t chunk, int local,
                             uint64_t *size)
{
    uint64_t a, sz;
    pthread_mutex_lock(&batch.mu);
    __typeof__(&batch.slot[0]) e = &batch.slot[t->slot];
    if (e->gen != t->gen || e->pos >= e->end) {
        if (e->gen == t->gen && e->end == 0) {
            pthread_mutex_unlock(&batch.mu);     /* used up */
            *size = 0;
            return n;
        }
        a = dsm__atomic(&shim.ws[t->slot], SHIM_AOP_WS_GRAB, 16, t->gen, n,
                        chunk * (uint64_t)local, 0, &sz);
        e->gen = t->gen;
        e->pos = sz ? a : 0;
        e->end = sz ? a + sz : 0;
        if (!sz) {
            pthread_mutex_unlock(&batch.mu);
            *size = 0;
            return n;
        }
    }
    a = e->pos;
    sz = e->end - a < chunk ? e->end - a : chunk;
    e->pos += sz;
    pthread_mutex_unlock(&batch.mu);
    *size = sz;
    return a;
}

uint64_t shim_ws_grab(struct shim_thr *t, uint64_t n, uint64_t chunk,
                      uint64_t guided_threads, uint64_t *size)
{
    if (chunk == 0)
        chunk = 1;
    if (t->size == 1) {
        uint64_t a = t->local_pos;
        if (a >= n) {
            *size = 0;
            return n;
        }
        uint64_t sz = guided_threads ? n - a : chunk;
        if (sz > n - a)
            sz = n - a;
        t->local_pos = a + sz;
        *size = sz;
        return a;
    }
    int local = shim_local_count();
    if (!guided_threads && local > 1)
        return batched_grab(t, n, chunk, local, size);
    return dsm__atomic(&shim.ws[t->slot], SHIM_AOP_WS_GRAB, 16, t->gen, n, chunk,
                       guided_threads, size);
}

void shim_loop_init(struct shim_thr *t, const struct shim_loop_desc *d, int ordered)
{
    t->lp = *d;
    if (t->lp.sched == SHIM_SCHED_RUNTIME) {
        t->lp.sched = (int)((unsigned)shim.icv_sched & ~SHIM_SCHED_MONOTONIC);
        t->lp.chunk = shim.icv_chunk;
    }
    if (t->lp.sched == SHIM_SCHED_AUTO) {
        t->lp.sched = SHIM_SCHED_STATIC;
        t->lp.chunk = 0;
    }
    if (t->lp.sched != SHIM_SCHED_STATIC && t->lp.chunk == 0)
        t->lp.chunk = 1;
    t->next = 0;
    t->ordered = ordered && t->size > 1;
    t->cur_s = t->cur_e = 0;
    t->turn = 0;
}

/* ---- ordered ---- */

static void wait_turn(struct shim_thr *t, uint64_t s)
{
    for (unsigned spins = 0;; spins++) {
        uint64_t pos, gen = dsm__atomic(&shim.ord[t->slot], DSM_AOP_PAIR_LOAD, 16,
                                        0, 0, 0, 0, &pos);
        if ((gen == t->gen && pos == s) || (gen < t->gen && s == 0))
            return;
        if (gen > t->gen)
            dsm__fatal("internal error: ordered token of work-share %#lx seen at %#lx",
                       (unsigned long)t->gen, (unsigned long)gen);
        if (spins > 2)
            sched_yield();
    }
}

void shim_ordered_pass(struct shim_thr *t)
{
    if (!t->ordered || t->cur_e <= t->cur_s)
        return;
    if (!t->turn)
        wait_turn(t, t->cur_s);
    dsm__atomic(&shim.ord[t->slot], DSM_AOP_PAIR_STORE, 16, t->gen, t->cur_e, 0, 0, NULL);
    t->cur_s = t->cur_e = 0;
    t->turn = 0;
}

SHIM_EXPORT void GOMP_ordered_start(void)
{
    struct shim_thr *t = shim_self();
    if (!t->ordered)
        return;
    if (!t->turn) {
        wait_turn(t, t->cur_s);
        t->turn = 1;
    }
    dsm_lock_acquire(SHIM_LOCK_ORDERED);
}

SHIM_EXPORT void GOMP_ordered_end(void)
{
    struct shim_thr *t = shim_self();
    if (t->ordered)
        dsm_lock_release(SHIM_LOCK_ORDERED);
}

/* ---- the iteration engine ---- */

bool shim_loop_next_iter(struct shim_thr *t, uint64_t *a, uint64_t *b)
{
    struct shim_loop_desc *d = &t->lp;
    uint64_t n = d->n, s, e, sz;

    shim_ordered_pass(t);
    if (d->sched == SHIM_SCHED_STATIC) {
        uint64_t nt = (uint64_t)t->size, me = (uint64_t)t->num;
        if (d->chunk == 0) {
            if (t->next++ > 0)
                return false;
            uint64_t q = n / nt, r = n % nt;
            s = me < r ? me * (q + 1) : r * (q + 1) + (me - r) * q;
            e = s + (me < r ? q + 1 : q);
        } else {
            uint64_t k = t->next++ * nt + me;
            if (k != 0 && (k * d->chunk) / d->chunk != k)
                return false;                   /* overflow: past the end */
            s = k * d->chunk;
            if (s >= n)
                return false;
            e = n - s < d->chunk ? n : s + d->chunk;
        }
        if (s >= e)
            return false;
    } else {
        s = shim_ws_grab(t, n, d->chunk,
                         d->sched == SHIM_SCHED_GUIDED ? (uint64_t)t->size : 0, &sz);
        if (sz == 0)
            return false;
        e = s + sz;
    }
    if (t->ordered) {
        t->cur_s = s;
        t->cur_e = e;
        t->turn = 0;
    }
    *a = s;
    *b = e;
    return true;
}

/* ---- long loops ---- */

static void desc_long(struct shim_loop_desc *d, int sched, long start, long end, long incr,
                      long chunk)
{
    memset(d, 0, sizeof *d);
    d->sched = sched;
    d->up = incr > 0;
    d->lstart = start;
    d->lincr = incr;
    __int128 n = 0;
    if (incr > 0 && end > start)
        n = ((__int128)end - start + incr - 1) / incr;
    else if (incr < 0 && start > end)
        n = ((__int128)start - end - incr - 1) / -(__int128)incr;
    d->n = (uint64_t)n;
    d->chunk = chunk > 0 ? (uint64_t)chunk : 0;
}

static bool next_long(long *istart, long *iend)
{
    struct shim_thr *t = shim_self();
    uint64_t a, b;
    if (!shim_loop_next_iter(t, &a, &b))
        return false;
    *istart = (long)((unsigned long)t->lp.lstart + (unsigned long)a * (unsigned long)t->lp.lincr);
    *iend = (long)((unsigned long)t->lp.lstart + (unsigned long)b * (unsigned long)t->lp.lincr);
    return true;
}

static bool start_long(int sched, long start, long end, long incr, long chunk,
                       long *istart, long *iend, int ordered)
{
    struct shim_thr *t = shim_self();
    struct shim_loop_desc d;
    desc_long(&d, sched, start, end, incr, chunk);
    shim_ws_begin(t);
    shim_loop_init(t, &d, ordered);
    if (!istart)
        return true;
    return next_long(istart, iend);
}

#define LONG_START(name, sched, ord)                                              \
    SHIM_EXPORT bool name(long start, long end, long incr, long chunk,            \
                          long *istart, long *iend)                               \
    { return start_long(sched, start, end, incr, chunk, istart, iend, ord); }
#define LONG_RUNTIME_START(name, ord)                                             \
    SHIM_EXPORT bool name(long start, long end, long incr, long *istart, long *iend) \
    { return start_long(SHIM_SCHED_RUNTIME, start, end, incr, 0, istart, iend, ord); }
#define LONG_NEXT(name)                                                           \
    SHIM_EXPORT bool name(long *istart, long *iend) { return next_long(istart, iend); }

LONG_START(GOMP_loop_static_start, SHIM_SCHED_STATIC, 0)
LONG_START(GOMP_loop_dynamic_start, SHIM_SCHED_DYNAMIC, 0)
LONG_START(GOMP_loop_guided_start, SHIM_SCHED_GUIDED, 0)
LONG_START(GOMP_loop_nonmonotonic_dynamic_start, SHIM_SCHED_DYNAMIC, 0)
LONG_START(GOMP_loop_nonmonotonic_guided_start, SHIM_SCHED_GUIDED, 0)
LONG_RUNTIME_START(GOMP_loop_runtime_start, 0)
LONG_RUNTIME_START(GOMP_loop_nonmonotonic_runtime_start, 0)
LONG_RUNTIME_START(GOMP_loop_maybe_nonmonotonic_runtime_start, 0)
LONG_START(GOMP_loop_ordered_static_start, SHIM_SCHED_STATIC, 1)
LONG_START(GOMP_loop_ordered_dynamic_start, SHIM_SCHED_DYNAMIC, 1)
LONG_START(GOMP_loop_ordered_guided_start, SHIM_SCHED_GUIDED, 1)
LONG_RUNTIME_START(GOMP_loop_ordered_runtime_start, 1)
LONG_NEXT(GOMP_loop_static_next)
LONG_NEXT(GOMP_loop_dynamic_next)
LONG_NEXT(GOMP_loop_guided_next)
LONG_NEXT(GOMP_loop_nonmonotonic_dynamic_next)
LONG_NEXT(GOMP_loop_nonmonotonic_guided_next)
LONG_NEXT(GOMP_loop_runtime_next)
LONG_NEXT(GOMP_loop_nonmonotonic_runtime_next)
LONG_NEXT(GOMP_loop_maybe_nonmonotonic_runtime_next)
LONG_NEXT(GOMP_loop_ordered_static_next)
LONG_NEXT(GOMP_loop_ordered_dynamic_next)
LONG_NEXT(GOMP_loop_ordered_guided_next)
LONG_NEXT(GOMP_loop_ordered_runtime_next)

static int decode_sched(long sched, long *chunk)
{
    int s = (int)((unsigned long)sched & ~(unsigned long)SHIM_SCHED_MONOTONIC);
    if (s < SHIM_SCHED_RUNTIME || s > SHIM_SCHED_AUTO)
        dsm__fatal("GOMP_loop_start: unknown schedule %ld", sched);
    if (s == SHIM_SCHED_RUNTIME || s == SHIM_SCHED_AUTO)
        *chunk = 0;
    return s;
}

static void no_task_reductions(const char *fn, uintptr_t *reductions, void **mem)
{
    if (reductions)
        shim_unsupported(fn ? "a worksharing loop with task reductions" : "");
    if (mem)
        shim_unsupported("a worksharing construct with lastprivate(conditional:) or "
                         "inscan reductions (GOMP_loop_start with a buffer)");
}

SHIM_EXPORT bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk,
                                 long *istart, long *iend, uintptr_t *reductions, void **mem)
{
    no_task_reductions("GOMP_loop_start", reductions, mem);
    int s = decode_sched(sched, &chunk);
    return start_long(s, start, end, incr, chunk, istart, iend, 0);
}

SHIM_EXPORT bool GOMP_loop_ordered_start(long start, long end, long incr, long sched,
                                         long chunk, long *istart, long *iend,
                                         uintptr_t *reductions, void **mem)
{
    no_task_reductions("GOMP_loop_ordered_start", reductions, mem);
    int s = decode_sched(sched, &chunk);
    return start_long(s, start, end, incr, chunk, istart, iend, 1);
}

SHIM_EXPORT void GOMP_loop_end(void)
{
    struct shim_thr *t = shim_self();
    shim_ordered_pass(t);
    shim_team_barrier();
}

SHIM_EXPORT void GOMP_loop_end_nowait(void)
{
    shim_ordered_pass(shim_self());
}

SHIM_EXPORT bool GOMP_loop_end_cancel(void)
{
    GOMP_loop_end();
    return false;
}

/* ---- unsigned long long loops ---- */

typedef unsigned long long ull;

static void desc_ull(struct shim_loop_desc *d, int sched, bool up, ull start, ull end,
                     ull incr, ull chunk)
{
    memset(d, 0, sizeof *d);
    d->sched = sched;
    d->ull = 1;
    d->up = up;
    d->ustart = start;
    d->uincr = incr;
    unsigned __int128 n = 0;
    if (up && end > start)
        n = ((unsigned __int128)end - start + incr - 1) / incr;
    else if (!up && start > end)
        n = ((unsigned __int128)start - end + (ull)(-incr) - 1) / (ull)(-incr);
    d->n = (uint64_t)n;
    d->chunk = chunk;
}

static bool next_ull(ull *istart, ull *iend)
{
    struct shim_thr *t = shim_self();
    uint64_t a, b;
    if (!shim_loop_next_iter(t, &a, &b))
        return false;
    *istart = t->lp.ustart + a * t->lp.uincr;
    *iend = t->lp.ustart + b * t->lp.uincr;
    return true;
}

static bool start_ull(int sched, bool up, ull start, ull end, ull incr, ull chunk,
                      ull *istart, ull *iend, int ordered)
{
    struct shim_thr *t = shim_self();
    struct shim_loop_desc d;
    desc_ull(&d, sched, up, start, end, incr, chunk);
    shim_ws_begin(t);
    shim_loop_init(t, &d, ordered);
    if (!istart)
        return true;
    return next_ull(istart, iend);
}

#define ULL_START(name, sched, ord)                                               \
    SHIM_EXPORT bool name(bool up, ull start, ull end, ull incr, ull chunk,       \
                          ull *istart, ull *iend)                                 \
    { return start_ull(sched, up, start, end, incr, chunk, istart, iend, ord); }
#define ULL_RUNTIME_START(name, ord)                                              \
    SHIM_EXPORT bool name(bool up, ull start, ull end, ull incr, ull *istart,     \
                          ull *iend)                                              \
    { return start_ull(SHIM_SCHED_RUNTIME, up, start, end, incr, 0, istart, iend, ord); }
#define ULL_NEXT(name)                                                            \
    SHIM_EXPORT bool name(ull *istart, ull *iend) { return next_ull(istart, iend); }

ULL_START(GOMP_loop_ull_static_start, SHIM_SCHED_STATIC, 0)
ULL_START(GOMP_loop_ull_dynamic_start, SHIM_SCHED_DYNAMIC, 0)
ULL_START(GOMP_loop_ull_guided_start, SHIM_SCHED_GUIDED, 0)
ULL_START(GOMP_loop_ull_nonmonotonic_dynamic_start, SHIM_SCHED_DYNAMIC, 0)
ULL_START(GOMP_loop_ull_nonmonotonic_guided_start, SHIM_SCHED_GUIDED, 0)
ULL_RUNTIME_START(GOMP_loop_ull_runtime_start, 0)
ULL_RUNTIME_START(GOMP_loop_ull_nonmonotonic_runtime_start, 0)
ULL_RUNTIME_START(GOMP_loop_ull_maybe_nonmonotonic_runtime_start, 0)
ULL_START(GOMP_loop_ull_ordered_static_start, SHIM_SCHED_STATIC, 1)
ULL_START(GOMP_loop_ull_ordered_dynamic_start, SHIM_SCHED_DYNAMIC, 1)
ULL_START(GOMP_loop_ull_ordered_guided_start, SHIM_SCHED_GUIDED, 1)
ULL_RUNTIME_START(GOMP_loop_ull_ordered_runtime_start, 1)
ULL_NEXT(GOMP_loop_ull_static_next)
ULL_NEXT(GOMP_loop_ull_dynamic_next)
ULL_NEXT(GOMP_loop_ull_guided_next)
ULL_NEXT(GOMP_loop_ull_nonmonotonic_dynamic_next)
ULL_NEXT(GOMP_loop_ull_nonmonotonic_guided_next)
ULL_NEXT(GOMP_loop_ull_runtime_next)
ULL_NEXT(GOMP_loop_ull_nonmonotonic_runtime_next)
ULL_NEXT(GOMP_loop_ull_maybe_nonmonotonic_runtime_next)
ULL_NEXT(GOMP_loop_ull_ordered_static_next)
ULL_NEXT(GOMP_loop_ull_ordered_dynamic_next)
ULL_NEXT(GOMP_loop_ull_ordered_guided_next)
ULL_NEXT(GOMP_loop_ull_ordered_runtime_next)

SHIM_EXPORT bool GOMP_loop_ull_start(bool up, ull start, ull end, ull incr, long sched,
                                     ull chunk, ull *istart, ull *iend,
                                     uintptr_t *reductions, void **mem)
{
    long c = (long)chunk;
    no_task_reductions("GOMP_loop_ull_start", reductions, mem);
    int s = decode_sched(sched, &c);
    return start_ull(s, up, start, end, incr, (ull)c, istart, iend, 0);
}

SHIM_EXPORT bool GOMP_loop_ull_ordered_start(bool up, ull start, ull end, ull incr,
                                             long sched, ull chunk, ull *istart,
                                             ull *iend, uintptr_t *reductions, void **mem)
{
    long c = (long)chunk;
    no_task_reductions("GOMP_loop_ull_ordered_start", reductions, mem);
    int s = decode_sched(sched, &c);
    return start_ull(s, up, start, end, incr, (ull)c, istart, iend, 1);
}

/* ---- combined parallel loops ---- */

static void par_loop(void (*fn)(void *), void *data, unsigned nthr, int sched, long start,
                     long end, long incr, long chunk, int run_fn)
{
    struct shim_loop_desc d;
    desc_long(&d, sched, start, end, incr, chunk);
    if (run_fn)
        shim_parallel(fn, data, nthr, 1, &d, 0);
    else
        shim_parallel_start(fn, data, nthr, 1, &d, 0);
}

#define PAR_LOOP(name, sched)                                                     \
    SHIM_EXPORT void name(void (*fn)(void *), void *data, unsigned nthr, long start, \
                          long end, long incr, long chunk, unsigned flags)        \
    { (void)flags; par_loop(fn, data, nthr, sched, start, end, incr, chunk, 1); }
#define PAR_LOOP_RT(name)                                                         \
    SHIM_EXPORT void name(void (*fn)(void *), void *data, unsigned nthr, long start, \
                          long end, long incr, unsigned flags)                    \
    { (void)flags; par_loop(fn, data, nthr, SHIM_SCHED_RUNTIME, start, end, incr, 0, 1); }
#define PAR_LOOP_START(name, sched)                                               \
    SHIM_EXPORT void name(void (*fn)(void *), void *data, unsigned nthr, long start, \
                          long end, long incr, long chunk)                        \
    { par_loop(fn, data, nthr, sched, start, end, incr, chunk, 0); }

PAR_LOOP(GOMP_parallel_loop_static, SHIM_SCHED_STATIC)
PAR_LOOP(GOMP_parallel_loop_dynamic, SHIM_SCHED_DYNAMIC)
PAR_LOOP(GOMP_parallel_loop_guided, SHIM_SCHED_GUIDED)
PAR_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic, SHIM_SCHED_DYNAMIC)
PAR_LOOP(GOMP_parallel_loop_nonmonotonic_guided, SHIM_SCHED_GUIDED)
PAR_LOOP_RT(GOMP_parallel_loop_runtime)
PAR_LOOP_RT(GOMP_parallel_loop_nonmonotonic_runtime)
PAR_LOOP_RT(GOMP_parallel_loop_maybe_nonmonotonic_runtime)
PAR_LOOP_START(GOMP_parallel_loop_static_start, SHIM_SCHED_STATIC)
PAR_LOOP_START(GOMP_parallel_loop_dynamic_start, SHIM_SCHED_DYNAMIC)
PAR_LOOP_START(GOMP_parallel_loop_guided_start, SHIM_SCHED_GUIDED)

SHIM_EXPORT void GOMP_parallel_loop_runtime_start(void (*fn)(void *), void *data,
                                                  unsigned nthr, long start, long end,
                                                  long incr)
{
    par_loop(fn, data, nthr, SHIM_SCHED_RUNTIME, start, end, incr, 0, 0);
}
