/*
 * gs.h - the Gray-Scott reaction-diffusion model of paper 002 ("Day 6:
 * hybrid parallelism"), shared by its three forms: flat MPI
 * (grayscott_mpi.c), hybrid MPI + OpenMP (grayscott_hybrid.c) and plain
 * OpenMP (grayscott_omp.c, run under libgomp and on the DSM).
 *
 *   du/dt = Du lap(u) + u^2 v - (F + k) u
 *   dv/dt = Dv lap(v) - u^2 v + F (1 - v)
 *
 * on an L x L grid (the notes use L = 324 = 9 x 36 for the hybrid runs),
 * explicit Euler with step dt, 5-point Laplacian with unit spacing; the
 * outer ring of cells keeps its initial values.  The notes do not print the
 * constants; these are common Gray-Scott values.  Each new cell depends
 * only on the old grid, by the same expression in every form, so all three
 * forms give the same grid bit for bit, whatever the decomposition; the
 * checksum is summed over the whole grid in row-major order.
 */
#ifndef GS_H
#define GS_H

#define GS_F  0.04
#define GS_K  0.06075
#define GS_DT 0.2
#define GS_DU 0.05
#define GS_DV 0.1

/* Initial value of cell (x, y): u = 1, v = 0, except a square of side L/8
 * around the centre seeded with u = 0.5, v = 0.25 (plus a small
 * deterministic ripple, so that patterns form). */
static inline void gs_init_cell(long L, long x, long y, double *u, double *v)
{
    long c = L / 2, d = L / 16 + 1;
    if (x >= c - d && x < c + d && y >= c - d && y < c + d) {
        *u = 0.5;
        *v = 0.25 + 0.01 * (double)((x * 7 + y * 13) % 5);
    } else {
        *u = 1.0;
        *v = 0.0;
    }
}

/* New values of row y, cells 1..L-2, from the old rows y-1, y, y+1 (each a
 * pointer to the row's cell 0). */
static inline void gs_row(long L, const double *um, const double *u0, const double *up,
                          const double *vm, const double *v0, const double *vp,
                          double *un, double *vn)
{
    for (long x = 1; x < L - 1; x++) {
        double uu = u0[x], vv = v0[x];
        double lu = um[x] + up[x] + u0[x - 1] + u0[x + 1] - 4 * uu;
        double lv = vm[x] + vp[x] + v0[x - 1] + v0[x + 1] - 4 * vv;
        double uvv = uu * uu * vv;
        un[x] = uu + GS_DT * (GS_DU * lu + uvv - (GS_F + GS_K) * uu);
        vn[x] = vv + GS_DT * (GS_DV * lv - uvv + GS_F * (1 - vv));
    }
    un[0] = u0[0]; un[L - 1] = u0[L - 1];
    vn[0] = v0[0]; vn[L - 1] = v0[L - 1];
}

/* Checksum of a row: position-weighted, so that a moved value shows. */
static inline double gs_row_sum(long L, long y, const double *u, const double *v)
{
    double s = 0;
    for (long x = 0; x < L; x++)
        s += u[x] * (double)((x + y) % 7 + 1) + v[x] * (double)((x * 3 + y) % 11 + 1);
    return s;
}

#endif /* GS_H */
