/*
 * plain_atomics.c - the atomic read-modify-write instructions plain gcc
 * puts inline, on shared variables updated by every thread at once.
 *
 * Built three ways (Makefile.inc): PROG.gomp and PROG.dsm are compared like
 * every test; PROG.plain, built with plain gcc -fopenmp (every atomic an
 * inline lock-prefixed instruction, or xchg), runs under the shim too and
 * must print what libgomp prints (run-omp-test.sh): the shim runs such an
 * instruction at the variable's home when it faults (omp-shim/libc/
 * inline_atomics.c).  Each kind of update has its own variables, on pages
 * no thread writes otherwise in that phase: an atomic on a page this rank
 * made writable with plain stores runs on its copy (ompshim(7), ATOMICS).
 *
 * Phases, each ended by the region's join: lock add/sub of 1, 2, 4 and 8
 * bytes with immediates and registers; inc/dec; and/or/xor; xadd (atomic
 * capture); cmpxchg loops (double +=, a max, __atomic_compare_exchange);
 * xchg (exchange); bts/btr (__atomic_fetch_or/and of one bit, whose
 * result is tested); a reduction(+) of a long and of a double, and a
 * reduction(max) of an int, into variables on main's stack.  Last, a page
 * that every thread updates with an atomic and then writes plainly: under
 * the shim the plain build's other ranks warn that their later atomics on
 * it run on their copies (run-omp-test.sh looks for the warning); its
 * count is not printed, as such updates may be lost.
 */
#define OT_NAME "plain_atomics"
#include "omptest.h"

#define ROUNDS 300
#define PAGE_APART __attribute__((aligned(65536)))

static struct { long l; int i; short s; signed char c; } PAGE_APART adds;
static struct { unsigned long l; unsigned int i; } PAGE_APART bits;
static struct { long total; long seen_max; } PAGE_APART caps;
static struct { double sum; int max; long cas; } PAGE_APART loops;
static struct { long slot; long swaps; } PAGE_APART xchgs;
static struct { unsigned long word; long set_first; } PAGE_APART bitops;
static struct { long count; long slot[OT_MAX_THREADS]; } PAGE_APART mixed;

int main(void)
{
    int n = ot_team_size();
    if (n > 32) {
        fprintf(stderr, "plain_atomics: at most 32 threads (one bit each)\n");
        return 77;
    }

#pragma omp parallel
    for (int k = 0; k < ROUNDS; k++) {
        int t = omp_get_thread_num();
#pragma omp atomic
        adds.l += 3;
#pragma omp atomic
        adds.i -= t + 1;                /* register source */
#pragma omp atomic
        adds.s += 2;
#pragma omp atomic
        adds.c += (signed char)(k & 1);
#pragma omp atomic
        adds.l -= 1;
    }
    ot_print("adds: %ld %d %d %d", adds.l, adds.i, (int)adds.s, (int)adds.c);
    OT_CHECK(adds.l == 2L * ROUNDS * n, "adds.l %ld", adds.l);
    OT_CHECK(adds.i == -ROUNDS * n * (n + 1) / 2, "adds.i %d", adds.i);

#pragma omp parallel
    for (int k = 0; k < ROUNDS; k++) {
        int t = omp_get_thread_num();
        __atomic_add_fetch(&adds.i, 1, __ATOMIC_SEQ_CST);          /* lock inc/add */
        __atomic_sub_fetch(&adds.i, 1, __ATOMIC_SEQ_CST);
#pragma omp atomic
        bits.l |= 1ul << (t + (k % 2) * 32);
#pragma omp atomic
        bits.i ^= 1u << t;
#pragma omp atomic
        bits.l &= ~(1ul << 63);
    }
    ot_print("bits: %lx %x", bits.l, bits.i);

#pragma omp parallel
    for (int k = 0; k < ROUNDS; k++) {
        long before;
#pragma omp atomic capture
        { before = caps.total; caps.total += 5; }
        if (before % 5 != 0)
            ot_error("capture saw %ld", before);
        long m = before, cur = __atomic_load_n(&caps.seen_max, __ATOMIC_RELAXED);
        while (cur < m && !__atomic_compare_exchange_n(&caps.seen_max, &cur, m, 0,
                                                       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            ;
    }
    ot_print("caps: %ld %ld", caps.total, caps.seen_max);
    OT_CHECK(caps.total == 5L * ROUNDS * n, "caps.total %ld", caps.total);

#pragma omp parallel
    for (int k = 0; k < ROUNDS; k++) {
        int t = omp_get_thread_num();
#pragma omp atomic
        loops.sum += 0.5;               /* a cmpxchg loop on the double's bits */
        int v = t * ROUNDS + k, cur = __atomic_load_n(&loops.max, __ATOMIC_RELAXED);
        while (cur < v && !__atomic_compare_exchange_n(&loops.max, &cur, v, 0,
                                                       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            ;
        long c = __atomic_load_n(&loops.cas, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(&loops.cas, &c, c + 2, 0, __ATOMIC_SEQ_CST,
                                            __ATOMIC_SEQ_CST))
            ;
    }
    ot_print("loops: %.1f %d %ld", loops.sum, loops.max, loops.cas);

    /* Exchange: every thread swaps its own tag in ROUNDS times; each value
     * taken out is some thread's tag (or the initial 0), and the tags that
     * went in minus those that came out is the one left in the slot. */
    long tags_in = 0, tags_out = 0;
#pragma omp parallel reduction(+ : tags_in, tags_out)
    for (int k = 0; k < ROUNDS; k++) {
        long mine = omp_get_thread_num() + 1;
        long got = __atomic_exchange_n(&xchgs.slot, mine, __ATOMIC_SEQ_CST);
        if (got < 0 || got > n)
            ot_error("xchg took out %ld", got);
        tags_in += mine;
        tags_out += got;
    }
    ot_print("xchg: balance %s", tags_in - tags_out == xchgs.slot ? "kept" : "lost");

    /* One bit per thread: set with fetch_or (lock bts when the result's bit
     * is tested), the first setter of each round counts. */
#pragma omp parallel
    for (int k = 0; k < ROUNDS; k++) {
        int t = omp_get_thread_num();
        if (!(__atomic_fetch_or(&bitops.word, 1ul << t, __ATOMIC_SEQ_CST) & (1ul << t)))
            __atomic_fetch_add(&bitops.set_first, 1, __ATOMIC_SEQ_CST);
        if (__atomic_fetch_and(&bitops.word, ~(1ul << t), __ATOMIC_SEQ_CST) & (1ul << t))
            __atomic_fetch_add(&bitops.set_first, 1, __ATOMIC_SEQ_CST);
    }
    ot_print("bitops: %lx %ld", bitops.word, bitops.set_first);

    long rl = 0;
    double rd = 0;
    int rmax = -1;
#pragma omp parallel reduction(+ : rl, rd) reduction(max : rmax)
    {
        int t = omp_get_thread_num();
        rl += 1000 + t;
        rd += 0.25 * (t + 1);
        rmax = t > rmax ? t : rmax;
    }
    ot_print("reductions: %ld %.2f %d", rl, rd, rmax);

#pragma omp parallel
    {
        int t = omp_get_thread_num();
#pragma omp atomic
        mixed.count++;
        mixed.slot[t] = t + 1;          /* a plain store on the same page */
#pragma omp atomic
        mixed.count++;
    }
    int slots = 0;
    for (int t = 0; t < n; t++)
        slots += mixed.slot[t] == t + 1;
    ot_print("mixed: %d slots", slots);
    OT_CHECK(slots == n, "mixed: %d slots of %d", slots, n);
    return ot_finish();
}
