/*
 * before_init.c - the API called before dsm_init.
 *
 * argv[1] names the call: "barrier" (dsm_barrier), "malloc" (dsm_malloc)
 * or "lock" (dsm_lock_acquire).  The library must stop with "before
 * dsm_init", naming the call the program made (not a helper of libdsm's),
 * instead of touching state that does not exist yet.  If the call returns, the program exits 0 and
 * the checker reports the misuse as unnoticed.
 */
#include <stdio.h>
#include <string.h>

#include "dsm.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: before_init barrier|malloc|lock\n");
        return 2;
    }
    if (strcmp(argv[1], "barrier") == 0)
        dsm_barrier();
    else if (strcmp(argv[1], "malloc") == 0)
        dsm_malloc(4096);
    else if (strcmp(argv[1], "lock") == 0)
        dsm_lock_acquire(0);
    else {
        fprintf(stderr, "before_init: unknown call %s\n", argv[1]);
        return 2;
    }
    fprintf(stderr, "before_init: the %s call returned before dsm_init\n", argv[1]);
    return 0;
}
