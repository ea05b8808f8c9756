/*
 * timeline_tasks.c - dsmtool timeline's tasks on a hand-made trace whose
 * answer is known: BEGIN paired with END per thread by a stack (a task run
 * inside another, two deep), a stolen task (owner != the rank that ran
 * it), an END without BEGIN (skipped), a BEGIN without END (to the trace's
 * end), an inner task whose END is lost (ends with the task around it), a
 * task whose owner field names its own rank (not stolen), and steal
 * requests with and without tasks.  Checks tl_thread_tasks exactly, the
 * --json export (one complete event per task, one instant event per steal,
 * no negative duration) and the PNG (its task colours, the open task
 * reaching the right edge).  The trace goes through tr_write and tr_load,
 * as sim_exact's do.  One process, no MPI.  Exit 0 pass, 1 fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "dsmtool.h"

#define US 1000ULL          /* ns */
#define WIDTH 1200          /* of the picture: the legend on one line */
#define PLOT_X0 90          /* timeline.c's margins: 90 pixels left, 20 right */
#define PLOT_X1 (WIDTH - 20)

static int failures;

#define CHECK(cond, ...) do { if (cond) { printf("ok   "); printf(__VA_ARGS__); printf("\n"); } \
    else { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); \
    printf("\n"); } } while (0)

struct th { struct dsm_trace_rec r[32]; size_t n; };

static void ev(struct th *t, uint64_t us, int kind, uint64_t a, uint64_t b)
{
    struct dsm_trace_rec *r = &t->r[t->n++];
    memset(r, 0, sizeof *r);
    r->t = us * US;
    r->kind = (uint8_t)kind;
    r->peer = -1;
    r->a = a;
    r->b = b;
}

/* Two ranks, each an application thread 0 and a communication thread 1. */
static void make_trace(const char *prefix)
{
    struct th th[2][2];
    memset(th, 0, sizeof th);
    for (int r = 0; r < 2; r++) {
        ev(&th[r][0], 0, DSM_TR_THREAD, 0, 0);
        ev(&th[r][0], 0, DSM_TR_INIT, 0, 0);
        ev(&th[r][1], 0, DSM_TR_THREAD, 0, 0);
        th[r][1].r[0].sub = DSM_TR_ROLE_COMM;
    }
    struct th *a = &th[0][0];
    ev(a, 5, DSM_TR_STEAL, 1, 0);             /* took nothing */
    ev(a, 10, DSM_TR_STEAL, 1, 2);            /* took two */
    ev(a, 100, DSM_TR_TASK_BEGIN, 7, 2);      /* stolen from rank 1 */
    ev(a, 200, DSM_TR_TASK_END, 7, 2);
    ev(a, 300, DSM_TR_TASK_BEGIN, 1, 0);      /* own */
    ev(a, 350, DSM_TR_TASK_BEGIN, 2, 0);      /*   inside it (a taskwait) */
    ev(a, 360, DSM_TR_TASK_BEGIN, 9, 2);      /*     stolen, two deep */
    ev(a, 380, DSM_TR_TASK_END, 9, 2);
    ev(a, 400, DSM_TR_TASK_END, 2, 0);
    ev(a, 500, DSM_TR_TASK_END, 1, 0);
    ev(a, 550, DSM_TR_TASK_END, 42, 0);       /* END without BEGIN */
    ev(a, 600, DSM_TR_TASK_BEGIN, 3, 0);      /* never ends */
    ev(a, 650, DSM_TR_TASK_BEGIN, 4, 0);
    ev(a, 700, DSM_TR_TASK_END, 4, 0);
    ev(a, 800, DSM_TR_FINALIZE, 0, 0);
    struct th *b = &th[1][0];
    ev(b, 20, DSM_TR_TASK_BEGIN, 6, 0);
    ev(b, 30, DSM_TR_TASK_BEGIN, 5, 1);       /* stolen from rank 0, its END lost */
    ev(b, 60, DSM_TR_TASK_END, 6, 0);         /* ends 5 too */
    ev(b, 70, DSM_TR_TASK_END, 5, 1);         /* now an END without BEGIN */
    ev(b, 100, DSM_TR_TASK_BEGIN, 8, 2);      /* owner field = this rank: not stolen */
    ev(b, 150, DSM_TR_TASK_END, 8, 2);
    ev(b, 1000, DSM_TR_FINALIZE, 0, 0);       /* the trace's end */

    for (int r = 0; r < 2; r++) {
        struct dsm_trace_file_hdr h;
        char path[600];
        memset(&h, 0, sizeof h);
        memcpy(h.magic, DSM_TRACE_MAGIC, 8);
        h.version = DSM_TRACE_VERSION;
        h.endian = DSM_TRACE_ENDIAN;
        h.hdr_size = sizeof h;
        h.rec_size = sizeof(struct dsm_trace_rec);
        h.rank = r;
        h.nodes = 2;
        h.page_size = 4096;
        snprintf(h.host, sizeof h.host, "host0");
        struct dsm_trace_rec *recs[2] = { th[r][0].r, th[r][1].r };
        size_t counts[2] = { th[r][0].n, th[r][1].n };
        for (int k = 0; k < 2; k++)
            for (size_t i = 0; i < counts[k]; i++)
                recs[k][i].tid = (uint16_t)k;
        snprintf(path, sizeof path, "%s.%d", prefix, r);
        if (tr_write(path, &h, recs, counts, 2)) {
            perror(path);
            exit(1);
        }
    }
}

