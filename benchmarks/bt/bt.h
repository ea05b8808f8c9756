/*
 * bt.h - what the files of the BT benchmark share: the grid and its fields,
 * the constants of the discretisation, and the functions of each file.
 *
 * BT is the block-tridiagonal application of the NAS Parallel Benchmarks:
 * it integrates the 3-D compressible Navier-Stokes equations on the unit
 * cube, with a forcing term that makes a known polynomial the exact
 * solution, by an approximately factored implicit scheme (Beam-Warming ADI)
 * whose three factors are block-tridiagonal systems of 5x5 blocks, one
 * system per grid line, solved in the x, y and z directions in turn.  This
 * is our own C from the published specification (NPB 2/3 reports); the
 * discretisation, the constants and the verification values are NPB's, so
 * that the results compare with NPB's reference norms to 1.0e-8.
 *
 * The program is plain OpenMP C, built twice (bt.gomp with libgomp, bt.dsm
 * with the DSM's shim).  All threads run inside one parallel region per
 * phase; the functions below contain orphaned "omp for" constructs and are
 * called by every thread of the team, as in the NPB OpenMP C version.
 *
 * Layout: every field is indexed [k][j][i] (z, y, x: x varies fastest) and
 * the 5-component fields [k][j][i][m].  The row length and the rows per
 * plane are padded to an odd number (n/2*2+1, as NPB pads its arrays), so
 * that the planes and rows do not map to the same cache sets.  The fields
 * are allocated at the class's size, so that a small class touches a small,
 * dense part of memory (under the DSM: few pages).
 */
#ifndef BENCH_BT_H
#define BENCH_BT_H

/* The largest grid of the classes here (class B); sizes the per-thread
 * work arrays of the line solves, which live on each thread's stack. */
#define BT_NMAX 102

/* One problem class: the grid, the steps and the reference values NPB
 * publishes for it (verify.c). */
struct bt_class {
    char name;
    int n;                 /* grid points in each direction */
    int steps;             /* time steps of the class */
    double dt;             /* time step */
    double xcr[5];         /* RMS norms of the residual, divided by dt */
    double xce[5];         /* RMS norms of the error against the exact solution */
};

/* The constants of one coordinate direction (x, y or z). */
struct bt_dir {
    int a;                 /* the momentum component along it: 1, 2 or 3 */
    double t1;             /* 1 / h^2 */
    double t2;             /* 1 / (2 h) */
    double d[5];           /* the second-order dissipation coefficients */
    double dt1[5];         /* d[m] * t1 */
    double con[5];         /* the viscous terms' coefficients (NPB's xxcon1..5) */
    double lt1, lt2;       /* dt * t1 and dt * t2, for the implicit operator */
};

/* The constants of the discretisation, set once by bt_set_constants()
 * before the first parallel region and only read afterwards. */
struct bt_consts {
    double ce[5][13];      /* coefficients of the exact solution */
    double c1, c2, c3, c4, c5;
    double c1c2, c1c5, c3c4, c1345, conz1, con43, con16;
    double dssp;           /* fourth-order dissipation coefficient */
    double dt;
    double dnm1[3];        /* 1 / (n - 1): the mesh width per direction */
    struct bt_dir dir[3];  /* x, y, z */
};

/* The grid and its fields; set up by rank 0 / the initial thread before
 * any parallel region and only the arrays' contents change afterwards. */
struct bt_grid {
    long n[3];             /* grid points along x, y, z */
    long ip, jp;           /* padded row length and rows per plane */
    double *u;             /* the solution, 5 per point */
    double *rhs;           /* the right-hand side, then the update, 5 per point */
    double *forcing;       /* the forcing that makes the exact solution hold */
    double *rho_i;         /* 1 / density */
    double *us, *vs, *ws;  /* velocities */
    double *square;        /* kinetic energy density, 0.5 (u1^2+u2^2+u3^2) / u0 */
    double *qs;            /* square / density */
};

extern struct bt_grid bt_grid;
extern struct bt_consts bt_k;

/* The index of point (k, j, i) in a one-per-point field; a 5-per-point
 * field holds that point at 5 times the index. */
static inline long bt_at(long k, long j, long i)
{
    return (k * bt_grid.jp + j) * bt_grid.ip + i;
}

/* setup.c: constants, exact solution, initial field, forcing. */
void bt_set_constants(double dt, long nx, long ny, long nz);
void bt_exact_solution(double xi, double eta, double zeta, double out[5]);
void bt_initialize(void);             /* every thread: omp for inside */
void bt_exact_rhs(void);              /* every thread: omp for inside */

/* rhs.c */
void bt_compute_rhs(void);            /* every thread: omp for inside */

/* solve.c: the three line sweeps, the update, one step of all of them. */
void bt_x_solve(void);
void bt_y_solve(void);
void bt_z_solve(void);
void bt_add(void);
void bt_adi(void);                    /* every thread: one time step */

/* verify.c */
const struct bt_class *bt_class_find(char name);
void bt_error_norm(double rms[5]);    /* initial thread, outside parallel */
void bt_rhs_norm(double rms[5]);      /* initial thread, outside parallel */

#endif /* BENCH_BT_H */
