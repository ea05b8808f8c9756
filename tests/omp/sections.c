/*
 * sections.c - the sections construct inside a parallel region.
 *
 * Seven sections, each run exactly once by some thread of the team, each
 * writing its own result; 20 sections constructs in a row in one region;
 * firstprivate and lastprivate on sections (the lastprivate value comes
 * from the lexically last section); a sections construct with nowait
 * followed by a barrier; an orphaned sections construct, also called
 * outside any region.
 */
#define OT_NAME "sections"
#include "omptest.h"

#define ROUNDS 20
#define NSEC 7

static int runs[ROUNDS][NSEC];
static long result[NSEC];
static int orphan_runs[2];

static void orphan(void)
{
#pragma omp sections
    {
#pragma omp section
        orphan_runs[0]++;
#pragma omp section
        orphan_runs[1]++;
    }
}

int main(void)
{
    int n = ot_team_size();
    int r, s, last = -1, first = 40;
    long sum = 0;

    ot_print("threads=%d", n);

#pragma omp parallel private(r)
    {
        for (r = 0; r < ROUNDS; r++) {
#pragma omp sections
            {
#pragma omp section
                runs[r][0]++;
#pragma omp section
                runs[r][1]++;
#pragma omp section
                runs[r][2]++;
#pragma omp section
                runs[r][3]++;
#pragma omp section
                runs[r][4]++;
#pragma omp section
                runs[r][5]++;
#pragma omp section
                runs[r][6]++;
            }
        }

#pragma omp sections firstprivate(first) lastprivate(last)
        {
#pragma omp section
            {
                result[0] = first + 1;
                last = 100;
            }
#pragma omp section
            {
                result[1] = first + 2;
                last = 200;
            }
#pragma omp section
            {
                result[2] = first + 3;
                last = 300;
            }
        }

#pragma omp sections nowait
        {
#pragma omp section
            result[3] = 1000;
#pragma omp section
            result[4] = 2000;
#pragma omp section
            result[5] = 3000;
#pragma omp section
            result[6] = 4000;
        }
#pragma omp barrier
        if (result[3] + result[4] + result[5] + result[6] != 10000)
            ot_error("after sections nowait and a barrier: %ld %ld %ld %ld",
                     result[3], result[4], result[5], result[6]);
        orphan();
    }
    orphan();

    for (r = 0; r < ROUNDS; r++)
        for (s = 0; s < NSEC; s++)
            OT_CHECK(runs[r][s] == 1, "round %d: section %d ran %d times", r,
                     s, runs[r][s]);
    OT_CHECK(last == 300, "lastprivate: %d, expected 300", last);
    for (s = 0; s < NSEC; s++)
        sum += result[s];
    OT_CHECK(sum == 41 + 42 + 43 + 10000, "results sum to %ld, expected %d",
             sum, 41 + 42 + 43 + 10000);
    OT_CHECK(orphan_runs[0] == 2 && orphan_runs[1] == 2, "orphaned sections "
             "ran %d and %d times, expected 2 each", orphan_runs[0],
             orphan_runs[1]);
    ot_print("%d x %d sections, each once; lastprivate=%d sum=%ld orphan=%d,%d",
             ROUNDS, NSEC, last, sum, orphan_runs[0], orphan_runs[1]);
    return ot_finish();
}
