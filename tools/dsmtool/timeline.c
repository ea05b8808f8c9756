/*
 * timeline.c - dsmtool timeline: a PNG time line of a trace (one row per
 * rank: its application threads' state, its communication thread's
 * message handling below, messages as lines between the rows) and the
 * Chrome / Perfetto trace-event JSON export.  Single-threaded.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dsmtool.h"
#include "png.h"

#define C_BG      0xffffffu
#define C_COMPUTE 0x4caf50u
#define C_FAULT   0xe53935u
#define C_BARRIER 0x1e88e5u
#define C_LOCK    0xfb8c00u
#define C_ATOMIC  0x8e24aau
#define C_OTHER   0x9e9e9eu
#define C_HANDLE  0x5e35b1u
#define C_MSG     0x212121u
#define C_AXIS    0x000000u

static uint32_t color_of(int top)
{
    switch (top) {
    case 0: return C_COMPUTE;
    case DSM_TR_FAULT_BEGIN: return C_FAULT;
    case DSM_TR_BARRIER_ENTER: return C_BARRIER;
    case DSM_TR_LOCK_REQ: case DSM_TR_LOCK_RELEASE: return C_LOCK;
    case DSM_TR_ATOMIC_BEGIN: return C_ATOMIC;
    default: return C_OTHER;
    }
}

static const char *state_name(int top)
{
    switch (top) {
    case 0: return "compute";
    case DSM_TR_FAULT_BEGIN: return "fault";
    case DSM_TR_BARRIER_ENTER: return "barrier";
    case DSM_TR_LOCK_REQ: return "lock acquire";
    case DSM_TR_LOCK_RELEASE: return "lock release";
    case DSM_TR_ATOMIC_BEGIN: return "atomic";
    case DSM_TR_FINALIZE: return "finalize";
    default: return "library";
    }
}

static int is_enter(int k)
{
    return k == DSM_TR_FAULT_BEGIN || k == DSM_TR_BARRIER_ENTER || k == DSM_TR_LOCK_REQ ||
           k == DSM_TR_LOCK_RELEASE || k == DSM_TR_ATOMIC_BEGIN || k == DSM_TR_FINALIZE;
}

static int is_leave(int k)
{
    return k == DSM_TR_FAULT_END || k == DSM_TR_BARRIER_LEAVE || k == DSM_TR_LOCK_GRANT ||
           k == DSM_TR_LOCK_RELEASED || k == DSM_TR_ATOMIC_END || k == DSM_TR_INIT;
}

/* Call fn for every state interval of an application thread. */
typedef void (*span_fn)(void *ctx, int rank, int tid, int top, uint64_t t0, uint64_t t1);

static void spans(const struct tr_trace *t, span_fn fn, void *ctx)
{
    for (int r = 0; r < t->nranks; r++)
        for (int k = 0; k < t->r[r].nth; k++) {
            const struct tr_thread *th = &t->r[r].th[k];
            int depth = 0, top = -1, started = 0;
            uint64_t t0 = 0, recv_t = 0;
            for (size_t i = 0; i < th->n; i++) {
                const struct dsm_trace_rec *e = &th->ev[i];
                if (e->kind == DSM_TR_RECV) recv_t = e->t;
                if (e->kind == DSM_TR_HANDLED && th->role == DSM_TR_ROLE_COMM)
                    fn(ctx, r, th->tid, -2, recv_t, e->t);
                if (th->role != DSM_TR_ROLE_APP)
                    continue;
                if (e->kind == DSM_TR_INIT) { started = 1; top = 0; t0 = e->t; continue; }
                if (!started)
                    continue;
                if (is_enter(e->kind) && depth++ == 0) {
                    fn(ctx, r, th->tid, top, t0, e->t);
                    top = e->kind;
                    t0 = e->t;
                } else if (is_leave(e->kind) && depth > 0 && --depth == 0) {
                    fn(ctx, r, th->tid, top, t0, e->t);
                    top = 0;
                    t0 = e->t;
                }
            }
        }
}

struct pctx {
    struct img *im;
    int x0, w, row_h, top_y;
    double t0, t1;
};

static int xof(const struct pctx *p, double t)
{
    return p->x0 + (int)((t - p->t0) / (p->t1 - p->t0) * p->w);
}

static void paint(void *ctx, int rank, int tid, int top, uint64_t a, uint64_t b)
{
    struct pctx *p = ctx;
    int y = p->top_y + rank * p->row_h;
    int xa = xof(p, (double)a), xb = xof(p, (double)b);
    if (xb <= xa)
        xb = xa + 1;
    (void)tid;
    if (top == -2)   /* communication thread handling a message */
        img_rect(p->im, xa, y + p->row_h * 6 / 10, xb - xa, p->row_h / 5, C_HANDLE);
    else
        img_rect(p->im, xa, y + 4, xb - xa, p->row_h / 2 - 2, color_of(top));
}

