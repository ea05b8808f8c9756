/*
 * task_depend.c - task dependences (the depend clause).
 *
 *   - a chain of 50 tasks on one variable, out, in, inout, out, in, ...
 *     (each ordered after the one before: in after out, inout after in,
 *     out after inout), each appending its number to a log: the log must
 *     be 0..49 in order;
 *   - 20 diamonds in a row without a taskwait between them: A out(x);
 *     B in(x) out(y); C in(x) out(z); D in(y, z);
 *   - a writer, 16 readers, a second writer that must find all 16
 *     readers done (and they the first writer's value), 16 readers of
 *     its value;
 *   - mutexinoutset: 24 tasks on one variable never overlap (an atomic
 *     count of tasks inside), their plain updates of one sum all land; the
 *     specification's example (c += a and c += b mutually exclusive,
 *     between writers of a, b, c and a reader of c);
 *   - array sections: GCC passes the address of a section's first element,
 *     so a[0:n] of a writer and of readers match, and the two halves of an
 *     array are two independent chains joined by a task on both;
 *   - children of different parents never depend on each other, only on
 *     siblings: 4 tasks each make a chain of children on the same global
 *     address and on a variable of their own stack; every thread's
 *     implicit task makes a chain on that same address; a task with
 *     depend(out: x) whose children have depend(inout: x) (those depend
 *     on no one: the parent is not their sibling, and waiting for it
 *     would never end);
 *   - taskwait depend(in: x) after tasks writing x (GOMP_taskwait_depend):
 *     x is final; taskwait depend(out: x) after readers of x;
 *   - an undeferred task (if(0)) with depend(in: x) waits for the writer
 *     of x before it runs, and is complete when its construct ends;
 *   - depend objects (depobj: GCC fills them inline and passes pointers to
 *     them in the depend array): a writer, readers, the writer's object
 *     updated to inout for a second writer, a reader's object together
 *     with a plain depend(out) on one task, taskwait depend(depobj).
 * GCC 12 does not accept depend(inoutset: ...) or omp_all_memory, so
 * neither is here.  A runtime may run every task at once (the order of
 * creation satisfies every dependence), or later in any thread in any
 * order the dependences allow; the results must be the same.  Tasks do
 * some work of a size that depends on their number, so that a runtime
 * that ignored a dependence would show it.
 */
#define OT_NAME "task_depend"
#include "omptest.h"

#define CHAIN 50
#define DIAMONDS 20
#define READERS 16
#define MUTEX 24
#define ASIZE 64
#define PARENTS 4
#define CHILDREN 12

/* Work of k units, with a result that keeps the compiler from dropping
 * it: spreads the tasks' ends in time. */
static unsigned spin_sink;
static void spin(int k)
{
    unsigned x = (unsigned)k + 1;
    int i;

    for (i = 0; i < k * 2000; i++)
        x = x * 1103515245u + 12345u;
#pragma omp atomic
    spin_sink += x & 1;
}

/* The chain. */
static int chain_log[CHAIN], chain_len, chain_tok;

/* The diamonds. */
static long dx, dy, dz, diamond[DIAMONDS];

/* Readers and writers. */
static int rw_x, seen1[READERS], seen2[READERS], readers_done, writer_saw;

/* mutexinoutset. */
static int mtx, active, overlaps;
static long msum, mc, ma, mb, md;

/* Array sections. */
static int arr[ASIZE], halves[ASIZE];
static long arr_sum1, arr_sum2, halves_sum;

/* Children of different parents. */
static int shared_tok;
static int plog[PARENTS][CHILDREN], plen[PARENTS];
static long pval[PARENTS];
static int tlog[OT_MAX_THREADS][CHILDREN], tlen[OT_MAX_THREADS];
static int nested_x, nested_seen;

/* Depend objects. */
static long dobj_x, dobj_y, dobj_seen[4], dobj_y_saw;

/* taskwait depend and if(0). */
static long tw_x, tw_y, tw_z, tw_readers_saw[4], undeferred_seen;

static void append(int k)
{
    spin((k * 7) % 5);
    chain_log[chain_len] = k;
    chain_len++;
}

static void chain(void)
{
    int k;

    for (k = 0; k < CHAIN; k++) {
        switch (k % 3) {
        case 0:
#pragma omp task depend(out: chain_tok) firstprivate(k)
            append(k);
            break;
        case 1:
#pragma omp task depend(in: chain_tok) firstprivate(k)
            append(k);
            break;
        default:
#pragma omp task depend(inout: chain_tok) firstprivate(k)
            append(k);
            break;
        }
    }
#pragma omp taskwait
}

