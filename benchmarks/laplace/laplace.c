/*
 * laplace.c - paper 003's laplace benchmark: Jacobi iterations for the
 * Laplace equation on an N x N grid of doubles (default 4096 x 4096, 10
 * iterations, as in the paper), in three forms measured in the same run:
 *
 *   seq  sequential, on rank 0 alone (the other ranks sleep)      -> seq_s
 *   mpi  MPI only: rank r owns rows [r*N/R, (r+1)*N/R) and swaps one halo
 *        row with each neighbour per iteration (MPI_Sendrecv)     -> mpi_s
 *   dsm  libdsm's explicit API: u and unew come from
 *        dsm_malloc_home(..., DSM_HOME_BLOCK, 0); rank r initialises and
 *        computes the same rows as in mpi (owner computes), reads its
 *        neighbours' edge rows through the DSM, and calls dsm_barrier()
 *        after every iteration                                    -> dsm_s
 *
 * Grid and boundary (fixed, all values exact in binary):
 *   u[0][j] = 1.0 (top row); bottom row, left and right columns = 0.0;
 *   interior starts at ((i + 2*j) % 5) * 0.25, so that every page holds
 *   data that changes and a stale page would change the result.
 * One iteration: unew[i][j] = 0.25 * (u[i-1][j] + u[i+1][j] + u[i][j-1] +
 * u[i][j+1]) for 1 <= i, j <= N-2, then u and unew swap.  All three forms
 * call the same relax() and checksum() functions, so their results must be
 * bitwise identical: rank 0 computes checksum = the sum over rows, in order,
 * of each row's sum (for mpi it gathers the rows, for dsm it reads the whole
 * shared array after the timed loop), compares the forms bitwise, and the
 * arrays element by element; any difference is printed and the run exits 1.
 *
 * Times are the slowest rank's, from a barrier before the loop to the end of
 * the loop; initialisation, gathering and checksums are not timed, nor are
 * the --warmup iterations (default 1) every form runs first, so that no form
 * pays first-touch and cold-cache costs inside its timing.  The seq
 * and mpi forms run before dsm_init(), so the library's communication thread
 * does not exist yet; the dsm form calls dsm_stats_reset() after its initial
 * barrier and reads the counters right after the loop, giving the paper's
 * Tables 3/4 columns summed over ranks: rmr_ms (mean time of one RMR),
 * barrier_ms (mean time of one dsm_barrier), pages_fetched, read_faults,
 * write_faults, msgs_per_barrier; "barriers" is the count per node (every
 * node takes the same barriers).  dsm_stats_print() shows them per rank.
 *
 * Row blocks match the home blocks when the rows of a block start on a page
 * boundary (N = 4096 with 16 KiB pages: 2 pages per row).  Otherwise the
 * result is still right but the pages at the block edges are written by two
 * ranks; the program says so.  The two N x N arrays take 16*N*N bytes of
 * the shared heap: 256 MiB for N = 4096, within the default DSM_HEAP_SIZE of
 * 1G; from N = 8192 on, raise DSM_HEAP_SIZE.
 */
#include "../common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long opt_size = 4096;
static long opt_iter = 10;
static long opt_warmup = 1;
static const char *opt_forms = "seq,mpi,dsm";
static const char *opt_prefetch = "none";
static const char *opt_order = "natural";

static const struct bench_opt opts[] = {
    { "size", BENCH_OPT_LONG, &opt_size, "grid size N (N x N doubles)" },
    { "iter", BENCH_OPT_LONG, &opt_iter, "Jacobi iterations" },
    { "warmup", BENCH_OPT_LONG, &opt_warmup,
      "untimed iterations before the timed ones, in every form" },
    { "forms", BENCH_OPT_STRING, &opt_forms, "forms to run, from seq,mpi,dsm" },
    { "prefetch", BENCH_OPT_STRING, &opt_prefetch,
      "dsm form: none, explicit (dsm_prefetch of the neighbours' edge rows after "
      "each barrier, paper 003's fragment) or history (DSM_PREFETCH=history)" },
    { "order", BENCH_OPT_STRING, &opt_order,
      "dsm form: natural (rows in order) or edges-last (the rows that read a "
      "neighbour's edge row last, so that a prefetch has time to arrive)" },
    { 0, 0, 0, 0 }
};

