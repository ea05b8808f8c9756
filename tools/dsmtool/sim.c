/*
 * sim.c - the replay: every thread of every rank steps through its events;
 * the time between two events is recomputed from the model, and an event
 * that depends on another thread waits for it:
 *
 *   - a RECV waits for its matching SEND's arrival: send time + send_us +
 *     (latency_us + bytes x byte_ns) x net_factor, with the link models'
 *     queueing; on an idle communication thread (with service_at = any
 *     also a thread receiving in a wait), service_us more; but with a
 *     measured xfer_us / xfer_wait_us for its type, an idle receiver
 *     takes it that long after the SEND instead;
 *     a PAGE_REPLY that is its rank's first copy of the page takes
 *     xfer_first_us instead (firstcopy.c); with comm_naps, an idle
 *     communication thread takes it (at xfer_wait_us) when its nap ends
 *     (commnap.c);
 *     the receiver then spends recv_us; a page request to a communication
 *     thread whose rank computes on a host with no free core, busy_service_us
 *     more (busy.c);
 *   - a WAIT_END waits for the COMPLETE that ended it (the handling of the
 *     last reply), plus, when another thread completed it, wake_us if the
 *     waiter slept and poll_us if it polled;
 *   - a communication thread's SEND outside any handler (a deferred reply)
 *     waits for the latest event of its rank's other threads before it;
 *   - gaps outside the library are compute: cpu_factor x wall, or with
 *     compute = cpu cpu_factor x thread CPU time of work, which with
 *     cores > 0 runs on the host's cores shared with its other computing
 *     threads and bg_threads (processor sharing: struct host);
 *   - gaps inside the library, not waiting, are protocol work: cpu_factor x
 *     the traced gap; a fault adds fault_us.
 *   - idle gaps (before a RECV, inside a wait outside handlers) vanish.
 *
 * Threads are stepped in order of their current time (a heap), so links
 * are reserved in nearly time order; a thread computing on shared cores
 * leaves the heap until its host's pool says it is done.  With costs or
 * contention = trace, the measured times come from the trace first
 * (trace_costs, tracecost.c).  Single-threaded.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "sim_int.h"



/* ---- matching ---- */

struct key {
    uint64_t k1, k2, k3;
    uint64_t t;
    long id;
    int is_recv;
    int sub;
};

static int cmp_key(const void *a, const void *b)
{
    const struct key *x = a, *y = b;
    if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
    if (x->k2 != y->k2) return x->k2 < y->k2 ? -1 : 1;
    if (x->k3 != y->k3) return x->k3 < y->k3 ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->is_recv != y->is_recv) return x->is_recv - y->is_recv;
    return x->id < y->id ? -1 : x->id > y->id;
}

