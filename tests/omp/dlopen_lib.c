/*
 * dlopen_lib.c - a plug-in loaded with dlopen, between parallel regions.
 *
 * Under the shim only rank 0 runs sequential code, so a dlopen there must
 * load the plug-in (libdlplugin.so, dlopen_plugin.c, and the library it
 * needs, libdldep.so) on every rank at the same address, or the other
 * ranks jump to nothing.  The plug-in's globals (set by its constructor
 * and by sequential calls) must read the same everywhere, and memory its
 * code allocates (its constructor too) must be shared.  A library of the
 * C runtime loaded the same way (libmvec) has nothing to share, and the
 * ranks must still agree on when the load is over.  Checked from the plug-in's own parallel
 * loops and from the program's regions through pointers into the
 * plug-in; then the same plug-in opened again, and dlclose.
 */
#define OT_NAME "dlopen_lib"
#include "omptest.h"

#include <dlfcn.h>

#define N 20000

static long out[N];

static void *sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "dlopen_lib: FAIL: dlsym(%s): %s\n", name, dlerror());
        exit(1);
    }
    return p;
}

int main(void)
{
    int n = ot_team_size();
    long seen[OT_MAX_THREADS] = { 0 };

    /* A region first: the other ranks are waiting for the next fork. */
#pragma omp parallel
    seen[omp_get_thread_num()] = 1;

    void *h = dlopen("libdlplugin.so", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen_lib: FAIL: dlopen: %s\n", dlerror());
        return 1;
    }
    void *mvec = dlopen("libmvec.so.1", RTLD_NOW);
    if (!mvec) {
        fprintf(stderr, "dlopen_lib: FAIL: dlopen(libmvec.so.1): %s\n", dlerror());
        return 1;
    }
    void (*set)(long, long) = (void (*)(long, long))sym(h, "plugin_set");
    void (*fill)(long *, long) = (void (*)(long *, long))sym(h, "plugin_fill");
    long *(*make)(long) = (long *(*)(long))sym(h, "plugin_make");
    long (*bsum)(void) = (long (*)(void))sym(h, "plugin_block_sum");
    long (*handoff)(long) = (long (*)(long))sym(h, "plugin_handoff");

    for (long round = 1; round <= 3; round++) {
        set(round, 100 * round);
        fill(out, N);
        long bad = 0;
        for (long i = 0; i < N; i++) {
            long k = i % 1000, want = (k * 3 + 1) * round + 100 * round + k * 5 + 2;
            if (out[i] != want && bad++ < 3)
                ot_error("round %ld: out[%ld] = %ld, expected %ld", round, i, out[i], want);
        }
        long s = 0;
        for (long i = 0; i < N; i++)
            s += out[i];
        ot_print("round %ld: sum of the plug-in's loop %ld", round, s);
    }

    long *b = make(N);
    if (!b) {
        fprintf(stderr, "dlopen_lib: FAIL: plugin_make returned NULL\n");
        return 1;
    }
    ot_print("block sum %ld", bsum());
    long got = handoff(4242);
    OT_CHECK(got == 4242, "plugin_handoff: the last thread read %ld, expected 4242", got);
    ot_print("handoff through a flag in the plug-in: %ld", got);
    /* The program's own region reads the plug-in's block and calls it. */
    long total = 0;
#pragma omp parallel reduction(+ : total)
    {
        int t = omp_get_thread_num();
        for (long i = t; i < N; i += omp_get_num_threads()) {
            OT_CHECK(b[i] == i % 97, "block[%ld] = %ld, expected %ld", i, b[i], i % 97);
            total += b[i];
        }
        seen[t] += 1;
    }
    ot_print("block read by the team: %ld", total);

    void *h2 = dlopen("libdlplugin.so", RTLD_NOW);
    OT_CHECK(h2 == h, "the second dlopen gave %p, the first %p", h2, h);
    set(5, 1);
    fill(out, N);
    ot_print("after the second dlopen: out[999] = %ld", out[999]);
    OT_CHECK(dlclose(h2) == 0, "dlclose: %s", dlerror());
    OT_CHECK(dlclose(h) == 0, "dlclose: %s", dlerror());

    long regions = 0;
    for (int t = 0; t < n; t++)
        regions += seen[t];
    ot_print("threads x regions: %ld", regions);
    return ot_finish();
}
