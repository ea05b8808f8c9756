/*
 * exit_omp.c - OpenMP outside the run: a constructor (before start-up) and
 * a destructor and an atexit handler (after the end, on every rank) use
 * critical sections, named criticals, atomic blocks and omp locks, and
 * realloc a block the program allocated during the run, as C++ static
 * objects do.  A lock a constructor initialised is also used in a parallel
 * region, where it must exclude the threads of every rank.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 600

static omp_lock_t early;        /* initialised by the constructor */
static omp_nest_lock_t nested;
static long counter;
static long double ld;          /* "omp atomic" on long double: GOMP_atomic_start */
static char *kept;              /* allocated in the run, grown at exit */

static void touch_everything(const char *when)
{
#pragma omp critical
    counter++;
#pragma omp critical(exit_omp_name)
    counter++;
#pragma omp atomic
    ld += 1.0L;
    omp_set_lock(&early);
    counter++;
    omp_unset_lock(&early);
    omp_set_nest_lock(&nested);
    omp_set_nest_lock(&nested);
    counter++;
    omp_unset_nest_lock(&nested);
    omp_unset_nest_lock(&nested);
    if (!omp_test_lock(&early)) {
        fprintf(stderr, "exit_omp: FAIL: %s: omp_test_lock of a free lock failed\n", when);
        exit(3);
    }
    omp_unset_lock(&early);
}

__attribute__((constructor)) static void before(void)
{
    omp_init_lock(&early);
    omp_init_nest_lock(&nested);
    touch_everything("constructor");
}

static void at_exit(void)
{
    touch_everything("atexit handler");
}

__attribute__((destructor)) static void after(void)
{
    touch_everything("destructor");
    if (kept) {
        kept = realloc(kept, 1 << 20);
        if (!kept || strcmp(kept, "made in the run") != 0) {
            fprintf(stderr, "exit_omp: FAIL: realloc at exit lost the block\n");
            _exit(4);
        }
    }
    fprintf(stderr, "exit_omp: destructor done\n");
}

int main(void)
{
    long in_region = 0;

    atexit(at_exit);
    kept = malloc(64);
    strcpy(kept, "made in the run");
#pragma omp parallel for reduction(+:in_region)
    for (int i = 0; i < N; i++) {
        omp_set_lock(&early);
        long v = counter;       /* an unsynchronised read-modify-write... */
        counter = v + 1;        /* ...made safe by the lock */
        omp_unset_lock(&early);
        in_region++;
    }
    if (counter != N + 4) {
        printf("exit_omp: FAIL: counter %ld after the region, expected %d\n", counter, N + 4);
        return 1;
    }
    printf("exit_omp: counter %ld after the region\n", counter);
    return 0;
}
