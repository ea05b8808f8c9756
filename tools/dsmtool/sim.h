/*
 * sim.h - replay a loaded trace under a machine model (paper 004's
 * message-level simulation, applied to a DSM's own messages).
 * Single-threaded; pure computation on a struct tr_trace.
 */
#ifndef DSMTOOL_SIM_H
#define DSMTOOL_SIM_H

#include "model.h"
#include "tracefile.h"

/* Where the application threads' time goes; seconds. */
struct sim_breakdown {
    double compute, fault, barrier, lock, atomic, other;
};

struct sim_rank {
    double start, end;               /* INIT leave and FINALIZE entry (s) */
    struct sim_breakdown b;
    double rmr_sum; long rmr_n;      /* read faults that fetched */
    double bar_sum; long bar_n;
};

struct sim_result {
    double run_s;                    /* max end - min start over the ranks */
    double rmr_ms, barrier_ms;       /* means over all ranks */
    int nranks;
    struct sim_rank *r;
    long events, unmatched_recvs, unmatched_waits;
    double contention;               /* contention = trace: the factor applied */
    long busy_recvs;                 /* page requests that waited busy_service_us */
};

/* The same quantities from the trace as recorded (no model). */
void sim_measured(const struct tr_trace *t, struct sim_result *out);
/* Replay.  0, or -1 if the trace's dependencies cannot be replayed (a
 * cycle: a corrupt trace), with err set. */
int  sim_run(const struct tr_trace *t, const struct model *m, struct sim_result *out,
             char *err, size_t errlen);
void sim_result_free(struct sim_result *r);
/* Measure this machine's costs in trace t into m: xfer_us and
 * xfer_wait_us per message type (mean send-to-receive time at idle
 * receivers), wake_us and poll_us (mean time from another thread's
 * COMPLETE to the WAIT_END of a waiter that slept / polled); with log, say
 * what was measured, and with m->cores > 0 each host's other load
 * (bg_threads), as "# " lines; with count and nwake (may be NULL), how
 * many receives and waits (slept, polled) each mean is over.  0, or -1
 * out of memory. */
int  sim_trace_costs(const struct tr_trace *t, struct model *m, FILE *log,
                     long count[2][MODEL_NTYPES], long nwake[2]);



/* Matched messages (a SEND with its RECV), for pictures. */
struct tr_msgpair { int src, dst, type; uint32_t bytes; uint64_t t_send, t_recv; };
int tr_match(const struct tr_trace *t, struct tr_msgpair **out, size_t *n);
#endif
