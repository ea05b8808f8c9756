/*
 * map_count_limit.c - running out of memory map entries gives the clear
 * message, not a bare ENOMEM.
 *
 * Alternating protections on many pages splits the application view into
 * more map entries than vm.max_map_count allows; libdsm must stop the job
 * with a message naming the limit and the remedies.  The runner checks the
 * message and the non-zero exit.
 */
#include <stdio.h>
#include <sys/mman.h>

#include "dsm_internal.h"

int main(int argc, char **argv)
{
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    long limit = 65530;
    if (f) {
        if (fscanf(f, "%ld", &limit) != 1)
            limit = 65530;
        fclose(f);
    }
    dsm_init(&argc, &argv);
    size_t need = (size_t)limit * 2 + 16;
    if (need > dsm__g.npages) {
        printf("map_count_limit: heap has %zu pages, need %zu: skipped\n",
               dsm__g.npages, need);
        dsm_finalize();
        return 77;
    }
    for (size_t p = 0; p < need; p += 2)
        dsm__vm_protect(p, 1, PROT_READ);
    printf("map_count_limit: %zu mprotect calls succeeded: limit not reached\n", need / 2);
    dsm_finalize();
    return 1;
}
