/*
 * main.c - dsmtool: analyse and replay libdsm's DSM_TRACE logs.
 *   dsmtool report PREFIX [--json]
 *   dsmtool timeline PREFIX -o FILE.png [--width N] | --json FILE.json
 *   dsmtool simulate PREFIX [-m MODEL]... [--set KEY=VALUE]... [--json]
 *   dsmtool sweep PREFIX [-m MODEL] [--factors LIST] [--png FILE] [--json]
 *   dsmtool dump PREFIX
 *   dsmtool calibrate --pingpong FILE --rmr FILE --rmr-trace PREFIX
 *                     [--barrier FILE --barrier-trace PREFIX] [--busy FILE] [--naps FILE]
 *                     [-o MODEL]
 * dsmtool(1) says what each prints.  Single-threaded.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dsmtool.h"

static const char usage_text[] =
    "usage: dsmtool COMMAND ...\n"
    "  report PREFIX [--json]            time per state, messages, Table 2 columns\n"
    "  timeline PREFIX [-o FILE.png] [--width N] [--json FILE.json]\n"
    "                                    a time line picture / Chrome trace JSON\n"
    "  simulate PREFIX [-m MODEL]... [--set KEY=VALUE]... [--json]\n"
    "                                    replay under a machine model\n"
    "  sweep PREFIX [-m MODEL] [--factors 1,2,4,16] [--png FILE] [--json]\n"
    "                                    run time as network and CPU speed vary\n"
    "  calibrate --pingpong FILE --rmr FILE --rmr-trace PREFIX\n"
    "            [--barrier FILE --barrier-trace PREFIX] [--busy FILE] [--naps FILE]\n"
    "            [-o MODEL]\n"
    "                                    measure this machine's model\n"
    "  dump PREFIX                       every event as text: rank thread time_us kind\n"
    "                                    sub peer a b\n"
    "PREFIX is the DSM_TRACE value of the run (files PREFIX.0, PREFIX.1, ...).\n"
    "See dsmtool(1), dsm-trace(5).\n";

void usage_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "dsmtool: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n%s", usage_text);
    exit(2);
}

void load_or_die(struct tr_trace *t, const char *prefix)
{
    char err[512];
    if (tr_load(t, prefix, err, sizeof err)) {
        fprintf(stderr, "dsmtool: %s\n", err);
        exit(1);
    }
}

static int cmd_report_main(int argc, char **argv)
{
    const char *prefix = NULL;
    int json = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (argv[i][0] == '-') usage_error("report: unknown option %s", argv[i]);
        else if (!prefix) prefix = argv[i];
        else usage_error("report: one PREFIX only");
    }
    if (!prefix)
        usage_error("report: give the trace PREFIX");
    struct tr_trace t;
    load_or_die(&t, prefix);
    int rc = cmd_report(&t, json, stdout);
    tr_free(&t);
    return rc ? 1 : 0;
}

static int cmd_dump_main(int argc, char **argv)
{
    if (argc != 1 || argv[0][0] == '-')
        usage_error("dump: give the trace PREFIX");
    struct tr_trace t;
    load_or_die(&t, argv[0]);
    for (int r = 0; r < t.nranks; r++)
        for (int k = 0; k < t.r[r].nth; k++)
            for (size_t i = 0; i < t.r[r].th[k].n; i++) {
                const struct dsm_trace_rec *e = &t.r[r].th[k].ev[i];
                printf("%d %d %.3f %s %u %d %llu %llu\n", r, t.r[r].th[k].tid, (double)e->t * 1e-3,
                       tr_kind_name(e->kind), e->sub, e->peer, (unsigned long long)e->a,
                       (unsigned long long)e->b);
            }
    tr_free(&t);
    return 0;
}

static int cmd_timeline_main(int argc, char **argv)
{
    const char *prefix = NULL, *png = NULL, *json = NULL;
    int width = 1600;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) png = argv[++i];
        else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
        else if (!strcmp(argv[i], "--width") && i + 1 < argc) {
            width = atoi(argv[++i]);
            if (width < 300 || width > 20000)
                usage_error("timeline: --width wants 300 to 20000 pixels");
        } else if (argv[i][0] == '-') usage_error("timeline: unknown or incomplete option %s", argv[i]);
        else if (!prefix) prefix = argv[i];
        else usage_error("timeline: one PREFIX only");
    }
    if (!prefix || (!png && !json))
        usage_error("timeline: give PREFIX and -o FILE.png and/or --json FILE.json");
    struct tr_trace t;
    load_or_die(&t, prefix);
    int rc = 0;
    if (png && cmd_timeline_png(&t, png, width)) {
        perror(png);
        rc = 1;
    }
    if (json) {
        FILE *f = strcmp(json, "-") ? fopen(json, "w") : stdout;
        if (!f || cmd_timeline_json(&t, f) || (f != stdout && fclose(f))) {
            perror(json);
            rc = 1;
        }
    }
    tr_free(&t);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "dump")) return cmd_dump_main(argc - 2, argv + 2);
    if (!strcmp(argv[1], "report")) return cmd_report_main(argc - 2, argv + 2);
    if (!strcmp(argv[1], "timeline")) return cmd_timeline_main(argc - 2, argv + 2);
    if (!strcmp(argv[1], "simulate")) return cmd_simulate(argc - 2, argv + 2);
    if (!strcmp(argv[1], "sweep")) return cmd_sweep(argc - 2, argv + 2);
    if (!strcmp(argv[1], "calibrate")) return cmd_calibrate(argc - 2, argv + 2);
    usage_error("unknown command '%s'", argv[1]);
}
