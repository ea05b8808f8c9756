/*
 * sim_exact.c - dsmtool's replay on hand-made traces whose predicted times
 * are known exactly from the model (dsmtool(1), "THE REPLAY"):
 *   - compute only: the run time scales with cpu_factor, and with
 *     compute=cpu it is the thread CPU time times the factor; with
 *     bg_threads = trace it gives back the traced wall time;
 *   - shared cores (processor sharing): two ranks on one core take twice
 *     as long, unequal work and other programs' threads (bg_threads);
 *   - a ping-pong: rank 0 asks, rank 1's communication thread answers,
 *     rank 0's communication thread receives and wakes the waiter;
 *   - a barrier of two ranks through rank 0's communication thread;
 *   - a shared link serialises two transfers;
 *   - the busy-home rule (busy_service_us): a page request to a home whose
 *     application thread computes on a host with no free core waits that
 *     long; to an idle home, with a free core, or a sleeping requester
 *     leaving one, it does not;
 *   - a rank's first copy of a page (xfer_first_us) against a later one,
 *     and its measurement in a trace;
 *   - the communication thread's naps (comm_naps): a message waits for the
 *     end of the nap it arrives in; not while a thread of the rank sleeps
 *     in a wait (for nap_window_us) or within nap_spin_us of its last
 *     event on a host with free cores;
 *   - a waiting thread that receives its own reply, under both service_at,
 *     with measured transfer times (xfer_us, xfer_wait_us), and with
 *     costs = trace, which measures them in the trace and gives back the
 *     traced run time.
 * The traces go through tr_write and tr_load (the file round trip), then
 * sim_run.  One process, no MPI.  Exit 0 pass, 1 fail.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "sim.h"
#include "tracefile.h"

#define US 1000ULL          /* ns */
static int failures;
static char dir[256];

struct th { struct dsm_trace_rec r[64]; size_t n; };
struct rk { struct th t[2]; };

static void ev(struct th *t, uint64_t time, int kind, int sub, int peer, uint64_t a, uint64_t b)
{
    struct dsm_trace_rec *r = &t->r[t->n++];
    memset(r, 0, sizeof *r);
    r->t = time; r->kind = (uint8_t)kind; r->sub = (uint8_t)sub; r->peer = peer;
    r->a = a; r->b = b;
}

/* Write ranks rk[0..n) (thread 0 application, thread 1 communication if it
 * has events) under prefix and load them back. */
static int one_host;         /* save_load: all ranks on one host */
static void measured_xfer(const struct tr_trace *t);

static void save_load(const char *name, struct rk *rk, int n, struct tr_trace *t)
{
    char prefix[512], path[600], err[256];
    snprintf(prefix, sizeof prefix, "%s/%s", dir, name);
    for (int i = 0; i < n; i++) {
        struct dsm_trace_file_hdr h;
        memset(&h, 0, sizeof h);
        memcpy(h.magic, DSM_TRACE_MAGIC, 8);
        h.version = DSM_TRACE_VERSION; h.endian = DSM_TRACE_ENDIAN;
        h.hdr_size = sizeof h; h.rec_size = sizeof(struct dsm_trace_rec);
        h.rank = i; h.nodes = n; h.page_size = 16384; h.t_sync = 0;
        snprintf(h.host, sizeof h.host, "host%d", one_host ? 0 : i);  /* one rank per host */
        struct dsm_trace_rec *recs[2] = { rk[i].t[0].r, rk[i].t[1].r };
        size_t counts[2] = { rk[i].t[0].n, rk[i].t[1].n };
        for (size_t k = 0; k < counts[0]; k++) recs[0][k].tid = 0;
        for (size_t k = 0; k < counts[1]; k++) recs[1][k].tid = 1;
        snprintf(path, sizeof path, "%s.%d", prefix, i);
        if (tr_write(path, &h, recs, counts, counts[1] ? 2 : 1)) {
            perror(path);
            exit(1);
        }
    }
    if (tr_load(t, prefix, err, sizeof err)) {
        fprintf(stderr, "sim_exact: %s\n", err);
        exit(1);
    }
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s.%d", prefix, i);
        unlink(path);
    }
}

static void expect(const char *what, double got, double want)
{
    if (fabs(got - want) > 1e-9 * (fabs(want) > 1 ? fabs(want) : 1)) {
        fprintf(stderr, "FAIL %s: got %.9f, expected %.9f\n", what, got, want);
        failures++;
    } else {
        printf("ok   %s = %.9f\n", what, got);
    }
}

static void run(const struct tr_trace *t, const struct model *m, struct sim_result *r)
{
    char err[256];
    if (sim_run(t, m, r, err, sizeof err)) {
        fprintf(stderr, "FAIL sim_run: %s\n", err);
        exit(1);
    }
}

/* Compute only: INIT at 0, 10 ms of compute (6 ms CPU), FINALIZE. */
static void compute_only(void)
{
    struct rk rk[1];
    struct tr_trace t;
    struct model m;
    struct sim_result r;
    memset(rk, 0, sizeof rk);
    ev(&rk[0].t[0], 0, DSM_TR_THREAD, 0, -1, 0, 0);
    ev(&rk[0].t[0], 0, DSM_TR_INIT, 0, -1, 0, 0);
    ev(&rk[0].t[0], 10000 * US, DSM_TR_COMPUTE, 0, -1, 10000 * US, 6000 * US);
    ev(&rk[0].t[0], 10000 * US, DSM_TR_FINALIZE, 0, -1, 0, 0);
    save_load("compute", rk, 1, &t);

    model_defaults(&m);
    sim_measured(&t, &r);
    expect("compute: measured run", r.run_s, 0.010);
    sim_result_free(&r);
    run(&t, &m, &r);
    expect("compute: wall, cpu_factor 1", r.run_s, 0.010);
    sim_result_free(&r);
    m.cpu_factor = 0.25;
    run(&t, &m, &r);
    expect("compute: wall, cpu_factor 0.25", r.run_s, 0.0025);
    expect("compute: breakdown compute", r.r[0].b.compute, 0.0025);
    sim_result_free(&r);
    m.cpu_factor = 3;
    m.compute = COMPUTE_CPU;
    run(&t, &m, &r);
    expect("compute: cpu time x 3", r.run_s, 0.018);
    sim_result_free(&r);
    m.cores = 2;
    m.ranks_per_host = 4;       /* alone on its 2 cores: no sharing */
    run(&t, &m, &r);
    expect("compute: cpu time x 3, alone on 2 cores", r.run_s, 0.018);
    sim_result_free(&r);
    /* bg_threads = trace: it got 6 of 10 ms, so on 2 cores 2/0.6 - 1 other
     * threads ran; replayed on those cores it takes its wall time again. */
    m.cpu_factor = 1;
    m.ranks_per_host = 0;
    m.bg_from_trace = 1;
    run(&t, &m, &r);
    expect("compute: bg_threads = trace gives back the wall time", r.run_s, 0.010);
    sim_result_free(&r);
    tr_free(&t);
}

