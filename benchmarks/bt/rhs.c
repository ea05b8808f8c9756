/*
 * rhs.c - BT's right-hand side (NPB's compute_rhs): the explicit part of a
 * time step, dt times the discrete operator (convective fluxes, viscous
 * terms, fourth-order dissipation) applied to the current solution, plus
 * the forcing, at every inner point.
 *
 * Called by every thread of the team.  Two loops over the planes k with
 * the same static schedule as the line solves of x and y:
 *   1. every plane, boundary included: the derived fields (1/density, the
 *      velocities, the kinetic energy) of the plane;
 *      -- the loop's barrier: the z terms of plane k read planes k-1, k+1;
 *   2. the inner planes: forcing, then the x, y and z terms, then times dt,
 *      each point's terms added in NPB's order (x fluxes, x dissipation, y
 *      fluxes, ..., z dissipation), so that the sums round as NPB's do.
 * Loop 2 has no barrier (nowait): bt_x_solve() and bt_y_solve() that follow
 * it take the same planes with the same schedule over the same range, so a
 * thread only reads the right-hand side it wrote itself (OpenMP gives the
 * iterations of two static loops with the same range to the same threads).
 * Doing the z dissipation plane by plane here (NPB shares it out by rows,
 * with a barrier before and after) is what makes that possible: under the
 * DSM one barrier less per step and no plane written by two ranks.
 */
#include "bt.h"

/* The x, y or z terms (direction index a = 1, 2, 3) at one point: r is
 * the point's right-hand side, u its solution, and the other arguments
 * the point's derived fields; s is the distance, in points, to the next
 * point along the direction.  Always inlined, so that a is a constant and
 * the tests on it disappear. */
static inline __attribute__((always_inline)) void
flux(double *r, const double *u, long s, int a, const struct bt_dir *d,
     const double *sq, const double *qs, const double *rho, const double *vel[3])
{
    const double c1 = bt_k.c1, c2 = bt_k.c2;
    const double *up = u + 5 * s, *um = u - 5 * s;
    const double *va = vel[a - 1];
    const double vijk = va[0], vp1 = va[s], vm1 = va[-s];
    int m;

    r[0] = r[0] + d->dt1[0] * (up[0] - 2.0 * u[0] + um[0]) - d->t2 * (up[a] - um[a]);
    for (m = 1; m < 4; m++) {
        const double *vm = vel[m - 1];

        if (m == a)
            r[m] = r[m] + d->dt1[m] * (up[m] - 2.0 * u[m] + um[m]) +
                d->con[1] * bt_k.con43 * (vp1 - 2.0 * vijk + vm1) -
                d->t2 * (up[m] * vp1 - um[m] * vm1 + (up[4] - sq[s] - um[4] + sq[-s]) * c2);
        else
            r[m] = r[m] + d->dt1[m] * (up[m] - 2.0 * u[m] + um[m]) +
                d->con[1] * (vm[s] - 2.0 * vm[0] + vm[-s]) -
                d->t2 * (up[m] * vp1 - um[m] * vm1);
    }
    r[4] = r[4] + d->dt1[4] * (up[4] - 2.0 * u[4] + um[4]) +
        d->con[2] * (qs[s] - 2.0 * qs[0] + qs[-s]) +
        d->con[3] * (vp1 * vp1 - 2.0 * vijk * vijk + vm1 * vm1) +
        d->con[4] * (up[4] * rho[s] - 2.0 * u[4] * rho[0] + um[4] * rho[-s]) -
        d->t2 * ((c1 * up[4] - c2 * sq[s]) * vp1 - (c1 * um[4] - c2 * sq[-s]) * vm1);
}

/* The fourth-order dissipation at point p of a line of n points (one-sided
 * near the ends, as NPB); s5 is the distance in doubles between points. */