struct want { uint64_t t0, t1, id; int owner, stolen, depth, unended; };

static void check_tasks(const struct tr_trace *t, int rank, const struct want *w, size_t nw)
{
    struct tl_task *v;
    size_t n;
    const struct tr_thread *th = &t->r[rank].th[0];
    CHECK(th->role == DSM_TR_ROLE_APP, "rank %d thread 0 is an application thread", rank);
    if (tl_thread_tasks(th, rank, t->t_end, &v, &n)) {
        CHECK(0, "tl_thread_tasks rank %d: out of memory", rank);
        return;
    }
    CHECK(n == nw, "rank %d: %zu tasks, expected %zu", rank, n, nw);
    for (size_t i = 0; i < n && i < nw; i++)
        CHECK(v[i].t0 == w[i].t0 * US && v[i].t1 == w[i].t1 * US && v[i].id == w[i].id &&
              v[i].owner == w[i].owner && v[i].stolen == w[i].stolen &&
              v[i].depth == w[i].depth && v[i].unended == w[i].unended,
              "rank %d task %zu: %.0f-%.0f us id %llu owner %d stolen %d depth %d unended %d",
              rank, i, (double)v[i].t0 / US, (double)v[i].t1 / US,
              (unsigned long long)v[i].id, v[i].owner, v[i].stolen, v[i].depth, v[i].unended);
    free(v);
    /* the communication thread ran none */
    CHECK(tl_thread_tasks(&t->r[rank].th[1], rank, t->t_end, &v, &n) == 0 && n == 0 && !v,
          "rank %d communication thread: no tasks", rank);
}

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void check_json(const struct tr_trace *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f && cmd_timeline_json(t, f) == 0, "cmd_timeline_json");
    if (f)
        fclose(f);
    if (!buf)
        return;
    CHECK(count(buf, "\"cat\":\"task\",\"ph\":\"X\"") == 9, "json: 9 task intervals (9 BEGINs)");
    CHECK(count(buf, "{\"name\":\"stolen task\"") == 3, "json: 3 stolen");
    CHECK(count(buf, "\"unended\":true") == 2, "json: 2 unended");
    CHECK(count(buf, "\"cat\":\"steal\",\"ph\":\"i\"") == 2, "json: 2 steal requests");
    CHECK(count(buf, "\"victim\":1,\"tasks\":2") == 1, "json: the steal that took 2");
    CHECK(count(buf, "\"dur\":-") == 0, "json: no negative duration");
    CHECK(count(buf, "\"name\":\"tasks of thread 0\"") == 2, "json: a task track per rank");
    CHECK(count(buf, "\"name\":\"process_name\"") == 2, "json: the process names as before");
    CHECK(strstr(buf, "{\"name\":\"task\",\"cat\":\"task\",\"ph\":\"X\",\"pid\":0,\"tid\":65536,"
                      "\"ts\":600.000,\"dur\":400.000,\"args\":{\"task\":3,\"owner\":0,"
                      "\"thread\":0,\"depth\":0,\"unended\":true}}") != NULL,
          "json: the open task to the trace's end");
    CHECK(strstr(buf, "{\"name\":\"stolen task\",\"cat\":\"task\",\"ph\":\"X\",\"pid\":0,"
                      "\"tid\":65536,\"ts\":360.000,\"dur\":20.000,\"args\":{\"task\":9,"
                      "\"owner\":1,\"thread\":0,\"depth\":2}}") != NULL,
          "json: the stolen task two deep");
    size_t open = 0, close = 0;
    for (char *p = buf; *p; p++) {
        open += *p == '{';
        close += *p == '}';
    }
    CHECK(open == close, "json: braces balance (%zu)", open);
    free(buf);
}

/* Read back the PNG that png.c writes (one IDAT, filter 0, 8-bit RGB). */
static unsigned char *read_png(const char *path, int *w, int *h)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *file = malloc(1 << 22), *raw = NULL, *px = NULL;
    size_t n = fread(file, 1, 1 << 22, f);
    fclose(f);
    if (n < 33 || memcmp(file, "\x89PNG\r\n\x1a\n", 8) || memcmp(file + 12, "IHDR", 4))
        goto out;
