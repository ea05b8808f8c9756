/*
 * trace_format.h - the on-disk format of DSM_TRACE event logs (version 1),
 * shared by the writer (trace.c, in every process) and the readers
 * (tools/dsmtool).  No MPI, no library state: plain structs and constants.
 * dsm-trace(5) documents the same thing for people.
 *
 * A log file PREFIX.RANK is one header followed by chunks.  A chunk is the
 * buffer of one thread of that process: a chunk header, then nrec records
 * in the order that thread made them.  Chunks of different threads
 * interleave in the file; a reader merges them by time.  Integers are in the
 * writer's byte order (the header's endian word tells it; readers reject a
 * foreign one).
 */
#ifndef DSM_TRACE_FORMAT_H
#define DSM_TRACE_FORMAT_H

#include <stdint.h>

#define DSM_TRACE_MAGIC    "DSMTRACE"
#define DSM_TRACE_VERSION  1
#define DSM_TRACE_ENDIAN   0x01020304u
#define DSM_TRACE_CHUNK_MAGIC 0x4b4e4843u   /* "CHNK" */

struct dsm_trace_file_hdr {          /* 256 bytes */
    char     magic[8];               /* "DSMTRACE" */
    uint32_t version;                /* DSM_TRACE_VERSION */
    uint32_t endian;                 /* DSM_TRACE_ENDIAN as written */
    uint32_t hdr_size;               /* sizeof this header */
    uint32_t rec_size;               /* sizeof(struct dsm_trace_rec) */
    int32_t  rank, nodes;
    uint64_t page_size;              /* coherence unit, bytes */
    uint64_t t_sync;                 /* CLOCK_MONOTONIC ns just after a barrier of
                                      * all ranks in dsm_init: aligns the ranks' clocks */
    uint64_t t_init;                 /* CLOCK_MONOTONIC ns when tracing started */
    uint32_t threads_per_rank;       /* application threads per rank: 1, or what
                                      * a runtime said (dsm_rt_preinit) */
    uint32_t online_cpus;            /* sysconf(_SC_NPROCESSORS_ONLN) of the host */
    int32_t  pid;
    uint32_t reserved0;
    char     comm[16];               /* transport name (DSM_COMM) */
    char     host[64];               /* gethostname() */
    unsigned char reserved[104];
};

struct dsm_trace_chunk_hdr {         /* 16 bytes */
    uint32_t magic;                  /* DSM_TRACE_CHUNK_MAGIC */
    uint16_t tid;                    /* thread index within the process */
    uint16_t flags;
    uint32_t nrec;
    uint32_t reserved;
};

/* One event: 32 bytes.  t is CLOCK_MONOTONIC in ns; the other fields depend
 * on kind (table below and dsm-trace(5)). */
struct dsm_trace_rec {
    uint64_t t;
    uint8_t  kind;                   /* enum dsm_trace_kind */
    uint8_t  sub;
    uint16_t tid;                    /* the thread's index (as in its chunks) */
    int32_t  peer;                   /* other rank, or -1 */
    uint64_t a, b;
};

_Static_assert(sizeof(struct dsm_trace_file_hdr) == 256, "trace header is 256 bytes");
_Static_assert(sizeof(struct dsm_trace_chunk_hdr) == 16, "chunk header is 16 bytes");
_Static_assert(sizeof(struct dsm_trace_rec) == 32, "trace record is 32 bytes");

enum dsm_trace_kind {
    DSM_TR_THREAD = 1,       /* sub=role (0 application, 1 communication) */
    DSM_TR_INIT,             /* library exit of dsm_init */
    DSM_TR_FINALIZE,         /* library entry of dsm_finalize */
    DSM_TR_COMPUTE,          /* t=end of a compute interval (the next library
                              * entry); a=wall ns, b=thread CPU ns */
    DSM_TR_FAULT_BEGIN,      /* sub=0 read/1 write, peer=home, a=page */
    DSM_TR_FAULT_END,        /* sub, peer=home, a=page, b=ns waited for the page */
    DSM_TR_SEND,             /* sub=msg type, peer=dest, a=bytes|waiter<<32,
                              * b=id|flags<<32 (id: page or lock) */
    DSM_TR_RECV,             /* sub=msg type, peer=src, a, b as SEND; handling starts */
    DSM_TR_HANDLED,          /* sub=msg type: handling of the last RECV ends */
    DSM_TR_WAIT_BEGIN,       /* sub=wait kind, a=waiter slot */
    DSM_TR_WAIT_END,         /* sub=wait kind | 0x80 if it did not wait at all
                              * | 0x40 if it slept (was woken), a=slot */
    DSM_TR_COMPLETE,         /* a=waiter slot: a reply handled here ended its wait */
    DSM_TR_BARRIER_ENTER,    /* sub=collective kind, a=epoch */
    DSM_TR_BARRIER_LEAVE,    /* sub, a=epoch, b=messages sent during it */
    DSM_TR_LOCK_REQ,         /* a=lock id, peer=manager */
    DSM_TR_LOCK_GRANT,       /* a=lock id, peer=manager, b=1 if refused (test) */
    DSM_TR_LOCK_RELEASE,     /* a=lock id, peer=manager: release starts */
    DSM_TR_LOCK_RELEASED,    /* a=lock id: release done */
    DSM_TR_ATOMIC_BEGIN,     /* sub=op, peer=home, a=page */
    DSM_TR_ATOMIC_END,       /* sub=op, peer=home, a=page */
    DSM_TR_PREFETCH,         /* a=first page, b=pages (dsm_prefetch; returns at once) */
    DSM_TR_FORK,             /* a runtime's parallel region starts (dsm_rt_trace):
                              * a=region sequence, b=team size */
    DSM_TR_JOIN,             /* a runtime's parallel region ends: a=region sequence */
    DSM_TR_TASK_BEGIN,       /* a runtime's task starts on this thread: a=task id
                              * (unique on its owner), b=owner rank + 1 if it was
                              * stolen from that rank, 0 if made on this rank */
    DSM_TR_TASK_END,         /* the task ends: a, b as TASK_BEGIN */
    DSM_TR_STEAL,            /* a runtime asked another rank for tasks: a=victim
                              * rank, b=tasks taken (0: none) */
    DSM_TR_NKINDS
};

#define DSM_TR_ROLE_APP  0
#define DSM_TR_ROLE_COMM 1

#endif /* DSM_TRACE_FORMAT_H */
