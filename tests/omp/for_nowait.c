/*
 * for_nowait.c - omp for nowait followed by an explicit barrier.
 *
 * In one region: two static loops with nowait where the second reads what
 * the first wrote at the same index (safe without a barrier: same bounds,
 * same static schedule, same thread); a barrier; a loop reading elements
 * written by other threads; a dynamic loop with nowait; a barrier; a check
 * by all threads.  Then 20 rounds of a three-point stencil over 20,000
 * integers, each round a static nowait loop and a barrier, the two arrays
 * swapped by every thread on its own; the result is compared with the same
 * stencil run sequentially.
 */
#define OT_NAME "for_nowait"
#include "omptest.h"

#define N 20000
#define ROUNDS 20
#define MOD 1000003L

static long a[N], b[N], c[N], d[N];
static long x0[N], x1[N], ref0[N], ref1[N];

static long f(long i)
{
    return (i * 7919) % MOD;
}

/* Element i of one stencil step from src to dst; the two ends stay. */
static void step(const long *src, long *dst, long i)
{
    if (i == 0 || i == N - 1)
        dst[i] = src[i];
    else
        dst[i] = (src[i - 1] + 2 * src[i] + src[i + 1]) % MOD;
}

int main(void)
{
    int n = ot_team_size();
    long i, sum = 0;

    ot_print("threads=%d", n);

#pragma omp parallel
    {
#pragma omp for schedule(static) nowait
        for (i = 0; i < N; i++)
            a[i] = f(i);
#pragma omp for schedule(static) nowait
        for (i = 0; i < N; i++)
            b[i] = a[i] * 2;
#pragma omp barrier
#pragma omp for schedule(static) nowait
        for (i = 0; i < N; i++)
            c[i] = b[(i + N / 2) % N] + b[N - 1 - i];
#pragma omp for schedule(dynamic, 64) nowait
        for (i = 0; i < N; i++)
            d[i] = a[(i * 13) % N] + 1;
#pragma omp barrier
        /* Every thread reads a sample of everything. */
        {
            long k;

            for (k = omp_get_thread_num(); k < N; k += 97) {
                long want_c = 2 * f((k + N / 2) % N) + 2 * f(N - 1 - k);

                if (c[k] != want_c || d[k] != f((k * 13) % N) + 1) {
                    ot_error("after the barrier: c[%ld] = %ld, d[%ld] = %ld, "
                             "expected %ld and %ld", k, c[k], k, d[k], want_c,
                             f((k * 13) % N) + 1);
                    break;
                }
            }
        }
    }
    for (i = 0; i < N; i++)
        sum += c[i] + d[i];
    ot_print("nowait loops: sum=%ld", sum);

    for (i = 0; i < N; i++)
        x0[i] = ref0[i] = f(i);
#pragma omp parallel
    {
        long *src = x0, *dst = x1, *tmp;
        int r;

        for (r = 0; r < ROUNDS; r++) {
#pragma omp for schedule(static) nowait
            for (i = 0; i < N; i++)
                step(src, dst, i);
#pragma omp barrier
            tmp = src;
            src = dst;
            dst = tmp;
        }
    }
    {
        long *src = ref0, *dst = ref1, *tmp, *got = ROUNDS % 2 ? x1 : x0;
        int r;

        for (r = 0; r < ROUNDS; r++) {
            for (i = 0; i < N; i++)
                step(src, dst, i);
            tmp = src;
            src = dst;
            dst = tmp;
        }
        sum = 0;
        for (i = 0; i < N; i++) {
            if (got[i] != src[i]) {
                ot_error("stencil: element %ld is %ld after %d rounds, "
                         "expected %ld", i, got[i], ROUNDS, src[i]);
                break;
            }
            sum += got[i];
        }
    }
    ot_print("stencil, %d rounds of %d: sum=%ld", ROUNDS, N, sum);
    return ot_finish();
}
