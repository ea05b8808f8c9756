/*
 * stats.c - counters and their report.
 *
 * Counters are process-wide relaxed atomics: one add per event, no lock, and
 * no ordering needed because they are only read at report time.  The report
 * gathers every node's counters to node 0 (MPI_Gather on the library's
 * communicator, called by the application thread) and prints one line per
 * node and a total, as text or as one JSON object per line; the text
 * report also says whether node 0's host is full (dsm__host_full) and the
 * spins its node uses, its waiting threads' and its communication
 * thread's (dsm_init chose them, host.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dsm_internal.h"

struct dsm_stats_raw dsm__st;

uint64_t dsm__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

double dsm_wtime(void)
{
    return (double)dsm__now_ns() * 1e-9;
}

static void snapshot(struct dsm_stats_raw *r)
{
    const uint64_t *src = (const uint64_t *)&dsm__st;
    uint64_t *dst = (uint64_t *)r;
    for (size_t i = 0; i < sizeof *r / sizeof(uint64_t); i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

static void to_public(const struct dsm_stats_raw *r, struct dsm_stats *s)
{
    memset(s, 0, sizeof *s);
    s->read_faults = r->read_faults;
    s->write_faults = r->write_faults;
    s->rmr_count = r->rmr_count;
    s->rmr_time = (double)r->rmr_ns * 1e-9;
    s->pages_fetched = r->pages_fetched;
    s->bytes_fetched = r->bytes_fetched;
    s->pages_served = r->pages_served;
    s->twins = r->twins;
    s->diffs = r->diffs;
    s->diff_bytes = r->diff_bytes;
    s->diffs_applied = r->diffs_applied;
    s->invalidations = r->invalidations;
    s->barriers = r->barriers;
    s->barrier_time = (double)r->barrier_ns * 1e-9;
    s->barrier_msgs = r->barrier_msgs;
    s->lock_acquires = r->lock_acquires;
    s->lock_wait_time = (double)r->lock_wait_ns * 1e-9;
    s->msgs_sent = r->msgs_sent;
    s->bytes_sent = r->bytes_sent;
    s->msgs_received = r->msgs_received;
    s->mprotect_calls = r->mprotect_calls;
    s->atomics = r->atomics;
    s->remote_atomics = r->remote_atomics;
    s->atomic_time = (double)r->atomic_ns * 1e-9;
    s->pages_migrated = r->pages_migrated;
    s->prefetch_issued = r->prefetch_issued;
    s->prefetch_used = r->prefetch_used;
    s->prefetch_wasted = r->prefetch_wasted;
    s->prefetch_late = r->prefetch_late;
    s->prefetch_aged = r->prefetch_aged;
    s->page_wait_time = (double)r->page_wait_ns * 1e-9;
    s->mpi_lock_waits = r->mpi_lock_waits;
    s->mpi_lock_wait_time = (double)r->mpi_lock_wait_ns * 1e-9;
    s->flushes = r->flushes;
    s->flush_time = (double)r->flush_ns * 1e-9;
    s->flush_drops = r->flush_drops;
    s->flush_updates = r->flush_updates;
    s->held_requests = r->held_requests;
    s->locks_local = r->locks_local;
}

int dsm_stats_get(struct dsm_stats *out)
{
    struct dsm_stats_raw r;
    DSM_CHECK_RUNNING();
    if (!out)
        return -DSM_EINVAL;
    snapshot(&r);
    to_public(&r, out);
    return 0;
}

void dsm_stats_reset(void)
{
    uint64_t *dst = (uint64_t *)&dsm__st;
    DSM_CHECK_RUNNING();
    for (size_t i = 0; i < sizeof dsm__st / sizeof(uint64_t); i++)
        __atomic_store_n(&dst[i], 0, __ATOMIC_RELAXED);
}

static double ms_mean(uint64_t ns, uint64_t n) { return n ? (double)ns / (double)n * 1e-6 : 0.0; }

static void print_row(FILE *out, int json, const char *who, const struct dsm_stats_raw *r,
                      uint64_t barriers_for_msgs)
{
    double rmr_ms = ms_mean(r->rmr_ns, r->rmr_count);
    double bar_ms = ms_mean(r->barrier_ns, r->barriers);
    double lock_ms = ms_mean(r->lock_wait_ns, r->lock_acquires);
    double msgs_per_barrier = barriers_for_msgs ? (double)r->barrier_msgs / (double)barriers_for_msgs : 0.0;
    if (json) {
        fprintf(out, "{\"stats\":\"libdsm\",\"rank\":%s,\"nodes\":%d,\"comm\":\"%s\","
                "\"poll\":\"%s\",\"page_size\":%zu,\"read_faults\":%" PRIu64
                ",\"write_faults\":%" PRIu64 ",\"rmr_count\":%" PRIu64 ",\"rmr_ms\":%.4f"
                ",\"pages_fetched\":%" PRIu64 ",\"bytes_fetched\":%" PRIu64
                ",\"pages_served\":%" PRIu64 ",\"twins\":%" PRIu64 ",\"diffs\":%" PRIu64
                ",\"diff_bytes\":%" PRIu64 ",\"diffs_applied\":%" PRIu64 ",\"invalidations\":%" PRIu64
                ",\"barriers\":%" PRIu64 ",\"barrier_ms\":%.4f,\"msgs_per_barrier\":%.2f"
                ",\"lock_acquires\":%" PRIu64 ",\"lock_wait_ms\":%.4f,\"msgs_sent\":%" PRIu64
                ",\"bytes_sent\":%" PRIu64 ",\"msgs_received\":%" PRIu64 ",\"mprotect_calls\":%" PRIu64
                ",\"atomics\":%" PRIu64 ",\"remote_atomics\":%" PRIu64 ",\"atomic_ms\":%.4f"
                ",\"pages_migrated\":%" PRIu64
                ",\"page_wait_ms\":%.4f,\"prefetch_issued\":%" PRIu64 ",\"prefetch_used\":%" PRIu64
                ",\"prefetch_wasted\":%" PRIu64 ",\"prefetch_late\":%" PRIu64
                ",\"prefetch_aged\":%" PRIu64 ",\"prefetch\":\"%s\""
                ",\"mpi_lock_waits\":%" PRIu64 ",\"mpi_lock_wait_ms\":%.4f"
                ",\"flushes\":%" PRIu64 ",\"flush_ms\":%.4f,\"flush_drops\":%" PRIu64
                ",\"flush_updates\":%" PRIu64 ",\"held_requests\":%" PRIu64
                ",\"locks_local\":%" PRIu64 "}\n",
                who, dsm__g.nodes, dsm__g.ops->name,
                dsm__g.cfg.poll == DSM_POLL_SPIN ? "spin" : "adaptive", dsm__g.page_size,
                r->read_faults, r->write_faults, r->rmr_count, rmr_ms, r->pages_fetched,
                r->bytes_fetched, r->pages_served, r->twins, r->diffs, r->diff_bytes,
                r->diffs_applied, r->invalidations, r->barriers, bar_ms, msgs_per_barrier, r->lock_acquires,
                lock_ms, r->msgs_sent, r->bytes_sent, r->msgs_received, r->mprotect_calls,
                r->atomics, r->remote_atomics, ms_mean(r->atomic_ns, r->remote_atomics),
                r->pages_migrated, (double)r->page_wait_ns * 1e-6, r->prefetch_issued,
                r->prefetch_used, r->prefetch_wasted, r->prefetch_late, r->prefetch_aged,
                dsm__prefetch_name(dsm__g.cfg.prefetch),
                r->mpi_lock_waits, (double)r->mpi_lock_wait_ns * 1e-6,
                r->flushes, ms_mean(r->flush_ns, r->flushes), r->flush_drops,
                r->flush_updates, r->held_requests, r->locks_local);
    } else {
        fprintf(out, "%6s %8" PRIu64 " %8" PRIu64 " %7" PRIu64 " %8.4f %8" PRIu64
                " %9.2f %7" PRIu64 " %9.1f %8" PRIu64 " %10.4f %9.1f %7" PRIu64 " %9.4f\n",
                who, r->read_faults, r->write_faults, r->rmr_count, rmr_ms,
                r->pages_fetched, (double)r->bytes_fetched / 1048576.0, r->diffs,
                (double)r->diff_bytes / 1024.0, r->barriers, bar_ms, msgs_per_barrier,
                r->lock_acquires, lock_ms);
    }
}

void dsm__stats_print_all(FILE *out, int json)
{
    struct dsm_global *g = &dsm__g;
    const size_t nf = sizeof(struct dsm_stats_raw) / sizeof(uint64_t);
    struct dsm_stats_raw mine, *all = NULL, total;
    const struct dsm_host *host = &g->host;

    snapshot(&mine);
    if (g->rank == 0) {
        all = calloc((size_t)g->nodes, sizeof *all);
        if (!all)
            dsm__fatal("out of private memory for statistics");
    }
    MPI_Gather(&mine, (int)nf, MPI_UINT64_T, all, (int)nf, MPI_UINT64_T, 0, g->comm);
    if (g->rank != 0)
        return;
    memset(&total, 0, sizeof total);
    for (int r = 0; r < g->nodes; r++) {
        uint64_t *t = (uint64_t *)&total, *a = (uint64_t *)&all[r];
        for (size_t i = 0; i < nf; i++)
            t[i] += a[i];
    }
    /* Barriers are collective: the job's barrier count is one node's count,
     * and messages per barrier add up the messages of all nodes. */
    uint64_t job_barriers = all[0].barriers;
    if (!json) {
        fprintf(out, "libdsm statistics: %d nodes, comm=%s, poll=%s, page %zu bytes\n",
                g->nodes, g->ops->name, g->cfg.poll == DSM_POLL_SPIN ? "spin" : "adaptive",
                g->page_size);
        fprintf(out, "host of rank 0: %u rank%s x (%u + 1) threads on %u CPUs (%s), "
                "DSM_SPIN_US=%u (%s), communication thread %u\n",
                host->ranks, host->ranks == 1 ? "" : "s", g->cfg.threads_per_rank,
                host->online_cpus, dsm__host_full(&g->cfg, host) ? "full" : "not full",
                g->cfg.spin_us, g->cfg.spin_us_set ? "set" : "auto", g->cfg.comm_spin_us);
        fprintf(out, "%6s %8s %8s %7s %8s %8s %9s %7s %9s %8s %10s %9s %7s %9s\n",
                "rank", "rfaults", "wfaults", "rmr", "rmr_ms", "pages", "MB_fetch",
                "diffs", "diff_KB", "barriers", "barrier_ms", "msgs/bar", "locks",
                "lockw_ms");
    }
    for (int r = 0; r < g->nodes; r++) {
        char who[16];
        snprintf(who, sizeof who, "%d", r);
        print_row(out, json, who, &all[r], all[r].barriers);
    }
    /* The total shows the job's barriers once, with the mean time per node. */
    total.barriers = job_barriers;
    total.barrier_ns /= (uint64_t)g->nodes;
    print_row(out, json, json ? "\"total\"" : "total", &total, job_barriers);
    if (!json) {
        /* Page waits and prefetch (dsm_prefetch(3), DSM_PREFETCH): total
         * time faulting threads waited for page data, and what prefetch did. */
        fprintf(out, "%6s %10s %9s %9s %9s %9s %9s   DSM_PREFETCH=%s\n", "rank",
                "pwait_ms", "pf_issued", "pf_used", "pf_wasted", "pf_late", "pf_aged",
                dsm__prefetch_name(g->cfg.prefetch));
        for (int r = 0; r <= g->nodes; r++) {
            const struct dsm_stats_raw *x = r < g->nodes ? &all[r] : &total;
            char who[16];
            snprintf(who, sizeof who, r < g->nodes ? "%d" : "total", r);
            fprintf(out, "%6s %10.3f %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
                    " %9" PRIu64 "\n", who, (double)x->page_wait_ns * 1e-6,
                    x->prefetch_issued, x->prefetch_used, x->prefetch_wasted,
                    x->prefetch_late, x->prefetch_aged);
        }
    }
    fflush(out);
    free(all);
}

int dsm_stats_print(FILE *out, int json)
{
    DSM_CHECK_RUNNING();
    dsm__stats_print_all(out ? out : stdout, json);
    return 0;
}
