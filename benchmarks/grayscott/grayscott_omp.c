/*
 * grayscott_omp.c - Gray-Scott (gs.h) as a plain OpenMP program, the
 * notes' gs_omp2 (the directive on the outer loop): built as
 * grayscott_omp.gomp (libgomp) and grayscott_omp.dsm (the OpenMP shim on
 * libdsm, one process per rank).  The grid is initialised in a parallel
 * loop with the same static schedule as the update, so that on the DSM each
 * page's home moves to the rank that updates it (first touch, as the notes
 * recommend for NUMA); a step then fetches only the halo rows.
 *
 * Output: a human line, then JSON (bench "grayscott_omp"; metrics
 * omp_s (the steps), checksum).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "omp_common.h"
#include "gs.h"

static long opt_size = 324, opt_steps = 2000;

static const struct obench_opt opts[] = {
    { "size", OBENCH_LONG, &opt_size, "L: the grid is L x L (324)" },
    { "steps", OBENCH_LONG, &opt_steps, "time steps (2000)" },
    { NULL, 0, NULL, NULL }
};

int main(int argc, char **argv)
{
    obench_start(argc, argv, "grayscott_omp", "Gray-Scott reaction-diffusion (paper 002)",
                 opts);
    long L = opt_size;
    if (L < 3 || opt_steps < 0)
        obench_fatal("--size %ld --steps %ld: need L >= 3", L, opt_steps);
    obench_team_size();
    size_t n = (size_t)L * (size_t)L;
    double *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v);
    double *u2 = malloc(n * sizeof *u2), *v2 = malloc(n * sizeof *v2);
    if (!u || !v || !u2 || !v2)
        obench_fatal("out of memory for L = %ld", L);

#pragma omp parallel for schedule(static)
    for (long y = 0; y < L; y++)
        for (long x = 0; x < L; x++) {
            gs_init_cell(L, x, y, &u[y * L + x], &v[y * L + x]);
            u2[y * L + x] = u[y * L + x];
            v2[y * L + x] = v[y * L + x];
        }
    double t0 = omp_get_wtime();
    for (long s = 0; s < opt_steps; s++) {
#pragma omp parallel for schedule(static)
        for (long y = 1; y < L - 1; y++)
            gs_row(L, u + (y - 1) * L, u + y * L, u + (y + 1) * L,
                   v + (y - 1) * L, v + y * L, v + (y + 1) * L, u2 + y * L, v2 + y * L);
        double *t = u; u = u2; u2 = t;
        t = v; v = v2; v2 = t;
    }
    double t1 = omp_get_wtime();
    double sum = 0;
    for (long y = 0; y < L; y++)
        sum += gs_row_sum(L, y, u + y * L, v + y * L);
    printf("grayscott_omp: L %ld, %ld steps, %.4f s, checksum %.17g\n", L, opt_steps,
           t1 - t0, sum);
    obench_param("size", L);
    obench_param("steps", opt_steps);
    obench_result("omp_s", t1 - t0, "s");
    obench_result_exact("checksum", sum, "sum");
    obench_emit();
    return 0;
}
