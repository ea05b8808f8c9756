/*
 * single.c - the single construct (with its implied barrier).
 *
 * 50 single constructs in a row in one region: each must run in exactly
 * one thread, and because of the barrier at its end every thread must then
 * see what it wrote (a stamp in a global array and a value in a heap
 * block; each single writes its own slot, as the next single may already
 * run while a slow thread reads).  Singles with a private
 * and a firstprivate clause, and a single in an orphaned function called
 * inside and outside a region.
 */
#define OT_NAME "single"
#include "omptest.h"

#define ROUNDS 50

static int stamp[ROUNDS], runs[ROUNDS];

static int orphan_count;

static void orphan(void)
{
#pragma omp single
    orphan_count++;
}

int main(void)
{
    int n = ot_team_size();
    double *block = malloc(ROUNDS * sizeof *block);
    int base = 100, r;

    if (block == NULL) {
        fprintf(stderr, "%s: FAIL: malloc\n", OT_NAME);
        return 1;
    }
    ot_print("threads=%d", n);

#pragma omp parallel private(r)
    {
        int tmp = -1;

        for (r = 0; r < ROUNDS; r++) {
#pragma omp single
            {
                runs[r]++;
                stamp[r] = r + 1;
                block[r] = 0.5 * r;
            }
            if (stamp[r] != r + 1 || block[r] != 0.5 * r) {
                ot_error("after single %d: stamp %d, block %.1f", r,
                         stamp[r], block[r]);
            }
        }
#pragma omp single private(tmp) firstprivate(base)
        {
            tmp = base + 1;
            runs[0] += tmp - base;
        }
        (void)tmp;
        orphan();
        orphan();
    }
    orphan();

    for (r = 0; r < ROUNDS; r++)
        OT_CHECK(runs[r] == (r == 0 ? 2 : 1), "single %d ran %d times", r,
                 runs[r]);
    OT_CHECK(orphan_count == 3, "orphaned single ran %d times, expected 3",
             orphan_count);
    ot_print("%d singles, each once; orphaned singles: %d", ROUNDS,
             orphan_count);
    free(block);
    return ot_finish();
}
