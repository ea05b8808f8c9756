/*
 * solve.c - the implicit part of BT's time step: the three factors of the
 * approximate factorisation, each a block-tridiagonal system with 5x5
 * blocks along every grid line of one direction (NPB's x_solve, y_solve,
 * z_solve with their jacobians and 5x5 block routines), and the update of
 * the solution (add).
 *
 * Every function is called by every thread of the team and shares its
 * lines out with an orphaned "omp for", schedule(static):
 *   x lines  by plane k  (nowait: bt_compute_rhs() gave the thread these
 *                         planes, and bt_y_solve() gives them again);
 *   y lines  by plane k  (then a barrier: the z lines cross the planes);
 *   z lines  by row j    (then a barrier);
 *   add      by plane k  (then a barrier: the next step's first loop takes
 *                         the planes over a longer range, so other ones).
 * Four barriers per step in all, with the one in bt_compute_rhs().
 *
 * A line's work arrays (the jacobians of its points and the eliminated
 * upper blocks) are locals of solve_line(), so on each thread's own stack
 * (NPB-OMP keeps them threadprivate): nothing per line is shared.
 *
 * The boundary points of a line are not solved for.  NPB carries them as
 * identity rows with a zero right-hand side, which adds and multiplies only
 * exact zeros into the inner points; leaving them out gives the same
 * numbers with less work.  Within a point, every sum is formed in NPB's
 * order.
 */
#include "bt.h"

typedef double blk[5][5];

/* b -= a v: b[r] minus a[r][c] v[c] for c = 0..4 in turn. */
static inline void matvec_sub(const blk a, const double *v, double *b)
{
    int r, c;

    for (r = 0; r < 5; r++) {
        double s = b[r];

#pragma GCC unroll 5
        for (c = 0; c < 5; c++)
            s = s - a[r][c] * v[c];
        b[r] = s;
    }
}

/* b -= a c (5x5 blocks). */
static inline void matmul_sub(const blk a, const blk c, blk b)
{
    int r, q, x;

    for (r = 0; r < 5; r++)
#pragma GCC unroll 5
        for (q = 0; q < 5; q++) {
            double s = b[r][q];

            for (x = 0; x < 5; x++)
                s = s - a[r][x] * c[x][q];
            b[r][q] = s;
        }
}

/* Gauss-Jordan elimination without pivoting (the blocks are diagonally
 * dominant): on return c holds lhs^-1 c and r holds lhs^-1 r; lhs is
 * destroyed.  Each pivot row is scaled, then eliminated from the four
 * other rows, as NPB does it. */
static inline void binvcrhs(blk lhs, blk c, double *r)
{
    int p, q, x;

    for (p = 0; p < 5; p++) {
        const double pivot = 1.00 / lhs[p][p];

        for (x = p + 1; x < 5; x++)
            lhs[p][x] = lhs[p][x] * pivot;
        for (x = 0; x < 5; x++)
            c[p][x] = c[p][x] * pivot;
        r[p] = r[p] * pivot;
        for (q = 0; q < 5; q++) {
            double coeff;

            if (q == p)
                continue;
            coeff = lhs[q][p];
            for (x = p + 1; x < 5; x++)
                lhs[q][x] = lhs[q][x] - coeff * lhs[p][x];
            for (x = 0; x < 5; x++)
                c[q][x] = c[q][x] - coeff * c[p][x];
            r[q] = r[q] - coeff * r[p];
        }
    }
}

/* The same without c: r = lhs^-1 r (NPB's binvrhs). */
static inline void binvrhs(blk lhs, double *r)
{
    int p, q, x;

    for (p = 0; p < 5; p++) {
        const double pivot = 1.00 / lhs[p][p];

        for (x = p + 1; x < 5; x++)
            lhs[p][x] = lhs[p][x] * pivot;
        r[p] = r[p] * pivot;
        for (q = 0; q < 5; q++) {
            double coeff;

            if (q == p)
                continue;
            coeff = lhs[q][p];
            for (x = p + 1; x < 5; x++)
                lhs[q][x] = lhs[q][x] - coeff * lhs[p][x];
            r[q] = r[q] - coeff * r[p];
        }
    }
}

