/*
 * dsm_omp.h - libdsm's broadcast for plain OpenMP programs.
 *
 * A program built with dsmcc runs on the OpenMP shim, which exports
 * dsm_bcast(3): called from sequential code, it gives every rank a valid
 * read-only copy of [addr, addr+len) with one tree broadcast, so that the
 * next parallel region reads that data without faulting page by page on its
 * home.  The declaration is weak, so the same source also links with gcc
 * -fopenmp and libgomp, where dsm_bcast is absent (NULL) and
 * dsm_omp_bcast() does nothing: one process holds all of its memory.
 *
 *   #include <dsm_omp.h>
 *   ...
 *   dsm_omp_bcast(a, n * sizeof *a);   // sequential code, after writing a
 *
 * Under the shim, rank 0 runs the sequential code, so rank 0 is the root.
 */
#ifndef DSM_OMP_H
#define DSM_OMP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma weak dsm_bcast
void dsm_bcast(void *addr, size_t len, int root);

/* 1 if the range was broadcast (running on the shim), 0 under libgomp. */
static inline int dsm_omp_bcast(void *addr, size_t len)
{
    if (!dsm_bcast)
        return 0;
    dsm_bcast(addr, len, 0);
    return 1;
}

#ifdef __cplusplus
}
#endif

#endif /* DSM_OMP_H */
