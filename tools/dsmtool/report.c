/*
 * report.c - dsmtool report: where each rank's time went and what it sent,
 * from a trace alone (text, or one JSON object per line).  The counters
 * follow DSM_STATS's definitions, so the two agree on the same run
 * (messages a rank sends itself are not counted; barriers include the
 * collectives of dsm_malloc, dsm_free and dsm_finalize).  Single-threaded.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dsmtool.h"

#define NT 16

struct rrow {
    double span, compute, compute_cpu, fault, barrier, lock, atomic, other, handling;
    uint64_t rfaults, wfaults, inflight, rmr, pages_fetched, barriers, barrier_msgs,
             locks, prefetches, forks, tasks, tasks_stolen, steals, steals_empty;
    double rmr_ns, barrier_ns, lock_ns;
    uint64_t sent[NT], sent_bytes[NT], recv[NT], recv_bytes[NT];
    uint64_t msgs_sent, bytes_sent, msgs_recv;
    int app_threads;
};

static int enter_kind(int k)
{
    return k == DSM_TR_FAULT_BEGIN || k == DSM_TR_BARRIER_ENTER || k == DSM_TR_LOCK_REQ ||
           k == DSM_TR_LOCK_RELEASE || k == DSM_TR_ATOMIC_BEGIN || k == DSM_TR_FINALIZE;
}

static int leave_kind(int k)
{
    return k == DSM_TR_FAULT_END || k == DSM_TR_BARRIER_LEAVE || k == DSM_TR_LOCK_GRANT ||
           k == DSM_TR_LOCK_RELEASED || k == DSM_TR_ATOMIC_END || k == DSM_TR_INIT;
}

static void rank_row(const struct tr_rank *rk, int rank, struct rrow *o)
{
    memset(o, 0, sizeof *o);
    o->span = (double)(rk->t_end - rk->t_begin) * 1e-9;
    for (int k = 0; k < rk->nth; k++) {
        const struct tr_thread *th = &rk->th[k];
        int depth = 0, top = 0, app = th->role == DSM_TR_ROLE_APP;
        uint64_t enter_t = 0, recv_t = 0;
        o->app_threads += app;
        for (size_t i = 0; i < th->n; i++) {
            const struct dsm_trace_rec *e = &th->ev[i];
            int type = e->sub < NT ? e->sub : 0;
            switch (e->kind) {
            case DSM_TR_COMPUTE:
                o->compute += (double)e->a * 1e-9;
                o->compute_cpu += (double)e->b * 1e-9;
                break;
            case DSM_TR_SEND:
                if (e->peer != rank) {
                    o->sent[type]++;
                    o->sent_bytes[type] += (uint32_t)e->a;
                    o->msgs_sent++;
                    o->bytes_sent += (uint32_t)e->a;
                }
                break;
            case DSM_TR_RECV:
                recv_t = e->t;
                if (e->peer != rank) {
                    o->recv[type]++;
                    o->recv_bytes[type] += (uint32_t)e->a;
                    o->msgs_recv++;
                    if (e->sub == 2)
                        o->pages_fetched++;
                }
                break;
            case DSM_TR_HANDLED:
                o->handling += (double)(e->t - recv_t) * 1e-9;
                break;
            case DSM_TR_FAULT_END:
                if (e->sub == 0) { o->rfaults++; o->rmr++; o->rmr_ns += (double)e->b; }
                else if (e->sub == 1) o->wfaults++;
                else if (e->sub == 2) o->inflight++;
                break;
            case DSM_TR_BARRIER_LEAVE:
                o->barriers++;
                o->barrier_msgs += e->b;
                break;
            case DSM_TR_LOCK_GRANT:
                if (!e->b) o->locks++;
                break;
            case DSM_TR_PREFETCH:
                o->prefetches++;
                break;
            case DSM_TR_FORK:
                o->forks++;
                break;
            case DSM_TR_TASK_BEGIN:
                o->tasks++;
                if (e->b)
                    o->tasks_stolen++;
                break;
            case DSM_TR_STEAL:
                if (e->b)
                    o->steals++;
                else
                    o->steals_empty++;
                break;
            default:
                break;
            }
            if (!app)
                continue;
            if (enter_kind(e->kind)) {
                if (depth++ == 0) { top = e->kind; enter_t = e->t; }
            } else if (leave_kind(e->kind) && depth > 0 && --depth == 0) {
                double d = (double)(e->t - enter_t) * 1e-9;
                switch (top) {
                case DSM_TR_FAULT_BEGIN: o->fault += d; break;
                case DSM_TR_BARRIER_ENTER: o->barrier += d; o->barrier_ns += d * 1e9; break;
                case DSM_TR_LOCK_REQ:
                    o->lock += d;
                    if (!e->b) o->lock_ns += d * 1e9;
                    break;
                case DSM_TR_LOCK_RELEASE: o->lock += d; break;
                case DSM_TR_ATOMIC_BEGIN: o->atomic += d; break;
                default: o->other += d; break;
                }
            }
        }
    }
}

static void add(struct rrow *t, const struct rrow *r)
{
    double *td = &t->span, *rd = (double *)&r->span;
    for (int i = 0; i < 9; i++)
        td[i] += rd[i];
    uint64_t *tu = &t->rfaults; const uint64_t *ru = &r->rfaults;
    for (int i = 0; i < 14; i++)        /* rfaults .. steals_empty */
        tu[i] += ru[i];
    t->rmr_ns += r->rmr_ns; t->barrier_ns += r->barrier_ns; t->lock_ns += r->lock_ns;
    for (int i = 0; i < NT; i++) {
        t->sent[i] += r->sent[i]; t->sent_bytes[i] += r->sent_bytes[i];
        t->recv[i] += r->recv[i]; t->recv_bytes[i] += r->recv_bytes[i];
    }
    t->msgs_sent += r->msgs_sent; t->bytes_sent += r->bytes_sent; t->msgs_recv += r->msgs_recv;
    t->app_threads += r->app_threads;
}