/* Ping-pong.  Rank 0 (app): compute 100 us, enter an atomic, SEND a
 * 64-byte ATOMIC_REQ to rank 1 at 100 us, wait; its communication thread
 * receives the 64-byte reply and completes the wait; app leaves.
 * Rank 1's communication thread receives the request, works 5 us, replies.
 * Model: send 2, recv 3, latency 10, 0.5 ns/byte, service 7, wake 11 us.
 *   request leaves rank 0 at 100 + 2 = 102; arrives 102 + 10 + 32 ns;
 *   rank 1 idle: + service 7 -> recv at 119.032, + recv 3 -> 122.032;
 *   5 us of handling (cpu_factor 1) -> reply send at 127.032, leaves 129.032,
 *   arrives 139.064; rank 0's comm thread idle: + 7 -> 146.064, + 3 -> 149.064;
 *   COMPLETE after 1 us of handling -> 150.064; the app wakes: + 11 ->
 *   WAIT_END 161.064; ATOMIC_END 0.5 us later -> 161.564; then 50 us of
 *   compute -> FINALIZE at 211.564 us. */
static void ping_pong(void)
{
    struct rk rk[2];
    struct tr_trace t;
    struct model m;
    struct sim_result r;
    memset(rk, 0, sizeof rk);
    uint64_t key_a = 64 | (uint64_t)7 << 32, key_b = 3;      /* bytes|waiter<<32, id */
    struct th *a0 = &rk[0].t[0], *c0 = &rk[0].t[1], *a1 = &rk[1].t[0], *c1 = &rk[1].t[1];
    ev(a0, 0, DSM_TR_THREAD, 0, -1, 0, 0);
    ev(a0, 0, DSM_TR_INIT, 0, -1, 0, 0);
    ev(a0, 100 * US, DSM_TR_COMPUTE, 0, -1, 100 * US, 100 * US);
    ev(a0, 100 * US, DSM_TR_ATOMIC_BEGIN, 0, 1, 3, 0);
    ev(a0, 100 * US, DSM_TR_SEND, 11, 1, key_a, key_b);
    ev(a0, 100 * US, DSM_TR_WAIT_BEGIN, 6, -1, 7, 0);
    ev(a0, 900 * US, DSM_TR_WAIT_END, 6 | 0x40, -1, 7, 0);   /* slept; traced: long */
    ev(a0, 900 * US + 500, DSM_TR_ATOMIC_END, 0, 1, 3, 0);
    ev(a0, 950 * US + 500, DSM_TR_COMPUTE, 0, -1, 50 * US, 50 * US);
    ev(a0, 950 * US + 500, DSM_TR_FINALIZE, 0, -1, 0, 0);
    ev(c0, 0, DSM_TR_THREAD, 1, -1, 0, 0);
    ev(c0, 800 * US, DSM_TR_RECV, 12, 1, key_a, key_b);
    ev(c0, 801 * US, DSM_TR_COMPLETE, 6, -1, 7, 0);
    ev(c0, 802 * US, DSM_TR_HANDLED, 12, 1, 0, 0);
    ev(a1, 0, DSM_TR_THREAD, 0, -1, 0, 0);
    ev(a1, 0, DSM_TR_INIT, 0, -1, 0, 0);
    ev(a1, 10 * US, DSM_TR_COMPUTE, 0, -1, 10 * US, 10 * US);
    ev(a1, 10 * US, DSM_TR_FINALIZE, 0, -1, 0, 0);
    ev(c1, 0, DSM_TR_THREAD, 1, -1, 0, 0);
    ev(c1, 400 * US, DSM_TR_RECV, 11, 0, key_a, key_b);
    ev(c1, 405 * US, DSM_TR_SEND, 12, 0, key_a, key_b);
    ev(c1, 406 * US, DSM_TR_HANDLED, 11, 0, 0, 0);
    save_load("pingpong", rk, 2, &t);

    model_defaults(&m);
    m.send_us = 2; m.recv_us = 3; m.latency_us = 10; m.byte_ns = 0.5;
    m.service_us = 7; m.wake_us = 11;
    run(&t, &m, &r);
    expect("ping-pong: rank 0 atomic time", r.r[0].b.atomic, 61.564e-6);
    expect("ping-pong: run time", r.run_s, 211.564e-6);
    sim_result_free(&r);
    /* twice as fast a network: latency 5, 0.25 ns/byte:
     * 102 + 5 + .016 + 7 + 3 + 5 + 2 + 5 + .016 + 7 + 3 + 1 + 11 + .5 + 50 */
    m.net_factor = 0.5;
    run(&t, &m, &r);
    expect("ping-pong: net_factor 0.5", r.run_s, 201.532e-6);
    sim_result_free(&r);
    /* The same wait, but polling (no 0x40): poll_us 4 instead of wake_us 11. */
    m.net_factor = 1;
    m.poll_us = 4;
    for (size_t k = 0; k < t.r[0].th[0].n; k++)
        if (t.r[0].th[0].ev[k].kind == DSM_TR_WAIT_END)
            t.r[0].th[0].ev[k].sub &= (uint8_t)~0x40;
    run(&t, &m, &r);
    expect("ping-pong: a polling waiter, poll_us 4", r.run_s, 204.564e-6);
    sim_result_free(&r);
    /* poll_us is measured like wake_us: 801 us (COMPLETE) to 900 us */
    model_defaults(&m);
    sim_trace_costs(&t, &m, NULL, NULL, NULL);
    expect("ping-pong: measured poll_us", m.poll_us, 99);
    tr_free(&t);
}

