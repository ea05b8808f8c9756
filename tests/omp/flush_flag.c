/*
 * flush_flag.c - threads that synchronise through shared flags and
 * `omp flush`, with no barrier, critical section or lock between a write
 * and the read that depends on it.
 *
 * 1. A pipeline, as NPB LU's sync_left/sync_right: thread t computes its
 *    block of columns of row k once thread t-1 has published row k
 *    (isync[t-1] > k, polled with flush), then publishes its own
 *    (flush, isync[t] = k + 1, flush).  Each value depends on its left
 *    and upper neighbours, so a row computed from a stale left block, or
 *    a flag never seen, shows in the sums against a sequential run.
 * 2. A ready flag on main's stack: in round r one thread fills a heap
 *    array, flushes and sets the flag to r + 1; the others poll it with
 *    flush, then check the whole array; a barrier ends the round.
 * 3. The same with `mfence` as the fence (inline assembly, as older code
 *    and other compilers write it) instead of GCC's flush.
 * 4. What a flush must leave alone: a value in the red zone of a leaf
 *    function (inline assembly around the flush instruction), and double
 *    values that the compiler keeps in vector registers across flushes,
 *    against the same arithmetic with no flush (bit for bit).
 * The waits of a thread in one parallel region give up after WAIT_S seconds
 * in all, with a failure, so that a flag that is never seen fails the test
 * instead of hanging it.
 */
#define OT_NAME "flush_flag"
#include "omptest.h"

#define MAXT 64
#define ROWS 120
#define COLS_PER_THREAD 48
#define DATA 6000               /* longs: several pages */
#define ROUNDS 40
#define WAIT_S 20.0              /* per parallel region, all waits together */

static unsigned long f(unsigned long left, unsigned long up, long k, long j)
{
    return left * 31u + up * 17u + (unsigned long)(k * 1000 + j);
}

static int wait_pipeline(volatile int *flag, int want, int k, double deadline)
{
    for (;;) {
#pragma omp flush
        if (*flag >= want)
            return 1;
        if (omp_get_wtime() > deadline) {
            ot_error("row %d: the left neighbour's flag is %d, expected >= %d; gave up "
                     "after %.0f s", k, *flag, want, WAIT_S);
            return 0;
        }
    }
}

static void fence_mfence(void)
{
    __asm__ volatile("mfence" ::: "memory");
}

/* A leaf function: a value below the stack pointer (the red zone) across
 * GCC's flush instruction, read back after it. */
__attribute__((noinline)) static long red_zone(long v)
{
    long out;
    __asm__ volatile("movq %1, -8(%%rsp)\n\t"
                     "movq $0, -120(%%rsp)\n\t"
                     "lock orq $0, (%%rsp)\n\t"
                     "movq -8(%%rsp), %0"
                     : "=r"(out) : "r"(v) : "memory");
    return out;
}

/* The same sum of doubles, with a flush in every step or none. */
__attribute__((noinline)) static double sum_flushed(double x, int n)
{
    double a = 0.0, b = 1.0;
    for (int i = 0; i < n; i++) {
        a += x * b;
#pragma omp flush
        b *= 1.0000001;
    }
    return a + b;
}

__attribute__((noinline)) static double sum_plain(double x, int n)
{
    double a = 0.0, b = 1.0;
    for (int i = 0; i < n; i++) {
        a += x * b;
        __asm__ volatile("" ::: "memory");
        b *= 1.0000001;
    }
    return a + b;
}

