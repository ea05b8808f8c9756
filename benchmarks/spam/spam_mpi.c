/*
 * spam_mpi.c - SPAM (paper 000) with MPI, in the forms the paper compares:
 *   sequential   one rank, one thread (--mapping does not matter);
 *   MPI-only     R ranks of one thread: the columns of cells mapped to
 *                ranks with the flat mapping (R blocks of columns) or the
 *                cyclic mapping (--blocks K per rank, R*K blocks dealt
 *                round-robin); explicit exchange of the boundary columns'
 *                particles (ghosts) at every Runge-Kutta stage, the ghosts'
 *                forces (Newton's third law) sent back, and migration of
 *                particles that left the rank's columns after each step;
 *   hybrid       the same with OMP_NUM_THREADS > 1 threads per rank: the
 *                force loop under '#pragma omp for schedule(runtime)'
 *                (--schedule static | cyclic = static with a chunk of
 *                npair/(K*threads) | dynamic with that chunk), forces summed
 *                with '#pragma omp critical' or an array reduction (one force
 *                array per thread, added up afterwards; --force), and the
 *                sorting by one thread or per thread (--sorting thread: each
 *                thread lists the pairs of the columns it gets, and the force
 *                loop then shares out each thread's list in turn, as the
 *                paper's section 4.3.3 did).
 * The physics, initial state, energy and checksum are spam.c's.  Rank 0
 * prints the results: energy at start and end, checksum of positions, time
 * per step (the 50 steps, after the initial distribution: the paper's
 * "excluding remapping"), its shares (force / sorting / communication /
 * other), force computations per step per process and per thread, and then
 * one JSON object per result.  Threads: the main thread of each rank, and
 * OpenMP's team inside the force loop, the sorting and the RK update; only
 * the main thread calls MPI (MPI_THREAD_FUNNELED).
 */
#include "spam.h"
#include "../json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

static long opt_particles = 43200, opt_steps = 50, opt_blocks = 4, opt_seed = 1;
static const char *opt_mapping = "cyclic", *opt_force = "reduction";
static const char *opt_schedule = "static", *opt_sorting = "serial";

static int rank, nranks, nthreads;
static struct spam_geom g;
static int *owner;            /* column -> rank */

/* Owned particles [0, nown) then ghosts [nown, nown + nghost). */
static long nown, nghost, cap;
static double *x, *y, *vx, *vy, *s0, *acc, *fx, *fy;
static long *id;
static long *cstart, *ccount;        /* per cell (owned and ghost cells) */
static double **tfx, **tfy;          /* per-thread force arrays (reduction) */
static long tcap;

/* Ghost exchange of the step: per peer, the owned particles sent (indices)
 * and the ghosts received (counts, in peer order). */
static int *scount, *rcount;
static long *sidx, nsend;
static double *sbuf, *rbuf;
static long sbuf_cap, rbuf_cap;

/* Pair lists: one (serial sorting) or one per thread. */
static struct spam_plist *plist;
static int nlists;

/* Instrumentation. */
static double t_force, t_sort, t_comm;
static unsigned long long *fcount_thread;   /* per thread, whole run */

