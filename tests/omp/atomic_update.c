/*
 * atomic_update.c - #pragma omp atomic (update) on int, long, double and
 * long double.
 *
 * Every thread applies the same updates to shared variables; the results
 * are the same whatever the interleaving (sums, bit sets, products of
 * powers of two), so a lost update shows as a wrong total.  All the update
 * forms: x += e, x -= e, x *= e, x /= e, x &= e, x |= e, x ^= e, x <<= e,
 * x >>= e, x++, ++x, x--, --x, x = x + e, x = e + x; on globals, on a
 * variable of main's stack and on the heap.  long double has no lock-free
 * atomic on x86-64: GCC goes through GOMP_atomic_start/GOMP_atomic_end.
 * Under the shim every update may be a round trip, hence 200 of the main
 * sum and fewer of the rest per thread.
 */
#define OT_NAME "atomic_update"
#include "omptest.h"

#define ITERS 200
#define FEW 20

static int i_add, i_sub, i_mul = 1, i_and = -1, i_or, i_xor, i_incdec;
static int i_shl = 1, i_shr = 1 << 30, i_div = 1 << 30;
static long l_add, l_sub, l_or, l_incdec, l_expr;
static double d_add, d_sub, d_mul = 1.0, d_div = 1024.0 * 1024.0, d_expr;
static long double ld_add;

