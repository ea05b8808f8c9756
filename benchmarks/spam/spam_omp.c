/*
 * spam_omp.c - SPAM (paper 000) as a plain OpenMP program: no MPI, no DSM
 * call.  Built twice from this file and spam_balanced.c (the default
 * schedule; what the two share is in spam_omp.h): spam_omp.gomp with gcc -fopenmp
 * (libgomp, threads of one process) and spam_omp.dsm with tools/dsmcc
 * (omp-shim: the team spread over the ranks of tools/dsmrun).  The physics,
 * initial state, energy and checksum are spam.c's, as in spam_mpi.c.
 *
 * --schedule balanced (the default): thread t owns one fixed block of
 * columns (boundaries chosen once so that the blocks have equal shares of
 * the force computations), keeps its particles in storage of its own
 * (sorted by cell within the block, double-buffered), takes in the
 * particles that cross into its columns, lists the pairs of its particles
 * including those with the neighbours' edge columns (a pair across an edge
 * is computed on both sides) and adds forces to its own particles only:
 * no critical section, no reduction, 4 barriers a step, and the same
 * summation order as the sequential form (bit-identical results).  Under
 * the DSM a thread reads only its neighbours' edge columns.  See the
 * section "--schedule balanced" in spam_balanced.c for the details.
 *
 * The other schedules (the forms of paper 000, and the DSM form before
 * balanced): the particles live in arrays kept sorted by cell (column
 * major), re-sorted every step by a stable counting sort, so that the
 * particles of a column of cells are contiguous.  Columns are shared out
 * by '#pragma omp for schedule(runtime)' over the columns in the pair-list
 * loop (--schedule static: one block per thread, the paper's flat mapping;
 * cyclic: static with a chunk of ncx/(K*threads) columns, the cyclic
 * mapping; dynamic: that chunk, dynamically); each thread records the
 * blocks of columns it got, and in the rest of the step it works on the
 * particles of those columns only (RK update, force sum), and in the next
 * step's sort it counts and moves them.  So a thread writes the same part
 * of every array every step, and under the DSM the pages of that part stay
 * at home on its rank (first touch, parallel initialisation); only pages
 * at block edges are shared.  To keep those few: positions (what the
 * neighbours read) are one array of {x, y}, the rest of a particle's state
 * another array of structures, and with thread sorting each thread keeps
 * its particles' Runge-Kutta values in an array of its own; and the whole
 * time loop is one parallel region with 10 barriers a step (run_fused).
 * docs/RESULTS.md (SPAM) has the DSM statistics behind these choices.
 *
 * Sorting (--sorting): 'thread' (the default) - every thread lists the
 * pairs of its columns in a list of its own and computes their forces
 * itself (the paper's per-thread sorting, section 4.3.3, with the lists
 * not shared out again: the locality its section 4.5 asks for); 'serial' -
 * the initial thread builds one list and the force loop shares it out with
 * 'omp for schedule(runtime)' (the paper's Fig. 2; chunk npair/(K*threads)
 * for cyclic and dynamic).
 * Force sums (--force): 'reduction' - each thread adds into an array of its
 * own, and each particle's force is the sum over the threads' arrays; with
 * thread sorting a thread touches only the particles of its columns and
 * their neighbour columns, and sets back to zero what it touched (so the
 * arrays are zero between stages, and a thread never writes pages of other
 * threads' columns); 'critical' - '#pragma omp critical' around each pair's
 * update of the shared force array (the paper's Fig. 2; very slow across
 * processes: one DSM lock per pair).
 *
 * With --sorting serial the step is the paper's sequence of parallel loops
 * (sort_step, stage: a region per phase).
 *
 * Timing, on the initial thread: time per step over --steps steps (the
 * initial state, its first sort and the parallel first-touch copy are not
 * timed: the paper's "excluding remapping"); shares of the force stages
 * (force loop, force sum, RK update), of the sorting (counting sort and
 * pair lists) and of the rest.
 */
#include "spam_omp.h"
#include "../omp_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

static long opt_particles = 43200, opt_steps = 50, opt_blocks = 4, opt_seed = 1;
static const char *opt_force = "auto", *opt_schedule = "balanced", *opt_sorting = "thread";

