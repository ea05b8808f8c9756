/*
 * tracecost.c - what a trace says without a replay: the mean costs of its
 * receives and wake-ups (trace_costs: the replay's costs = trace and
 * contention = trace, and dsmtool calibrate through sim_trace_costs), and
 * its messages matched send to receive (tr_match, for pictures).  Uses the
 * replay's thread table and dependencies (sim.c).  Single-threaded.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "sim_int.h"

/* Mean send-to-receive time per message type at idle receivers, and the
 * mean wake-up of a sleeping waiter, from the trace's own clock (all ranks
 * of one host share it; across hosts the alignment error is in it). */
void trace_costs(const struct sim *s, struct model *m, FILE *log,
                        long n[2][MODEL_NTYPES], long nwake[2])
{
    double sum[2][MODEL_NTYPES] = { { 0 } }, wsum[2] = { 0, 0 }, fsum = 0;
    long wn[2] = { 0, 0 }, fn = 0;
    memset(n, 0, 2 * MODEL_NTYPES * sizeof n[0][0]);
    for (int i = 0; i < s->nthr; i++) {
        const struct thr *h = &s->thr[i];
        int comm = h->th->role == DSM_TR_ROLE_COMM, in_handler = 0, in_wait = 0;
        for (size_t k = 0; k < h->th->n; k++) {
            const struct dsm_trace_rec *e = &h->th->ev[k];
            long d = s->dep[h->base + k];
            if (e->kind == DSM_TR_RECV && d >= 0 && k > 0 && e->sub < MODEL_NTYPES &&
                (comm || in_wait) && !in_handler) {
                const struct thr *o = sim_owner(s, d);
                const struct dsm_trace_rec *snd = o ? &o->th->ev[d - (long)o->base] : NULL;
                if (snd && h->th->ev[k - 1].t <= snd->t && e->t >= snd->t) {
                    int w = comm ? XFER_TO_COMM : XFER_TO_WAITER;
                    if (s->first && s->first[h->base + k]) {
                        fsum += (double)(e->t - snd->t);     /* firstcopy.c */
                        fn++;
                    }
                    sum[w][e->sub] += (double)(e->t - snd->t);
                    n[w][e->sub]++;
                }
            }
            if (e->kind == DSM_TR_WAIT_END && d >= 0 && k > 0 && !(e->sub & 0x80) &&
                (d < (long)h->base || d >= (long)(h->base + h->th->n))) {
                int slept = (e->sub & 0x40) != 0;
                const struct thr *o = sim_owner(s, d);
                uint64_t tc = o ? o->th->ev[d - (long)o->base].t : 0;
                /* only a waiter that was idle when the wait was completed:
                 * one busy handling a message sees it when done, and that
                 * work is replayed anyway */
                if (o && e->t >= tc && h->th->ev[k - 1].t <= tc) {
                    wsum[!slept] += (double)(e->t - tc);
                    wn[!slept]++;
                }
            }
            if (e->kind == DSM_TR_RECV) in_handler = 1;
            if (e->kind == DSM_TR_HANDLED) in_handler = 0;
            if (e->kind == DSM_TR_WAIT_BEGIN) in_wait = 1;
            if (e->kind == DSM_TR_WAIT_END) in_wait = 0;
        }
    }
    for (int w = 0; w < 2; w++)
        for (int ty = 1; ty < MODEL_NTYPES; ty++)
            if (n[w][ty]) {
                /* never 0: 0 means "not measured" in a model */
                m->xfer_us[w][ty] = fmax(sum[w][ty] / (double)n[w][ty] * 1e-3, 1e-3);
                if (log)
                    fprintf(log, "# %s %s: %ld idle receives, mean %.1f us\n",
                            tr_msg_name(ty), w ? "to a waiting thread" : "to a comm thread",
                            n[w][ty], m->xfer_us[w][ty]);
            }
    if (fn) {
        m->xfer_first_us = fmax(fsum / (double)fn * 1e-3, 1e-3);
        if (log)
            fprintf(log, "# PAGE_REPLY that is its rank's first copy of the page: %ld idle "
                    "receives, mean %.1f us\n", fn, m->xfer_first_us);
    }
    nwake[0] = wn[0];
    nwake[1] = wn[1];
    if (wn[0]) {
        m->wake_us = fmax(wsum[0] / (double)wn[0] * 1e-3, 1e-3);
        if (log)
            fprintf(log, "# wake-up of a sleeping waiter: %ld, mean %.1f us\n", wn[0], m->wake_us);
    }
    if (wn[1]) {
        m->poll_us = fmax(wsum[1] / (double)wn[1] * 1e-3, 1e-3);
        if (log)
            fprintf(log, "# a polling waiter sees another thread's completion: %ld, mean %.1f us\n",
                    wn[1], m->poll_us);
    }
}

int sim_trace_costs(const struct tr_trace *t, struct model *m, FILE *log,
                    long count[2][MODEL_NTYPES], long nwake[2])
{
    struct sim s;
    long ur = 0, uw = 0;
    memset(&s, 0, sizeof s);
    s.t = t;
    s.m = m;
    if (sim_threads(&s, t) || build_deps(&s, &ur, &uw) || first_setup(&s)) {
        free(s.thr);
        free(s.dep);
        free(s.first);
        return -1;
    }
    long cnt[2][MODEL_NTYPES], wn[2];
    trace_costs(&s, m, log, cnt, wn);
    if (count)
        memcpy(count, cnt, sizeof cnt);
    if (nwake) {
        nwake[0] = wn[0];
        nwake[1] = wn[1];
    }
    if (log && m->cores > 0 && !setup_hosts(&s)) {
        for (int h = 0; h < s.nhost; h++) {
            double u = 1, bg = host_bg(&s, h, &u);
            fprintf(log, "# host %d: compute got %.3f of a core; on %d cores that is "
                    "%.2f other runnable threads\n", h, u, m->cores, bg);
        }
        free(s.host);
        free(s.host_of);
    }
    free(s.thr);
    free(s.dep);
    free(s.first);
    return 0;
}

int tr_match(const struct tr_trace *t, struct tr_msgpair **out, size_t *nout)
{
    struct sim s;
    long ur = 0, uw = 0;
    memset(&s, 0, sizeof s);
    s.t = t;
    if (sim_threads(&s, t) || build_deps(&s, &ur, &uw)) {
        free(s.thr);
        free(s.dep);
        return -1;
    }
    size_t cap = 1024, m = 0;
    struct tr_msgpair *p = malloc(cap * sizeof *p);
    for (int i = 0; i < s.nthr; i++) {
        struct thr *h = &s.thr[i];
        for (size_t k = 0; k < h->th->n; k++) {
            const struct dsm_trace_rec *r = &h->th->ev[k];
            long d = s.dep[h->base + k];
            if (r->kind != DSM_TR_RECV || d < 0)
                continue;
            const struct thr *o = sim_owner(&s, d);
            if (!o)
                continue;
            if (m == cap) {
                cap *= 2;
                p = realloc(p, cap * sizeof *p);
            }
            p[m].src = o->rank;
            p[m].dst = h->rank;
            p[m].type = r->sub;
            p[m].bytes = (uint32_t)r->a;
            p[m].t_send = o->th->ev[d - (long)o->base].t;
            p[m].t_recv = r->t;
            m++;
        }
    }
    free(s.thr);
    free(s.dep);
    *out = p;
    *nout = m;
    return 0;
}