int build_deps(struct sim *s, long *unmatched_recvs, long *unmatched_waits)
{
    size_t nk = 0, cap = 1024;
    struct key *keys = malloc(cap * sizeof *keys);
    if (!keys)
        return -1;
    for (size_t i = 0; i < s->nev; i++)
        s->dep[i] = -1;
    /* Messages: (src, dst, type, waiter, id|flags) in FIFO order. */
    for (int i = 0; i < s->nthr; i++) {
        struct thr *h = &s->thr[i];
        for (size_t k = 0; k < h->th->n; k++) {
            const struct dsm_trace_rec *r = &h->th->ev[k];
            int src, dst;
            if (r->kind == DSM_TR_SEND) { src = h->rank; dst = r->peer; }
            else if (r->kind == DSM_TR_RECV) { src = r->peer; dst = h->rank; }
            else continue;
            if (nk == cap) {
                cap *= 2;
                keys = realloc(keys, cap * sizeof *keys);
                if (!keys)
                    return -1;
            }
            struct key *x = &keys[nk++];
            x->k1 = (uint64_t)(uint32_t)src << 32 | (uint32_t)dst;
            x->k2 = (uint64_t)r->sub << 32 | (r->a >> 32);
            x->k3 = r->b;
            x->t = r->t;
            x->id = (long)(h->base + k);
            x->is_recv = r->kind == DSM_TR_RECV;
        }
    }
    qsort(keys, nk, sizeof *keys, cmp_key);
    for (size_t i = 0; i < nk;) {
        size_t j = i, ns = 0, nr = 0;
        while (j < nk && keys[j].k1 == keys[i].k1 && keys[j].k2 == keys[i].k2 &&
               keys[j].k3 == keys[i].k3)
            j++;
        /* pair the n-th send with the n-th receive of the group */
        long *sends = malloc((j - i) * sizeof *sends);
        if (!sends)
            return -1;
        for (size_t q = i; q < j; q++) {
            if (!keys[q].is_recv)
                sends[ns++] = keys[q].id;
        }
        for (size_t q = i; q < j; q++) {
            if (!keys[q].is_recv)
                continue;
            if (nr < ns)
                s->dep[keys[q].id] = sends[nr];
            else
                (*unmatched_recvs)++;
            nr++;
        }
        free(sends);
        i = j;
    }
    /* Waits: per (rank, slot), the COMPLETE since the previous WAIT_END. */
    nk = 0;
    for (int i = 0; i < s->nthr; i++) {
        struct thr *h = &s->thr[i];
        for (size_t k = 0; k < h->th->n; k++) {
            const struct dsm_trace_rec *r = &h->th->ev[k];
            if (r->kind != DSM_TR_COMPLETE && r->kind != DSM_TR_WAIT_END)
                continue;
            if (nk == cap) {
                cap *= 2;
                keys = realloc(keys, cap * sizeof *keys);
                if (!keys)
                    return -1;
            }
            struct key *x = &keys[nk++];
            x->k1 = (uint64_t)h->rank;
            x->k2 = r->a;
            x->k3 = 0;
            x->sub = r->sub;
            x->t = r->t;
            x->id = (long)(h->base + k);
            x->is_recv = r->kind == DSM_TR_WAIT_END;   /* COMPLETE sorts first on ties */
        }
    }
    qsort(keys, nk, sizeof *keys, cmp_key);
    long pending = -1;
    for (size_t i = 0; i < nk; i++) {
        if (i > 0 && (keys[i].k1 != keys[i - 1].k1 || keys[i].k2 != keys[i - 1].k2))
            pending = -1;
        if (!keys[i].is_recv) {
            pending = keys[i].id;
        } else {
            if (pending >= 0)
                s->dep[keys[i].id] = pending;
            else if (!(keys[i].sub & 0x80))
                (*unmatched_waits)++;    /* 0x80: it never waited (no reply expected) */
            pending = -1;
        }
    }
    free(keys);
    return 0;
}

/* A communication thread's SEND outside handlers: the latest event of the
 * rank's other threads recorded before it. */
static void service_send_deps(struct sim *s)
{
    for (int i = 0; i < s->nthr; i++) {
        struct thr *h = &s->thr[i];
        if (h->th->role != DSM_TR_ROLE_COMM)
            continue;
        int open = 0;
        for (size_t k = 0; k < h->th->n; k++) {
            const struct dsm_trace_rec *r = &h->th->ev[k];
            if (r->kind == DSM_TR_RECV) open = 1;
            else if (r->kind == DSM_TR_HANDLED) open = 0;
            if (r->kind != DSM_TR_SEND || open)
                continue;
            long best = -1;
            uint64_t bt = 0;
            for (int j = 0; j < s->nthr; j++) {
                struct thr *o = &s->thr[j];
                if (o->rank != h->rank || j == i || !o->th->n)
                    continue;
                size_t lo = 0, hi = o->th->n;    /* first event with t > r->t */
                while (lo < hi) {
                    size_t mid = (lo + hi) / 2;
                    if (o->th->ev[mid].t <= r->t) lo = mid + 1; else hi = mid;
                }
                if (lo > 0 && (best < 0 || o->th->ev[lo - 1].t > bt)) {
                    best = (long)(o->base + lo - 1);
                    bt = o->th->ev[lo - 1].t;
                }
            }
            s->dep[h->base + k] = best;
        }
    }
}

/* Per event: cpu/wall of the compute interval that contains its gap. */
static void compute_ratios(struct sim *s)
{
    for (int i = 0; i < s->nthr; i++) {
        struct thr *h = &s->thr[i];
        double r = 1.0;
        for (size_t k = h->th->n; k-- > 0;) {
            const struct dsm_trace_rec *e = &h->th->ev[k];
            if (e->kind == DSM_TR_COMPUTE)
                r = e->a ? (double)e->b / (double)e->a : 1.0;
            if (r > 1.0)
                r = 1.0;
            s->ratio[h->base + k] = r;
        }
    }
}