/* The flux jacobian f and the viscous jacobian nj of one point for the
 * direction whose velocity is component a (1, 2, 3): rows are equations,
 * columns the conserved variables.  u is the point's solution; rho_i, qs
 * and square its derived fields (bt_compute_rhs). */
static inline __attribute__((always_inline)) void
jacobians(blk f, blk nj, const double *u, double rho_i, double qs, double square, int a)
{
    const double c1 = bt_k.c1, c2 = bt_k.c2, c3c4 = bt_k.c3c4, c1345 = bt_k.c1345;
    const double t1 = rho_i, t2 = t1 * t1, t3 = t1 * t2;
    const double ua = u[a];
    int r, c;

    for (c = 0; c < 5; c++)
        f[0][c] = nj[0][c] = 0.0;
    f[0][a] = 1.0;

    for (r = 1; r < 4; r++) {
        const double kr = r == a ? bt_k.con43 * c3c4 : c3c4;

        if (r == a) {
            f[r][0] = -(ua * ua * t2) + c2 * qs;
            for (c = 1; c < 4; c++)
                f[r][c] = -c2 * u[c] * t1;
            f[r][a] = (2.0 - c2) * ua * t1;
            f[r][4] = c2;
        } else {
            f[r][0] = -(ua * u[r]) * t2;
            for (c = 1; c < 5; c++)
                f[r][c] = 0.0;
            f[r][a] = u[r] * t1;
            f[r][r] = ua * t1;
        }
        for (c = 1; c < 5; c++)
            nj[r][c] = 0.0;
        nj[r][0] = -kr * t2 * u[r];
        nj[r][r] = kr * t1;
    }

    f[4][0] = (c2 * 2.0 * square - c1 * u[4]) * ua * t2;
    for (c = 1; c < 4; c++)
        f[4][c] = -c2 * u[c] * ua * t2;
    f[4][a] = c1 * u[4] * t1 - c2 * (qs + ua * ua * t2);
    f[4][4] = c1 * ua * t1;

    {
        const double k1 = (a == 1 ? bt_k.con43 * c3c4 : c3c4) - c1345;
        const double k2 = (a == 2 ? bt_k.con43 * c3c4 : c3c4) - c1345;
        const double k3 = (a == 3 ? bt_k.con43 * c3c4 : c3c4) - c1345;

        nj[4][0] = -k1 * t3 * (u[1] * u[1]) - k2 * t3 * (u[2] * u[2]) -
            k3 * t3 * (u[3] * u[3]) - c1345 * t2 * u[4];
        nj[4][1] = k1 * t2 * u[1];
        nj[4][2] = k2 * t2 * u[2];
        nj[4][3] = k3 * t2 * u[3];
    }
    nj[4][4] = c1345 * t1;
}

/* The blocks of row p of a line's system, from the jacobians of points
 * p-1, p and p+1:
 *   A = -lt2 f(p-1) - lt1 nj(p-1) - lt1 d        (below the diagonal)
 *   B = 1 + 2 lt1 nj(p) + 2 lt1 d                (the diagonal)
 *   C =  lt2 f(p+1) - lt1 nj(p+1) - lt1 d        (above)
 * with d the dissipation coefficients on the diagonal. */
static inline void block_a(blk A, const blk f, const blk nj, const struct bt_dir *d)
{
    int r, c;

    for (r = 0; r < 5; r++)
        for (c = 0; c < 5; c++) {
            A[r][c] = -d->lt2 * f[r][c] - d->lt1 * nj[r][c];
            if (r == c)
                A[r][c] -= d->lt1 * d->d[r];
        }
}

static inline void block_b(blk B, const blk nj, const struct bt_dir *d)
{
    int r, c;

    for (r = 0; r < 5; r++)
        for (c = 0; c < 5; c++)
            B[r][c] = r == c ? 1.0 + d->lt1 * 2.0 * nj[r][c] + d->lt1 * 2.0 * d->d[r]
                             : d->lt1 * 2.0 * nj[r][c];
}

static inline void block_c(blk C, const blk f, const blk nj, const struct bt_dir *d)
{
    int r, c;

    for (r = 0; r < 5; r++)
        for (c = 0; c < 5; c++) {
            C[r][c] = d->lt2 * f[r][c] - d->lt1 * nj[r][c];
            if (r == c)
                C[r][c] -= d->lt1 * d->d[r];
        }
}

