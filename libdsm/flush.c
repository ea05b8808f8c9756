/*
 * flush.c - dsm_flush(): point-to-point visibility without a barrier or a
 * lock, for programs that synchronise through shared flags (OpenMP's
 * flush).
 *
 * A flush is a release followed by an acquire that names no lock: this
 * node's writes go to their homes (and the homes acknowledge them), then
 * every copy this node holds of a page homed elsewhere is dropped, so the
 * next access fetches the home's page.  The acquire has no write notices
 * to go by (nobody told this node what changed), so it drops every copy
 * fetched since the last flush (page_table.c keeps that list).  So if
 * thread A writes x, flushes, then sets a flag and flushes, and thread B,
 * on any node, flushes until it sees the flag and then reads x, B sees A's
 * x: A's flush returned only after x's home applied it, and B's copy of x's
 * page, if any, is from before the flush that saw the flag, so it is
 * dropped.
 *
 * Threads: any application thread, at any time (also from a signal
 * handler that runs on a synchronous signal, as the shim's flush trap does).
 */
#include <stdlib.h>

#include "dsm_internal.h"

void dsm_flush(void)
{
    uint32_t *list;
    uint64_t t0;

    DSM_CHECK_RUNNING();
    t0 = dsm__now_ns();
    dsm__release_writes(0);
    size_t n = dsm__pt_take_copies(&list);
    for (size_t i = 0; i < n; i++)
        dsm__invalidate_copy(list[i], NULL);
    free(list);
    DSM_STAT_ADD(flushes, 1);
    DSM_STAT_ADD(flush_ns, dsm__now_ns() - t0);
}
