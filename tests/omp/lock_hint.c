/*
 * lock_hint.c - omp_init_lock_with_hint and omp_init_nest_lock_with_hint.
 *
 * Locks made with each hint (none, uncontended, contended, nonspeculative,
 * speculative, and a legal combination) must behave as plain locks: mutual
 * exclusion around non-atomic updates, omp_test_lock failing while another
 * thread holds the lock; nestable locks with a hint nest.  The hint is
 * advice only; this checks that the entry points exist and work.
 *
 * This program runs under the shim only: the stock libgomp of the build
 * machine declares these functions in omp.h but does not export them, so
 * there is no PROG.gomp to compare with (run-omp-test.sh knows).
 */
#define OT_NAME "lock_hint"
#include "omptest.h"

#define ITERS 20
#define NHINTS 6

static omp_lock_t locks[NHINTS];
static omp_nest_lock_t nlock;
static long counts[NHINTS];
static int inside[NHINTS];
static long nest_count;

int main(void)
{
    static const omp_sync_hint_t hints[NHINTS] = {
        omp_sync_hint_none,
        omp_sync_hint_uncontended,
        omp_sync_hint_contended,
        omp_sync_hint_nonspeculative,
        omp_sync_hint_speculative,
        (omp_sync_hint_t)(omp_sync_hint_contended
                          | omp_sync_hint_nonspeculative),
    };
    int n = ot_team_size();
    long blocked = 0;
    int h;

    for (h = 0; h < NHINTS; h++)
        omp_init_lock_with_hint(&locks[h], hints[h]);
    omp_init_nest_lock_with_hint(&nlock, omp_sync_hint_contended);
    ot_print("threads=%d", n);

#pragma omp parallel reduction(+:blocked)
    {
        int me = omp_get_thread_num(), k, j;

        for (k = 0; k < ITERS; k++) {
            for (j = 0; j < NHINTS; j++) {
                omp_set_lock(&locks[j]);
                inside[j]++;
                OT_CHECK(inside[j] == 1, "hint %d: %d threads inside",
                         (int)hints[j], inside[j]);
                counts[j] += me + 1;
                inside[j]--;
                omp_unset_lock(&locks[j]);
            }
            omp_set_nest_lock(&nlock);
            omp_set_nest_lock(&nlock);
            nest_count++;
            omp_unset_nest_lock(&nlock);
            omp_unset_nest_lock(&nlock);
        }
#pragma omp barrier
        if (me == 0)
            omp_set_lock(&locks[2]);
#pragma omp barrier
        if (me != 0) {
            if (omp_test_lock(&locks[2]))
                ot_error("omp_test_lock took a hinted lock thread 0 holds");
            else
                blocked++;
        }
#pragma omp barrier
        if (me == 0)
            omp_unset_lock(&locks[2]);
    }

    for (h = 0; h < NHINTS; h++) {
        OT_CHECK(counts[h] == (long)ITERS * n * (n + 1) / 2, "hint %d: count "
                 "%ld, expected %ld", (int)hints[h], counts[h],
                 (long)ITERS * n * (n + 1) / 2);
        omp_destroy_lock(&locks[h]);
    }
    omp_destroy_nest_lock(&nlock);
    OT_CHECK(nest_count == (long)ITERS * n, "nest lock count %ld, expected "
             "%ld", nest_count, (long)ITERS * n);
    OT_CHECK(blocked == n - 1, "omp_test_lock failed %ld times while held, "
             "expected %d", blocked, n - 1);
    ot_print("%d hinted locks: count=%ld each; nest=%ld; blocked=%ld", NHINTS,
             counts[0], nest_count, blocked);
    return ot_finish();
}
