/*
 * spam.c - the shared part of the SPAM benchmark (see spam.h): geometry,
 * the initial state, the potential, the sorting of one cell, energy and
 * checksum.  Called by one thread at a time, except spam_sort_cell, which
 * any number of threads may run on lists of their own.
 */
#include "spam.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void spam_geom_init(struct spam_geom *g, long n)
{
    g->n = n;
    g->ly = SPAM_LY;
    g->lx = 1600.0 * (double)n / 43200.0;
    g->cx = SPAM_CELL;
    g->ncx = (int)ceil(g->lx / SPAM_CELL) + 1;
    g->ncy = (int)ceil(g->ly / SPAM_CELL);
    g->cy = g->ly / g->ncy;
}

/* xorshift64*: the same stream on every platform and in every form. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

void spam_initial(const struct spam_geom *g, uint64_t seed, double *x, double *y,
                  double *vx, double *vy)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
    long i;

    for (i = 0; i < g->n; i++) {
        /* density (1 + 2 x/Lx): inverse of the CDF (u + u^2) / 2 */
        double u = rng_unit(&s);
        double xi = (-1.0 + sqrt(1.0 + 8.0 * u)) / 2.0;
        x[i] = xi * g->lx;
        if (x[i] >= g->lx) x[i] = g->lx * (1.0 - 1e-12);
        y[i] = rng_unit(&s) * g->ly;
        if (y[i] >= g->ly) y[i] = 0.0;
        vx[i] = SPAM_U0 * (1.0 - xi) * (1.0 + 0.05 * (2.0 * rng_unit(&s) - 1.0));
        vy[i] = 0.1 * (2.0 * rng_unit(&s) - 1.0);
    }
}

double spam_phi(double r)
{
    double s = r / SPAM_R, t = 1.0 - s;
    if (s >= 1.0)
        return 0.0;
    return SPAM_BETA / (12.0 * 3.14159265358979323846 * SPAM_R * SPAM_R) *
           (1.0 + 3.0 * s) * t * t * t;
}

void spam_plist_push(struct spam_plist *l, int32_t i, int32_t j)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4096;
        struct spam_pair *p = realloc(l->p, cap * sizeof *p);
        if (!p) {
            fprintf(stderr, "spam: out of memory for a pair list of %zu pairs\n", cap);
            exit(1);
        }
        l->p = p;
        l->cap = cap;
    }
    l->p[l->n].i = i;
    l->p[l->n].j = j;
    l->n++;
}

void spam_sort_cell(const struct spam_geom *g, int col, int row, const long *start,
                    const long *count, struct spam_plist *l)
{
    /* E, NW, N, NE */
    static const int dcol[4] = { 1, -1, 0, 1 }, drow[4] = { 0, 1, 1, 1 };
    int c = col * g->ncy + row, k;
    long a, b, i, j;

    a = start[c];
    b = a + count[c];
    for (i = a; i < b; i++)
        for (j = i + 1; j < b; j++)
            spam_plist_push(l, (int32_t)i, (int32_t)j);
    for (k = 0; k < 4; k++) {
        int nc = col + dcol[k], nr = (row + drow[k]) % g->ncy, d;
        long na, nb;
        if (nc < 0 || nc >= g->ncx)
            continue;
        d = nc * g->ncy + nr;
        na = start[d];
        nb = na + count[d];
        for (i = a; i < b; i++)
            for (j = na; j < nb; j++)
                spam_plist_push(l, (int32_t)i, (int32_t)j);
    }
}

double spam_energy(const struct spam_geom *g, const double *x, const double *y,
                   const double *vx, const double *vy)
{
    long n = g->n, nc = (long)g->ncx * g->ncy, i, k;
    long *head = malloc(nc * sizeof *head), *next = malloc(n * sizeof *next);
    double kin = 0.0, pot = 0.0;
    int col, row, dc, dr;

    if (!head || !next) {
        fprintf(stderr, "spam: out of memory in spam_energy\n");
        exit(1);
    }
    for (k = 0; k < nc; k++)
        head[k] = -1;
    for (i = n - 1; i >= 0; i--) {
        int c = spam_cell_of(g, x[i], y[i]);
        next[i] = head[c];
        head[c] = i;
    }
    for (i = 0; i < n; i++)
        kin += 0.5 * SPAM_MASS * (vx[i] * vx[i] + vy[i] * vy[i]);
    /* every pair twice (all 9 neighbours), halved */
    for (col = 0; col < g->ncx; col++)
        for (row = 0; row < g->ncy; row++)
            for (i = head[col * g->ncy + row]; i >= 0; i = next[i])
                for (dc = -1; dc <= 1; dc++)
                    for (dr = -1; dr <= 1; dr++) {
                        int nc2 = col + dc, nr = (row + dr + g->ncy) % g->ncy;
                        long j;
                        if (nc2 < 0 || nc2 >= g->ncx)
                            continue;
                        for (j = head[nc2 * g->ncy + nr]; j >= 0; j = next[j]) {
                            double ddx, ddy, r;
                            if (j == i)
                                continue;
                            ddx = x[i] - x[j];
                            ddy = spam_wrap_dy(y[i] - y[j], g->ly);
                            r = sqrt(ddx * ddx + ddy * ddy);
                            if (r < SPAM_R)
                                pot += 0.5 * spam_phi(r);
                        }
                    }
    free(head);
    free(next);
    return kin + pot;
}

double spam_checksum(long n, const double *x, const double *y)
{
    long double s = 0.0L;
    long k;

    for (k = 0; k < n; k++)
        s += (long double)(x[k] + 2.0 * y[k]) * (double)(1 + k % 7);
    return (double)s;
}

double spam_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