static const struct obench_opt opts[] = {
    { "particles", OBENCH_LONG, &opt_particles, "number of particles (default 43200)" },
    { "steps", OBENCH_LONG, &opt_steps, "time steps (default 50)" },
    { "force", OBENCH_STRING, &opt_force,
      "owner (--schedule balanced) | reduction | critical (the other schedules); auto: owner"
      " with balanced, else reduction" },
    { "schedule", OBENCH_STRING, &opt_schedule,
      "balanced | static | cyclic | dynamic" },
    { "sorting", OBENCH_STRING, &opt_sorting, "thread | serial (default thread)" },
    { "blocks", OBENCH_LONG, &opt_blocks, "cyclic/dynamic: chunks per thread (default 4)" },
    { "seed", OBENCH_LONG, &opt_seed, "seed of the initial state (default 1)" },
    { 0, 0, 0, 0 }
};

static struct spam_geom g;
static long n, ncell;
static int nthr, crit, serial_sort, balanced;

/* Particles, sorted by cell (struct pos and state: spam_omp.h); np/ns the
 * other buffer of the counting sort. */
static struct pos *ps, *nps;
static struct state *ss, *nss;
static struct force *fc;        /* critical: the shared force array */
static long *cstart, *ccount;   /* per cell; cstart[ncell] = n */
static long *ncstart;           /* the sort's new cstart, swapped in after the move */
static struct rk *rkg;          /* serial sorting: per particle, shared */

/* Each thread's record is allocated by the thread itself (a page of its
 * own under the DSM: it writes it all the time); th holds the pointers. */
static struct thr **th;
static struct spam_plist gpl;   /* serial sorting's list */

static void set_schedule(long len)
{
    long chunk = (len + opt_blocks * nthr - 1) / (opt_blocks * nthr);
    if (chunk < 1)
        chunk = 1;
    if (!strcmp(opt_schedule, "static"))
        omp_set_schedule(omp_sched_static, 0);
    else if (!strcmp(opt_schedule, "cyclic"))
        omp_set_schedule(omp_sched_static, (int)chunk);
    else
        omp_set_schedule(omp_sched_dynamic, (int)chunk);
}

/* First particle of column c0 (clipped to the grid). */
static long pfirst(int c0)
{
    if (c0 < 0) c0 = 0;
    if (c0 > g.ncx) c0 = g.ncx;
    return cstart[(long)c0 * g.ncy];
}

/* The same in the layout before the sort (ncstart, once swapped). */
static long pfirst_in(const long *cs, int c0)
{
    if (c0 < 0) c0 = 0;
    if (c0 > g.ncx) c0 = g.ncx;
    return cs[(long)c0 * g.ncy];
}

/* Record the columns this thread gets from 'omp for schedule(runtime)'
 * (inside a parallel region); with build, list its pairs too. */
static void take_columns(struct thr *me, int build)
{
    int c, r;
    me->nblk = 0;
    if (build)
        me->pl.n = 0;
#pragma omp for schedule(runtime) nowait
    for (c = 0; c < g.ncx; c++) {
        if (me->nblk > 0 && me->blk[2 * me->nblk - 1] == c)
            me->blk[2 * me->nblk - 1] = c + 1;
        else {
            me->blk[2 * me->nblk] = c;
            me->blk[2 * me->nblk + 1] = c + 1;
            me->nblk++;
        }
        if (build)
            for (r = 0; r < g.ncy; r++)
                spam_sort_cell(&g, c, r, cstart, ccount, &me->pl);
    }
}

/* Zero what this thread's force array may hold: with thread sorting, its
 * columns and one column each side; with serial sorting, all of it. */
static void zero_touched_in(struct thr *me, const long *cs)
{
    int b;
    if (crit)
        return;
    if (serial_sort) {
        memset(me->ft, 0, n * sizeof *me->ft);
        return;
    }
    for (b = 0; b < me->nblk; b++) {
        long a = pfirst_in(cs, me->blk[2 * b] - 1), e = pfirst_in(cs, me->blk[2 * b + 1] + 1);
        memset(me->ft + a, 0, (e - a) * sizeof *me->ft);
    }
}

static void zero_touched(struct thr *me)
{
    zero_touched_in(me, cstart);
}

/* --- sorting ------------------------------------------------------------ */