/* Barrier of 2 ranks: both app threads send BARRIER_ENTER to rank 0;
 * rank 0's communication thread receives both, then sends BARRIER_RELEASE
 * to both; each rank's communication thread receives its release and
 * completes the app's wait.  Rank 1 enters at 300 us, rank 0 at 100 us.
 * Model: all costs 0 except latency 20 us, and self_us 1 for rank 0's
 * messages to itself.
 *   rank 0 enter at 100: self message arrives 101, received by c0 at 101.
 *   rank 1 enter at 300: arrives at rank 0 at 320; c0 receives at 320,
 *   sends the releases at 320 (0 handling): to itself, arrives 321; to
 *   rank 1, arrives 340.  c0 receives its own release at 321 and completes
 *   rank 0's wait: leave 321.  c1 receives at 340: rank 1 leaves at 340.
 *   Then 10 us of compute each: FINALIZE 331 and 350: run = 350 us;
 *   rank 0's barrier took 221 us, rank 1's 40 us. */
static void barrier(void)
{
    struct rk rk[2];
    struct tr_trace t;
    struct model m;
    struct sim_result r;
    memset(rk, 0, sizeof rk);
    struct th *a0 = &rk[0].t[0], *c0 = &rk[0].t[1], *a1 = &rk[1].t[0], *c1 = &rk[1].t[1];
    uint64_t ka0 = 40 | (uint64_t)1 << 32, ka1 = 40 | (uint64_t)2 << 32, kb = 0 | 1ULL << 32;
    uint64_t kr0 = 48 | (uint64_t)1 << 32, kr1 = 48 | (uint64_t)2 << 32;
    ev(a0, 0, DSM_TR_THREAD, 0, -1, 0, 0);
    ev(a0, 0, DSM_TR_INIT, 0, -1, 0, 0);
    ev(a0, 100 * US, DSM_TR_COMPUTE, 0, -1, 100 * US, 100 * US);
    ev(a0, 100 * US, DSM_TR_BARRIER_ENTER, 0, 0, 0, 0);
    ev(a0, 100 * US, DSM_TR_SEND, 5, 0, ka0, kb);
    ev(a0, 100 * US, DSM_TR_WAIT_BEGIN, 3, -1, 1, 0);
    ev(a0, 700 * US, DSM_TR_WAIT_END, 3, -1, 1, 0);
    ev(a0, 700 * US, DSM_TR_BARRIER_LEAVE, 0, 0, 0, 2);
    ev(a0, 710 * US, DSM_TR_COMPUTE, 0, -1, 10 * US, 10 * US);
    ev(a0, 710 * US, DSM_TR_FINALIZE, 0, -1, 0, 0);
    ev(c0, 0, DSM_TR_THREAD, 1, -1, 0, 0);
    ev(c0, 150 * US, DSM_TR_RECV, 5, 0, ka0, kb);
    ev(c0, 150 * US, DSM_TR_HANDLED, 5, 0, 0, 0);
    ev(c0, 600 * US, DSM_TR_RECV, 5, 1, ka1, kb);
    ev(c0, 600 * US, DSM_TR_SEND, 6, 0, kr0, kb);
    ev(c0, 600 * US, DSM_TR_SEND, 6, 1, kr1, kb);
    ev(c0, 600 * US, DSM_TR_HANDLED, 5, 1, 0, 0);
    ev(c0, 650 * US, DSM_TR_RECV, 6, 0, kr0, kb);
    ev(c0, 650 * US, DSM_TR_COMPLETE, 3, -1, 1, 0);
    ev(c0, 650 * US, DSM_TR_HANDLED, 6, 0, 0, 0);
    ev(a1, 0, DSM_TR_THREAD, 0, -1, 0, 0);
    ev(a1, 0, DSM_TR_INIT, 0, -1, 0, 0);
    ev(a1, 300 * US, DSM_TR_COMPUTE, 0, -1, 300 * US, 300 * US);
    ev(a1, 300 * US, DSM_TR_BARRIER_ENTER, 0, 0, 0, 0);
    ev(a1, 300 * US, DSM_TR_SEND, 5, 0, ka1, kb);
    ev(a1, 300 * US, DSM_TR_WAIT_BEGIN, 3, -1, 2, 0);
    ev(a1, 800 * US, DSM_TR_WAIT_END, 3, -1, 2, 0);
    ev(a1, 800 * US, DSM_TR_BARRIER_LEAVE, 0, 0, 0, 1);
    ev(a1, 810 * US, DSM_TR_COMPUTE, 0, -1, 10 * US, 10 * US);
    ev(a1, 810 * US, DSM_TR_FINALIZE, 0, -1, 0, 0);
    ev(c1, 0, DSM_TR_THREAD, 1, -1, 0, 0);
    ev(c1, 790 * US, DSM_TR_RECV, 6, 0, kr1, kb);
    ev(c1, 790 * US, DSM_TR_COMPLETE, 3, -1, 2, 0);
    ev(c1, 790 * US, DSM_TR_HANDLED, 6, 0, 0, 0);
    save_load("barrier", rk, 2, &t);

    model_defaults(&m);
    m.latency_us = 20;
    m.self_us = 1;
    run(&t, &m, &r);
    expect("barrier: run time", r.run_s, 350e-6);
    expect("barrier: rank 0 barrier", r.r[0].b.barrier, 221e-6);
    expect("barrier: rank 1 barrier", r.r[1].b.barrier, 40e-6);
    expect("barrier: mean barrier ms", r.barrier_ms, (0.221 + 0.040) / 2);
    sim_result_free(&r);
    sim_measured(&t, &r);
    expect("barrier: measured run", r.run_s, 810e-6);
    expect("barrier: measured rank 0 barrier", r.r[0].b.barrier, 600e-6);
    sim_result_free(&r);
    tr_free(&t);
}

