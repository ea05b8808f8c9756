/*
 * global_array.c - global arrays shared by the team.
 *
 * An initialised global array (.data), a zero global array of 100,000
 * doubles (.bss), a 2-D global array, a global struct holding an array,
 * and a const table (.rodata).  Threads read the initial contents, write
 * their static share of the arrays, and after a barrier read shares
 * written by other threads (the next thread's, rotating); the initial
 * thread then checks every element.  Several rounds, each reading what
 * the previous round wrote.
 */
#define OT_NAME "global_array"
#include "omptest.h"

#define N 100000
#define ROWS 200
#define COLS 300
#define ROUNDS 4

int init_data[16] = { 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3 };
double big[N];
static int grid[ROWS][COLS];
static struct {
    long tag;
    long values[1024];
} record = { 17, { 0 } };
static const int table[8] = { 1, 2, 4, 8, 16, 32, 64, 128 };

static double value(int round, long i)
{
    return (double)(round + 1) * 0.5 + (double)(i % 1000);
}

int main(void)
{
    int n = ot_team_size();
    int round, r, c;
    long i, init_sum = 0, weighted = 0, mismatches = 0;
    double sum = 0, want_sum = 0;

    for (i = 0; i < 16; i++) {
        init_sum += init_data[i];
        weighted += init_data[i] * table[i % 8];
    }
    ot_print("threads=%d", n);

#pragma omp parallel private(round, i, r, c) reduction(+:mismatches)
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads();
        long s = 0, k;

        /* Initial contents, read by every thread. */
        for (k = 0; k < 16; k++)
            s += init_data[k] * table[k % 8];
        if (s != weighted || record.tag != 17 || big[me] != 0.0)
            mismatches++;
        /* Nobody writes big before everybody has read its zero. */
#pragma omp barrier

        for (round = 0; round < ROUNDS; round++) {
            int other = (me + round + 1) % nt;
            long lo = (long)N * other / nt, hi = (long)N * (other + 1) / nt;

#pragma omp for schedule(static)
            for (i = 0; i < N; i++)
                big[i] = value(round, i);
            /* The implied barrier of the loop is passed: read the share
             * another thread wrote (with the default static schedule the
             * shares are unspecified, but every element must be right). */
            for (k = lo; k < hi; k++) {
                if (big[k] != value(round, k)) {
                    mismatches++;
                    break;
                }
            }
#pragma omp barrier
        }

#pragma omp for schedule(static, 3) collapse(2)
        for (r = 0; r < ROWS; r++)
            for (c = 0; c < COLS; c++)
                grid[r][c] = r * COLS + c;
#pragma omp for schedule(dynamic, 64)
        for (k = 0; k < 1024; k++)
            record.values[k] = k * table[k % 8];
        /* After the loops' barriers: a column and a stripe of the record,
         * each written by many threads. */
        for (r = 0; r < ROWS; r++)
            if (grid[r][me % COLS] != r * COLS + me % COLS)
                mismatches++;
        for (k = me; k < 1024; k += nt)
            if (record.values[k] != k * table[k % 8])
                mismatches++;
    }

    for (i = 0; i < N; i++) {
        sum += big[i];
        want_sum += value(ROUNDS - 1, i);
    }
    OT_CHECK(mismatches == 0, "%ld mismatches seen by the threads",
             mismatches);
    OT_CHECK(sum == want_sum, "big sums to %.1f, expected %.1f", sum,
             want_sum);
    for (r = 0; r < ROWS; r++)
        for (c = 0; c < COLS; c++)
            if (grid[r][c] != r * COLS + c && mismatches++ == 0)
                ot_error("grid[%d][%d] = %d", r, c, grid[r][c]);
    ot_print("init_data sum=%ld weighted=%ld; big sum=%.1f; grid and record "
             "checked", init_sum, weighted, sum);
    return ot_finish();
}
