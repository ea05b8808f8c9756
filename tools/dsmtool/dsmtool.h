/*
 * dsmtool.h - the commands of dsmtool (main.c dispatches): report.c,
 * timeline.c, simulate.c (simulate, sweep, calibrate); and timeline.c's
 * task pairing and colours, which tests/trace/timeline_tasks checks.
 * Single-threaded.
 */
#ifndef DSMTOOL_H
#define DSMTOOL_H

#include <stdint.h>
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

/* timeline.c: the colours of the task lanes (dsmtool(1)), 0xRRGGBB. */
#define TL_RGB_TASK        0x00acc1u   /* a task made on the rank that ran it */
#define TL_RGB_TASK_IN     0x00838fu   /* the same, at an odd depth (nested) */
#define TL_RGB_STOLEN      0xec407au   /* a task stolen from another rank */
#define TL_RGB_STOLEN_IN   0xad1457u   /* the same, at an odd depth */
#define TL_RGB_STEAL       0x000000u   /* a steal request that took tasks */
#define TL_RGB_STEAL_EMPTY 0x9e9e9eu   /* one that took nothing */

/* timeline.c: one task a thread ran, from its TASK_BEGIN to its TASK_END
 * (dsm-trace(5)). */
struct tl_task {
    uint64_t t0, t1;                 /* ns from the job's start; t1 >= t0 */
    uint64_t id;                     /* the task's id on its owner */
    int owner;                       /* the rank that made it */
    int stolen;                      /* owner is not the rank that ran it */
    int depth;                       /* tasks of the thread it ran inside */
    int unended;                     /* no TASK_END: t1 is the end of the trace, or
                                      * of the task it ran inside */
};
/* The tasks thread th of rank `rank` ran, in the order they began, BEGIN
 * paired with END by a stack (a task run inside another is nested); an END
 * without BEGIN is skipped, a BEGIN without END lasts to t_end.  *out is
 * malloc'd (the caller frees it; NULL when none).  0, or -1 out of memory. */
int tl_thread_tasks(const struct tr_thread *th, int rank, uint64_t t_end,
                    struct tl_task **out, size_t *n);

/* Load a trace or exit 1 with the reason. */
void load_or_die(struct tr_trace *t, const char *prefix);
/* Print "dsmtool: ..." and exit 2 (misuse) */
void usage_error(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
