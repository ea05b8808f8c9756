/*
 * free_foreign.c - dsm_free of a pointer that dsm_malloc did not return.
 *
 * The last rank passes the address of one of its stack variables to the
 * collective dsm_free while the other ranks free a real allocation.  The
 * library must stop the whole job with "is not a pointer returned by
 * dsm_malloc" from that rank, not free something else or wait forever.
 */
#include <stdio.h>

#include "dsm.h"

int main(int argc, char **argv)
{
    int local = 0;
    int *p;

    dsm_init(&argc, &argv);
    p = dsm_malloc(4096);
    if (dsm_node_id() == dsm_node_count() - 1)
        dsm_free(&local);
    else
        dsm_free(p);
    dsm_barrier();
    dsm_finalize();
    return local;
}
