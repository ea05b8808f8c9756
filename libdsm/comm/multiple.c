/*
 * comm/multiple.c - transport `multiple`: paper 003's implementation (1)
 * without its lock, which is what the paper asked for as future work.  MPI
 * is initialised with MPI_THREAD_MULTIPLE (init.c checks the level the MPI
 * library gives, also when the application initialised MPI itself), and the
 * thread that has something to say calls MPI_Isend itself with no library
 * mutex around it; the communication thread receives by polling MPI_Irecv +
 * MPI_Test and serves requests.  A thread waiting for a reply may run the
 * receive loop itself (waiter_progress), as under `direct`.
 *
 * What still serialises: the progress token (one thread dispatches at a
 * time, so protocol handlers never run concurrently), the short list locks
 * in comm.c, and whatever lock the MPI library takes inside (MPICH's global
 * critical section under MPI_THREAD_MULTIPLE).
 */
#include <mpi.h>

#include "dsm_internal.h"

static int multiple_init(void)
{
    dsm__comm_use_mpi_lock = 0;
    return dsm__comm_recv_start();
}

static void multiple_send(struct dsm_msg *m)
{
    dsm__comm_isend(m);
}

static void multiple_shutdown(void)
{
    dsm__comm_sends_finish();
    dsm__comm_recv_cancel();
}

const struct dsm_comm_ops dsm__comm_multiple = {
    .name = "multiple",
    .init = multiple_init,
    .send = multiple_send,
    .progress = dsm__comm_poll,
    .waiter_progress = 1,
    .shutdown = multiple_shutdown,
    .get_page = NULL,
};