struct edge { uint64_t t; int d; };

static int cmp_edge(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->d - y->d;                 /* an end before a start at the same time */
}

/* The other programs' runnable threads on host hid, from the trace: its
 * compute intervals got the CPU share u = thread CPU / wall, while on average N of the
 * host's own application threads computed at once (as a computing thread
 * saw it: the integral of N^2 over that of N); processor sharing gives
 * u = cores / (N + bg).  All intervals count: a short one has its CPU
 * time estimated as its wall time, and the next reading corrects it. */
double host_bg(const struct sim *s, int hid, double *share)
{
    double cpu = 0, wall = 0, i1 = 0, i2 = 0;
    size_t ne = 0, cap = 0;
    struct edge *e = NULL;
    for (int i = 0; i < s->nthr; i++) {
        const struct thr *h = &s->thr[i];
        if (s->host_of[h->rank] != hid || h->th->role == DSM_TR_ROLE_COMM)
            continue;
        for (size_t k = 0; k < h->th->n; k++) {
            const struct dsm_trace_rec *r = &h->th->ev[k];
            if (r->kind != DSM_TR_COMPUTE || !r->a || r->a > r->t)
                continue;
            wall += (double)r->a;
            cpu += (double)(r->b < r->a ? r->b : r->a);
            if (ne + 2 > cap) {
                cap = cap ? 2 * cap : 4096;
                struct edge *ne2 = realloc(e, cap * sizeof *e);
                if (!ne2) { free(e); return 0; }
                e = ne2;
            }
            e[ne].t = r->t - r->a; e[ne++].d = 1;
            e[ne].t = r->t; e[ne++].d = -1;
        }
    }
    if (ne)
        qsort(e, ne, sizeof *e, cmp_edge);
    int c = 0;
    for (size_t k = 0; k < ne; k++) {
        if (k > 0) {
            double dt = (double)(e[k].t - e[k - 1].t);
            i1 += c * dt;
            i2 += (double)c * c * dt;
        }
        c += e[k].d;
    }
    free(e);
    double u = wall > 0 ? cpu / wall : 1, nown = i1 > 0 ? i2 / i1 : 1;
    if (share)
        *share = u;
    if (u <= 0 || s->m->cores <= 0)
        return 0;
    double bg = (double)s->m->cores / u - nown;
    return bg > 0 ? bg : 0;
}

/* Hosts: ranks_per_host consecutive ranks, or as the trace's headers say. */
int setup_hosts(struct sim *s)
{
    const struct tr_trace *t = s->t;
    const struct model *m = s->m;
    s->host_of = calloc((size_t)t->nranks + 1, sizeof *s->host_of);
    s->host = calloc((size_t)t->nranks + 1, sizeof *s->host);
    if (!s->host_of || !s->host)
        return -1;
    s->nhost = 0;
    for (int i = 0; i < t->nranks; i++) {
        int h = -1;
        if (m->ranks_per_host > 0) {
            h = i / m->ranks_per_host;
        } else {
            for (int j = 0; j < i && h < 0; j++)
                if (!strncmp(t->r[j].h.host, t->r[i].h.host, sizeof t->r[i].h.host))
                    h = s->host_of[j];
        }
        if (h < 0)
            h = s->nhost;
        if (h >= s->nhost)
            s->nhost = h + 1;
        s->host_of[i] = h;
    }
    s->ps = m->compute == COMPUTE_CPU && m->cores > 0;
    for (int h = 0; h < s->nhost; h++) {
        s->host[h].bg = m->bg_threads;
        if (s->ps && m->bg_from_trace)
            s->host[h].bg = host_bg(s, h, NULL);
    }
    return 0;
}

/* ---- the heap of threads by current time ---- */

/* A thread's place in the heap: its current time, or later if deferred. */
static double hkey(const struct sim *s, int i)
{
    return s->thr[i].cur > s->thr[i].defer ? s->thr[i].cur : s->thr[i].defer;
}

static int hless(struct sim *s, int a, int b) { return hkey(s, a) < hkey(s, b); }

