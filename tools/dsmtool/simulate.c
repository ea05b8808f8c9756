/*
 * simulate.c - dsmtool simulate, sweep and calibrate: the commands built on
 * the replay (sim.c) and the models (model.c).  Single-threaded.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsmtool.h"
#include "png.h"

#ifndef DSMTOOL_MODELDIR
#define DSMTOOL_MODELDIR "/usr/local/share/libdsm/models"
#endif
#ifndef DSMTOOL_SRC_MODELDIR
#define DSMTOOL_SRC_MODELDIR DSMTOOL_MODELDIR
#endif

/* -m NAME: a file, or NAME.model in $DSMTOOL_MODELS, the source tree, the
 * installed models. */
static void load_model(struct model *m, const char *name)
{
    char path[4200], err[512];
    const char *dirs[3] = { getenv("DSMTOOL_MODELS"), DSMTOOL_SRC_MODELDIR, DSMTOOL_MODELDIR };
    if (access(name, R_OK) == 0) {
        snprintf(path, sizeof path, "%s", name);
    } else {
        path[0] = '\0';
        for (int i = 0; i < 3 && !path[0]; i++) {
            if (!dirs[i])
                continue;
            snprintf(path, sizeof path, "%s/%s.model", dirs[i], name);
            if (access(path, R_OK) != 0)
                path[0] = '\0';
        }
        if (!path[0])
            usage_error("no model file '%s' (nor %s.model in $DSMTOOL_MODELS, %s or %s); "
                        "give a file or one of the shipped models: this, gige, itanium, ib",
                        name, name, DSMTOOL_SRC_MODELDIR, DSMTOOL_MODELDIR);
    }
    if (model_load(m, path, err, sizeof err)) {
        fprintf(stderr, "dsmtool: %s\n", err);
        exit(2);
    }
}

struct common { const char *prefix; struct model m; int json; int have_model; };

/* Parse -m, --set, --json and PREFIX; returns 1 if argv[i] was consumed. */
static int common_arg(struct common *c, int argc, char **argv, int *i)
{
    char err[512];
    if (!strcmp(argv[*i], "-m") || !strcmp(argv[*i], "--model")) {
        if (*i + 1 >= argc)
            usage_error("%s needs a model file or name", argv[*i]);
        load_model(&c->m, argv[++*i]);
        c->have_model = 1;
        return 1;
    }
    if (!strcmp(argv[*i], "--set")) {
        if (*i + 1 >= argc)
            usage_error("--set needs KEY=VALUE");
        if (model_set(&c->m, argv[++*i], err, sizeof err))
            usage_error("--set: %s", err);
        return 1;
    }
    if (!strcmp(argv[*i], "--json")) {
        c->json = 1;
        return 1;
    }
    if (argv[*i][0] != '-' && !c->prefix) {
        c->prefix = argv[*i];
        return 1;
    }
    return 0;
}

static void run_or_die(const struct tr_trace *t, const struct model *m, struct sim_result *r)
{
    char err[512];
    if (sim_run(t, m, r, err, sizeof err)) {
        fprintf(stderr, "dsmtool: %s\n", err);
        exit(1);
    }
}

static void sum_breakdown(const struct sim_result *r, struct sim_breakdown *b)
{
    memset(b, 0, sizeof *b);
    for (int i = 0; i < r->nranks; i++) {
        b->compute += r->r[i].b.compute; b->fault += r->r[i].b.fault;
        b->barrier += r->r[i].b.barrier; b->lock += r->r[i].b.lock;
        b->atomic += r->r[i].b.atomic; b->other += r->r[i].b.other;
    }
}

