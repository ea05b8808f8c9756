/*
 * bcast_misuse.c - wrong calls of dsm_bcast, one per argument:
 *   mismatch    rank r broadcasts r+1 pages: the ranks disagree;
 *   outside     the last rank broadcasts a buffer on its stack;
 *   root        every rank names root = the node count (no such node);
 *   freed       every rank broadcasts memory it freed;
 *   collective  rank 0 calls dsm_bcast while the others call dsm_barrier.
 * Each must stop the job with its message (check-misuse.sh), never hang.
 */
#include <stdio.h>
#include <string.h>

#include "dsm.h"

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    size_t ps;
    char local[64];
    int me, n;

    dsm_init(&argc, &argv);
    me = dsm_node_id();
    n = dsm_node_count();
    ps = dsm_page_size();
    char *a = dsm_malloc(4 * ps);
    if (strcmp(what, "mismatch") == 0) {
        dsm_bcast(a, (size_t)(me + 1) * ps, 0);
    } else if (strcmp(what, "outside") == 0) {
        dsm_bcast(me == n - 1 ? (void *)local : (void *)a, sizeof local, 0);
    } else if (strcmp(what, "root") == 0) {
        dsm_bcast(a, ps, n);
    } else if (strcmp(what, "freed") == 0) {
        dsm_free(a);
        dsm_bcast(a, ps, 0);
    } else if (strcmp(what, "collective") == 0) {
        if (me == 0)
            dsm_bcast(a, ps, 0);
        else
            dsm_barrier();
    } else {
        fprintf(stderr, "usage: bcast_misuse mismatch|outside|root|freed|collective\n");
        return 2;
    }
    fprintf(stderr, "bcast_misuse[rank %d]: %s was accepted\n", me, what);
    dsm_finalize();
    return 0;
}
