/*
 * taskloop.c - taskloop under the shim.  "plain": without a reduction
 * clause every iteration runs once (a long loop with grainsize, an
 * unsigned long long one with num_tasks).  "reduction", "reduction_ull":
 * taskloop reduction(+) over long and unsigned long long loops, and over an
 * empty loop (the variable keeps its value).  "for_task_reduction": a
 * worksharing loop with reduction(task, ...), which the shim does not
 * implement: the job stops with the message that names the construct,
 * instead of dying of SIGSEGV on the reduction's descriptor.
 */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#define N 1000
static long a[N];
/* Not a constant: with constant bounds GCC gives an unsigned long long loop
 * to GOMP_taskloop, as a long one. */
static volatile unsigned long long n_ull = N;

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "plain";
    long s = 0;
    int team = 0;

    if (!strcmp(mode, "plain")) {
#pragma omp parallel
#pragma omp single
        {
            team = omp_get_num_threads();
#pragma omp taskloop grainsize(7)
            for (long i = 0; i < N; i++)
                a[i] += 2 * i;
#pragma omp taskloop num_tasks(5)
            for (unsigned long long u = 0; u < n_ull; u += 2)
                a[u] += 1;
        }
        for (long i = 0; i < N; i++)
            s += a[i];
        printf("taskloop: team of %d, sum %ld\n", team, s);
        return 0;
    }
    printf("taskloop: %s\n", mode);
    fflush(stdout);
    if (!strcmp(mode, "reduction")) {
        long empty = 7;
#pragma omp parallel
#pragma omp single
        {
#pragma omp taskloop reduction(+:s) grainsize(9)
            for (long i = 0; i < N; i++)
                s += i;
#pragma omp taskloop reduction(+:empty)
            for (long i = 0; i < n_ull - N; i++)
                empty += 1000;
        }
        printf("taskloop: reduction sum %ld, empty loop %ld\n", s, empty);
    } else if (!strcmp(mode, "reduction_ull")) {
#pragma omp parallel
#pragma omp single
#pragma omp taskloop reduction(+:s)
        for (unsigned long long u = 0; u < n_ull; u++)
            s += (long)u;
        printf("taskloop: reduction_ull sum %ld\n", s);
    } else {
        /* A worksharing loop with the task modifier: the shim stops on it. */
#pragma omp parallel
#pragma omp for reduction(task, +:s)
        for (long i = 0; i < N; i++) {
#pragma omp task in_reduction(+:s)
            s += i;
        }
        printf("taskloop: FAIL: the reduction returned, sum %ld\n", s);
    }
    return 0;
}
