/*
 * inline_atomic.c - omp atomic increments of one shared int, for the race
 * checker.
 *
 * Every thread adds 1 to one global int 1,000 times with #pragma omp
 * atomic, in a parallel loop of 1,000 iterations per thread.  GCC compiles
 * the atomic to an inline "lock add" unless told -fno-inline-atomics (which
 * dsmcc adds, so that the shim can run it at the variable's home).  Built
 * three ways (see Makefile.inc): PROG.gomp and PROG.dsm are compared like
 * every test; PROG.plain, built with plain gcc -fopenmp and run under the
 * shim with DSM_CHECK=races, has an inline "lock add", which faults on a
 * page this rank may not write and then runs at the home
 * (omp-shim/libc/inline_atomics.c): the count must be right and the race
 * checker silent.  (Before that, it ran on each rank's own copy of the
 * page, and the count was wrong unless the ranks happened not to overlap.)
 */
#define OT_NAME "inline_atomic"
#include "omptest.h"

#define PER_THREAD 1000

static int count;

int main(void)
{
    int n = ot_team_size();
    long i;

#pragma omp parallel for schedule(static)
    for (i = 0; i < (long)PER_THREAD * n; i++) {
#pragma omp atomic
        count++;
    }
    ot_print("threads=%d", n);
    ot_print("count=%d", count);
    OT_CHECK(count == PER_THREAD * n, "count is %d, expected %d: updates "
             "were lost", count, PER_THREAD * n);
    return ot_finish();
}