static long n;

static double initial(long i, long j)
{
    if (i == 0)
        return 1.0;
    if (i == n - 1 || j == 0 || j == n - 1)
        return 0.0;
    return (double)((i + 2 * j) % 5) * 0.25;
}

/* Rows [i0, i1) of the grid, stored from a (a = row i0). */
static void init_rows(double *a, long i0, long i1)
{
    long i, j;

    for (i = i0; i < i1; i++)
        for (j = 0; j < n; j++)
            a[(size_t)(i - i0) * n + j] = initial(i, j);
}

/* One Jacobi sweep over nrows rows: u points at the row above the first
 * computed row (nrows + 2 rows are read), un at the first computed row.
 * Not inlined, so that every form runs exactly the same machine code. */
__attribute__((noinline))
static void relax(const double *u, double *un, long nrows)
{
    long r, j;

    for (r = 0; r < nrows; r++) {
        const double *up = u + (size_t)r * n;
        const double *uc = up + n;
        const double *ud = uc + n;
        double *o = un + (size_t)r * n;

        for (j = 1; j < n - 1; j++)
            o[j] = 0.25 * (up[j] + ud[j] + uc[j - 1] + uc[j + 1]);
    }
}

__attribute__((noinline))
static double checksum(const double *a)
{
    double total = 0.0, row;
    long i, j;

    for (i = 0; i < n; i++) {
        row = 0.0;
        for (j = 0; j < n; j++)
            row += a[(size_t)i * n + j];
        total += row;
    }
    return total;
}

/* A 64-bit FNV-1a hash of the bits of every row.  The reference form keeps
 * these instead of its whole grid: holding a second N x N grid on rank 0
 * measurably slowed rank 0's later forms on the test machine (0.21 s vs
 * 0.39-0.49 s for the same DSM loop), and the bitwise check needs no more. */
static uint64_t *row_hashes(const double *a)
{
    uint64_t *h = malloc((size_t)n * sizeof *h);
    if (!h)
        bench_fatal("out of memory");
    for (long i = 0; i < n; i++) {
        const unsigned char *b = (const unsigned char *)(a + (size_t)i * n);
        uint64_t x = 1469598103934665603ULL;
        for (size_t k = 0; k < (size_t)n * sizeof(double); k++)
            x = (x ^ b[k]) * 1099511628211ULL;
        h[i] = x;
    }
    return h;
}

/* One number for a grid, to compare with other programs' results (e.g.
 * laplace_omp): the 64-bit FNV-1a hash of the row hashes' bytes. */
static uint64_t grid_hash(const uint64_t *h)
{
    uint64_t g = 1469598103934665603ULL;

    for (long i = 0; i < n; i++) {
        const unsigned char *b = (const unsigned char *)&h[i];
        for (size_t k = 0; k < sizeof h[i]; k++)
            g = (g ^ b[k]) * 1099511628211ULL;
    }
    return g;
}

static int mismatch;

/* Compare form `name`'s result with the reference form's (rank 0). */
static void compare(const char *name, const double *a, double sum,
                    const char *ref_name, const uint64_t *ref, double ref_sum)
{
    uint64_t *h;

    if (!ref)
        return;
    if (memcmp(&sum, &ref_sum, sizeof sum) != 0) {
        printf("MISMATCH: checksum %s = %.17g but %s = %.17g\n", name, sum, ref_name, ref_sum);
        mismatch = 1;
    }
    h = row_hashes(a);
    for (long i = 0; i < n; i++)
        if (h[i] != ref[i]) {
            printf("MISMATCH: row %ld of %s differs bitwise from %s's\n", i, name, ref_name);
            mismatch = 1;
            break;
        }
    free(h);
    fflush(stdout);
}

/* Rows of rank r: [lo, hi). */
static long row_lo(int r) { return (long)r * n / bench.size; }

static double *xmalloc(size_t bytes)
{
    double *p = malloc(bytes);

    if (!p)
        bench_fatal("out of memory (%zu bytes)", bytes);
    return p;
}

/* --- seq ---------------------------------------------------------------- */

