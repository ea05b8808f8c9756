/*
 * task_firstprivate_array.c - firstprivate arrays and structures of tasks
 * are copies made when the task is created.
 *
 * GCC copies the firstprivate variables of a deferred task into a block
 * of its own when the task is created: with a copy function (cpyfn) for
 * arrays, variable-length arrays (whose size it computes at run time into
 * arg_size) and over-aligned types (arg_align), with memcpy for scalars.
 * In 20 rounds the single sets an int a[100], a double big[4096] (32 KB),
 * a VLA int v[m] (m known at run time), a structure holding a pointer to
 * a block, an array and a string, and a 64-byte aligned structure, makes
 * a task with all of them firstprivate, then changes every one of them at
 * once: each task must see the values of its round, and its aligned copy
 * must be 64-byte aligned.  Also:
 *   - a task that changes its copies leaves the creator's alone (checked
 *     after a taskwait), undeferred (if(0)) as well;
 *   - a task passes its copy on to a child as firstprivate, then changes
 *     its copy: the child sees the values at its creation;
 *   - every thread at once, each with arrays of its own stack.
 */
#define OT_NAME "task_firstprivate_array"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "omptest.h"

#define A 100
#define BIG 4096
#define ROUNDS 20
#define BLOCK 8
#define PER_THREAD 8

struct rec {
    int id;
    double w;
    int *data;
    int small[5];
    char name[16];
};

struct aligned64 {
    long v[3];
} __attribute__((aligned(64)));

static int blocks[ROUNDS][BLOCK];
static int round_ok[ROUNDS], nested_ok[ROUNDS];
static int team_ok[OT_MAX_THREADS][PER_THREAD];
static volatile int vla_extra = 37;

static double big_value(int r, int j)
{
    return r * 10000.0 + j * 0.5;
}

/* Every value of round r where it should be; 1 if so, else reports. */
static int check_round(int r, const int *a, const double *big, int m,
                       const int *v, const struct rec *rc,
                       const struct aligned64 *al)
{
    int j;

    for (j = 0; j < A; j++)
        if (a[j] != r * 1000 + j) {
            ot_error("round %d: a[%d]=%d, expected %d", r, j, a[j],
                     r * 1000 + j);
            return 0;
        }
    for (j = 0; j < BIG; j++)
        if (big[j] != big_value(r, j)) {
            ot_error("round %d: big[%d]=%g, expected %g", r, j, big[j],
                     big_value(r, j));
            return 0;
        }
    for (j = 0; j < m; j++)
        if (v[j] != r * 7 + j) {
            ot_error("round %d: VLA v[%d]=%d, expected %d", r, j, v[j],
                     r * 7 + j);
            return 0;
        }
    {
        char want[16];

        snprintf(want, sizeof want, "round %d", r);
        if (rc->id != r || rc->w != r * 0.25 || rc->data != blocks[r] ||
            strcmp(rc->name, want) != 0) {
            ot_error("round %d: struct {id %d, w %g, data %p, name '%s'}, "
                     "expected {%d, %g, %p, '%s'}", r, rc->id, rc->w,
                     (void *)rc->data, rc->name, r, r * 0.25,
                     (void *)blocks[r], want);
            return 0;
        }
    }
    for (j = 0; j < 5; j++)
        if (rc->small[j] != r + j) {
            ot_error("round %d: struct's small[%d]=%d, expected %d", r, j,
                     rc->small[j], r + j);
            return 0;
        }
    for (j = 0; j < BLOCK; j++)
        if (rc->data[j] != r * 10 + j) {
            ot_error("round %d: the block the struct points to holds %d "
                     "at %d, expected %d", r, rc->data[j], j, r * 10 + j);
            return 0;
        }
    if ((uintptr_t)al % 64 != 0) {
        ot_error("round %d: the copy of a 64-byte aligned struct is at %p",
                 r, (void *)al);
        return 0;
    }
    for (j = 0; j < 3; j++)
        if (al->v[j] != (long)r * 3 + j) {
            ot_error("round %d: aligned struct v[%d]=%ld, expected %ld", r,
                     j, al->v[j], (long)r * 3 + j);
            return 0;
        }
    return 1;
}

static void set_round(int r, int *a, double *big, int m, int *v,
                      struct rec *rc, struct aligned64 *al)
{
    int j;

    for (j = 0; j < A; j++)
        a[j] = r * 1000 + j;
    for (j = 0; j < BIG; j++)
        big[j] = big_value(r, j);
    for (j = 0; j < m; j++)
        v[j] = r * 7 + j;
    rc->id = r;
    rc->w = r * 0.25;
    rc->data = blocks[r];
    for (j = 0; j < 5; j++)
        rc->small[j] = r + j;
    snprintf(rc->name, sizeof rc->name, "round %d", r);
    for (j = 0; j < 3; j++)
        al->v[j] = (long)r * 3 + j;
}