/* Solve the block-tridiagonal system of one line of n points along the
 * direction of velocity component a (1, 2, 3): point p's solution and
 * right-hand side are at u0 + 5 p s and rhs0 + 5 p s, its derived fields
 * at rho0 + p s (and the same offset in qs and square).  The right-hand
 * side of the inner points is replaced by the solution.  Thomas algorithm:
 * eliminate the blocks below the diagonal going up the line, keeping the
 * eliminated upper blocks, then substitute back. */
static inline __attribute__((always_inline)) void
solve_line(double *rhs0, const double *u0, long p0, long s, long n, int a)
{
    const struct bt_dir *d = &bt_k.dir[a - 1];
    blk f[BT_NMAX], nj[BT_NMAX], cp[BT_NMAX];
    blk A, B;
    long p;

    for (p = 0; p < n; p++)
        jacobians(f[p], nj[p], u0 + 5 * p * s, bt_grid.rho_i[p0 + p * s],
                  bt_grid.qs[p0 + p * s], bt_grid.square[p0 + p * s], a);

    /* point 1: the row above the boundary, nothing below to eliminate */
    block_b(B, nj[1], d);
    block_c(cp[1], f[2], nj[2], d);
    binvcrhs(B, cp[1], rhs0 + 5 * s);
    for (p = 2; p < n - 1; p++) {
        double *r = rhs0 + 5 * p * s;

        block_a(A, f[p - 1], nj[p - 1], d);
        block_b(B, nj[p], d);
        matvec_sub(A, r - 5 * s, r);
        matmul_sub(A, cp[p - 1], B);
        if (p < n - 2) {
            block_c(cp[p], f[p + 1], nj[p + 1], d);
            binvcrhs(B, cp[p], r);
        } else {
            binvrhs(B, r);   /* the last row: its C meets the boundary */
        }
    }
    for (p = n - 3; p >= 1; p--)
        matvec_sub(cp[p], rhs0 + 5 * (p + 1) * s, rhs0 + 5 * p * s);
}

void bt_x_solve(void)
{
    const long nx = bt_grid.n[0], ny = bt_grid.n[1], nz = bt_grid.n[2];
    long k, j;

#pragma omp for schedule(static) nowait
    for (k = 1; k < nz - 1; k++)
        for (j = 1; j < ny - 1; j++) {
            const long p0 = bt_at(k, j, 0);

            solve_line(bt_grid.rhs + 5 * p0, bt_grid.u + 5 * p0, p0, 1, nx, 1);
        }
}

void bt_y_solve(void)
{
    const long nx = bt_grid.n[0], ny = bt_grid.n[1], nz = bt_grid.n[2];
    long k, i;

#pragma omp for schedule(static)
    for (k = 1; k < nz - 1; k++)
        for (i = 1; i < nx - 1; i++) {
            const long p0 = bt_at(k, 0, i);

            solve_line(bt_grid.rhs + 5 * p0, bt_grid.u + 5 * p0, p0, bt_grid.ip, ny, 2);
        }
}

void bt_z_solve(void)
{
    const long nx = bt_grid.n[0], ny = bt_grid.n[1], nz = bt_grid.n[2];
    const long plane = bt_grid.jp * bt_grid.ip;
    long j, i;

#pragma omp for schedule(static)
    for (j = 1; j < ny - 1; j++)
        for (i = 1; i < nx - 1; i++) {
            const long p0 = bt_at(0, j, i);

            solve_line(bt_grid.rhs + 5 * p0, bt_grid.u + 5 * p0, p0, plane, nz, 3);
        }
}

void bt_add(void)
{
    const long nx = bt_grid.n[0], ny = bt_grid.n[1], nz = bt_grid.n[2];
    long k, j, i;
    int m;

#pragma omp for schedule(static)
    for (k = 1; k < nz - 1; k++)
        for (j = 1; j < ny - 1; j++)
            for (i = 1; i < nx - 1; i++) {
                const long p = 5 * bt_at(k, j, i);

                for (m = 0; m < 5; m++)
                    bt_grid.u[p + m] = bt_grid.u[p + m] + bt_grid.rhs[p + m];
            }
}

void bt_adi(void)
{
    bt_compute_rhs();
    bt_x_solve();
    bt_y_solve();
    bt_z_solve();
    bt_add();
}
