/*
 * dlopen.c - dlopen under the shim where it cannot be repeated on every
 * rank, or should not be (run-shim-test.sh.in, case "dlopen").
 *
 *   dlopen call PLUGIN    loads PLUGIN (tests/omp/libdlplugin.so) in
 *                         sequential code and runs its parallel loop: fine
 *                         by default, a crash on another rank with
 *                         OMPSHIM_DLOPEN=private;
 *   dlopen region LIB     loads LIB inside a parallel region, in the last
 *                         thread: loaded on that rank only, with a warning;
 *   dlopen big LIB        loads LIB, whose globals are larger than the room
 *                         the shim keeps for them: the job stops, saying so.
 */
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

static long out[1000];

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: dlopen call|region|big LIBRARY\n");
        return 2;
    }
    if (!strcmp(argv[1], "region")) {
        int ok = 1;
#pragma omp parallel
        if (omp_get_thread_num() == omp_get_num_threads() - 1) {
            void *h = dlopen(argv[2], RTLD_NOW);
            if (!h) {
                fprintf(stderr, "dlopen: FAIL: %s\n", dlerror());
                ok = 0;
            }
        }
        printf("dlopen: loaded in a region: %s\n", ok ? "yes" : "no");
        return !ok;
    }
    void *h = dlopen(argv[2], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: FAIL: %s\n", dlerror());
        return 1;
    }
    if (!strcmp(argv[1], "call")) {
        void (*set)(long, long) = (void (*)(long, long))dlsym(h, "plugin_set");
        void (*fill)(long *, long) = (void (*)(long *, long))dlsym(h, "plugin_fill");
        if (!set || !fill) {
            fprintf(stderr, "dlopen: FAIL: %s\n", dlerror());
            return 1;
        }
        set(2, 5);
        fill(out, 1000);
        printf("dlopen: out[999] = %ld\n", out[999]);
    }
    printf("dlopen: done\n");
    return 0;
}
