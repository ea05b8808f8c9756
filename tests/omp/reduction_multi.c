/*
 * reduction_multi.c - reductions in other shapes than one scalar on a loop.
 *
 * Several variables and operators on one construct (GCC merges them under
 * GOMP_atomic_start/GOMP_atomic_end instead of one atomic each); a
 * reduction on the parallel construct itself, each thread contributing
 * values from its thread number; an array section reduction (a histogram);
 * a user-defined reduction (declare reduction) on a struct; a reduction on
 * sections; and a reduction on a for with nowait, read after a barrier.
 */
#define OT_NAME "reduction_multi"
#include "omptest.h"

#define N 20000
#define BINS 16

struct range {
    long lo, hi;
};

static struct range range_merge(struct range a, struct range b)
{
    struct range r = { a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi };
    return r;
}

#pragma omp declare reduction(span : struct range :                          \
                              omp_out = range_merge(omp_out, omp_in))        \
    initializer(omp_priv = (struct range){ 1L << 62, -(1L << 62) })

static long data[N];
static long global_sum;

int main(void)
{
    int n = ot_team_size();
    long i, s = 0, mx = -1, mn = 1000, p = 1;
    long a = 0, b = 100, c = 0, seq_a = 0, seq_b = 100, seq_c = 0;
    long hist[BINS] = { 0 }, seq_hist[BINS] = { 0 };
    long nowait_sum = 0, fact = 1, sec = 0;
    double d = 0.5;
    struct range r = { 1L << 62, -(1L << 62) };
    int t;

    for (i = 0; i < N; i++)
        data[i] = (i * 37) % 1001 - 500;
    ot_print("threads=%d", n);

    /* On the parallel construct: every thread contributes once. */
#pragma omp parallel reduction(+:s) reduction(*:p) reduction(max:mx)       \
    reduction(min:mn) reduction(+:d)
    {
        int me = omp_get_thread_num();

        s += me;
        p *= me + 1;
        mx = mx > me ? mx : me;
        mn = mn < me ? mn : me;
        d += 0.25;
    }
    for (t = 1; t <= n; t++)
        fact *= t;
    OT_CHECK(s == (long)n * (n - 1) / 2, "parallel reduction(+): %ld, "
             "expected %ld", s, (long)n * (n - 1) / 2);
    OT_CHECK(p == fact, "parallel reduction(*): %ld, expected %ld", p, fact);
    OT_CHECK(mx == n - 1, "parallel reduction(max): %ld, expected %d", mx,
             n - 1);
    OT_CHECK(mn == 0, "parallel reduction(min): %ld, expected 0", mn);
    OT_CHECK(d == 0.5 + 0.25 * n, "parallel reduction(+) on a double: %.2f, "
             "expected %.2f", d, 0.5 + 0.25 * n);
    ot_print("parallel: sum=%ld product=%ld max=%ld min=%ld double=%.2f", s, p,
             mx, mn, d);

    /* Three variables, two operators, one loop. */
#pragma omp parallel for schedule(dynamic, 100) reduction(+:a, c)           \
    reduction(-:b) reduction(+:global_sum)
    for (i = 0; i < N; i++) {
        a += data[i];
        b -= data[i] % 7;
        c += data[i] > 0;
        global_sum += 2 * data[i];
    }
    for (i = 0; i < N; i++) {
        seq_a += data[i];
        seq_b -= data[i] % 7;
        seq_c += data[i] > 0;
    }
    OT_CHECK(a == seq_a && b == seq_b && c == seq_c && global_sum == 2 * seq_a,
             "several variables: a=%ld b=%ld c=%ld global=%ld, expected "
             "%ld %ld %ld %ld", a, b, c, global_sum, seq_a, seq_b, seq_c,
             2 * seq_a);
    ot_print("several variables: a=%ld b=%ld c=%ld global=%ld", a, b, c,
             global_sum);

    /* An array section. */
#pragma omp parallel for schedule(static, 64) reduction(+:hist[0:BINS])
    for (i = 0; i < N; i++)
        hist[(data[i] + 500) % BINS]++;
    for (i = 0; i < N; i++)
        seq_hist[(data[i] + 500) % BINS]++;
    for (t = 0; t < BINS; t++)
        OT_CHECK(hist[t] == seq_hist[t], "array section: bin %d holds %ld, "
                 "expected %ld", t, hist[t], seq_hist[t]);
    ot_print("array section: bin0=%ld bin7=%ld bin15=%ld", hist[0], hist[7],
             hist[15]);

    /* A user-defined reduction. */
#pragma omp parallel for schedule(guided) reduction(span:r)
    for (i = 0; i < N; i++) {
        if (data[i] * 3 < r.lo)
            r.lo = data[i] * 3;
        if (data[i] * 3 > r.hi)
            r.hi = data[i] * 3;
    }
    OT_CHECK(r.lo == -1500 && r.hi == 1500, "declare reduction: [%ld, %ld], "
             "expected [-1500, 1500]", r.lo, r.hi);
    ot_print("declare reduction: [%ld, %ld]", r.lo, r.hi);

    /* Sections, and a for with nowait. */
#pragma omp parallel
    {
#pragma omp sections reduction(+:sec)
        {
#pragma omp section
            sec += 1;
#pragma omp section
            sec += 10;
#pragma omp section
            sec += 100;
        }
#pragma omp for schedule(static) reduction(+:nowait_sum) nowait
        for (i = 0; i < N; i++)
            nowait_sum += data[i] & 15;
#pragma omp barrier
#pragma omp single
        {
            long want = 0, k;

            for (k = 0; k < N; k++)
                want += data[k] & 15;
            OT_CHECK(nowait_sum == want, "for nowait: %ld after the barrier, "
                     "expected %ld", nowait_sum, want);
        }
    }
    OT_CHECK(sec == 111, "sections reduction: %ld, expected 111", sec);
    ot_print("sections: %ld; for nowait: %ld", sec, nowait_sum);
    return ot_finish();
}