static double run_seq(double **result)
{
    size_t bytes = (size_t)n * n * sizeof(double);
    double *u, *un, *t, t0, t1;
    long it;

    u = xmalloc(bytes);
    un = xmalloc(bytes);
    init_rows(u, 0, n);
    init_rows(un, 0, n);
    t0 = bench_now();
    for (it = 0; it < opt_warmup + opt_iter; it++) {
        if (it == opt_warmup)
            t0 = bench_now();
        relax(u, un + n, n - 2);
        t = u; u = un; un = t;
    }
    t1 = bench_now();
    free(un);
    *result = u;
    return t1 - t0;
}

/* --- mpi ---------------------------------------------------------------- */

/* Returns the slowest rank's time; on rank 0 *result is the gathered grid. */
static double run_mpi(double **result)
{
    long lo = row_lo(bench.rank), hi = row_lo(bench.rank + 1), rows = hi - lo;
    long i0 = lo > 1 ? lo : 1, i1 = hi < n - 1 ? hi : n - 1;
    int up = bench.rank > 0 ? bench.rank - 1 : MPI_PROC_NULL;
    int down = bench.rank < bench.size - 1 ? bench.rank + 1 : MPI_PROC_NULL;
    size_t bytes = (size_t)(rows + 2) * n * sizeof(double);
    double *u, *un, *t, t0, elapsed, *g = NULL;
    int *counts = NULL, *displs = NULL, r;
    MPI_Datatype row;
    long it, glo, ghi;

    /* Local row k is global row lo - 1 + k: one halo row on each side. */
    u = xmalloc(bytes);
    un = xmalloc(bytes);
    memset(u, 0, bytes);
    memset(un, 0, bytes);
    glo = lo > 0 ? lo - 1 : 0;
    ghi = hi < n ? hi + 1 : n;
    init_rows(u + (size_t)(glo - (lo - 1)) * n, glo, ghi);
    init_rows(un + (size_t)(glo - (lo - 1)) * n, glo, ghi);
    MPI_Type_contiguous((int)n, MPI_DOUBLE, &row);
    MPI_Type_commit(&row);

    MPI_Barrier(bench.comm);
    t0 = bench_now();
    for (it = 0; it < opt_warmup + opt_iter; it++) {
        if (it == opt_warmup)
            t0 = bench_now();
        /* My first row goes up, the row below me comes from down; my last
         * row goes down, the row above me comes from up. */
        MPI_Sendrecv(u + n, 1, row, up, 1, u + (size_t)(rows + 1) * n, 1, row, down, 1,
                     bench.comm, MPI_STATUS_IGNORE);
        MPI_Sendrecv(u + (size_t)rows * n, 1, row, down, 2, u, 1, row, up, 2,
                     bench.comm, MPI_STATUS_IGNORE);
        if (i1 > i0)
            relax(u + (size_t)(i0 - lo) * n, un + (size_t)(i0 - lo + 1) * n, i1 - i0);
        t = u; u = un; un = t;
    }
    elapsed = bench_now() - t0;
    elapsed = bench_max_double(elapsed);

    if (bench.rank == 0) {
        g = xmalloc((size_t)n * n * sizeof(double));
        counts = malloc(bench.size * sizeof *counts);
        displs = malloc(bench.size * sizeof *displs);
        if (!counts || !displs)
            bench_fatal("out of memory");
        for (r = 0; r < bench.size; r++) {
            displs[r] = (int)row_lo(r);
            counts[r] = (int)(row_lo(r + 1) - row_lo(r));
        }
    }
    MPI_Gatherv(u + n, (int)rows, row, g, counts, displs, row, 0, bench.comm);
    MPI_Type_free(&row);
    free(counts);
    free(displs);
    free(u);
    free(un);
    *result = g;
    return elapsed;
}

/* --- dsm ---------------------------------------------------------------- */

struct dsm_run {
    double elapsed;
    struct dsm_stats sum;     /* summed over ranks (rank 0) */
    uint64_t barriers;        /* per node */
};

static int prefetch_explicit, edges_last;

/* --prefetch explicit: ask for the neighbours' edge rows of a (the grid
 * read next) that rows [i0, i1) read, as paper 003 does with
 * scash_prefetch(&u[(y_from-1)*XS], pages) and scash_prefetch(&u[y_to*XS],
 * pages).  Returns at once; the communication thread fetches them. */