int main(void)
{
    int n = ot_team_size();
    int stack_count = 0;
    long *heap_count = malloc(sizeof *heap_count);
    double want_div = 1024.0 * 1024.0;
    int t;

    if (heap_count == NULL) {
        fprintf(stderr, "%s: FAIL: malloc\n", OT_NAME);
        return 1;
    }
    *heap_count = 0;
    ot_print("threads=%d", n);

#pragma omp parallel
    {
        int me = omp_get_thread_num(), k;

        for (k = 0; k < ITERS; k++) {
#pragma omp atomic
            i_add += 1;
#pragma omp atomic
            l_add += 1L << 33;
#pragma omp atomic
            d_add += 0.5;
        }
        for (k = 0; k < FEW; k++) {
#pragma omp atomic
            i_sub -= 3;
#pragma omp atomic
            l_sub -= 5;
#pragma omp atomic
            d_sub -= 0.25;
#pragma omp atomic
            i_incdec++;
#pragma omp atomic
            ++i_incdec;
#pragma omp atomic
            i_incdec--;
#pragma omp atomic
            l_incdec++;
#pragma omp atomic
            ++l_incdec;
#pragma omp atomic
            --l_incdec;
#pragma omp atomic update
            l_expr = l_expr + 7;
#pragma omp atomic update
            d_expr = 1.5 + d_expr;
#pragma omp atomic
            stack_count += 2;
#pragma omp atomic
            *heap_count += 3;
#pragma omp atomic
            ld_add += 0.125L;
        }
        /* One of each per thread: bits and powers of two (the first 24
         * threads only, so that nothing overflows). */
        if (me < 24) {
#pragma omp atomic
            i_mul *= 2;
#pragma omp atomic
            d_mul *= 2.0;
#pragma omp atomic
            d_div /= 2.0;
#pragma omp atomic
            i_div /= 2;
#pragma omp atomic
            i_shl <<= 1;
#pragma omp atomic
            i_shr >>= 1;
        }
#pragma omp atomic
        i_and &= ~(1 << (me % 31));
#pragma omp atomic
        i_or |= 1 << (me % 31);
#pragma omp atomic
        l_or |= 1L << (me % 63);
#pragma omp atomic
        i_xor ^= 1 << (me % 31);
    }

    OT_CHECK(i_add == ITERS * n, "int +=: %d, expected %d", i_add, ITERS * n);
    OT_CHECK(l_add == (1L << 33) * ITERS * n, "long +=: %ld, expected %ld",
             l_add, (1L << 33) * ITERS * n);
    OT_CHECK(d_add == 0.5 * ITERS * n, "double +=: %.2f, expected %.2f",
             d_add, 0.5 * ITERS * n);
    OT_CHECK(i_sub == -3 * FEW * n, "int -=: %d, expected %d", i_sub,
             -3 * FEW * n);
    OT_CHECK(l_sub == -5L * FEW * n, "long -=: %ld, expected %ld", l_sub,
             -5L * FEW * n);
    OT_CHECK(d_sub == -0.25 * FEW * n, "double -=: %.2f, expected %.2f",
             d_sub, -0.25 * FEW * n);
    OT_CHECK(i_incdec == FEW * n, "int ++/--: %d, expected %d", i_incdec,
             FEW * n);
    OT_CHECK(l_incdec == (long)FEW * n, "long ++/--: %ld, expected %ld",
             l_incdec, (long)FEW * n);
    OT_CHECK(l_expr == 7L * FEW * n, "long x = x + e: %ld, expected %ld",
             l_expr, 7L * FEW * n);
    OT_CHECK(d_expr == 1.5 * FEW * n, "double x = e + x: %.2f, expected "
             "%.2f", d_expr, 1.5 * FEW * n);
    OT_CHECK(stack_count == 2 * FEW * n, "on main's stack: %d, expected %d",
             stack_count, 2 * FEW * n);
    OT_CHECK(*heap_count == 3L * FEW * n, "on the heap: %ld, expected %ld",
             *heap_count, 3L * FEW * n);
    OT_CHECK(ld_add == 0.125L * FEW * n, "long double +=: %.3Lf, expected "
             "%.3Lf", ld_add, 0.125L * FEW * n);
    ot_print("int += %d, -= %d, ++/-- %d", i_add, i_sub, i_incdec);
    ot_print("long += %ld, -= %ld, ++/-- %ld, x = x + e %ld", l_add, l_sub,
             l_incdec, l_expr);
    ot_print("double += %.2f, -= %.2f, x = e + x %.2f", d_add, d_sub, d_expr);
    ot_print("stack %d, heap %ld, long double %.3Lf", stack_count,
             *heap_count, ld_add);

    {
        int want_mul = 1, want_and = -1, want_or = 0, want_xor = 0;
        int want_shl = 1, want_shr = 1 << 30, want_idiv = 1 << 30;
        long want_lor = 0;
        double want_dmul = 1.0;

        for (t = 0; t < n; t++) {
            if (t < 24) {
                want_mul *= 2;
                want_dmul *= 2.0;
                want_div /= 2.0;
                want_idiv /= 2;
                want_shl <<= 1;
                want_shr >>= 1;
            }
            want_and &= ~(1 << (t % 31));
            want_or |= 1 << (t % 31);
            want_lor |= 1L << (t % 63);
            want_xor ^= 1 << (t % 31);
        }
        OT_CHECK(i_mul == want_mul, "int *=: %d, expected %d", i_mul,
                 want_mul);
        OT_CHECK(d_mul == want_dmul, "double *=: %g, expected %g", d_mul,
                 want_dmul);
        OT_CHECK(d_div == want_div, "double /=: %g, expected %g", d_div,
                 want_div);
        OT_CHECK(i_div == want_idiv, "int /=: %d, expected %d", i_div,
                 want_idiv);
        OT_CHECK(i_and == want_and, "int &=: %#x, expected %#x", i_and,
                 want_and);
        OT_CHECK(i_or == want_or, "int |=: %#x, expected %#x", i_or, want_or);
        OT_CHECK(l_or == want_lor, "long |=: %#lx, expected %#lx", l_or,
                 want_lor);
        OT_CHECK(i_xor == want_xor, "int ^=: %#x, expected %#x", i_xor,
                 want_xor);
        OT_CHECK(i_shl == want_shl, "int <<=: %d, expected %d", i_shl,
                 want_shl);
        OT_CHECK(i_shr == want_shr, "int >>=: %d, expected %d", i_shr,
                 want_shr);
    }
    ot_print("int *= %d, /= %d, &= %#x, |= %#x, ^= %#x, <<= %d, >>= %d",
             i_mul, i_div, i_and, i_or, i_xor, i_shl, i_shr);
    ot_print("long |= %#lx; double *= %g, /= %g", l_or, d_mul, d_div);
    free(heap_count);
    return ot_finish();
}
