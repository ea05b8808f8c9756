/*
 * setup.c - BT's constants, its exact solution, the initial field and the
 * forcing term (NPB's set_constants, exact_solution, initialize and
 * exact_rhs).
 *
 * bt_set_constants() runs on the initial thread before any parallel
 * region; bt_initialize() and bt_exact_rhs() are called by every thread of
 * a team and share their work with orphaned "omp for" loops.  Both give
 * each thread the planes k that the time step's k-loops give it (the same
 * static schedule over the same range), so that under the DSM the first
 * writer of a plane's pages is the rank that computes on them, and those
 * pages move their home there.
 *
 * The forcing is the residual of the discrete operator applied to the
 * exact solution, with the opposite sign: with it, the exact solution is a
 * steady state of the scheme up to the truncation error, which is what the
 * error norms of the verification measure.  Each point's terms are added in
 * NPB's order (x fluxes, x dissipation, y..., z...), so that the forcing is
 * NPB's to the rounding.
 */
#include "bt.h"

#include <math.h>
#include <string.h>

struct bt_grid bt_grid;
struct bt_consts bt_k;

/* The exact solution is a polynomial of degree 4 in each coordinate, one
 * per component: u_m = ce[m][0] + sum over the directions of a quartic
 * without constant term (NPB's coefficients). */
static const double ce_npb[5][13] = {
    { 2.0, 0.0, 0.0, 4.0, 5.0, 3.0, 0.5, 0.02, 0.01, 0.03, 0.5, 0.4, 0.3 },
    { 1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.01, 0.03, 0.02, 0.4, 0.3, 0.5 },
    { 2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.04, 0.03, 0.05, 0.3, 0.5, 0.4 },
    { 2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.03, 0.05, 0.04, 0.2, 0.1, 0.3 },
    { 5.0, 4.0, 3.0, 2.0, 0.1, 0.4, 0.3, 0.05, 0.04, 0.03, 0.1, 0.3, 0.2 },
};

void bt_set_constants(double dt, long nx, long ny, long nz)
{
    struct bt_consts *k = &bt_k;
    const long n[3] = { nx, ny, nz };
    /* second-order dissipation: 0.75 in x and y, 1.0 in z (NPB) */
    const double dcoef[3] = { 0.75, 0.75, 1.0 };
    int d, m;

    memcpy(k->ce, ce_npb, sizeof k->ce);
    k->c1 = 1.4;
    k->c2 = 0.4;
    k->c3 = 0.1;
    k->c4 = 1.0;
    k->c5 = 1.4;
    k->c1c2 = k->c1 * k->c2;
    k->c1c5 = k->c1 * k->c5;
    k->c3c4 = k->c3 * k->c4;
    k->c1345 = k->c1c5 * k->c3c4;
    k->conz1 = 1.0 - k->c1c5;
    k->con43 = 4.0 / 3.0;
    k->con16 = 1.0 / 6.0;
    k->dt = dt;
    /* 0.25 * the largest first dissipation coefficient of the directions */
    k->dssp = 0.25 * fmax(dcoef[0], fmax(dcoef[1], dcoef[2]));

    for (d = 0; d < 3; d++) {
        struct bt_dir *r = &k->dir[d];
        double c3c4t3;

        k->dnm1[d] = 1.0 / (double)(n[d] - 1);
        r->a = d + 1;
        r->t1 = 1.0 / (k->dnm1[d] * k->dnm1[d]);
        r->t2 = 1.0 / (2.0 * k->dnm1[d]);
        c3c4t3 = k->c3c4 * (1.0 / k->dnm1[d]);
        for (m = 0; m < 5; m++) {
            r->d[m] = dcoef[d];
            r->dt1[m] = r->d[m] * r->t1;
        }
        r->con[0] = c3c4t3 * k->con43 * (1.0 / k->dnm1[d]);
        r->con[1] = c3c4t3 * (1.0 / k->dnm1[d]);
        r->con[2] = c3c4t3 * k->conz1 * (1.0 / k->dnm1[d]);
        r->con[3] = c3c4t3 * k->con16 * (1.0 / k->dnm1[d]);
        r->con[4] = c3c4t3 * k->c1c5 * (1.0 / k->dnm1[d]);
        r->lt1 = dt * r->t1;
        r->lt2 = dt * r->t2;
    }
}

