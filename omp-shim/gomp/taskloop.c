/*
 * taskloop.c - GOMP_taskloop and GOMP_taskloop_ull: the iteration space
 * split into tasks as libgomp splits it (grainsize, with strict; num_tasks,
 * by default the team's size), each task's range written at the start of
 * its argument block; in a taskgroup unless nogroup, whose reduction
 * descriptor (argument word 2) is registered there (task_reduction.c).
 *
 * Threads: OpenMP threads.
 */
#define _GNU_SOURCE
#include <string.h>

#include "task_internal.h"
#include "gomp_abi.h"

static void taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                     long arg_size, long arg_align, unsigned flags, unsigned long num_tasks,
                     int priority, uint64_t start, uint64_t end, uint64_t step, int ull)
{
    /* The reduction clause's descriptor (word 2 of the argument block). */
    uintptr_t *red = NULL;
    if ((flags & (TF_REDUCTION | TF_NOGROUP)) == TF_REDUCTION)
        memcpy(&red, (char *)data + 2 * sizeof(uint64_t), sizeof red);
    /* The iteration count. */
    uint64_t n;
    int up = ull ? (flags & TF_UP) != 0 : (int64_t)step > 0;
    if (up)
        n = (ull ? end <= start : (int64_t)end <= (int64_t)start) ? 0
            : (end - start + step - 1) / step;
    else
        n = (ull ? end >= start : (int64_t)end >= (int64_t)start) ? 0
            : (start - end - step - 1) / (0 - step);
    if (n == 0) {
        if (red)
            red[2] = 0;         /* GCC's code: nothing registered, no merge */
        return;
    }
    uint64_t ntasks, per, extra;
    if (flags & TF_GRAINSIZE) {
        uint64_t g = num_tasks ? num_tasks : 1;
        if (flags & TF_STRICT) {
            ntasks = (n + g - 1) / g;
            per = g;
            extra = 0;
        } else {
            ntasks = n / g ? n / g : 1;
            per = n / ntasks;
            extra = n % ntasks;
        }
    } else {
        ntasks = num_tasks ? num_tasks : (uint64_t)shim_self()->size;
        if (ntasks > n)
            ntasks = n;
        per = n / ntasks;
        extra = n % ntasks;
    }
    int group = !(flags & TF_NOGROUP);
    if (group)
        GOMP_taskgroup_start();
    if (red)
        GOMP_taskgroup_reduction_register(red);
    uint64_t s = 0;
    for (uint64_t i = 0; i < ntasks && s < n; i++) {
        uint64_t cnt = per + (i < extra ? 1 : 0);
        if (s + cnt > n)
            cnt = n - s;
        uint64_t b0 = start + s * step, b1 = start + (s + cnt) * step;
        long b[2];
        memcpy(&b[0], &b0, sizeof b0);
        memcpy(&b[1], &b1, sizeof b1);
        shim_task_create(fn, data, cpyfn, arg_size, arg_align, (flags & TF_IF) != 0,
               flags & (TF_FINAL | TF_PRIORITY), NULL, priority, NULL, b, 2);
        s += cnt;
    }
    if (group)
        GOMP_taskgroup_end();
}

SHIM_EXPORT void GOMP_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                               long arg_size, long arg_align, unsigned flags,
                               unsigned long num_tasks, int priority, long start, long end,
                               long step)
{
    taskloop(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority,
             (uint64_t)start, (uint64_t)end, (uint64_t)step, 0);
}

SHIM_EXPORT void GOMP_taskloop_ull(void (*fn)(void *), void *data,
                                   void (*cpyfn)(void *, void *), long arg_size,
                                   long arg_align, unsigned flags, unsigned long num_tasks,
                                   int priority, unsigned long long start,
                                   unsigned long long end, unsigned long long step)
{
    taskloop(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end,
             step, 1);
}

/* ---- statistics and start-up ---- */
