/*
 * private_mem.c - a parallel region that follows a pointer to memory only
 * rank 0 has (its own mmap at a fixed address, which the shim leaves to the
 * kernel): the other ranks must die with the crash line
 * that says what is private under the shim, and the job must end non-zero.
 * With the argument "null", the last thread follows a null pointer instead
 * (plus 16): its rank must die with the crash line that says so, not the
 * one about private memory.
 */
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define PRIVATE_AT ((void *)0x7e0000000000ul)

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "null")) {
        volatile int *volatile nullp = NULL;
        int v = 0;
#pragma omp parallel reduction(+:v)
        if (omp_get_thread_num() == omp_get_num_threads() - 1)
            v += nullp[4];
        printf("private_mem: FAIL: the region went on (%d)\n", v);
        return 0;
    }
    char *p = mmap(PRIVATE_AT, 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    long sum = 0;

    if (p != PRIVATE_AT) {
        printf("private_mem: skip: no mapping at %p\n", PRIVATE_AT);
        return 77;
    }
    memset(p, 1, 4096);
    printf("private_mem: mapped %p on rank 0 only\n", (void *)p);
    fflush(stdout);
#pragma omp parallel reduction(+:sum)
    sum += p[omp_get_thread_num()];
    printf("private_mem: FAIL: the region went on (sum %ld)\n", sum);
    return 0;
}
