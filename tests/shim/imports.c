/*
 * imports.c - a name of the OpenMP ABI that libompshim does not export must
 * not fall through to another library.  Built with plain gcc -fopenmp,
 * twice: imports.plain (-DDIRECT) imports omp_x_not_in_shim from
 * libimports_x.so, so under the shim the job stops at start-up, before
 * main prints anything; imports_dl.plain loads libimports_plug.so, which
 * imports it, so the job stops at that dlopen.  Both also import a weak
 * omp_ name that nothing defines, which must not stop them.  Under libgomp
 * both run.
 */
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>

extern int omp_y_weak_nowhere(void) __attribute__((weak));
#ifdef DIRECT
int omp_x_not_in_shim(void);
#endif

int main(int argc, char **argv)
{
    int n = 0;
    printf("imports: main runs, weak name %s\n", omp_y_weak_nowhere ? "found" : "absent");
    fflush(stdout);
#pragma omp parallel reduction(+:n)
    n++;
#ifdef DIRECT
    (void)argc;
    (void)argv;
    printf("imports: team of %d, omp_x_not_in_shim() = %d\n", n, omp_x_not_in_shim());
#else
    if (argc < 2) {
        fprintf(stderr, "usage: imports_dl.plain LIBRARY\n");
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW);
    int (*plug)(void) = h ? (int (*)(void))dlsym(h, "imports_plug") : NULL;
    if (!plug) {
        fprintf(stderr, "imports: cannot load %s: %s\n", argv[1], dlerror());
        return 1;
    }
    printf("imports: team of %d, imports_plug() = %d\n", n, plug());
#endif
    return 0;
}