/* Two ranks each send one 1 MB page-less message to rank 2 at time 0 over
 * a shared link (10 ns/byte, no latency): the second waits for the first.
 * Rank 2's communication thread receives both: at 10 ms and at 20 ms. */
static void shared_link(void)
{
    struct rk rk[3];
    struct tr_trace t;
    struct model m;
    struct sim_result r;
    memset(rk, 0, sizeof rk);
    uint64_t MB = 1000000;
    for (int i = 0; i < 2; i++) {
        struct th *a = &rk[i].t[0];
        ev(a, 0, DSM_TR_THREAD, 0, -1, 0, 0);
        ev(a, 0, DSM_TR_INIT, 0, -1, 0, 0);
        ev(a, 0, DSM_TR_SEND, 3, 2, MB, (uint64_t)i);
        ev(a, 1, DSM_TR_COMPUTE, 0, -1, 1, 1);
        ev(a, 1, DSM_TR_FINALIZE, 0, -1, 0, 0);
    }
    struct th *a2 = &rk[2].t[0], *c2 = &rk[2].t[1];
    ev(a2, 0, DSM_TR_THREAD, 0, -1, 0, 0);
    ev(a2, 0, DSM_TR_INIT, 0, -1, 0, 0);
    ev(a2, 100, DSM_TR_COMPUTE, 0, -1, 100, 100);
    ev(a2, 100, DSM_TR_LOCK_REQ, 0, 2, 9, 0);
    ev(a2, 100, DSM_TR_WAIT_BEGIN, 4, -1, 5, 0);
    ev(a2, 5000, DSM_TR_WAIT_END, 4, -1, 5, 0);
    ev(a2, 5000, DSM_TR_LOCK_GRANT, 0, 2, 9, 0);
    ev(a2, 5000, DSM_TR_FINALIZE, 0, -1, 0, 0);
    ev(c2, 0, DSM_TR_THREAD, 1, -1, 0, 0);
    ev(c2, 1000, DSM_TR_RECV, 3, 0, MB, 0);
    ev(c2, 1000, DSM_TR_HANDLED, 3, 0, 0, 0);
    ev(c2, 2000, DSM_TR_RECV, 3, 1, MB, 1);
    ev(c2, 2000, DSM_TR_COMPLETE, 4, -1, 5, 0);
    ev(c2, 2000, DSM_TR_HANDLED, 3, 1, 0, 0);
    save_load("link", rk, 3, &t);
    model_defaults(&m);
    m.byte_ns = 10;
    run(&t, &m, &r);
    expect("link none: rank 2 lock wait", r.r[2].b.lock, 0.010 - 100e-9);
    sim_result_free(&r);
    m.link = LINK_SHARED;
    run(&t, &m, &r);
    expect("link shared: rank 2 lock wait", r.r[2].b.lock, 0.020 - 100e-9);
    sim_result_free(&r);
    m.link = LINK_NIC;              /* both into rank 2's one adapter */
    run(&t, &m, &r);
    expect("link nic: rank 2 lock wait", r.r[2].b.lock, 0.020 - 100e-9);
    sim_result_free(&r);
    tr_free(&t);
}

/* The direct transport: rank 0's application thread receives its reply
 * itself, inside its wait.  Latency 10 us, service 7 us, all else 0: the
 * request arrives at 110, rank 1's idle communication thread notices it at
 * 117 and replies; the reply arrives at 127.  With service_at = comm the
 * polling waiter takes it at once (run 127 us); with service_at = any it
 * too pays the 7 us (134 us). */
static void self_receive(void)
{
    struct rk rk[2];
    struct tr_trace t;
    struct model m;
    struct sim_result r;
    memset(rk, 0, sizeof rk);
    uint64_t ka = 64 | (uint64_t)9 << 32, kb = 4;
    struct th *a0 = &rk[0].t[0], *a1 = &rk[1].t[0], *c1 = &rk[1].t[1];
    ev(a0, 0, DSM_TR_THREAD, 0, -1, 0, 0);
    ev(a0, 0, DSM_TR_INIT, 0, -1, 0, 0);
    ev(a0, 100 * US, DSM_TR_COMPUTE, 0, -1, 100 * US, 100 * US);
    ev(a0, 100 * US, DSM_TR_ATOMIC_BEGIN, 0, 1, 4, 0);
    ev(a0, 100 * US, DSM_TR_SEND, 11, 1, ka, kb);
    ev(a0, 100 * US, DSM_TR_WAIT_BEGIN, 6, -1, 9, 0);
    ev(a0, 300 * US, DSM_TR_RECV, 12, 1, ka, kb);
    ev(a0, 300 * US, DSM_TR_COMPLETE, 6, -1, 9, 0);
    ev(a0, 300 * US, DSM_TR_HANDLED, 12, 1, 0, 0);
    ev(a0, 300 * US, DSM_TR_WAIT_END, 6, -1, 9, 0);
    ev(a0, 300 * US, DSM_TR_ATOMIC_END, 0, 1, 4, 0);
    ev(a0, 300 * US, DSM_TR_FINALIZE, 0, -1, 0, 0);
    ev(a1, 0, DSM_TR_THREAD, 0, -1, 0, 0);
    ev(a1, 0, DSM_TR_INIT, 0, -1, 0, 0);
    ev(a1, 1 * US, DSM_TR_COMPUTE, 0, -1, 1 * US, 1 * US);
    ev(a1, 1 * US, DSM_TR_FINALIZE, 0, -1, 0, 0);
    ev(c1, 0, DSM_TR_THREAD, 1, -1, 0, 0);
    ev(c1, 200 * US, DSM_TR_RECV, 11, 0, ka, kb);
    ev(c1, 200 * US, DSM_TR_SEND, 12, 0, ka, kb);
    ev(c1, 200 * US, DSM_TR_HANDLED, 11, 0, 0, 0);
    save_load("selfrecv", rk, 2, &t);
    model_defaults(&m);
    m.latency_us = 10;
    m.service_us = 7;
    run(&t, &m, &r);
    expect("self receive: service_at comm", r.run_s, 127e-6);
    sim_result_free(&r);
    m.service_any = 1;
    run(&t, &m, &r);
    expect("self receive: service_at any", r.run_s, 134e-6);
    sim_result_free(&r);
    measured_xfer(&t);
    tr_free(&t);
}