static void die(const char *msg)
{
    fprintf(stderr, "spam (rank %d): %s\n", rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

static void grow(long need)
{
    long c = cap;
    if (need <= cap)
        return;
    while (c < need)
        c = c ? 2 * c : 1024;
    x = realloc(x, c * sizeof *x);
    y = realloc(y, c * sizeof *y);
    vx = realloc(vx, c * sizeof *vx);
    vy = realloc(vy, c * sizeof *vy);
    fx = realloc(fx, c * sizeof *fx);
    fy = realloc(fy, c * sizeof *fy);
    id = realloc(id, c * sizeof *id);
    s0 = realloc(s0, 4 * c * sizeof *s0);
    acc = realloc(acc, 4 * c * sizeof *acc);
    if (!x || !y || !vx || !vy || !fx || !fy || !id || !s0 || !acc)
        die("out of memory for particles");
    cap = c;
}

static void *grow_buf(void *p, long *bcap, long need, size_t elem)
{
    if (need <= *bcap)
        return p;
    *bcap = need * 2 + 64;
    p = realloc(p, *bcap * elem);
    if (!p)
        die("out of memory for a message buffer");
    return p;
}

static int col_of(double xx)
{
    return spam_cell_of(&g, xx, 0.0) / g.ncy;
}

static void make_mapping(void)
{
    int c;
    owner = xmalloc(g.ncx * sizeof *owner);
    for (c = 0; c < g.ncx; c++) {
        if (!strcmp(opt_mapping, "flat")) {
            owner[c] = (int)((long)c * nranks / g.ncx);
        } else {
            long nb = opt_blocks * nranks;
            if (nb > g.ncx)
                nb = g.ncx;
            owner[c] = (int)(((long)c * nb / g.ncx) % nranks);
        }
    }
}

/* --- sorting: counting sort of the owned particles by cell, ghosts, pairs */

static void counting_sort(void)
{
    long nc = (long)g.ncx * g.ncy, i, k;
    long *cell = xmalloc(nown * sizeof *cell), *pos = xmalloc(nc * sizeof *pos);
    double *nx = xmalloc(cap * sizeof *nx), *ny = xmalloc(cap * sizeof *ny);
    double *nvx = xmalloc(cap * sizeof *nvx), *nvy = xmalloc(cap * sizeof *nvy);
    long *nid = xmalloc(cap * sizeof *nid), sum = 0;

    memset(ccount, 0, nc * sizeof *ccount);
    for (i = 0; i < nown; i++) {
        cell[i] = spam_cell_of(&g, x[i], y[i]);
        ccount[cell[i]]++;
    }
    for (k = 0; k < nc; k++) {
        if (owner[k / g.ncy] == rank) {
            cstart[k] = sum;
            sum += ccount[k];
        }
        pos[k] = cstart[k];
    }
    for (i = 0; i < nown; i++) {
        long d = pos[cell[i]]++;
        nx[d] = x[i]; ny[d] = y[i]; nvx[d] = vx[i]; nvy[d] = vy[i]; nid[d] = id[i];
    }
    memcpy(x, nx, nown * sizeof *x);
    memcpy(y, ny, nown * sizeof *y);
    memcpy(vx, nvx, nown * sizeof *vx);
    memcpy(vy, nvy, nown * sizeof *vy);
    memcpy(id, nid, nown * sizeof *id);
    free(cell); free(pos); free(nx); free(ny); free(nvx); free(nvy); free(nid);
}

/* Does peer p need my column c as a ghost column (c next to one of its)? */
static int sends_to(int c, int p)
{
    return owner[c] == rank && p != rank &&
           ((c > 0 && owner[c - 1] == p) || (c + 1 < g.ncx && owner[c + 1] == p));
}

static void alltoallv_d(const double *sb, const int *sc, const int *sd, double *rb,
                        const int *rc, const int *rd)
{
    double t0 = spam_now();
    MPI_Alltoallv(sb, sc, sd, MPI_DOUBLE, rb, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD);
    t_comm += spam_now() - t0;
}

static void displs(const int *cnt, int *dsp)
{
    int p, s = 0;
    for (p = 0; p < nranks; p++) {
        dsp[p] = s;
        s += cnt[p];
    }
}

/* Build the ghost exchange of this step and receive the ghosts' cells. */
static void setup_ghosts(void)
{
    int p, c, r;
    long k, n = 0, tot;
    int *sc = xmalloc(nranks * sizeof *sc), *rc = xmalloc(nranks * sizeof *rc);
    int *sd = xmalloc(nranks * sizeof *sd), *rd = xmalloc(nranks * sizeof *rd);
    double *hs, *hr;
    long hn = 0;

    /* Headers: the cell counts of each column sent, in (peer, column) order. */
    for (p = 0; p < nranks; p++) {
        sc[p] = rc[p] = 0;
        for (c = 0; c < g.ncx; c++) {
            if (sends_to(c, p))
                sc[p] += g.ncy;
            if (owner[c] == p && p != rank &&
                ((c > 0 && owner[c - 1] == rank) || (c + 1 < g.ncx && owner[c + 1] == rank)))
                rc[p] += g.ncy;
        }
    }
    displs(sc, sd);
    displs(rc, rd);
    hs = xmalloc((sd[nranks - 1] + sc[nranks - 1] + 1) * sizeof *hs);
    hr = xmalloc((rd[nranks - 1] + rc[nranks - 1] + 1) * sizeof *hr);
    nsend = 0;
    for (p = 0; p < nranks; p++)
        for (c = 0; c < g.ncx; c++)
            if (sends_to(c, p))
                for (r = 0; r < g.ncy; r++) {
                    hs[hn++] = (double)ccount[c * g.ncy + r];
                    nsend += ccount[c * g.ncy + r];
                }
    alltoallv_d(hs, sc, sd, hr, rc, rd);

    /* The send list, and the ghosts' cells. */
    sidx = realloc(sidx, (nsend + 1) * sizeof *sidx);
    if (!sidx)
        die("out of memory");
    n = 0;
    for (p = 0; p < nranks; p++) {
        scount[p] = 0;
        for (c = 0; c < g.ncx; c++)
            if (sends_to(c, p))
                for (r = 0; r < g.ncy; r++) {
                    long cc = c * g.ncy + r;
                    for (k = cstart[cc]; k < cstart[cc] + ccount[cc]; k++) {
                        sidx[n++] = k;
                        scount[p]++;
                    }
                }
    }
    hn = 0;
    tot = nown;
    for (p = 0; p < nranks; p++) {
        rcount[p] = 0;
        for (c = 0; c < g.ncx; c++)
            if (owner[c] == p && p != rank &&
                ((c > 0 && owner[c - 1] == rank) || (c + 1 < g.ncx && owner[c + 1] == rank)))
                for (r = 0; r < g.ncy; r++) {
                    long cc = c * g.ncy + r;
                    ccount[cc] = (long)hr[hn++];
                    cstart[cc] = tot;
                    tot += ccount[cc];
                    rcount[p] += (int)ccount[cc];
                }
    }
    nghost = tot - nown;
    grow(tot);
    free(sc); free(rc); free(sd); free(rd); free(hs); free(hr);
}

/* Ghost positions (forward) before a force evaluation. */
static void send_positions(void)
{
    int sc2[nranks], sd2[nranks], rc2[nranks], rd2[nranks], p;
    long k;

    for (p = 0; p < nranks; p++) {
        sc2[p] = 2 * scount[p];
        rc2[p] = 2 * rcount[p];
    }
    displs(sc2, sd2);
    displs(rc2, rd2);
    sbuf = grow_buf(sbuf, &sbuf_cap, 2 * nsend + 1, sizeof *sbuf);
    rbuf = grow_buf(rbuf, &rbuf_cap, 2 * nghost + 1, sizeof *rbuf);
    for (k = 0; k < nsend; k++) {
        sbuf[2 * k] = x[sidx[k]];
        sbuf[2 * k + 1] = y[sidx[k]];
    }
    alltoallv_d(sbuf, sc2, sd2, rbuf, rc2, rd2);
    for (k = 0; k < nghost; k++) {
        x[nown + k] = rbuf[2 * k];
        y[nown + k] = rbuf[2 * k + 1];
    }
}

/* Ghost forces (reverse) after a force evaluation: added to their owners. */
static void return_forces(void)
{
    int sc2[nranks], sd2[nranks], rc2[nranks], rd2[nranks], p;
    long k;

    for (p = 0; p < nranks; p++) {
        sc2[p] = 2 * rcount[p];
        rc2[p] = 2 * scount[p];
    }
    displs(sc2, sd2);
    displs(rc2, rd2);
    sbuf = grow_buf(sbuf, &sbuf_cap, 2 * nghost + 1, sizeof *sbuf);
    rbuf = grow_buf(rbuf, &rbuf_cap, 2 * nsend + 1, sizeof *rbuf);
    for (k = 0; k < nghost; k++) {
        sbuf[2 * k] = fx[nown + k];
        sbuf[2 * k + 1] = fy[nown + k];
    }
    alltoallv_d(sbuf, sc2, sd2, rbuf, rc2, rd2);
    for (k = 0; k < nsend; k++) {
        fx[sidx[k]] += rbuf[2 * k];
        fy[sidx[k]] += rbuf[2 * k + 1];
    }
}

static void set_schedule(long n)
{
    long chunk = n / (opt_blocks * nthreads);
    if (chunk < 1)
        chunk = 1;
    if (!strcmp(opt_schedule, "static"))
        omp_set_schedule(omp_sched_static, 0);
    else if (!strcmp(opt_schedule, "cyclic"))
        omp_set_schedule(omp_sched_static, (int)chunk);
    else
        omp_set_schedule(omp_sched_dynamic, (int)chunk);
}

static void build_pairs(void)
{
    int *cols = xmalloc(g.ncx * sizeof *cols), nc = 0, c, t;

    for (c = 0; c < g.ncx; c++)
        if (owner[c] == rank)
            cols[nc++] = c;
    for (t = 0; t < nlists; t++)
        plist[t].n = 0;
    if (nlists == 1) {
        for (c = 0; c < nc; c++) {
            int r;
            for (r = 0; r < g.ncy; r++)
                spam_sort_cell(&g, cols[c], r, cstart, ccount, &plist[0]);
        }
    } else {
        set_schedule(nc);
#pragma omp parallel
        {
            struct spam_plist *l = &plist[omp_get_thread_num()];
            int k, r;
#pragma omp for schedule(runtime)
            for (k = 0; k < nc; k++)
                for (r = 0; r < g.ncy; r++)
                    spam_sort_cell(&g, cols[k], r, cstart, ccount, l);
        }
    }
    free(cols);
}

static void sort_step(void)
{
    double t0 = spam_now(), tc = t_comm;
    counting_sort();
    setup_ghosts();
    build_pairs();
    t_sort += spam_now() - t0 - (t_comm - tc);
}

/* --- forces ------------------------------------------------------------ */

static void forces(void)
{
    long ntot = nown + nghost, i;
    int crit = !strcmp(opt_force, "critical"), l;
    double t0 = spam_now();

    memset(fx, 0, ntot * sizeof *fx);
    memset(fy, 0, ntot * sizeof *fy);
    if (nthreads == 1) {
        unsigned long long cnt = 0;
        for (l = 0; l < nlists; l++) {
            const struct spam_pair *p = plist[l].p;
            size_t k, n = plist[l].n;
            for (k = 0; k < n; k++) {
                double ffx, ffy;
                if (spam_pair_force(x, y, g.ly, p[k].i, p[k].j, &ffx, &ffy)) {
                    fx[p[k].i] += ffx; fy[p[k].i] += ffy;
                    fx[p[k].j] -= ffx; fy[p[k].j] -= ffy;
                    cnt++;
                }
            }
        }
        fcount_thread[0] += cnt;
        t_force += spam_now() - t0;
        return;
    }
    if (!crit && tcap < ntot) {
        int t;
        for (t = 0; t < nthreads; t++) {
            free(tfx[t]); free(tfy[t]);
            tfx[t] = xmalloc(2 * ntot * sizeof(double));
            tfy[t] = xmalloc(2 * ntot * sizeof(double));
        }
        tcap = 2 * ntot;
    }
    if (!crit) {
#pragma omp parallel
        {
            int t = omp_get_thread_num();
            memset(tfx[t], 0, ntot * sizeof(double));
            memset(tfy[t], 0, ntot * sizeof(double));
        }
    }
    /* One shared-out loop per list, the schedule set before each region
     * (omp_set_schedule inside a region changes only the caller's ICV). */
    for (l = 0; l < nlists; l++) {
        const struct spam_pair *p = plist[l].p;
        long n = (long)plist[l].n;
        set_schedule(n);
#pragma omp parallel
        {
            int t = omp_get_thread_num();
            double *mx = crit ? fx : tfx[t], *my = crit ? fy : tfy[t];
            unsigned long long cnt = 0;
            long k;
#pragma omp for schedule(runtime)
            for (k = 0; k < n; k++) {
                double ffx, ffy;
                if (spam_pair_force(x, y, g.ly, p[k].i, p[k].j, &ffx, &ffy)) {
                    cnt++;
                    if (crit) {
#pragma omp critical
                        {
                            mx[p[k].i] += ffx; my[p[k].i] += ffy;
                            mx[p[k].j] -= ffx; my[p[k].j] -= ffy;
                        }
                    } else {
                        mx[p[k].i] += ffx; my[p[k].i] += ffy;
                        mx[p[k].j] -= ffx; my[p[k].j] -= ffy;
                    }
                }
            }
            fcount_thread[t] += cnt;
        }
    }
    if (!crit) {
#pragma omp parallel for schedule(static)
        for (i = 0; i < ntot; i++) {
            double sx = 0.0, sy = 0.0;
            int u;
            for (u = 0; u < nthreads; u++) {
                sx += tfx[u][i];
                sy += tfy[u][i];
            }
            fx[i] = sx;
            fy[i] = sy;
        }
    }
    t_force += spam_now() - t0;
}

/* --- the step ---------------------------------------------------------- */

static void migrate(void)
{
    int sc[nranks], sd[nranks], rc[nranks], rd[nranks], p;
    long i, k, keep = 0, nout = 0, nin;
    int *dest = xmalloc((nown + 1) * sizeof *dest);
    double *ob, *ib;
    double t0 = spam_now();

    for (p = 0; p < nranks; p++)
        sc[p] = 0;
    for (i = 0; i < nown; i++) {
        dest[i] = owner[col_of(x[i])];
        if (dest[i] != rank) {
            sc[dest[i]] += 5;
            nout++;
        }
    }
    MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);
    displs(sc, sd);
    displs(rc, rd);
    ob = xmalloc((5 * nout + 1) * sizeof *ob);
    nin = (rd[nranks - 1] + rc[nranks - 1]) / 5;
    ib = xmalloc((5 * nin + 1) * sizeof *ib);
    {
        int fill[nranks];
        for (p = 0; p < nranks; p++)
            fill[p] = sd[p];
        for (i = 0; i < nown; i++) {
            if (dest[i] == rank) {
                x[keep] = x[i]; y[keep] = y[i]; vx[keep] = vx[i]; vy[keep] = vy[i];
                id[keep] = id[i];
                keep++;
            } else {
                double *o = ob + fill[dest[i]];
                o[0] = (double)id[i]; o[1] = x[i]; o[2] = y[i]; o[3] = vx[i]; o[4] = vy[i];
                fill[dest[i]] += 5;
            }
        }
    }
    MPI_Alltoallv(ob, sc, sd, MPI_DOUBLE, ib, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD);
    grow(keep + nin);
    for (k = 0; k < nin; k++) {
        double *o = ib + 5 * k;
        id[keep] = (long)o[0]; x[keep] = o[1]; y[keep] = o[2]; vx[keep] = o[3]; vy[keep] = o[4];
        keep++;
    }
    nown = keep;
    free(dest); free(ob); free(ib);
    t_comm += spam_now() - t0;
}

static void step(void)
{
    long i;
    int s;

    sort_step();
    for (i = 0; i < nown; i++) {
        s0[4 * i] = x[i]; s0[4 * i + 1] = y[i]; s0[4 * i + 2] = vx[i]; s0[4 * i + 3] = vy[i];
    }
    for (s = 0; s < 4; s++) {
        if (nranks > 1)
            send_positions();
        forces();
        if (nranks > 1)
            return_forces();
#pragma omp parallel for schedule(static) if (nthreads > 1)
        for (i = 0; i < nown; i++)
            spam_rk_stage(s, &x[i], &y[i], &vx[i], &vy[i], &s0[4 * i], &acc[4 * i],
                          fx[i], fy[i]);
    }
    for (i = 0; i < nown; i++)
        spam_boundary(&g, &x[i], &y[i], &vx[i]);
    if (nranks > 1)
        migrate();
}

/* Every particle on rank 0, indexed by id (valid on rank 0). */
static void gather(double *gx, double *gy, double *gvx, double *gvy)
{
    int cnt = (int)(5 * nown), *rc = NULL, *rd = NULL, p;
    double *b = xmalloc((5 * nown + 1) * sizeof *b), *all = NULL;
    long i;

    for (i = 0; i < nown; i++) {
        b[5 * i] = (double)id[i]; b[5 * i + 1] = x[i]; b[5 * i + 2] = y[i];
        b[5 * i + 3] = vx[i]; b[5 * i + 4] = vy[i];
    }
    if (rank == 0) {
        rc = xmalloc(nranks * sizeof *rc);
        rd = xmalloc(nranks * sizeof *rd);
    }
    MPI_Gather(&cnt, 1, MPI_INT, rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        displs(rc, rd);
        all = xmalloc((5 * g.n + 1) * sizeof *all);
        if (rd[nranks - 1] + rc[nranks - 1] != 5 * g.n)
            die("particles were lost or duplicated");
    }
    MPI_Gatherv(b, cnt, MPI_DOUBLE, all, rc, rd, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (p = 0; p < g.n; p++) {
            double *o = all + 5 * p;
            long k = (long)o[0];
            gx[k] = o[1]; gy[k] = o[2]; gvx[k] = o[3]; gvy[k] = o[4];
        }
        free(all); free(rc); free(rd);
    }
    free(b);
}

/* --- options and output ------------------------------------------------ */

struct opt { const char *name; int is_long; void *v; const char *help; };
static const struct opt opts[] = {
    { "particles", 1, &opt_particles, "number of particles (default 43200)" },
    { "steps", 1, &opt_steps, "time steps (default 50)" },
    { "mapping", 0, &opt_mapping, "flat | cyclic (default cyclic)" },
    { "blocks", 1, &opt_blocks, "cyclic: blocks per rank; cyclic/dynamic schedule: chunks per thread (default 4)" },
    { "force", 0, &opt_force, "reduction | critical (threads > 1; default reduction)" },
    { "schedule", 0, &opt_schedule, "static | cyclic | dynamic (force loop; default static)" },
    { "sorting", 0, &opt_sorting, "serial | thread (default serial)" },
    { "seed", 1, &opt_seed, "seed of the initial state (default 1)" },
    { 0, 0, 0, 0 }
};

static void usage_exit(int code, const char *why)
{
    const struct opt *o;
    if (rank == 0) {
        if (why)
            fprintf(stderr, "spam: %s\n", why);
        fprintf(code ? stderr : stdout,
                "usage: mpiexec -n R spam [options]  (OMP_NUM_THREADS threads per rank)\n");
        for (o = opts; o->name; o++)
            fprintf(code ? stderr : stdout, "  --%-10s %s\n", o->name, o->help);
    }
    MPI_Finalize();
    exit(code);
}

static int one_of(const char *v, const char *a, const char *b, const char *c)
{
    return !strcmp(v, a) || !strcmp(v, b) || (*c && !strcmp(v, c));
}

static void parse(int argc, char **argv)
{
    int a;
    for (a = 1; a < argc; a++) {
        const struct opt *o;
        const char *arg = argv[a], *val = NULL, *eq;
        char msg[256];
        size_t len;
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h"))
            usage_exit(0, NULL);
        if (strncmp(arg, "--", 2)) {
            snprintf(msg, sizeof msg, "unexpected argument '%s'", arg);
            usage_exit(2, msg);
        }
        arg += 2;
        eq = strchr(arg, '=');
        len = eq ? (size_t)(eq - arg) : strlen(arg);
        for (o = opts; o->name; o++)
            if (strlen(o->name) == len && !strncmp(o->name, arg, len))
                break;
        if (!o->name) {
            snprintf(msg, sizeof msg, "unknown option '%s'", argv[a]);
            usage_exit(2, msg);
        }
        if (eq)
            val = eq + 1;
        else if (a + 1 < argc)
            val = argv[++a];
        else {
            snprintf(msg, sizeof msg, "--%s needs a value", o->name);
            usage_exit(2, msg);
        }
        if (o->is_long) {
            char *end;
            long v = strtol(val, &end, 10);
            if (*end || v < 1) {
                snprintf(msg, sizeof msg, "--%s '%s': want a whole number >= 1", o->name, val);
                usage_exit(2, msg);
            }
            *(long *)o->v = v;
        } else {
            *(const char **)o->v = val;
        }
    }
    if (!one_of(opt_mapping, "flat", "cyclic", ""))
        usage_exit(2, "--mapping: flat or cyclic");
    if (!one_of(opt_force, "reduction", "critical", ""))
        usage_exit(2, "--force: reduction or critical");
    if (!one_of(opt_schedule, "static", "cyclic", "dynamic"))
        usage_exit(2, "--schedule: static, cyclic or dynamic");
    if (!one_of(opt_sorting, "serial", "thread", ""))
        usage_exit(2, "--sorting: serial or thread");
    if (opt_particles < 100)
        usage_exit(2, "--particles: at least 100");
}

static char form[16];

static void result(const char *metric, double v, const char *unit, int exact)
{
    printf("{\"bench\":\"spam\",\"metric\":\"%s\",\"value\":", metric);
    json_number(v, exact);
    printf(",\"unit\":\"%s\",\"form\":\"%s\",\"mapping\":\"%s\",\"ranks\":%d,\"threads\":%d,"
           "\"force\":\"%s\",\"schedule\":\"%s\",\"sorting\":\"%s\",\"particles\":%ld,"
           "\"steps\":%ld,\"blocks\":%ld}\n", unit, form, opt_mapping, nranks, nthreads,
           opt_force, opt_schedule, opt_sorting, opt_particles, opt_steps, opt_blocks);
}

int main(int argc, char **argv)
{
    int provided, t, c;
    long i, st;
    double e0 = 0.0, e1, sum, t0, loop, *ax, *ay, *avx, *avy;
    unsigned long long *pc = NULL, *tc = NULL, mine;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (provided < MPI_THREAD_FUNNELED)
        die("the MPI library does not give MPI_THREAD_FUNNELED");
    parse(argc, argv);
    nthreads = omp_get_max_threads();
    spam_geom_init(&g, opt_particles);
    if (nranks > g.ncx)
        die("more ranks than columns of cells: use fewer ranks or more --particles");
    strcpy(form, nranks == 1 && nthreads == 1 ? "seq" : nthreads == 1 ? "mpi" : "hybrid");
    make_mapping();

    /* Every rank makes the whole initial state and keeps its columns. */
    ax = xmalloc(g.n * sizeof *ax); ay = xmalloc(g.n * sizeof *ay);
    avx = xmalloc(g.n * sizeof *avx); avy = xmalloc(g.n * sizeof *avy);
    spam_initial(&g, (uint64_t)opt_seed, ax, ay, avx, avy);
    if (rank == 0)
        e0 = spam_energy(&g, ax, ay, avx, avy);
    grow(g.n / nranks + 1024);
    nown = 0;
    for (i = 0; i < g.n; i++)
        if (owner[col_of(ax[i])] == rank) {
            grow(nown + 1);
            x[nown] = ax[i]; y[nown] = ay[i]; vx[nown] = avx[i]; vy[nown] = avy[i];
            id[nown] = i;
            nown++;
        }
    cstart = xmalloc((long)g.ncx * g.ncy * sizeof *cstart);
    ccount = xmalloc((long)g.ncx * g.ncy * sizeof *ccount);
    scount = xmalloc(nranks * sizeof *scount); rcount = xmalloc(nranks * sizeof *rcount);
    nlists = !strcmp(opt_sorting, "thread") && nthreads > 1 ? nthreads : 1;
    plist = calloc(nlists, sizeof *plist);
    tfx = calloc(nthreads, sizeof *tfx);
    tfy = calloc(nthreads, sizeof *tfy);
    fcount_thread = calloc(nthreads, sizeof *fcount_thread);
    if (!plist || !tfx || !tfy || !fcount_thread)
        die("out of memory");

    if (rank == 0) {
        printf("spam: %s, %ld particles, %.1f x %.0f, %d x %d cells, %ld steps, %d ranks x %d threads,"
               " mapping %s", form, g.n, g.lx, g.ly, g.ncx, g.ncy, opt_steps, nranks, nthreads,
               opt_mapping);
        if (nthreads > 1)
            printf(", force %s, schedule %s, sorting %s", opt_force, opt_schedule, opt_sorting);
        printf("\n");
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = spam_now();
    for (st = 0; st < opt_steps; st++)
        step();
    loop = spam_now() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &loop, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    gather(ax, ay, avx, avy);
    mine = 0;
    for (t = 0; t < nthreads; t++)
        mine += fcount_thread[t];
    if (rank == 0) {
        pc = xmalloc(nranks * sizeof *pc);
        tc = xmalloc((size_t)nranks * nthreads * sizeof *tc);
    }
    MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, pc, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    MPI_Gather(fcount_thread, nthreads, MPI_UNSIGNED_LONG_LONG, tc, nthreads,
               MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    {
        double sh[3] = { t_force, t_sort, t_comm };
        MPI_Reduce(rank ? sh : MPI_IN_PLACE, sh, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            t_force = sh[0] / nranks; t_sort = sh[1] / nranks; t_comm = sh[2] / nranks;
        }
    }
    if (rank == 0) {
        double step_ms = 1e3 * loop / opt_steps, mx = 0.0, mean = 0.0, rel;
        e1 = spam_energy(&g, ax, ay, avx, avy);
        sum = spam_checksum(g.n, ax, ay);
        rel = fabs(e1 - e0) / fabs(e0);
        printf("  energy start %.12g  end %.12g  relative drift %.3g (limit %g)%s\n", e0, e1, rel,
               SPAM_ETOL, rel < SPAM_ETOL ? "" : "  NOT CONSERVED");
        printf("  checksum %.15g\n", sum);
        printf("  time per step %.3f ms (%ld steps, %.3f s)\n", step_ms, opt_steps, loop);
        printf("  shares (mean over ranks): force %.1f%%  sorting %.1f%%  communication %.1f%%"
               "  other %.1f%%\n", 100 * t_force / loop, 100 * t_sort / loop, 100 * t_comm / loop,
               100 * (loop - t_force - t_sort - t_comm) / loop);
        printf("  force computations per step:\n");
        for (c = 0; c < nranks; c++) {
            double v = (double)pc[c] / opt_steps;
            printf("    rank %d: %.0f", c, v);
            if (nthreads > 1) {
                printf("  (threads:");
                for (t = 0; t < nthreads; t++)
                    printf(" %.0f", (double)tc[c * nthreads + t] / opt_steps);
                printf(")");
            }
            printf("\n");
            mean += v / nranks;
            if (v > mx)
                mx = v;
        }
        printf("  force imbalance (max / mean over ranks) %.4f\n", mx / mean);
        result("step_ms", step_ms, "ms", 0);
        result("energy_start", e0, "energy", 1);
        result("energy_end", e1, "energy", 1);
        result("energy_drift", rel, "ratio", 0);
        result("checksum", sum, "sum", 1);
        result("force_share", t_force / loop, "ratio", 0);
        result("sort_share", t_sort / loop, "ratio", 0);
        result("comm_share", t_comm / loop, "ratio", 0);
        result("force_imbalance", mx / mean, "ratio", 0);
        for (c = 0; c < nranks; c++) {
            char m[64];
            snprintf(m, sizeof m, "forces_rank%d", c);
            result(m, (double)pc[c] / opt_steps, "per_step", 0);
            if (nthreads > 1)
                for (t = 0; t < nthreads; t++) {
                    snprintf(m, sizeof m, "forces_rank%d_thread%d", c, t);
                    result(m, (double)tc[c * nthreads + t] / opt_steps, "per_step", 0);
                }
        }
        fflush(stdout);
        if (!(rel < SPAM_ETOL)) {
            fprintf(stderr, "spam: energy not conserved: relative drift %g >= %g\n", rel, SPAM_ETOL);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Finalize();
    return 0;
}
