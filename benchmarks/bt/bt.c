/*
 * bt.c - the NAS Parallel Benchmarks' BT application (see bt.h) as a plain
 * OpenMP C program: the options, the time loop, NPB's verification and
 * report, and the result lines of the benchmarks (omp_common.h).
 *
 *   bt [--class S|W|A|B] [--iter N]
 *
 * Classes (NPB's): S 12^3 points, 60 steps, dt 0.010; W 24^3, 200 steps,
 * dt 0.0008; A 64^3, 200, 0.0008; B 102^3, 200, 0.0003.  --iter N runs N
 * steps instead; the reference values hold only for the class's own count,
 * so with any other N the norms are printed and verification is skipped
 * (and the report says so).  Exit status 0 when verification is SUCCESSFUL
 * or skipped, 1 when UNSUCCESSFUL (and on a bad option or no memory).
 *
 * As NPB: one warm-up step after the set-up, then the solution is set up
 * again, and only the time loop is timed (omp_get_wtime() on the initial
 * thread around its parallel region); Mop/s is NPB's operation count of BT
 * over that time.  The time loop is one parallel region in which every
 * thread runs every step; the step functions share their work with orphaned
 * "omp for" loops (four barriers per step, see solve.c), and the master
 * thread prints the progress lines.  Under the DSM only rank 0 runs main(),
 * so everything here outside the regions runs there.
 *
 * The fields are allocated with the class's size (six arrays of one
 * double per point and three of five: class A 45 MB, B 182 MB); the
 * per-line work arrays are on each thread's stack (about 60 KB).
 */
#include "bt.h"
#include "../omp_common.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

static const char *opt_class = "S";
static long opt_iter = 0;

static const struct obench_opt opts[] = {
    { "class", OBENCH_STRING, &opt_class, "problem class: S (12^3), W (24^3), A (64^3), B (102^3)" },
    { "iter", OBENCH_LONG, &opt_iter, "time steps; 0: the class's (S 60, others 200), the only count verified" },
    { 0, 0, 0, 0 }
};

/* One field of `per` doubles per (padded) grid point, aligned to 64 KiB,
 * a whole number of DSM pages for every page size up to that. */
static double *field(int per)
{
    size_t bytes = sizeof(double) * (size_t)per * (size_t)bt_grid.n[2] *
        (size_t)bt_grid.jp * (size_t)bt_grid.ip;
    void *p = NULL;
    int rc = posix_memalign(&p, 65536, bytes);

    if (rc != 0)
        obench_fatal("cannot allocate %zu bytes: %s", bytes, strerror(rc));
    return p;
}

static void allocate(long n)
{
    bt_grid.n[0] = bt_grid.n[1] = bt_grid.n[2] = n;
    bt_grid.ip = bt_grid.jp = n / 2 * 2 + 1;
    bt_grid.u = field(5);
    bt_grid.rhs = field(5);
    bt_grid.forcing = field(5);
    bt_grid.rho_i = field(1);
    bt_grid.us = field(1);
    bt_grid.vs = field(1);
    bt_grid.ws = field(1);
    bt_grid.square = field(1);
    bt_grid.qs = field(1);
}

/* NPB's operation count of BT, in millions per second. */
static double mops(long steps, double seconds)
{
    double n3 = (double)bt_grid.n[0] * (double)bt_grid.n[1] * (double)bt_grid.n[2];
    double navg = (double)(bt_grid.n[0] + bt_grid.n[1] + bt_grid.n[2]) / 3.0;

    if (!(seconds > 0.0))
        return 0.0;
    return 1.0e-6 * (double)steps *
        (3478.8 * n3 - 17655.7 * navg * navg + 28023.7 * navg) / seconds;
}

/* Compare with the class's reference values and print NPB's lines:
 * 1 SUCCESSFUL, 0 UNSUCCESSFUL. */
static int verify(const struct bt_class *cls, const double xcr[5], const double xce[5])
{
    const double epsilon = 1.0e-08;
    int ok = 1, m, pass;

    printf(" Verification being performed for class %c\n", cls->name);
    printf(" accuracy setting for epsilon = %20.13E\n", epsilon);
    if (!(fabs(bt_k.dt - cls->dt) <= epsilon)) {
        printf(" DT does not match the reference value of %15.8E\n", cls->dt);
        ok = 0;
    }
    for (pass = 0; pass < 2; pass++) {
        const double *v = pass == 0 ? xcr : xce, *ref = pass == 0 ? cls->xcr : cls->xce;

        printf(" Comparison of RMS-norms of %s\n", pass == 0 ? "residual" : "solution error");
        for (m = 0; m < 5; m++) {
            double dif = fabs((v[m] - ref[m]) / ref[m]);
            int good = dif <= epsilon;   /* false for NaN, too */

            printf(" %s %2d%20.13E%20.13E%20.13E\n", good ? "        " : "FAILURE:",
                   m + 1, v[m], ref[m], dif);
            ok &= good;
        }
    }
    printf(" Verification %s\n", ok ? "Successful" : "failed");
    return ok;
}