/* Processor sharing: two ranks on one host compute 6 ms and 2 ms of CPU
 * from time 0 (traced wall 10 ms each).  compute = cpu:
 *   cores 2: each has a core: run 6 ms;
 *   cores 1: both at 1/2 until rank 1's 2 ms are done at 4 ms, then rank 0
 *   alone does its last 4 ms: run 8 ms;
 *   cores 1 with equal work (6 and 6 ms): 12 ms, twice the time alone;
 *   cores 2, bg_threads 2: rate 2/4 = 1/2 for both until rank 1 is done
 *   at 4 ms, then 2/3 for rank 0's last 4 ms: run 10 ms. */
static void shared_cores(void)
{
    struct rk rk[2];
    struct tr_trace t;
    struct model m;
    struct sim_result r;
    for (int same = 0; same < 2; same++) {
        memset(rk, 0, sizeof rk);
        for (int i = 0; i < 2; i++) {
            uint64_t cpu = (same || i == 0 ? 6000 : 2000) * US;
            ev(&rk[i].t[0], 0, DSM_TR_THREAD, 0, -1, 0, 0);
            ev(&rk[i].t[0], 0, DSM_TR_INIT, 0, -1, 0, 0);
            ev(&rk[i].t[0], 10000 * US, DSM_TR_COMPUTE, 0, -1, 10000 * US, cpu);
            ev(&rk[i].t[0], 10000 * US, DSM_TR_FINALIZE, 0, -1, 0, 0);
        }
        one_host = 1;
        save_load(same ? "cores_same" : "cores", rk, 2, &t);
        one_host = 0;
        model_defaults(&m);
        m.compute = COMPUTE_CPU;
        if (!same) {
            m.cores = 2;
            run(&t, &m, &r);
            expect("cores 2: run", r.run_s, 0.006);
            sim_result_free(&r);
            m.cores = 1;
            run(&t, &m, &r);
            expect("cores 1: run", r.run_s, 0.008);
            expect("cores 1: rank 1 compute", r.r[1].b.compute, 0.004);
            sim_result_free(&r);
            m.cores = 2;
            m.bg_threads = 2;
            run(&t, &m, &r);
            expect("cores 2, bg_threads 2: run", r.run_s, 0.010);
            sim_result_free(&r);
        } else {
            m.cores = 1;
            run(&t, &m, &r);
            expect("cores 1, equal work: twice the time", r.run_s, 0.012);
            sim_result_free(&r);
            m.ranks_per_host = 1;   /* a host each: no sharing */
            run(&t, &m, &r);
            expect("cores 1, a host per rank", r.run_s, 0.006);
            sim_result_free(&r);
        }
        tr_free(&t);
    }
}

/* Busy home.  One host, two ranks.  Rank 0 computes 100 us, faults on a
 * page of rank 1 and sends PAGE_REQ at 100 us, then polls in its wait and
 * receives the PAGE_REPLY itself (direct transport).  Rank 1's application
 * thread computes from 0 to 105 us and from 105 to 1000 us (traced), its
 * communication thread serves the request.  Model: latency 10 us, all else
 * 0, busy_service_us 50:
 *   cores 2: at 110 us rank 1 computes and rank 0 polls: 2 threads run on 2
 *   cores, no core is free: the request is taken at 160, the reply arrives
 *   at 170: rank 0's fault takes 70 us;
 *   cores 4: a free core: taken at 110, fault 20 us;
 *   the requester's wait slept (0x40): only 1 thread runs: 20 us;
 *   rank 1's compute ends at 50 us (it is finished at 110): 20 us;
 *   a host per rank and cores 0 (a core per rank): rank 1's core is busy:
 *   70 us; contention = trace (the trace's times hold the wait): 20 us. */