static void sort_step(void)
{
    long c, s;
    int t;

    /* Cells and per-thread counts, over the particles of each thread's
     * columns in the old order (and the force arrays back to zero). */
#pragma omp parallel
    {
        struct thr *me = th[omp_get_thread_num()];
        int b;
        long i;
        zero_touched(me);
        memset(me->hist, 0, ncell * sizeof *me->hist);
        for (b = 0; b < me->nblk; b++)
            for (i = pfirst(me->blk[2 * b]); i < pfirst(me->blk[2 * b + 1]); i++) {
                ss[i].cell = spam_cell_of(&g, ps[i].x, ps[i].y);
                me->hist[ss[i].cell]++;
            }
    }
    /* Prefix: cell by cell, thread by thread (a stable sort: the order
     * within a cell is the old order, whatever the team). */
    s = 0;
    for (c = 0; c < ncell; c++) {
        ncstart[c] = s;
        for (t = 0; t < nthr; t++) {
            long k = th[t]->hist[c];
            th[t]->hist[c] = s;
            s += k;
        }
        ccount[c] = s - ncstart[c];
    }
    ncstart[ncell] = s;
    /* Move, then the pair lists of the new layout.  (The schedule is set
     * here, outside the region: omp_set_schedule in a region would change
     * only the calling thread's copy of the ICV.) */
    set_schedule(g.ncx);
#pragma omp parallel
    {
        struct thr *me = th[omp_get_thread_num()];
        int b;
        long i;
        for (b = 0; b < me->nblk; b++)
            for (i = pfirst(me->blk[2 * b]); i < pfirst(me->blk[2 * b + 1]); i++) {
                long d = me->hist[ss[i].cell]++;
                nps[d] = ps[i];
                nss[d] = ss[i];
            }
#pragma omp barrier
#pragma omp single
        {
            struct pos *tp = ps; struct state *ts = ss; long *tl = cstart;
            ps = nps; nps = tp;
            ss = nss; nss = ts;
            cstart = ncstart; ncstart = tl;
        }
        take_columns(me, !serial_sort);
    }
    if (serial_sort) {
        int col, r;
        gpl.n = 0;
        for (col = 0; col < g.ncx; col++)
            for (r = 0; r < g.ncy; r++)
                spam_sort_cell(&g, col, r, cstart, ccount, &gpl);
    }
}

/* --- forces and the Runge-Kutta stages ---------------------------------- */

static void pair_update(struct force *m, const struct spam_pair *p, unsigned long long *cnt)
{
    double ffx, ffy;
    if (!spam_force_xy(ps[p->i].x, ps[p->i].y, ps[p->j].x, ps[p->j].y, g.ly, &ffx, &ffy))
        return;
    (*cnt)++;
    if (crit) {
#pragma omp critical
        {
            fc[p->i].x += ffx; fc[p->i].y += ffy;
            fc[p->j].x -= ffx; fc[p->j].y -= ffy;
        }
    } else {
        m[p->i].x += ffx; m[p->i].y += ffy;
        m[p->j].x -= ffx; m[p->j].y -= ffy;
    }
}

static void stage(int s)
{
    if (serial_sort)
        set_schedule((long)gpl.n);
#pragma omp parallel
    {
        struct thr *me = th[omp_get_thread_num()];
        unsigned long long cnt = 0;
        long i, k;
        int b, t;

        if (s > 0 || serial_sort)
            zero_touched(me);
        for (b = 0; b < me->nblk; b++)
            for (i = pfirst(me->blk[2 * b]); i < pfirst(me->blk[2 * b + 1]); i++) {
                if (s == 0) {
                    rkg[i].s0[0] = ps[i].x; rkg[i].s0[1] = ps[i].y;
                    rkg[i].s0[2] = rkg[i].v[0] = ss[i].vx;
                    rkg[i].s0[3] = rkg[i].v[1] = ss[i].vy;
                }
                if (crit)
                    fc[i].x = fc[i].y = 0.0;
            }
        /* Only the shared force array needs everyone's zeroing done
         * before any pair adds to it; the rest above is the thread's own. */
        if (crit) {
#pragma omp barrier
        }
        if (serial_sort) {
            long np = (long)gpl.n;
#pragma omp for schedule(runtime)
            for (k = 0; k < np; k++)
                pair_update(me->ft, &gpl.p[k], &cnt);
        } else {
            long np = (long)me->pl.n;
            for (k = 0; k < np; k++)
                pair_update(me->ft, &me->pl.p[k], &cnt);
#pragma omp barrier
        }
        me->forces += cnt;
        for (b = 0; b < me->nblk; b++)
            for (i = pfirst(me->blk[2 * b]); i < pfirst(me->blk[2 * b + 1]); i++) {
                double sx, sy;
                struct rk *q = &rkg[i];
                if (crit) {
                    sx = fc[i].x; sy = fc[i].y;
                } else {
                    sx = sy = 0.0;
                    for (t = 0; t < nthr; t++) {
                        sx += th[t]->ft[i].x;
                        sy += th[t]->ft[i].y;
                    }
                }
                spam_rk_stage(s, &ps[i].x, &ps[i].y, &q->v[0], &q->v[1], q->s0, q->acc, sx, sy);
                if (s == 3) {
                    spam_boundary(&g, &ps[i].x, &ps[i].y, &q->v[0]);
                    ss[i].vx = q->v[0];
                    ss[i].vy = q->v[1];
                }
            }
    }
}

