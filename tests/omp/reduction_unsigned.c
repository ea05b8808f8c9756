/*
 * reduction_unsigned.c - the reduction clause on unsigned int, every
 * operator.
 *
 * Unsigned arithmetic wraps modulo 2^32, so sums and products that
 * overflow are still exact and independent of the order of combination:
 * the sum and the product of odd factors both wrap here.  Each operator in
 * a parallel for (static) and a for (dynamic) inside a parallel region,
 * compared with the sequential loop.
 */
#define OT_NAME "reduction_unsigned"
#include "omptest.h"

#define N 10000

static unsigned v[N], zeros[N], ones[N];

#define ADD(acc, i) (acc) += v[i]
#define MUL(acc, i) (acc) *= (v[i] | 1u)
#define SUB(acc, i) (acc) -= v[i]
#define AND(acc, i) (acc) &= ~(1u << ((i) % 31)) | ((i) % 31 == 30 ? ~0u : 0u)
#define OR(acc, i) (acc) |= ((i) % 3 == 0 ? 1u << ((i) % 23) : 0u)
#define XOR(acc, i) (acc) ^= v[i]
#define LAND1(acc, i) (acc) = (acc) && ones[i]
#define LAND0(acc, i) (acc) = (acc) && ((i) == 1 ? zeros[i] : ones[i])
#define LOR0(acc, i) (acc) = (acc) || zeros[i]
#define LOR1(acc, i) (acc) = (acc) || ((i) == 5000 ? ones[i] : zeros[i])
#define MAX(acc, i) (acc) = (acc) > v[i] ? (acc) : v[i]
#define MIN(acc, i) (acc) = (acc) < v[i] ? (acc) : v[i]

int main(void)
{
    int n = ot_team_size();
    long i;

    for (i = 0; i < N; i++) {
        v[i] = (unsigned)i * 2654435761u + 12345u;
        ones[i] = 1;
    }
    ot_print("threads=%d", n);
    OT_REDUCTION("unsigned", unsigned, "%u", (unsigned), +, 4000000000u, N,
                 ADD);
    OT_REDUCTION("unsigned", unsigned, "%u", (unsigned), *, 3u, N, MUL);
    OT_REDUCTION("unsigned", unsigned, "%u", (unsigned), -, 7u, N, SUB);
    OT_REDUCTION("unsigned", unsigned, "%u", (unsigned), &, ~0u, N, AND);
    OT_REDUCTION("unsigned", unsigned, "%u", (unsigned), |, 1u << 31, N, OR);
    OT_REDUCTION("unsigned", unsigned, "%u", (unsigned), ^, 0xdeadbeefu, N,
                 XOR);
    OT_REDUCTION("unsigned", unsigned, "%u", (unsigned), &&, 1u, N, LAND1);
    OT_REDUCTION("unsigned", unsigned, "%u", (unsigned), &&, 1u, N, LAND0);
    OT_REDUCTION("unsigned", unsigned, "%u", (unsigned), ||, 0u, N, LOR0);
    OT_REDUCTION("unsigned", unsigned, "%u", (unsigned), ||, 0u, N, LOR1);
    OT_REDUCTION("unsigned", unsigned, "%u", (unsigned), max, 0u, N, MAX);
    OT_REDUCTION("unsigned", unsigned, "%u", (unsigned), max, 4294967295u, N,
                 MAX);
    OT_REDUCTION("unsigned", unsigned, "%u", (unsigned), min, 4294967295u, N,
                 MIN);
    OT_REDUCTION("unsigned", unsigned, "%u", (unsigned), min, 0u, N, MIN);
    return ot_finish();
}
