/*
 * blas_private.c - OpenBLAS's global variables stay private to each rank.
 *
 * Linked with OpenBLAS (libopenblas.so.0, by file name: no -dev package
 * needed; configure looks for it) so that the shim finds it among the
 * program's libraries at start-up.  OpenBLAS keeps a per-process thread
 * pool in its globals, with the C library's mutexes and condition
 * variables; the shim must not share them (omp-shim/libc/applibs.c: shared,
 * rank 0 hung at exit in its pthread_cond_destroy).  Every thread of a
 * parallel region checks, on its own rank, that OpenBLAS's
 * blas_server_avail is not shared memory (dsm_is_shared) and that
 * OpenBLAS runs one thread (omp-shim/libc/blas.c), then runs a BLAS call on
 * shared data.  Found with dlsym, so that the program builds without the
 * headers; exit 77 when configure found no OpenBLAS.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>

#define N 64

static double x[N], y[N];

int main(void)
{
    int (*is_shared)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT,
                                                                  "dsm_is_shared");
    void *server = dlsym(RTLD_DEFAULT, "blas_server_avail");
    int (*nthreads)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
    double (*ddot)(const int *, const double *, const int *, const double *, const int *) =
        (double (*)(const int *, const double *, const int *, const double *,
                    const int *))dlsym(RTLD_DEFAULT, "ddot_");
    int shared = 0, many = 0, wrong = 0;

    if (!server || !nthreads || !ddot) {
        printf("blas_private: the program is not linked with OpenBLAS: skip\n");
        return 77;
    }
    if (!is_shared) {
        fprintf(stderr, "blas_private: FAIL: no dsm_is_shared: not run under the shim\n");
        return 1;
    }
    for (int i = 0; i < N; i++) {
        x[i] = i;
        y[i] = 2;
    }
#pragma omp parallel reduction(+ : shared, many, wrong)
    {
        int n = N, one = 1;
        shared += is_shared(server) != 0;
        many += nthreads() != 1;
        wrong += ddot(&n, x, &one, y, &one) != (double)N * (N - 1);
    }
    printf("blas_private: OpenBLAS's globals shared in %d thread(s), OpenBLAS with more "
           "than one thread in %d, wrong dot products %d\n", shared, many, wrong);
    return shared || many || wrong;
}