static void hpush(struct sim *s, int i)
{
    if (s->in_heap[i])
        return;
    s->in_heap[i] = 1;
    int c = s->nheap++;
    s->heap[c] = i;
    while (c > 0) {
        int p = (c - 1) / 2;
        if (!hless(s, s->heap[c], s->heap[p]))
            break;
        int x = s->heap[c]; s->heap[c] = s->heap[p]; s->heap[p] = x;
        c = p;
    }
}

static int hpop(struct sim *s)
{
    int top = s->heap[0];
    s->heap[0] = s->heap[--s->nheap];
    int c = 0;
    for (;;) {
        int l = 2 * c + 1, r = l + 1, m = c;
        if (l < s->nheap && hless(s, s->heap[l], s->heap[m])) m = l;
        if (r < s->nheap && hless(s, s->heap[r], s->heap[m])) m = r;
        if (m == c) break;
        int x = s->heap[c]; s->heap[c] = s->heap[m]; s->heap[m] = x;
        c = m;
    }
    s->in_heap[top] = 0;
    return top;
}

/* ---- one event ---- */

static double arrival(struct sim *s, int src, const struct dsm_trace_rec *send, double ready)
{
    const struct model *m = s->m;
    int dst = send->peer;
    if (dst == src)
        return ready + m->self_us * 1e3;
    double bytes = (double)(uint32_t)send->a;
    double tx = bytes * m->byte_ns * m->net_factor;
    double lat = m->latency_us * 1e3 * m->net_factor;
    double start = ready;
    if (m->link == LINK_SHARED) {
        if (start < s->link_free) start = s->link_free;
        s->link_free = start + tx;
    } else if (m->link == LINK_NIC && dst >= 0 && dst < s->t->nranks) {
        if (start < s->out_free[src]) start = s->out_free[src];
        if (start + lat < s->in_free[dst]) start = s->in_free[dst] - lat;
        s->out_free[src] = start + tx;
        s->in_free[dst] = start + lat + tx;
    }
    return start + lat + tx;
}

static double compute_scale(struct sim *s, size_t gid)
{
    const struct model *m = s->m;
    double f = m->cpu_factor;
    if (m->compute == COMPUTE_CPU)
        f *= s->ratio[gid];
    return f;
}

/* ---- processor sharing ---- */

static double host_rate(const struct sim *s, const struct host *o)
{
    double n = (double)o->n + o->bg;
    double c = (double)s->m->cores;
    return n > c ? c / n : 1.0;
}

/* Bring host o's members up to time t (no member finishes before t). */
static void host_advance(struct sim *s, int hid, double t)
{
    struct host *o = &s->host[hid];
    if (t <= o->t)
        return;
    if (o->n) {
        double d = (t - o->t) * host_rate(s, o);
        for (int i = 0; i < s->nthr; i++)
            if (s->thr[i].in_pool && s->host_of[s->thr[i].rank] == hid)
                s->thr[i].rem -= d;
    }
    o->t = t;
}

/* The next member of any host to finish: its thread, and the time in *at;
 * -1 if no host has members. */
static int pool_next(struct sim *s, double *at)
{
    int best = -1;
    double bt = INFINITY;
    for (int i = 0; i < s->nthr; i++) {
        const struct thr *h = &s->thr[i];
        if (!h->in_pool)
            continue;
        const struct host *o = &s->host[s->host_of[h->rank]];
        double ft = o->t + (h->rem > 0 ? h->rem : 0) / host_rate(s, o);
        if (ft < bt) { bt = ft; best = i; }
    }
    *at = bt;
    return best;
}

