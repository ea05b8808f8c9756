/*
 * reduction_long.c - the reduction clause on long, every operator.
 *
 * As reduction_int.c, with values beyond 32 bits: sums of multiples of
 * 10^9+7, products reaching 2^40, masks over all 64 bits, extremes near
 * +-2^50.  Each in a parallel for (static) and a for (dynamic) inside a
 * parallel region, compared with the sequential loop.
 */
#define OT_NAME "reduction_long"
#include "omptest.h"

#define N 10000

static long v[N], zeros[N], ones[N];

#define ADD(acc, i) (acc) += v[i]
#define MUL(acc, i) (acc) *= ((i) % 250 == 0 ? 2L : (i) % 3333 == 1 ? -1L : 1L)
#define SUB(acc, i) (acc) -= v[i]
#define AND(acc, i) (acc) &= ~(1L << ((i) % 61)) | ((i) % 61 == 40 ? ~0L : 0L)
#define OR(acc, i) (acc) |= ((i) % 7 == 0 ? 1L << ((i) % 59) : 0L)
#define XOR(acc, i) (acc) ^= (long)(i) * 0x100000001L
#define LAND1(acc, i) (acc) = (acc) && ones[i]
#define LAND0(acc, i) (acc) = (acc) && ((i) == 9999 ? zeros[i] : ones[i])
#define LOR0(acc, i) (acc) = (acc) || zeros[i]
#define LOR1(acc, i) (acc) = (acc) || ((i) == 0 ? ones[i] : zeros[i])
#define MAX(acc, i) (acc) = (acc) > v[i] ? (acc) : v[i]
#define MIN(acc, i) (acc) = (acc) < v[i] ? (acc) : v[i]

int main(void)
{
    int n = ot_team_size();
    long i;

    for (i = 0; i < N; i++) {
        v[i] = ((i % 200) - 100) * 1000000007L + (i == 5003 ? 1L << 50 : 0)
               - (i == 17 ? 3L << 49 : 0);
        ones[i] = 1;
    }
    ot_print("threads=%d", n);
    OT_REDUCTION("long", long, "%ld", (long), +, 1L << 33, N, ADD);
    OT_REDUCTION("long", long, "%ld", (long), *, 5, N, MUL);
    OT_REDUCTION("long", long, "%ld", (long), -, -(1L << 35), N, SUB);
    OT_REDUCTION("long", long, "%ld", (long), &, -1L, N, AND);
    OT_REDUCTION("long", long, "%ld", (long), |, 1L << 62, N, OR);
    OT_REDUCTION("long", long, "%ld", (long), ^, 0x123456789abcL, N, XOR);
    OT_REDUCTION("long", long, "%ld", (long), &&, 1, N, LAND1);
    OT_REDUCTION("long", long, "%ld", (long), &&, 1, N, LAND0);
    OT_REDUCTION("long", long, "%ld", (long), ||, 0, N, LOR0);
    OT_REDUCTION("long", long, "%ld", (long), ||, 0, N, LOR1);
    OT_REDUCTION("long", long, "%ld", (long), max, -(1L << 60), N, MAX);
    OT_REDUCTION("long", long, "%ld", (long), max, 1L << 52, N, MAX);
    OT_REDUCTION("long", long, "%ld", (long), min, 1L << 60, N, MIN);
    OT_REDUCTION("long", long, "%ld", (long), min, -(1L << 52), N, MIN);
    return ot_finish();
}
