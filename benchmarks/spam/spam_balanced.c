/*
 * spam_balanced.c - spam_omp's default schedule, --schedule balanced: thread
 * t owns one fixed block of columns for the whole run, keeps its particles in
 * storage of its own, and computes forces on its own particles only (4
 * barriers a step; see the section comment below and spam_omp.c's header).
 * Runs on the program's OpenMP threads: run_balanced and setup_block inside
 * parallel regions, the rest on the initial thread.
 */
#include "spam_omp.h"
#include "../omp_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

/* spam_omp.c's state this schedule reads, copied once by spam_balanced_init
 * (none of it changes afterwards; th's entries are filled by setup). */
static struct spam_geom g;
static long n;
static int nthr;
static struct thr **th;
static long *cstart, *ccount;

/* --- --schedule balanced: fixed column blocks, storage per block -------- */

/* Thread t owns the columns [lo, hi) of block t for the whole run (bcol
 * holds the nthr + 1 boundaries, chosen once by balance_blocks from the
 * initial state: equal shares of the force computations, at least two
 * columns a block).  Its particles live in a storage of the block's own:
 * every array below is a region of whole 64 KiB (aligned_alloc), allocated
 * and first touched by the owner, so under the DSM it is homed on the
 * owner's rank and no page is written by two threads.
 *
 * A step is four barrier intervals, one per Runge-Kutta stage:
 *  - stage 0 starts with the sort: each thread builds its new layout
 *    (a stable counting sort by cell of its particles and of those that
 *    crossed in from the neighbours' edge columns, in the global order, so
 *    the sequential sort's order) in the other of two particle arrays
 *    (st[L] old, st[L ^ 1] new), and its "view": its own particles between
 *    a halo column on each side (the neighbours' new edge columns, which it
 *    sorts itself from their two old edge columns and its own, exactly as
 *    they do); then its pair list, then the forces of stage 0;
 *  - stages 1 to 3 read the halo positions the neighbours wrote in the
 *    stage before, from their position buffers (pos[0] after stages 0 and
 *    2, pos[1] after stage 1) at the offsets of their new layouts;
 *  - stage 3 writes the step's final state into st[L ^ 1] (the next
 *    step's old layout) with each particle's new cell.
 * A thread writes only a buffer its neighbours do not read in the same
 * interval, so no other barrier is needed: 4 a step.
 *
 * What a thread reads of another block: the neighbours' cell starts and
 * their two edge columns of particles (the sort), and their edge column's
 * positions in stages 1 to 3.  A particle moves less than 0.05 a step
 * (cells are 3.1 wide), so it can only cross into the next column: stage 3
 * checks that (and the halo sizes are checked against the neighbours'
 * layouts).
 *
 * Forces: a thread's pair list is the sequential list (spam_sort_cell,
 * cell by cell) restricted to the pairs with at least one of its own
 * particles, in the same order; so a pair across a block edge is computed
 * by both sides (and counted in both threads' force computations), and
 * each thread adds the pair's force only to its own particles (it adds
 * into halo slots too, which nobody reads).  No critical, no reduction;
 * each particle's force is summed in the same order as in the sequential
 * form, so the results are bit-identical to it. */
struct bst { double x, y, vx, vy; long id, cell; };
struct blk {
    int lo, hi;                 /* columns [lo, hi) */
    struct pos *pos[2];         /* positions of stages 0 and 2 / 1 (new layout) */
    struct bst *st[2];          /* the particles, in the old / new layout */
    long *cs[2];                /* cell starts, (hi - lo) * ncy + 1 (last: count) */
};
static struct blk **bk;         /* per thread, written once by its owner */
static int *bcol;               /* block boundaries, nthr + 1 */

static void *region(size_t bytes)
{
    size_t sz = (bytes + 65535) & ~(size_t)65535;
    void *p = aligned_alloc(65536, sz ? sz : 65536);
    if (!p)
        obench_fatal("out of memory for a block's region (%zu bytes)", sz);
    return p;
}

