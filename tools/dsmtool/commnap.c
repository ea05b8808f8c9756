/*
 * commnap.c - the replay's nap rule (comm_naps = on, dsmtool(1)): when an
 * idle communication thread notices a message.
 *
 * libdsm's communication thread (libdsm/comm/comm.c, comm_main) cannot be
 * woken by MPI.  After its last event it polls for nap_spin_us (DSM_SPIN_US,
 * 0 on a host whose ranks' threads outnumber its cores), or, while an
 * application thread of its rank sleeps in a wait, for nap_window_us
 * (DSM_POLL_WINDOW_NS); then it naps nap_first_us, polls, naps twice as
 * long, and so on up to nap_max_us a nap; each nap ends nap_late_us
 * later than asked (timer slack, the timer interrupt, the switch: measured
 * by benchmarks/micro/nap_late).  A message that arrives during a nap
 * waits for the nap's end.  Without the rule a communication thread
 * takes a message xfer_us.TYPE after it was sent, the mean the calibration
 * runs saw; with it, at arrival (the send plus xfer_wait_us.TYPE, what a
 * polling receiver sees) or at the end of the nap it falls in, counted from
 * the thread's last event of the replay.  In a run whose homes sleep or
 * compute for long (NPB BT) the naps are long; in the calibration runs
 * they are short.
 *
 * What the rule does not see: wake-ups by local work (a waiter that goes to
 * sleep, the end of a long wait) and progress that the trace does not
 * record restart the naps earlier in the real run; the standby while an
 * application thread polls (1 ms, 100 ms) is not modelled, as such a
 * thread takes the messages itself.  Single-threaded, called from sim.c.
 */
#include <stdlib.h>

#include "sim_int.h"

int naps_setup(struct sim *s)
{
    const struct model *m = s->m;
    s->naps = m->comm_naps && !m->costs_from_trace && !m->contention_from_trace;
    if (!s->naps)
        return 0;
    /* A host is full as libdsm judges it (dsm__host_full): its ranks'
     * application and communication threads outnumber its cores (cores = 0:
     * one core per rank). */
    int *threads = calloc((size_t)s->nhost + 1, sizeof *threads);
    int *ranks = calloc((size_t)s->nhost + 1, sizeof *ranks);
    s->nap_spin = calloc((size_t)s->t->nranks + 1, sizeof *s->nap_spin);
    if (!threads || !ranks || !s->nap_spin) {
        free(threads);
        free(ranks);
        return -1;
    }
    for (int r = 0; r < s->t->nranks; r++)
        ranks[s->host_of[r]]++;
    for (int i = 0; i < s->nthr; i++)
        threads[s->host_of[s->thr[i].rank]]++;
    for (int r = 0; r < s->t->nranks; r++) {
        int hid = s->host_of[r];
        int cores = m->cores > 0 ? m->cores : ranks[hid];
        s->nap_spin[r] = threads[hid] > cores ? 0 : m->nap_spin_us * 1e3;
    }
    free(threads);
    free(ranks);
    return 0;
}

/* Whether an application thread of rank sleeps in a wait at time t: 1, 0,
 * or -1 if the replay has not reached t on one of them yet. */
static int rank_sleeps(const struct sim *s, int rank, double t)
{
    int sleeps = 0;
    for (int i = 0; i < s->nthr; i++) {
        const struct thr *h = &s->thr[i];
        if (h->rank != rank || h->th->role == DSM_TR_ROLE_COMM)
            continue;
        if (s->in_heap[i] && h->cur < t && h->next < h->th->n)
            return -1;
        if (h->next > 0 && h->next < h->th->n && gap_at(s, h, t) == GAP_IDLE)
            sleeps = 1;
    }
    return sleeps;
}

double nap_notice(const struct sim *s, const struct thr *h, double arrival)
{
    const struct model *m = s->m;
    double last = h->cur, t = last, nap = m->nap_first_us * 1e3;

    if (arrival <= last + s->nap_spin[h->rank])
        return arrival > last ? arrival : last;
    int sleeps = rank_sleeps(s, h->rank, arrival);
    if (sleeps < 0)
        return -1;
    if (sleeps) {
        if (arrival <= last + m->nap_window_us * 1e3)
            return arrival;
        t = last + m->nap_window_us * 1e3;
    } else {
        t = last + s->nap_spin[h->rank];
    }
    while (t < arrival) {
        t += nap + m->nap_late_us * 1e3;
        nap *= 2;
        if (nap > m->nap_max_us * 1e3)
            nap = m->nap_max_us * 1e3;
    }
    return t;
}
