/*
 * task_alloc.c - memory allocated in one task, used and freed in another.
 *
 *   - 3 rounds of 9 sizes from 1 byte to 1 MB: a task allocates a block
 *     (malloc), writes a pattern that depends on its number, and passes
 *     the pointer to a child task by firstprivate without waiting for it;
 *     the child checks the whole block and frees it; some children first
 *     grow the block with realloc (the old part kept) and check the new
 *     part after writing it;
 *   - the single allocates blocks (malloc, calloc: zero) and tasks free
 *     them;
 *   - tasks allocate blocks and leave them in slots; the single reads and
 *     frees them after a taskwait;
 *   - every thread at once: each makes 10 tasks, each allocating, filling
 *     and handing a block to a child that checks and frees it.
 * The blocks are on the heap, so the tasks that touch a block may run in
 * different threads (under omp-shim: on different ranks).
 */
#define OT_NAME "task_alloc"
#include "omptest.h"

#define NSIZES 9
#define ROUNDS 3
#define KEPT 16
#define PER_THREAD 10

static const size_t sizes[NSIZES] = {
    1, 7, 64, 1000, 4096, 4097, 65539, 300000, 1 << 20
};

static int checked[ROUNDS * NSIZES], freed_by_task[KEPT];
static unsigned char *kept[KEPT];
static int team_checked[OT_MAX_THREADS][PER_THREAD];

static unsigned char pattern(unsigned seed, size_t j)
{
    return (unsigned char)(seed * 131u + (unsigned)(j * 31u) +
                           (unsigned)(j >> 9));
}

static void fill(unsigned char *p, size_t size, unsigned seed)
{
    size_t j;

    for (j = 0; j < size; j++)
        p[j] = pattern(seed, j);
}

/* Whether p[from..to) holds the pattern; says where it does not. */
static int holds(const char *what, const unsigned char *p, size_t from,
                 size_t to, unsigned seed)
{
    size_t j;

    for (j = from; j < to; j++)
        if (p[j] != pattern(seed, j)) {
            ot_error("%s: byte %zu of a block of %zu holds %u, expected %u",
                     what, j, to, p[j], pattern(seed, j));
            return 0;
        }
    return 1;
}

/* A task that allocates a block of size bytes, fills it and hands it to
 * a child, which checks it (after growing it when grow is set) and frees
 * it.  *result becomes 1 when the child found the block right. */
static void hand_over(size_t size, unsigned seed, int grow, int *result)
{
    unsigned char *p = malloc(size);

    if (!p) {
        ot_error("malloc(%zu) in a task failed", size);
        return;
    }
    fill(p, size, seed);
#pragma omp task firstprivate(p, size, seed, grow, result)
    {
        int ok = holds("child", p, 0, size, seed);

        if (ok && grow) {
            unsigned char *q = realloc(p, 2 * size + 100);

            if (!q) {
                ot_error("realloc(%zu) in a task failed", 2 * size + 100);
                ok = 0;
            } else {
                p = q;
                ok = holds("child after realloc", p, 0, size, seed);
                fill(p + size, size + 100, seed + 1);
                {
                    size_t j;

                    for (j = 0; j < size + 100; j++)
                        if (p[size + j] != pattern(seed + 1, j)) {
                            ot_error("grown part: byte %zu wrong", j);
                            ok = 0;
                            break;
                        }
                }
            }
        }
        free(p);
        *result = ok;
    }
}

int main(void)
{
    int n = ot_team_size();
    int k, t, good = 0;

    ot_print("threads=%d", n);

#pragma omp parallel
#pragma omp single
    {
        int r, s, i;

        for (r = 0; r < ROUNDS; r++)
            for (s = 0; s < NSIZES; s++) {
                int idx = r * NSIZES + s;

#pragma omp task firstprivate(idx, s)
                hand_over(sizes[s], (unsigned)idx, idx % 4 == 1,
                          &checked[idx]);
            }

        /* Blocks of the single, freed by tasks. */
        for (i = 0; i < KEPT; i++) {
            size_t size = sizes[i % NSIZES];
            unsigned char *p;

            if (i % 2) {
                p = calloc(size, 1);
            } else {
                p = malloc(size);
                if (p)
                    fill(p, size, 1000u + (unsigned)i);
            }
            if (!p) {
                ot_error("allocation of %zu bytes in the single failed",
                         size);
                continue;
            }
#pragma omp task firstprivate(p, size, i)
            {
                int ok = 1;

                if (i % 2) {
                    size_t j;

                    for (j = 0; j < size; j++)
                        if (p[j] != 0) {
                            ot_error("calloc block %d: byte %zu is %u, "
                                     "expected 0", i, j, p[j]);
                            ok = 0;
                            break;
                        }
                } else {
                    ok = holds("block of the single", p, 0, size,
                               1000u + (unsigned)i);
                }
                free(p);
                freed_by_task[i] = ok;
            }
        }
#pragma omp taskwait

        /* Blocks of tasks, freed by the single. */
        for (i = 0; i < KEPT; i++) {
#pragma omp task firstprivate(i)
            {
                size_t size = sizes[(i + 3) % NSIZES];
                unsigned char *p = malloc(size);

                if (p)
                    fill(p, size, 2000u + (unsigned)i);
                else
                    ot_error("malloc(%zu) in a task failed", size);
                kept[i] = p;
            }
        }
#pragma omp taskwait
        for (i = 0; i < KEPT; i++) {
            if (kept[i]) {
                if (holds("block of a task, read by the single", kept[i], 0,
                          sizes[(i + 3) % NSIZES], 2000u + (unsigned)i))
                    good++;
                free(kept[i]);
            }
        }
    }
    for (k = 0; k < ROUNDS * NSIZES; k++)
        OT_CHECK(checked[k] == 1, "block %d (%zu bytes) handed to a child: "
                 "not checked right (%d)", k, sizes[k % NSIZES], checked[k]);
    for (k = 0; k < KEPT; k++)
        OT_CHECK(freed_by_task[k] == 1, "block %d of the single: the task "
                 "that freed it did not find it right", k);
    OT_CHECK(good == KEPT, "%d of %d blocks of tasks right in the single",
             good, KEPT);
    ot_print("%d blocks of 1 B to 1 MB handed from task to child, %d from "
             "the single to tasks, %d from tasks to the single", ROUNDS *
             NSIZES, KEPT, KEPT);

#pragma omp parallel
    {
        int me = omp_get_thread_num(), j;

        for (j = 0; j < PER_THREAD; j++) {
#pragma omp task firstprivate(me, j)
            hand_over(sizes[(me + j) % 8], (unsigned)(me * 100 + j),
                      j % 3 == 0, &team_checked[me][j]);
        }
    }
    for (t = 0; t < n; t++)
        for (k = 0; k < PER_THREAD; k++)
            OT_CHECK(team_checked[t][k] == 1, "thread %d, block %d: not "
                     "checked right (%d)", t, k, team_checked[t][k]);
    ot_print("every thread: %d blocks handed from task to child", n *
             PER_THREAD);
    return ot_finish();
}