/* Block boundaries balancing the force computations (pairs within R,
 * each counted in the column of the cell that lists it) of the initial
 * state, sorted by cell in 'order'; at least one column per block. */
void balance_blocks(const long *order, const double *ix, const double *iy)
{
    double *w = calloc(g.ncx + 1, sizeof *w), *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    struct spam_plist l = { 0, 0, 0 };
    double tot;
    int c, r, t;
    size_t k;

    if (!w || !x || !y)
        obench_fatal("out of memory");
    for (k = 0; k < (size_t)n; k++) {
        x[k] = ix[order[k]];
        y[k] = iy[order[k]];
    }
    for (c = 0; c < g.ncx; c++) {
        l.n = 0;
        for (r = 0; r < g.ncy; r++)
            spam_sort_cell(&g, c, r, cstart, ccount, &l);
        for (k = 0; k < l.n; k++) {
            double fx, fy;
            w[c + 1] += spam_pair_force(x, y, g.ly, l.p[k].i, l.p[k].j, &fx, &fy);
        }
    }
    for (c = 0; c < g.ncx; c++)
        w[c + 1] += w[c];
    tot = w[g.ncx];
    bcol[0] = 0;
    bcol[nthr] = g.ncx;
    for (t = 1; t < nthr; t++) {
        /* the column boundary closest to the t-th share */
        c = bcol[t - 1] + 2;
        while (c < g.ncx - 2 * (nthr - t) && w[c + 1] <= tot * t / nthr)
            c++;
        if (c < g.ncx - 2 * (nthr - t) && tot * t / nthr - w[c] > w[c + 1] - tot * t / nthr)
            c++;
        bcol[t] = c;
    }
    free(w); free(x); free(y); free(l.p);
}

/* The pairs of view cell (vc, r) (view columns: 0 the left halo, 1..ncol
 * its own, ncol + 1 the right halo) that involve an own particle, in
 * spam_sort_cell's order. */
static void list_cell_view(int vc, int r, int ncol, const long *vcs, struct spam_plist *l)
{
    static const int dcol[4] = { 1, -1, 0, 1 }, drow[4] = { 0, 1, 1, 1 };
    int own = vc >= 1 && vc <= ncol, k;
    long c = (long)vc * g.ncy + r, a = vcs[c], b = vcs[c + 1], i, j;

    if (own)
        for (i = a; i < b; i++)
            for (j = i + 1; j < b; j++)
                spam_plist_push(l, (int32_t)i, (int32_t)j);
    for (k = 0; k < 4; k++) {
        int nc = vc + dcol[k], nr = (r + drow[k]) % g.ncy;
        long d, na, nb;
        if (nc < 0 || nc > ncol + 1 || !(own || (nc >= 1 && nc <= ncol)))
            continue;
        d = (long)nc * g.ncy + nr;
        na = vcs[d];
        nb = vcs[d + 1];
        for (i = a; i < b; i++)
            for (j = na; j < nb; j++)
                spam_plist_push(l, (int32_t)i, (int32_t)j);
    }
}

/* Fill the view's halo column (cells [c0, c0 + ny) of the new layout) from
 * the particles of src[0..n0) and then src1[0..n1) (the old layouts, in
 * that global order), keeping the order: the neighbour's stable sort does
 * the same, so the halo is its new column particle for particle.  Writes
 * the positions to vp and the cell starts (from base) to vcs; returns the
 * count. */
static long halo_column(long c0, const struct bst *src0, long n0, const struct bst *src1, long n1,
                        long base, struct pos *vp, long *vcs, long *h)
{
    int ny = g.ncy, r;
    long k, sum = 0;
    for (r = 0; r < ny; r++)
        h[r] = 0;
    for (k = 0; k < n0; k++)
        if (src0[k].cell >= c0 && src0[k].cell < c0 + ny)
            h[src0[k].cell - c0]++;
    for (k = 0; k < n1; k++)
        if (src1[k].cell >= c0 && src1[k].cell < c0 + ny)
            h[src1[k].cell - c0]++;
    for (r = 0; r < ny; r++) {
        long x = h[r];
        vcs[r] = base + sum;
        h[r] = sum;
        sum += x;
    }
    for (k = 0; k < n0; k++)
        if (src0[k].cell >= c0 && src0[k].cell < c0 + ny) {
            struct pos *d = &vp[h[src0[k].cell - c0]++];
            d->x = src0[k].x; d->y = src0[k].y;
        }
    for (k = 0; k < n1; k++)
        if (src1[k].cell >= c0 && src1[k].cell < c0 + ny) {
            struct pos *d = &vp[h[src1[k].cell - c0]++];
            d->x = src1[k].x; d->y = src1[k].y;
        }
    return sum;
}