int cmd_simulate(int argc, char **argv)
{
    struct common c;
    memset(&c, 0, sizeof c);
    model_defaults(&c.m);
    for (int i = 0; i < argc; i++)
        if (!common_arg(&c, argc, argv, &i))
            usage_error("simulate: unknown option %s", argv[i]);
    if (!c.prefix)
        usage_error("simulate: give the trace PREFIX");
    if (!c.have_model)
        load_model(&c.m, "this");
    struct tr_trace t;
    struct sim_result meas, pred;
    struct sim_breakdown bm, bp;
    load_or_die(&t, c.prefix);
    sim_measured(&t, &meas);
    run_or_die(&t, &c.m, &pred);
    sum_breakdown(&meas, &bm);
    sum_breakdown(&pred, &bp);
    double err = meas.run_s > 0 ? (pred.run_s - meas.run_s) / meas.run_s : 0;
    if (c.json) {
        printf("{\"simulate\":\"dsmtool\",\"model\":\"%s\",\"ranks\":%d,\"measured_s\":%.6f,"
               "\"predicted_s\":%.6f,\"sim_error\":%.4f,\"measured_rmr_ms\":%.4f,"
               "\"rmr_ms\":%.4f,\"measured_barrier_ms\":%.4f,\"barrier_ms\":%.4f,"
               "\"compute_s\":%.6f,\"fault_s\":%.6f,\"barrier_s\":%.6f,\"lock_s\":%.6f,"
               "\"atomic_s\":%.6f,\"other_s\":%.6f,\"unmatched_recvs\":%ld,"
               "\"unmatched_waits\":%ld,\"contention\":%.4f,\"busy_recvs\":%ld}\n",
               c.m.name, t.nranks, meas.run_s, pred.run_s, err, meas.rmr_ms, pred.rmr_ms,
               meas.barrier_ms, pred.barrier_ms, bp.compute, bp.fault, bp.barrier, bp.lock,
               bp.atomic, bp.other, pred.unmatched_recvs, pred.unmatched_waits, pred.contention,
               pred.busy_recvs);
    } else {
        printf("dsmtool simulate: %d ranks, model %s\n", t.nranks, c.m.name);
        printf("%-10s %10s %9s %10s %10s %10s %10s %10s %10s %10s\n", "", "run_s", "rmr_ms",
               "barrier_ms", "compute_s", "fault_s", "barrier_s", "lock_s", "atomic_s", "other_s");
        printf("%-10s %10.4f %9.4f %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f\n",
               "measured", meas.run_s, meas.rmr_ms, meas.barrier_ms, bm.compute, bm.fault,
               bm.barrier, bm.lock, bm.atomic, bm.other);
        printf("%-10s %10.4f %9.4f %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f\n",
               "predicted", pred.run_s, pred.rmr_ms, pred.barrier_ms, bp.compute, bp.fault,
               bp.barrier, bp.lock, bp.atomic, bp.other);
        printf("predicted / measured run time: %.3f (%+.1f%%); times summed over the ranks' "
               "main threads\n", meas.run_s > 0 ? pred.run_s / meas.run_s : 0, err * 100);
        for (int i = 0; i < t.nranks; i++)
            printf("  rank %d: predicted %.4f s (compute %.4f, fault %.4f, barrier %.4f, "
                   "lock %.4f, other %.4f)\n", i, pred.r[i].end - pred.r[i].start,
                   pred.r[i].b.compute, pred.r[i].b.fault, pred.r[i].b.barrier,
                   pred.r[i].b.lock, pred.r[i].b.atomic + pred.r[i].b.other);
        if (c.m.contention_from_trace)
            printf("contention = trace: the model's transfer and wake-up times x %.3f, as "
                   "measured in this trace\n", pred.contention);
        if (pred.busy_recvs)
            printf("busy homes: %ld page requests reached a computing home on a host with no "
                   "free core (+%.1f us each)\n", pred.busy_recvs, c.m.busy_service_us);
        if (pred.unmatched_recvs || pred.unmatched_waits)
            printf("warning: %ld receives and %ld waits had no matching send or reply "
                   "(replayed as traced)\n", pred.unmatched_recvs, pred.unmatched_waits);
    }
    sim_result_free(&meas);
    sim_result_free(&pred);
    tr_free(&t);
    return 0;
}

/* ---- sweep ---- */

