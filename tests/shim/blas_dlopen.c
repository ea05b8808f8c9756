/*
 * blas_dlopen.c - a program that loads OpenBLAS with dlopen, by its bare
 * file name, in sequential code, and calls it in a parallel region.
 *
 * A bare name makes the loader search, and the search maps
 * /etc/ld.so.cache while the library loads; a rank that loaded the
 * library by its full path instead put it 64 KiB higher than rank 0 and
 * stopped the job (omp-shim/libc/dlopen.c replays the same dlopen argument
 * now).  Every thread of the region checks, on its own rank, that the
 * library is where rank 0 loaded it (the address of ddot_ is the same on
 * every rank: rank 0 writes it to a shared variable), that OpenBLAS's
 * globals are private (not dsm_is_shared), that it runs one thread, and
 * that a dot product of shared arrays is right.  Not linked with OpenBLAS;
 * exit 77 when rank 0 cannot load it (not installed).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#define N 64

typedef double ddot_fn(const int *, const double *, const int *, const double *, const int *);

static double x[N], y[N];
static uintptr_t ddot_at_rank0;

int main(void)
{
    int (*is_shared)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT,
                                                                  "dsm_is_shared");
    int elsewhere = 0, shared = 0, many = 0, wrong = 0;

    if (!is_shared) {
        fprintf(stderr, "blas_dlopen: FAIL: no dsm_is_shared: not run under the shim\n");
        return 1;
    }
    if (dlsym(RTLD_DEFAULT, "ddot_")) {
        fprintf(stderr, "blas_dlopen: FAIL: OpenBLAS is loaded before the dlopen: the "
                "case tests nothing\n");
        return 1;
    }
    void *h = dlopen("libopenblas.so.0", RTLD_NOW);
    if (!h) {
        printf("blas_dlopen: no OpenBLAS to load (%s): skip\n", dlerror());
        return 77;
    }
    ddot_fn *ddot = (ddot_fn *)dlsym(h, "ddot_");
    void *server = dlsym(h, "blas_server_avail");
    int (*nthreads)(void) = (int (*)(void))dlsym(h, "openblas_get_num_threads");
    if (!ddot || !server || !nthreads) {
        fprintf(stderr, "blas_dlopen: FAIL: libopenblas.so.0 lacks ddot_, "
                "blas_server_avail or openblas_get_num_threads\n");
        return 1;
    }
    ddot_at_rank0 = (uintptr_t)ddot;
    for (int i = 0; i < N; i++) {
        x[i] = i;
        y[i] = 2;
    }
#pragma omp parallel reduction(+ : elsewhere, shared, many, wrong)
    {
        /* This rank's own loader's answer, not rank 0's pointers. */
        void *own = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
        ddot_fn *mine = own ? (ddot_fn *)dlsym(own, "ddot_") : NULL;
        int n = N, one = 1;
        elsewhere += (uintptr_t)mine != ddot_at_rank0;
        if (mine) {
            int (*own_nthreads)(void) =
                (int (*)(void))dlsym(own, "openblas_get_num_threads");
            shared += is_shared(dlsym(own, "blas_server_avail")) != 0;
            many += !own_nthreads || own_nthreads() != 1;
            wrong += mine(&n, x, &one, y, &one) != (double)N * (N - 1);
        }
        if (own)
            dlclose(own);
    }
    printf("blas_dlopen: OpenBLAS elsewhere than on rank 0 in %d thread(s), its globals "
           "shared in %d, more than one thread in %d, wrong dot products %d\n",
           elsewhere, shared, many, wrong);
    return elsewhere || shared || many || wrong;
}