static void prefetch_halo(const double *a, long lo, long hi, long i0, long i1)
{
    size_t psz = dsm_page_size(), row = (size_t)n * sizeof(double);
    long rows[2] = { i0 - 1, i1 };

    for (int k = 0; k < 2; k++) {
        long r = rows[k];
        if (r < 0 || r >= n || (r >= lo && r < hi) || i1 <= i0)
            continue;
        const char *p = (const char *)(a + (size_t)r * n);
        size_t off = (uintptr_t)p % psz, pages = (off + row + psz - 1) / psz;
        if (dsm_prefetch(p, pages) != 0)
            bench_fatal("dsm_prefetch(row %ld, %zu pages) failed", r, pages);
    }
}

/* One sweep of rows [i0, i1) (u: the whole grid, un: likewise), in the
 * chosen order; every order computes the same values. */
static void sweep(const double *u, double *un, long i0, long i1)
{
    if (i1 <= i0)
        return;
    if (!edges_last || i1 - i0 < 3) {
        relax(u + (size_t)(i0 - 1) * n, un + (size_t)i0 * n, i1 - i0);
        return;
    }
    relax(u + (size_t)i0 * n, un + (size_t)(i0 + 1) * n, i1 - i0 - 2);
    relax(u + (size_t)(i0 - 1) * n, un + (size_t)i0 * n, 1);
    relax(u + (size_t)(i1 - 2) * n, un + (size_t)(i1 - 1) * n, 1);
}

/* On rank 0, *sum_out is the checksum of the shared result, compared with
 * the reference grid (if any) while every other rank waits in a barrier. */
static struct dsm_run run_dsm(double *sum_out, const char *ref_name,
                              const uint64_t *ref, double ref_sum)
{
    size_t bytes = (size_t)n * n * sizeof(double), psz = dsm_page_size();
    long lo = row_lo(bench.rank), hi = row_lo(bench.rank + 1);
    long i0 = lo > 1 ? lo : 1, i1 = hi < n - 1 ? hi : n - 1, it;
    struct dsm_stats st;
    struct dsm_run run;
    double *u, *un, *t, t0;
    int aligned, all_aligned;

    u = dsm_malloc_home(bytes, DSM_HOME_BLOCK, 0);
    un = dsm_malloc_home(bytes, DSM_HOME_BLOCK, 0);
    if (!u || !un)
        bench_fatal("dsm_malloc_home of 2 x %zu bytes failed (DSM_HEAP_SIZE?)", bytes);

    /* Do my rows live on my pages, and only mine? */
    aligned = hi == lo || ((size_t)lo * n * sizeof(double) % psz == 0 &&
                           (size_t)hi * n * sizeof(double) % psz == 0 &&
                           dsm_home_of(u + (size_t)lo * n) == bench.rank &&
                           dsm_home_of(u + (size_t)hi * n - 1) == bench.rank);
    MPI_Allreduce(&aligned, &all_aligned, 1, MPI_INT, MPI_LAND, bench.comm);
    if (!all_aligned)
        bench_say("laplace: note: row blocks (N=%ld, %d ranks) do not fall on the %zu-byte "
                  "home pages; edge pages are written by two ranks\n", n, bench.size, psz);

    init_rows(u + (size_t)lo * n, lo, hi);
    init_rows(un + (size_t)lo * n, lo, hi);
    dsm_barrier();
    dsm_stats_reset();
    t0 = bench_now();
    if (prefetch_explicit)
        prefetch_halo(u, lo, hi, i0, i1);
    for (it = 0; it < opt_warmup + opt_iter; it++) {
        if (it == opt_warmup) {
            /* Every node just left the same barrier. */
            dsm_stats_reset();
            t0 = bench_now();
        }
        sweep(u, un, i0, i1);
        dsm_barrier();
        t = u; u = un; un = t;
        if (prefetch_explicit)
            prefetch_halo(u, lo, hi, i0, i1);
    }
    run.elapsed = bench_now() - t0;
    dsm_stats_get(&st);
    run.elapsed = bench_max_double(run.elapsed);
    run.barriers = st.barriers;
    bench_stats_sum(&st, &run.sum);
    dsm_stats_print(stdout, 0);
    fflush(stdout);

    if (bench.rank == 0) {
        *sum_out = checksum(u);
        compare("dsm", u, *sum_out, ref_name, ref, ref_sum);
    }
    dsm_barrier();
    dsm_free(un);
    dsm_free(u);
    return run;
}

