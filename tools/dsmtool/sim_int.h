/*
 * sim_int.h - the replay's state, shared by sim.c (the replay), busy.c
 * (the busy-home rule), firstcopy.c (a rank's first copy of a page) and
 * tracecost.c (costs and message pairs read from a trace):
 * threads, hosts and per-event arrays.  Private to
 * dsmtool.  Single-threaded.
 */
#ifndef DSMTOOL_SIM_INT_H
#define DSMTOOL_SIM_INT_H

#include <stdio.h>

#include "model.h"
#include "tracefile.h"

struct thr {
    struct tr_thread *th;
    int rank, idx;
    size_t base;            /* global index of event 0 */
    size_t next;            /* next event to replay */
    double cur;             /* ns: time after the last replayed event */
    int depth, in_handler, in_wait;
    int in_pool;            /* computing on its host's shared cores */
    double rem;             /* ns of CPU work left in the pool */
    double defer;           /* ns: not stepped before (busy_service_us, busy.c) */
};

/* A host's cores under processor sharing (compute = cpu, cores > 0): every
 * runnable thread progresses at min(1, cores / runnable), runnable being
 * the application threads of the host's ranks in a compute interval plus
 * bg_threads of other programs. */
struct host {
    double t;               /* ns: members' rem is as of this time */
    int n;                  /* members */
    double bg;
};

struct sim {
    const struct tr_trace *t;
    const struct model *m;  /* &mm: the model, with costs = trace applied */
    struct model mm;
    struct host *host;
    int nhost, *host_of;    /* per rank */
    int ps;                 /* processor sharing on */
    struct thr *thr;
    int nthr;
    size_t nev;
    double *T;              /* replay time per event (ns), NAN until done */
    double *A;              /* per SEND: the message's arrival time (ns) */
    long *dep;              /* global index of the event it waits for, or -1 */
    double *ratio;          /* per event: cpu/wall of its compute interval */
    long *wait_head;        /* per event: first blocked thread + 1 (list) */
    long *wait_next;        /* per thread: next blocked on the same event */
    double link_free, *out_free, *in_free;
    int *heap; int nheap; int *in_heap;
    unsigned char *gcls;    /* per event: GAP_* of the gap before it (busy.c) */
    int busy;               /* the busy-home rule is on (busy.c) */
    long busy_n;            /* receives it delayed */
    unsigned char *first;   /* per event: a rank's first PAGE_REPLY of a page (firstcopy.c) */
    int first_on;           /* replay those with xfer_first_us */
    int naps;               /* the nap rule is on (commnap.c) */
    double *nap_spin;       /* per rank: ns its communication thread polls after an event */
};

/* The thread whose events include global index gid, or NULL. */
static inline const struct thr *sim_owner(const struct sim *s, long gid)
{
    for (int j = 0; j < s->nthr; j++)
        if (gid >= (long)s->thr[j].base && gid < (long)(s->thr[j].base + s->thr[j].th->n))
            return &s->thr[j];
    return NULL;
}

/* sim.c: the thread table and dependency array of trace t (s->thr, s->nev,
 * s->dep); the dependencies; the hosts; a host's other load from the
 * trace (host_bg: the runnable threads of other programs, and with share
 * the CPU share its compute got).  0, or -1 out of memory. */
int  sim_threads(struct sim *s, const struct tr_trace *t);
int  build_deps(struct sim *s, long *unmatched_recvs, long *unmatched_waits);
int  setup_hosts(struct sim *s);
double host_bg(const struct sim *s, int hid, double *share);
/* tracecost.c: the trace's own mean costs into m (sim.h, sim_trace_costs). */
void trace_costs(const struct sim *s, struct model *m, FILE *log,
                 long n[2][MODEL_NTYPES], long nwake[2]);

/* Events that open and close a library call on an application thread. */
static inline int is_enter(int k)
{
    return k == DSM_TR_FAULT_BEGIN || k == DSM_TR_BARRIER_ENTER || k == DSM_TR_LOCK_REQ ||
           k == DSM_TR_LOCK_RELEASE || k == DSM_TR_ATOMIC_BEGIN || k == DSM_TR_FINALIZE;
}

static inline int is_leave(int k)
{
    return k == DSM_TR_FAULT_END || k == DSM_TR_BARRIER_LEAVE || k == DSM_TR_LOCK_GRANT ||
           k == DSM_TR_LOCK_RELEASED || k == DSM_TR_ATOMIC_END || k == DSM_TR_INIT;
}

/* What a thread does in the gap before an event (busy.c). */
enum { GAP_IDLE = 0, GAP_COMPUTE, GAP_RUN };

/* busy.c: set up s->gcls (with the busy-home or the nap rule) and s->busy
 * (0, or -1 out of memory); what application thread h does at time t
 * (GAP_*; the replay must have reached t on it). */
int  busy_setup(struct sim *s);
int  gap_at(const struct sim *s, const struct thr *h, double t);
/* busy.c: the extra ns before a communication thread of rank may take a
 * message of type ty at time t (0: none); -1 if the replay has not yet
 * reached t on that rank's host and the receive must wait (defer). */
double busy_delay(struct sim *s, int rank, int ty, double t);
/* commnap.c: set s->naps and s->nap_spin (after setup_hosts, before
 * busy_setup; 0, or -1 out of memory); when communication thread h, idle
 * since h->cur, notices a message that arrives at time arrival (ns), or -1
 * if the replay has not reached arrival on h's rank and it must wait. */
int  naps_setup(struct sim *s);
double nap_notice(const struct sim *s, const struct thr *h, double arrival);
/* firstcopy.c: set s->first (0, or -1 out of memory). */
int  first_setup(struct sim *s);

#endif
