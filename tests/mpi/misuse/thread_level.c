/*
 * thread_level.c - the application initialises MPI itself, with less than
 * MPI_THREAD_MULTIPLE (MPI_Init_thread with MPI_THREAD_SERIALIZED), then
 * calls dsm_init: it must stop the job with a message naming the level it
 * needs and how to get it.  If the MPI library gives MULTIPLE anyway there
 * is nothing to refuse: the program says so and exits 77 (skip).
 */
#include <mpi.h>
#include <stdio.h>

#include "dsm.h"

int main(int argc, char **argv)
{
    int provided = 0;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    if (provided >= MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "thread_level: MPI gave MPI_THREAD_MULTIPLE when asked for "
                "SERIALIZED; nothing to test\n");
        MPI_Finalize();
        return 77;
    }
    dsm_init(&argc, &argv);
    fprintf(stderr, "thread_level: dsm_init accepted MPI thread level %d\n", provided);
    dsm_finalize();
    MPI_Finalize();
    return 0;
}
