/*
 * size_mismatch.c - ranks pass different sizes to the collective dsm_malloc.
 *
 * Rank r asks for r+1 pages.  The ranks would get overlapping or differently
 * sized allocations; the library must notice and stop the job with "ranks
 * disagree".
 */
#include <stdio.h>

#include "dsm.h"

int main(int argc, char **argv)
{
    void *p;

    dsm_init(&argc, &argv);
    p = dsm_malloc((size_t)(dsm_node_id() + 1) * dsm_page_size());
    fprintf(stderr, "size_mismatch[rank %d]: dsm_malloc of %d pages "
            "returned %p\n", dsm_node_id(), dsm_node_id() + 1, p);
    dsm_free(p);
    dsm_finalize();
    return 0;
}