void run_balanced(long steps, double *t_sort, double *t_force)
{
    double ts = 0.0, tf = 0.0;
#pragma omp parallel
    {
        int t = omp_get_thread_num(), L = 0, s, ny = g.ncy;
        struct thr *me = th[t];
        struct blk *b = bk[t];
        struct blk *lb = t > 0 ? bk[t - 1] : NULL, *rb = t + 1 < nthr ? bk[t + 1] : NULL;
        int ncol = b->hi - b->lo;
        long nlc = (long)ncol * ny, cbase = (long)b->lo * ny;
        long lnc = lb ? (long)(lb->hi - lb->lo) * ny : 0;
        unsigned long long cnt = 0, cross = 0;
        double t0 = 0.0, t1 = 0.0;
        long st, k;

        for (st = 0; st < steps; st++) {
            /* Old layout L (positions at the step's start in st[L]), new
             * layout L ^ 1. */
            const struct bst *os = b->st[L];
            struct bst *ns = b->st[L ^ 1];
            const struct bst *ls = lb ? lb->st[L] : NULL, *rs = rb ? rb->st[L] : NULL;
            long *ncs = b->cs[L ^ 1], *h = me->hist, *vcs = me->vcs;
            long onown = b->cs[L][nlc], lA = 0, lB = 0, lE = 0, rB = 0, rE = 0;
            long nl = 0, nown, nr = 0, nv, c, sum;
            struct pos *vp = me->vp;
            int r;
#pragma omp master
            t0 = omp_get_wtime();
            if (lb) {
                lA = lb->cs[L][lnc - 2 * ny];   /* its column lo - 2 */
                lB = lb->cs[L][lnc - ny];       /* its column lo - 1 */
                lE = lb->cs[L][lnc];
            }
            if (rb) {
                rB = rb->cs[L][ny];             /* end of its column hi */
                rE = rb->cs[L][2 * ny];         /* end of column hi + 1 */
            }
            /* The left halo: the new column lo - 1, from the old columns
             * lo - 2, lo - 1 (the left block's) and lo (its own). */
            if (lb)
                nl = halo_column(cbase - ny, ls + lA, lE - lA, os, b->cs[L][ny], 0, vp, vcs, h);
            else
                for (r = 0; r < ny; r++)
                    vcs[r] = 0;
            /* The new layout of its own columns: the particles that crossed
             * in from the left block's last column, its own that stayed,
             * those from the right block's first column - the global old
             * order, so that the sort is the sequential stable sort. */
            memset(h, 0, nlc * sizeof *h);
            for (k = lB; k < lE; k++)
                if (ls[k].cell >= cbase)
                    h[ls[k].cell - cbase]++;
            for (k = 0; k < onown; k++)
                if (os[k].cell >= cbase && os[k].cell < cbase + nlc)
                    h[os[k].cell - cbase]++;
            for (k = 0; k < rB; k++)
                if (rs[k].cell < cbase + nlc)
                    h[rs[k].cell - cbase]++;
            for (c = 0, sum = 0; c < nlc; c++) {
                long x = h[c];
                ncs[c] = h[c] = sum;
                vcs[ny + c] = nl + sum;
                sum += x;
            }
            ncs[nlc] = nown = sum;
            for (k = lB; k < lE; k++)
                if (ls[k].cell >= cbase)
                    ns[h[ls[k].cell - cbase]++] = ls[k];
            for (k = 0; k < onown; k++)
                if (os[k].cell >= cbase && os[k].cell < cbase + nlc)
                    ns[h[os[k].cell - cbase]++] = os[k];
            for (k = 0; k < rB; k++)
                if (rs[k].cell < cbase + nlc)
                    ns[h[rs[k].cell - cbase]++] = rs[k];
            for (k = 0; k < nown; k++) {
                vp[nl + k].x = ns[k].x;
                vp[nl + k].y = ns[k].y;
            }
            /* The right halo: the new column hi, from the old columns
             * hi - 1 (its own), hi and hi + 1 (the right block's). */
            if (rb) {
                long a = b->cs[L][nlc - ny];
                nr = halo_column(cbase + nlc, os + a, onown - a, rs, rE, nl + nown, vp + nl + nown,
                                 vcs + ny + nlc, h);
            } else {
                for (r = 0; r < ny; r++)
                    vcs[ny + nlc + r] = nl + nown;
            }
            nv = nl + nown + nr;
            vcs[2 * ny + nlc] = nv;
            me->pl.n = 0;
            for (c = 0; c < ncol + 2; c++)
                for (r = 0; r < ny; r++)
                    list_cell_view((int)c, r, ncol, vcs, &me->pl);
#pragma omp master
            {
                t1 = omp_get_wtime();
                ts += t1 - t0;
            }
            for (s = 0; s < 4; s++) {
                const struct spam_pair *p = me->pl.p;
                long np = (long)me->pl.n, hi = nl + nown;
                struct force *f = me->vf;

                /* Stage 0 has the halo from the sort; stage s > 0 reads
                 * what the neighbours wrote in stage s - 1 (buffer
                 * (s - 1) & 1), in their new layouts. */
                if (s > 0 && lb) {
                    long off = lb->cs[L ^ 1][lnc - ny];
                    if (s == 1 && lb->cs[L ^ 1][lnc] - off != nl)
                        obench_fatal("thread %d: left halo of %ld particles, not %ld", t, nl,
                                     lb->cs[L ^ 1][lnc] - off);
                    memcpy(vp, lb->pos[(s - 1) & 1] + off, nl * sizeof *vp);
                }
                if (s > 0 && rb) {
                    if (s == 1 && rb->cs[L ^ 1][ny] != nr)
                        obench_fatal("thread %d: right halo of %ld particles, not %ld", t, nr,
                                     rb->cs[L ^ 1][ny]);
                    memcpy(vp + hi, rb->pos[(s - 1) & 1], nr * sizeof *vp);
                }
                memset(f, 0, nv * sizeof *f);
                for (k = 0; k < np; k++) {
                    int32_t i = p[k].i, j = p[k].j;
                    double ffx, ffy;
                    if (!spam_force_xy(vp[i].x, vp[i].y, vp[j].x, vp[j].y, g.ly, &ffx, &ffy))
                        continue;
                    cnt++;
                    cross += (unsigned long)(i - nl) >= (unsigned long)nown ||
                             (unsigned long)(j - nl) >= (unsigned long)nown;
                    f[i].x += ffx; f[i].y += ffy;
                    f[j].x -= ffx; f[j].y -= ffy;
                }
                for (k = 0; k < nown; k++) {
                    struct rk *q = &me->rk[k];
                    struct pos *v = &vp[nl + k];
                    if (s == 0) {
                        q->s0[0] = v->x; q->s0[1] = v->y;
                        q->s0[2] = q->v[0] = ns[k].vx;
                        q->s0[3] = q->v[1] = ns[k].vy;
                    }
                    spam_rk_stage(s, &v->x, &v->y, &q->v[0], &q->v[1], q->s0, q->acc,
                                  f[nl + k].x, f[nl + k].y);
                    if (s < 3) {
                        b->pos[s & 1][k] = *v;
                    } else {
                        int cell, oc = (int)(ns[k].cell / ny);
                        spam_boundary(&g, &v->x, &v->y, &q->v[0]);
                        cell = spam_cell_of(&g, v->x, v->y);
                        if (cell / ny > oc + 1 || cell / ny < oc - 1)
                            obench_fatal("particle %ld moved from column %d to %d in one step;"
                                         " --schedule balanced assumes at most one",
                                         ns[k].id, oc, cell / ny);
                        ns[k].x = v->x; ns[k].y = v->y;
                        ns[k].vx = q->v[0]; ns[k].vy = q->v[1];
                        ns[k].cell = cell;
                    }
                }
#pragma omp barrier
            }
#pragma omp master
            tf += omp_get_wtime() - t1;
            L ^= 1;
        }
        me->forces += cnt;
        me->cross += cross;
    }
    *t_sort = ts;
    *t_force = tf;
}