/* --- thread sorting: the whole time loop in one parallel region --------- */

/* With per-thread pair lists a thread needs the others only where their
 * columns meet its own, so the time loop runs in one parallel region, and
 * a step has ten barriers (three in the sort, two per Runge-Kutta stage but
 * the last): under the DSM each is a round of diffs and write notices.
 * The initial thread takes the times at barriers (sort, then the stages). */
static void run_fused(long steps, double *t_sort, double *t_force)
{
    double ts = 0.0, tf = 0.0;
#pragma omp parallel
    {
        struct thr *me = th[omp_get_thread_num()];
        unsigned long long cnt = 0;
        double t0 = 0.0, t1 = 0.0;
        long st, i, k;
        int b, s, t;

        for (st = 0; st < steps; st++) {
            const long *old = cstart;   /* the single below swaps it */
#pragma omp master
            t0 = omp_get_wtime();
            /* Count the cells of its own particles (old layout). */
            memset(me->hist, 0, ncell * sizeof *me->hist);
            for (b = 0; b < me->nblk; b++)
                for (i = pfirst(me->blk[2 * b]); i < pfirst(me->blk[2 * b + 1]); i++) {
                    ss[i].cell = spam_cell_of(&g, ps[i].x, ps[i].y);
                    me->hist[ss[i].cell]++;
                }
#pragma omp barrier
            /* Everyone's last reduction is done: clear its force array. */
            zero_touched_in(me, old);
#pragma omp single
            {
                long c, sum = 0;
                struct pos *tp = ps; struct state *tq = ss; long *tl = cstart;
                for (c = 0; c < ncell; c++) {
                    ncstart[c] = sum;
                    for (t = 0; t < nthr; t++) {
                        long h = th[t]->hist[c];
                        th[t]->hist[c] = sum;
                        sum += h;
                    }
                    ccount[c] = sum - ncstart[c];
                }
                ncstart[ncell] = sum;
                /* The new layout becomes ps, ss, cstart; the old one is
                 * read from nps, nss, ncstart by the move below. */
                ps = nps; nps = tp;
                ss = nss; nss = tq;
                cstart = ncstart; ncstart = tl;
            }
            for (b = 0; b < me->nblk; b++)
                for (i = pfirst_in(ncstart, me->blk[2 * b]);
                     i < pfirst_in(ncstart, me->blk[2 * b + 1]); i++) {
                    long d = me->hist[nss[i].cell]++;
                    ps[d] = nps[i];
                    ss[d] = nss[i];
                }
            take_columns(me, 1);
#pragma omp barrier
#pragma omp master
            {
                t1 = omp_get_wtime();
                ts += t1 - t0;
            }
            /* Its particles' RK values live in an array of its own, in the
             * order it visits them: only the positions (which the
             * neighbours read) are written to shared pages every stage,
             * the velocities once a step. */
            k = 0;
            for (b = 0; b < me->nblk; b++)
                k += pfirst(me->blk[2 * b + 1]) - pfirst(me->blk[2 * b]);
            if (k > me->nrk) {
                free(me->rk);
                me->nrk = k + k / 4 + 64;
                me->rk = malloc(me->nrk * sizeof *me->rk);
                if (!me->rk)
                    obench_fatal("out of memory for a thread's RK values");
            }
            for (s = 0; s < 4; s++) {
                struct rk *q = me->rk;
                if (s > 0)
                    zero_touched(me);
                if (s == 0)
                    for (b = 0; b < me->nblk; b++)
                        for (i = pfirst(me->blk[2 * b]); i < pfirst(me->blk[2 * b + 1]); i++, q++) {
                            q->s0[0] = ps[i].x; q->s0[1] = ps[i].y;
                            q->s0[2] = q->v[0] = ss[i].vx;
                            q->s0[3] = q->v[1] = ss[i].vy;
                        }
                q = me->rk;
                for (k = 0; k < (long)me->pl.n; k++)
                    pair_update(me->ft, &me->pl.p[k], &cnt);
#pragma omp barrier
                for (b = 0; b < me->nblk; b++)
                    for (i = pfirst(me->blk[2 * b]); i < pfirst(me->blk[2 * b + 1]); i++, q++) {
                        double sx, sy;
                        if (crit) {
                            /* read and cleared by its owner alone: zero
                             * again before the next stage's pairs */
                            sx = fc[i].x; sy = fc[i].y;
                            fc[i].x = fc[i].y = 0.0;
                        } else {
                            sx = sy = 0.0;
                            for (t = 0; t < nthr; t++) {
                                sx += th[t]->ft[i].x;
                                sy += th[t]->ft[i].y;
                            }
                        }
                        spam_rk_stage(s, &ps[i].x, &ps[i].y, &q->v[0], &q->v[1], q->s0,
                                      q->acc, sx, sy);
                        if (s == 3) {
                            spam_boundary(&g, &ps[i].x, &ps[i].y, &q->v[0]);
                            ss[i].vx = q->v[0];
                            ss[i].vy = q->v[1];
                        }
                    }
                if (s < 3) {
#pragma omp barrier
                }
            }
#pragma omp master
            tf += omp_get_wtime() - t1;
        }
        me->forces += cnt;
    }
    *t_sort = ts;
    *t_force = tf;
}