static int parse_factors(const char *s, double *f, int max)
{
    int n = 0;
    char *end;
    while (*s && n < max) {
        double x = strtod(s, &end);
        if (end == s || !(x > 0))
            return -1;
        f[n++] = x;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return n;
}

int cmd_sweep(int argc, char **argv)
{
    struct common c;
    const char *png = NULL, *fl = "1,2,4,8,16";
    double f[32];
    memset(&c, 0, sizeof c);
    model_defaults(&c.m);
    for (int i = 0; i < argc; i++) {
        if (common_arg(&c, argc, argv, &i))
            continue;
        if (!strcmp(argv[i], "--png") && i + 1 < argc) png = argv[++i];
        else if (!strcmp(argv[i], "--factors") && i + 1 < argc) fl = argv[++i];
        else usage_error("sweep: unknown or incomplete option %s", argv[i]);
    }
    if (!c.prefix)
        usage_error("sweep: give the trace PREFIX");
    if (!c.have_model)
        load_model(&c.m, "this");
    int nf = parse_factors(fl, f, 32);
    if (nf <= 0)
        usage_error("sweep: --factors wants speed-up factors > 0, e.g. 1,2,4,16");
    struct tr_trace t;
    load_or_die(&t, c.prefix);
    double *grid = calloc((size_t)nf * (size_t)nf, sizeof *grid);
    const double cpu0 = c.m.cpu_factor, net0 = c.m.net_factor;
    for (int a = 0; a < nf; a++)            /* network speed-up */
        for (int b = 0; b < nf; b++) {      /* CPU speed-up */
            struct model m = c.m;
            struct sim_result r;
            m.net_factor = net0 / f[a];
            m.cpu_factor = cpu0 / f[b];
            run_or_die(&t, &m, &r);
            grid[a * nf + b] = r.run_s;
            if (c.json)
                printf("{\"sweep\":\"dsmtool\",\"model\":\"%s\",\"network_speedup\":%g,"
                       "\"cpu_speedup\":%g,\"predicted_s\":%.6f}\n", m.name, f[a], f[b], r.run_s);
            sim_result_free(&r);
        }
    if (!c.json) {
        printf("dsmtool sweep: %d ranks, model %s: predicted run time (s); rows: network "
               "N times faster (latency and per-byte time / N), columns: CPU N times faster\n",
               t.nranks, c.m.name);
        printf("%8s", "net\\cpu");
        for (int b = 0; b < nf; b++)
            printf(" %9gx", f[b]);
        printf("\n");
        for (int a = 0; a < nf; a++) {
            printf("%7gx", f[a]);
            for (int b = 0; b < nf; b++)
                printf(" %10.4f", grid[a * nf + b]);
            printf("\n");
        }
    }
    int rc = 0;
    if (png) {
        /* Paper 004 Figs. 4-6: run time against the speed-up factor, for a
         * faster network alone, a faster CPU alone, and both. */
        struct img im;
        int W = 900, H = 600, L = 90, R = 30, T = 50, B = 80;
        double ymax = 0;
        for (int i = 0; i < nf * nf; i++)
            if (grid[i] > ymax) ymax = grid[i];
        if (ymax <= 0) ymax = 1;
        img_new(&im, W, H, 0xffffff);
        img_text(&im, L, 15, "PREDICTED RUN TIME (S) VS SPEED-UP", 0, 2);
        img_line(&im, L, H - B, W - R, H - B, 0);
        img_line(&im, L, T, L, H - B, 0);
        double lmin = log2(f[0]), lmax = log2(f[nf - 1]);
        if (lmax <= lmin) lmax = lmin + 1;
        char lab[64];
        for (int i = 0; i < nf; i++) {
            int x = L + (int)((log2(f[i]) - lmin) / (lmax - lmin) * (W - L - R));
            img_line(&im, x, H - B, x, H - B + 5, 0);
            snprintf(lab, sizeof lab, "%gX", f[i]);
            img_text(&im, x - 6, H - B + 10, lab, 0, 1);
        }
        for (int i = 0; i <= 5; i++) {
            int y = H - B - (H - B - T) * i / 5;
            img_line(&im, L - 5, y, L, y, 0);
            snprintf(lab, sizeof lab, "%.3g", ymax * i / 5);
            img_text(&im, 10, y - 3, lab, 0, 1);
        }
        static const uint32_t col[3] = { 0x1e88e5, 0xe53935, 0x43a047 };
        static const char *name[3] = { "NETWORK FASTER", "CPU FASTER", "BOTH FASTER" };
        for (int k = 0; k < 3; k++) {
            int px = 0, py = 0;
            for (int i = 0; i < nf; i++) {
                double v = k == 0 ? grid[i * nf] : k == 1 ? grid[i] : grid[i * nf + i];
                int x = L + (int)((log2(f[i]) - lmin) / (lmax - lmin) * (W - L - R));
                int y = H - B - (int)(v / ymax * (H - B - T));
                img_rect(&im, x - 3, y - 3, 7, 7, col[k]);
                if (i) {
                    img_line(&im, px, py, x, y, col[k]);
                    img_line(&im, px, py + 1, x, y + 1, col[k]);
                }
                px = x; py = y;
            }
            img_rect(&im, L + 220 * k, H - 30, 14, 10, col[k]);
            img_text(&im, L + 220 * k + 20, H - 28, name[k], 0, 1);
        }
        if (img_write_png(&im, png)) {
            perror(png);
            rc = 1;
        }
        img_free(&im);
    }
    free(grid);
    tr_free(&t);
    return rc;
}

/* ---- calibrate ---- */

/* The value of the first JSON line in path with "metric":"name" (and, if
 * field is not NULL, "field":fv). */
static int json_metric(const char *path, const char *name, const char *field, double fv,
                       double *out)
{
    FILE *f = fopen(path, "r");
    char line[4096], pat[256], fpat[128];
    if (!f)
        return -1;
    snprintf(pat, sizeof pat, "\"metric\":\"%s\"", name);
    if (field)
        snprintf(fpat, sizeof fpat, "\"%s\":", field);
    while (fgets(line, sizeof line, f)) {
        char *p = strstr(line, pat), *v;
        if (!p || !(v = strstr(line, "\"value\":")))
            continue;
        if (field) {
            char *q = strstr(line, fpat);
            if (!q || fabs(strtod(q + strlen(fpat), NULL) - fv) > 1e-9)
                continue;
        }
        *out = strtod(v + 8, NULL);
        fclose(f);
        return 0;
    }
    fclose(f);
    return -1;
}

/* --busy FILE (benchmarks/micro/rmr_busy's output): busy_service_us, the
 * extra time of an RMR whose home computes (rmr_busy_us - rmr_idle_us, in
 * the same run), and cores, this machine's, which decide when a host has
 * no free core.  Says what it took on log. */
static void calibrate_busy(struct model *m, const char *busy, FILE *log)
{
    double extra, b = 0, i = 0, nb = 0;
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    if (!busy)
        return;
    if (json_metric(busy, "busy_extra_us", NULL, 0, &extra)) {
        fprintf(stderr, "dsmtool: calibrate: no busy_extra_us line in %s (run "
                "benchmarks/micro/rmr_busy into it)\n", busy);
        exit(1);
    }
    json_metric(busy, "rmr_busy_us", NULL, 0, &b);
    json_metric(busy, "rmr_idle_us", NULL, 0, &i);
    json_metric(busy, "busy_reads", NULL, 0, &nb);
    m->busy_service_us = extra > 0 ? extra : 0;
    m->cores = nproc > 0 ? (int)nproc : 0;
    fprintf(log, "# measured by rmr_busy (%s): RMR to a computing home %.1f us (%.0f reads),\n"
            "# to a home waiting in a barrier %.1f us: busy_service_us = the difference;\n"
            "# cores = %d (this machine's; compute = wall does not share them)\n",
            busy, b, nb, i, m->cores);
}

/* --naps FILE (benchmarks/micro/nap_late): how late a nap ends here. */
static void calibrate_naps(struct model *m, const char *naps, FILE *log)
{
    double late;
    if (!naps)
        return;
    if (json_metric(naps, "nap_late_us", NULL, 0, &late)) {
        fprintf(stderr, "dsmtool: calibrate: no nap_late_us line in %s (run "
                "benchmarks/micro/nap_late into it)\n", naps);
        exit(1);
    }
    m->nap_late_us = late;
    fprintf(log, "# measured by nap_late (%s): a timed nap of 20-200 us ends %.1f us late\n"
            "# (median, every CPU busy): nap_late_us\n", naps, late);
}

int cmd_calibrate(int argc, char **argv)
{
    const char *pp = NULL, *rmr = NULL, *rmr_tr = NULL, *bar = NULL, *bar_tr = NULL, *out = NULL;
    const char *busy = NULL, *naps = NULL;
    for (int i = 0; i < argc; i++) {
        const char **dst = NULL;
        if (!strcmp(argv[i], "--pingpong")) dst = &pp;
        else if (!strcmp(argv[i], "--rmr")) dst = &rmr;
        else if (!strcmp(argv[i], "--rmr-trace")) dst = &rmr_tr;
        else if (!strcmp(argv[i], "--barrier")) dst = &bar;
        else if (!strcmp(argv[i], "--barrier-trace")) dst = &bar_tr;
        else if (!strcmp(argv[i], "--busy")) dst = &busy;
        else if (!strcmp(argv[i], "--naps")) dst = &naps;
        else if (!strcmp(argv[i], "-o")) dst = &out;
        else usage_error("calibrate: unknown option %s", argv[i]);
        if (i + 1 >= argc)
            usage_error("calibrate: %s needs a value", argv[i]);
        *dst = argv[++i];
    }
    if (!pp || !rmr_tr)
        usage_error("calibrate: give at least --pingpong FILE (bench.sh pingpong output) and "
                    "--rmr-trace PREFIX (a traced bench.sh rmr run)");
    /* Ping-pong: half round trip t(s) = a + s * byte_ns, least squares over
     * the sizes found. */
    static const double sizes[] = { 8, 1024, 4096, 16384, 65536, 262144 };
    double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double v;
        if (json_metric(pp, "half_rtt_us", "bytes", sizes[i], &v) == 0) {
            sx += sizes[i]; sy += v; sxx += sizes[i] * sizes[i]; sxy += sizes[i] * v; n++;
        }
    }
    if (n < 2) {
        fprintf(stderr, "dsmtool: calibrate: %s has fewer than two half_rtt_us lines with "
                "different \"bytes\"; run benchmarks/bench.sh pingpong into it\n", pp);
        return 1;
    }
    double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    double icpt = (sy - slope * sx) / n;
    if (slope < 0) slope = 0;
    if (icpt < 0) icpt = 0;
    struct model m;
    model_defaults(&m);
    snprintf(m.name, sizeof m.name, "this");
    /* The traced gaps already hold this machine's protocol work, the cost of
     * a fault and of posting a send: the model adds only what the
     * network and the other side's scheduling cost. */
    m.send_us = icpt * 0.25;
    m.recv_us = icpt * 0.25;
    m.latency_us = icpt * 0.5;
    m.byte_ns = slope * 1e3;
    m.self_us = 0;
    m.fault_us = 0;
    m.compute = COMPUTE_WALL;

    /* Measured, not fitted: the mean send-to-receive time of each message
     * type at an idle receiver, in the rmr trace (page requests and
     * replies) and the barrier trace (barrier messages, diffs, acks), and
     * the mean wake-up of a sleeping waiter in the barrier trace.  These
     * replace latency + service_us for the types measured. */
    struct tr_trace t;
    struct sim_result meas;
    struct model mr = m, mb = m;
    load_or_die(&t, rmr_tr);
    sim_measured(&t, &meas);
    double target = meas.rmr_ms, bench_rmr = 0, rmr_model = 0, bar_target = 0, bar_model = 0;
    sim_result_free(&meas);
    if (rmr && json_metric(rmr, "rmr_us", NULL, 0, &bench_rmr) == 0)
        fprintf(stderr, "dsmtool: calibrate: bench rmr_us %.2f, traced RMR %.2f us\n",
                bench_rmr, target * 1e3);
    char *logbuf = NULL;
    size_t loglen = 0;
    FILE *log = open_memstream(&logbuf, &loglen);
    if (!log) {
        perror("open_memstream");
        return 1;
    }
    long nr[2][MODEL_NTYPES], nb[2][MODEL_NTYPES] = { { 0 } }, wr[2] = { 0, 0 }, wb[2] = { 0, 0 };
    fprintf(log, "# measured in the rmr trace %s:\n", rmr_tr);
    sim_trace_costs(&t, &mr, log, nr, wr);
    struct tr_trace tb;
    if (bar_tr) {
        load_or_die(&tb, bar_tr);
        fprintf(log, "# measured in the barrier trace %s:\n", bar_tr);
        sim_trace_costs(&tb, &mb, log, nb, wb);
    }
    /* Each mean from the trace that saw more of them. */
    for (int w = 0; w < 2; w++)
        for (int ty = 1; ty < MODEL_NTYPES; ty++)
            m.xfer_us[w][ty] = nr[w][ty] >= nb[w][ty] ? mr.xfer_us[w][ty] : mb.xfer_us[w][ty];
    m.wake_us = wr[0] >= wb[0] ? mr.wake_us : mb.wake_us;
    /* A rank's first copy of a page (firstcopy.c): the rmr trace's warm-up
     * round fetches every page for the first time. */
    m.xfer_first_us = mr.xfer_first_us;
    /* Measured but not applied: replaying the traces of bench.sh simulate
     * (2026-11-25; the numbers are in the history of RESULTS.md) with it moved laplace from -4% to +1% but
     * BT W from +3% to +5..13%: part of a polling waiter's delay overlaps
     * work that the replay already charges (its core was busy with
     * compute whose wall time is replayed as traced). */
    double poll_measured = wr[1] >= wb[1] ? mr.poll_us : mb.poll_us;
    m.poll_us = 0;
    m.service_us = 0;
    calibrate_busy(&m, busy, log);
    /* libdsm's communication thread naps between polls (commnap.c): its
     * own constants, and how late a nap ends on this machine. */
    m.comm_naps = 1;
    calibrate_naps(&m, naps, log);
    fclose(log);
    struct sim_result chk;
    run_or_die(&t, &m, &chk);
    rmr_model = chk.rmr_ms;
    sim_result_free(&chk);
    tr_free(&t);
    if (bar_tr) {
        sim_measured(&tb, &meas);
        bar_target = meas.barrier_ms;
        sim_result_free(&meas);
        run_or_die(&tb, &m, &chk);
        bar_model = chk.barrier_ms;
        sim_result_free(&chk);
        tr_free(&tb);
    }
    (void)bar;
    /* How long a message waits for its receiver to get a core depends on
     * the load while the traced program ran, not while these benchmarks
     * did: the replay scales the measured times by the trace's own. */
    m.contention_from_trace = 1;
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        perror(out);
        return 1;
    }
    fprintf(f, "# This machine, measured by 'dsmtool calibrate' (benchmarks/bench.sh calibrate).\n"
            "# ping-pong half round trip = %.3f us + %.5f ns/byte (%g sizes, %s)\n"
            "# send/recv overheads are a quarter of the zero-byte half round trip each,\n"
            "# the latency the other half.  fault_us = 0: the trace holds this machine's\n"
            "# own fault cost.  compute = wall: replay compute as it ran here.\n"
            "# xfer_us.TYPE / xfer_wait_us.TYPE: mean send-to-receive time at an idle\n"
            "# communication thread / waiting thread; wake_us / poll_us: mean time from\n"
            "# another thread's completion of a wait to the end of the wait, for a\n"
            "# waiter that slept / polled; all as measured in these traces\n"
            "# (scheduling included):\n%s"
            "# poll_us: measured %.1f us, left at 0 (see dsmtool(1))\n"
            "# check: RMR traced %.4f ms, replayed %.4f ms; barrier traced %.4f ms, "
            "replayed %.4f ms\n"
            "# contention = trace: when replaying a trace, multiply them all by one\n"
            "# factor, the trace's own mean of these times over the model's (how much\n"
            "# more the machine was loaded while that trace was taken); busy_service_us\n"
            "# and xfer_first_us (a PAGE_REPLY that is its rank's first copy of the\n"
            "# page) apply only with contention = none (the trace's times hold them),\n"
            "# and so does comm_naps = on: an idle communication thread takes a message\n"
            "# when its nap ends (libdsm's naps: nap_spin_us, nap_window_us,\n"
            "# nap_first_us doubling to nap_max_us), the message's arrival being its\n"
            "# xfer_wait_us.TYPE; xfer_us.TYPE is then not used.\n",
            icpt, slope * 1e3, n, pp, logbuf, poll_measured, target, rmr_model, bar_target,
            bar_model);
    free(logbuf);
    model_print(&m, f);
    if (f != stdout && fclose(f)) {
        perror(out);
        return 1;
    }
    return 0;
}
