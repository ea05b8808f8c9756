/*
 * init_only.c - a correct program, run with a wrong environment.
 *
 * check-misuse.sh runs it with an unknown DSM_* variable or a bad value of
 * DSM_COMM or DSM_PAGE_SIZE: dsm_init must stop the job with a message that
 * names the variable.  If dsm_init accepts the environment, the program does
 * a little work and exits 0, which the checker reports as a misuse that went
 * unnoticed.
 */
#include <stdio.h>

#include "dsm.h"

int main(int argc, char **argv)
{
    int *p;

    if (dsm_init(&argc, &argv) != 0) {
        fprintf(stderr, "init_only: dsm_init returned an error code but "
                "did not stop the job\n");
        return 3;
    }
    p = dsm_malloc(sizeof *p);
    if (dsm_node_id() == 0)
        *p = 1;
    dsm_barrier();
    dsm_free(p);
    dsm_finalize();
    return 0;
}