static void diamonds(void)
{
    int r;

    for (r = 0; r < DIAMONDS; r++) {
#pragma omp task depend(out: dx) firstprivate(r)
        {
            spin(r % 3);
            dx = r * 10 + 1;
        }
#pragma omp task depend(in: dx) depend(out: dy)
        {
            spin(2);
            dy = dx * 2;
        }
#pragma omp task depend(in: dx) depend(out: dz)
        {
            spin(1);
            dz = dx * 3;
        }
#pragma omp task depend(in: dy, dz) firstprivate(r)
        diamond[r] = dy + dz;
    }
#pragma omp taskwait
}

static void readers_writer(void)
{
    int r;

#pragma omp task depend(out: rw_x)
    {
        spin(3);
        rw_x = 7;
    }
    for (r = 0; r < READERS; r++) {
#pragma omp task depend(in: rw_x) firstprivate(r)
        {
            spin(r % 4);
            seen1[r] = rw_x;
#pragma omp atomic
            readers_done++;
        }
    }
#pragma omp task depend(out: rw_x)
    {
        int done;

#pragma omp atomic read
        done = readers_done;
        writer_saw = done;
        rw_x = 8;
    }
    for (r = 0; r < READERS; r++) {
#pragma omp task depend(in: rw_x) firstprivate(r)
        seen2[r] = rw_x;
    }
#pragma omp taskwait
}

static void mutexinoutset(void)
{
    int k;

#pragma omp task depend(out: mtx)
    {
        spin(2);
        msum = 1000;
    }
    for (k = 0; k < MUTEX; k++) {
#pragma omp task depend(mutexinoutset: mtx) firstprivate(k)
        {
            int inside;

#pragma omp atomic capture
            inside = ++active;
            if (inside != 1) {
#pragma omp atomic
                overlaps++;
            }
            msum += k;          /* plain: the tasks exclude each other */
            spin(k % 3);
#pragma omp atomic
            active--;
        }
    }
#pragma omp task depend(in: mtx)
    msum += 1000000;            /* after every mutexinoutset task */

    /* The specification's example (OpenMP 5.0 Examples, task_dep.12). */
#pragma omp task depend(out: mc)
    mc = 1;
#pragma omp task depend(out: ma)
    ma = 2;
#pragma omp task depend(out: mb)
    mb = 3;
#pragma omp task depend(in: ma) depend(mutexinoutset: mc)
    mc += ma;
#pragma omp task depend(in: mb) depend(mutexinoutset: mc)
    mc += mb;
#pragma omp task depend(in: mc)
    md = mc;
#pragma omp taskwait
}

static void sections(void)
{
    int *p = arr, *h = halves;
    int n = ASIZE, half = ASIZE / 2, k;

#pragma omp task depend(out: p[0:n]) firstprivate(p, n)
    {
        int i;

        spin(3);
        for (i = 0; i < n; i++)
            p[i] = i;
    }
#pragma omp task depend(in: p[0:n]) firstprivate(p, n)
    {
        long s = 0;
        int i;

        for (i = 0; i < n; i++)
            s += p[i];
        arr_sum1 = s;
    }
#pragma omp task depend(inout: p[0:n]) firstprivate(p, n)
    {
        int i;

        spin(1);
        for (i = 0; i < n; i++)
            p[i] += 1000;
    }
#pragma omp task depend(in: arr[0:ASIZE])
    {
        long s = 0;
        int i;

        for (i = 0; i < ASIZE; i++)
            s += arr[i];
        arr_sum2 = s;
    }

    /* Two halves, two chains of 5 steps each, then one task on both. */
    for (k = 0; k < 5; k++) {
#pragma omp task depend(inout: h[0:half]) firstprivate(h, half, k)
        {
            int i;

            spin(k % 2);
            for (i = 0; i < half; i++)
                h[i] = h[i] * 2 + k;
        }
#pragma omp task depend(inout: h[half:half]) firstprivate(h, half, k)
        {
            int i;

            spin(1 - k % 2);
            for (i = half; i < 2 * half; i++)
                h[i] = h[i] * 3 + k;
        }
    }
#pragma omp task depend(in: h[0:half], h[half:half]) firstprivate(h, half)
    {
        long s = 0;
        int i;

        for (i = 0; i < 2 * half; i++)
            s += h[i];
        halves_sum = s;
    }
#pragma omp taskwait
}

/* Each of PARENTS tasks makes a chain of children on the global
 * shared_tok and on a local of its own. */
