/*
 * spam.h - what every form of the SPAM benchmark shares: the problem (paper
 * 000's 2-D shock wave), its physics (equations (1)-(3), RK4), the initial
 * state, the cell grid, the pair-list "sorting" of one cell, the energy and
 * checksum, options and result lines.  Plain C: no MPI, no OpenMP; it is
 * compiled into spam (sequential / MPI-only / hybrid, spam_mpi.c) and into
 * spam_omp.gomp and spam_omp.dsm (OpenMP only, spam_omp.c).
 *
 * The problem (paper 000, Table 2, and what it leaves open, chosen here):
 *   N particles (--particles, default 43,200) in a box Lx x Ly, Ly = 18,
 *   Lx = 1600 * N / 43200 (so the mean density stays 1.5 when a test makes
 *   N smaller); cutoff R = 3.0; cells 3.1 wide in x, ncx = ceil(Lx/3.1) + 1
 *   columns (518 for the default; the spare column holds particles that are
 *   past the mirror between its reflections), and ncy = ceil(Ly/3.1) = 6
 *   rows of height Ly/ncy = 3.0 >= R (the y period must be a whole number
 *   of rows, so the rows cannot be 3.1 high);
 *   pair potential phi(r) = beta/(12 pi R^2) (1 + 3s)(1 - s)^3, s = r/R,
 *   whose derivative is the paper's equation (1),
 *   w_p(r) = -beta/(pi R^3) s (1 - s)^2; forces (2), (3);
 *   beta = 60 (Lucy's 2-D normalisation: phi = beta/12 * Lucy's weight),
 *   mass m = 1, dt = 0.02, 50 steps (--steps); 4th-order Runge-Kutta with
 *   the pair list of the step's start (the 0.1 skin between cell side and R
 *   covers the < 0.05 a pair closes in one step at these speeds);
 *   y periodic (minimum image in the force); x: mirror at x = Lx (a particle
 *   past it is reflected, vx -> -vx, at the end of the step), and, as a
 *   safeguard the paper does not need, the same at x = 0;
 *   initial state, from a seeded xorshift64* stream (--seed): density rising
 *   linearly in +x (1:3 from left to right), x velocity falling linearly
 *   from u0 = 1 at x = 0 to 0 at the mirror (Fig. 1's gradient) with +-5%
 *   fluctuation, y velocity uniform in [-0.1, 0.1].
 * With these the energy drifts by about 2e-6 relative over the default
 * run (mostly the mirror: a particle reflected at the end of a step lands
 * at another distance from its neighbours); every form checks it against
 * SPAM_ETOL.
 *
 * Pairs ("sorting", paper section 4.4): for a cell, the pairs among its
 * own particles (i < j) and with every particle of its E, NW, N and NE
 * neighbours (no wrap in x: a missing column adds nothing; N wraps in y).
 * Each pair appears once over all cells; its force acts on both particles.
 */
#ifndef SPAM_H
#define SPAM_H

#include <stddef.h>
#include <stdint.h>

/* The physical constants (see above). */
#define SPAM_BETA   60.0
#define SPAM_MASS   1.0
#define SPAM_DT     0.02
#define SPAM_R      3.0
#define SPAM_CELL   3.1
#define SPAM_LY     18.0
#define SPAM_U0     1.0

/* Tolerances: |E_end - E_start| / |E_start| must stay below SPAM_ETOL in
 * every form; two forms agree when their checksums differ by at most
 * SPAM_CTOL relative (their sums of forces may run in other orders, so
 * the last bits of a force can differ and the flow amplifies that a
 * little; in every run made here the checksums agreed to all 17 digits). */
#define SPAM_ETOL   1e-5
#define SPAM_CTOL   1e-9

/* The problem's geometry. */
struct spam_geom {
    long n;          /* particles */
    double lx, ly;   /* box */
    int ncx, ncy;    /* cells */
    double cx, cy;   /* cell sides (cx = 3.1, cy = ly / ncy) */
};

void spam_geom_init(struct spam_geom *g, long n);

/* Cell of a position (clamped into the grid); cells are numbered
 * column-major, cell = col * ncy + row, so a column is contiguous. */
static inline int spam_cell_of(const struct spam_geom *g, double x, double y)
{
    int cx = (int)(x / g->cx), cy = (int)(y / g->cy);
    if (cx < 0) cx = 0;
    if (cx >= g->ncx) cx = g->ncx - 1;
    if (cy < 0) cy = 0;
    if (cy >= g->ncy) cy = g->ncy - 1;
    return cx * g->ncy + cy;
}

/* The initial state: n particles, arrays of n, id[i] = i. */
void spam_initial(const struct spam_geom *g, uint64_t seed, double *x, double *y,
                  double *vx, double *vy);

