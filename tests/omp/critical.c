/*
 * critical.c - the critical construct: unnamed, two names, nested.
 *
 * Inside each critical section the threads do non-atomic read-modify-write
 * of shared variables and check that no other thread is inside the same
 * section (an "inside" count that must be 1).  Sections: the unnamed one;
 * alpha and beta (different names, so a thread may hold one while another
 * thread holds the other); beta entered while holding alpha (nested,
 * different names, always in that order); alpha entered while holding the
 * unnamed one; and a named section with a hint.  The counters are
 * globals and heap memory.  About 400 sections per thread in all.
 */
#define OT_NAME "critical"
#include "omptest.h"

#define ITERS 100
#define NESTED 40

static long plain_count, plain_sum;
static int plain_inside, alpha_inside, beta_inside;
static long alpha_count, beta_count, nested_count, hinted_count;
static double alpha_mirror;

int main(void)
{
    int n = ot_team_size();
    long *heap = calloc(2, sizeof *heap);

    if (heap == NULL) {
        fprintf(stderr, "%s: FAIL: calloc\n", OT_NAME);
        return 1;
    }
    ot_print("threads=%d", n);

#pragma omp parallel
    {
        int me = omp_get_thread_num(), k;

        for (k = 0; k < ITERS; k++) {
#pragma omp critical
            {
                plain_inside++;
                OT_CHECK(plain_inside == 1, "unnamed: %d threads inside",
                         plain_inside);
                plain_count++;
                plain_sum += me + 1;
                heap[0] += 2;
                plain_inside--;
            }
#pragma omp critical(alpha)
            {
                alpha_inside++;
                OT_CHECK(alpha_inside == 1, "alpha: %d threads inside",
                         alpha_inside);
                alpha_count++;
                alpha_mirror = (double)alpha_count;
                alpha_inside--;
            }
            if (k % 2 == 0) {
#pragma omp critical(beta)
                {
                    beta_inside++;
                    OT_CHECK(beta_inside == 1, "beta: %d threads inside",
                             beta_inside);
                    beta_count++;
                    heap[1] += 5;
                    beta_inside--;
                }
            }
        }
        for (k = 0; k < NESTED; k++) {
#pragma omp critical(alpha)
            {
                alpha_inside++;
#pragma omp critical(beta)
                {
                    beta_inside++;
                    OT_CHECK(alpha_inside == 1 && beta_inside == 1,
                             "alpha{beta}: %d in alpha, %d in beta",
                             alpha_inside, beta_inside);
                    nested_count++;
                    alpha_count++;
                    beta_count++;
                    beta_inside--;
                }
                OT_CHECK(alpha_mirror == (double)alpha_count - 1, "alpha "
                         "mirror %.0f, count %ld", alpha_mirror, alpha_count);
                alpha_mirror = (double)alpha_count;
                alpha_inside--;
            }
            if (k % 4 == 0) {
#pragma omp critical
                {
                    plain_inside++;
#pragma omp critical(alpha)
                    {
                        alpha_inside++;
                        OT_CHECK(plain_inside == 1 && alpha_inside == 1,
                                 "unnamed{alpha}: %d in unnamed, %d in "
                                 "alpha", plain_inside, alpha_inside);
                        plain_count++;
                        alpha_count++;
                        alpha_mirror = (double)alpha_count;
                        alpha_inside--;
                    }
                    plain_inside--;
                }
            }
#pragma omp critical(hinted) hint(omp_sync_hint_contended)
            hinted_count++;
        }
    }

    {
        long want_plain = (long)n * (ITERS + NESTED / 4);
        long want_alpha = (long)n * (ITERS + NESTED + NESTED / 4);
        long want_beta = (long)n * (ITERS / 2 + NESTED);

        OT_CHECK(plain_count == want_plain, "unnamed count %ld, expected %ld",
                 plain_count, want_plain);
        OT_CHECK(plain_sum == (long)ITERS * n * (n + 1) / 2, "unnamed sum "
                 "%ld, expected %ld", plain_sum, (long)ITERS * n * (n + 1) / 2);
        OT_CHECK(alpha_count == want_alpha && alpha_mirror == want_alpha,
                 "alpha count %ld mirror %.0f, expected %ld", alpha_count,
                 alpha_mirror, want_alpha);
        OT_CHECK(beta_count == want_beta, "beta count %ld, expected %ld",
                 beta_count, want_beta);
        OT_CHECK(nested_count == (long)n * NESTED, "nested count %ld, "
                 "expected %ld", nested_count, (long)n * NESTED);
        OT_CHECK(hinted_count == (long)n * NESTED, "hinted count %ld, "
                 "expected %ld", hinted_count, (long)n * NESTED);
        OT_CHECK(heap[0] == 2L * ITERS * n && heap[1] == 5L * n * ITERS / 2,
                 "heap counters %ld %ld, expected %ld %ld", heap[0], heap[1],
                 2L * ITERS * n, 5L * n * ITERS / 2);
    }
    ot_print("unnamed=%ld sum=%ld alpha=%ld beta=%ld nested=%ld hinted=%ld",
             plain_count, plain_sum, alpha_count, beta_count, nested_count,
             hinted_count);
    ot_print("heap=%ld,%ld", heap[0], heap[1]);
    free(heap);
    return ot_finish();
}