/* --- set-up: the initial state, its first sort, the parallel first touch */

static void setup(double *ix, double *iy, double *ivx, double *ivy)
{
    long i, c, *pos = malloc(ncell * sizeof *pos);
    long *order = malloc(n * sizeof *order);

    if (!pos || !order)
        obench_fatal("out of memory");
    memset(ccount, 0, ncell * sizeof *ccount);
    for (i = 0; i < n; i++)
        ccount[spam_cell_of(&g, ix[i], iy[i])]++;
    for (c = 0, i = 0; c < ncell; c++) {
        cstart[c] = pos[c] = i;
        i += ccount[c];
    }
    cstart[ncell] = n;
    for (i = 0; i < n; i++)
        order[pos[spam_cell_of(&g, ix[i], iy[i])]++] = i;
    if (balanced)
        balance_blocks(order, ix, iy);
    else
        set_schedule(g.ncx);
#pragma omp parallel
    {
        struct thr *me;
        int b;
        long k;
        /* Each thread allocates and first touches what is its own. */
        me = calloc(1, sizeof *me);
        if (!me)
            obench_fatal("out of memory for a thread's record");
        th[omp_get_thread_num()] = me;
        me->blk = malloc(2 * (g.ncx + 1) * sizeof *me->blk);
        me->hist = calloc(ncell, sizeof *me->hist);
        me->ft = crit || balanced ? NULL : calloc(n, sizeof *me->ft);
        if (!me->blk || !me->hist || (!crit && !balanced && !me->ft))
            obench_fatal("out of memory for a thread's arrays");
        if (balanced) {
            setup_block(me, order, ix, iy, ivx, ivy);
        } else {
            take_columns(me, 0);
#pragma omp barrier
            for (b = 0; b < me->nblk; b++)
                for (k = pfirst(me->blk[2 * b]); k < pfirst(me->blk[2 * b + 1]); k++) {
                    long j = order[k];
                    memset(&ss[k], 0, sizeof ss[k]);
                    memset(&nss[k], 0, sizeof nss[k]);
                    ps[k].x = ix[j]; ps[k].y = iy[j];
                    nps[k].x = nps[k].y = 0.0;
                    ss[k].vx = ivx[j]; ss[k].vy = ivy[j]; ss[k].id = j;
                    if (crit)
                        fc[k].x = fc[k].y = 0.0;
                }
        }
    }
    free(pos);
    free(order);
}

