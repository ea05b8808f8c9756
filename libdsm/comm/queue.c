/*
 * comm/queue.c - transport `queue`, paper 003's implementation (2): the
 * communication thread makes every MPI call.  Application threads put
 * messages on a send queue and wake the thread if it sleeps; it starts the
 * sends, completes them, and receives by polling MPI_Irecv + MPI_Test.
 */
#include <mpi.h>

#include "dsm_internal.h"

static struct dsm_mqueue sendq;

static int queue_init(void)
{
    dsm__mq_init(&sendq);
    return dsm__comm_recv_start();
}

static void queue_send(struct dsm_msg *m)
{
    dsm__mq_push(&sendq, &m->q);
    dsm__comm_wake();
}

static int start_queued(void)
{
    struct dsm_qnode *n = dsm__mq_take_all(&sendq);
    int count = 0;
    while (n) {
        struct dsm_msg *m = (struct dsm_msg *)n;
        n = n->next;
        dsm__comm_isend(m);
        count++;
    }
    return count;
}

static int queue_progress(void)
{
    int n = 0, got;
    if (!dsm__mq_empty(&sendq))
        n += start_queued();
    n += dsm__comm_sends_test();
    dsm__comm_recv_test(&got);
    if (got) {
        dsm__comm_recv_dispatch();
        n++;
        /* Replies the dispatch queued go out in this round. */
        if (!dsm__mq_empty(&sendq))
            n += start_queued();
    }
    return n;
}

static void queue_shutdown(void)
{
    start_queued();
    dsm__comm_sends_finish();
    dsm__comm_recv_cancel();
    dsm__mq_destroy(&sendq);
}

const struct dsm_comm_ops dsm__comm_queue = {
    .name = "queue",
    .init = queue_init,
    .send = queue_send,
    .progress = queue_progress,
    .waiter_progress = 0,
    .shutdown = queue_shutdown,
};