void bt_exact_solution(double xi, double eta, double zeta, double out[5])
{
    const double (*ce)[13] = bt_k.ce;
    int m;

    for (m = 0; m < 5; m++)
        out[m] = ce[m][0] +
            xi * (ce[m][1] + xi * (ce[m][4] + xi * (ce[m][7] + xi * ce[m][10]))) +
            eta * (ce[m][2] + eta * (ce[m][5] + eta * (ce[m][8] + eta * ce[m][11]))) +
            zeta * (ce[m][3] + zeta * (ce[m][6] + zeta * (ce[m][9] + zeta * ce[m][12])));
}

static void set_exact(long k, long j, long i, double xi, double eta, double zeta)
{
    bt_exact_solution(xi, eta, zeta, bt_grid.u + 5 * bt_at(k, j, i));
}

/* The initial field: inside, the transfinite (trilinear) interpolation of
 * the exact solution on the six faces; on the faces, the exact solution.
 * Plane by plane, with the faces written in NPB's order (x, then y, then
 * z faces), so that where faces meet the value is NPB's. */
void bt_initialize(void)
{
    const long nx = bt_grid.n[0], ny = bt_grid.n[1], nz = bt_grid.n[2];
    const double dx = bt_k.dnm1[0], dy = bt_k.dnm1[1], dz = bt_k.dnm1[2];
    long k, j, i;
    int m;

#pragma omp for schedule(static)
    for (k = 0; k < nz; k++) {
        double zeta = (double)k * dz;

        for (j = 0; j < ny; j++) {
            double eta = (double)j * dy;

            for (i = 0; i < nx; i++) {
                double xi = (double)i * dx, face[3][2][5];
                double *u = bt_grid.u + 5 * bt_at(k, j, i);

                bt_exact_solution(0.0, eta, zeta, face[0][0]);
                bt_exact_solution(1.0, eta, zeta, face[0][1]);
                bt_exact_solution(xi, 0.0, zeta, face[1][0]);
                bt_exact_solution(xi, 1.0, zeta, face[1][1]);
                bt_exact_solution(xi, eta, 0.0, face[2][0]);
                bt_exact_solution(xi, eta, 1.0, face[2][1]);
                for (m = 0; m < 5; m++) {
                    double px = xi * face[0][1][m] + (1.0 - xi) * face[0][0][m];
                    double py = eta * face[1][1][m] + (1.0 - eta) * face[1][0][m];
                    double pz = zeta * face[2][1][m] + (1.0 - zeta) * face[2][0][m];

                    u[m] = px + py + pz - px * py - px * pz - py * pz + px * py * pz;
                }
            }
        }
        for (j = 0; j < ny; j++) {
            set_exact(k, j, 0, 0.0, (double)j * dy, zeta);
            set_exact(k, j, nx - 1, 1.0, (double)j * dy, zeta);
        }
        for (i = 0; i < nx; i++) {
            set_exact(k, 0, i, (double)i * dx, 0.0, zeta);
            set_exact(k, ny - 1, i, (double)i * dx, 1.0, zeta);
        }
        if (k == 0 || k == nz - 1)
            for (j = 0; j < ny; j++)
                for (i = 0; i < nx; i++)
                    set_exact(k, j, i, (double)i * dx, (double)j * dy,
                              k == 0 ? 0.0 : 1.0);
    }
}

