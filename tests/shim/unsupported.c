/*
 * unsupported.c - an entry point the shim does not implement
 * (omp_display_env) must stop the job with a message naming it, not crash
 * or go on.
 */
#include <omp.h>
#include <stdio.h>

int main(void)
{
    int n = 0;
#pragma omp parallel
#pragma omp atomic
    n++;
    printf("unsupported: team of %d, now calling omp_display_env\n", n);
    fflush(stdout);
    omp_display_env(0);
    printf("unsupported: FAIL: omp_display_env returned\n");
    return 0;
}
