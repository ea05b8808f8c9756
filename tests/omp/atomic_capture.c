/*
 * atomic_capture.c - #pragma omp atomic capture on int, long and double,
 * and atomic compare (OpenMP 5.1).
 *
 * Every thread takes tickets from shared counters with atomic capture and
 * keeps them; afterwards the tickets of all threads together must be each
 * possible value exactly once (a lost or doubled update shows as a missing
 * or repeated ticket).  Forms: v = x++ (old value), v = ++x and v = x += e
 * (new value), { v = x; x += e; } and { x -= e; v = x; }.  Then a running
 * maximum kept with atomic compare, and a counter incremented with a
 * compare-and-swap loop built from atomic compare capture.  100 tickets of
 * each kind per thread (each may be a round trip under the shim).
 */
#define OT_NAME "atomic_capture"
#include "omptest.h"

#define K 100
#define CAS_K 20

static int ci;
static long cl, cl2 = 1000000L;
static double cd;
static int cmax = -1;
static long cas_counter;
static int t_int[OT_MAX_THREADS][K], t_int2[OT_MAX_THREADS][K];
static long t_long[OT_MAX_THREADS][K], t_long2[OT_MAX_THREADS][K];
static double t_dbl[OT_MAX_THREADS][K];
static int *seen;

/* Check the n*K tickets ticket(t, k) of all threads: each of base,
 * base + step, ..., base + (n*K - 1) * step exactly once. */
static void check_tickets(const char *what, int n, long (*ticket)(int, int),
                          long base, long step)
{
    long total = (long)n * K, i, bad = 0;
    int t, k;

    for (i = 0; i < total; i++)
        seen[i] = 0;
    for (t = 0; t < n; t++) {
        for (k = 0; k < K; k++) {
            long v = ticket(t, k) - base;

            if (v % step != 0 || v / step < 0 || v / step >= total) {
                ot_error("%s: thread %d got ticket %ld, outside the range",
                         what, t, ticket(t, k));
                return;
            }
            seen[v / step]++;
        }
    }
    for (i = 0; i < total; i++) {
        if (seen[i] != 1 && bad++ < 3)
            ot_error("%s: ticket %ld taken %d times", what,
                     base + i * step, seen[i]);
    }
}

static long tk_int(int t, int k) { return t_int[t][k]; }
static long tk_long(int t, int k) { return t_long[t][k]; }
static long tk_long2(int t, int k) { return t_long2[t][k]; }
static long tk_dbl(int t, int k) { return (long)(t_dbl[t][k] * 4); }

int main(void)
{
    int n = ot_team_size();
    long total = (long)n * K;

    seen = malloc((size_t)total * sizeof *seen);
    if (seen == NULL) {
        fprintf(stderr, "%s: FAIL: malloc\n", OT_NAME);
        return 1;
    }
    ot_print("threads=%d", n);

#pragma omp parallel
    {
        int me = omp_get_thread_num(), k, v;
        long old, mine;

        for (k = 0; k < K; k++) {
            if (k % 2 == 0) {
#pragma omp atomic capture
                t_int[me][k] = ci++;
            } else {
#pragma omp atomic capture
                v = ++ci;
                t_int[me][k] = v - 1;
            }
#pragma omp atomic capture
            { t_long[me][k] = cl; cl += 3; }
#pragma omp atomic capture
            { cl2 -= 7; t_long2[me][k] = cl2; }
#pragma omp atomic capture
            t_dbl[me][k] = cd += 0.25;
        }
        for (k = 0; k < K; k++) {
            v = (me * 7919 + k * 104729) % (n * K);
#pragma omp atomic compare
            if (cmax < v) { cmax = v; }
            t_int2[me][k] = v;
        }
        for (k = 0; k < CAS_K; k++) {
            do {
#pragma omp atomic read
                old = cas_counter;
#pragma omp atomic compare capture
                {
                    mine = cas_counter;
                    if (cas_counter == old) {
                        cas_counter = old + 1;
                    }
                }
            } while (mine != old);
        }
    }

    check_tickets("int v = x++ / v = ++x", n, tk_int, 0, 1);
    check_tickets("long { v = x; x += 3; }", n, tk_long, 0, 3);
    check_tickets("long { x -= 7; v = x; }", n, tk_long2,
                  1000000L - 7 * total, 7);
    check_tickets("double v = x += 0.25", n, tk_dbl, 1, 1);
    OT_CHECK(ci == total && cl == 3 * total && cl2 == 1000000L - 7 * total
             && cd == 0.25 * total, "final counters int %d long %ld long %ld "
             "double %.2f, expected %ld %ld %ld %.2f", ci, cl, cl2, cd, total,
             3 * total, 1000000L - 7 * total, 0.25 * total);
    ot_print("capture: int=%d long=%ld long2=%ld double=%.2f", ci, cl, cl2,
             cd);
    {
        int want = -1, t, k;

        for (t = 0; t < n; t++)
            for (k = 0; k < K; k++)
                want = t_int2[t][k] > want ? t_int2[t][k] : want;
        OT_CHECK(cmax == want, "atomic compare max: %d, expected %d", cmax,
                 want);
    }
    OT_CHECK(cas_counter == (long)n * CAS_K, "compare capture loop: %ld, "
             "expected %ld", cas_counter, (long)n * CAS_K);
    ot_print("compare: max=%d cas counter=%ld", cmax, cas_counter);
    free(seen);
    return ot_finish();
}
