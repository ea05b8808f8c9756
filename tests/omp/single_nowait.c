/*
 * single_nowait.c - single with nowait: no barrier at its end.
 *
 * 100 single nowait constructs in a row, each writing its own slot: each
 * must run exactly once even though fast threads may be many singles
 * ahead of slow ones (checked after an explicit barrier).  Then a single
 * nowait whose thread waits inside it until another thread has gone past
 * it: with a barrier at the end of the single this would never happen, so
 * the wait gives up after 20 s and reports it.
 */
#define OT_NAME "single_nowait"
#include "omptest.h"

#define ROUNDS 100

static int runs[ROUNDS];
static int passed, waited_ok;

int main(void)
{
    int n = ot_team_size();
    int r, all_once = 1;

    ot_print("threads=%d", n);

#pragma omp parallel private(r)
    {
        for (r = 0; r < ROUNDS; r++) {
#pragma omp single nowait
            runs[r]++;
        }
#pragma omp barrier

#pragma omp single nowait
        {
            double start = omp_get_wtime();
            int seen = 0;

            /* A team of one has nobody to wait for. */
            while (omp_get_num_threads() > 1 && seen == 0) {
#pragma omp atomic read
                seen = passed;
                if (omp_get_wtime() - start > 20.0) {
                    ot_error("no thread got past a single nowait in 20 s: "
                             "it behaves like a single with a barrier");
                    break;
                }
            }
            waited_ok = 1;
        }
#pragma omp atomic
        passed++;
    }

    for (r = 0; r < ROUNDS; r++) {
        if (runs[r] != 1) {
            ot_error("single nowait %d ran %d times", r, runs[r]);
            all_once = 0;
        }
    }
    OT_CHECK(waited_ok == 1 && passed == n, "waiting single: done %d, "
             "passed %d, expected 1 and %d", waited_ok, passed, n);
    ot_print("%d singles nowait, %s; waiting single: done", ROUNDS,
             all_once ? "each once" : "NOT each once");
    return ot_finish();
}
