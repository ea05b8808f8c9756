/*
 * task_final.c - final tasks, included tasks and omp_in_final.
 *
 * A task whose final clause is true is final, and so is every task it
 * generates: those are included tasks, run at once by the thread that
 * meets them, sequentially inside the generating task.  omp_in_final()
 * is true exactly in a final task.  Checked:
 *   - omp_in_final() is false in an implicit task, in a task with
 *     final(0), in an undeferred task (if(0), which is not final) and in a
 *     task without the clause; true in a task with final(1) and in its
 *     children and grandchildren;
 *   - a recursion with final(depth > 2): true exactly below depth 2;
 *   - the children of a final task run in the thread that made them, and
 *     are complete when their construct ends (their slot written before
 *     the parent goes on), without a taskwait;
 *   - a taskloop with final(1): true in every iteration;
 *   - the same from every thread at once.
 * omp-shim's omp_in_final returns 0 always (until issue 41), so this
 * program fails there even though running every task at once is allowed.
 */
#define OT_NAME "task_final"
#include "omptest.h"

#define DEPTH 5
#define KIDS 6
#define LOOP 64

static int wrong_final, wrong_thread, not_complete;
static int levels_seen[DEPTH + 1][2];
static int loop_final[LOOP];
static int team_done[OT_MAX_THREADS];

static void expect_final(int want, const char *where)
{
    int got = omp_in_final() != 0;

    if (got != want) {
#pragma omp atomic
        wrong_final++;
        ot_error("omp_in_final() is %d in %s, expected %d", got, where,
                 want);
    }
}

/* Tasks at every level, final below depth 2; each checks omp_in_final. */
static void recurse(int depth)
{
    int c;

    if (depth == DEPTH)
        return;
    for (c = 0; c < 2; c++) {
#pragma omp task final(depth + 1 > 2) firstprivate(depth)
        {
            int is_final = omp_in_final() != 0;

#pragma omp atomic
            levels_seen[depth + 1][is_final]++;
            recurse(depth + 1);
        }
    }
#pragma omp taskwait
}

/* A final task: its children and grandchildren are included, so run at
 * once in this thread. */
static void final_family(void)
{
#pragma omp task final(1)
    {
        int me = omp_get_thread_num(), k;
        int done[KIDS];

        expect_final(1, "a task with final(1)");
        for (k = 0; k < KIDS; k++) {
            done[k] = 0;
#pragma omp task firstprivate(k, me) shared(done)
            {
                int inner = 0;

                expect_final(1, "a child of a final task");
                if (omp_get_thread_num() != me) {
#pragma omp atomic
                    wrong_thread++;
                    ot_error("an included task ran in thread %d, its parent "
                             "in thread %d", omp_get_thread_num(), me);
                }
#pragma omp task shared(inner)
                {
                    expect_final(1, "a grandchild of a final task");
                    inner = 1;
                }
                /* Included: complete before its construct ends. */
                if (inner != 1) {
#pragma omp atomic
                    not_complete++;
                }
                done[k] = 1;
            }
            if (done[k] != 1) {
#pragma omp atomic
                not_complete++;
                ot_error("included task %d not complete after its "
                         "construct", k);
            }
        }
    }
}

int main(void)
{
    int n = ot_team_size();
    int d, k, t;

    ot_print("threads=%d", n);

    expect_final(0, "the initial task");
#pragma omp parallel
    {
        expect_final(0, "an implicit task");
#pragma omp single
        {
#pragma omp task final(0)
            expect_final(0, "a task with final(0)");
#pragma omp task
            expect_final(0, "a task without final");
#pragma omp task if(0)
            expect_final(0, "an undeferred task");
#pragma omp taskwait
            final_family();
#pragma omp taskwait
            recurse(0);
#pragma omp taskloop final(1) grainsize(8)
            for (k = 0; k < LOOP; k++)
                loop_final[k] = omp_in_final() != 0;
        }
    }
    for (d = 1; d <= DEPTH; d++) {
        int tasks = 1 << d, want = d > 2;

        OT_CHECK(levels_seen[d][want] == tasks && levels_seen[d][!want] == 0,
                 "final(depth > 2), depth %d: omp_in_final() true in %d and "
                 "false in %d of %d tasks, expected %s in all", d,
                 levels_seen[d][1], levels_seen[d][0], tasks,
                 want ? "true" : "false");
    }
    for (k = 0; k < LOOP; k++)
        if (!loop_final[k]) {
            ot_error("taskloop final(1): omp_in_final() false in iteration "
                     "%d", k);
            break;
        }
    OT_CHECK(wrong_final == 0 && wrong_thread == 0 && not_complete == 0,
             "%d wrong omp_in_final, %d included tasks in another thread, "
             "%d included tasks not complete at once", wrong_final,
             wrong_thread, not_complete);
    ot_print("omp_in_final in implicit, final(0), final(1), undeferred, "
             "included tasks; final(depth > 2) over %d levels; taskloop "
             "final(1)", DEPTH);

#pragma omp parallel
    {
        int me = omp_get_thread_num();

        final_family();
#pragma omp taskwait
        team_done[me] = 1;
    }
    for (t = 0; t < n; t++)
        OT_CHECK(team_done[t] == 1, "thread %d did not finish", t);
    OT_CHECK(wrong_final == 0 && wrong_thread == 0 && not_complete == 0,
             "every thread: %d wrong omp_in_final, %d included tasks in "
             "another thread, %d not complete at once", wrong_final,
             wrong_thread, not_complete);
    ot_print("every thread: a final task with included children");
    return ot_finish();
}
