/*
 * busy.c - the replay's busy-home rule (busy_service_us, dsmtool(1)): a
 * page request that reaches a home's communication thread while, at that
 * moment of the replay, an application thread of the home computes and
 * the home's host has no free core (its application threads that run -
 * computing, doing protocol work, or polling in a wait that did not sleep
 * - are at least its cores) is taken busy_service_us later: the
 * communication thread first has to get a core.  bench.sh calibrate
 * measures busy_service_us with benchmarks/micro/rmr_busy.
 *
 * What a thread does between two events is known from the trace (GAP_*:
 * compute, running, idle: a wait that slept); when a thread does it in the
 * replay is known once the replay has got there: a receive whose host has
 * an application thread not yet replayed up to its time is deferred (the
 * thread goes back into the replay's heap keyed by that time).
 * Single-threaded, called from sim.c.
 */
#include <stdlib.h>

#include "sim_int.h"

#define MSG_PAGE_REQ 1              /* libdsm/wire.h */

/* Per application thread: whether each wait (WAIT_BEGIN to WAIT_END)
 * slept, then the class of every gap, as sim.c's step() classifies it. */
static void classify(struct sim *s, const struct thr *h)
{
    const struct tr_thread *th = h->th;
    int depth = 0, in_handler = 0, in_wait = 0, slept = 0;
    unsigned char *g = s->gcls + h->base;
    for (size_t k = 0; k < th->n; k++) {
        const struct dsm_trace_rec *e = &th->ev[k];
        int waiting = in_wait && !in_handler;
        if (k == 0)
            g[k] = GAP_IDLE;
        else if (e->kind == DSM_TR_WAIT_END || waiting)
            g[k] = slept ? GAP_IDLE : GAP_RUN;
        else if (depth == 0 && e->kind != DSM_TR_RECV)
            g[k] = GAP_COMPUTE;
        else
            g[k] = GAP_RUN;
        if (e->kind == DSM_TR_RECV) in_handler = 1;
        if (e->kind == DSM_TR_HANDLED) in_handler = 0;
        if (e->kind == DSM_TR_WAIT_END) in_wait = 0;
        if (e->kind == DSM_TR_WAIT_BEGIN) {
            in_wait = 1;
            slept = 0;
            for (size_t j = k + 1; j < th->n; j++)
                if (th->ev[j].kind == DSM_TR_WAIT_END) {
                    slept = (th->ev[j].sub & 0x40) != 0;
                    break;
                }
        }
        if (is_enter(e->kind)) depth++;
        if (is_leave(e->kind) && depth > 0) depth--;
    }
}

int busy_setup(struct sim *s)
{
    const struct model *m = s->m;
    /* With costs or contention from the trace, the trace's own receive
     * times already hold the waits at busy homes. */
    s->busy = m->busy_service_us > 0 && !m->costs_from_trace && !m->contention_from_trace;
    if (!s->busy && !s->naps)           /* the nap rule asks gap_at too */
        return 0;
    s->gcls = calloc(s->nev + 1, 1);
    if (!s->gcls)
        return -1;
    for (int i = 0; i < s->nthr; i++)
        if (s->thr[i].th->role != DSM_TR_ROLE_COMM)
            classify(s, &s->thr[i]);
    return 0;
}

/* What application thread h does at time t (ns); the replay has reached t
 * on it (its last replayed event is at or after t, or it is blocked, in
 * its host's pool, or at its next gap). */
int gap_at(const struct sim *s, const struct thr *h, double t)
{
    if (h->next == 0)
        return GAP_IDLE;
    const double *T = s->T + h->base;
    size_t last = h->next - 1;
    if (t < T[last]) {
        size_t lo = 1, hi = last;       /* first replayed event after t */
        if (t < T[0])
            return GAP_IDLE;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (T[mid] > t) hi = mid; else lo = mid + 1;
        }
        return s->gcls[h->base + lo];
    }
    if (h->in_pool)
        return GAP_COMPUTE;
    return h->next < h->th->n ? s->gcls[h->base + h->next] : GAP_IDLE;
}

double busy_delay(struct sim *s, int rank, int ty, double t)
{
    if (!s->busy || ty != MSG_PAGE_REQ)
        return 0;
    int hid = s->host_of[rank], run = 0, home_computes = 0, ranks = 0;
    for (int r = 0; r < s->t->nranks; r++)
        ranks += s->host_of[r] == hid;
    for (int i = 0; i < s->nthr; i++) {
        const struct thr *h = &s->thr[i];
        if (s->host_of[h->rank] != hid || h->th->role == DSM_TR_ROLE_COMM)
            continue;
        if (s->in_heap[i] && h->cur < t && h->next < h->th->n)
            return -1;                  /* not replayed up to t yet */
    }
    for (int i = 0; i < s->nthr; i++) {
        const struct thr *h = &s->thr[i];
        if (s->host_of[h->rank] != hid || h->th->role == DSM_TR_ROLE_COMM)
            continue;
        int st = gap_at(s, h, t);
        run += st != GAP_IDLE;
        home_computes |= h->rank == rank && st == GAP_COMPUTE;
    }
    /* cores = 0: a core per rank */
    int cores = s->m->cores > 0 ? s->m->cores : ranks;
    if (!home_computes || run < cores)
        return 0;
    s->busy_n++;
    return s->m->busy_service_us * 1e3;
}