static inline void diss(double *r, const double *u, long s5, long p, long n)
{
    const double dssp = bt_k.dssp;
    int m;

    for (m = 0; m < 5; m++) {
        const double *c = u + m;
        double v;

        if (p == 1)
            v = 5.0 * c[0] - 4.0 * c[s5] + c[2 * s5];
        else if (p == 2)
            v = -4.0 * c[-s5] + 6.0 * c[0] - 4.0 * c[s5] + c[2 * s5];
        else if (p == n - 3)
            v = c[-2 * s5] - 4.0 * c[-s5] + 6.0 * c[0] - 4.0 * c[s5];
        else if (p == n - 2)
            v = c[-2 * s5] - 4.0 * c[-s5] + 5.0 * c[0];
        else
            v = c[-2 * s5] - 4.0 * c[-s5] + 6.0 * c[0] - 4.0 * c[s5] + c[2 * s5];
        r[m] = r[m] - dssp * v;
    }
}

void bt_compute_rhs(void)
{
    const long nx = bt_grid.n[0], ny = bt_grid.n[1], nz = bt_grid.n[2];
    const long ip = bt_grid.ip, plane = bt_grid.jp * bt_grid.ip;
    const struct bt_dir *dx = &bt_k.dir[0], *dy = &bt_k.dir[1], *dz = &bt_k.dir[2];
    double *const u = bt_grid.u, *const rhs = bt_grid.rhs;
    const double *const vel_base[3] = { bt_grid.us, bt_grid.vs, bt_grid.ws };
    long k, j, i, m;

#pragma omp for schedule(static)
    for (k = 0; k < nz; k++)
        for (j = 0; j < ny; j++)
            for (i = 0; i < nx; i++) {
                const long p = bt_at(k, j, i);
                const double *up = u + 5 * p;
                const double rho_inv = 1.0 / up[0];

                bt_grid.rho_i[p] = rho_inv;
                bt_grid.us[p] = up[1] * rho_inv;
                bt_grid.vs[p] = up[2] * rho_inv;
                bt_grid.ws[p] = up[3] * rho_inv;
                bt_grid.square[p] = 0.5 * (up[1] * up[1] + up[2] * up[2] + up[3] * up[3]) * rho_inv;
                bt_grid.qs[p] = bt_grid.square[p] * rho_inv;
            }

#pragma omp for schedule(static) nowait
    for (k = 1; k < nz - 1; k++) {
        for (j = 1; j < ny - 1; j++)
            for (i = 1; i < nx - 1; i++)
                for (m = 0; m < 5; m++)
                    rhs[5 * bt_at(k, j, i) + m] = bt_grid.forcing[5 * bt_at(k, j, i) + m];

#define FLUX(s, a, d)                                                           \
        do {                                                                    \
            const long p_ = bt_at(k, j, i);                                     \
            const double *v_[3] = { vel_base[0] + p_, vel_base[1] + p_,         \
                                    vel_base[2] + p_ };                         \
            flux(rhs + 5 * p_, u + 5 * p_, (s), (a), (d), bt_grid.square + p_,  \
                 bt_grid.qs + p_, bt_grid.rho_i + p_, v_);                      \
        } while (0)

        for (j = 1; j < ny - 1; j++) {
            for (i = 1; i < nx - 1; i++)
                FLUX(1, 1, dx);
            for (i = 1; i < nx - 1; i++)
                diss(rhs + 5 * bt_at(k, j, i), u + 5 * bt_at(k, j, i), 5, i, nx);
        }
        for (j = 1; j < ny - 1; j++)
            for (i = 1; i < nx - 1; i++)
                FLUX(ip, 2, dy);
        for (j = 1; j < ny - 1; j++)
            for (i = 1; i < nx - 1; i++)
                diss(rhs + 5 * bt_at(k, j, i), u + 5 * bt_at(k, j, i), 5 * ip, j, ny);
        for (j = 1; j < ny - 1; j++)
            for (i = 1; i < nx - 1; i++)
                FLUX(plane, 3, dz);
        for (j = 1; j < ny - 1; j++)
            for (i = 1; i < nx - 1; i++)
                diss(rhs + 5 * bt_at(k, j, i), u + 5 * bt_at(k, j, i), 5 * plane, k, nz);
#undef FLUX

        for (j = 1; j < ny - 1; j++)
            for (i = 1; i < nx - 1; i++)
                for (m = 0; m < 5; m++)
                    rhs[5 * bt_at(k, j, i) + m] *= bt_k.dt;
    }
}