static double mean_ms(double ns, uint64_t n) { return n ? ns / (double)n * 1e-6 : 0; }

static void print_json(FILE *out, const char *who, const struct rrow *r, uint64_t job_barriers,
                       int nodes)
{
    double busy = r->span * (r->app_threads ? r->app_threads : 1);
    double comm = r->fault + r->barrier + r->lock + r->atomic;
    fprintf(out, "{\"report\":\"dsmtool\",\"rank\":%s,\"nodes\":%d,\"span_s\":%.6f,"
            "\"user_s\":%.6f,\"user_cpu_s\":%.6f,\"fault_wait_s\":%.6f,\"barrier_s\":%.6f,"
            "\"lock_s\":%.6f,\"atomic_s\":%.6f,\"other_s\":%.6f,\"handling_s\":%.6f,"
            "\"user_ratio\":%.4f,\"fault_ratio\":%.4f,\"barrier_ratio\":%.4f,"
            "\"lock_ratio\":%.4f,\"comm_ratio\":%.4f,"
            "\"read_faults\":%" PRIu64 ",\"write_faults\":%" PRIu64 ",\"inflight_waits\":%" PRIu64
            ",\"rmr_count\":%" PRIu64 ",\"rmr_ms\":%.4f,\"pages_fetched\":%" PRIu64
            ",\"barriers\":%" PRIu64 ",\"barrier_ms\":%.4f,\"msgs_per_barrier\":%.2f"
            ",\"lock_acquires\":%" PRIu64 ",\"lock_wait_ms\":%.4f,\"prefetches\":%" PRIu64
            ",\"forks\":%" PRIu64 ",\"tasks_run\":%" PRIu64 ",\"tasks_stolen\":%" PRIu64
            ",\"steals\":%" PRIu64 ",\"steals_empty\":%" PRIu64
            ",\"msgs_sent\":%" PRIu64 ",\"bytes_sent\":%" PRIu64
            ",\"msgs_received\":%" PRIu64 ",\"by_type\":{",
            who, nodes, r->span, r->compute, r->compute_cpu, r->fault, r->barrier, r->lock,
            r->atomic, r->other, r->handling, busy > 0 ? r->compute / busy : 0,
            busy > 0 ? r->fault / busy : 0, busy > 0 ? r->barrier / busy : 0,
            busy > 0 ? r->lock / busy : 0, busy > 0 ? comm / busy : 0,
            r->rfaults, r->wfaults, r->inflight, r->rmr, mean_ms(r->rmr_ns, r->rmr),
            r->pages_fetched, job_barriers, mean_ms(r->barrier_ns, r->barriers),
            job_barriers ? (double)r->barrier_msgs / (double)job_barriers : 0,
            r->locks, mean_ms(r->lock_ns, r->locks), r->prefetches, r->forks, r->tasks,
            r->tasks_stolen, r->steals, r->steals_empty, r->msgs_sent, r->bytes_sent,
            r->msgs_recv);
    int first = 1;
    for (int i = 1; i < NT; i++) {
        if (!r->sent[i] && !r->recv[i])
            continue;
        fprintf(out, "%s\"%s\":{\"sent\":%" PRIu64 ",\"sent_bytes\":%" PRIu64
                ",\"received\":%" PRIu64 ",\"received_bytes\":%" PRIu64 "}",
                first ? "" : ",", tr_msg_name(i), r->sent[i], r->sent_bytes[i], r->recv[i],
                r->recv_bytes[i]);
        first = 0;
    }
    fprintf(out, "}}\n");
}