static void busy_home_case(int slept, uint64_t home_end, struct tr_trace *t)
{
    struct rk rk[2];
    memset(rk, 0, sizeof rk);
    uint64_t ka = 40 | (uint64_t)9 << 32, kr = 16384 | (uint64_t)9 << 32, kb = 5;
    struct th *a0 = &rk[0].t[0], *a1 = &rk[1].t[0], *c1 = &rk[1].t[1];
    ev(a0, 0, DSM_TR_THREAD, 0, -1, 0, 0);
    ev(a0, 0, DSM_TR_INIT, 0, -1, 0, 0);
    ev(a0, 100 * US, DSM_TR_COMPUTE, 0, -1, 100 * US, 100 * US);
    ev(a0, 100 * US, DSM_TR_FAULT_BEGIN, 0, 1, 5, 0);
    ev(a0, 100 * US, DSM_TR_SEND, 1, 1, ka, kb);
    ev(a0, 100 * US, DSM_TR_WAIT_BEGIN, 1, -1, 9, 0);
    ev(a0, 400 * US, DSM_TR_RECV, 2, 1, kr, kb);
    ev(a0, 400 * US, DSM_TR_COMPLETE, 1, -1, 9, 0);
    ev(a0, 400 * US, DSM_TR_HANDLED, 2, 1, 0, 0);
    ev(a0, 400 * US, DSM_TR_WAIT_END, 1 | (slept ? 0x40 : 0), -1, 9, 0);
    ev(a0, 400 * US, DSM_TR_FAULT_END, 0, 1, 5, 0);
    ev(a0, 400 * US, DSM_TR_FINALIZE, 0, -1, 0, 0);
    ev(a1, 0, DSM_TR_THREAD, 0, -1, 0, 0);
    ev(a1, 0, DSM_TR_INIT, 0, -1, 0, 0);
    if (home_end > 105 * US) {
        ev(a1, 105 * US, DSM_TR_COMPUTE, 0, -1, 105 * US, 105 * US);
        ev(a1, home_end, DSM_TR_COMPUTE, 0, -1, home_end - 105 * US, home_end - 105 * US);
    } else {
        ev(a1, home_end, DSM_TR_COMPUTE, 0, -1, home_end, home_end);
    }
    ev(a1, home_end, DSM_TR_FINALIZE, 0, -1, 0, 0);
    ev(c1, 0, DSM_TR_THREAD, 1, -1, 0, 0);
    ev(c1, 300 * US, DSM_TR_RECV, 1, 0, ka, kb);
    ev(c1, 300 * US, DSM_TR_SEND, 2, 0, kr, kb);
    ev(c1, 300 * US, DSM_TR_HANDLED, 1, 0, 0, 0);
    one_host = 1;
    save_load("busy", rk, 2, t);
    one_host = 0;
}

static double busy_fault(const struct tr_trace *t, int cores, int rph, int contention)
{
    struct model m;
    struct sim_result r;
    model_defaults(&m);
    m.latency_us = 10;
    m.busy_service_us = 50;
    m.cores = cores;
    m.ranks_per_host = rph;
    m.contention_from_trace = contention;
    run(t, &m, &r);
    double f = r.r[0].b.fault;
    sim_result_free(&r);
    return f;
}

static void busy_home(void)
{
    struct tr_trace t;
    busy_home_case(0, 1000 * US, &t);
    expect("busy home, cores 2: rank 0 fault", busy_fault(&t, 2, 0, 0), 70e-6);
    expect("busy home, cores 4 (a free core)", busy_fault(&t, 4, 0, 0), 20e-6);
    expect("busy home, a host per rank, a core each", busy_fault(&t, 0, 1, 0), 70e-6);
    expect("busy home, contention = trace: no rule", busy_fault(&t, 2, 0, 1), 20e-6);
    tr_free(&t);
    busy_home_case(1, 1000 * US, &t);
    expect("busy home, the requester sleeps (a core free)", busy_fault(&t, 2, 0, 0), 20e-6);
    tr_free(&t);
    busy_home_case(0, 50 * US, &t);
    expect("idle home (done computing at 50 us)", busy_fault(&t, 2, 0, 0), 20e-6);
    tr_free(&t);
}

/* First copy.  Rank 0 fetches page 5 from rank 1 twice: faults at 100 us
 * and (after 100 us of compute) again; its waiting thread receives each
 * reply.  Rank 1's application thread is done at 10 us; its communication
 * thread serves both.  Model: latency 10 us, xfer_wait_us.PAGE_REPLY 10,
 * xfer_first_us 30, all else 0:
 *   request at 100 arrives 110, served at once; the reply is rank 0's
 *   first copy of page 5: received at 110 + 30 = 140 (fault 40 us); compute
 *   to 240; request arrives 250, reply received 250 + 10 = 260 (fault 20
 *   us): run 260 us.  Without xfer_first_us: 20 + 20, run 240 us.
 *   Measured in the trace: the first reply took 50 us (150 to 200), the
 *   second 30 (320 to 350): xfer_first_us 50, xfer_wait_us.PAGE_REPLY 40. */
static void first_copy(void)
{
    struct rk rk[2];
    struct tr_trace t;
    struct model m;
    struct sim_result r;
    memset(rk, 0, sizeof rk);
    uint64_t ka = 40 | (uint64_t)9 << 32, kr = 16384 | (uint64_t)9 << 32, kb = 5;
    struct th *a0 = &rk[0].t[0], *a1 = &rk[1].t[0], *c1 = &rk[1].t[1];
    ev(a0, 0, DSM_TR_THREAD, 0, -1, 0, 0);
    ev(a0, 0, DSM_TR_INIT, 0, -1, 0, 0);
    ev(c1, 0, DSM_TR_THREAD, 1, -1, 0, 0);
    for (int i = 0; i < 2; i++) {
        uint64_t t0 = (i ? 300 : 100) * US, tr = (i ? 350 : 200) * US;
        ev(a0, t0, DSM_TR_COMPUTE, 0, -1, 100 * US, 100 * US);
        ev(a0, t0, DSM_TR_FAULT_BEGIN, 0, 1, 5, 0);
        ev(a0, t0, DSM_TR_SEND, 1, 1, ka, kb);
        ev(a0, t0, DSM_TR_WAIT_BEGIN, 1, -1, 9, 0);
        ev(a0, tr, DSM_TR_RECV, 2, 1, kr, kb);
        ev(a0, tr, DSM_TR_COMPLETE, 1, -1, 9, 0);
        ev(a0, tr, DSM_TR_HANDLED, 2, 1, 0, 0);
        ev(a0, tr, DSM_TR_WAIT_END, 1, -1, 9, 0);
        ev(a0, tr, DSM_TR_FAULT_END, 0, 1, 5, 0);
        ev(c1, (i ? 320 : 150) * US, DSM_TR_RECV, 1, 0, ka, kb);
        ev(c1, (i ? 320 : 150) * US, DSM_TR_SEND, 2, 0, kr, kb);
        ev(c1, (i ? 320 : 150) * US, DSM_TR_HANDLED, 1, 0, 0, 0);
    }
    ev(a0, 350 * US, DSM_TR_FINALIZE, 0, -1, 0, 0);
    ev(a1, 0, DSM_TR_THREAD, 0, -1, 0, 0);
    ev(a1, 0, DSM_TR_INIT, 0, -1, 0, 0);
    ev(a1, 10 * US, DSM_TR_COMPUTE, 0, -1, 10 * US, 10 * US);
    ev(a1, 10 * US, DSM_TR_FINALIZE, 0, -1, 0, 0);
    save_load("first", rk, 2, &t);
    model_defaults(&m);
    m.latency_us = 10;
    m.xfer_us[XFER_TO_WAITER][2] = 10;
    run(&t, &m, &r);
    expect("first copy: no xfer_first_us, run", r.run_s, 240e-6);
    sim_result_free(&r);
    m.xfer_first_us = 30;
    run(&t, &m, &r);
    expect("first copy: xfer_first_us 30, run", r.run_s, 260e-6);
    expect("first copy: rank 0 fault", r.r[0].b.fault, 60e-6);
    sim_result_free(&r);
    model_defaults(&m);
    sim_trace_costs(&t, &m, NULL, NULL, NULL);
    expect("first copy: measured xfer_first_us", m.xfer_first_us, 50);
    expect("first copy: measured xfer_wait_us.PAGE_REPLY", m.xfer_us[XFER_TO_WAITER][2], 40);
    tr_free(&t);
}