/* --- main ----------------------------------------------------------------- */

static int has_form(const char *name)
{
    const char *p = opt_forms;
    size_t len = strlen(name);

    while ((p = strstr(p, name)) != NULL) {
        if ((p == opt_forms || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return 1;
        p += len;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int do_seq, do_mpi, do_dsm;
    double seq_s = NAN, mpi_s = NAN, sum_seq = NAN, sum_mpi = NAN, sum_dsm = NAN;
    double *seq_grid = NULL, *mpi_grid = NULL, ref_sum = NAN;
    uint64_t *ref = NULL;
    const char *ref_name = NULL;
    struct dsm_run d;

    bench_start(&argc, &argv, "laplace",
                "Jacobi on an N x N grid: sequential, MPI-only and libdsm, checked bitwise.",
                opts);
    n = opt_size;
    do_seq = has_form("seq");
    do_mpi = has_form("mpi");
    do_dsm = has_form("dsm");
    if ((!do_seq && !do_mpi && !do_dsm) ||
        strlen(opt_forms) != strspn(opt_forms, "seqmpidsm,") ||
        strlen(opt_forms) > (size_t)(do_seq + do_mpi + do_dsm) * 4 - 1)
        bench_fatal("--forms '%s': give a comma-separated list of seq, mpi, dsm", opt_forms);
    if (strcmp(opt_prefetch, "none") && strcmp(opt_prefetch, "explicit") &&
        strcmp(opt_prefetch, "history"))
        bench_fatal("--prefetch '%s': give none, explicit or history", opt_prefetch);
    if (strcmp(opt_order, "natural") && strcmp(opt_order, "edges-last"))
        bench_fatal("--order '%s': give natural or edges-last", opt_order);
    prefetch_explicit = !strcmp(opt_prefetch, "explicit");
    edges_last = !strcmp(opt_order, "edges-last");
    {
        /* History prefetch is the library's (DSM_PREFETCH); the others
         * must run without it to be what they say. */
        const char *env = getenv("DSM_PREFETCH");
        int hist = !strcmp(opt_prefetch, "history");
        if (hist)
            setenv("DSM_PREFETCH", "history", 1);
        else if (env && !strcmp(env, "history"))
            bench_fatal("DSM_PREFETCH=history is set but --prefetch is %s; use "
                        "--prefetch history, or unset DSM_PREFETCH", opt_prefetch);
    }
    if (n < 3 || n < bench.size)
        bench_fatal("--size %ld is too small for %d ranks (need N >= 3 and N >= ranks)",
                    n, bench.size);

    if (do_seq) {
        if (bench.rank == 0) {
            seq_s = run_seq(&seq_grid);
            sum_seq = checksum(seq_grid);
            ref = row_hashes(seq_grid), ref_sum = sum_seq, ref_name = "seq";
            free(seq_grid);
            seq_grid = NULL;
        }
        bench_idle_barrier();
    }
    if (do_mpi) {
        mpi_s = run_mpi(&mpi_grid);
        if (bench.rank == 0) {
            sum_mpi = checksum(mpi_grid);
            compare("mpi", mpi_grid, sum_mpi, ref_name, ref, ref_sum);
            if (!ref)
                ref = row_hashes(mpi_grid), ref_sum = sum_mpi, ref_name = "mpi";
            free(mpi_grid);
            mpi_grid = NULL;
        }
    }

    if (dsm_init(&argc, &argv) != 0)
        bench_fatal("dsm_init failed");
    bench_settings();
    bench_param("size", n);
    bench_param("iter", opt_iter);
    bench_param("warmup", opt_warmup);
    bench_param_str("prefetch", opt_prefetch);
    bench_param_str("order", opt_order);
    bench_say("laplace: %ld x %ld, %ld iterations, %d ranks, DSM_COMM=%s DSM_POLL=%s, "
              "page %zu bytes, forms %s, prefetch %s, order %s\n", n, n, opt_iter,
              bench.size, bench.comm_var, bench.poll_var, bench.page_size, opt_forms,
              opt_prefetch, opt_order);
    memset(&d, 0, sizeof d);
    if (do_dsm)
        d = run_dsm(&sum_dsm, ref_name, ref, ref_sum);
    dsm_finalize();

    if (bench.rank == 0) {
        const struct dsm_stats *s = &d.sum;

        if (do_seq)
            bench_say("  seq: %10.4f s  checksum %.17g\n", seq_s, sum_seq);
        if (do_mpi)
            bench_say("  mpi: %10.4f s  checksum %.17g\n", mpi_s, sum_mpi);
        if (do_dsm) {
            bench_say("  dsm: %10.4f s  checksum %.17g\n", d.elapsed, sum_dsm);
            bench_say("  dsm over the timed loop, all ranks: %llu RMRs of %.3f ms, "
                      "%llu barriers per node of %.3f ms, %.1f msgs per barrier, "
                      "%llu read and %llu write faults\n",
                      (unsigned long long)s->rmr_count,
                      s->rmr_count ? s->rmr_time / s->rmr_count * 1e3 : 0.0,
                      (unsigned long long)d.barriers,
                      s->barriers ? s->barrier_time / s->barriers * 1e3 : 0.0,
                      d.barriers ? (double)s->barrier_msgs / d.barriers : 0.0,
                      (unsigned long long)s->read_faults,
                      (unsigned long long)s->write_faults);
            bench_say("  dsm page wait %.3f ms (all ranks), prefetch (%s): %llu issued, "
                      "%llu used, %llu wasted, %llu late\n", s->page_wait_time * 1e3,
                      opt_prefetch, (unsigned long long)s->prefetch_issued,
                      (unsigned long long)s->prefetch_used,
                      (unsigned long long)s->prefetch_wasted,
                      (unsigned long long)s->prefetch_late);
        }
        if (ref)
            bench_say("  hash %016llx (of the %s grid)\n",
                      (unsigned long long)grid_hash(ref), ref_name);
        bench_say("  result: %s\n", mismatch ? "MISMATCH between forms (see above)"
                                            : "all forms agree bitwise");
        if (do_seq)
            bench_result("seq_s", seq_s, "s");
        if (do_mpi)
            bench_result("mpi_s", mpi_s, "s");
        if (do_dsm)
            bench_result("dsm_s", d.elapsed, "s");
        if (do_dsm && do_mpi)
            bench_result("dsm_over_mpi", d.elapsed / mpi_s, "ratio");
        if (do_dsm && do_seq)
            bench_result("speedup_vs_seq", seq_s / d.elapsed, "ratio");
        if (do_mpi && do_seq)
            bench_result("mpi_speedup_vs_seq", seq_s / mpi_s, "ratio");
        bench_result_exact("checksum", do_dsm ? sum_dsm : do_mpi ? sum_mpi : sum_seq, "sum");
        if (do_dsm) {
            bench_result("rmr_ms", s->rmr_count ? s->rmr_time / s->rmr_count * 1e3 : NAN, "ms");
            bench_result("barrier_ms", s->barriers ? s->barrier_time / s->barriers * 1e3 : NAN,
                         "ms");
            bench_result("barriers", (double)d.barriers, "count");
            bench_result("msgs_per_barrier",
                         d.barriers ? (double)s->barrier_msgs / d.barriers : NAN, "msgs");
            bench_result("pages_fetched", (double)s->pages_fetched, "count");
            bench_result("read_faults", (double)s->read_faults, "count");
            bench_result("write_faults", (double)s->write_faults, "count");
            /* Paper 003's Table 8: total time and page-acquisition wait
             * (summed over ranks) of the timed loop. */
            bench_result("total_s", d.elapsed, "s");
            bench_result("page_wait_ms", s->page_wait_time * 1e3, "ms");
            bench_result("prefetch_issued", (double)s->prefetch_issued, "pages");
            bench_result("prefetch_used", (double)s->prefetch_used, "pages");
            bench_result("prefetch_wasted", (double)s->prefetch_wasted, "pages");
            bench_result("prefetch_late", (double)s->prefetch_late, "faults");
        }
        bench_result("match", mismatch ? 0 : 1, "bool");
    }
    MPI_Bcast(&mismatch, 1, MPI_INT, 0, bench.comm);
    bench_emit();
    free(ref);
    bench_end();
    return mismatch ? 1 : 0;
}
