/*
 * comm/rma.c - transport `rma`: pages are read one-sidedly.  Every node
 * exposes its system view (the whole region, at the same offsets on every
 * node) in one MPI window, locked once for all targets at start-up
 * (MPI_Win_lock_all, a passive-target epoch that lasts the whole run).  A
 * read fault copies the page with MPI_Rget from the home's system view
 * straight into the faulting node's system view; the home's protocol code
 * does not run and the home's communication thread is not involved (beyond
 * what the MPI library needs for progress).
 *
 * Everything else stays a message, sent as under `multiple` (MPI_THREAD_
 * MULTIPLE, no library mutex): diffs (the home decodes and applies them,
 * checks them for races, and acks them; run-length diffs would be many
 * small MPI_Puts, and an ack is needed anyway before a release may hand
 * out its notices), write notices, locks, barriers, remote atomics, and the
 * pages of stacks (DSM_PF_NOTRAP: their home must learn who holds them).
 * The communication thread stays for those.
 *
 * Why a Get sees every write it must see (also in libdsm(7)): a node reads
 * a page only after a synchronisation (barrier, lock acquire) that follows
 * every write it must observe.  Each such write reached the home's system
 * view before the home sent anything that completes that synchronisation:
 * a diff is applied before its ack goes out, and the release that waits
 * for the ack comes before the barrier entry or lock release; the home's
 * own writes come before its own flush and barrier entry.  Every message
 * leaves through rma_send, which calls MPI_Win_sync first, so those stores
 * are in the window's public copy before the message that orders them;
 * the Get is issued after the message chain arrived, and its completion
 * (MPI_Test on the Rget request) means the data is in place here.  A home
 * never learns of a Get, so it cannot keep a page writable because nobody
 * holds it: under this transport homes trap their first write to every
 * page in every interval (dsm__remote_reads), and those writes become
 * write notices.
 *
 * Threads: init and shutdown as for every transport; get_page in the
 * faulting application thread (inside the SIGSEGV handler: no malloc).
 */
#define _GNU_SOURCE
#include <mpi.h>

#include "dsm_internal.h"

static MPI_Win win = MPI_WIN_NULL;

static int rma_init(void)
{
    MPI_Info info;
    dsm__comm_use_mpi_lock = 0;
    MPI_Info_create(&info);
    /* Gets only, no accumulates: any ordering, same layout everywhere. */
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Info_set(info, "same_size", "true");
    MPI_Info_set(info, "same_disp_unit", "true");
    int rc = MPI_Win_create(dsm__g.sys, (MPI_Aint)(dsm__g.npages * dsm__g.page_size),
                            (int)dsm__g.page_size, info, dsm__g.comm, &win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS)
        dsm__fatal("DSM_COMM=rma: MPI_Win_create over the %zu-byte region failed; "
                   "use another DSM_COMM or a smaller DSM_HEAP_SIZE",
                   dsm__g.npages * dsm__g.page_size);
    if (MPI_Win_lock_all(MPI_MODE_NOCHECK, win) != MPI_SUCCESS)
        dsm__fatal("DSM_COMM=rma: MPI_Win_lock_all failed");
    return dsm__comm_recv_start();
}

static void rma_send(struct dsm_msg *m)
{
    /* Stores to the system view so far (diffs applied, the home's own
     * writes) are public before the message that orders them. */
    MPI_Win_sync(win);
    dsm__comm_isend(m);
}

/* The ctx of a page wait that is a one-sided read, for the watchdog. */
char dsm__rget_wait;

static void rma_get_page(size_t p, int home)
{
    MPI_Request req;
    int done = 0;
    /* A waiter slot only for the watchdog (DSM_TIMEOUT, state dumps, a home
     * that is gone): nobody completes it, the loop below ends the wait. */
    uint32_t id = dsm__waiter_get(DSM_WAIT_PAGE, 1, &dsm__rget_wait);
    dsm__waiter_note(id, home, p);
    if (MPI_Rget(dsm__sys_page(p), (int)dsm__g.page_size, MPI_BYTE, home, (MPI_Aint)p,
                 (int)dsm__g.page_size, MPI_BYTE, win, &req) != MPI_SUCCESS)
        dsm__fatal("MPI_Rget of page %zu from rank %d failed", p, home);
    for (unsigned long i = 0;; i++) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        dsm__comm_wait_step(i);
        if (dsm__unlikely(__atomic_load_n(&dsm__job_dead, __ATOMIC_RELAXED)) && !dsm__in_die)
            dsm__die();     /* another rank is dead, and reported (watchdog.c) */
        if (i % 1024 == 1023)
            dsm__watchdog_check(dsm__waiter_slot(id), dsm__now_ns());
    }
    dsm__waiter_put(id);
}

static void rma_shutdown(void)
{
    dsm__comm_sends_finish();
    dsm__comm_recv_cancel();
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
}

const struct dsm_comm_ops dsm__comm_rma = {
    .name = "rma",
    .init = rma_init,
    .send = rma_send,
    .progress = dsm__comm_poll,
    .waiter_progress = 1,
    .shutdown = rma_shutdown,
    .get_page = rma_get_page,
};