static void parents(void)
{
    int p;

    for (p = 0; p < PARENTS; p++) {
#pragma omp task firstprivate(p)
        {
            long local = p;
            int k;

            for (k = 0; k < CHILDREN; k++) {
#pragma omp task depend(inout: shared_tok) firstprivate(p, k)
                {
                    spin((k + p) % 3);
                    plog[p][plen[p]] = k;
                    plen[p]++;
                }
#pragma omp task depend(inout: local) shared(local) firstprivate(k)
                {
                    spin(k % 2);
                    local = local * 3 + k;
                }
            }
#pragma omp taskwait
            pval[p] = local;
        }
    }
    /* A parent with out(x) whose children have inout(x). */
#pragma omp task depend(out: nested_x)
    {
        int k;

        nested_x = 1;
        for (k = 0; k < 5; k++) {
#pragma omp task depend(inout: nested_x) firstprivate(k)
            nested_x = nested_x * 2 + k;
        }
#pragma omp taskwait
    }
#pragma omp task depend(in: nested_x)
    nested_seen = nested_x;
#pragma omp taskwait
}

static void taskwait_depend(void)
{
    int r;

#pragma omp task depend(out: tw_x)
    {
        spin(3);
        tw_x = 1;
    }
#pragma omp task depend(inout: tw_x)
    {
        spin(2);
        tw_x += 10;
    }
#pragma omp task depend(out: tw_y)
    tw_y = 5;
#pragma omp taskwait depend(in: tw_x)
    OT_CHECK(tw_x == 11, "after taskwait depend(in: x): x=%ld, expected 11",
             tw_x);
#pragma omp taskwait
    OT_CHECK(tw_y == 5, "after taskwait: y=%ld, expected 5", tw_y);

    tw_z = 3;
    for (r = 0; r < 4; r++) {
#pragma omp task depend(in: tw_z) firstprivate(r)
        {
            spin(r);
            tw_readers_saw[r] = tw_z;
        }
    }
#pragma omp taskwait depend(out: tw_z)
    /* The readers are done: the creator may write z. */
    tw_z = 4;
    for (r = 0; r < 4; r++)
        OT_CHECK(tw_readers_saw[r] == 3, "reader %d of z before taskwait "
                 "depend(out: z) saw %ld, expected 3", r, tw_readers_saw[r]);
#pragma omp taskwait

    /* An undeferred task waits for its predecessors. */
#pragma omp task depend(out: tw_x)
    {
        spin(4);
        tw_x = 42;
    }
#pragma omp task if(0) depend(in: tw_x)
    undeferred_seen = tw_x;
    OT_CHECK(undeferred_seen == 42, "an undeferred task with depend(in: x) "
             "saw x=%ld, expected 42 from the task before it",
             undeferred_seen);
    /* And one whose successors wait for it. */
#pragma omp task if(0) depend(out: tw_x)
    tw_x = 43;
#pragma omp task depend(in: tw_x)
    undeferred_seen = tw_x;
#pragma omp taskwait
    OT_CHECK(undeferred_seen == 43, "a task after an undeferred depend(out: "
             "x) saw x=%ld, expected 43", undeferred_seen);
}

static void depobjs(void)
{
    omp_depend_t wr, rd;
    int r;

#pragma omp depobj(wr) depend(out: dobj_x)
#pragma omp depobj(rd) depend(in: dobj_x)
#pragma omp task depend(depobj: wr)
    {
        spin(3);
        dobj_x = 5;
    }
    for (r = 0; r < 4; r++) {
#pragma omp task depend(depobj: rd) firstprivate(r)
        {
            spin(r);
            dobj_seen[r] = dobj_x;
        }
    }
#pragma omp depobj(wr) update(inout)
#pragma omp task depend(depobj: wr)
    dobj_x += 10;
#pragma omp task depend(depobj: rd) depend(out: dobj_y)
    dobj_y = dobj_x;
#pragma omp task depend(in: dobj_y)
    dobj_y_saw = dobj_y;
#pragma omp taskwait depend(depobj: rd)
    /* The writers of x before it are done. */
    OT_CHECK(dobj_x == 15, "after taskwait depend(depobj: in x): x=%ld, "
             "expected 15", dobj_x);
#pragma omp taskwait
#pragma omp depobj(wr) destroy
#pragma omp depobj(rd) destroy
    for (r = 0; r < 4; r++)
        OT_CHECK(dobj_seen[r] == 5, "depobj: reader %d saw %ld, expected 5",
                 r, dobj_seen[r]);
    OT_CHECK(dobj_y_saw == 15, "depobj: a task with depobj(in x) and "
             "out(y) gave %ld to its reader, expected 15", dobj_y_saw);
}

