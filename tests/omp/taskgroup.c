/*
 * taskgroup.c - the taskgroup construct.
 *
 * taskwait waits for the children of the current task only; the end of a
 * taskgroup waits for every task created in it and all their descendants.
 * A task tree (10 tasks, each creating 5 children, each creating 2
 * grandchildren, none waiting) inside a taskgroup: after the group every
 * node of the tree must have run.  Nested taskgroups; a taskgroup in every
 * thread at once; 20 taskgroups in a row.
 */
#define OT_NAME "taskgroup"
#include "omptest.h"

#define TOP 10
#define MID 5
#define LEAF 2

static int leaves[TOP][MID][LEAF];
static long nodes;
static int grandchildren[OT_MAX_THREADS];

static void tree(void)
{
    int t, m, l;

    for (t = 0; t < TOP; t++) {
#pragma omp task firstprivate(t) private(m, l)
        {
#pragma omp atomic
            nodes++;
            for (m = 0; m < MID; m++) {
#pragma omp task firstprivate(t, m) private(l)
                {
#pragma omp atomic
                    nodes++;
                    for (l = 0; l < LEAF; l++) {
#pragma omp task firstprivate(t, m, l)
                        {
#pragma omp atomic
                            nodes++;
                            leaves[t][m][l]++;
                        }
                    }
                }
            }
        }
    }
}

static long count_leaves(void)
{
    long c = 0;
    int t, m, l;

    for (t = 0; t < TOP; t++)
        for (m = 0; m < MID; m++)
            for (l = 0; l < LEAF; l++)
                c += leaves[t][m][l];
    return c;
}

int main(void)
{
    int n = ot_team_size();
    long per_tree = TOP + TOP * MID + TOP * MID * LEAF;
    long seen_nodes = -1, seen_leaves = -1, inner = -1, outer = 0;
    long per_thread_groups = 0;
    ot_print("threads=%d", n);

#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup
        tree();
        seen_nodes = nodes;
        seen_leaves = count_leaves();

#pragma omp taskgroup
        {
#pragma omp task shared(outer)
            {
#pragma omp taskgroup
                {
#pragma omp task shared(outer)
                    {
#pragma omp atomic
                        outer += 1;
                    }
                }
#pragma omp atomic read
                inner = outer;
#pragma omp atomic
                outer += 10;
            }
        }
    }
    OT_CHECK(seen_nodes == per_tree && seen_leaves == TOP * MID * LEAF,
             "after the taskgroup: %ld nodes and %ld leaves ran, expected %ld "
             "and %d", seen_nodes, seen_leaves, per_tree, TOP * MID * LEAF);
    OT_CHECK(inner == 1 && outer == 11, "nested taskgroups: inner saw %ld, "
             "outer %ld, expected 1 and 11", inner, outer);
    ot_print("tree of %ld tasks complete at the end of the taskgroup; nested "
             "groups: %ld %ld", per_tree, inner, outer);

    nodes = 0;
#pragma omp parallel reduction(+:per_thread_groups)
    {
        int me = omp_get_thread_num(), r;

        for (r = 0; r < 20; r++) {
            int done;

#pragma omp taskgroup
            {
#pragma omp task firstprivate(me)
                {
#pragma omp task firstprivate(me)
                    {
#pragma omp atomic
                        nodes++;
#pragma omp atomic
                        grandchildren[me]++;
                    }
                }
            }
            /* The group's grandchild has run. */
#pragma omp atomic read
            done = grandchildren[me];
            if (done == r + 1)
                per_thread_groups++;
        }
    }
    OT_CHECK(nodes == 20L * n, "taskgroups in every thread: %ld tasks ran, "
             "expected %ld", nodes, 20L * n);
    OT_CHECK(per_thread_groups == 20L * n, "%ld of %ld taskgroups ended "
             "before their grandchild ran", 20L * n - per_thread_groups,
             20L * n);
    ot_print("20 taskgroups in each of %d threads: %ld tasks", n, nodes);
    return ot_finish();
}