/* The rest of replaying thread hi's next event, once its time T is known. */
static void commit(struct sim *s, int hi, double T)
{
    struct thr *h = &s->thr[hi];
    const struct model *m = s->m;
    const struct dsm_trace_rec *e = &h->th->ev[h->next];
    size_t gid = h->base + h->next;
    long d = s->dep[gid];
    int comm = h->th->role == DSM_TR_ROLE_COMM;
    double after = T;

    if (e->kind == DSM_TR_RECV && d >= 0)
        after = T + m->recv_us * 1e3;
    if (e->kind == DSM_TR_FAULT_BEGIN) {
        T += m->fault_us * 1e3;
        after = T;
    }
    if (e->kind == DSM_TR_SEND) {
        double ready = T + (e->peer == h->rank ? 0 : m->send_us * 1e3);
        after = ready;
        s->A[gid] = arrival(s, h->rank, e, ready);
    }
    s->T[gid] = T;
    h->cur = after;
    if (e->kind == DSM_TR_RECV) h->in_handler = 1;
    if (e->kind == DSM_TR_HANDLED) h->in_handler = 0;
    if (e->kind == DSM_TR_WAIT_BEGIN) h->in_wait = 1;
    if (e->kind == DSM_TR_WAIT_END) h->in_wait = 0;
    if (!comm) {
        if (is_enter(e->kind)) h->depth++;
        if (is_leave(e->kind) && h->depth > 0) h->depth--;
    }
    h->next++;
    /* wake threads blocked on this event */
    long w = s->wait_head[gid] - 1;
    s->wait_head[gid] = 0;
    while (w >= 0) {
        long nx = s->wait_next[w];
        hpush(s, (int)w);
        w = nx;
    }
}

/* Replay thread h's next event if its dependency is done: 1 done, 0
 * blocked, 2 computing in its host's pool (commit when it finishes), 3
 * deferred until the replay reaches h->defer (busy.c). */
static int step(struct sim *s, int hi)
{
    struct thr *h = &s->thr[hi];
    const struct model *m = s->m;
    const struct dsm_trace_rec *e = &h->th->ev[h->next];
    size_t gid = h->base + h->next;
    long d = s->dep[gid];
    double gap = h->next ? (double)(e->t - h->th->ev[h->next - 1].t) : (double)e->t;
    int comm = h->th->role == DSM_TR_ROLE_COMM;
    double T;

    if (d >= 0 && isnan(s->T[d])) {
        s->wait_next[hi] = s->wait_head[d] - 1;
        s->wait_head[d] = hi + 1;
        return 0;
    }
    if (h->next == 0) {
        T = (double)e->t;                         /* threads start as traced */
    } else if (e->kind == DSM_TR_RECV) {
        if (d >= 0) {
            double arr = s->A[d];
            int w = comm ? XFER_TO_COMM : XFER_TO_WAITER;
            double x = e->sub < MODEL_NTYPES ? m->xfer_us[w][e->sub] : 0;
            int idle = (comm || h->in_wait) && !h->in_handler;
            if (s->first_on && s->first[gid])
                x = m->xfer_first_us;           /* a rank's first copy (firstcopy.c) */
            T = arr;
            if (comm && idle && s->naps) {
                /* when its nap ends (commnap.c) */
                double xw = e->sub < MODEL_NTYPES ? m->xfer_us[XFER_TO_WAITER][e->sub] : 0;
                if (s->first_on && s->first[gid])
                    xw = m->xfer_first_us;
                if (xw > 0)
                    arr = s->T[d] + xw * 1e3;
                T = nap_notice(s, h, arr);
                if (T < 0) {
                    h->defer = arr;
                    return 3;
                }
            } else if (idle && x > 0 && s->T[d] + x * 1e3 > h->cur) {
                /* measured: send to receive at an idle receiver */
                T = s->T[d] + x * 1e3;
            } else if ((comm || (m->service_any && h->in_wait)) && arr > h->cur &&
                       !h->in_handler) {
                /* An idle receiver notices the message service_us later: a
                 * communication thread, and with service_at = any also a
                 * thread waiting for replies that receives for itself. */
                T += m->service_us * 1e3;
            }
            if (T < h->cur)
                T = h->cur;
            if (comm && !h->in_handler && s->busy) {
                /* a computing home on a host with no free core (busy.c) */
                double b = busy_delay(s, h->rank, e->sub, T);
                if (b < 0) {
                    h->defer = T;
                    return 3;
                }
                T += b;
            }
        } else {
            T = h->cur + gap * m->cpu_factor;
        }
    } else if (e->kind == DSM_TR_WAIT_END) {
        T = h->cur;
        if (d >= 0) {
            double c = s->T[d];
            /* Completed by another thread: woken (wake_us) if it slept;
             * if it polled, it notices at its next turn on a core (poll_us). */
            if (!(e->sub & 0x80) && (d < (long)h->base || d >= (long)(h->base + h->th->n)))
                c += ((e->sub & 0x40) ? m->wake_us : m->poll_us) * 1e3;
            if (c > T) T = c;
        } else {
            T = h->cur + gap;
        }
    } else if (e->kind == DSM_TR_SEND && comm && !h->in_handler) {
        T = h->cur;
        if (d >= 0 && s->T[d] > T)
            T = s->T[d];
    } else if (!comm && h->depth == 0) {
        double work = gap * compute_scale(s, gid);   /* compute */
        if (s->ps && work > 0) {
            /* Join the host's cores: it finishes when its CPU work is done
             * at the shared rate.  A thread replayed a little out of time
             * order joins at the host's time, credited for the difference. */
            int hid = s->host_of[h->rank];
            struct host *o = &s->host[hid];
            host_advance(s, hid, h->cur);
            o->n++;
            h->in_pool = 1;
            h->rem = work;
            if (h->cur < o->t)
                h->rem -= (o->t - h->cur) * host_rate(s, o);
            return 2;
        }
        T = h->cur + work;
    } else if (h->in_wait && !h->in_handler) {
        T = h->cur;                                 /* idle, waiting */
    } else {
        T = h->cur + gap * m->cpu_factor;           /* protocol work */
    }
    commit(s, hi, T);
    return 1;
}

