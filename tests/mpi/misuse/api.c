/*
 * api.c - misuses of the libdsm API that must stop the job with a clear
 * message instead of a hang or a wrong answer (docs/ERRORS.md).
 *
 * Usage: api MODE, with MODE one of
 *   past_end            the last rank writes one page past the end of a
 *                       one-page allocation (no allocation follows it)
 *   collective_mismatch rank 0 calls dsm_barrier, the others dsm_malloc
 *   finalize_mismatch   the last rank calls dsm_finalize, the others
 *                       dsm_barrier
 *   lock_range          dsm_lock_acquire(dsm_lock_count())
 *   release_unheld      the last rank releases lock 3 without holding it
 *   bad_home_node       dsm_malloc_home(..., DSM_HOME_NODE, nodes)
 *   bad_home_policy     dsm_malloc_home(..., 77, 0)
 *   free_twice          dsm_free of the same pointer twice
 *   init_twice          dsm_init called again
 *   disagree_env        rank 1 sets DSM_PAGE_SIZE=8192 before dsm_init, the
 *                       others keep the default
 *   disagree_comm       rank 1 sets DSM_COMM to another transport than the
 *                       others' (direct, or queue where theirs is direct)
 *   lock_deadlock       rank 0 holds lock 1 and waits in dsm_barrier, the
 *                       others wait for lock 1 (run with DSM_SYNC_TIMEOUT)
 * check-misuse.sh runs it and checks the message; reaching the end is a
 * failure (exit 0 would say the misuse went unnoticed, so the program
 * exits 0 only there and the checker treats 0 as a failure).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsm.h"

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    const char *pmi_rank = getenv("PMI_RANK");
    if (!strcmp(mode, "disagree_env") && pmi_rank && !strcmp(pmi_rank, "1"))
        setenv("DSM_PAGE_SIZE", "8192", 1);
    if (!strcmp(mode, "disagree_comm") && pmi_rank && !strcmp(pmi_rank, "1")) {
        const char *comm = getenv("DSM_COMM");
        setenv("DSM_COMM", comm && !strcmp(comm, "direct") ? "queue" : "direct", 1);
    }
    dsm_init(&argc, &argv);
    int me = dsm_node_id(), n = dsm_node_count(), last = n - 1;
    size_t ps = dsm_page_size();

    if (!strcmp(mode, "past_end")) {
        char *a = dsm_malloc(100);
        dsm_barrier();
        if (me == last)
            a[ps] = 1;        /* the page after the allocation's only page */
        dsm_barrier();
    } else if (!strcmp(mode, "collective_mismatch")) {
        if (me == 0)
            dsm_barrier();
        else
            dsm_malloc(ps);
    } else if (!strcmp(mode, "finalize_mismatch")) {
        if (me == last)
            dsm_finalize();
        else
            dsm_barrier();
    } else if (!strcmp(mode, "lock_range")) {
        dsm_lock_acquire(dsm_lock_count());
    } else if (!strcmp(mode, "release_unheld")) {
        if (me == last)
            dsm_lock_release(3);
        dsm_barrier();
    } else if (!strcmp(mode, "bad_home_node")) {
        dsm_malloc_home(ps, DSM_HOME_NODE, n);
    } else if (!strcmp(mode, "bad_home_policy")) {
        dsm_malloc_home(ps, (enum dsm_home_policy)77, 0);
    } else if (!strcmp(mode, "free_twice")) {
        void *a = dsm_malloc(ps);
        dsm_free(a);
        dsm_free(a);
    } else if (!strcmp(mode, "init_twice")) {
        dsm_init(&argc, &argv);
    } else if (!strcmp(mode, "disagree_env") || !strcmp(mode, "disagree_comm")) {
        dsm_barrier();
    } else if (!strcmp(mode, "lock_deadlock")) {
        if (me == 0)
            dsm_lock_acquire(1);
        dsm_barrier();
        if (me == 0) {
            dsm_barrier();
        } else {
            dsm_lock_acquire(1);
            dsm_barrier();
        }
    } else {
        fprintf(stderr, "api: unknown mode '%s'\n", mode);
        return 99;
    }
    fprintf(stderr, "api[rank %d]: the misuse '%s' went unnoticed\n", me, mode);
    dsm_finalize();
    return 0;
}
