/*
 * ordered.c - the ordered construct in loops with the ordered clause.
 *
 * The ordered block of each iteration runs in the order of the sequential
 * loop, whatever thread runs the iteration: every ordered block appends
 * its iteration to a shared log, which must read 0, 1, ..., N-1.  Work
 * outside the ordered block runs in parallel and is checked too.  With
 * schedule(static), static with a chunk, dynamic, dynamic with a chunk,
 * guided, and a downward loop; 100 iterations each, as each hand-over of
 * the ordered block may cost the shim a round trip.
 */
#define OT_NAME "ordered"
#include "omptest.h"

#define N 100

static long order_log[N], squares[N];
static int pos;

static void reset(void)
{
    int i;

    pos = 0;
    for (i = 0; i < N; i++)
        order_log[i] = squares[i] = -1;
}

static void check(const char *what)
{
    int i;

    OT_CHECK(pos == N, "%s: %d ordered blocks ran, expected %d", what, pos, N);
    for (i = 0; i < N && i < pos; i++) {
        if (order_log[i] != i) {
            ot_error("%s: ordered block %d was iteration %ld, expected %d",
                     what, i, order_log[i], i);
            return;
        }
    }
    for (i = 0; i < N; i++) {
        if (squares[i] != (long)i * i) {
            ot_error("%s: squares[%d] = %ld", what, i, squares[i]);
            return;
        }
    }
    ot_print("%s: %d iterations in order", what, N);
}

int main(void)
{
    int n = ot_team_size();
    long i;

    ot_print("threads=%d", n);

    reset();
#pragma omp parallel for ordered schedule(static)
    for (i = 0; i < N; i++) {
        squares[i] = i * i;
#pragma omp ordered
        order_log[pos++] = i;
    }
    check("static");

    reset();
#pragma omp parallel for ordered schedule(static, 3)
    for (i = 0; i < N; i++) {
        squares[i] = i * i;
#pragma omp ordered
        order_log[pos++] = i;
    }
    check("static,3");

    reset();
#pragma omp parallel for ordered schedule(dynamic)
    for (i = 0; i < N; i++) {
        squares[i] = i * i;
#pragma omp ordered
        order_log[pos++] = i;
    }
    check("dynamic");

    reset();
#pragma omp parallel for ordered schedule(dynamic, 4)
    for (i = 0; i < N; i++) {
        squares[i] = i * i;
#pragma omp ordered
        {
            order_log[pos] = i;
            pos++;
        }
    }
    check("dynamic,4");

    reset();
#pragma omp parallel for ordered schedule(guided)
    for (i = 0; i < N; i++) {
        squares[i] = i * i;
#pragma omp ordered
        order_log[pos++] = i;
    }
    check("guided");

    /* Downward: the ordered blocks run from N-1 down to 0. */
    reset();
#pragma omp parallel for ordered schedule(dynamic, 2)
    for (i = N - 1; i >= 0; i--) {
        squares[i] = i * i;
#pragma omp ordered
        order_log[pos++] = N - 1 - i;
    }
    check("dynamic,2 downward");
    return ot_finish();
}
