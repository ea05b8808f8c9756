/*
 * progress.c - the library's periodic work, called by the progress loop of
 * the transports (comm/comm.c), which themselves only move messages:
 *
 *   dsm__progress_issue   before each round of the communication thread,
 *                         under the progress token: queued prefetches go out
 *                         (prefetch.c);
 *   dsm__progress_serve   at the end of every progress round, under the
 *                         progress token, by whoever holds it: requests
 *                         deferred until this node's epoch caught up
 *                         (protocol.c), then requests held by an ordered
 *                         flush (ordered.c);
 *   dsm__progress_tick    after each round of the communication thread,
 *                         without the token: about ten times a second, the
 *                         watchdog looks for waits past DSM_TIMEOUT
 *                         (watchdog.c).
 *
 * Threads: dsm__progress_start, _issue and _tick run in the communication
 * thread only (comm_main): prefetches are never issued by a waiting thread,
 * which may be in the fault handler, where the batches cannot be built; and
 * the tick's state is that thread's alone.  dsm__progress_serve runs in the
 * communication thread, and under the direct, multiple and rma transports
 * (waiter_progress) also in an application thread that waits for a reply
 * and holds the progress token (dsm__comm_try_progress).
 */
#include "dsm_internal.h"

/* The watchdog's clock: communication thread only. */
static uint64_t last_tick;
static unsigned rounds;

void dsm__progress_start(void)
{
    last_tick = dsm__now_ns();
    rounds = 0;
    dsm__liveness_start(last_tick);
}

int dsm__progress_issue(void)
{
    if (dsm__prefetch_queued())
        return dsm__prefetch_run();
    return 0;
}

void dsm__progress_serve(void)
{
    if (dsm__deferred_pending())
        dsm__serve_deferred();
    if (dsm__held_pending())
        dsm__serve_held();
}

void dsm__progress_tick(int events)
{
    /* Every 1024 rounds, and at every idle one, look at the clock: a
     * request may have waited past DSM_TIMEOUT while its own thread is
     * unable to notice. */
    if (++rounds % 1024 == 0 || events == 0) {
        uint64_t now = dsm__now_ns();
        if (now - last_tick > 100000000u) {
            last_tick = now;
            dsm__watchdog_tick(now);
        }
    }
}
