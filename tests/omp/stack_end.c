/*
 * stack_end.c - the initial thread's stack, as the C library reports it.
 *
 * Programs that measure their own stack depth (R: "C stack usage is too
 * close to the limit") take the top of the initial thread's stack from
 * __libc_stack_end.  Under the shim main runs on a stack in shared memory,
 * so that variable must point there: main's local variables lie below it,
 * within the stack's size, and so do those of a function called from a
 * parallel region by the initial thread.  R then takes the top of the
 * stack as the end of the mapping that holds __libc_stack_end (in
 * /proc/self/maps): that end must be near it too, not at the top of the
 * next thread's stack.
 */
#define OT_NAME "stack_end"
#include "omptest.h"

#include <stdint.h>
#include <stdio.h>

extern void *__libc_stack_end;

#define LIMIT ((uintptr_t)8 << 20)      /* the default stack size: 8 MiB */

static int within(const void *local)
{
    uintptr_t top = (uintptr_t)__libc_stack_end, p = (uintptr_t)local;
    return p < top && top - p < LIMIT;
}

/* The end of the mapping that holds a, or 0. */
static uintptr_t mapping_end(uintptr_t a)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    uintptr_t end = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= a && a < hi)
            end = hi;
    }
    fclose(f);
    return end;
}

static int deeper(int depth)
{
    volatile char pad[1024];
    pad[0] = (char)depth;
    if (depth > 0)
        return deeper(depth - 1) + pad[0] - pad[0];
    return within((const void *)pad);
}

int main(void)
{
    int here = 0, in_region = 0;

    OT_CHECK(within(&here), "main's local at %p, __libc_stack_end %p: not within %lu bytes "
             "below it", (void *)&here, __libc_stack_end, (unsigned long)LIMIT);
    OT_CHECK(deeper(100), "100 KiB deeper, a local is not within the stack");
#pragma omp parallel
    {
#pragma omp master
        in_region = deeper(10);
    }
    OT_CHECK(in_region, "the initial thread's local in a region is not within the stack");
    /* Above __libc_stack_end a process's own stack has only its arguments
     * and environment, well under 1 MiB here. */
    uintptr_t end = mapping_end((uintptr_t)__libc_stack_end);
    OT_CHECK(end && end - (uintptr_t)__libc_stack_end < ((uintptr_t)1 << 20),
             "the mapping that holds __libc_stack_end %p ends at %#lx, %lu bytes above it",
             __libc_stack_end, (unsigned long)end,
             (unsigned long)(end - (uintptr_t)__libc_stack_end));
    ot_print("main's stack ends above its locals: %s", within(&here) ? "yes" : "no");
    return ot_finish();
}
