/*
 * heap_inside.c - heap memory allocated inside a parallel region by every
 * thread and read by others.
 *
 * Each round, every thread allocates a block (malloc, then calloc, then
 * realloc of a smaller block, by round), fills it with values that name
 * its thread and round, and publishes the pointer in a shared array; after
 * a barrier the next thread (rotating with the round) checks the block;
 * after another barrier the owner frees it.  Then every thread builds a
 * linked list of 100 small nodes, the next thread walks and frees it (a
 * block freed by another thread than the one that allocated it).  Blocks
 * of 1,000 to 20,000 doubles.
 */
#define OT_NAME "heap_inside"
#include "omptest.h"

#define ROUNDS 6
#define NODES 100

struct node {
    struct node *next;
    long value;
};

static double *blocks[OT_MAX_THREADS];
static long sizes[OT_MAX_THREADS];
static struct node *lists[OT_MAX_THREADS];
static int alloc_failed;

static double fill_value(int owner, int round, long k)
{
    return (double)owner * 1e6 + (double)round * 1e4 + (double)(k % 5000);
}

int main(void)
{
    int n = ot_team_size();
    long checked = 0, bad = 0, walked = 0;

    ot_print("threads=%d", n);

#pragma omp parallel reduction(+:checked, bad, walked)
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads(), round;
        long k;

        for (round = 0; round < ROUNDS; round++) {
            long size = 1000 + 3000L * ((me + round) % 7);
            double *p = NULL;
            int other = (me + round + 1) % nt;

            if (round % 3 == 0) {
                p = malloc(size * sizeof *p);
            } else if (round % 3 == 1) {
                p = calloc(size, sizeof *p);
                for (k = 0; p != NULL && k < size; k++)
                    if (p[k] != 0.0)
                        bad++;
            } else {
                p = malloc(10 * sizeof *p);
                if (p != NULL) {
                    p[0] = fill_value(me, round, 0);
                    p = realloc(p, size * sizeof *p);
                    if (p != NULL && p[0] != fill_value(me, round, 0))
                        bad++;
                }
            }
            if (p == NULL) {
#pragma omp atomic write
                alloc_failed = 1;
            } else {
                for (k = 0; k < size; k++)
                    p[k] = fill_value(me, round, k);
            }
            blocks[me] = p;
            sizes[me] = size;
#pragma omp barrier
            if (blocks[other] != NULL) {
                double *q = blocks[other];

                for (k = 0; k < sizes[other]; k++) {
                    if (q[k] != fill_value(other, round, k)) {
                        bad++;
                        break;
                    }
                }
                checked++;
            }
#pragma omp barrier
            free(p);
        }

        {
            struct node *head = NULL, *node;
            int j;

            for (j = 0; j < NODES; j++) {
                node = malloc(sizeof *node);
                if (node == NULL) {
#pragma omp atomic write
                    alloc_failed = 1;
                    break;
                }
                node->value = (long)me * 1000 + j;
                node->next = head;
                head = node;
            }
            lists[me] = head;
#pragma omp barrier
            /* Walk the next thread's list from the end it was built at,
             * and free its nodes. */
            node = lists[(me + 1) % nt];
            for (j = NODES - 1; node != NULL; j--) {
                struct node *next = node->next;

                if (node->value != (long)((me + 1) % nt) * 1000 + j)
                    bad++;
                walked++;
                free(node);
                node = next;
            }
        }
    }

    OT_CHECK(alloc_failed == 0, "an allocation inside the region failed");
    OT_CHECK(bad == 0, "%ld wrong values in blocks read by other threads",
             bad);
    OT_CHECK(checked == (long)n * ROUNDS, "%ld blocks checked, expected %ld",
             checked, (long)n * ROUNDS);
    OT_CHECK(walked == (long)n * NODES, "%ld list nodes walked, expected %ld",
             walked, (long)n * NODES);
    ot_print("%d rounds: %ld blocks checked; %ld list nodes walked; %ld bad",
             ROUNDS, checked, walked, bad);
    return ot_finish();
}
