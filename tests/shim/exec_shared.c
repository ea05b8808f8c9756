/*
 * exec_shared.c - code run from shared memory where the shim does not make
 * it executable: a GCC nested function's trampoline on a stack (in the
 * DSM), in a program linked with -z noexecstack, which so says it needs no
 * executable stack.  The access can never succeed (under libgomp the
 * program dies of SIGSEGV); the job must stop with libdsm's message about
 * an access that keeps faulting, not retry it forever.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int bad = 0;
#pragma omp parallel reduction(+:bad)
    {
        int dir = omp_get_thread_num() % 2 ? -1 : 1, a[16];
        int cmp(const void *x, const void *y)
        {
            int u = *(const int *)x, v = *(const int *)y;
            return dir * ((u > v) - (u < v));
        }
        for (int i = 0; i < 16; i++)
            a[i] = (i * 7) % 16;
        qsort(a, 16, sizeof a[0], cmp);
        bad += a[0] != (dir > 0 ? 0 : 15);
    }
    printf("exec_shared: FAIL: the trampolines ran (%d wrong)\n", bad);
    return 1;
}