#define BE32(p) ((uint32_t)(p)[0] << 24 | (uint32_t)(p)[1] << 16 | (uint32_t)(p)[2] << 8 | (p)[3])
    *w = (int)BE32(file + 16);
    *h = (int)BE32(file + 20);
    if (memcmp(file + 37, "IDAT", 4))
        goto out;
    uLongf rawlen = (uLongf)(*w * 3 + 1) * (uLongf)*h;
    raw = malloc(rawlen);
    if (uncompress(raw, &rawlen, file + 41, BE32(file + 33)) != Z_OK)
        goto out;
    px = malloc((size_t)*w * (size_t)*h * 3);
    for (int y = 0; y < *h; y++)
        memcpy(px + (size_t)y * (size_t)*w * 3, raw + (size_t)y * (size_t)(*w * 3 + 1) + 1,
               (size_t)*w * 3);
out:
    free(file);
    free(raw);
    return px;
}

static uint32_t pixel(const unsigned char *px, int w, int x, int y)
{
    const unsigned char *p = px + ((size_t)y * (size_t)w + (size_t)x) * 3;
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* Whether colour c is in rows [y0, y1) and columns [x0, x1). */
static int has(const unsigned char *px, int w, int y0, int y1, int x0, int x1, uint32_t c)
{
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++)
            if (pixel(px, w, x, y) == c)
                return 1;
    return 0;
}

static void check_png(const struct tr_trace *t, const char *path)
{
    int w = 0, h = 0;
    CHECK(cmd_timeline_png(t, path, WIDTH) == 0, "cmd_timeline_png");
    unsigned char *px = read_png(path, &w, &h);
    CHECK(px && w == WIDTH, "png: read back, %d x %d", w, h);
    if (!px)
        return;
    /* The rows end 80 pixels above the bottom (the time axis, one line of
     * legend), the plot spans PLOT_X0 to PLOT_X1. */
    int rows = h - 80;
    CHECK(has(px, w, 0, rows, PLOT_X0, PLOT_X1, TL_RGB_TASK), "png: own task colour");
    CHECK(has(px, w, 0, rows, PLOT_X0, PLOT_X1, TL_RGB_TASK_IN), "png: nested task colour");
    CHECK(has(px, w, 0, rows, PLOT_X0, PLOT_X1, TL_RGB_STOLEN), "png: stolen task colour");
    CHECK(has(px, w, 0, rows, PLOT_X0, PLOT_X1, TL_RGB_STOLEN_IN),
          "png: stolen nested task colour");
    CHECK(has(px, w, 0, rows, PLOT_X1 - 1, PLOT_X1, TL_RGB_TASK),
          "png: the open task reaches the right edge");
    CHECK(!has(px, w, 0, rows, PLOT_X1, w, TL_RGB_TASK), "png: and no further");
    CHECK(has(px, w, rows, h, 0, w, TL_RGB_TASK) && has(px, w, rows, h, 0, w, TL_RGB_STOLEN),
          "png: the legend has the task colours");
    free(px);
}

int main(void)
{
    char dir[256], prefix[300], png[320], err[400];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/timeline_tasks.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror(dir);
        return 1;
    }
    snprintf(prefix, sizeof prefix, "%s/t", dir);
    snprintf(png, sizeof png, "%s/t.png", dir);
    make_trace(prefix);
    struct tr_trace t;
    if (tr_load(&t, prefix, err, sizeof err)) {
        fprintf(stderr, "timeline_tasks: %s\n", err);
        return 1;
    }
    CHECK(t.t_end == 1000 * US, "trace end 1000 us");

    static const struct want r0[] = {
        { 100, 200, 7, 1, 1, 0, 0 },
        { 300, 500, 1, 0, 0, 0, 0 },
        { 350, 400, 2, 0, 0, 1, 0 },
        { 360, 380, 9, 1, 1, 2, 0 },
        { 600, 1000, 3, 0, 0, 0, 1 },
        { 650, 700, 4, 0, 0, 1, 0 } };
    static const struct want r1[] = {
        { 20, 60, 6, 1, 0, 0, 0 },
        { 30, 60, 5, 0, 1, 1, 1 },
        { 100, 150, 8, 1, 0, 0, 0 } };
    check_tasks(&t, 0, r0, sizeof r0 / sizeof r0[0]);
    check_tasks(&t, 1, r1, sizeof r1 / sizeof r1[0]);
    check_json(&t);
    check_png(&t, png);
    if (getenv("TIMELINE_TASKS_KEEP"))
        printf("kept %s and %s.0, .1\n", png, prefix);
    else {
        for (int r = 0; r < 2; r++) {
            snprintf(err, sizeof err, "%s.%d", prefix, r);
            unlink(err);
        }
        unlink(png);
        rmdir(dir);
    }
    tr_free(&t);
    printf("timeline_tasks: %s\n", failures ? "FAILED" : "all checks passed");
    return failures ? 1 : 0;
}
