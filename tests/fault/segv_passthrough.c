/*
 * segv_passthrough.c - a real segfault is not swallowed by libdsm.
 *
 * Mode "null": a read through a null pointer plus a small offset (64).
 * Mode "wild": a read of an unmapped address far from null, outside the region.
 * Mode "unallocated": a read of a region page that no allocation covers.
 * Mode "freed": a read of memory after dsm_free.
 * Each must kill the process with SIGSEGV, as it would without libdsm; the
 * runner checks the exit status.
 */
#include <stdio.h>
#include <string.h>

#include <dsm.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "null";
    volatile int *p = NULL;

    dsm_init(&argc, &argv);
    int *a = dsm_malloc(4 * dsm_page_size());
    a[0] = 1;
    if (!strcmp(mode, "null")) {
        p = (volatile int *)(uintptr_t)64;
    } else if (!strcmp(mode, "wild")) {
        p = (volatile int *)(uintptr_t)0x7e0000000040;   /* unmapped, not the region */
    } else if (!strcmp(mode, "unallocated")) {
        p = (volatile int *)((char *)a + 64 * dsm_page_size());
    } else {
        dsm_free(a);
        p = a;
    }
    fprintf(stderr, "segv_passthrough: touching %p (%s)\n", (void *)p, mode);
    return *p + 2;   /* must not get here */
}