/* One grid line of the exact solution and the quantities its fluxes use:
 * ue (the solution), buf (the velocities in 1..3, u4/u0 in 4, and in 0 the
 * squared speed), cuf (the squared velocity along the line) and q (the
 * kinetic energy density). */
struct exact_line {
    double ue[BT_NMAX][5];
    double buf[BT_NMAX][5];
    double cuf[BT_NMAX];
    double q[BT_NMAX];
};

/* Fill L for the n points of the line through (x0, y0, z0) along
 * direction d (0, 1, 2), whose coordinate is p * dnm1[d] at point p. */
static void exact_line_fill(struct exact_line *L, int d, long n,
                            double x0, double y0, double z0)
{
    const int a = d + 1;
    /* the two velocity components across the line, in increasing order */
    const int b = a == 1 ? 2 : 1, c = a == 3 ? 2 : 3;
    long p;
    int m;

    for (p = 0; p < n; p++) {
        double pos[3] = { x0, y0, z0 }, inv;

        pos[d] = (double)p * bt_k.dnm1[d];
        bt_exact_solution(pos[0], pos[1], pos[2], L->ue[p]);
        inv = 1.0 / L->ue[p][0];
        for (m = 1; m < 5; m++)
            L->buf[p][m] = inv * L->ue[p][m];
        L->cuf[p] = L->buf[p][a] * L->buf[p][a];
        L->buf[p][0] = L->cuf[p] + L->buf[p][b] * L->buf[p][b] + L->buf[p][c] * L->buf[p][c];
        L->q[p] = 0.5 * (L->buf[p][1] * L->ue[p][1] + L->buf[p][2] * L->ue[p][2] +
                         L->buf[p][3] * L->ue[p][3]);
    }
}

/* The fourth-order dissipation stencil of component m at point p of a
 * line of n points (one-sided near the ends, as NPB), on v[p][m]. */
static double diss_stencil(const double (*v)[5], long p, long n, int m)
{
    if (p == 1)
        return 5.0 * v[p][m] - 4.0 * v[p + 1][m] + v[p + 2][m];
    if (p == 2)
        return -4.0 * v[p - 1][m] + 6.0 * v[p][m] - 4.0 * v[p + 1][m] + v[p + 2][m];
    if (p == n - 3)
        return v[p - 2][m] - 4.0 * v[p - 1][m] + 6.0 * v[p][m] - 4.0 * v[p + 1][m];
    if (p == n - 2)
        return v[p - 2][m] - 4.0 * v[p - 1][m] + 5.0 * v[p][m];
    return v[p - 2][m] - 4.0 * v[p - 1][m] + 6.0 * v[p][m] - 4.0 * v[p + 1][m] + v[p + 2][m];
}

/* Subtract the discrete operator along direction d, applied to the exact
 * solution on line L, from the forcing of the line's inner points; f0 is
 * the forcing of point 0 and s the distance in doubles between points. */
