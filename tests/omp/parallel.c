/*
 * parallel.c - a parallel region: thread numbers and team size.
 *
 * Every thread of the team writes its thread number into its own slot of a
 * global array and the team size it sees into another; after the region the
 * initial thread checks that the slots hold exactly 0..n-1, that every
 * thread saw the same team size n, and that a variable of main's stack
 * written before the region was read correctly by all threads (the
 * compiler passes it to the outlined function by address).
 */
#define OT_NAME "parallel"
#include "omptest.h"

static int tid_of_slot[OT_MAX_THREADS];
static int size_seen[OT_MAX_THREADS];
static int value_seen[OT_MAX_THREADS];

int main(void)
{
    int n = ot_team_size();
    int seen[OT_MAX_THREADS] = { 0 };
    int shared_value = 12345 + n;
    int t, sum = 0;

    for (t = 0; t < OT_MAX_THREADS; t++)
        tid_of_slot[t] = -1;

#pragma omp parallel
    {
        int me = omp_get_thread_num();
        int size = omp_get_num_threads();

        if (me >= 0 && me < OT_MAX_THREADS) {
            tid_of_slot[me] = me;
            size_seen[me] = size;
            value_seen[me] = shared_value;
        } else {
            ot_error("omp_get_thread_num() is %d, outside 0..%d", me,
                     OT_MAX_THREADS - 1);
        }
    }

    for (t = 0; t < n; t++) {
        OT_CHECK(tid_of_slot[t] == t, "slot %d holds thread number %d", t,
                 tid_of_slot[t]);
        OT_CHECK(size_seen[t] == n, "thread %d saw a team of %d, expected %d",
                 t, size_seen[t], n);
        OT_CHECK(value_seen[t] == 12345 + n, "thread %d read shared_value "
                 "%d, expected %d", t, value_seen[t], 12345 + n);
        if (tid_of_slot[t] >= 0 && tid_of_slot[t] < OT_MAX_THREADS)
            seen[tid_of_slot[t]]++;
        sum += tid_of_slot[t];
    }
    for (t = n; t < OT_MAX_THREADS; t++)
        OT_CHECK(tid_of_slot[t] == -1, "slot %d written by a team of %d", t, n);
    for (t = 0; t < n; t++)
        OT_CHECK(seen[t] == 1, "thread number %d present %d times", t, seen[t]);
    OT_CHECK(omp_get_thread_num() == 0, "initial thread's number is %d after "
             "the region", omp_get_thread_num());
    OT_CHECK(omp_get_num_threads() == 1, "omp_get_num_threads() is %d outside "
             "the region", omp_get_num_threads());

    ot_print("threads=%d", n);
    ot_print("sum of thread numbers=%d", sum);
    return ot_finish();
}
