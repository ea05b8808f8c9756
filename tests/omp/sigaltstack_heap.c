/*
 * sigaltstack_heap.c - an alternate signal stack allocated with malloc.
 *
 * Programs that catch their own stack overflows (R, for one) give
 * sigaltstack a stack from malloc.  Under the shim malloc is shared memory,
 * where the kernel cannot write a signal frame before the page is valid,
 * and the alternate stack is where libdsm's page faults are handled: the
 * first fault would kill the process.  The initial thread and every thread
 * of a region install such a stack, read it back, and then read and write
 * shared arrays (page faults under the shim) in many regions.
 */
#define _GNU_SOURCE
#define OT_NAME "sigaltstack_heap"
#include "omptest.h"

#include <signal.h>

#define N 100000
#define STACK (64 * 1024)

static double a[N], b[N];

/* Install a malloc'd alternate stack; 1 if sigaltstack reports it back. */
static int install(void)
{
    stack_t ss, cur;
    ss.ss_sp = malloc(STACK);
    ss.ss_size = STACK;
    ss.ss_flags = 0;
    if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0 || sigaltstack(NULL, &cur) != 0)
        return 0;
    return cur.ss_sp == ss.ss_sp && cur.ss_size == STACK;
}

int main(void)
{
    int n = ot_team_size(), ok = install(), rounds = 20;
    long i, installed = 0;
    double sum = 0;

    OT_CHECK(ok, "the initial thread's alternate stack was not reported back");
    for (int r = 0; r < rounds; r++) {
#pragma omp parallel reduction(+:installed)
        {
            if (r == 0)
                installed += install();
#pragma omp for
            for (i = 0; i < N; i++)
                a[i] = b[i] + r + i % 7;
        }
        for (i = r; i < N; i += 997)
            b[i] = a[i] / 2;        /* faults on the initial thread */
    }
    OT_CHECK(installed == n, "%ld threads saw their alternate stack, expected %d", installed, n);
    for (i = 0; i < N; i++)
        sum += a[i] + b[i];
    ot_print("team of %d, %d rounds, sum %.1f", n, rounds, sum);
    return ot_finish();
}
