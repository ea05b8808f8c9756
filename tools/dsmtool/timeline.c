/*
 * timeline.c - dsmtool timeline: a PNG time line of a trace (one row per
 * rank: its application threads' state, its communication thread's
 * message handling below, then, if the trace has task events, one lane
 * per application thread with the tasks it ran and its steal requests;
 * messages as lines between the rows) and the Chrome / Perfetto
 * trace-event JSON export.  Single-threaded.
 *
 * Tasks (TASK_BEGIN / TASK_END, dsm-trace(5)) are paired per thread with a
 * stack, because a thread that waits for tasks (taskwait, a barrier) runs
 * other tasks inside the one it is in: an END closes the innermost open
 * task with its id and owner.  A trace cut short (a job that died, a full
 * buffer) can leave a BEGIN without END, drawn to the trace's end, or an
 * END without BEGIN, which is skipped: the picture shows what is known
 * and never fails on a damaged trace.
 */
#include <errno.h>
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

/* A rank's row, from its top: the application threads' state, the
 * communication thread's message handling, then the task lanes (only when
 * the trace has task events, so that a picture without tasks is as
 * before).  Message lines end at MSG_Y, in the state bar. */
#define ROW_BASE  60
#define STATE_Y   4
#define STATE_H   28
#define COMM_Y    36
#define COMM_H    12
#define TASK_Y    52
#define MSG_Y     30

/* The JSON's task track of thread tid (tids are 16 bits). */
#define TASK_TID(tid) (65536 + (tid))

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

static int is_task_kind(int k)
{
    return k == DSM_TR_TASK_BEGIN || k == DSM_TR_TASK_END || k == DSM_TR_STEAL;
}

static int has_task_events(const struct tr_thread *th)
{
    for (size_t i = 0; i < th->n; i++)
        if (is_task_kind(th->ev[i].kind))
            return 1;
    return 0;
}

/* Whether a thread gets a task lane: every application thread, and any
 * other that ran tasks (the shim runs them on application threads only,
 * but the picture should not drop events if that changes). */
static int has_lane(const struct tr_thread *th)
{
    return th->role == DSM_TR_ROLE_APP || has_task_events(th);
}

int tl_thread_tasks(const struct tr_thread *th, int rank, uint64_t t_end,
                    struct tl_task **out, size_t *nout)
{
    struct tl_task *v = NULL;
    size_t n = 0, cap = 0, *open = NULL, nopen = 0, capopen = 0;

    *out = NULL;
    *nout = 0;
    for (size_t i = 0; i < th->n; i++) {
        const struct dsm_trace_rec *e = &th->ev[i];
        if (e->kind == DSM_TR_TASK_BEGIN) {
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                struct tl_task *nv = realloc(v, cap * sizeof *v);
                if (!nv)
                    goto oom;
                v = nv;
            }
            if (nopen == capopen) {
                capopen = capopen ? capopen * 2 : 16;
                size_t *no = realloc(open, capopen * sizeof *open);
                if (!no)
                    goto oom;
                open = no;
            }
            struct tl_task *k = &v[n];
            memset(k, 0, sizeof *k);
            k->t0 = e->t;
            k->id = e->a;
            k->owner = e->b ? (int)(e->b - 1) : rank;
            k->stolen = k->owner != rank;
            k->depth = (int)nopen;
            k->unended = 1;
            open[nopen++] = n++;
        } else if (e->kind == DSM_TR_TASK_END) {
            /* The innermost open task with this id and owner.  Tasks open
             * above it lost their END (a damaged trace) and ended no later
             * than it did; they stay marked unended. */
            int owner = e->b ? (int)(e->b - 1) : rank;
            size_t j = nopen;
            while (j > 0 && (v[open[j - 1]].id != e->a || v[open[j - 1]].owner != owner))
                j--;
            if (j == 0)
                continue;           /* an END without BEGIN */
            while (nopen >= j)
                v[open[--nopen]].t1 = e->t;
            v[open[j - 1]].unended = 0;
        }
    }
    /* BEGINs without END run to the trace's end (unended stays 1). */
    while (nopen > 0) {
        struct tl_task *k = &v[open[--nopen]];
        k->t1 = t_end > k->t0 ? t_end : k->t0;
    }
    free(open);
    *out = v;
    *nout = n;
    return 0;
oom:
    free(open);
    free(v);
    return -1;
}

struct pctx {
    struct img *im;
    int x0, w, row_h, top_y;
    int lane_h;                      /* height of one task lane; 0: no tasks */
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
        img_rect(p->im, xa, y + COMM_Y, xb - xa, COMM_H, C_HANDLE);
    else
        img_rect(p->im, xa, y + STATE_Y, xb - xa, STATE_H, color_of(top));
}