/* Measured transfer times (xfer_us, xfer_wait_us) on the self-receive
 * trace of self_receive(): built there, replayed here. */
static void measured_xfer(const struct tr_trace *t)
{
    struct model m;
    struct sim_result r;
    model_defaults(&m);
    m.latency_us = 10;
    m.service_us = 7;
    /* the request reaches rank 1's idle comm thread 50 us after it is sent
     * (instead of 10 + 7): 150; the reply reaches the waiter at 160 */
    m.xfer_us[XFER_TO_COMM][11] = 50;
    run(t, &m, &r);
    expect("xfer_us.ATOMIC_REQ 50: run", r.run_s, 160e-6);
    sim_result_free(&r);
    m.xfer_us[XFER_TO_WAITER][12] = 30;
    run(t, &m, &r);
    expect("xfer_wait_us.ATOMIC_REPLY 30: run", r.run_s, 180e-6);
    sim_result_free(&r);
    /* costs = trace: the trace's own 100 us each way: the traced 300 us */
    model_defaults(&m);
    sim_trace_costs(t, &m, NULL, NULL, NULL);
    expect("trace costs: xfer_us.ATOMIC_REQ", m.xfer_us[XFER_TO_COMM][11], 100);
    expect("trace costs: xfer_wait_us.ATOMIC_REPLY", m.xfer_us[XFER_TO_WAITER][12], 100);
    model_defaults(&m);
    m.costs_from_trace = 1;
    run(t, &m, &r);
    expect("costs = trace: run", r.run_s, 300e-6);
    sim_result_free(&r);
}

/* The nap rule (comm_naps, commnap.c).  Rank 0 asks rank 1 for page 5 at
 * time S; rank 1's communication thread, idle since 0, serves the request;
 * rank 0's waiting thread receives the reply.  Rank 1's application thread
 * computes from 0 to 2000 us, or (sleeps) waits from 10 to 2000 us in a
 * wait that slept.  A rank per host.  Model: xfer_wait_us.PAGE_REQ and
 * .PAGE_REPLY 10, everything else 0, so the fault is
 * (noticed - S) + 10:
 *   naps off: noticed at S (xfer_us.PAGE_REQ 0, service_us 0): 10 us;
 *   naps on, 1 core per rank (a full host: no spin), naps 20 40 80 160 200
 *   ... from 0, ending at 20 60 140 300 500 700 900 1100 1300:
 *     S 100, arrival 110: at 140, fault 50; S 1000, arrival 1010: at 1100,
 *     fault 110;
 *   a sleeping waiter on rank 1: polls until 500, then naps ending at 520
 *     560 640 800 1000 1200: S 100: at 110, fault 20; S 1000: at 1200, 210;
 *   4 cores per host (2 threads: not full): spins 50 us, then naps ending
 *     at 70 110 190: S 30: at 40, fault 20; S 120, arrival 130: at 190, 80;
 *     on 1 core S 120: at 140, fault 30.
 * With nap_late_us 30 every nap lasts 30 us longer:
 *   1 core: naps end at 50 120 230 420 650 880 1110: S 100: at 120, fault
 *     30; S 1000: at 1110, fault 120;
 *   a sleeping waiter: at 550 620 730 920 1150: S 1000: at 1150, fault 160;
 *   4 cores: spins to 50, naps end at 100 170: S 120: at 170, fault 60. */
