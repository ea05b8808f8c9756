/*
 * parallel_num_threads.c - the num_threads and if clauses.
 *
 * For every k from 1 to the default team size n, a region with
 * num_threads(k) must have exactly k threads numbered 0..k-1; the clause
 * must not change the default, so a region without it has n threads again.
 * if(0) makes a team of one; if(1) and if(n > 1) a team of n (or 1).
 * Requests larger than n are not made: how many threads a larger request
 * gets is up to the implementation (the shim has only the ranks' threads).
 */
#define OT_NAME "parallel_num_threads"
#include "omptest.h"

static int slot[OT_MAX_THREADS];
static int size_seen[OT_MAX_THREADS];

/* Check a team recorded in slot[]/size_seen[] and clear the arrays. */
static void check_team(const char *what, int expected)
{
    int t;

    for (t = 0; t < OT_MAX_THREADS; t++) {
        if (t < expected) {
            OT_CHECK(slot[t] == 1, "%s: thread %d ran %d times, expected "
                     "once", what, t, slot[t]);
            OT_CHECK(size_seen[t] == expected, "%s: thread %d saw a team of "
                     "%d, expected %d", what, t, size_seen[t], expected);
        } else {
            OT_CHECK(slot[t] == 0, "%s: thread %d ran in a team of %d", what,
                     t, expected);
        }
        slot[t] = 0;
        size_seen[t] = 0;
    }
}

static void record(void)
{
    int me = omp_get_thread_num();

    if (me < 0 || me >= OT_MAX_THREADS) {
        ot_error("thread number %d out of range", me);
        return;
    }
    slot[me]++;
    size_seen[me] = omp_get_num_threads();
}

int main(void)
{
    int n = ot_team_size();
    int k, total = 0;
    char what[64];

    for (k = 1; k <= n; k++) {
#pragma omp parallel num_threads(k)
        record();
        snprintf(what, sizeof what, "num_threads(%d)", k);
        check_team(what, k);
        total += k;

#pragma omp parallel
        record();
        snprintf(what, sizeof what, "default team after num_threads(%d)", k);
        check_team(what, n);
    }
    ot_print("threads=%d", n);
    ot_print("num_threads(1..%d): %d threads ran in all", n, total);

    /* A request computed at run time, counting down. */
    for (k = n; k >= 1; k--) {
#pragma omp parallel num_threads(n - k + 1)
        record();
        snprintf(what, sizeof what, "num_threads(n - %d + 1)", k);
        check_team(what, n - k + 1);
    }

#pragma omp parallel if (0)
    record();
    check_team("if(0)", 1);

#pragma omp parallel if (1)
    record();
    check_team("if(1)", n);

#pragma omp parallel if (n > 1) num_threads(n)
    record();
    check_team("if(n > 1) num_threads(n)", n);

    OT_CHECK(omp_get_max_threads() == n, "omp_get_max_threads() is %d after "
             "the regions, expected %d", omp_get_max_threads(), n);
    ot_print("if(0): team of 1; if(1): team of %d", n);
    return ot_finish();
}
