/*
 * nested_function.c - GCC nested functions that use their parent's locals,
 * passed to qsort: each call makes a trampoline on the caller's stack, and
 * the program runs it there.  The binary asks for an executable stack
 * (PT_GNU_STACK, -z execstack); under the shim, the stacks are in shared
 * memory, which must then be executable too.
 *
 * Each thread sorts an array of its own, up or down as its number says,
 * through a comparator that reads the direction from its enclosing
 * function; the initial thread does the same before and after the region.
 * Before the shim honoured PT_GNU_STACK, the first trampoline faulted on
 * the non-executable page forever (a hang at full CPU).
 */
#define OT_NAME "nested_function"
#include "omptest.h"

#define LEN 200

/* 1 when a[] is in the order dir asks for. */
static int sort_and_check(int *a, int n, int dir)
{
    int cmp(const void *x, const void *y)
    {
        int u = *(const int *)x, v = *(const int *)y;
        return dir * ((u > v) - (u < v));
    }
    qsort(a, (size_t)n, sizeof *a, cmp);
    for (int i = 1; i < n; i++)
        if (dir * (a[i] - a[i - 1]) < 0)
            return 0;
    return 1;
}

static void fill(int *a, int n, int seed)
{
    for (int i = 0; i < n; i++)
        a[i] = (i * 37 + seed * 11) % n;
}

int main(void)
{
    int n = ot_team_size(), a[LEN];
    long sorted = 0;

    ot_print("threads=%d", n);
    fill(a, LEN, 1);
    OT_CHECK(sort_and_check(a, LEN, 1), "the initial thread's sort before the region");
#pragma omp parallel reduction(+:sorted)
    {
        int me = omp_get_thread_num(), b[LEN];
        for (int k = 0; k < 20; k++) {
            fill(b, LEN, me + k);
            if (sort_and_check(b, LEN, (me + k) % 2 ? -1 : 1))
                sorted++;
            else
                ot_error("thread %d, round %d: not sorted", me, k);
        }
    }
    fill(a, LEN, 2);
    OT_CHECK(sort_and_check(a, LEN, -1), "the initial thread's sort after the region");
    OT_CHECK(sorted == 20L * n, "%ld of %ld sorts right", sorted, 20L * n);
    ot_print("sorts=%ld", sorted);
    return ot_finish();
}