int main(void)
{
    int n = ot_team_size();
    if (n > MAXT) {
        ot_print("skip: more than %d threads", MAXT);
        return 77;
    }
    ot_print("threads=%d", n);

    /* 1. The pipeline. */
    long cols = (long)n * COLS_PER_THREAD;
    unsigned long *a = calloc((size_t)(ROWS + 1) * (size_t)cols, sizeof *a);
    unsigned long *ref = calloc((size_t)(ROWS + 1) * (size_t)cols, sizeof *ref);
    int *isync = calloc(MAXT, sizeof *isync);
    if (!a || !ref || !isync) {
        ot_error("out of memory");
        return ot_finish();
    }
    for (long j = 0; j < cols; j++)
        ref[j] = a[j] = (unsigned long)j + 1;          /* row 0: given */
    for (long k = 1; k <= ROWS; k++)
        for (long j = 0; j < cols; j++)
            ref[k * cols + j] = f(j ? ref[k * cols + j - 1] : 7u, ref[(k - 1) * cols + j], k, j);

#pragma omp parallel
    {
        int me = omp_get_thread_num();
        long j0 = (long)me * COLS_PER_THREAD, j1 = j0 + COLS_PER_THREAD;
        int ok = 1;
        double deadline = omp_get_wtime() + WAIT_S;
        for (long k = 1; k <= ROWS && ok; k++) {
            if (me > 0) {
                ok = wait_pipeline(&isync[me - 1], (int)k, (int)k, deadline);
#pragma omp flush
            }
            for (long j = j0; j < j1; j++)
                a[k * cols + j] = f(j ? a[k * cols + j - 1] : 7u, a[(k - 1) * cols + j], k, j);
#pragma omp flush
            isync[me] = (int)k;
#pragma omp flush
        }
    }
    long bad = 0;
    for (long i = 0; i < (ROWS + 1) * cols; i++)
        if (a[i] != ref[i] && bad++ < 3)
            ot_error("pipeline: row %ld column %ld is %lu, expected %lu", i / cols, i % cols,
                     a[i], ref[i]);
    ot_print("pipeline rows=%d columns=%ld", ROWS, cols);

    /* 2 and 3. A ready flag on main's stack, then the same with mfence. */
    for (int part = 2; part <= 3; part++) {
        int ready = 0;
        long *data = malloc(DATA * sizeof *data);
        if (!data) {
            ot_error("out of memory");
            break;
        }
#pragma omp parallel shared(ready)
        {
            int me = omp_get_thread_num(), nt = omp_get_num_threads();
            double deadline = omp_get_wtime() + WAIT_S;
            for (int r = 0; r < ROUNDS; r++) {
                if (me == r % nt) {
                    for (long i = 0; i < DATA; i++)
                        data[i] = (long)r * 100000 + i;
                    if (part == 2) {
#pragma omp flush
                        ready = r + 1;
#pragma omp flush
                    } else {
                        fence_mfence();
                        *(volatile int *)&ready = r + 1;
                        fence_mfence();
                    }
                } else {
                    int seen;
                    for (;;) {
                        if (part == 2) {
#pragma omp flush
                            seen = ready;
                        } else {
                            fence_mfence();
                            seen = *(volatile int *)&ready;
                        }
                        if (seen >= r + 1 || omp_get_wtime() > deadline)
                            break;
                    }
                    if (seen < r + 1)
                        ot_error("part %d round %d: the ready flag is %d, expected >= %d; "
                                 "gave up after %.0f s", part, r, seen, r + 1, WAIT_S);
                    if (part == 2) {
#pragma omp flush
                    } else {
                        fence_mfence();
                    }
                    long wrong = 0;
                    for (long i = 0; i < DATA; i++)
                        if (data[i] != (long)r * 100000 + i && wrong++ == 0)
                            ot_error("part %d round %d: data[%ld] is %ld, expected %ld",
                                     part, r, i, data[i], (long)r * 100000 + i);
                }
#pragma omp barrier
            }
        }
        free(data);
        ot_print("ready flag part=%d rounds=%d", part, ROUNDS);
    }
    /* 4. Registers and the red zone. */
#pragma omp parallel
    {
        int me = omp_get_thread_num();
        long v = 0x5eed0000L + me;
        long got = red_zone(v);
        OT_CHECK(got == v, "red zone: %#lx after the flush, expected %#lx", got, v);
        double x = 1.25 + me, s1 = sum_flushed(x, 50), s2 = sum_plain(x, 50);
        OT_CHECK(s1 == s2, "a sum of doubles with flushes is %.17g, without %.17g", s1, s2);
    }
    ot_print("registers and red zone kept");

    free(a);
    free(ref);
    free(isync);
    return ot_finish();
}
