/*
 * oom.c - dsm_malloc of more than is left.
 *
 * With a 64 MiB heap (set here), 48 MiB are allocated, then 32 MiB more:
 * the second allocation cannot fit and the library must stop the job with
 * "out of shared memory".  Returning NULL silently, or succeeding, is
 * reported by the program itself.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dsm.h"

#define MIB (1024 * 1024)

int main(int argc, char **argv)
{
    void *a, *b;

    setenv("DSM_HEAP_SIZE", "64M", 1);
    dsm_init(&argc, &argv);
    a = dsm_malloc(48 * MIB);
    if (a == NULL) {
        fprintf(stderr, "oom: the first allocation of 48 MiB of a 64 MiB "
                "heap failed\n");
        return 3;
    }
    b = dsm_malloc(32 * MIB);
    if (b == NULL) {
        fprintf(stderr, "oom: dsm_malloc returned NULL without stopping "
                "the job\n");
        return 3;
    }
    fprintf(stderr, "oom: 80 MiB were allocated from a 64 MiB heap\n");
    dsm_free(b);
    dsm_free(a);
    dsm_finalize();
    return 0;
}