/* ---- breakdowns (from any per-event time array) ---- */

static void breakdown(const struct tr_thread *th, const double *T, struct sim_rank *sr)
{
    int depth = 0, top = 0;
    double enter_t = 0;
    for (size_t k = 0; k < th->n; k++) {
        const struct dsm_trace_rec *e = &th->ev[k];
        double t = T[k];
        if (k > 0) {
            double prev = T[k - 1];
            double g = (t - prev) * 1e-9;
            if (g < 0) g = 0;
            if (depth == 0) {
                if (e->kind != DSM_TR_INIT && k > 1) sr->b.compute += g;
                else sr->b.other += g;
            } else if (top == DSM_TR_FAULT_BEGIN) sr->b.fault += g;
            else if (top == DSM_TR_BARRIER_ENTER) sr->b.barrier += g;
            else if (top == DSM_TR_LOCK_REQ || top == DSM_TR_LOCK_RELEASE) sr->b.lock += g;
            else if (top == DSM_TR_ATOMIC_BEGIN) sr->b.atomic += g;
            else sr->b.other += g;
        }
        if (e->kind == DSM_TR_INIT) sr->start = t * 1e-9;
        if (e->kind == DSM_TR_FINALIZE) sr->end = t * 1e-9;
        if (is_enter(e->kind)) {
            if (depth++ == 0) { top = e->kind; enter_t = t; }
        } else if (is_leave(e->kind) && depth > 0) {
            if (--depth == 0) {
                if (e->kind == DSM_TR_FAULT_END && e->sub == 0) {
                    sr->rmr_sum += (t - enter_t) * 1e-9; sr->rmr_n++;
                }
                if (e->kind == DSM_TR_BARRIER_LEAVE) {
                    sr->bar_sum += (t - enter_t) * 1e-9; sr->bar_n++;
                }
                top = 0;
            }
        }
    }
}

static void finish(const struct tr_trace *t, struct sim_result *out)
{
    double mn = INFINITY, mx = 0, rs = 0, bs = 0;
    long rn = 0, bn = 0;
    for (int i = 0; i < t->nranks; i++) {
        struct sim_rank *r = &out->r[i];
        if (r->end == 0) {                         /* no FINALIZE: last event */
            r->end = r->start + r->b.compute + r->b.fault + r->b.barrier + r->b.lock +
                     r->b.atomic + r->b.other;
        }
        if (r->start < mn) mn = r->start;
        if (r->end > mx) mx = r->end;
        rs += r->rmr_sum; rn += r->rmr_n;
        bs += r->bar_sum; bn += r->bar_n;
    }
    out->run_s = t->nranks ? mx - mn : 0;
    out->rmr_ms = rn ? rs / (double)rn * 1e3 : 0;
    out->barrier_ms = bn ? bs / (double)bn * 1e3 : 0;
}

static int main_thread(const struct tr_rank *rk)
{
    for (int k = 0; k < rk->nth; k++)
        for (size_t e = 0; e < rk->th[k].n; e++)
            if (rk->th[k].ev[e].kind == DSM_TR_INIT)
                return k;
    for (int k = 0; k < rk->nth; k++)
        if (rk->th[k].role == DSM_TR_ROLE_APP)
            return k;
    return 0;
}