static void nap_case(uint64_t S, int sleeps, struct tr_trace *t)
{
    struct rk rk[2];
    memset(rk, 0, sizeof rk);
    uint64_t ka = 40 | (uint64_t)9 << 32, kr = 16384 | (uint64_t)9 << 32, kb = 5;
    struct th *a0 = &rk[0].t[0], *a1 = &rk[1].t[0], *c1 = &rk[1].t[1];
    uint64_t tr = S + 300 * US;         /* traced times after the send: any */
    ev(a0, 0, DSM_TR_THREAD, 0, -1, 0, 0);
    ev(a0, 0, DSM_TR_INIT, 0, -1, 0, 0);
    ev(a0, S, DSM_TR_COMPUTE, 0, -1, S, S);
    ev(a0, S, DSM_TR_FAULT_BEGIN, 0, 1, 5, 0);
    ev(a0, S, DSM_TR_SEND, 1, 1, ka, kb);
    ev(a0, S, DSM_TR_WAIT_BEGIN, 1, -1, 9, 0);
    ev(a0, tr, DSM_TR_RECV, 2, 1, kr, kb);
    ev(a0, tr, DSM_TR_COMPLETE, 1, -1, 9, 0);
    ev(a0, tr, DSM_TR_HANDLED, 2, 1, 0, 0);
    ev(a0, tr, DSM_TR_WAIT_END, 1, -1, 9, 0);
    ev(a0, tr, DSM_TR_FAULT_END, 0, 1, 5, 0);
    ev(a0, tr, DSM_TR_FINALIZE, 0, -1, 0, 0);
    ev(a1, 0, DSM_TR_THREAD, 0, -1, 0, 0);
    ev(a1, 0, DSM_TR_INIT, 0, -1, 0, 0);
    if (sleeps) {
        ev(a1, 10 * US, DSM_TR_COMPUTE, 0, -1, 10 * US, 10 * US);
        ev(a1, 10 * US, DSM_TR_BARRIER_ENTER, 0, -1, 1, 0);
        ev(a1, 10 * US, DSM_TR_WAIT_BEGIN, 2, -1, 3, 0);
        ev(a1, 2000 * US, DSM_TR_WAIT_END, 2 | 0x40, -1, 3, 0);
        ev(a1, 2000 * US, DSM_TR_BARRIER_LEAVE, 0, -1, 1, 0);
    } else {
        ev(a1, 2000 * US, DSM_TR_COMPUTE, 0, -1, 2000 * US, 2000 * US);
    }
    ev(a1, 2000 * US, DSM_TR_FINALIZE, 0, -1, 0, 0);
    ev(c1, 0, DSM_TR_THREAD, 1, -1, 0, 0);
    ev(c1, tr - 50 * US, DSM_TR_RECV, 1, 0, ka, kb);
    ev(c1, tr - 50 * US, DSM_TR_SEND, 2, 0, kr, kb);
    ev(c1, tr - 50 * US, DSM_TR_HANDLED, 1, 0, 0, 0);
    save_load("nap", rk, 2, t);
}

static double nap_fault_late(uint64_t S, int sleeps, int naps, int cores, double late)
{
    struct tr_trace t;
    struct model m;
    struct sim_result r;
    nap_case(S, sleeps, &t);
    model_defaults(&m);
    m.xfer_us[XFER_TO_WAITER][1] = 10;
    m.xfer_us[XFER_TO_WAITER][2] = 10;
    m.comm_naps = naps;
    m.cores = cores;
    m.nap_late_us = late;
    run(&t, &m, &r);
    double f = r.r[0].b.fault;
    sim_result_free(&r);
    tr_free(&t);
    return f;
}

static double nap_fault(uint64_t S, int sleeps, int naps, int cores)
{
    return nap_fault_late(S, sleeps, naps, cores, 0);
}

static void comm_naps(void)
{
    char err[256];
    struct model m;
    expect("naps off: fault", nap_fault(100 * US, 0, 0, 0), 10e-6);
    expect("naps, S 100: fault", nap_fault(100 * US, 0, 1, 0), 50e-6);
    expect("naps, S 1000: fault", nap_fault(1000 * US, 0, 1, 0), 110e-6);
    expect("naps, a sleeping waiter, S 100: fault", nap_fault(100 * US, 1, 1, 0), 20e-6);
    expect("naps, a sleeping waiter, S 1000: fault", nap_fault(1000 * US, 1, 1, 0), 210e-6);
    expect("naps, 4 cores (spin), S 30: fault", nap_fault(30 * US, 0, 1, 4), 20e-6);
    expect("naps, 4 cores (spin), S 120: fault", nap_fault(120 * US, 0, 1, 4), 80e-6);
    expect("naps, 1 core, S 120: fault", nap_fault(120 * US, 0, 1, 0), 30e-6);
    expect("naps 30 us late, S 100: fault", nap_fault_late(100 * US, 0, 1, 0, 30), 30e-6);
    expect("naps 30 us late, S 1000: fault", nap_fault_late(1000 * US, 0, 1, 0, 30), 120e-6);
    expect("naps 30 us late, a sleeping waiter, S 1000: fault",
           nap_fault_late(1000 * US, 1, 1, 0, 30), 160e-6);
    expect("naps 30 us late, 4 cores (spin), S 120: fault",
           nap_fault_late(120 * US, 0, 1, 4, 30), 60e-6);
    expect("naps 30 us late, naps off: fault", nap_fault_late(100 * US, 0, 0, 0, 30), 10e-6);
    /* the keys */
    model_defaults(&m);
    expect("model: comm_naps = on", model_set(&m, "comm_naps = on", err, sizeof err) == 0 &&
           m.comm_naps == 1, 1);
    expect("model: comm_naps = maybe refused",
           model_set(&m, "comm_naps=maybe", err, sizeof err) == -1 && strstr(err, "on or off"), 1);
    expect("model: nap_first_us = 0 refused",
           model_set(&m, "nap_first_us=0", err, sizeof err) == -1, 1);
    expect("model: nap_max_us = 100", model_set(&m, "nap_max_us=100", err, sizeof err) == 0 &&
           m.nap_max_us == 100, 1);
    expect("model: nap_late_us = 72.5", model_set(&m, "nap_late_us=72.5", err, sizeof err) == 0 &&
           m.nap_late_us == 72.5, 1);
    expect("model: nap_late_us = -1 refused",
           model_set(&m, "nap_late_us=-1", err, sizeof err) == -1, 1);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/sim_exact.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror(dir);
        return 1;
    }
    compute_only();
    ping_pong();
    barrier();
    shared_link();
    self_receive();
    shared_cores();
    busy_home();
    first_copy();
    comm_naps();
    rmdir(dir);
    if (failures) {
        fprintf(stderr, "sim_exact: %d checks failed\n", failures);
        return 1;
    }
    printf("sim_exact: all checks passed\n");
    return 0;
}