/* The task lanes of one rank: each task a bar, outer tasks first so that
 * the tasks run inside them are drawn over them (in the darker shade at
 * odd depths, the lighter at even ones, so that each level stands out
 * from the one around it), its first pixel column left white so that
 * tasks that follow each other stay apart; then the steal requests as
 * ticks on top.  -1 if out of memory. */
static int paint_tasks(const struct pctx *p, const struct tr_trace *t, int rank)
{
    const struct tr_rank *rk = &t->r[rank];
    int lane = 0, bar = p->lane_h - 2 > 0 ? p->lane_h - 2 : 1;
    for (int k = 0; k < rk->nth; k++) {
        const struct tr_thread *th = &rk->th[k];
        if (!has_lane(th))
            continue;
        int y = p->top_y + rank * p->row_h + TASK_Y + lane++ * p->lane_h;
        struct tl_task *v;
        size_t n;
        if (tl_thread_tasks(th, rank, t->t_end, &v, &n))
            return -1;
        for (size_t i = 0; i < n; i++) {
            int xa = xof(p, (double)v[i].t0), xb = xof(p, (double)v[i].t1);
            if (xb <= xa)
                xb = xa + 1;
            int in = v[i].depth % 2;
            uint32_t c = v[i].stolen ? (in ? TL_RGB_STOLEN_IN : TL_RGB_STOLEN)
                                     : (in ? TL_RGB_TASK_IN : TL_RGB_TASK);
            img_rect(p->im, xa, y, xb - xa, bar, c);
            if (xb - xa >= 4)
                img_rect(p->im, xa, y, 1, bar, C_BG);
        }
        free(v);
        for (size_t i = 0; i < th->n; i++) {
            const struct dsm_trace_rec *e = &th->ev[i];
            if (e->kind != DSM_TR_STEAL)
                continue;
            int x = xof(p, (double)e->t);
            if (e->b)      /* took tasks: a tick over the lane and above it */
                img_rect(p->im, x, y - 2, 2, bar + 2, TL_RGB_STEAL);
            else           /* took nothing: a short one in the lane's lower half */
                img_rect(p->im, x, y + bar / 2, 1, bar - bar / 2, TL_RGB_STEAL_EMPTY);
        }
    }
    return 0;
}

/* The task lanes a row needs: the most of any rank. */
static int task_lanes(const struct tr_trace *t)
{
    int any = 0, most = 0;
    for (int r = 0; r < t->nranks; r++) {
        int lanes = 0;
        for (int k = 0; k < t->r[r].nth; k++) {
            any |= has_task_events(&t->r[r].th[k]);
            lanes += has_lane(&t->r[r].th[k]);
        }
        if (lanes > most)
            most = lanes;
    }
    return any ? most : 0;
}

struct legend { uint32_t c; const char *n; int tick; };

/* Lay the legend out from (x, y), wrapping at width; draw it if im is not
 * NULL.  Returns the number of lines it takes. */
static int legend_lines(struct img *im, const struct legend *leg, size_t n, int x, int y,
                        int width)
{
    int lx = x, lines = 1;
    for (size_t i = 0; i < n; i++) {
        int w = 16 + 6 * (int)strlen(leg[i].n) + 20;
        if (lx > x && lx + w - 20 > width - 10) {
            lx = x;
            y += 16;
            lines++;
        }
        if (im && leg[i].tick)
            img_rect(im, lx + 5, y - 2, 2, 14, leg[i].c);
        else if (im)
            img_rect(im, lx, y, 12, 10, leg[i].c);
        if (im)
            img_text(im, lx + 16, y + 2, leg[i].n, C_AXIS, 1);
        lx += w;
    }
    return lines;
}