/* The balanced set-up, in a parallel region: each thread allocates and
 * fills its block's storage (from the initial state sorted by cell,
 * 'order') and its private arrays. */
void setup_block(struct thr *me, const long *order, const double *ix, const double *iy,
                        const double *ivx, const double *ivy)
{
    int t = omp_get_thread_num();
    struct blk *b = region(sizeof *b);
    long ncol, nlc, g0, nown, c, k;

    b->lo = bcol[t];
    b->hi = bcol[t + 1];
    ncol = b->hi - b->lo;
    nlc = ncol * g.ncy;
    g0 = cstart[(long)b->lo * g.ncy];
    nown = cstart[(long)b->hi * g.ncy] - g0;
    /* Room for every particle: a block's count changes with migration. */
    for (k = 0; k < 2; k++) {
        b->pos[k] = region(n * sizeof *b->pos[k]);
        b->st[k] = region(n * sizeof *b->st[k]);
        b->cs[k] = region((nlc + 1) * sizeof *b->cs[k]);
    }
    for (c = 0; c <= nlc; c++)
        b->cs[0][c] = cstart[(long)b->lo * g.ncy + c] - g0;
    for (k = 0; k < nown; k++) {
        long j = order[g0 + k];
        b->st[0][k].x = ix[j];
        b->st[0][k].y = iy[j];
        b->st[0][k].vx = ivx[j];
        b->st[0][k].vy = ivy[j];
        b->st[0][k].id = j;
        b->st[0][k].cell = spam_cell_of(&g, ix[j], iy[j]);
    }
    me->vp = malloc(n * sizeof *me->vp);
    me->vf = malloc(n * sizeof *me->vf);
    me->vcs = malloc(((ncol + 2) * g.ncy + 1) * sizeof *me->vcs);
    me->rk = malloc(n * sizeof *me->rk);
    me->nrk = n;
    if (!me->vp || !me->vf || !me->vcs || !me->rk)
        obench_fatal("out of memory for a thread's arrays");
    bk[t] = b;
}

