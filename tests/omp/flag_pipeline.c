/*
 * flag_pipeline.c - pipelines synchronised by flags written and read as
 * programs written for x86 do: the writer stores its block, stores its
 * flag and then flushes; the reader spins on the flag with a flush in the
 * loop and reads the block with no flush after the loop.  libgomp on x86
 * computes these right (stores become visible in program order); OpenMP
 * itself would ask for a flush before the flag store and after the spin.
 * Under the shim they rely on the ordered flush (libdsm(7), ompshim(7)
 * SYNCHRONISATION: what becomes visible in which order).
 *
 * Variants, each a wavefront: thread t computes row k of its columns once
 * thread t-1 has published row k; a value depends on its left and upper
 * neighbours, so a stale read shows against a sequential run.
 *   1. data and an int flag per thread, both global, flags next to each
 *      other (one page);
 *   2. the flags alone on pages of their own, far from the data (heap);
 *   3. two flags per thread, set one after the other, the reader waits on
 *      the second;
 *   4. a counter per thread (incremented per row) instead of a flag, and
 *      the data in main's stack frame (a shared local array);
 *   5. the flag and the data of a thread in one structure (one page for
 *      the flag and the start of the row, the flag first in memory).
 * The waits of a thread give up after WAIT_S seconds in all, with a
 * failure, so that a flag never seen fails the test instead of hanging it.
 */
#define OT_NAME "flag_pipeline"
#include <string.h>
#include "omptest.h"

#define MAXT 64
#define ROWS 60
#define CPT 40                  /* columns per thread */
#define WAIT_S 30.0
#define FAR 65536               /* bytes between flags of variant 2 */

static unsigned long f(unsigned long left, unsigned long up, long k, long j)
{
    return left * 31u + up * 17u + (unsigned long)(k * 1000 + j);
}

static unsigned long g_data[(ROWS + 1) * MAXT * CPT];
static volatile int g_flag[MAXT];

struct row_block {
    volatile int flag;
    unsigned long v[ROWS + 1][CPT];
};

static void reference(unsigned long *ref, long cols)
{
    for (long j = 0; j < cols; j++)
        ref[j] = (unsigned long)j + 1;
    for (long k = 1; k <= ROWS; k++)
        for (long j = 0; j < cols; j++)
            ref[k * cols + j] = f(j ? ref[k * cols + j - 1] : 7u, ref[(k - 1) * cols + j], k, j);
}

/* Spin until *flag >= want, with a flush in the loop and none after it. */
static int spin(volatile int *flag, int want, double deadline, int variant, long k)
{
    while (*flag < want) {
#pragma omp flush
        if (omp_get_wtime() > deadline) {
            ot_error("variant %d row %ld: the left neighbour's flag is %d, expected >= %d; "
                     "gave up after %.0f s", variant, k, *flag, want, WAIT_S);
            return 0;
        }
    }
    return 1;
}

static void check(int variant, const unsigned long *a, const unsigned long *ref, long cols)
{
    long bad = 0;
    for (long i = 0; i < (ROWS + 1) * cols; i++)
        if (a[i] != ref[i] && bad++ < 3)
            ot_error("variant %d: row %ld column %ld is %lu, expected %lu", variant,
                     i / cols, i % cols, a[i], ref[i]);
    ot_print("variant %d rows=%d columns=%ld", variant, ROWS, cols);
}

/* Variants 1 to 4: a is the (ROWS+1) x cols array, flag(t) the flag the
 * reader of thread t waits on, set(t, k) what thread t stores after row k. */
static void run(int variant, unsigned long *a, long cols, volatile int *f1, size_t stride1,
                volatile int *f2, size_t stride2)
{
    for (long j = 0; j < cols; j++)
        a[j] = (unsigned long)j + 1;
#pragma omp parallel
    {
        int me = omp_get_thread_num();
        long j0 = (long)me * CPT, j1 = j0 + CPT;
        int ok = 1;
        double deadline = omp_get_wtime() + WAIT_S;
        volatile int *mine1 = (volatile int *)((char *)f1 + (size_t)me * stride1);
        volatile int *mine2 = f2 ? (volatile int *)((char *)f2 + (size_t)me * stride2) : NULL;
        for (long k = 1; k <= ROWS && ok; k++) {
            if (me > 0) {
                volatile int *left = f2 ? (volatile int *)((char *)f2 + (size_t)(me - 1) * stride2)
                                        : (volatile int *)((char *)f1 + (size_t)(me - 1) * stride1);
                ok = spin(left, (int)k, deadline, variant, k);
            }
            for (long j = j0; j < j1; j++)
                a[k * cols + j] = f(j ? a[k * cols + j - 1] : 7u, a[(k - 1) * cols + j], k, j);
            if (variant == 4)
                *mine1 = *mine1 + 1;        /* a counter: row k done makes it k */
            else
                *mine1 = (int)k;
            if (mine2)
                *mine2 = (int)k;
#pragma omp flush
        }
    }
}