int main(void)
{
    int n = ot_team_size();
    int k, r, t;

    ot_print("threads=%d", n);

#pragma omp parallel
#pragma omp single
    {
        chain();
        diamonds();
        readers_writer();
        mutexinoutset();
        sections();
        parents();
        taskwait_depend();
        depobjs();
    }

    OT_CHECK(chain_len == CHAIN, "chain: %d tasks appended, expected %d",
             chain_len, CHAIN);
    for (k = 0; k < CHAIN && k < chain_len; k++)
        if (chain_log[k] != k) {
            ot_error("chain: entry %d of the log is task %d, expected task "
                     "%d", k, chain_log[k], k);
            break;
        }
    ot_print("chain of %d tasks out/in/inout: in order", CHAIN);

    for (r = 0; r < DIAMONDS; r++)
        OT_CHECK(diamond[r] == 5L * (r * 10 + 1), "diamond %d: D saw %ld, "
                 "expected %ld", r, diamond[r], 5L * (r * 10 + 1));
    ot_print("%d diamonds in a row: complete", DIAMONDS);

    for (r = 0; r < READERS; r++) {
        OT_CHECK(seen1[r] == 7, "reader %d saw %d, expected the first "
                 "writer's 7", r, seen1[r]);
        OT_CHECK(seen2[r] == 8, "reader %d after the second writer saw %d, "
                 "expected 8", r, seen2[r]);
    }
    OT_CHECK(writer_saw == READERS, "the second writer found %d readers "
             "done, expected %d", writer_saw, READERS);
    ot_print("writer, %d readers, writer, %d readers: ordered", READERS,
             READERS);

    OT_CHECK(overlaps == 0, "mutexinoutset: %d tasks found another one "
             "running", overlaps);
    OT_CHECK(msum == 1001000L + MUTEX * (MUTEX - 1) / 2, "mutexinoutset: "
             "sum %ld, expected %ld", msum,
             1001000L + MUTEX * (MUTEX - 1) / 2);
    OT_CHECK(mc == 6 && md == 6, "mutexinoutset example: c=%ld d=%ld, "
             "expected 6 and 6", mc, md);
    ot_print("mutexinoutset: %d tasks, no overlap, sum=%ld; example d=%ld",
             MUTEX, msum, md);

    {
        long want_halves = 0;
        int i;

        for (i = 0; i < ASIZE; i++) {
            long v = 0;

            for (k = 0; k < 5; k++)
                v = i < ASIZE / 2 ? v * 2 + k : v * 3 + k;
            want_halves += v;
        }
        OT_CHECK(arr_sum1 == (long)ASIZE * (ASIZE - 1) / 2, "array section:"
                 " a reader saw sum %ld, expected %ld", arr_sum1,
                 (long)ASIZE * (ASIZE - 1) / 2);
        OT_CHECK(arr_sum2 == (long)ASIZE * (ASIZE - 1) / 2 + 1000L * ASIZE,
                 "array section: the reader after inout saw sum %ld, "
                 "expected %ld", arr_sum2,
                 (long)ASIZE * (ASIZE - 1) / 2 + 1000L * ASIZE);
        OT_CHECK(halves_sum == want_halves, "array halves: sum %ld, "
                 "expected %ld", halves_sum, want_halves);
        ot_print("array sections: %ld %ld %ld", arr_sum1, arr_sum2,
                 halves_sum);
    }

    for (t = 0; t < PARENTS; t++) {
        long want = t;

        for (k = 0; k < CHILDREN; k++)
            want = want * 3 + k;
        OT_CHECK(pval[t] == want, "parent %d: its children's chain on its "
                 "local gave %ld, expected %ld", t, pval[t], want);
        OT_CHECK(plen[t] == CHILDREN, "parent %d: %d children on the "
                 "shared address ran, expected %d", t, plen[t], CHILDREN);
        for (k = 0; k < CHILDREN && k < plen[t]; k++)
            if (plog[t][k] != k) {
                ot_error("parent %d: child %d ran in place %d", t,
                         plog[t][k], k);
                break;
            }
    }
    {
        int want = 1;

        for (k = 0; k < 5; k++)
            want = want * 2 + k;
        OT_CHECK(nested_seen == want, "a parent with out(x) and children "
                 "with inout(x): %d, expected %d", nested_seen, want);
    }

    /* Every thread's implicit task makes a chain on shared_tok. */
#pragma omp parallel
    {
        int me = omp_get_thread_num(), j;

        for (j = 0; j < CHILDREN; j++) {
#pragma omp task depend(inout: shared_tok) firstprivate(me, j)
            {
                spin((me + j) % 3);
                tlog[me][tlen[me]] = j;
                tlen[me]++;
            }
        }
    }
    for (t = 0; t < n; t++) {
        OT_CHECK(tlen[t] == CHILDREN, "thread %d: %d tasks of its chain "
                 "ran, expected %d", t, tlen[t], CHILDREN);
        for (k = 0; k < CHILDREN && k < tlen[t]; k++)
            if (tlog[t][k] != k) {
                ot_error("thread %d: task %d of its chain ran in place %d",
                         t, tlog[t][k], k);
                break;
            }
    }
    ot_print("children of %d parents and of %d implicit tasks on one "
             "address: each chain in order", PARENTS, n);

    ot_print("taskwait depend, undeferred tasks with depend, depend "
             "objects: done");
    return ot_finish();
}
