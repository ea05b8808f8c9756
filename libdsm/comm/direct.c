/*
 * comm/direct.c - transport `direct`, paper 003's implementation (1): the
 * thread that has something to say sends it itself with MPI_Isend under the
 * one MPI mutex; the communication thread receives by polling MPI_Irecv +
 * MPI_Test under the same mutex.  Unlike the paper's version, a thread that
 * waits for a reply may run the receive loop itself (waiter_progress), so a
 * reply does not wait for the communication thread to be scheduled.
 */
#include <mpi.h>

#include "dsm_internal.h"


static int direct_init(void)
{
    dsm__comm_use_mpi_lock = 1;
    return dsm__comm_recv_start();
}

static void direct_send(struct dsm_msg *m)
{
    dsm__mpi_lock_take();
    dsm__comm_isend(m);
    pthread_mutex_unlock(&dsm__mpi_lock);
}

static void direct_shutdown(void)
{
    dsm__comm_sends_finish();
    pthread_mutex_lock(&dsm__mpi_lock);
    dsm__comm_recv_cancel();
    pthread_mutex_unlock(&dsm__mpi_lock);
}

const struct dsm_comm_ops dsm__comm_direct = {
    .name = "direct",
    .init = direct_init,
    .send = direct_send,
    .progress = dsm__comm_poll,
    .waiter_progress = 1,
    .shutdown = direct_shutdown,
};
