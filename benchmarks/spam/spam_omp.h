/*
 * spam_omp.h - what spam_omp.c (the program, the paper's schedules) and
 * spam_balanced.c (--schedule balanced) share: a particle's records and a
 * thread's, and the entry points of the balanced schedule.  Internal to
 * spam_omp; both files run on the program's threads (OpenMP).
 */
#ifndef SPAM_OMP_H
#define SPAM_OMP_H

#include "spam.h"

/* A particle, sorted by cell: its position (all the force loop reads)
 * apart from the rest of its state, each an array of structures so that one
 * particle's data shares a page (spam_omp.c). */
struct pos { double x, y; };
struct state { double vx, vy; long id, cell; };
/* A step's Runge-Kutta values of one particle: the start (s0), the
 * accumulated slopes (acc) and the stage velocity (v). */
struct rk { double s0[4], acc[4], v[2]; };
struct force { double x, y; };

/* Per thread: column blocks, pair list, force array, histogram, counts. */
struct thr {
    int nblk;
    int *blk;                   /* nblk pairs [c0, c1) */
    struct spam_plist pl;
    struct force *ft;           /* force array of its own (reduction) */
    long *hist;                 /* per cell: count, then next slot */
    struct rk *rk;              /* thread sorting: its particles' RK values, */
    long nrk;                   /* in the order it visits them (private) */
    unsigned long long forces;  /* force computations, whole run */
    /* --schedule balanced only (private to the thread): */
    unsigned long long cross;   /* of those, pairs across a block edge */
    struct pos *vp;             /* the view: left halo column, own, right halo */
    struct force *vf;           /* forces on the view's particles */
    long *vcs;                  /* cell starts in the view */
};

/* --schedule balanced (spam_balanced.c).  spam_balanced_init: the
 * initial thread, once, before setup(): the geometry, particle count,
 * thread count, the threads' records (filled later by setup) and the
 * initial cell starts and counts, which it keeps. */
void spam_balanced_init(const struct spam_geom *geom, long nparticles, int nthreads,
                        struct thr **threads, long *cell_start, long *cell_count);
void balance_blocks(const long *order, const double *ix, const double *iy);
void setup_block(struct thr *me, const long *order, const double *ix, const double *iy,
                 const double *ivx, const double *ivy);
void run_balanced(long steps, double *t_sort, double *t_force);
/* After the run: every particle's final state into ix..ivy (by id); the
 * number of particles the blocks hold. */
long spam_balanced_collect(long steps, double *ix, double *iy, double *ivx, double *ivy);
/* Block t's columns [lo, hi). */
void spam_balanced_block(int t, int *lo, int *hi);

#endif /* SPAM_OMP_H */
