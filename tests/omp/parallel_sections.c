/*
 * parallel_sections.c - the combined parallel sections construct.
 *
 * Five sections filling five parts of a global array of 50,000 doubles
 * (each part by one thread, read afterwards by the initial thread); a
 * reduction over sections; private and firstprivate; num_threads(2) with
 * more sections than threads; 30 parallel sections constructs in a row.
 */
#define OT_NAME "parallel_sections"
#include "omptest.h"

#define N 50000
#define PARTS 5
#define PART (N / PARTS)

static double arr[N];
static int part_runs[PARTS];

static void fill(int part, double scale)
{
    long i;

    part_runs[part]++;
    for (i = (long)part * PART; i < (long)(part + 1) * PART; i++)
        arr[i] = scale * (double)i;
}

int main(void)
{
    int n = ot_team_size();
    double scale = 2.0, sum = 0;
    long red = 0, i;
    int p, r, ran[4] = { 0 }, tmp = 0;

    ot_print("threads=%d", n);

#pragma omp parallel sections firstprivate(scale) reduction(+:red)
    {
#pragma omp section
        {
            fill(0, scale);
            red += 1;
        }
#pragma omp section
        {
            fill(1, scale);
            red += 2;
        }
#pragma omp section
        {
            fill(2, scale);
            red += 4;
        }
#pragma omp section
        {
            fill(3, scale);
            red += 8;
        }
#pragma omp section
        {
            fill(4, scale);
            red += 16;
        }
    }
    for (i = 0; i < N; i++)
        sum += arr[i];
    for (p = 0; p < PARTS; p++)
        OT_CHECK(part_runs[p] == 1, "part %d filled %d times", p,
                 part_runs[p]);
    OT_CHECK(sum == (double)N * (N - 1), "sum %.1f, expected %.1f", sum,
             (double)N * (N - 1));
    OT_CHECK(red == 31, "reduction %ld, expected 31", red);
    ot_print("five sections: sum=%.1f reduction=%ld", sum, red);

    for (r = 0; r < 30; r++) {
#pragma omp parallel sections num_threads(n > 1 ? 2 : 1) private(tmp)
        {
#pragma omp section
            {
                tmp = 1;
                ran[0] += tmp;
            }
#pragma omp section
            {
                tmp = 1;
                ran[1] += tmp;
            }
#pragma omp section
            {
                tmp = 1;
                ran[2] += tmp;
            }
#pragma omp section
            {
                tmp = 1;
                ran[3] += tmp;
            }
        }
    }
    for (p = 0; p < 4; p++)
        OT_CHECK(ran[p] == 30, "num_threads(2) sections: section %d ran %d "
                 "times, expected 30", p, ran[p]);
    ot_print("30 x 4 sections with num_threads(2): %d %d %d %d", ran[0], ran[1],
             ran[2], ran[3]);
    return ot_finish();
}
