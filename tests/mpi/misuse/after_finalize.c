/*
 * after_finalize.c - dsm_barrier after dsm_finalize.
 *
 * The library must stop with "after dsm_finalize" (MPI is already gone, so
 * by exit(1)) instead of using freed state or a finalized MPI.
 */
#include <stdio.h>

#include "dsm.h"

int main(int argc, char **argv)
{
    dsm_init(&argc, &argv);
    dsm_barrier();
    dsm_finalize();
    dsm_barrier();
    fprintf(stderr, "after_finalize: dsm_barrier returned after "
            "dsm_finalize\n");
    return 0;
}
