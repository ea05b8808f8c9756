/*
 * single_copyprivate.c - single with copyprivate.
 *
 * The thread that runs the single sets its private variables; copyprivate
 * copies them to the private variables of every other thread before any
 * leaves the construct.  GCC implements this by passing the addresses of
 * the executing thread's privates (on its stack) to the others through
 * GOMP_single_copy_start/GOMP_single_copy_end.  Variables: an int, a
 * double, a struct, an array of 16 longs, and a pointer to a block the
 * single allocates (every thread then reads the block through it); 20
 * rounds, values depending on the round, each thread checking what it got.
 */
#define OT_NAME "single_copyprivate"
#include "omptest.h"

#define ROUNDS 20
#define ALEN 16

struct pair {
    long a;
    double b;
};

static int wrong[OT_MAX_THREADS];
static int execs[ROUNDS];

int main(void)
{
    int n = ot_team_size();
    long total_wrong = 0;
    int r, t;

    ot_print("threads=%d", n);

#pragma omp parallel private(r)
    {
        int me = omp_get_thread_num(), iv, k;
        double dv;
        struct pair pv;
        long arr[ALEN];
        long *block = NULL;

        for (r = 0; r < ROUNDS; r++) {
            iv = -1;
            dv = -1.0;
            pv.a = -1;
            pv.b = -1.0;
            for (k = 0; k < ALEN; k++)
                arr[k] = -1;
#pragma omp single copyprivate(iv, dv, pv, arr, block)
            {
                execs[r]++;
                iv = 1000 + r;
                dv = 0.25 * r;
                pv.a = 77L * r;
                pv.b = 1.5 * r;
                for (k = 0; k < ALEN; k++)
                    arr[k] = (long)r * ALEN + k;
                block = malloc(ALEN * sizeof *block);
                if (block != NULL)
                    for (k = 0; k < ALEN; k++)
                        block[k] = (long)r * 100 + k;
            }
            if (iv != 1000 + r || dv != 0.25 * r || pv.a != 77L * r
                || pv.b != 1.5 * r) {
                wrong[me]++;
                ot_error("round %d: got iv=%d dv=%.2f pair=(%ld, %.1f)", r,
                         iv, dv, pv.a, pv.b);
            }
            for (k = 0; k < ALEN; k++) {
                if (arr[k] != (long)r * ALEN + k) {
                    wrong[me]++;
                    ot_error("round %d: arr[%d] = %ld, expected %ld", r, k,
                             arr[k], (long)r * ALEN + k);
                    break;
                }
            }
            if (block == NULL) {
                wrong[me]++;
                ot_error("round %d: the block pointer is NULL", r);
            } else {
                for (k = 0; k < ALEN; k++) {
                    if (block[k] != (long)r * 100 + k) {
                        wrong[me]++;
                        ot_error("round %d: block[%d] = %ld, expected %ld",
                                 r, k, block[k], (long)r * 100 + k);
                        break;
                    }
                }
            }
            /* Everybody has read the block before it is freed. */
#pragma omp barrier
#pragma omp single
            free(block);
        }
    }

    for (t = 0; t < n; t++)
        total_wrong += wrong[t];
    for (r = 0; r < ROUNDS; r++)
        OT_CHECK(execs[r] == 1, "single %d ran %d times", r, execs[r]);
    ot_print("%d rounds of copyprivate (int, double, struct, long[%d], "
             "pointer): %ld wrong", ROUNDS, ALEN, total_wrong);
    return ot_finish();
}