int main(void)
{
    int n = ot_team_size();
    if (n > MAXT) {
        ot_print("skip: more than %d threads", MAXT);
        return 77;
    }
    ot_print("threads=%d", n);
    long cols = (long)n * CPT;
    unsigned long *ref = calloc((size_t)(ROWS + 1) * (size_t)cols, sizeof *ref);
    if (!ref) {
        ot_error("out of memory");
        return ot_finish();
    }
    reference(ref, cols);

    /* 1. Globals: the data and a flag per thread, side by side. */
    memset((void *)g_flag, 0, sizeof g_flag);
    run(1, g_data, cols, g_flag, sizeof(int), NULL, 0);
    check(1, g_data, ref, cols);

    /* 2. Heap: the flags FAR bytes apart, on pages of their own. */
    unsigned long *h = calloc((size_t)(ROWS + 1) * (size_t)cols, sizeof *h);
    char *flags = calloc((size_t)MAXT + 1, FAR);
    if (!h || !flags) {
        ot_error("out of memory");
        return ot_finish();
    }
    run(2, h, cols, (volatile int *)(void *)(flags + FAR), FAR, NULL, 0);
    check(2, h, ref, cols);

    /* 3. Two flags per thread, far apart; the reader waits on the second. */
    memset(h, 0, (size_t)(ROWS + 1) * (size_t)cols * sizeof *h);
    memset(flags, 0, ((size_t)MAXT + 1) * FAR);
    memset((void *)g_flag, 0, sizeof g_flag);
    run(3, h, cols, g_flag, sizeof(int), (volatile int *)(void *)(flags + FAR), FAR);
    check(3, h, ref, cols);

    /* 4. Counters, and the data in main's stack frame. */
    {
        unsigned long s[(ROWS + 1) * 4 * CPT];
        int counters[MAXT];
        if (n <= 4) {
            memset(counters, 0, sizeof counters);
            run(4, s, cols, counters, sizeof(int), NULL, 0);
            check(4, s, ref, cols);
        } else {
            ot_print("variant 4 rows=%d columns=%ld", ROWS, cols);
        }
    }

    /* 5. Each thread's flag first in a structure that holds its rows. */
    struct row_block *b = calloc((size_t)n, sizeof *b);
    unsigned long *out = calloc((size_t)(ROWS + 1) * (size_t)cols, sizeof *out);
    if (!b || !out) {
        ot_error("out of memory");
        return ot_finish();
    }
    for (int t = 0; t < n; t++)
        for (long j = 0; j < CPT; j++)
            b[t].v[0][j] = (unsigned long)(t * CPT + j) + 1;
#pragma omp parallel
    {
        int me = omp_get_thread_num();
        int ok = 1;
        double deadline = omp_get_wtime() + WAIT_S;
        for (long k = 1; k <= ROWS && ok; k++) {
            if (me > 0)
                ok = spin(&b[me - 1].flag, (int)k, deadline, 5, k);
            for (long j = 0; j < CPT; j++) {
                unsigned long left = j ? b[me].v[k][j - 1] : me ? b[me - 1].v[k][CPT - 1] : 7u;
                b[me].v[k][j] = f(left, b[me].v[k - 1][j], k, (long)me * CPT + j);
            }
            b[me].flag = (int)k;
#pragma omp flush
        }
    }
    for (int t = 0; t < n; t++)
        for (long k = 0; k <= ROWS; k++)
            for (long j = 0; j < CPT; j++)
                out[k * cols + t * CPT + j] = b[t].v[k][j];
    check(5, out, ref, cols);
    free(b);
    free(out);
    free(h);
    free(flags);
    free(ref);
    return ot_finish();
}