int cmd_timeline_png(const struct tr_trace *t, const char *path, int width)
{
    struct img im;
    struct pctx p;
    int row_h = 60, left = 90, top_y = 40, legend = 50;
    int h = top_y + row_h * t->nranks + legend + 30;
    char lab[64];

    if (img_new(&im, width, h, C_BG))
        return -1;
    p.im = &im;
    p.x0 = left;
    p.w = width - left - 20;
    p.row_h = row_h;
    p.top_y = top_y;
    p.t0 = 0;
    p.t1 = (double)t->t_end;
    if (p.t1 <= p.t0)
        p.t1 = p.t0 + 1;
    img_text(&im, 10, 10, "LIBDSM TIME LINE", C_AXIS, 2);
    for (int r = 0; r < t->nranks; r++) {
        snprintf(lab, sizeof lab, "RANK %d", r);
        img_text(&im, 10, top_y + r * row_h + 10, lab, C_AXIS, 1);
        img_text(&im, 10, top_y + r * row_h + 36, "COMM", C_HANDLE, 1);
    }
    spans(t, paint, &p);
    /* messages: a line from the sender's row at the send to the receiver's
     * row at the receive (at most 20000, evenly thinned) */
    struct tr_msgpair *m = NULL;
    size_t nm = 0;
    if (tr_match(t, &m, &nm) == 0) {
        size_t stride = nm > 20000 ? nm / 20000 + 1 : 1;
        for (size_t i = 0; i < nm; i += stride) {
            if (m[i].src == m[i].dst)
                continue;
            int ya = top_y + m[i].src * row_h + row_h / 2;
            int yb = top_y + m[i].dst * row_h + row_h / 2;
            img_line(&im, xof(&p, (double)m[i].t_send), ya, xof(&p, (double)m[i].t_recv), yb,
                     C_MSG);
        }
        free(m);
    }
    /* time axis */
    int ay = top_y + row_h * t->nranks + 4;
    img_line(&im, p.x0, ay, p.x0 + p.w, ay, C_AXIS);
    for (int i = 0; i <= 10; i++) {
        int x = p.x0 + p.w * i / 10;
        img_line(&im, x, ay, x, ay + 5, C_AXIS);
        snprintf(lab, sizeof lab, "%.3gS", (p.t1 - p.t0) * 1e-9 * i / 10);
        img_text(&im, x - 10, ay + 8, lab, C_AXIS, 1);
    }
    static const struct { uint32_t c; const char *n; } leg[] = {
        { C_COMPUTE, "COMPUTE" }, { C_FAULT, "FAULT" }, { C_BARRIER, "BARRIER" },
        { C_LOCK, "LOCK" }, { C_ATOMIC, "ATOMIC" }, { C_OTHER, "LIBRARY" },
        { C_HANDLE, "MESSAGE HANDLING" }, { C_MSG, "MESSAGE" } };
    int lx = left, ly = ay + 26;
    for (size_t i = 0; i < sizeof leg / sizeof leg[0]; i++) {
        img_rect(&im, lx, ly, 12, 10, leg[i].c);
        img_text(&im, lx + 16, ly + 2, leg[i].n, C_AXIS, 1);
        lx += 16 + 6 * (int)strlen(leg[i].n) + 20;
    }
    int rc = img_write_png(&im, path);
    img_free(&im);
    return rc;
}

struct jctx { FILE *out; int first; };

static void jspan(void *ctx, int rank, int tid, int top, uint64_t a, uint64_t b)
{
    struct jctx *j = ctx;
    fprintf(j->out, "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
            "\"ts\":%.3f,\"dur\":%.3f}", j->first ? "" : ",",
            top == -2 ? "handle message" : state_name(top), top == -2 ? "comm" : "app",
            rank, tid, (double)a * 1e-3, (double)(b - a) * 1e-3);
    j->first = 0;
}

int cmd_timeline_json(const struct tr_trace *t, FILE *out)
{
    struct jctx j = { out, 1 };
    fprintf(out, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
    for (int r = 0; r < t->nranks; r++) {
        fprintf(out, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
                "\"args\":{\"name\":\"rank %d\"}}", j.first ? "" : ",", r, r);
        j.first = 0;
        for (int k = 0; k < t->r[r].nth; k++)
            fprintf(out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                    "\"args\":{\"name\":\"%s %d\"}}", r, t->r[r].th[k].tid,
                    t->r[r].th[k].role == DSM_TR_ROLE_COMM ? "communication" : "application",
                    t->r[r].th[k].tid);
    }
    spans(t, jspan, &j);
    /* messages as flow events: start at the send, finish at the receive */
    struct tr_msgpair *m = NULL;
    size_t nm = 0;
    if (tr_match(t, &m, &nm) == 0) {
        for (size_t i = 0; i < nm; i++) {
            if (m[i].src == m[i].dst)
                continue;
            fprintf(out, ",\n{\"name\":\"%s\",\"cat\":\"msg\",\"ph\":\"s\",\"id\":%zu,\"pid\":%d,"
                    "\"tid\":0,\"ts\":%.3f,\"args\":{\"bytes\":%u}}",
                    tr_msg_name(m[i].type), i, m[i].src, (double)m[i].t_send * 1e-3, m[i].bytes);
            fprintf(out, ",\n{\"name\":\"%s\",\"cat\":\"msg\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%zu,"
                    "\"pid\":%d,\"tid\":0,\"ts\":%.3f}", tr_msg_name(m[i].type), i, m[i].dst,
                    (double)m[i].t_recv * 1e-3);
        }
        free(m);
    }
    fprintf(out, "\n]}\n");
    return ferror(out) ? -1 : 0;
}