static void *xcalloc(size_t k, size_t sz)
{
    void *p = malloc(k * sz + 1);
    if (!p)
        obench_fatal("out of memory (%zu bytes)", k * sz);
    return p;
}

int main(int argc, char **argv)
{
    double *ix, *iy, *ivx, *ivy, e0, e1, sum, rel, t0, t1, loop, t_force = 0, t_sort = 0;
    unsigned long long total = 0, mx = 0;
    char metric[64];
    long st, i;
    int t;

    obench_start(argc, argv, "spam_omp",
                 "SPAM shock wave (paper 000) as a plain OpenMP program.", opts);
    balanced = !strcmp(opt_schedule, "balanced");
    if (!strcmp(opt_force, "auto"))
        opt_force = balanced ? "owner" : "reduction";
    crit = !strcmp(opt_force, "critical");
    serial_sort = !strcmp(opt_sorting, "serial");
    if (!balanced && strcmp(opt_schedule, "static") && strcmp(opt_schedule, "cyclic") &&
        strcmp(opt_schedule, "dynamic"))
        obench_fatal("--schedule '%s': balanced, static, cyclic or dynamic", opt_schedule);
    if (!serial_sort && strcmp(opt_sorting, "thread"))
        obench_fatal("--sorting '%s': thread or serial", opt_sorting);
    if (balanced && strcmp(opt_force, "owner"))
        obench_fatal("--force %s needs --schedule static, cyclic or dynamic (with balanced each"
                     " thread sums its own particles' forces: --force owner)", opt_force);
    if (balanced && serial_sort)
        obench_fatal("--sorting serial needs --schedule static, cyclic or dynamic (balanced"
                     " lists pairs per thread)");
    if (!balanced && !crit && strcmp(opt_force, "reduction"))
        obench_fatal("--force '%s': reduction or critical (owner: --schedule balanced)", opt_force);
    if (opt_particles < 100 || opt_steps < 1 || opt_blocks < 1)
        obench_fatal("--particles >= 100, --steps >= 1 and --blocks >= 1, please");
    nthr = obench_team_size();
    spam_geom_init(&g, opt_particles);
    n = g.n;
    ncell = (long)g.ncx * g.ncy;
    if (balanced && g.ncx < 2 * nthr)
        obench_fatal("--schedule balanced needs two columns of cells per thread (%d columns,"
                     " %d threads): use --schedule cyclic", g.ncx, nthr);
    printf("spam_omp: %ld particles, %.1f x %.0f, %d x %d cells, %ld steps, %d threads, runtime %s,"
           " force %s, schedule %s, sorting %s\n", n, g.lx, g.ly, g.ncx, g.ncy, opt_steps, nthr,
           BENCH_OMP_RUNTIME, opt_force, opt_schedule, opt_sorting);
    fflush(stdout);

    ix = xcalloc(n, sizeof *ix); iy = xcalloc(n, sizeof *iy);
    ivx = xcalloc(n, sizeof *ivx); ivy = xcalloc(n, sizeof *ivy);
    if (!balanced) {
        ps = xcalloc(n, sizeof *ps); nps = xcalloc(n, sizeof *nps);
        ss = xcalloc(n, sizeof *ss); nss = xcalloc(n, sizeof *nss);
        fc = xcalloc(n, sizeof *fc);
    }
    rkg = serial_sort ? xcalloc(n, sizeof *rkg) : NULL;
    cstart = xcalloc(ncell + 1, sizeof *cstart);
    ncstart = xcalloc(ncell + 1, sizeof *ncstart);
    ccount = xcalloc(ncell, sizeof *ccount);
    th = calloc(nthr, sizeof *th);
    if (!th)
        obench_fatal("out of memory");
    if (balanced)
        spam_balanced_init(&g, n, nthr, th, cstart, ccount);

    spam_initial(&g, (uint64_t)opt_seed, ix, iy, ivx, ivy);
    e0 = spam_energy(&g, ix, iy, ivx, ivy);
    setup(ix, iy, ivx, ivy);

    t0 = omp_get_wtime();
    if (serial_sort) {
        for (st = 0; st < opt_steps; st++) {
            int s;
            t1 = omp_get_wtime();
            sort_step();
            t_sort += omp_get_wtime() - t1;
            t1 = omp_get_wtime();
            for (s = 0; s < 4; s++)
                stage(s);
            t_force += omp_get_wtime() - t1;
        }
    } else if (balanced) {
        run_balanced(opt_steps, &t_sort, &t_force);
    } else {
        run_fused(opt_steps, &t_sort, &t_force);
    }
    loop = omp_get_wtime() - t0;

    if (balanced) {
        long got = spam_balanced_collect(opt_steps, ix, iy, ivx, ivy);
        if (got != n)
            obench_fatal("the blocks hold %ld particles, not %ld", got, n);
    } else {
        for (i = 0; i < n; i++) {
            long k = ss[i].id;
            ix[k] = ps[i].x; iy[k] = ps[i].y; ivx[k] = ss[i].vx; ivy[k] = ss[i].vy;
        }
    }
    e1 = spam_energy(&g, ix, iy, ivx, ivy);
    sum = spam_checksum(n, ix, iy);
    rel = fabs(e1 - e0) / fabs(e0);
    printf("  energy start %.12g  end %.12g  relative drift %.3g (limit %g)%s\n", e0, e1, rel,
           SPAM_ETOL, rel < SPAM_ETOL ? "" : "  NOT CONSERVED");
    printf("  checksum %.15g\n", sum);
    printf("  time per step %.3f ms (%ld steps, %.3f s)\n", 1e3 * loop / opt_steps, opt_steps, loop);
    printf("  shares: force stages %.1f%%  sorting %.1f%%  other %.1f%%\n", 100 * t_force / loop,
           100 * t_sort / loop, 100 * (loop - t_force - t_sort) / loop);
    printf("  force computations per step, per thread:");
    for (t = 0; t < nthr; t++) {
        printf(" %.0f", (double)th[t]->forces / opt_steps);
        total += th[t]->forces;
        if (th[t]->forces > mx)
            mx = th[t]->forces;
    }
    printf("\n  force imbalance (max / mean over threads) %.4f\n",
           (double)mx * nthr / (double)total);
    if (balanced) {
        /* A pair across a block edge is computed by both blocks' threads
         * (each adds the force to its own particle only), so it is in
         * both threads' counts above: the distinct pairs are fewer. */
        unsigned long long cross = 0;
        printf("  blocks (columns):");
        for (t = 0; t < nthr; t++) {
            int lo, hi;
            spam_balanced_block(t, &lo, &hi);
            printf(" [%d, %d)", lo, hi);
            cross += th[t]->cross;
        }
        printf("\n  cross-edge pairs per step %.0f, computed by both sides and counted"
               " once per side above; distinct force computations per step %.0f\n",
               (double)cross / 2 / opt_steps, (double)(total - cross / 2) / opt_steps);
    }

    obench_param("particles", n);
    obench_param("steps", opt_steps);
    obench_param("blocks", opt_blocks);
    snprintf(metric, sizeof metric, "omp_%s_step_ms", BENCH_OMP_RUNTIME);
    obench_result(metric, 1e3 * loop / opt_steps, "ms");
    obench_result("step_ms", 1e3 * loop / opt_steps, "ms");
    obench_result_exact("energy_start", e0, "energy");
    obench_result_exact("energy_end", e1, "energy");
    obench_result("energy_drift", rel, "ratio");
    obench_result_exact("checksum", sum, "sum");
    obench_result("force_share", t_force / loop, "ratio");
    obench_result("sort_share", t_sort / loop, "ratio");
    obench_result("force_imbalance", (double)mx * nthr / (double)total, "ratio");
    for (t = 0; t < nthr; t++) {
        snprintf(metric, sizeof metric, "forces_thread%d", t);
        obench_result(metric, (double)th[t]->forces / opt_steps, "per_step");
    }
    if (balanced) {
        unsigned long long cross = 0;
        for (t = 0; t < nthr; t++)
            cross += th[t]->cross;
        obench_result("forces_cross_edge", (double)cross / 2 / opt_steps, "per_step");
        obench_result("forces_distinct", (double)(total - cross / 2) / opt_steps, "per_step");
    }
    obench_emit();
    if (!(rel < SPAM_ETOL))
        obench_fatal("energy not conserved: relative drift %g >= %g", rel, SPAM_ETOL);
    return 0;
}