/* w_p(r)/r for r^2 = rr < R^2 (the factor of the pair's dx, dy), and phi. */
static inline double spam_wp_over_r(double rr)
{
    double r = __builtin_sqrt(rr), s = r / SPAM_R, t = 1.0 - s;
    return -(SPAM_BETA / (3.14159265358979323846 * SPAM_R * SPAM_R * SPAM_R)) * s * t * t / r;
}
double spam_phi(double r);

/* Minimum image in y. */
static inline double spam_wrap_dy(double dy, double ly)
{
    if (dy > 0.5 * ly) dy -= ly;
    if (dy < -0.5 * ly) dy += ly;
    return dy;
}

/* The pair (i, j) of one list entry. */
struct spam_pair { int32_t i, j; };

/* A growable list of pairs (private memory of whoever builds it). */
struct spam_plist { struct spam_pair *p; size_t n, cap; };
void spam_plist_push(struct spam_plist *l, int32_t i, int32_t j);

/* "Sorting" of one cell (col, row): append its pairs to l.  start[c] and
 * start[c] + count[c] bound the particles of cell c in the arrays the
 * indices refer to; a neighbour cell with count 0 (or outside the grid)
 * adds nothing. */
void spam_sort_cell(const struct spam_geom *g, int col, int row, const long *start,
                    const long *count, struct spam_plist *l);

/* Force on a particle at (xi, yi) from one at (xj, yj) (fx, fy; the
 * opposite acts on j), if within R.  Returns 1 when computed (a "force
 * computation" of Tables 3 and 5). */
static inline int spam_force_xy(double xi, double yi, double xj, double yj, double ly,
                                double *fx, double *fy)
{
    double dx = xi - xj, dy = spam_wrap_dy(yi - yj, ly);
    double rr = dx * dx + dy * dy, w;
    if (rr >= SPAM_R * SPAM_R)
        return 0;
    w = spam_wp_over_r(rr);
    *fx = -w * dx;
    *fy = -w * dy;
    return 1;
}

/* The same for particles i and j of coordinate arrays x, y. */
static inline int spam_pair_force(const double *x, const double *y, double ly,
                                  int32_t i, int32_t j, double *fx, double *fy)
{
    return spam_force_xy(x[i], y[i], x[j], y[j], ly, fx, fy);
}

/* Runge-Kutta 4 bookkeeping of one particle after stage s (0..3), with the
 * force (fx, fy) at the stage's position.  p points at the particle's
 * x, y, vx, vy; s0 at the step's start values; acc at the accumulated
 * slopes (4 values). */
static inline void spam_rk_stage(int s, double *x, double *y, double *vx, double *vy,
                                 const double *s0, double *acc, double fx, double fy)
{
    static const double wt[4] = { 1.0, 2.0, 2.0, 1.0 };
    static const double c[3] = { 0.5, 0.5, 1.0 };
    double ax = fx / SPAM_MASS, ay = fy / SPAM_MASS;
    if (s == 0) {
        acc[0] = *vx; acc[1] = *vy; acc[2] = ax; acc[3] = ay;
    } else {
        acc[0] += wt[s] * *vx; acc[1] += wt[s] * *vy;
        acc[2] += wt[s] * ax; acc[3] += wt[s] * ay;
    }
    if (s < 3) {
        double h = c[s] * SPAM_DT;
        *x = s0[0] + h * *vx;
        *y = s0[1] + h * *vy;
        *vx = s0[2] + h * ax;
        *vy = s0[3] + h * ay;
    } else {
        double h = SPAM_DT / 6.0;
        *x = s0[0] + h * acc[0];
        *y = s0[1] + h * acc[1];
        *vx = s0[2] + h * acc[2];
        *vy = s0[3] + h * acc[3];
    }
}

/* The boundaries at the end of a step: y into [0, Ly), mirrors in x. */
static inline void spam_boundary(const struct spam_geom *g, double *x, double *y, double *vx)
{
    if (*x > g->lx) { *x = 2.0 * g->lx - *x; *vx = -*vx; }
    if (*x < 0.0) { *x = -*x; *vx = -*vx; }
    while (*y >= g->ly) *y -= g->ly;
    while (*y < 0.0) *y += g->ly;
}

/* Total energy (kinetic + pair potential) of n particles, by a cell pass
 * of its own; and the checksum of positions: sum over ids k of
 * (x + 2 y) * (1 + k % 7), accumulated in id order (x, y indexed by id). */
double spam_energy(const struct spam_geom *g, const double *x, const double *y,
                   const double *vx, const double *vy);
double spam_checksum(long n, const double *x_by_id, const double *y_by_id);

/* Seconds from a monotonic clock. */
double spam_now(void);

#endif /* SPAM_H */
