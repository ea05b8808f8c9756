/*
 * trace_roundtrip.c - DSM_TRACE written by libdsm and read back by
 * dsmtool's reader (tools/dsmtool/tracefile.c), every event kind, checked
 * against what the program did and against the library's own statistics.
 *
 * Run under mpiexec (tests/trace/Makefile.inc: 2, 3 and 4 ranks, each
 * DSM_COMM variant).  Rank 0 picks a fresh folder and every rank sets
 * DSM_TRACE to a prefix in it before dsm_init.  The program then: reads a
 * page homed on the next rank (a read fault and an RMR), writes it (a
 * write fault), computes for 20 ms of thread CPU time, takes a lock, makes
 * a remote atomic, and calls the prefetch and fork/join hooks directly.
 * After dsm_finalize every rank loads the whole trace and checks its own
 * rank's events; rank 0 also checks that every message sent between ranks
 * was received.  Counts must equal dsm_stats_get() taken before
 * dsm_finalize, plus the one barrier of dsm_finalize itself; under
 * DSM_COMM=rma, whose page reads are MPI_Rget and no message, the pages
 * fetched are the PAGE_REPLY messages plus at most one per RMR.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "dsm_internal.h"
#include "tracefile.h"

static int rank = -1, errors;

#define CHECK(cond, ...) do { if (!(cond)) { errors++; \
    fprintf(stderr, "trace_roundtrip[rank %d]: FAIL %s:%d: ", rank, __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int provided, nodes;
    char dir[512] = "", prefix[600];

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nodes);
    if (rank == 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/trace_rt.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
            perror(dir);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(prefix, sizeof prefix, "%s/t", dir);
    setenv("DSM_TRACE", prefix, 1);
    dsm_init(&argc, &argv);

    size_t ps = dsm_page_size();
    /* One page per rank (block homes: page i on rank i), a lock counter and
     * an atomic counter on rank 0's page. */
    char *a = dsm_malloc((size_t)nodes * ps);
    int next = (rank + 1) % nodes;
    char *mine = a + (size_t)next * ps;
    CHECK(dsm_home_of(mine) == next, "page of rank %d is homed on %d", next, dsm_home_of(mine));
    volatile long *lock_ctr = (volatile long *)(a + 64);
    long *atomic_ctr = (long *)(a + 128);
    dsm_barrier();

    size_t page = dsm__page_of(mine);
    volatile char c = mine[rank + 256];       /* read fault: an RMR from `next` */
    (void)c;
    mine[rank + 256] = (char)(rank + 1);      /* write fault */
    double c0 = thread_cpu();
    volatile double x = 0;
    while (thread_cpu() - c0 < 0.020)         /* 20 ms of compute */
        x += 1.0;
    dsm_barrier();
    dsm_lock_acquire(5);
    *lock_ctr += 1;
    dsm_lock_release(5);
    dsm__atomic(atomic_ctr, DSM_AOP_FETCH_ADD, 8, 1, 0, 0, 0, NULL);
    DSM_TRACE_PREFETCH(123, 4);
    DSM_TRACE(DSM_TR_FORK, 0, -1, 77, 3);
    DSM_TRACE(DSM_TR_JOIN, 0, -1, 77, 0);
    DSM_TRACE(DSM_TR_TASK_BEGIN, 0, -1, 55, 0);
    DSM_TRACE(DSM_TR_TASK_END, 0, -1, 55, 0);
    DSM_TRACE(DSM_TR_STEAL, 0, -1, (uint64_t)((rank + 1) % nodes), 2);
    dsm_barrier();
    CHECK(*lock_ctr == nodes, "lock counter %ld, expected %d", *lock_ctr, nodes);
    CHECK(*atomic_ctr == nodes, "atomic counter %ld, expected %d", *atomic_ctr, nodes);
    CHECK(a[(size_t)rank * ps + 256 + (rank + nodes - 1) % nodes] == (char)((rank + nodes - 1) % nodes + 1),
          "the previous rank's write is missing");
    struct dsm_stats st;
    dsm_stats_get(&st);
    dsm_finalize();
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- read back ---- */
    struct tr_trace t;
    char err[512];
    if (tr_load(&t, prefix, err, sizeof err)) {
        fprintf(stderr, "trace_roundtrip[rank %d]: FAIL tr_load: %s\n", rank, err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    CHECK(t.nranks == nodes, "trace has %d ranks", t.nranks);
    const struct tr_rank *rk = &t.r[rank];
    CHECK(rk->h.rank == rank && rk->h.nodes == nodes && rk->h.page_size == ps,
          "header: rank %d nodes %d page %lu", rk->h.rank, rk->h.nodes,
          (unsigned long)rk->h.page_size);
    CHECK(!strcmp(rk->h.comm, dsm__g.ops->name), "header comm %s", rk->h.comm);
    long seen[DSM_TR_NKINDS] = { 0 };
    long rfault_ok = 0, wfault_ok = 0, compute_ok = 0, rmr = 0, wf = 0, rf = 0, pages = 0,
         barriers = 0, grants = 0, sent = 0, recvd = 0, comm_threads = 0;
    uint64_t bytes_sent = 0;
    for (int k = 0; k < rk->nth; k++) {
        const struct tr_thread *th = &rk->th[k];
        comm_threads += th->role == DSM_TR_ROLE_COMM;
        for (size_t i = 0; i < th->n; i++) {
            const struct dsm_trace_rec *e = &th->ev[i];
            CHECK(e->kind > 0 && e->kind < DSM_TR_NKINDS, "bad kind %d", e->kind);
            if (e->kind <= 0 || e->kind >= DSM_TR_NKINDS)
                continue;
            seen[e->kind]++;
            CHECK(e->tid == th->tid, "record of thread %d in thread %d's chunk", e->tid, th->tid);
            if (i)
                CHECK(e->t >= th->ev[i - 1].t, "time goes back in thread %d", th->tid);
            switch (e->kind) {
            case DSM_TR_FAULT_END:
                if (e->sub == 0) {
                    rf++; rmr++;
                    if (e->a == page && e->peer == next && e->b > 0) rfault_ok++;
                }
                if (e->sub == 1) {
                    wf++;
                    if (e->a == page && e->peer == next) wfault_ok++;
                }
                break;
            case DSM_TR_COMPUTE:
                if (e->b >= 19000000ULL && e->a >= e->b) compute_ok++;
                CHECK(e->b <= e->a + 2000000ULL, "compute cpu %lu > wall %lu",
                      (unsigned long)e->b, (unsigned long)e->a);
                break;
            case DSM_TR_RECV:
                if (e->peer != rank) {
                    recvd++;
                    if (e->sub == DSM_MSG_PAGE_REPLY) pages++;
                }
                break;
            case DSM_TR_SEND:
                if (e->peer != rank) { sent++; bytes_sent += (uint32_t)e->a; }
                CHECK(e->peer >= 0 && e->peer < nodes, "send to %d", e->peer);
                break;
            case DSM_TR_BARRIER_LEAVE: barriers++; break;
            case DSM_TR_LOCK_REQ:
                CHECK(e->a == 5 && e->peer == 5 % nodes, "lock req %lu to %d",
                      (unsigned long)e->a, e->peer);
                break;
            case DSM_TR_LOCK_GRANT: grants++; break;
            case DSM_TR_PREFETCH:
                CHECK(e->a == 123 && e->b == 4, "prefetch %lu %lu", (unsigned long)e->a,
                      (unsigned long)e->b);
                break;
            case DSM_TR_FORK: CHECK(e->a == 77 && e->b == 3, "fork %lu", (unsigned long)e->a); break;
            case DSM_TR_TASK_BEGIN:
            case DSM_TR_TASK_END:
                CHECK(e->a == 55 && e->b == 0, "task %lu from %lu", (unsigned long)e->a,
                      (unsigned long)e->b);
                break;
            case DSM_TR_STEAL:
                CHECK(e->a == (uint64_t)((rank + 1) % nodes) && e->b == 2, "steal from %lu: %lu",
                      (unsigned long)e->a, (unsigned long)e->b);
                break;
            case DSM_TR_JOIN: CHECK(e->a == 77, "join %lu", (unsigned long)e->a); break;
            case DSM_TR_ATOMIC_BEGIN:
                CHECK(e->peer == 0 && e->sub == DSM_AOP_FETCH_ADD, "atomic at %d op %d", e->peer, e->sub);
                break;
            default: break;
            }
        }
    }
    for (int k = 1; k < DSM_TR_NKINDS; k++) {
        if ((k == DSM_TR_ATOMIC_BEGIN || k == DSM_TR_ATOMIC_END) && rank == 0)
            continue;          /* rank 0 is the atomic's home: no message */
        CHECK(seen[k] > 0, "no %s event on this rank", tr_kind_name(k));
    }
    CHECK(seen[DSM_TR_INIT] == 1 && seen[DSM_TR_FINALIZE] == 1, "init %ld finalize %ld",
          seen[DSM_TR_INIT], seen[DSM_TR_FINALIZE]);
    CHECK(comm_threads == 1, "%ld communication threads", comm_threads);
    CHECK(rfault_ok >= 1, "no read fault on page %zu homed on %d", page, next);
    CHECK(wfault_ok >= 1, "no write fault on page %zu", page);
    CHECK(compute_ok >= 1, "no compute interval of >= 20 ms CPU");
    /* The statistics were taken before dsm_finalize, whose barrier adds one
     * barrier and no fault. */
    CHECK(rf == (long)st.read_faults, "read faults: trace %ld, stats %lu", rf,
          (unsigned long)st.read_faults);
    CHECK(wf == (long)st.write_faults, "write faults: trace %ld, stats %lu", wf,
          (unsigned long)st.write_faults);
    CHECK(rmr == (long)st.rmr_count, "RMRs: trace %ld, stats %lu", rmr, (unsigned long)st.rmr_count);
    const char *comm = getenv("DSM_COMM");
    const int rma = comm && !strcmp(comm, "rma");
    if (!rma) {
        CHECK(pages == (long)st.pages_fetched, "pages: trace %ld, stats %lu", pages,
              (unsigned long)st.pages_fetched);
    } else {
        /* Under rma a read fault copies its page with MPI_Rget, which the
         * trace has only as the fault (dsm-trace(5)); pages still come as
         * PAGE_REPLY messages while a diff is unacknowledged, and for
         * prefetches and stacks.  So the replies are some of the pages
         * fetched, and the rest are at most one per RMR. */
        CHECK(pages <= (long)st.pages_fetched, "pages: trace %ld replies, stats %lu fetched",
              pages, (unsigned long)st.pages_fetched);
        CHECK((long)st.pages_fetched - pages <= rmr,
              "pages: stats %lu fetched, trace %ld replies and %ld RMRs",
              (unsigned long)st.pages_fetched, pages, rmr);
    }
    CHECK(barriers == (long)st.barriers + 1, "barriers: trace %ld, stats %lu + 1", barriers,
          (unsigned long)st.barriers);
    CHECK(grants == (long)st.lock_acquires, "lock grants: trace %ld, stats %lu", grants,
          (unsigned long)st.lock_acquires);
    CHECK(sent >= (long)st.msgs_sent && bytes_sent >= st.bytes_sent,
          "sent: trace %ld msgs %lu bytes, stats %lu msgs %lu bytes (before finalize)", sent,
          (unsigned long)bytes_sent, (unsigned long)st.msgs_sent, (unsigned long)st.bytes_sent);
    if (rank == 0) {
        /* Every message between ranks arrived, per (source, destination, type). */
        for (int s = 0; s < nodes; s++)
            for (int d = 0; d < nodes; d++) {
                if (s == d)
                    continue;
                long ns[16] = { 0 }, nr[16] = { 0 };
                for (int k = 0; k < t.r[s].nth; k++)
                    for (size_t i = 0; i < t.r[s].th[k].n; i++) {
                        const struct dsm_trace_rec *e = &t.r[s].th[k].ev[i];
                        if (e->kind == DSM_TR_SEND && e->peer == d && e->sub < 16) ns[e->sub]++;
                    }
                for (int k = 0; k < t.r[d].nth; k++)
                    for (size_t i = 0; i < t.r[d].th[k].n; i++) {
                        const struct dsm_trace_rec *e = &t.r[d].th[k].ev[i];
                        if (e->kind == DSM_TR_RECV && e->peer == s && e->sub < 16) nr[e->sub]++;
                    }
                for (int ty = 0; ty < 16; ty++)
                    CHECK(ns[ty] == nr[ty], "%d -> %d type %s: %ld sent, %ld received", s, d,
                          tr_msg_name(ty), ns[ty], nr[ty]);
            }
    }
    tr_free(&t);
    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        DIR *dp = opendir(dir);
        struct dirent *de;
        char path[1200];
        while (dp && (de = readdir(dp)))
            if (de->d_name[0] != '.') {
                snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
                unlink(path);
            }
        if (dp) closedir(dp);
        rmdir(dir);
        printf("trace_roundtrip: %s (%d ranks, %s)\n", all ? "FAILED" : "all checks passed",
               nodes, getenv("DSM_COMM") ? getenv("DSM_COMM") : "default transport");
    }
    MPI_Finalize();
    return all ? 1 : 0;
}
