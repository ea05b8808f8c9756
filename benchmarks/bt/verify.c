/*
 * verify.c - BT's problem classes, the norms of the result and NPB's
 * verification: after the class's number of steps, the RMS norms of the
 * residual (divided by dt) and of the error against the exact solution, five
 * of each, must equal NPB's published reference values to a relative
 * 1.0e-8, and dt must be the class's.
 *
 * Runs on the initial thread, outside parallel regions: the norms are sums
 * in one fixed order (k, j, i), so the printed values do not depend on the
 * team, the runtime or the number of ranks.
 */
#include "bt.h"

#include <math.h>
#include <stddef.h>

/* NPB's classes S, W, A, B and their reference values (NPB 3.3 verify). */
static const struct bt_class classes[] = {
    { 'S', 12, 60, 0.010,
      { 1.7034283709541311e-01, 1.2975252070034097e-02, 3.2527926989486055e-02,
        2.6436421275166801e-02, 1.9211784131744430e-01 },
      { 4.9976913345811579e-04, 4.5195666782961927e-05, 7.3973765172921357e-05,
        7.3821238632439731e-05, 8.9269630987491446e-04 } },
    { 'W', 24, 200, 0.0008,
      { 0.1125590409344e+03, 0.1180007595731e+02, 0.2710329767846e+02,
        0.2469174937669e+02, 0.2638427874317e+03 },
      { 0.4419655736008e+01, 0.4638531260002e+00, 0.1011551749967e+01,
        0.9235878729944e+00, 0.1018045837718e+02 } },
    { 'A', 64, 200, 0.0008,
      { 1.0806346714637264e+02, 1.1319730901220813e+01, 2.5974354511582465e+01,
        2.3665622544678910e+01, 2.5278963211748344e+02 },
      { 4.2348416040525025e+00, 4.4390282496995698e-01, 9.6692480136345650e-01,
        8.8302063039765474e-01, 9.7379901770829278e+00 } },
    { 'B', 102, 200, 0.0003,
      { 1.4233597229287254e+03, 9.9330522590150238e+01, 3.5646025644535285e+02,
        3.2485447959084092e+02, 3.2707541254659363e+03 },
      { 5.2969847140936856e+01, 4.4632896115670668e+00, 1.3122573342210174e+01,
        1.2006925323559144e+01, 1.2459576151035986e+02 } },
};

const struct bt_class *bt_class_find(char name)
{
    size_t c;

    for (c = 0; c < sizeof classes / sizeof classes[0]; c++)
        if (classes[c].name == name)
            return &classes[c];
    return NULL;
}

/* sqrt(sum / ((nx-2)(ny-2)(nz-2))), dividing one direction at a time. */
static void finish_norms(double rms[5])
{
    int m, d;

    for (m = 0; m < 5; m++) {
        for (d = 0; d < 3; d++)
            rms[m] = rms[m] / (double)(bt_grid.n[d] - 2);
        rms[m] = sqrt(rms[m]);
    }
}

/* Over every point, boundary included. */
void bt_error_norm(double rms[5])
{
    const long nx = bt_grid.n[0], ny = bt_grid.n[1], nz = bt_grid.n[2];
    long k, j, i;
    int m;

    for (m = 0; m < 5; m++)
        rms[m] = 0.0;
    for (k = 0; k < nz; k++)
        for (j = 0; j < ny; j++)
            for (i = 0; i < nx; i++) {
                const double *u = bt_grid.u + 5 * bt_at(k, j, i);
                double exact[5];

                bt_exact_solution((double)i * bt_k.dnm1[0], (double)j * bt_k.dnm1[1],
                                  (double)k * bt_k.dnm1[2], exact);
                for (m = 0; m < 5; m++) {
                    const double e = u[m] - exact[m];

                    rms[m] = rms[m] + e * e;
                }
            }
    finish_norms(rms);
}

/* Over the inner points. */
void bt_rhs_norm(double rms[5])
{
    const long nx = bt_grid.n[0], ny = bt_grid.n[1], nz = bt_grid.n[2];
    long k, j, i;
    int m;

    for (m = 0; m < 5; m++)
        rms[m] = 0.0;
    for (k = 1; k < nz - 1; k++)
        for (j = 1; j < ny - 1; j++)
            for (i = 1; i < nx - 1; i++) {
                const double *r = bt_grid.rhs + 5 * bt_at(k, j, i);

                for (m = 0; m < 5; m++)
                    rms[m] = rms[m] + r[m] * r[m];
            }
    finish_norms(rms);
}
