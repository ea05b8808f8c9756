/*
 * model.h - a machine model for the replay (dsmtool simulate, sweep): the
 * costs of one message, the network, faults and compute speed.  Read from
 * a "key = value" file (tools/models/NAME.model; dsmtool(1) describes every
 * key).  Single-threaded.
 */
#ifndef DSMTOOL_MODEL_H
#define DSMTOOL_MODEL_H

#include <stddef.h>
#include <stdio.h>

enum { LINK_NONE = 0, LINK_SHARED, LINK_NIC };
enum { COMPUTE_WALL = 0, COMPUTE_CPU };
enum { XFER_TO_COMM = 0, XFER_TO_WAITER = 1 };
#define MODEL_NTYPES 17             /* message types (libdsm/wire.h) + 1 */

struct model {
    char   name[64];
    double send_us;        /* software overhead of one send, on the sender */
    double recv_us;        /* software overhead of one receive, on the receiver */
    double latency_us;     /* wire latency, per message between ranks */
    double byte_ns;        /* transfer time per byte (1e3 / bandwidth in MB/s) */
    double self_us;        /* a message a rank sends itself (no network) */
    double service_us;     /* an idle communication thread notices a message */
    double wake_us;        /* a thread asleep waiting for a reply is woken */
    double poll_us;        /* a thread polling for a reply sees another's completion */
    double busy_service_us; /* a page request waits at a computing home with no free core */
    double xfer_first_us;  /* send to receive of a PAGE_REPLY that is the rank's first copy */
    double fault_us;       /* added per fault (trap, protection change) */
    double cpu_factor;     /* compute and protocol work: target time / traced time */
    double net_factor;     /* multiplies latency and byte_ns (sweep's axis) */
    int    link;           /* LINK_*: none, shared (one medium), nic (per node) */
    int    compute;        /* COMPUTE_*: which trace time a compute interval costs */
    int    cores;          /* cores per host, shared under compute=cpu (0: one per rank) */
    int    ranks_per_host; /* 0: as in the trace */
    int    service_any;    /* service_at = any: waiting threads pay service_us too */
    /* comm_naps = on (commnap.c): an idle communication thread notices a
     * message at the end of its current nap, as libdsm's naps: after its
     * last event it polls nap_spin_us (only on a host whose threads do not
     * outnumber its cores), or nap_window_us while a thread of its rank
     * sleeps in a wait, then naps nap_first_us doubling to nap_max_us. */
    int    comm_naps;
    double nap_spin_us, nap_window_us, nap_first_us, nap_max_us;
    /* How much longer than asked a nap lasts on this machine: the kernel's
     * timer slack and the timer interrupt's cost (0: naps end on time). */
    double nap_late_us;
    /* Measured per message type (xfer_us.TYPE, xfer_wait_us.TYPE): from a
     * SEND to its RECV at an idle receiver, a communication thread or a
     * thread receiving in its own wait; 0: latency, bytes and service_us. */
    double xfer_us[2][MODEL_NTYPES];
    double bg_threads;     /* runnable threads of other programs per host (compute = cpu) */
    int    bg_from_trace;  /* bg_threads = trace: from the trace's CPU/wall */
    int    costs_from_trace; /* costs = trace: xfer and wake from the replayed trace */
    int    contention_from_trace; /* contention = trace: scale them to the trace's */
};

void model_defaults(struct model *m);
/* Read path into m (on top of what m holds).  0, or -1 with err set. */
int  model_load(struct model *m, const char *path, char *err, size_t errlen);
/* Set one key from "key=value".  0, or -1 with err set. */
int  model_set(struct model *m, const char *kv, char *err, size_t errlen);
void model_print(const struct model *m, FILE *out);
/* The message type called name (PAGE_REQ ...), or -1. */
int  model_msg_type(const char *name);

#endif
