/*
 * exit_status.c - process roles: rank 0 runs main, prints outside parallel
 * regions (each line must appear once), and ends with an exit status that
 * every rank must end with (dsmrun's exit status).  With an argument N the
 * program calls exit(N) from a nested function instead of returning 3.
 * Thread 1 alone writes a global next to the executable's copy of stdout,
 * so that the page moves to rank 1 and is invalid elsewhere at the end,
 * when the C library and libdsm still read stdout.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int team;
static volatile int last;

static void leave(int code)
{
    printf("exit_status: calling exit(%d)\n", code);
    exit(code);
}

int main(int argc, char **argv)
{
    printf("exit_status: before any region\n");
#pragma omp parallel
    {
#pragma omp single
        team = omp_get_num_threads();
        if (omp_get_thread_num() == 1)
            last = 1;
    }
#pragma omp parallel
    {
        if (omp_get_thread_num() == 1)
            last = 2;
    }
    fflush(stdout);
    printf("exit_status: team of %d\n", team);
    if (argc > 1)
        leave(atoi(argv[1]));
    printf("exit_status: returning 3\n");
    return 3;
}
