/*
 * bcast.c - dsm_bcast for OpenMP programs under the shim.
 *
 * Under the shim only rank 0 runs the program's sequential code, while the
 * other ranks wait in shim_worker_loop for the next fork.  So a dsm_bcast
 * the program calls there is forked like a region: rank 0 writes the
 * arguments into the control block with a new sequence number and makes the
 * fork barrier; the waiting ranks see the broadcast instead of a region
 * (shim_bcast_worker) and make the same collective call, dsm__bcast.  The
 * program gets its data everywhere before the next parallel region, which
 * then reads it without faulting.
 *
 * Threads: rank 0's initial thread (the hook); the main thread of the other
 * ranks (shim_bcast_worker).
 */
#include "shim.h"

static int hook(void *addr, size_t len, int root)
{
    struct shim_ctl *c = shim.ctl;

    if (!shim.active)
        return 0;            /* start-up or shut-down: a plain collective */
    if (shim_self()->level > 0)
        dsm__fatal("dsm_bcast(%p, %zu, %d) was called inside a parallel region; "
                   "under the OpenMP shim call it from sequential code, where rank 0 "
                   "alone runs and the shim has every rank take part", addr, len, root);
    if (shim.nodes == 1) {
        dsm__bcast(addr, len, root);
        return 1;
    }
    c->bcast = 1;
    c->bcast_addr = addr;
    c->bcast_len = len;
    c->bcast_root = root;
    c->seq = c->seq + 1;
    shim_fork_barrier();     /* the fork: the others get the arguments */
    dsm__bcast(addr, len, root);
    /* Every rank read the arguments before the barrier that begins
     * dsm__bcast, so this write races with nobody. */
    c->bcast = 0;
    return 1;
}

void shim_bcast_worker(const struct shim_ctl *c)
{
    dsm__bcast(c->bcast_addr, (size_t)c->bcast_len, c->bcast_root);
}

void shim_bcast_init(struct dsm_runtime_hooks *h)
{
    h->bcast = hook;
}