/* Changes everything (the creator right after making a task). */
static void spoil(int *a, double *big, int m, int *v, struct rec *rc,
                  struct aligned64 *al)
{
    int j;

    for (j = 0; j < A; j++)
        a[j] = -1;
    for (j = 0; j < BIG; j++)
        big[j] = -1.0;
    for (j = 0; j < m; j++)
        v[j] = -1;
    rc->id = -1;
    rc->w = -1.0;
    rc->data = NULL;
    memset(rc->small, 0xff, sizeof rc->small);
    strcpy(rc->name, "spoilt");
    for (j = 0; j < 3; j++)
        al->v[j] = -1;
}

static void rounds(void)
{
    int m = vla_extra;
    int a[A], v[m];
    static double big[BIG];     /* 32 KB: off the stack, shared */
    struct rec rc;
    struct aligned64 al;
    int r;

    for (r = 0; r < ROUNDS; r++) {
        set_round(r, a, big, m, v, &rc, &al);
#pragma omp task firstprivate(r, a, big, v, rc, al, m)
        {
            round_ok[r] = check_round(r, a, big, m, v, &rc, &al);
            /* A child gets this task's copies, which then change. */
#pragma omp task firstprivate(r, a, v, rc, m)
            {
                int j, ok = 1;

                for (j = 0; j < A && ok; j++)
                    ok = a[j] == r * 1000 + j;
                for (j = 0; j < m && ok; j++)
                    ok = v[j] == r * 7 + j;
                ok = ok && rc.id == r && rc.data == blocks[r];
                if (!ok)
                    ot_error("round %d: the child did not get its parent's "
                             "copies as they were at its creation", r);
                nested_ok[r] = ok;
            }
            a[0] = -5;
            v[0] = -5;
            rc.id = -5;
            rc.data = NULL;
        }
        spoil(a, big, m, v, &rc, &al);
    }
#pragma omp taskwait

    /* A task's changes to its copies stay there. */
    set_round(3, a, big, m, v, &rc, &al);
#pragma omp task firstprivate(a, v, rc, m)
    {
        int j;

        for (j = 0; j < A; j++)
            a[j] = 0;
        for (j = 0; j < m; j++)
            v[j] = 0;
        rc.id = 0;
    }
#pragma omp task if(0) firstprivate(a, v, rc, m)
    {
        int j;

        for (j = 0; j < A; j++)
            a[j] = 0;
        for (j = 0; j < m; j++)
            v[j] = 0;
        rc.id = 0;
    }
#pragma omp taskwait
    OT_CHECK(check_round(3, a, big, m, v, &rc, &al), "the creator's "
             "variables changed by tasks' writes to their copies");
}

int main(void)
{
    int n = ot_team_size();
    int r, t, k;

    ot_print("threads=%d", n);
    for (r = 0; r < ROUNDS; r++)
        for (k = 0; k < BLOCK; k++)
            blocks[r][k] = r * 10 + k;

#pragma omp parallel
#pragma omp single
    rounds();
    for (r = 0; r < ROUNDS; r++) {
        OT_CHECK(round_ok[r] == 1, "round %d: the task's copies were not "
                 "the values at its creation", r);
        OT_CHECK(nested_ok[r] == 1, "round %d: the child's copies were not "
                 "its parent's values at its creation", r);
    }
    ot_print("%d rounds: int[%d], double[%d], VLA int[%d], a struct with a "
             "pointer, an aligned struct: copies at creation", ROUNDS, A,
             BIG, vla_extra);

#pragma omp parallel
    {
        int me = omp_get_thread_num(), j, i;
        int a[A];
        struct rec rc;

        memset(&rc, 0, sizeof rc);
        for (j = 0; j < PER_THREAD; j++) {
            for (i = 0; i < A; i++)
                a[i] = me * 100000 + j * 1000 + i;
            rc.id = me * 100 + j;
            rc.data = blocks[j];
#pragma omp task firstprivate(me, j, a, rc)
            {
                int ii, ok = rc.id == me * 100 + j && rc.data == blocks[j];

                for (ii = 0; ii < A && ok; ii++)
                    ok = a[ii] == me * 100000 + j * 1000 + ii;
                team_ok[me][j] = ok;
            }
            for (i = 0; i < A; i++)
                a[i] = -1;
            rc.id = -1;
        }
    }
    for (t = 0; t < n; t++)
        for (k = 0; k < PER_THREAD; k++)
            OT_CHECK(team_ok[t][k] == 1, "thread %d, task %d: its copies "
                     "were not the values at its creation", t, k);
    ot_print("every thread: %d tasks with firstprivate arrays of its stack",
             n * PER_THREAD);
    return ot_finish();
}