void spam_balanced_init(const struct spam_geom *geom, long nparticles, int nthreads,
                        struct thr **threads, long *cell_start, long *cell_count)
{
    g = *geom;
    n = nparticles;
    nthr = nthreads;
    th = threads;
    cstart = cell_start;
    ccount = cell_count;
    bk = calloc(nthr, sizeof *bk);
    bcol = calloc(nthr + 1, sizeof *bcol);
    if (!bk || !bcol)
        obench_fatal("out of memory");
}

long spam_balanced_collect(long steps, double *ix, double *iy, double *ivx, double *ivy)
{
    /* the last layout (each step's sort flips it), block by block */
    int L = (int)(steps & 1);
    long got = 0;
    for (int t = 0; t < nthr; t++) {
        struct blk *b = bk[t];
        long nb = b->cs[L][(long)(b->hi - b->lo) * g.ncy];
        for (long i = 0; i < nb; i++) {
            long k = b->st[L][i].id;
            ix[k] = b->st[L][i].x; iy[k] = b->st[L][i].y;
            ivx[k] = b->st[L][i].vx; ivy[k] = b->st[L][i].vy;
        }
        got += nb;
    }
    return got;
}

void spam_balanced_block(int t, int *lo, int *hi)
{
    *lo = bcol[t];
    *hi = bcol[t + 1];
}