int cmd_timeline_png(const struct tr_trace *t, const char *path, int width)
{
    static const struct legend leg[] = {
        { C_COMPUTE, "COMPUTE", 0 }, { C_FAULT, "FAULT", 0 }, { C_BARRIER, "BARRIER", 0 },
        { C_LOCK, "LOCK", 0 }, { C_ATOMIC, "ATOMIC", 0 }, { C_OTHER, "LIBRARY", 0 },
        { C_HANDLE, "MESSAGE HANDLING", 0 }, { C_MSG, "MESSAGE", 0 },
        /* only with task events: */
        { TL_RGB_TASK, "TASK", 0 }, { TL_RGB_STOLEN, "STOLEN TASK", 0 },
        { TL_RGB_TASK_IN, "NESTED", 0 }, { TL_RGB_STEAL, "STEAL", 1 } };
    struct img im;
    struct pctx p;
    int left = 90, top_y = 40, legend = 50;
    int lanes = task_lanes(t);
    int lane_h = lanes <= 8 ? 8 : (64 / lanes > 3 ? 64 / lanes : 3);
    int row_h = lanes ? TASK_Y + lanes * lane_h + 6 : ROW_BASE;
    size_t nleg = lanes ? sizeof leg / sizeof leg[0] : 8;
    int h = top_y + row_h * t->nranks + legend + 30 +
            16 * (legend_lines(NULL, leg, nleg, left, 0, width) - 1);
    char lab[64];

    if (img_new(&im, width, h, C_BG))
        return -1;
    p.im = &im;
    p.x0 = left;
    p.w = width - left - 20;
    p.row_h = row_h;
    p.top_y = top_y;
    p.lane_h = lanes ? lane_h : 0;
    p.t0 = 0;
    p.t1 = (double)t->t_end;
    if (p.t1 <= p.t0)
        p.t1 = p.t0 + 1;
    img_text(&im, 10, 10, "LIBDSM TIME LINE", C_AXIS, 2);
    for (int r = 0; r < t->nranks; r++) {
        snprintf(lab, sizeof lab, "RANK %d", r);
        img_text(&im, 10, top_y + r * row_h + 10, lab, C_AXIS, 1);
        img_text(&im, 10, top_y + r * row_h + COMM_Y, "COMM", C_HANDLE, 1);
        if (lanes)
            img_text(&im, 10, top_y + r * row_h + TASK_Y, "TASKS", TL_RGB_TASK_IN, 1);
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
            int ya = top_y + m[i].src * row_h + MSG_Y;
            int yb = top_y + m[i].dst * row_h + MSG_Y;
            img_line(&im, xof(&p, (double)m[i].t_send), ya, xof(&p, (double)m[i].t_recv), yb,
                     C_MSG);
        }
        free(m);
    }
    /* the task lanes over the message lines that cross them */
    for (int r = 0; lanes && r < t->nranks; r++)
        if (paint_tasks(&p, t, r)) {
            img_free(&im);
            errno = ENOMEM;
            return -1;
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
    legend_lines(&im, leg, nleg, left, ay + 26, width);
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

/* Tasks as complete events on a track of their own per thread (TASK_TID:
 * a task's begin and end fall inside other states, which would not nest
 * on the thread's track), steal requests as instant events on it. */
static int json_tasks(const struct tr_trace *t, FILE *out)
{
    for (int r = 0; r < t->nranks; r++)
        for (int k = 0; k < t->r[r].nth; k++) {
            const struct tr_thread *th = &t->r[r].th[k];
            struct tl_task *v;
            size_t n;
            if (!has_task_events(th))
                continue;
            if (tl_thread_tasks(th, r, t->t_end, &v, &n)) {
                errno = ENOMEM;
                return -1;
            }
            for (size_t i = 0; i < n; i++)
                fprintf(out, ",\n{\"name\":\"%s\",\"cat\":\"task\",\"ph\":\"X\",\"pid\":%d,"
                        "\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"task\":%" PRIu64
                        ",\"owner\":%d,\"thread\":%d,\"depth\":%d%s}}",
                        v[i].stolen ? "stolen task" : "task", r, TASK_TID(th->tid),
                        (double)v[i].t0 * 1e-3, (double)(v[i].t1 - v[i].t0) * 1e-3, v[i].id,
                        v[i].owner, th->tid, v[i].depth, v[i].unended ? ",\"unended\":true" : "");
            free(v);
            for (size_t i = 0; i < th->n; i++) {
                const struct dsm_trace_rec *e = &th->ev[i];
                if (e->kind == DSM_TR_STEAL)
                    fprintf(out, ",\n{\"name\":\"steal\",\"cat\":\"steal\",\"ph\":\"i\","
                            "\"s\":\"t\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"args\":{\"victim\":%"
                            PRIu64 ",\"tasks\":%" PRIu64 "}}", r, TASK_TID(th->tid),
                            (double)e->t * 1e-3, e->a, e->b);
            }
        }
    return 0;
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
        for (int k = 0; k < t->r[r].nth; k++)
            if (has_task_events(&t->r[r].th[k]))
                fprintf(out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                        "\"args\":{\"name\":\"tasks of thread %d\"}}", r,
                        TASK_TID(t->r[r].th[k].tid), t->r[r].th[k].tid);
    }
    spans(t, jspan, &j);
    if (json_tasks(t, out))
        return -1;
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
