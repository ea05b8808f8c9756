/*
 * task_taskwait_nested.c - taskwait inside tasks, three levels deep.
 *
 * A tree of tasks: the top level (6 tasks) each make 5 children, each of
 * those 4 leaves.  Every level waits for its children with taskwait and
 * checks, right after it, that each child has written its slot (the slots
 * are in the waiting task's own stack frame, shared with the children),
 * then sums them into its own slot in its parent's frame.  The top-level
 * tasks do it twice: a second round of children uses the sums of the
 * first.  Made once from a single (the results checked in the single after
 * its taskwait) and once from every thread at the same time (each
 * implicit task waits for its own top-level tasks), and once more with
 * the middle level undeferred (if(0)), whose taskwait then waits inside
 * an undeferred task.  A taskwait in a task without children returns.
 */
#define OT_NAME "task_taskwait_nested"
#include "omptest.h"

#define TOP 6
#define MID 5
#define LEAF 4

/* The value of leaf l of middle task m of top task t, round r. */
static long leaf_value(int r, int t, int m, int l)
{
    return 1000L * r + 100L * t + 10L * m + l + 1;
}

static long mid_value(int r, int t, int m)
{
    long s = 0;
    int l;

    for (l = 0; l < LEAF; l++)
        s += leaf_value(r, t, m, l);
    return s;
}

static long top_value(int t)
{
    long s = 0;
    int m;

    for (m = 0; m < MID; m++)
        s += mid_value(0, t, m) + mid_value(1, t, m);
    return s;
}

/* A middle task: LEAF children, a taskwait, the check, the sum. */
static long middle(int r, int t, int m)
{
    long leaves[LEAF];
    long s = 0;
    int l;

    for (l = 0; l < LEAF; l++)
        leaves[l] = -1;
    for (l = 0; l < LEAF; l++) {
#pragma omp task shared(leaves) firstprivate(r, t, m, l)
        {
            /* A taskwait without children returns at once. */
#pragma omp taskwait
            leaves[l] = leaf_value(r, t, m, l);
        }
    }
#pragma omp taskwait
    for (l = 0; l < LEAF; l++) {
        OT_CHECK(leaves[l] == leaf_value(r, t, m, l), "round %d, task %d.%d: "
                 "after taskwait leaf %d holds %ld, expected %ld", r, t, m, l,
                 leaves[l], leaf_value(r, t, m, l));
        s += leaves[l];
    }
    return s;
}

/* A top-level task: two rounds of MID children each, with a taskwait;
 * the middle level undeferred when undeferred is set. */
static long top(int t, int undeferred)
{
    long mids[2][MID];
    long s = 0;
    int r, m;

    for (r = 0; r < 2; r++) {
        for (m = 0; m < MID; m++)
            mids[r][m] = -1;
        for (m = 0; m < MID; m++) {
#pragma omp task shared(mids) firstprivate(r, t, m) if(!undeferred)
            mids[r][m] = middle(r, t, m);
            if (undeferred)
                OT_CHECK(mids[r][m] == mid_value(r, t, m), "an undeferred "
                         "task %d.%d is not complete when its construct "
                         "ends: %ld, expected %ld", t, m, mids[r][m],
                         mid_value(r, t, m));
        }
#pragma omp taskwait
        for (m = 0; m < MID; m++) {
            OT_CHECK(mids[r][m] == mid_value(r, t, m), "round %d, task %d: "
                     "after taskwait child %d holds %ld, expected %ld", r, t,
                     m, mids[r][m], mid_value(r, t, m));
            /* The second round's children ran after the first round's. */
            s += mids[r][m];
        }
    }
    return s;
}

/* TOP top-level tasks, a taskwait, the check; into tops[]. */
static void tree(long *tops, int undeferred)
{
    int t;

    for (t = 0; t < TOP; t++)
        tops[t] = -1;
    for (t = 0; t < TOP; t++) {
#pragma omp task firstprivate(t, undeferred, tops)
        tops[t] = top(t, undeferred);
    }
#pragma omp taskwait
    for (t = 0; t < TOP; t++)
        OT_CHECK(tops[t] == top_value(t), "after taskwait top task %d holds "
                 "%ld, expected %ld", t, tops[t], top_value(t));
}

static long sum(const long *v, int count)
{
    long s = 0;
    int i;

    for (i = 0; i < count; i++)
        s += v[i];
    return s;
}

static long single_tops[TOP], undeferred_tops[TOP];
static long team_tops[OT_MAX_THREADS][TOP];

int main(void)
{
    int n = ot_team_size();
    long want = 0, team = 0;
    int t;

    ot_print("threads=%d", n);
    for (t = 0; t < TOP; t++)
        want += top_value(t);

#pragma omp parallel
#pragma omp single
    tree(single_tops, 0);
    OT_CHECK(sum(single_tops, TOP) == want, "from a single: sum %ld, "
             "expected %ld", sum(single_tops, TOP), want);
    ot_print("from a single: %d x %d x 2 x %d tasks, sum=%ld", TOP, MID,
             LEAF, sum(single_tops, TOP));

#pragma omp parallel
    tree(team_tops[omp_get_thread_num()], 0);
    for (t = 0; t < n; t++) {
        OT_CHECK(sum(team_tops[t], TOP) == want, "from thread %d: sum %ld, "
                 "expected %ld", t, sum(team_tops[t], TOP), want);
        team += sum(team_tops[t], TOP);
    }
    ot_print("from every thread: sum=%ld", team);

#pragma omp parallel
#pragma omp single
    tree(undeferred_tops, 1);
    OT_CHECK(sum(undeferred_tops, TOP) == want, "middle level undeferred: "
             "sum %ld, expected %ld", sum(undeferred_tops, TOP), want);
    ot_print("middle level undeferred: sum=%ld", sum(undeferred_tops, TOP));
    return ot_finish();
}
