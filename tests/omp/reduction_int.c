/*
 * reduction_int.c - the reduction clause on int, every operator.
 *
 * + * - & | ^ && || max min, each on a loop of 10,000 iterations over a
 * global array, in a parallel for (static) and in a for (dynamic) inside a
 * parallel region, each compared with the same loop run sequentially.  The
 * initial values are not the operators' identities, so the original value
 * must take part in the result; products stay far from overflow (factors of
 * 2 and -1 only); && and || are run once with a result of 1 and once of 0.
 */
#define OT_NAME "reduction_int"
#include "omptest.h"

#define N 10000

static int v[N], zeros[N], ones[N];

#define ADD(acc, i) (acc) += v[i]
#define MUL(acc, i) (acc) *= ((i) % 1000 == 0 ? 2 : (i) % 3333 == 1 ? -1 : 1)
#define SUB(acc, i) (acc) -= v[i]
#define AND(acc, i) (acc) &= ~(1 << ((i) % 29)) | ((i) % 29 == 3 ? ~0 : 0)
#define OR(acc, i) (acc) |= ((i) % 5 == 0 ? 1 << ((i) % 17) : 0)
#define XOR(acc, i) (acc) ^= (int)((i) * 7)
#define LAND1(acc, i) (acc) = (acc) && ones[i]
#define LAND0(acc, i) (acc) = (acc) && ((i) == 7777 ? zeros[i] : ones[i])
#define LOR0(acc, i) (acc) = (acc) || zeros[i]
#define LOR1(acc, i) (acc) = (acc) || ((i) == 4321 ? ones[i] : zeros[i])
#define MAX(acc, i) (acc) = (acc) > v[i] ? (acc) : v[i]
#define MIN(acc, i) (acc) = (acc) < v[i] ? (acc) : v[i]

int main(void)
{
    int n = ot_team_size();
    long i;

    for (i = 0; i < N; i++) {
        /* -50..49 with a large outlier each way. */
        v[i] = (int)(i % 100) - 50 + (i == 6001 ? 70000 : 0)
               - (i == 2999 ? 80000 : 0);
        ones[i] = 1;
    }
    ot_print("threads=%d", n);
    OT_REDUCTION("int", int, "%d", (int), +, 17, N, ADD);
    OT_REDUCTION("int", int, "%d", (int), *, 3, N, MUL);
    OT_REDUCTION("int", int, "%d", (int), -, 1000, N, SUB);
    OT_REDUCTION("int", int, "%d", (int), &, -1, N, AND);
    OT_REDUCTION("int", int, "%d", (int), |, 0x40000000, N, OR);
    OT_REDUCTION("int", int, "%d", (int), ^, 0x5555, N, XOR);
    OT_REDUCTION("int", int, "%d", (int), &&, 1, N, LAND1);
    OT_REDUCTION("int", int, "%d", (int), &&, 1, N, LAND0);
    OT_REDUCTION("int", int, "%d", (int), ||, 0, N, LOR0);
    OT_REDUCTION("int", int, "%d", (int), ||, 0, N, LOR1);
    OT_REDUCTION("int", int, "%d", (int), max, -1000000, N, MAX);
    OT_REDUCTION("int", int, "%d", (int), max, 100000, N, MAX);
    OT_REDUCTION("int", int, "%d", (int), min, 1000000, N, MIN);
    OT_REDUCTION("int", int, "%d", (int), min, -100000, N, MIN);
    return ot_finish();
}
