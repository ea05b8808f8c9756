/*
 * task_yield.c - taskyield in tasks while other tasks progress.
 *
 * taskyield lets the runtime suspend the current task in favour of
 * another one, but need not do anything (libgomp's does nothing), so no
 * task here waits for another without bound and the results do not depend
 * on whether a yield switched:
 *   - 16 tasks of 20 steps each, a taskyield between steps, each step
 *     adding to the task's own slot;
 *   - 4 waiting tasks that poll, with a taskyield between polls, a counter
 *     that 12 working tasks increase, and give up after 200 polls
 *     (how many saw all 12 goes to stderr only); then they add their own
 *     part, so that the sum is known;
 *   - untied tasks that yield (an untied task may resume in another
 *     thread after a scheduling point: each records its steps in its own
 *     slot, whatever thread it is in);
 *   - taskyield in a task with children pending, then a taskwait; in a
 *     taskgroup; in a final task; in the implicit task of every thread
 *     with its own tasks pending; and in the single that made the tasks.
 */
#define OT_NAME "task_yield"
#include "omptest.h"

#define STEPPERS 16
#define STEPS 20
#define WORKERS 12
#define WAITERS 4
#define POLLS 200
#define UNTIED 8
#define PER_THREAD 6

static long step_slots[STEPPERS];
static int workers_done;
static long worker_part[WORKERS], waiter_part[WAITERS];
static int waiter_saw_all[WAITERS];
static long untied_slots[UNTIED];
static long children[8], group_slots[8], final_sum;
static long team_slots[OT_MAX_THREADS][PER_THREAD];

static void work(int k)
{
    volatile unsigned x = (unsigned)k;
    int i;

    for (i = 0; i < 500; i++)
        x = x * 1103515245u + 12345u;
}

int main(void)
{
    int n = ot_team_size();
    int k, t, saw = 0;
    long total = 0, want = 0;

    ot_print("threads=%d", n);

#pragma omp parallel
#pragma omp single
    {
        int i;

        for (i = 0; i < STEPPERS; i++) {
#pragma omp task firstprivate(i)
            {
                int s;

                for (s = 0; s < STEPS; s++) {
                    work(s);
                    step_slots[i] += s + 1;
#pragma omp taskyield
                }
            }
        }

        for (i = 0; i < WAITERS; i++) {
#pragma omp task firstprivate(i)
            {
                int p, done = 0;

                for (p = 0; p < POLLS; p++) {
#pragma omp atomic read
                    done = workers_done;
                    if (done == WORKERS)
                        break;
#pragma omp taskyield
                }
                waiter_saw_all[i] = done == WORKERS;
                waiter_part[i] = 100 + i;
            }
        }
        for (i = 0; i < WORKERS; i++) {
#pragma omp task firstprivate(i)
            {
                work(i);
#pragma omp taskyield
                worker_part[i] = i + 1;
#pragma omp atomic
                workers_done++;
            }
        }

        for (i = 0; i < UNTIED; i++) {
#pragma omp task untied firstprivate(i)
            {
                int s;

                for (s = 0; s < STEPS; s++) {
                    untied_slots[i] += i * 100 + s;
#pragma omp taskyield
                }
            }
        }

        /* The single itself yields with all of those pending. */
#pragma omp taskyield

#pragma omp task
        {
            int c;

            for (c = 0; c < 8; c++) {
#pragma omp task firstprivate(c)
                {
                    work(c);
                    children[c] = c * c;
                }
            }
#pragma omp taskyield
#pragma omp taskwait
        }

#pragma omp taskgroup
        {
            int g;

            for (g = 0; g < 8; g++) {
#pragma omp task firstprivate(g)
                {
#pragma omp taskyield
                    group_slots[g] = g + 10;
                }
            }
#pragma omp taskyield
        }
        for (i = 0; i < 8; i++)
            OT_CHECK(group_slots[i] == i + 10, "taskgroup with taskyield: "
                     "slot %d holds %ld after the group, expected %d", i,
                     group_slots[i], i + 10);

#pragma omp task final(1)
        {
            int f;

            for (f = 0; f < 4; f++) {
#pragma omp task firstprivate(f)
                {
#pragma omp taskyield
#pragma omp atomic
                    final_sum += f + 1;
                }
#pragma omp taskyield
            }
        }
#pragma omp taskwait
    }

    for (k = 0; k < STEPPERS; k++)
        OT_CHECK(step_slots[k] == STEPS * (STEPS + 1) / 2, "yielding task %d "
                 "added %ld, expected %d", k, step_slots[k],
                 STEPS * (STEPS + 1) / 2);
    for (k = 0; k < WORKERS; k++)
        total += worker_part[k];
    for (k = 0; k < WAITERS; k++) {
        total += waiter_part[k];
        saw += waiter_saw_all[k];
    }
    want = WORKERS * (WORKERS + 1) / 2 + WAITERS * 100 +
        WAITERS * (WAITERS - 1) / 2;
    OT_CHECK(total == want, "workers and waiters: sum %ld, expected %ld",
             total, want);
    fprintf(stderr, "%s: %d of %d waiting tasks saw all %d workers done "
            "within %d polls\n", OT_NAME, saw, WAITERS, WORKERS, POLLS);
    for (k = 0; k < UNTIED; k++)
        OT_CHECK(untied_slots[k] == (long)k * 100 * STEPS +
                 STEPS * (STEPS - 1) / 2, "untied task %d added %ld, "
                 "expected %ld", k, untied_slots[k],
                 (long)k * 100 * STEPS + STEPS * (STEPS - 1) / 2);
    for (k = 0; k < 8; k++)
        OT_CHECK(children[k] == k * k, "children of a yielding task: slot %d "
                 "holds %ld, expected %d", k, children[k], k * k);
    OT_CHECK(final_sum == 10, "final task's yielding children: %ld, expected "
             "10", final_sum);
    ot_print("%d tasks of %d yielding steps, %d workers and %d bounded "
             "waiters (sum %ld), %d untied, children, a group, a final task",
             STEPPERS, STEPS, WORKERS, WAITERS, total, UNTIED);

#pragma omp parallel
    {
        int me = omp_get_thread_num(), j;

        for (j = 0; j < PER_THREAD; j++) {
#pragma omp task firstprivate(me, j)
            {
                work(j);
#pragma omp taskyield
                team_slots[me][j] = me * 10 + j;
            }
#pragma omp taskyield
        }
    }
    total = 0;
    for (t = 0; t < n; t++)
        for (k = 0; k < PER_THREAD; k++) {
            OT_CHECK(team_slots[t][k] == t * 10 + k, "thread %d's task %d "
                     "wrote %ld, expected %d", t, k, team_slots[t][k],
                     t * 10 + k);
            total += team_slots[t][k];
        }
    ot_print("every thread's implicit task yielding: sum %ld", total);
    return ot_finish();
}
