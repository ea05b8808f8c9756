/*
 * task_taskgroup_nested.c - the end of a taskgroup waits for every
 * descendant of the tasks made in it.
 *
 * A tree of tasks four levels deep (4 tasks, each making 3, each making 3,
 * each making 2: 124 tasks), in which no task waits for its children, so
 * that the grandchildren and great-grandchildren are made by tasks that
 * may have finished already.  Each task counts its run in a slot of its
 * own (atomically, so that a task run twice shows).  After the taskgroup
 * that holds the tree, every slot must be 1:
 *   - one tree in a taskgroup in a single;
 *   - nested taskgroups: an outer group with a tree, an inner group with a
 *     second tree (complete at the inner group's end), a third tree made
 *     after the inner group, all three complete at the outer group's end;
 *   - a taskgroup inside a task: 4 tasks, each with its own tree in a
 *     taskgroup, checked by the task itself right after its group; those
 *     tasks inside an outer taskgroup;
 *   - a tree whose top level is undeferred (if(0)) while their descendants
 *     are not;
 *   - a taskgroup with a tree in every thread at once, 5 times in a row.
 */
#define OT_NAME "task_taskgroup_nested"
#include "omptest.h"

#define LEVELS 4
#define WIDEST 72               /* 4 * 3 * 3 * 2 */
#define INNER 4                 /* tasks with a taskgroup of their own */

static const int fan[LEVELS] = { 4, 3, 3, 2 };

struct tree {
    int hits[LEVELS][WIDEST];
};

static struct tree single_tree, outer_a, inner_b, outer_c, undeferred_tree;
static struct tree in_task[INNER];
static struct tree team_trees[OT_MAX_THREADS];
static int in_task_ok[INNER];

static int width(int level)
{
    int w = 1, l;

    for (l = 0; l <= level; l++)
        w *= fan[l];
    return w;
}

static void node(struct tree *tr, int level, int index)
{
    int c;

#pragma omp atomic
    tr->hits[level][index]++;
    if (level + 1 == LEVELS) {
        /* A little work in the leaves, so that they end late. */
        volatile unsigned x = (unsigned)index;
        int i;

        for (i = 0; i < 2000; i++)
            x = x * 1103515245u + 12345u;
        return;
    }
    for (c = 0; c < fan[level + 1]; c++) {
#pragma omp task firstprivate(tr, level, index, c)
        node(tr, level + 1, index * fan[level + 1] + c);
    }
}

/* The top level of a tree, as tasks (undeferred when undeferred is set);
 * nothing waits for them. */
static void spawn(struct tree *tr, int undeferred)
{
    int c;

    for (c = 0; c < fan[0]; c++) {
#pragma omp task firstprivate(tr, c) if(!undeferred)
        node(tr, 0, c);
    }
}

/* Every node of the tree ran exactly once: returns 1 if so. */
static int check_tree(const char *what, int k, struct tree *tr)
{
    int level, i, hits;

    for (level = 0; level < LEVELS; level++)
        for (i = 0; i < width(level); i++) {
#pragma omp atomic read
            hits = tr->hits[level][i];
            if (hits != 1) {
                ot_error("%s %d: node %d of level %d ran %d times, expected "
                         "once", what, k, i, level, hits);
                return 0;
            }
        }
    return 1;
}

static int nodes(void)
{
    int level, s = 0;

    for (level = 0; level < LEVELS; level++)
        s += width(level);
    return s;
}

int main(void)
{
    int n = ot_team_size();
    int t, ok;

    ot_print("threads=%d", n);

#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup
        spawn(&single_tree, 0);
        check_tree("single's tree", 0, &single_tree);

#pragma omp taskgroup
        {
            spawn(&outer_a, 0);
#pragma omp taskgroup
            spawn(&inner_b, 0);
            check_tree("inner group's tree at its end", 0, &inner_b);
            spawn(&outer_c, 0);
        }
        check_tree("outer group's first tree", 0, &outer_a);
        check_tree("outer group's tree after the inner group", 0, &outer_c);

#pragma omp taskgroup
        {
            int k;

            for (k = 0; k < INNER; k++) {
#pragma omp task firstprivate(k)
                {
#pragma omp taskgroup
                    spawn(&in_task[k], 0);
                    in_task_ok[k] = check_tree("taskgroup in task", k,
                                               &in_task[k]);
                }
            }
        }

#pragma omp taskgroup
        spawn(&undeferred_tree, 1);
        check_tree("tree with an undeferred top level", 0, &undeferred_tree);
    }
    ok = 1;
    for (t = 0; t < INNER; t++)
        if (!in_task_ok[t]) {
            ot_error("the task with taskgroup %d did not finish its check "
                     "before the outer group's end", t);
            ok = 0;
        }
    ot_print("trees of %d tasks (4 levels, no taskwait): a group, nested "
             "groups, %d groups in tasks%s, an undeferred top level",
             nodes(), INNER, ok ? "" : " (FAILED)");

#pragma omp parallel
    {
        int me = omp_get_thread_num(), r;

        for (r = 0; r < 5; r++) {
#pragma omp taskgroup
            spawn(&team_trees[me], 0);
            if (check_tree("thread's group, round", r, &team_trees[me])) {
                /* Clear it for the next round: the group's end has
                 * completed every task of the tree. */
                int level, i;

                for (level = 0; level < LEVELS; level++)
                    for (i = 0; i < WIDEST; i++)
                        team_trees[me].hits[level][i] = 0;
            }
        }
    }
    ot_print("a group in each of %d threads, 5 rounds of %d tasks", n,
             nodes());
    return ot_finish();
}
