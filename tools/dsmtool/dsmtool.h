/*
 * dsmtool.h - the commands of dsmtool (main.c dispatches): report.c,
 * timeline.c, simulate.c (simulate, sweep, calibrate).  Single-threaded.
 */
#ifndef DSMTOOL_H
#define DSMTOOL_H

#include <stdio.h>

#include "model.h"
#include "sim.h"
#include "tracefile.h"

int cmd_report(const struct tr_trace *t, int json, FILE *out);
int cmd_timeline_png(const struct tr_trace *t, const char *path, int width);
int cmd_timeline_json(const struct tr_trace *t, FILE *out);
int cmd_simulate(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);

/* Load a trace or exit 1 with the reason. */
void load_or_die(struct tr_trace *t, const char *prefix);
/* Print "dsmtool: ..." and exit 2 (misuse) */
void usage_error(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