static void print_norms(const double xcr[5], const double xce[5])
{
    int m;

    printf(" RMS-norms of residual\n");
    for (m = 0; m < 5; m++)
        printf("          %2d%20.13E\n", m + 1, xcr[m]);
    printf(" RMS-norms of solution error\n");
    for (m = 0; m < 5; m++)
        printf("          %2d%20.13E\n", m + 1, xce[m]);
}

int main(int argc, char **argv)
{
    const struct bt_class *cls;
    double xcr[5], xce[5], t0, seconds, rate;
    long steps;
    int team, m, verified = -1;   /* -1: not performed */
    const char *word;

    obench_start(argc, argv, "bt",
                 "NPB BT: block-tridiagonal ADI solver of the 3-D compressible Navier-Stokes\n"
                 "equations, NPB's classes and verification; OpenMP (libgomp or the DSM shim).",
                 opts);
    cls = opt_class[0] && !opt_class[1] ? bt_class_find((char)toupper((unsigned char)opt_class[0]))
                                        : NULL;
    if (!cls) {
        fprintf(stderr, "bt: --class %s: the classes are S, W, A and B\n", opt_class);
        return 2;
    }
    steps = opt_iter > 0 ? opt_iter : cls->steps;

    allocate(cls->n);
    bt_set_constants(cls->dt, cls->n, cls->n, cls->n);
    team = obench_team_size();

    printf("\n NAS Parallel Benchmarks BT (our OpenMP C), runtime %s\n\n", BENCH_OMP_RUNTIME);
    printf(" Class %c, size: %4ldx%4ldx%4ld\n", cls->name, bt_grid.n[0], bt_grid.n[1], bt_grid.n[2]);
    printf(" Iterations: %4ld    dt: %10.6f\n", steps, cls->dt);
    printf(" Number of threads: %d\n\n", team);
    fflush(stdout);

    /* Set up, one step to touch every page and code path, set up again. */
#pragma omp parallel
    {
        bt_initialize();
        bt_exact_rhs();
        bt_adi();
        bt_initialize();
    }

    t0 = omp_get_wtime();
#pragma omp parallel
    {
        long step;

        for (step = 1; step <= steps; step++) {
            if (step % 20 == 0 || step == 1) {
#pragma omp master
                {
                    printf(" Time step %4ld\n", step);
                    fflush(stdout);
                }
            }
            bt_adi();
        }
    }
    seconds = omp_get_wtime() - t0;
    rate = mops(steps, seconds);

    /* NPB's norms: the error of the solution, then the residual of one
     * more right-hand side (divided by dt). */
    bt_error_norm(xce);
#pragma omp parallel
    bt_compute_rhs();
    bt_rhs_norm(xcr);
    for (m = 0; m < 5; m++)
        xcr[m] = xcr[m] / bt_k.dt;

    printf("\n");
    if (steps == cls->steps) {
        verified = verify(cls, xcr, xce);
    } else {
        print_norms(xcr, xce);
        printf(" Verification skipped: %ld steps, not class %c's %d (the reference values"
               " hold for those only)\n", steps, cls->name, cls->steps);
    }
    word = verified < 0 ? "NOT PERFORMED" : verified ? "SUCCESSFUL" : "UNSUCCESSFUL";

    printf("\n\n BT Benchmark Completed.\n");
    printf(" Class           = %24c\n", cls->name);
    printf(" Size            = %14ldx%4ldx%4ld\n", bt_grid.n[0], bt_grid.n[1], bt_grid.n[2]);
    printf(" Iterations      = %24ld\n", steps);
    printf(" Time in seconds = %24.2f\n", seconds);
    printf(" Total threads   = %24d\n", team);
    printf(" Mop/s total     = %24.2f\n", rate);
    printf(" Mop/s/thread    = %24.2f\n", team > 0 ? rate / team : 0.0);
    printf(" Operation type  = %24s\n", "floating point");
    printf(" Verification    = %24s\n", word);
    printf(" Runtime         = %24s\n\n", BENCH_OMP_RUNTIME);

    obench_param("size", cls->n);
    obench_param("iter", steps);
    obench_result("bt_time_s", seconds, "s");
    obench_result("mops", rate, "Mop/s");
    if (verified >= 0)
        obench_result("verified", verified, "bool");
    obench_emit();
    return verified == 0 ? 1 : 0;
}
