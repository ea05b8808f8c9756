/*
 * parallel_many.c - many parallel regions in a row.
 *
 * 200 regions.  Before each, the initial thread writes the round number to a
 * global and to a variable of main's stack; inside, every thread checks that
 * it reads the new values (a fork must publish what the initial thread wrote
 * before it) and adds to its own accumulator and to its own slot of a log;
 * after each region the initial thread reads what the threads wrote (a join
 * must publish their writes).  Odd rounds use a smaller team, so that
 * threads that sat out a region must still see the next round's values.
 */
#define OT_NAME "parallel_many"
#include "omptest.h"

#define ROUNDS 200

static volatile int round_global;
static long acc[OT_MAX_THREADS];
static int log_of_round[ROUNDS][OT_MAX_THREADS];

int main(void)
{
    int n = ot_team_size();
    int r, t, round_local = -1;
    long total = 0, expected = 0;

    for (r = 0; r < ROUNDS; r++) {
        int team = (r % 2 == 1 && n > 1) ? n - 1 : n;

        round_global = r;
        round_local = r;
#pragma omp parallel num_threads(team)
        {
            int me = omp_get_thread_num();

            OT_CHECK(round_global == r, "round %d: global round reads %d", r,
                     round_global);
            OT_CHECK(round_local == r, "round %d: main's round reads %d", r,
                     round_local);
            OT_CHECK(omp_get_num_threads() == team, "round %d: team of %d, "
                     "expected %d", r, omp_get_num_threads(), team);
            acc[me] += (long)(r + 1) * (me + 1);
            log_of_round[r][me] = r * 100 + me + 1;
        }
        for (t = 0; t < OT_MAX_THREADS; t++) {
            int want = t < team ? r * 100 + t + 1 : 0;

            OT_CHECK(log_of_round[r][t] == want, "round %d: slot %d holds "
                     "%d, expected %d", r, t, log_of_round[r][t], want);
            if (t < team)
                expected += (long)(r + 1) * (t + 1);
        }
        if (ot_error_count() != 0)
            break;
    }
    for (t = 0; t < n; t++)
        total += acc[t];
    OT_CHECK(total == expected, "accumulators sum to %ld, expected %ld",
             total, expected);

    ot_print("threads=%d rounds=%d", n, ROUNDS);
    ot_print("sum of accumulators=%ld", total);
    return ot_finish();
}
