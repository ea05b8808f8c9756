/*
 * char_array.c - neighbouring bytes written by different threads.
 *
 * Threads write their own elements of char and short arrays in the same
 * loop, with no synchronisation between them: legal OpenMP, since the
 * elements are distinct objects.  Under the shim, neighbouring elements may
 * belong to threads of different ranks and share a 4-byte word; each rank's
 * diff must carry only the bytes it wrote, or one rank's bytes are lost at
 * the home.  Loops: schedule(static) over a length that splits blocks inside
 * words, schedule(static, 1) (every byte's neighbours belong to others),
 * schedule(dynamic, 3), and a short array with schedule(static, 1); each
 * over a global array and a heap array, for 12 rounds in which every other
 * round writes only some elements (the others must keep their values).
 */
#define OT_NAME "char_array"
#include <stdint.h>
#include <stdlib.h>

#include "omptest.h"

#define N 10007                 /* prime: no block boundary on a word edge */
#define ROUNDS 12

static unsigned char g[N];
static uint16_t gs[N];

static unsigned char val(int round, long i, int kind)
{
    return (unsigned char)(i * 131 + round * 29 + kind * 7 + 1);
}

/* Every element in even rounds, about two in three in odd rounds. */
static int written(int round, long i)
{
    return round % 2 == 0 || (i + round) % 3 != 0;
}

static long check(const unsigned char *a, const unsigned char *want, const char *what, int round)
{
    long bad = 0;
    for (long i = 0; i < N; i++)
        if (a[i] != want[i]) {
            if (bad++ == 0)
                ot_error("%s, round %d: byte %ld is %u, expected %u", what, round, i,
                         a[i], want[i]);
        }
    return bad;
}

int main(void)
{
    int n = ot_team_size();
    unsigned char *h = calloc(N, 1), *want = calloc(N, 1), *want_h = calloc(N, 1);
    uint16_t *want_s = calloc(N, sizeof *want_s);
    long bad = 0;

    if (!h || !want || !want_h || !want_s) {
        fprintf(stderr, "%s: FAIL: out of memory\n", OT_NAME);
        return 1;
    }
    ot_print("threads=%d", n);
    for (int round = 0; round < ROUNDS; round++) {
        int kind = round % 3;
        for (long i = 0; i < N; i++)
            if (written(round, i)) {
                want[i] = val(round, i, kind);
                want_h[i] = val(round, i, kind + 3);
                want_s[i] = (uint16_t)(val(round, i, kind) << 8 | val(round, i, kind + 5));
            }
        if (kind == 0) {
#pragma omp parallel for schedule(static)
            for (long i = 0; i < N; i++)
                if (written(round, i)) {
                    g[i] = val(round, i, 0);
                    h[i] = val(round, i, 3);
                }
        } else if (kind == 1) {
#pragma omp parallel for schedule(static, 1)
            for (long i = 0; i < N; i++)
                if (written(round, i)) {
                    g[i] = val(round, i, 1);
                    h[i] = val(round, i, 4);
                }
        } else {
#pragma omp parallel for schedule(dynamic, 3)
            for (long i = 0; i < N; i++)
                if (written(round, i)) {
                    g[i] = val(round, i, 2);
                    h[i] = val(round, i, 5);
                }
        }
#pragma omp parallel for schedule(static, 1)
        for (long i = 0; i < N; i++)
            if (written(round, i))
                gs[i] = (uint16_t)(val(round, i, kind) << 8 | val(round, i, kind + 5));
        bad += check(g, want, "global char array", round);
        bad += check(h, want_h, "heap char array", round);
        bad += check((const unsigned char *)gs, (const unsigned char *)want_s,
                     "global short array (bytes)", round);
        /* And every thread reads back what all wrote. */
        long seen = 0;
#pragma omp parallel reduction(+:seen)
        {
            int me = omp_get_thread_num(), nt = omp_get_num_threads();
            for (long i = me; i < N; i += nt)
                if (g[i] != want[i] || h[i] != want_h[i] || gs[i] != want_s[i])
                    seen++;
        }
        OT_CHECK(seen == 0, "round %d: the team read %ld elements wrong", round, seen);
    }
    OT_CHECK(bad == 0, "%ld bytes wrong after the loops", bad);
    ot_print("rounds=%d", ROUNDS);
    free(h);
    free(want);
    free(want_h);
    free(want_s);
    return ot_finish();
}