/* The replay's thread table and dependency array for trace t: s->thr (one
 * entry per traced thread, events numbered from its base), s->nev and
 * s->dep.  -1 when out of memory (the caller frees what is set). */
int sim_threads(struct sim *s, const struct tr_trace *t)
{
    for (int i = 0; i < t->nranks; i++)
        s->nthr += t->r[i].nth;
    s->thr = calloc((size_t)s->nthr + 1, sizeof *s->thr);
    if (!s->thr)
        return -1;
    int n = 0;
    for (int i = 0; i < t->nranks; i++)
        for (int k = 0; k < t->r[i].nth; k++) {
            struct thr *h = &s->thr[n++];
            h->th = &t->r[i].th[k];
            h->rank = i;
            h->idx = k;
            h->base = s->nev;
            s->nev += h->th->n;
        }
    s->dep = malloc((s->nev + 1) * sizeof *s->dep);
    return s->dep ? 0 : -1;
}

void sim_measured(const struct tr_trace *t, struct sim_result *out)
{
    memset(out, 0, sizeof *out);
    out->nranks = t->nranks;
    out->r = calloc((size_t)t->nranks, sizeof *out->r);
    for (int i = 0; i < t->nranks; i++) {
        const struct tr_rank *rk = &t->r[i];
        if (!rk->nth)
            continue;
        const struct tr_thread *th = &rk->th[main_thread(rk)];
        double *T = malloc((th->n + 1) * sizeof *T);
        for (size_t k = 0; k < th->n; k++)
            T[k] = (double)th->ev[k].t;
        breakdown(th, T, &out->r[i]);
        free(T);
        out->events += (long)th->n;
    }
    finish(t, out);
}

