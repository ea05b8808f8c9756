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

struct model {
    char   name[64];
    double send_us;        /* software overhead of one send, on the sender */
    double recv_us;        /* software overhead of one receive, on the receiver */
    double latency_us;     /* wire latency, per message between ranks */
    double byte_ns;        /* transfer time per byte (1e3 / bandwidth in MB/s) */
    double self_us;        /* a message a rank sends itself (no network) */
    double service_us;     /* an idle communication thread notices a message */
    double wake_us;        /* a thread waiting for a reply is woken */
    double fault_us;       /* added per fault (trap, protection change) */
    double cpu_factor;     /* compute and protocol work: target time / traced time */
    double net_factor;     /* multiplies latency and byte_ns (sweep's axis) */
    int    link;           /* LINK_*: none, shared (one medium), nic (per node) */
    int    compute;        /* COMPUTE_*: which trace time a compute interval costs */
    int    cores;          /* cores per host for compute=cpu (0: one per rank) */
    int    ranks_per_host; /* 0: as in the trace */
    int    service_any;    /* service_at = any: waiting threads pay service_us too */
};

void model_defaults(struct model *m);
/* Read path into m (on top of what m holds).  0, or -1 with err set. */
int  model_load(struct model *m, const char *path, char *err, size_t errlen);
/* Set one key from "key=value".  0, or -1 with err set. */
int  model_set(struct model *m, const char *kv, char *err, size_t errlen);
void model_print(const struct model *m, FILE *out);

#endif