static void exact_line_apply(const struct exact_line *L, int d, long n, double *f0, long s)
{
    const struct bt_dir *r = &bt_k.dir[d];
    const double c1 = bt_k.c1, c2 = bt_k.c2, t2 = r->t2;
    const int a = d + 1;
    const double (*ue)[5] = L->ue, (*buf)[5] = L->buf;
    const double *cuf = L->cuf, *q = L->q;
    long p;
    int m;

    for (p = 1; p < n - 1; p++) {
        double *f = f0 + p * s;
        const long pp = p + 1, pm = p - 1;

        f[0] = f[0] - t2 * (ue[pp][a] - ue[pm][a]) +
            r->dt1[0] * (ue[pp][0] - 2.0 * ue[p][0] + ue[pm][0]);
        for (m = 1; m < 4; m++) {
            if (m == a)
                f[m] = f[m] - t2 * ((ue[pp][m] * buf[pp][a] + c2 * (ue[pp][4] - q[pp])) -
                                    (ue[pm][m] * buf[pm][a] + c2 * (ue[pm][4] - q[pm]))) +
                    r->con[0] * (buf[pp][m] - 2.0 * buf[p][m] + buf[pm][m]) +
                    r->dt1[m] * (ue[pp][m] - 2.0 * ue[p][m] + ue[pm][m]);
            else
                f[m] = f[m] - t2 * (ue[pp][m] * buf[pp][a] - ue[pm][m] * buf[pm][a]) +
                    r->con[1] * (buf[pp][m] - 2.0 * buf[p][m] + buf[pm][m]) +
                    r->dt1[m] * (ue[pp][m] - 2.0 * ue[p][m] + ue[pm][m]);
        }
        f[4] = f[4] - t2 * (buf[pp][a] * (c1 * ue[pp][4] - c2 * q[pp]) -
                            buf[pm][a] * (c1 * ue[pm][4] - c2 * q[pm])) +
            0.5 * r->con[2] * (buf[pp][0] - 2.0 * buf[p][0] + buf[pm][0]) +
            r->con[3] * (cuf[pp] - 2.0 * cuf[p] + cuf[pm]) +
            r->con[4] * (buf[pp][4] - 2.0 * buf[p][4] + buf[pm][4]) +
            r->dt1[4] * (ue[pp][4] - 2.0 * ue[p][4] + ue[pm][4]);
    }
    for (p = 1; p < n - 1; p++)
        for (m = 0; m < 5; m++)
            f0[p * s + m] = f0[p * s + m] - bt_k.dssp * diss_stencil(ue, p, n, m);
}

/* The forcing: zero on the boundary; inside, minus the discrete operator
 * applied to the exact solution.  The x and y lines of a plane k are done
 * by the thread that owns the plane; the z lines cross the planes, so they
 * are shared out by j, after a barrier, and the sign is changed after
 * another (the implicit barriers of the loops). */
void bt_exact_rhs(void)
{
    const long nx = bt_grid.n[0], ny = bt_grid.n[1], nz = bt_grid.n[2];
    const long ip = bt_grid.ip, plane = bt_grid.jp * bt_grid.ip;
    struct exact_line line;    /* per thread: on its own stack */
    long k, j, i, m;

#pragma omp for schedule(static)
    for (k = 0; k < nz; k++)
        memset(bt_grid.forcing + 5 * bt_at(k, 0, 0), 0, sizeof(double) * 5 * plane);

#pragma omp for schedule(static)
    for (k = 1; k < nz - 1; k++) {
        double zeta = (double)k * bt_k.dnm1[2];

        for (j = 1; j < ny - 1; j++) {
            exact_line_fill(&line, 0, nx, 0.0, (double)j * bt_k.dnm1[1], zeta);
            exact_line_apply(&line, 0, nx, bt_grid.forcing + 5 * bt_at(k, j, 0), 5);
        }
        for (i = 1; i < nx - 1; i++) {
            exact_line_fill(&line, 1, ny, (double)i * bt_k.dnm1[0], 0.0, zeta);
            exact_line_apply(&line, 1, ny, bt_grid.forcing + 5 * bt_at(k, 0, i), 5 * ip);
        }
    }

#pragma omp for schedule(static)
    for (j = 1; j < ny - 1; j++)
        for (i = 1; i < nx - 1; i++) {
            exact_line_fill(&line, 2, nz, (double)i * bt_k.dnm1[0], (double)j * bt_k.dnm1[1], 0.0);
            exact_line_apply(&line, 2, nz, bt_grid.forcing + 5 * bt_at(0, j, i), 5 * plane);
        }

#pragma omp for schedule(static)
    for (k = 1; k < nz - 1; k++)
        for (j = 1; j < ny - 1; j++)
            for (i = 1; i < nx - 1; i++)
                for (m = 0; m < 5; m++)
                    bt_grid.forcing[5 * bt_at(k, j, i) + m] *= -1.0;
}
