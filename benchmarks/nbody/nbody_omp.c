/*
 * nbody_omp.c - Barnes-Hut gravity (paper 001, Fig. 4) as a plain OpenMP
 * program: built as nbody_omp.gomp (gcc -fopenmp, libgomp) and
 * nbody_omp.dsm (tools/dsmcc, the OpenMP shim on libdsm).
 *
 * N bodies (20,000 by default) drawn from a Plummer sphere with a fixed
 * seed (G = 1, total mass 1, Plummer radius 1).  Each step: the octree is
 * built sequentially (under the shim: on rank 0), the accelerations are
 * computed in parallel with schedule(dynamic) (opening angle --theta,
 * Plummer softening --eps), and rank 0 advances the bodies (leapfrog,
 * kick-drift).  Every rank's force loop reads all the bodies and the whole
 * tree, both just written by rank 0.  Two ways to get them there:
 *   ondemand   the force loop faults the pages in from rank 0, every rank
 *              at once;
 *   bcast      dsm_bcast (dsm_omp.h) sends bodies and tree first.
 * Both modes start from the same bodies and must end with the same bodies,
 * bit for bit (the tree and each body's traversal are deterministic).
 *
 * Time split as in the paper: "tree" (build), "bcast" (from the first
 * dsm_bcast to the end of an empty parallel region after it), "force" (the
 * force region, fork to join, faults included under ondemand); means over
 * the steps after the first.
 *
 * Check: after the last step, the tree accelerations of a sample of bodies
 * are compared with a direct O(N^2) sum; the RMS relative error must be
 * below --tol (default 0.01 for theta 0.5).
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsm_omp.h"
#include "omp_common.h"

static long opt_n = 20000, opt_steps = 4, opt_sample = 200;
static double opt_theta = 0.5, opt_eps = 0.01, opt_dt = 0.001, opt_tol = 0.01;
static const char *opt_mode = "both";

static const struct obench_opt opts[] = {
    { "bodies", OBENCH_LONG, &opt_n, "number of bodies (20000)" },
    { "steps", OBENCH_LONG, &opt_steps, "time steps per mode (4)" },
    { "sample", OBENCH_LONG, &opt_sample, "bodies checked against the direct sum (200)" },
    { "theta", OBENCH_DOUBLE, &opt_theta, "opening angle (0.5)" },
    { "eps", OBENCH_DOUBLE, &opt_eps, "softening length (0.01)" },
    { "dt", OBENCH_DOUBLE, &opt_dt, "time step (0.001)" },
    { "tol", OBENCH_DOUBLE, &opt_tol, "largest RMS relative error of the sample (0.01)" },
    { "mode", OBENCH_STRING, &opt_mode, "ondemand, bcast or both (both)" },
    { NULL, 0, NULL, NULL }
};

/* What the force loop reads: position and mass. */
struct body { double x, y, z, m; };
/* An octree cell: a leaf holds one body (body >= 0, no children). */
struct cell {
    double cx, cy, cz, m;        /* centre of mass, mass */
    double ox, oy, oz, half;     /* geometric centre, half the side */
    int32_t child[8];
    int32_t body;
    int32_t pad;
};

static struct body *bodies;      /* read-shared: written by rank 0 */
static double *vel;              /* 3 per body: rank 0 only */
static double *acc;              /* 3 per body: written by the force loop */
static struct cell *cells;       /* read-shared: written by rank 0 */
static long ncells, maxcells;

/* ---- initial conditions ---- */

