/*
 * tracefile.h - reading (and, for tests, writing) DSM_TRACE logs in dsmtool.
 *
 * A loaded trace holds, per rank, the events of each thread in the order
 * that thread made them, with times in ns from the job's start (the
 * earliest rank's clock-alignment point).  Single-threaded; no MPI.
 */
#ifndef DSMTOOL_TRACEFILE_H
#define DSMTOOL_TRACEFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_format.h"

struct tr_thread {
    int tid;
    int role;                        /* DSM_TR_ROLE_* (from its THREAD event) */
    struct dsm_trace_rec *ev;        /* times already aligned (ns from job start) */
    size_t n, cap;
};

struct tr_rank {
    struct dsm_trace_file_hdr h;
    struct tr_thread *th;
    int nth;
    uint64_t t_begin, t_end;         /* first and last event, aligned */
    int host_ranks;                  /* ranks of the trace on this rank's host */
};

struct tr_trace {
    int nranks;
    struct tr_rank *r;
    uint64_t t_end;                  /* last event of all */
};

/* Load PREFIX.0 .. PREFIX.(nodes-1).  0, or -1 with a message in err. */
int  tr_load(struct tr_trace *t, const char *prefix, char *err, size_t errlen);
void tr_free(struct tr_trace *t);
const char *tr_kind_name(int kind);
const char *tr_msg_name(int type);
/* Write one rank's log from per-thread record arrays (records' t absolute). */
int  tr_write(const char *path, const struct dsm_trace_file_hdr *h,
              struct dsm_trace_rec *const *recs, const size_t *counts, int nthreads);
/* Append a record to a thread (used by the loader and by tests). */
void tr_push(struct tr_thread *th, const struct dsm_trace_rec *r);

#endif