static void print_text_row(FILE *out, const char *who, const struct rrow *r,
                           uint64_t job_barriers)
{
    double busy = r->span * (r->app_threads ? r->app_threads : 1);
    double pct = busy > 0 ? 100.0 / busy : 0;
    fprintf(out, "%6s %9.4f %7.1f%% %7.1f%% %7.1f%% %7.1f%% %7.1f%% %8" PRIu64 " %8.4f %8"
            PRIu64 " %8" PRIu64 " %10.4f %9.1f %9" PRIu64 " %11.2f\n",
            who, r->span, r->compute * pct, r->fault * pct, r->barrier * pct, r->lock * pct,
            (r->atomic + r->other) * pct, r->rmr, mean_ms(r->rmr_ns, r->rmr),
            r->pages_fetched, job_barriers, mean_ms(r->barrier_ns, r->barriers),
            job_barriers ? (double)r->barrier_msgs / (double)job_barriers : 0, r->msgs_sent,
            (double)r->bytes_sent / 1048576.0);
}

int cmd_report(const struct tr_trace *t, int json, FILE *out)
{
    struct rrow *rows = calloc((size_t)t->nranks, sizeof *rows), tot;
    memset(&tot, 0, sizeof tot);
    for (int i = 0; i < t->nranks; i++) {
        rank_row(&t->r[i], i, &rows[i]);
        add(&tot, &rows[i]);
    }
    /* As DSM_STATS: the job's barriers are one rank's count, the total's
     * span is the job's, its barrier time the mean over ranks. */
    uint64_t jb = t->nranks ? rows[0].barriers : 0;
    tot.span = (double)t->t_end * 1e-9;
    {
        uint64_t b0 = UINT64_MAX;
        for (int i = 0; i < t->nranks; i++)
            if (t->r[i].t_begin < b0) b0 = t->r[i].t_begin;
        if (t->nranks) tot.span -= (double)b0 * 1e-9;
    }
    if (json) {
        for (int i = 0; i < t->nranks; i++) {
            char who[16];
            snprintf(who, sizeof who, "%d", i);
            print_json(out, who, &rows[i], rows[i].barriers, t->nranks);
        }
        print_json(out, "\"total\"", &tot, jb, t->nranks);
    } else {
        fprintf(out, "dsmtool report: %d ranks, comm=%s, page %" PRIu64 " bytes, host %s\n",
                t->nranks, t->nranks ? t->r[0].h.comm : "?", t->nranks ? t->r[0].h.page_size : 0,
                t->nranks ? t->r[0].h.host : "?");
        fprintf(out, "time of the application threads (%% of span x threads): user = compute "
                "outside libdsm, fault = page-fault handling incl. waiting for pages,\n"
                "barrier, lock = acquire + release, other = atomics and the rest; "
                "rmr_ms and barrier_ms are paper 003 Table 2's columns\n");
        fprintf(out, "%6s %9s %8s %8s %8s %8s %8s %8s %8s %8s %8s %10s %9s %9s %11s\n",
                "rank", "span_s", "user", "fault", "barrier", "lock", "other", "rmr",
                "rmr_ms", "pages", "barriers", "barrier_ms", "msgs/bar", "msgs", "MB_sent");
        for (int i = 0; i < t->nranks; i++) {
            char who[16];
            snprintf(who, sizeof who, "%d", i);
            print_text_row(out, who, &rows[i], rows[i].barriers);
        }
        tot.barrier_ns /= t->nranks ? t->nranks : 1;
        tot.barriers = jb;
        print_text_row(out, "total", &tot, jb);
        fprintf(out, "\nmessages by type (all ranks; a rank's messages to itself not counted)\n");
        fprintf(out, "%-16s %10s %14s %10s %14s\n", "type", "sent", "bytes", "received", "bytes");
        for (int i = 1; i < NT; i++)
            if (tot.sent[i] || tot.recv[i])
                fprintf(out, "%-16s %10" PRIu64 " %14" PRIu64 " %10" PRIu64 " %14" PRIu64 "\n",
                        tr_msg_name(i), tot.sent[i], tot.sent_bytes[i], tot.recv[i],
                        tot.recv_bytes[i]);
        fprintf(out, "\nfaults: %" PRIu64 " read (all fetched a page), %" PRIu64 " write, %" PRIu64
                " waited for another thread's fetch; compute CPU/wall %.3f; prefetch "
                "requests %" PRIu64 "; parallel regions %" PRIu64 "\n",
                tot.rfaults, tot.wfaults, tot.inflight,
                tot.compute > 0 ? tot.compute_cpu / tot.compute : 0, tot.prefetches, tot.forks);
        if (tot.tasks || tot.steals || tot.steals_empty) {
            fprintf(out, "tasks: %" PRIu64 " run, %" PRIu64 " of them stolen from another "
                    "rank; steal requests %" PRIu64 " (%" PRIu64 " of them took nothing)\n",
                    tot.tasks, tot.tasks_stolen, tot.steals + tot.steals_empty,
                    tot.steals_empty);
            for (int i = 0; i < t->nranks; i++)
                fprintf(out, "  rank %d: %" PRIu64 " tasks run, %" PRIu64 " stolen, %" PRIu64
                        " steal requests\n", i, rows[i].tasks, rows[i].tasks_stolen,
                        rows[i].steals + rows[i].steals_empty);
        }
    }
    free(rows);
    return 0;
}