static uint64_t rng;
static double urand(void)       /* (0, 1) */
{
    rng += 0x9e3779b97f4a7c15ULL;            /* splitmix64 */
    uint64_t z = rng;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static void iso(double r, double *x, double *y, double *z)
{
    double c = 2 * urand() - 1, s = sqrt(1 - c * c), phi = 2 * M_PI * urand();
    *x = r * s * cos(phi);
    *y = r * s * sin(phi);
    *z = r * c;
}

/* Plummer sphere by inverse sampling of the cumulative mass (radii cut at
 * 10 Plummer radii) and von Neumann rejection for the speed. */
static void plummer(long n)
{
    rng = 12345;
    for (long i = 0; i < n; i++) {
        double r;
        do
            r = 1 / sqrt(pow(urand(), -2.0 / 3.0) - 1);
        while (r > 10);
        iso(r, &bodies[i].x, &bodies[i].y, &bodies[i].z);
        bodies[i].m = 1.0 / (double)n;
        double q, g;
        do {
            q = urand();
            g = urand() * 0.1;
        } while (g > q * q * pow(1 - q * q, 3.5));
        double v = q * sqrt(2.0) * pow(1 + r * r, -0.25);
        iso(v, &vel[3 * i], &vel[3 * i + 1], &vel[3 * i + 2]);
    }
}

/* ---- the tree (sequential) ---- */

static int32_t new_cell(double ox, double oy, double oz, double half)
{
    if (ncells == maxcells) {
        fprintf(stderr, "nbody: more than %ld cells\n", maxcells);
        exit(1);
    }
    struct cell *c = &cells[ncells];
    memset(c, 0, sizeof *c);
    c->ox = ox; c->oy = oy; c->oz = oz; c->half = half;
    for (int k = 0; k < 8; k++)
        c->child[k] = -1;
    c->body = -1;
    return (int32_t)ncells++;
}

static int octant(const struct cell *c, const struct body *b)
{
    return (b->x > c->ox) | (b->y > c->oy) << 1 | (b->z > c->oz) << 2;
}

static int32_t child_of(int32_t ci, int k)
{
    struct cell *c = &cells[ci];
    double h = c->half / 2;
    return new_cell(c->ox + (k & 1 ? h : -h), c->oy + (k & 2 ? h : -h),
                    c->oz + (k & 4 ? h : -h), h);
}

static void insert(int32_t ci, int32_t bi, int depth)
{
    for (;;) {
        struct cell *c = &cells[ci];
        if (depth > 60) {
            fprintf(stderr, "nbody: bodies %d and %d coincide\n", c->body, bi);
            exit(1);
        }
        int leaf = 1;
        for (int k = 0; k < 8; k++)
            leaf &= c->child[k] < 0;
        if (leaf && c->body < 0) {
            c->body = bi;
            return;
        }
        if (leaf) {                 /* split: push the resident body down */
            int32_t old = c->body;
            c->body = -1;
            int k = octant(c, &bodies[old]);
            int32_t nc = child_of(ci, k);
            cells[ci].child[k] = nc;
            cells[nc].body = old;
        }
        int k = octant(&cells[ci], &bodies[bi]);
        if (cells[ci].child[k] < 0) {
            int32_t nc = child_of(ci, k);
            cells[ci].child[k] = nc;
        }
        ci = cells[ci].child[k];
        depth++;
    }
}

static void summarise(int32_t ci)
{
    struct cell *c = &cells[ci];
    if (c->body >= 0) {
        const struct body *b = &bodies[c->body];
        c->cx = b->x; c->cy = b->y; c->cz = b->z; c->m = b->m;
        return;
    }
    double m = 0, x = 0, y = 0, z = 0;
    for (int k = 0; k < 8; k++) {
        int32_t d = c->child[k];
        if (d < 0)
            continue;
        summarise(d);
        c = &cells[ci];
        m += cells[d].m;
        x += cells[d].m * cells[d].cx;
        y += cells[d].m * cells[d].cy;
        z += cells[d].m * cells[d].cz;
    }
    c->m = m;
    c->cx = x / m; c->cy = y / m; c->cz = z / m;
}

static void build(long n)
{
    double lo = 1e300, hi = -1e300;
    for (long i = 0; i < n; i++) {
        double v[3] = { bodies[i].x, bodies[i].y, bodies[i].z };
        for (int k = 0; k < 3; k++) {
            if (v[k] < lo) lo = v[k];
            if (v[k] > hi) hi = v[k];
        }
    }
    ncells = 0;
    double mid = (lo + hi) / 2, half = (hi - lo) / 2 * 1.0001 + 1e-12;
    new_cell(mid, mid, mid, half);
    for (long i = 0; i < n; i++)
        insert(0, (int32_t)i, 0);
    summarise(0);
}

/* ---- forces ---- */

static void accel(long i, double out[3])
{
    const struct body *b = &bodies[i];
    double ax = 0, ay = 0, az = 0, eps2 = opt_eps * opt_eps, th2 = opt_theta * opt_theta;
    int32_t stack[512];
    int sp = 0;
    stack[sp++] = 0;
    while (sp) {
        const struct cell *c = &cells[stack[--sp]];
        if (c->body == (int32_t)i)
            continue;
        double dx = c->cx - b->x, dy = c->cy - b->y, dz = c->cz - b->z;
        double d2 = dx * dx + dy * dy + dz * dz;
        double s = 2 * c->half;
        if (c->body >= 0 || s * s < th2 * d2) {
            double r2 = d2 + eps2, inv = 1 / (r2 * sqrt(r2));
            ax += c->m * dx * inv;
            ay += c->m * dy * inv;
            az += c->m * dz * inv;
            continue;
        }
        for (int k = 7; k >= 0; k--)
            if (c->child[k] >= 0)
                stack[sp++] = c->child[k];
    }
    out[0] = ax; out[1] = ay; out[2] = az;
}

static void forces(long n)
{
#pragma omp parallel for schedule(dynamic, 64)
    for (long i = 0; i < n; i++)
        accel(i, &acc[3 * i]);
}

static void direct(long i, long n, double out[3])
{
    double ax = 0, ay = 0, az = 0, eps2 = opt_eps * opt_eps;
    for (long j = 0; j < n; j++) {
        if (j == i)
            continue;
        double dx = bodies[j].x - bodies[i].x, dy = bodies[j].y - bodies[i].y;
        double dz = bodies[j].z - bodies[i].z;
        double r2 = dx * dx + dy * dy + dz * dz + eps2, inv = 1 / (r2 * sqrt(r2));
        ax += bodies[j].m * dx * inv;
        ay += bodies[j].m * dy * inv;
        az += bodies[j].m * dz * inv;
    }
    out[0] = ax; out[1] = ay; out[2] = az;
}

static void empty_region(void)
{
    int x = 0;
#pragma omp parallel
    {
        if (omp_get_thread_num() == 0)
            x = 1;
    }
    (void)x;
}

/* ---- one mode ---- */

static double run(const char *mode, long n, const struct body *b0, const double *v0)
{
    int use_bcast = strcmp(mode, "bcast") == 0;
    double t_tree = 0, t_bcast = 0, t_force = 0;
    long counted = 0;

    memcpy(bodies, b0, (size_t)n * sizeof *bodies);
    memcpy(vel, v0, (size_t)n * 3 * sizeof *vel);
    for (long s = 0; s < opt_steps; s++) {
        double t0 = omp_get_wtime();
        build(n);
        double t1 = omp_get_wtime();
        if (use_bcast) {
            dsm_omp_bcast(bodies, (size_t)n * sizeof *bodies);
            dsm_omp_bcast(cells, (size_t)ncells * sizeof *cells);
        }
        empty_region();
        double t2 = omp_get_wtime();
        forces(n);
        double t3 = omp_get_wtime();
        if (s > 0 || opt_steps == 1) {
            t_tree += t1 - t0;
            t_bcast += t2 - t1;
            t_force += t3 - t2;
            counted++;
        }
        if (s == opt_steps - 1)
            break;              /* keep the last positions for the check */
        for (long i = 0; i < n; i++) {
            vel[3 * i] += opt_dt * acc[3 * i];
            vel[3 * i + 1] += opt_dt * acc[3 * i + 1];
            vel[3 * i + 2] += opt_dt * acc[3 * i + 2];
            bodies[i].x += opt_dt * vel[3 * i];
            bodies[i].y += opt_dt * vel[3 * i + 1];
            bodies[i].z += opt_dt * vel[3 * i + 2];
        }
    }
    t_tree /= (double)counted;
    t_bcast /= (double)counted;
    t_force /= (double)counted;

    /* The check against the direct sum, and a checksum of the result. */
    double e2 = 0, emax = 0;
    for (long k = 0; k < opt_sample; k++) {
        long i = k * n / opt_sample;
        double d[3];
        direct(i, n, d);
        double dd = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        double ex = acc[3 * i] - d[0], ey = acc[3 * i + 1] - d[1], ez = acc[3 * i + 2] - d[2];
        double e = sqrt(ex * ex + ey * ey + ez * ez) / dd;
        e2 += e * e;
        if (e > emax)
            emax = e;
    }
    double rms = sqrt(e2 / (double)opt_sample);
    double sum = 0;
    for (long i = 0; i < 3 * n; i++)
        sum += acc[i] * (double)(i % 7 + 1);
    printf("nbody_omp %s: %ld bodies, %ld cells, tree %.4f s, bcast %.4f s, force %.4f s "
           "per step (mean of %ld), sample of %ld: RMS relative error %.2e, max %.2e, "
           "checksum %.17g\n", mode, n, ncells, t_tree, t_bcast, t_force, counted,
           opt_sample, rms, emax, sum);
    char metric[64];
    snprintf(metric, sizeof metric, "%s_tree_s", mode);
    obench_result(metric, t_tree, "s");
    snprintf(metric, sizeof metric, "%s_bcast_s", mode);
    obench_result(metric, t_bcast, "s");
    snprintf(metric, sizeof metric, "%s_force_s", mode);
    obench_result(metric, t_force, "s");
    snprintf(metric, sizeof metric, "%s_step_s", mode);
    obench_result(metric, t_tree + t_bcast + t_force, "s");
    snprintf(metric, sizeof metric, "%s_rms_error", mode);
    obench_result(metric, rms, "");
    snprintf(metric, sizeof metric, "%s_checksum", mode);
    obench_result_exact(metric, sum, "sum");
    if (!(rms < opt_tol)) {
        fprintf(stderr, "nbody_omp %s: RMS relative error %.3e of the tree forces against "
                "the direct sum is above --tol %.3e\n", mode, rms, opt_tol);
        exit(1);
    }
    return sum;
}

int main(int argc, char **argv)
{
    obench_start(argc, argv, "nbody_omp",
                 "Barnes-Hut with bodies and tree fetched on demand or broadcast "
                 "(paper 001 Fig. 4)", opts);
    long n = opt_n;
    if (n < 2 || opt_steps < 1 || opt_sample < 1 || opt_sample > n)
        obench_fatal("--bodies %ld --steps %ld --sample %ld: need at least 2 bodies, "
                     "1 step and 1 <= sample <= bodies", n, opt_steps, opt_sample);
    if (strcmp(opt_mode, "ondemand") && strcmp(opt_mode, "bcast") && strcmp(opt_mode, "both"))
        obench_fatal("--mode %s: use ondemand, bcast or both", opt_mode);
    obench_team_size();
    maxcells = 4 * n + 64;
    bodies = malloc((size_t)n * sizeof *bodies);
    vel = malloc((size_t)n * 3 * sizeof *vel);
    acc = malloc((size_t)n * 3 * sizeof *acc);
    cells = malloc((size_t)maxcells * sizeof *cells);
    struct body *b0 = malloc((size_t)n * sizeof *b0);
    double *v0 = malloc((size_t)n * 3 * sizeof *v0);
    if (!bodies || !vel || !acc || !cells || !b0 || !v0)
        obench_fatal("out of memory for %ld bodies", n);
    plummer(n);
    memcpy(b0, bodies, (size_t)n * sizeof *b0);
    memcpy(v0, vel, (size_t)n * 3 * sizeof *v0);
    obench_param("bodies", n);
    obench_param("steps", opt_steps);
    obench_param("sample", opt_sample);
    double s1 = 0, s2 = 0;
    int both = strcmp(opt_mode, "both") == 0;
    if (strcmp(opt_mode, "bcast") != 0)
        s1 = run("ondemand", n, b0, v0);
    if (strcmp(opt_mode, "ondemand") != 0)
        s2 = run("bcast", n, b0, v0);
    if (both && s1 != s2) {
        fprintf(stderr, "nbody_omp: the two modes disagree (checksums %.17g and %.17g)\n",
                s1, s2);
        return 1;
    }
    obench_emit();
    return 0;
}
