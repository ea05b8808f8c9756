/*
 * for_orphaned.c - orphaned worksharing constructs in nested calls.
 *
 * The region's body calls level1, which calls level2 several times; level2
 * holds the constructs (an omp for with a dynamic schedule, an omp single,
 * an omp for with a reduction into a global, an omp barrier), which bind to
 * the team of whatever region is running when they are reached.  The same
 * functions called outside any region bind to a team of one and must do
 * the same work on their own.  An array of 10,000 doubles on the heap.
 */
#define OT_NAME "for_orphaned"
#include "omptest.h"

#define N 10000
#define CALLS 5

static double total;
static int singles;

/* Add round + 1 to every element and sum them into the global total. */
static void level2(double *arr, int round)
{
    long i;

#pragma omp for schedule(dynamic, 16)
    for (i = 0; i < N; i++)
        arr[i] += round + 1;
#pragma omp single
    singles++;
#pragma omp for schedule(static) reduction(+:total)
    for (i = 0; i < N; i++)
        total += arr[i];
#pragma omp barrier
}

static void level1(double *arr)
{
    int r;

    for (r = 0; r < CALLS; r++)
        level2(arr, r);
}

/* total after level1 on an array of zeros: round r adds N * (r+1) to each
 * element's sum, and total sums the array after every round. */
static double expected_total(void)
{
    double t = 0, per_elem = 0;
    int r;

    for (r = 0; r < CALLS; r++) {
        per_elem += r + 1;
        t += per_elem * N;
    }
    return t;
}

int main(void)
{
    int n = ot_team_size();
    double *arr = calloc(N, sizeof *arr);
    double serial_total;
    long i;

    if (arr == NULL) {
        fprintf(stderr, "%s: FAIL: calloc of %d doubles\n", OT_NAME, N);
        return 1;
    }
    ot_print("threads=%d", n);

#pragma omp parallel
    level1(arr);
    OT_CHECK(total == expected_total(), "in a region: total %.1f, expected "
             "%.1f", total, expected_total());
    OT_CHECK(singles == CALLS, "in a region: %d singles ran, expected %d",
             singles, CALLS);
    for (i = 0; i < N; i++) {
        if (arr[i] != 15.0) {
            ot_error("in a region: arr[%ld] = %.1f, expected 15.0", i,
                     arr[i]);
            break;
        }
    }
    ot_print("in a region: total=%.1f singles=%d", total, singles);

    /* Outside any region: a team of one. */
    serial_total = total;
    total = 0;
    singles = 0;
    for (i = 0; i < N; i++)
        arr[i] = 0;
    level1(arr);
    for (i = 0; i < N; i++) {
        if (arr[i] != 15.0) {
            ot_error("outside a region: arr[%ld] = %.1f, expected 15.0", i,
                     arr[i]);
            break;
        }
    }
    OT_CHECK(total == serial_total, "outside a region: total %.1f, expected "
             "%.1f", total, serial_total);
    OT_CHECK(singles == CALLS, "outside a region: %d singles ran, expected "
             "%d", singles, CALLS);
    ot_print("outside a region: total=%.1f singles=%d", total, singles);
    free(arr);
    return ot_finish();
}
