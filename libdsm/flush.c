/*
 * flush.c - dsm_flush(): point-to-point visibility without a barrier or a
 * lock, for programs that synchronise through shared flags (the flush of
 * weak shared-memory models: a release and an acquire in one call).
 *
 * A flush is a release that tells every node what it released, followed
 * by an acquire of what the others told this node.
 *
 * Release: this node's writes go to their homes, and the homes acknowledge
 * them (as at a lock release).  Then, if this node released any page since
 * its last flush (here or at a lock release) or changed one with an atomic
 * operation at its home, every other node gets the list (FLUSH_NOTICE),
 * and the flush waits until all have recorded it.
 *
 * Acquire: the pages that other nodes' flushes listed since this node's
 * last flush are dropped here (if this node holds a copy), so the next
 * access fetches the home's page.  Copies of pages nobody listed stay: a
 * thread that polls a flag costs a local check a poll until the writer
 * flushes, and a thread that flushes in a loop over read-only data keeps
 * its copies.
 *
 * Why it is enough, for a program that flushes as such a model says it must:
 * thread A writes x, flushes, sets a flag and flushes; thread B, on
 * another node, flushes and reads the flag until it is set, then flushes
 * once more and reads x.  A's first flush returned only after x's home
 * applied x and after B's node had recorded x's page, and A set the flag
 * after that; so when B sees the flag, B's node has the page recorded.
 * Either a flush of B's node took it already (and dropped B's copy then:
 * a copy of x's page that B holds now was fetched after x reached its
 * home), or B's flush after the flag takes it and drops the copy.  Without
 * that last flush B may read a stale x: its flush before the flag read can
 * come before the notice, and the flag itself may be on a page homed at B,
 * or fetched fresh because B had no copy.  Writes released by a lock
 * release and then announced by a flush of the flag are covered the same
 * way; a flag set without a flush by the writer is not (a race in such a
 * model too).
 * Barriers clear both lists (page_table.c): their own notices drop every
 * copy that a flush would.
 *
 * The acquire takes the list and then drops its pages, under one mutex: a
 * second thread of this node that flushed meanwhile found the list empty
 * and went on to read a page the first had taken but not yet dropped (a
 * stale read in tests/omp flush_flag with 2 threads a rank, about 1 run
 * in 70).  Now it waits until those drops are done.
 *
 * Where the transport lets a waiting thread drive MPI, a flush also runs a
 * progress round: a thread polling a flag serves the notices and page
 * requests that its peers wait for, instead of leaving them to a
 * communication thread that may be asleep or without a core.
 *
 * Threads: any application thread, at any time (also from a signal
 * handler that runs on a synchronous signal, as the shim's flush trap does);
 * on_flush_notice, the handler of FLUSH_NOTICE, under the progress token.
 */
#include <pthread.h>
#include <stdlib.h>

#include "dsm_internal.h"

static pthread_mutex_t acquire_lock = PTHREAD_MUTEX_INITIALIZER;

/* Send the pages to every other node (FLUSH_NOTICE) and wait until all
 * have recorded them. */
static void flush_notify(const uint32_t *pages, size_t n)
{
    struct dsm_global *g = &dsm__g;
    uint32_t waiter = dsm__waiter_get(DSM_WAIT_ACKS, 0, NULL);
    dsm__waiter_add_expected(waiter, g->nodes - 1);
    for (int r = 0; r < g->nodes; r++)
        if (r != g->rank)
            dsm__msg_send_pages(DSM_MSG_FLUSH_NOTICE, r, pages, n, 0, waiter, 0, 0, 0);
    dsm__waiter_wait(waiter);
    dsm__waiter_put(waiter);
}

/* Another node's dsm_flush released these pages: this node's next flush
 * drops its copies of them.  Acknowledged once the pages are recorded, so
 * that the sender's flush returns only when every node will drop them. */
static void on_flush_notice(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    if (h->len % 4)
        dsm__msg_malformed(h);
    if (dsm__defer_early(h, pl))
        return;
    dsm__pt_add_pending((const uint32_t *)(const void *)pl, h->len / 4);
    if (h->flags & DSM_MF_LAST) {
        struct dsm_msg *m = dsm__msg_new(DSM_MSG_DIFF_ACK, h->src, 0);
        m->hdr.waiter = h->waiter;
        dsm__msg_send(m);
    }
}

void dsm__flush_handlers(void)
{
    dsm__handler_register(DSM_MSG_FLUSH_NOTICE, on_flush_notice);
}

void dsm_flush(void)
{
    uint32_t *list;
    uint64_t t0;
    size_t n;

    DSM_CHECK_RUNNING();
    t0 = dsm__now_ns();
    dsm__release_writes_ordered();
    n = dsm__pt_take_announce(&list);
    if (n && dsm__g.nodes > 1)
        flush_notify(list, n);
    free(list);
    pthread_mutex_lock(&acquire_lock);
    n = dsm__pt_take_pending(&list);
    for (size_t i = 0; i < n; i++)
        dsm__invalidate_copy(list[i], NULL);
    pthread_mutex_unlock(&acquire_lock);
    free(list);
    if (n)
        DSM_STAT_ADD(flush_drops, 1);
    /* A thread that polls a flag with flushes serves what has arrived
     * (notices, diffs, page requests) itself where the transport lets it,
     * instead of leaving it to a communication thread that may be asleep
     * or waiting for a core. */
    if (dsm__g.ops->waiter_progress)
        dsm__comm_try_progress();
    DSM_STAT_ADD(flushes, 1);
    DSM_STAT_ADD(flush_ns, dsm__now_ns() - t0);
}