int sim_run(const struct tr_trace *t, const struct model *m, struct sim_result *out,
            char *err, size_t errlen)
{
    struct sim s;
    memset(&s, 0, sizeof s);
    memset(out, 0, sizeof *out);
    s.t = t;
    s.m = m;
    int nomem = sim_threads(&s, t);
    s.T = malloc((s.nev + 1) * sizeof *s.T);
    s.A = malloc((s.nev + 1) * sizeof *s.A);
    s.ratio = malloc((s.nev + 1) * sizeof *s.ratio);
    s.wait_head = calloc(s.nev + 1, sizeof *s.wait_head);
    s.wait_next = calloc((size_t)s.nthr + 1, sizeof *s.wait_next);
    s.heap = calloc((size_t)s.nthr + 1, sizeof *s.heap);
    s.in_heap = calloc((size_t)s.nthr + 1, sizeof *s.in_heap);
    s.out_free = calloc((size_t)t->nranks + 1, sizeof *s.out_free);
    s.in_free = calloc((size_t)t->nranks + 1, sizeof *s.in_free);
    if (nomem || !s.T || !s.A || !s.ratio || !s.wait_head || !s.wait_next || !s.heap ||
        !s.in_heap || !s.out_free || !s.in_free) {
        snprintf(err, errlen, "out of memory for the replay");
        return -1;
    }
    for (size_t i = 0; i < s.nev; i++)
        s.T[i] = NAN;
    if (build_deps(&s, &out->unmatched_recvs, &out->unmatched_waits)) {
        snprintf(err, errlen, "out of memory for the replay");
        return -1;
    }
    service_send_deps(&s);
    compute_ratios(&s);
    if (first_setup(&s)) {
        snprintf(err, errlen, "out of memory for the replay");
        return -1;
    }
    /* With costs or contention from the trace, its own times hold it. */
    s.first_on = m->xfer_first_us > 0 && !m->costs_from_trace && !m->contention_from_trace;
    s.mm = *m;
    s.m = &s.mm;
    if (m->costs_from_trace || m->contention_from_trace) {
        struct model mt = *m;
        long cnt[2][MODEL_NTYPES], wn[2];
        trace_costs(&s, &mt, NULL, cnt, wn);
        if (m->costs_from_trace) {
            memcpy(s.mm.xfer_us, mt.xfer_us, sizeof mt.xfer_us);
            s.mm.wake_us = mt.wake_us;
            if (m->poll_us > 0)         /* only where the model uses it */
                s.mm.poll_us = mt.poll_us;
        } else {
            /* One factor for the whole run: how much longer than in the
             * model the trace's idle receives and wake-ups took, weighted
             * by how often each happened. */
            double tr = 0, md = 0;
            for (int w = 0; w < 2; w++)
                for (int ty = 1; ty < MODEL_NTYPES; ty++)
                    if (cnt[w][ty] && m->xfer_us[w][ty] > 0) {
                        tr += (double)cnt[w][ty] * mt.xfer_us[w][ty];
                        md += (double)cnt[w][ty] * m->xfer_us[w][ty];
                    }
            if (wn[0] && m->wake_us > 0) {
                tr += (double)wn[0] * mt.wake_us;
                md += (double)wn[0] * m->wake_us;
            }
            if (wn[1] && m->poll_us > 0) {
                tr += (double)wn[1] * mt.poll_us;
                md += (double)wn[1] * m->poll_us;
            }
            double k = md > 0 ? tr / md : 1;
            for (int w = 0; w < 2; w++)
                for (int ty = 1; ty < MODEL_NTYPES; ty++)
                    s.mm.xfer_us[w][ty] *= k;
            s.mm.wake_us *= k;
            s.mm.poll_us *= k;
            out->contention = k;
        }
    }
    if (setup_hosts(&s) || naps_setup(&s) || busy_setup(&s)) {
        snprintf(err, errlen, "out of memory for the replay");
        return -1;
    }
    for (int i = 0; i < s.nthr; i++) {
        s.thr[i].cur = s.thr[i].th->n ? (double)s.thr[i].th->ev[0].t : 0;
        if (s.thr[i].th->n)
            hpush(&s, i);
    }
    size_t done = 0;
    for (;;) {
        double ft = INFINITY;
        int pi = s.ps ? pool_next(&s, &ft) : -1;
        if (pi >= 0 && (s.nheap == 0 || ft <= hkey(&s, s.heap[0]))) {
            /* a compute interval on shared cores ends first */
            struct thr *h = &s.thr[pi];
            int hid = s.host_of[h->rank];
            host_advance(&s, hid, ft);
            h->in_pool = 0;
            s.host[hid].n--;
            commit(&s, pi, ft);
            done++;
            if (h->next < h->th->n)
                hpush(&s, pi);
            continue;
        }
        if (s.nheap == 0)
            break;
        int hi = hpop(&s);
        struct thr *h = &s.thr[hi];
        if (h->next >= h->th->n)
            continue;
        int rc = step(&s, hi);
        if (rc == 3)
            hpush(&s, hi);
        if (rc == 1) {
            done++;
            if (h->next < h->th->n)
                hpush(&s, hi);
        }
    }
    out->events = (long)done;
    out->busy_recvs = s.busy_n;
    if (done != s.nev) {
        snprintf(err, errlen, "the replay stopped after %zu of %zu events: the trace's "
                 "dependencies form a cycle (a corrupt or mixed-up trace)", done, s.nev);
        return -1;
    }
    /* Breakdowns on the main application thread of each rank; a send's
     * slot holds its arrival, so use the sender-side time for it. */
    out->nranks = t->nranks;
    out->r = calloc((size_t)t->nranks, sizeof *out->r);
    for (int i = 0, base = 0; i < t->nranks; base += t->r[i].nth, i++) {
        if (!t->r[i].nth)
            continue;
        int mt = main_thread(&t->r[i]);
        struct thr *h = &s.thr[base + mt];
        double *Ts = malloc((h->th->n + 1) * sizeof *Ts);
        for (size_t k = 0; k < h->th->n; k++)
            Ts[k] = s.T[h->base + k];
        breakdown(h->th, Ts, &out->r[i]);
        free(Ts);
    }
    finish(t, out);
    free(s.thr); free(s.T); free(s.A); free(s.dep); free(s.ratio); free(s.wait_head);
    free(s.wait_next); free(s.heap); free(s.in_heap); free(s.out_free); free(s.in_free);
    free(s.host); free(s.host_of); free(s.gcls); free(s.first); free(s.nap_spin);
    return 0;
}

void sim_result_free(struct sim_result *r)
{
    free(r->r);
    r->r = NULL;
}
