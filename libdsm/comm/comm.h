/*
 * comm/comm.h - the transport interface: one ops struct, one file per
 * implementation (queue.c, direct.c, multiple.c, rma.c), chosen at run time
 * by DSM_COMM.  The core never tests which transport runs; it asks the ops
 * (waiter_progress, get_page).
 *
 * comm.c holds what all transports share: the posted receive, the list of
 * sends in flight, handing received messages to dsm__dispatch (dispatch.c),
 * and the communication thread with its polling policy (DSM_POLL), whose
 * loop calls the library's periodic work (progress.c).
 */
#ifndef DSM_COMM_H
#define DSM_COMM_H

#include <mpi.h>

struct dsm_msg;

struct dsm_comm_ops {
    const char *name;
    /* Main thread, once, after MPI is up and before the thread starts. */
    int  (*init)(void);
    /* Any thread.  Takes ownership of m: it is freed once MPI is done with it.
     * Never blocks on the network. */
    void (*send)(struct dsm_msg *m);
    /* One round of progress: start queued sends, complete finished sends,
     * receive and dispatch what arrived.  Returns the number of events.
     * Called by one thread at a time (the progress token in comm.c). */
    int  (*progress)(void);
    /* Non-zero if a thread waiting for a reply may call progress() itself
     * rather than wait for the communication thread to be scheduled. */
    int  waiter_progress;
    /* Communication thread, at shut-down: finish sends, cancel the receive. */
    void (*shutdown)(void);
    /* NULL, or: copy page p from its home's system view into ours without
     * involving the home's protocol code (one-sided read), in the calling
     * application thread; returns when the copy is complete here.  A
     * transport that has it reads pages the home never hears about, so
     * the core makes homes trap every write of theirs to a page
     * (dsm__remote_reads) instead of trusting copysets. */
    void (*get_page)(size_t p, int home);
};

extern const struct dsm_comm_ops dsm__comm_queue;
extern const struct dsm_comm_ops dsm__comm_direct;
extern const struct dsm_comm_ops dsm__comm_multiple;
extern const struct dsm_comm_ops dsm__comm_rma;

/* Shared pieces used by the implementations (comm.c). */
int  dsm__comm_recv_start(void);            /* post the receive */
int  dsm__comm_recv_test(int *got);         /* test it; on arrival dispatch is deferred */
void dsm__comm_recv_dispatch(void);         /* dispatch the arrived message, repost */
int dsm__comm_poll(void);    /* test sends, then receive and dispatch one message: the
                                progress of direct, multiple and rma */
int  dsm__comm_sends_test(void);            /* complete finished sends */
void dsm__comm_sends_add(struct dsm_msg *m);
/* Start sending m (posting its page's receive first if it asks for a page)
 * and track it until MPI is done.  Caller holds the MPI mutex (direct) or is
 * the communication thread (queue). */
void dsm__comm_isend(struct dsm_msg *m);
void dsm__comm_sends_finish(void);          /* wait for all sends (shutdown) */
void dsm__comm_recv_cancel(void);
/* The polling policy while an application thread waits inside the transport
 * (rma: a Get in flight): call with i = 0, 1, 2, ... between tests. */
void dsm__comm_wait_step(unsigned long i);

/* A collective MPI operation (bcast.c), run under whatever rules the
 * transport has for MPI calls: the progress round in comm.c (the
 * communication thread, or a waiting thread where waiter_progress allows it)
 * calls start once, then test until it returns non-zero, each under the MPI
 * mutex where the transport has one.  So a transport needs nothing of its
 * own for collectives, and an application thread never blocks inside MPI
 * while holding the mutex (the communication thread keeps serving pages
 * while a collective is under way).  start and test make only non-blocking
 * MPI calls. */
struct dsm_coll {
    void (*start)(struct dsm_coll *c);
    int  (*test)(struct dsm_coll *c);
    uint32_t waiter;            /* set by dsm__comm_collective */
    int started;
};
/* Application thread: run c to completion.  One collective at a time per
 * node (collectives are made by one thread per node). */
void dsm__comm_collective(struct dsm_coll *c);

#endif /* DSM_COMM_H */
