/*
 * reduction_float.c - the reduction clause on float and double: + * - max
 * min && || (the bitwise operators do not apply to floating types).
 *
 * Floating-point addition is not associative in general, so the values are
 * chosen to make every order of combination exact: sums of multiples of
 * 0.25 that stay below 2^24 (float) or 2^53 (double), products of 2, 0.5
 * and -1 only.  Each in a parallel for (static) and a for (dynamic) inside
 * a parallel region, compared with the sequential loop.
 */
#define OT_NAME "reduction_float"
#include "omptest.h"

#define N 10000

static float fv[N], fzeros[N], fones[N];
static double dv[N], dzeros[N], dones[N];

#define FADD(acc, i) (acc) += fv[i]
#define FMUL(acc, i) (acc) *= ((i) % 1000 == 0 ? 2.0f : (i) % 1500 == 7 \
                               ? 0.5f : (i) % 4000 == 5 ? -1.0f : 1.0f)
#define FSUB(acc, i) (acc) -= fv[i]
#define FLAND1(acc, i) (acc) = (acc) && fones[i]
#define FLAND0(acc, i) (acc) = (acc) && ((i) == 33 ? fzeros[i] : fones[i])
#define FLOR0(acc, i) (acc) = (acc) || fzeros[i]
#define FLOR1(acc, i) (acc) = (acc) || ((i) == 8888 ? fones[i] : fzeros[i])
#define FMAX(acc, i) (acc) = (acc) > fv[i] ? (acc) : fv[i]
#define FMIN(acc, i) (acc) = (acc) < fv[i] ? (acc) : fv[i]

#define DADD(acc, i) (acc) += dv[i]
#define DMUL(acc, i) (acc) *= ((i) % 200 == 0 ? 2.0 : (i) % 1500 == 7 \
                               ? 0.5 : (i) % 4000 == 5 ? -1.0 : 1.0)
#define DSUB(acc, i) (acc) -= dv[i]
#define DLAND1(acc, i) (acc) = (acc) && dones[i]
#define DLAND0(acc, i) (acc) = (acc) && ((i) == 4444 ? dzeros[i] : dones[i])
#define DLOR0(acc, i) (acc) = (acc) || dzeros[i]
#define DLOR1(acc, i) (acc) = (acc) || ((i) == 2 ? dones[i] : dzeros[i])
#define DMAX(acc, i) (acc) = (acc) > dv[i] ? (acc) : dv[i]
#define DMIN(acc, i) (acc) = (acc) < dv[i] ? (acc) : dv[i]

int main(void)
{
    int n = ot_team_size();
    long i;

    for (i = 0; i < N; i++) {
        /* -25.0 .. 24.75 in steps of 0.25, with outliers. */
        fv[i] = (float)((i % 200) - 100) * 0.25f + (i == 4242 ? 1000.0f : 0)
                - (i == 1212 ? 2000.5f : 0);
        fones[i] = 1.0f;
        dv[i] = (double)((i % 200) - 100) * 1e6 + 0.25 * (double)(i % 4)
                + (i == 7373 ? 1e12 : 0) - (i == 3737 ? 2e12 : 0);
        dones[i] = 1.0;
    }
    ot_print("threads=%d", n);
    OT_REDUCTION("float", float, "%.2f", (double), +, 0.75f, N, FADD);
    OT_REDUCTION("float", float, "%.6g", (double), *, 1.5f, N, FMUL);
    OT_REDUCTION("float", float, "%.2f", (double), -, 100.0f, N, FSUB);
    OT_REDUCTION("float", float, "%.1f", (double), &&, 1.0f, N, FLAND1);
    OT_REDUCTION("float", float, "%.1f", (double), &&, 1.0f, N, FLAND0);
    OT_REDUCTION("float", float, "%.1f", (double), ||, 0.0f, N, FLOR0);
    OT_REDUCTION("float", float, "%.1f", (double), ||, 0.0f, N, FLOR1);
    OT_REDUCTION("float", float, "%.2f", (double), max, -1e30f, N, FMAX);
    OT_REDUCTION("float", float, "%.2f", (double), max, 5000.5f, N, FMAX);
    OT_REDUCTION("float", float, "%.2f", (double), min, 1e30f, N, FMIN);
    OT_REDUCTION("float", float, "%.2f", (double), min, -5000.5f, N, FMIN);

    OT_REDUCTION("double", double, "%.2f", (double), +, 0.5, N, DADD);
    OT_REDUCTION("double", double, "%.6g", (double), *, -3.0, N, DMUL);
    OT_REDUCTION("double", double, "%.2f", (double), -, 1e9, N, DSUB);
    OT_REDUCTION("double", double, "%.1f", (double), &&, 1.0, N, DLAND1);
    OT_REDUCTION("double", double, "%.1f", (double), &&, 1.0, N, DLAND0);
    OT_REDUCTION("double", double, "%.1f", (double), ||, 0.0, N, DLOR0);
    OT_REDUCTION("double", double, "%.1f", (double), ||, 0.0, N, DLOR1);
    OT_REDUCTION("double", double, "%.2f", (double), max, -1e300, N, DMAX);
    OT_REDUCTION("double", double, "%.2f", (double), max, 3e12, N, DMAX);
    OT_REDUCTION("double", double, "%.2f", (double), min, 1e300, N, DMIN);
    OT_REDUCTION("double", double, "%.2f", (double), min, -3e12, N, DMIN);
    return ot_finish();
}
