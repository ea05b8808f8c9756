/*
 * liveness.c - a rank whose communication thread falls silent is declared
 * dead, however long the ranks' programs compute.
 *
 * Every communication thread sends each other node a HEARTBEAT (an empty
 * message, kept out of the statistics and the trace) every DSM_TIMEOUT / 4
 * (at most every second), and notes each node a message comes from.
 * A node heard from by no message for DSM_TIMEOUT is stopped (SIGSTOP), hung
 * in the kernel, or cut off: the job ends with one line that names it and
 * what this rank was waiting for, then a state dump.  A rank that computes
 * for hours keeps its communication thread, so it stays alive; so does one
 * that waits in a barrier for such a rank.  DSM_TIMEOUT=0 turns this off.
 *
 * If this thread itself did not run for longer than a beat (the whole
 * process stopped and continued, a host that swapped), nothing it missed
 * proves anything about the others: every node counts as heard from then.
 *
 * Threads: dsm__liveness_heard runs in whichever thread receives a message
 * (the communication thread, or a waiting thread that polls) and only sets
 * that node's byte in fresh[]; the rest (heard[] included) runs in
 * the communication thread (dsm__liveness_start when it starts,
 * dsm__liveness_tick from the watchdog's tick, about ten times a second).
 */
#include <stdlib.h>

#include "dsm_internal.h"

static uint64_t *heard;          /* per node: when its last message was seen */
static uint8_t *fresh;           /* per node: a message came since the last tick */
static uint64_t last_beat, last_tick;
static int live;                 /* 0 before the communication thread runs */

int dsm__liveness_init(void)
{
    heard = calloc((size_t)dsm__g.nodes, sizeof *heard);
    fresh = calloc((size_t)dsm__g.nodes, sizeof *fresh);
    live = 0;
    return heard && fresh ? 0 : -DSM_ENOMEM;
}

/* A beat every quarter of the limit, at most a second apart: a node is
 * declared dead after missing four or more of them. */
static uint64_t beat_ns(void)
{
    uint64_t q = (uint64_t)dsm__g.cfg.timeout_s * 1000000000u / 4;
    return q < 1000000000u ? q : 1000000000u;
}

static void all_heard(uint64_t now)
{
    for (int r = 0; r < dsm__g.nodes; r++)
        heard[r] = now;
}

void dsm__liveness_start(uint64_t now)
{
    all_heard(now);
    last_beat = last_tick = now;
    __atomic_store_n(&live, 1, __ATOMIC_RELEASE);
}

/* On every dispatched message: one store, no clock (the tick reads it). */
void dsm__liveness_heard(int src)
{
    if (fresh)
        __atomic_store_n(&fresh[src], 1, __ATOMIC_RELAXED);
}

static void on_heartbeat(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    (void)h;
    (void)pl;                   /* dsm__dispatch noted the time */
}

void dsm__liveness_handlers(void)
{
    dsm__handler_register(DSM_MSG_HEARTBEAT, on_heartbeat);
}

static uint64_t dead_at;         /* when dsm__job_dead was first seen here */

void dsm__liveness_tick(uint64_t now)
{
    struct dsm_global *g = &dsm__g;
    if (__atomic_load_n(&dsm__job_dead, __ATOMIC_SEQ_CST)) {
        /* No waiting thread ended the job (all compute): end it here. */
        if (!dead_at)
            dead_at = now;
        else if (now - dead_at > DSM_DIE_GRACE_NS)
            dsm__die();
        return;
    }
    if (!g->cfg.timeout_s || g->nodes < 2 || !__atomic_load_n(&live, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&dsm__dying, __ATOMIC_RELAXED))
        return;
    uint64_t beat = beat_ns(), limit = (uint64_t)g->cfg.timeout_s * 1000000000u;
    if (now - last_tick > beat)
        all_heard(now);         /* this thread was not running: see above */
    last_tick = now;
    if (now - last_beat >= beat) {
        last_beat = now;
        for (int r = 0; r < g->nodes; r++)
            if (r != g->rank)
                dsm__msg_send(dsm__msg_new(DSM_MSG_HEARTBEAT, r, 0));
    }
    for (int r = 0; r < g->nodes; r++) {
        if (__atomic_exchange_n(&fresh[r], 0, __ATOMIC_RELAXED))
            heard[r] = now;
        uint64_t t = heard[r];
        if (r != g->rank && t < now && now - t > limit) {
            dsm__watchdog_silent(r, now - t);
            return;
        }
    }
}
