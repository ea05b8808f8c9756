/*
 * tracefile.c - load DSM_TRACE logs (format: libdsm/trace_format.h,
 * dsm-trace(5)): check the header, gather each thread's chunks, align the
 * ranks' clocks, and write logs for tests.  Single-threaded.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tracefile.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *kinds[DSM_TR_NKINDS] = {
    "?", "thread", "init", "finalize", "compute", "fault_begin", "fault_end", "send",
    "recv", "handled", "wait_begin", "wait_end", "complete", "barrier_enter",
    "barrier_leave", "lock_req", "lock_grant", "lock_release", "lock_released",
    "atomic_begin", "atomic_end", "prefetch", "fork", "join", "task_begin", "task_end",
    "steal",
};

const char *tr_kind_name(int kind)
{
    return kind > 0 && kind < DSM_TR_NKINDS ? kinds[kind] : "?";
}

const char *tr_msg_name(int type)
{
    static const char *names[] = { "?", "PAGE_REQ", "PAGE_REPLY", "DIFF", "DIFF_ACK",
        "BARRIER_ENTER", "BARRIER_RELEASE", "LOCK_REQ", "LOCK_GRANT", "LOCK_REL",
        "LOCK_REL_ACK", "ATOMIC_REQ", "ATOMIC_REPLY", "PREFETCH_REQ", "CALL_REQ",
        "CALL_REPLY", "FLUSH_NOTICE" };
    return type > 0 && type < (int)(sizeof names / sizeof names[0]) ? names[type] : "OTHER";
}

void tr_push(struct tr_thread *th, const struct dsm_trace_rec *r)
{
    if (th->n == th->cap) {
        th->cap = th->cap ? th->cap * 2 : 1024;
        th->ev = realloc(th->ev, th->cap * sizeof *th->ev);
        if (!th->ev) {
            fprintf(stderr, "dsmtool: out of memory reading the trace\n");
            exit(1);
        }
    }
    th->ev[th->n++] = *r;
}

static struct tr_thread *thread_of(struct tr_rank *rk, int tid)
{
    for (int i = 0; i < rk->nth; i++)
        if (rk->th[i].tid == tid)
            return &rk->th[i];
    rk->th = realloc(rk->th, (size_t)(rk->nth + 1) * sizeof *rk->th);
    if (!rk->th) {
        fprintf(stderr, "dsmtool: out of memory reading the trace\n");
        exit(1);
    }
    struct tr_thread *th = &rk->th[rk->nth++];
    memset(th, 0, sizeof *th);
    th->tid = tid;
    return th;
}

static int cmp_tid(const void *a, const void *b)
{
    return ((const struct tr_thread *)a)->tid - ((const struct tr_thread *)b)->tid;
}

static int load_rank(struct tr_rank *rk, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    struct dsm_trace_chunk_hdr ch;

    if (!f)
        return fail(err, errlen, "cannot open %s (%s); give the DSM_TRACE prefix of a "
                    "traced run", path, strerror(errno));
    if (fread(&rk->h, sizeof rk->h, 1, f) != 1 || memcmp(rk->h.magic, DSM_TRACE_MAGIC, 8)) {
        fclose(f);
        return fail(err, errlen, "%s is not a libdsm trace (bad header)", path);
    }
    if (rk->h.endian != DSM_TRACE_ENDIAN || rk->h.version != DSM_TRACE_VERSION ||
        rk->h.hdr_size != sizeof rk->h || rk->h.rec_size != sizeof(struct dsm_trace_rec)) {
        fclose(f);
        return fail(err, errlen, "%s: trace version %u (or byte order or sizes) not "
                    "supported; this dsmtool reads version %d", path, rk->h.version,
                    DSM_TRACE_VERSION);
    }
    while (fread(&ch, sizeof ch, 1, f) == 1) {
        if (ch.magic != DSM_TRACE_CHUNK_MAGIC) {
            long at = ftell(f) - (long)sizeof ch;
            fclose(f);
            return fail(err, errlen, "%s: corrupt chunk header at offset %ld", path, at);
        }
        struct tr_thread *th = thread_of(rk, ch.tid);
        for (uint32_t i = 0; i < ch.nrec; i++) {
            struct dsm_trace_rec r;
            if (fread(&r, sizeof r, 1, f) != 1) {
                fclose(f);
                return fail(err, errlen, "%s: truncated chunk (the run did not reach "
                            "dsm_finalize?)", path);
            }
            tr_push(th, &r);
        }
    }
    fclose(f);
    qsort(rk->th, (size_t)rk->nth, sizeof *rk->th, cmp_tid);
    return 0;
}

int tr_load(struct tr_trace *t, const char *prefix, char *err, size_t errlen)
{
    char path[4200];
    struct tr_rank first;

    memset(t, 0, sizeof *t);
    memset(&first, 0, sizeof first);
    snprintf(path, sizeof path, "%s.0", prefix);
    if (load_rank(&first, path, err, errlen))
        return -1;
    if (first.h.nodes < 1 || first.h.nodes > 4096)
        return fail(err, errlen, "%s: bad node count %d", path, first.h.nodes);
    t->nranks = first.h.nodes;
    t->r = calloc((size_t)t->nranks, sizeof *t->r);
    if (!t->r)
        return fail(err, errlen, "out of memory");
    t->r[0] = first;
    for (int i = 1; i < t->nranks; i++) {
        snprintf(path, sizeof path, "%s.%d", prefix, i);
        if (load_rank(&t->r[i], path, err, errlen))
            return -1;
        if (t->r[i].h.nodes != t->nranks || t->r[i].h.rank != i)
            return fail(err, errlen, "%s: rank %d of %d, expected rank %d of %d: files of "
                        "different runs?", path, t->r[i].h.rank, t->r[i].h.nodes, i, t->nranks);
    }
    /* Ranks on one host share CLOCK_MONOTONIC: keep their times as they are.
     * Across hosts, align every rank's barrier point (t_sync) with rank 0's. */
    int one_host = 1;
    uint64_t base = UINT64_MAX;
    for (int i = 0; i < t->nranks; i++) {
        if (strncmp(t->r[i].h.host, t->r[0].h.host, sizeof t->r[0].h.host))
            one_host = 0;
        if (t->r[i].h.t_sync < base)
            base = t->r[i].h.t_sync;
    }
    for (int i = 0; i < t->nranks; i++) {
        struct tr_rank *rk = &t->r[i];
        uint64_t off = one_host ? base : rk->h.t_sync - (t->r[0].h.t_sync - base);
        rk->host_ranks = 0;
        for (int j = 0; j < t->nranks; j++)
            rk->host_ranks += !strncmp(t->r[j].h.host, rk->h.host, sizeof rk->h.host);
        rk->t_begin = UINT64_MAX;
        rk->t_end = 0;
        for (int k = 0; k < rk->nth; k++) {
            struct tr_thread *th = &rk->th[k];
            th->role = DSM_TR_ROLE_APP;
            for (size_t e = 0; e < th->n; e++) {
                struct dsm_trace_rec *r = &th->ev[e];
                r->t = r->t >= off ? r->t - off : 0;
                if (r->kind == DSM_TR_THREAD)
                    th->role = r->sub;
                if (e > 0 && r->t < th->ev[e - 1].t)
                    r->t = th->ev[e - 1].t;   /* never backwards within a thread */
            }
            if (th->n) {
                if (th->ev[0].t < rk->t_begin) rk->t_begin = th->ev[0].t;
                if (th->ev[th->n - 1].t > rk->t_end) rk->t_end = th->ev[th->n - 1].t;
            }
        }
        if (rk->t_begin == UINT64_MAX)
            rk->t_begin = 0;
        if (rk->t_end > t->t_end)
            t->t_end = rk->t_end;
    }
    return 0;
}

void tr_free(struct tr_trace *t)
{
    for (int i = 0; i < t->nranks; i++) {
        for (int k = 0; k < t->r[i].nth; k++)
            free(t->r[i].th[k].ev);
        free(t->r[i].th);
    }
    free(t->r);
    memset(t, 0, sizeof *t);
}

int tr_write(const char *path, const struct dsm_trace_file_hdr *h,
             struct dsm_trace_rec *const *recs, const size_t *counts, int nthreads)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    fwrite(h, sizeof *h, 1, f);
    for (int i = 0; i < nthreads; i++) {
        struct dsm_trace_chunk_hdr ch = { DSM_TRACE_CHUNK_MAGIC, (uint16_t)i, 0,
                                          (uint32_t)counts[i], 0 };
        fwrite(&ch, sizeof ch, 1, f);
        fwrite(recs[i], sizeof recs[i][0], counts[i], f);
    }
    return fclose(f);
}
