/*
 * test_diff_apply.c - applying diffs (dsm__diff_apply and dsm__diff_check
 * in libdsm/diff.c) and merging the diffs of several writers at the home.
 *
 * Every expected value comes from the format documented in dsm_pure.h, not
 * from the code under test: a diff built by hand must write exactly the
 * bytes its runs and masks name and return how many it wrote, and the
 * diffs of two writers of disjoint bytes of one page, made against the same
 * twin, applied to a copy of the twin in either order must give the union
 * of their writes.  A diff writes no byte its writer did not change - that
 * is what lets diffs of several writers merge, even writers of different
 * bytes of one word.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_diff_util.h"

static unsigned popcount8(unsigned m)
{
    unsigned n = 0;
    for (; m; m >>= 1)
        n += m & 1;
    return n;
}

/* ---- hand-built diffs -------------------------------------------------- */

/* Apply a diff built by hand, independent of dsm__diff_make.  The return
 * value is the number of bytes written: every byte of an unmasked run's
 * chunks (even one equal to the page's), the mask bits of a masked run. */
static void test_apply_handmade(void **state)
{
    size_t ps = 4096;
    unsigned char *page = page_alloc(ps), *expect = page_alloc(ps);
    unsigned char a[8], b[16], c[8], mb[2] = { 0x81, 0xff }, mc = 0x3c;
    struct dbuf *d = dbuf_new();

    (void)state;
    for (size_t i = 0; i < ps; i++)
        page[i] = expect[i] = (unsigned char)(i * 7);
    for (size_t i = 0; i < 8; i++) {
        a[i] = (unsigned char)(0xa0 + i);
        c[i] = (unsigned char)(0xc0 + i);
    }
    a[3] = page[3];                         /* still written, still counted */
    for (size_t i = 0; i < 16; i++)
        b[i] = (unsigned char)(0xb0 + i);
    d_hdr(d, 0, 1);                         /* 8 bytes */
    d_bytes(d, a, 8);
    d_hdr(d, 40, 2 | MASKED);               /* 2 + 8 bytes */
    d_bytes(d, b, 16);
    d_bytes(d, mb, 2);
    d_hdr(d, (uint32_t)ps - 8, 1 | MASKED); /* 4 bytes */
    d_bytes(d, c, 8);
    d_bytes(d, &mc, 1);
    assert_int_equal(d->len, (HDR + 8) + (HDR + 18) + (HDR + 9));

    memcpy(expect, a, 8);
    expect[40] = b[0];
    expect[47] = b[7];
    memcpy(expect + 48, b + 8, 8);
    for (size_t j = 2; j < 6; j++)
        expect[ps - 8 + j] = c[j];
    assert_int_equal(dsm__diff_check(ps, d->b, d->len), 0);
    assert_int_equal(dsm__diff_apply(page, ps, d->b, d->len),
                     8 + popcount8(mb[0]) + popcount8(mb[1]) + popcount8(mc));
    assert_int_equal(8 + popcount8(mb[0]) + popcount8(mb[1]) + popcount8(mc), 22);
    assert_memory_equal(page, expect, ps);

    /* The same diff at an odd address (runs after a masked one are not
     * aligned anyway): same result. */
    {
        unsigned char *odd = malloc(d->len + 1);
        assert_non_null(odd);
        memcpy(odd + 1, d->b, d->len);
        for (size_t i = 0; i < ps; i++)
            page[i] = (unsigned char)(i * 7);
        assert_int_equal(dsm__diff_apply(page, ps, odd + 1, d->len), 22);
        assert_memory_equal(page, expect, ps);
        free(odd);
    }
    free(page); free(expect); free(d);
}

/* ---- multiple writers -------------------------------------------------- */

/* Apply the diffs of two writers to a copy of their twin, a then b; the
 * home must become merge, and each apply return the bytes its writer
 * changed. */
static void apply_both(const unsigned char *twin, const unsigned char *merge, size_t ps,
                       const unsigned char *da, size_t la, long na,
                       const unsigned char *db, size_t lb, long nb)
{
    unsigned char *home = page_alloc(ps);

    memcpy(home, twin, ps);
    assert_int_equal(dsm__diff_apply(home, ps, da, la), na);
    assert_int_equal(dsm__diff_apply(home, ps, db, lb), nb);
    assert_memory_equal(home, merge, ps);
    free(home);
}

/* Two writers of different bytes of one 4-byte word, and of the even and
 * the odd bytes of a range: either order of their diffs gives the union of
 * their writes (with 4-byte granularity the second diff would undo the
 * first writer's bytes). */
static void test_writers_of_one_word(void **state)
{
    size_t ps = 4096;
    unsigned char *twin = page_alloc(ps), *a = page_alloc(ps);
    unsigned char *b = page_alloc(ps), *merge = page_alloc(ps);
    struct outbuf da = out_alloc(ps), db = out_alloc(ps);
    struct dsm_diff_run r;
    size_t la, lb;

    (void)state;
    rng_seed(12);
    fill_random(twin, ps);
    memcpy(a, twin, ps);
    memcpy(b, twin, ps);
    change_byte(twin, a, 12);               /* word at 12: A bytes 0..1 */
    change_byte(twin, a, 13);
    change_byte(twin, b, 14);               /* B bytes 2..3 */
    change_byte(twin, b, 15);
    memcpy(merge, twin, ps);
    memcpy(merge + 12, a + 12, 2);
    memcpy(merge + 14, b + 14, 2);

    la = dsm__diff_make(twin, a, ps, da.p, da.cap);
    lb = dsm__diff_make(twin, b, ps, db.p, db.cap);
    assert_int_equal(la, HDR + CHUNK + 1);
    assert_int_equal(lb, HDR + CHUNK + 1);
    r = run_at(da.p, 0);
    assert_int_equal(r.offset, 8);
    assert_int_equal(r.count, 1 | MASKED);
    assert_int_equal(da.p[HDR + CHUNK], 0x30);
    r = run_at(db.p, 0);
    assert_int_equal(r.offset, 8);
    assert_int_equal(r.count, 1 | MASKED);
    assert_int_equal(db.p[HDR + CHUNK], 0xc0);
    apply_both(twin, merge, ps, da.p, la, 2, db.p, lb, 2);
    apply_both(twin, merge, ps, db.p, lb, 2, da.p, la, 2);

    /* Interleaved: A the even bytes of [256, 320), B the odd ones. */
    memcpy(a, twin, ps);
    memcpy(b, twin, ps);
    for (size_t i = 256; i < 320; i++)
        change_byte(twin, (i % 2) ? b : a, i);
    memcpy(merge, twin, ps);
    for (size_t i = 256; i < 320; i++)
        merge[i] = (i % 2) ? b[i] : a[i];
    la = dsm__diff_make(twin, a, ps, da.p, da.cap);
    lb = dsm__diff_make(twin, b, ps, db.p, db.cap);
    assert_int_equal(la, HDR + 64 + 8);
    assert_int_equal(lb, HDR + 64 + 8);
    r = run_at(da.p, 0);
    assert_int_equal(r.offset, 256);
    assert_int_equal(r.count, 8 | MASKED);
    r = run_at(db.p, 0);
    assert_int_equal(r.offset, 256);
    assert_int_equal(r.count, 8 | MASKED);
    for (size_t k = 0; k < 8; k++) {
        assert_int_equal(da.p[HDR + 64 + k], 0x55);
        assert_int_equal(db.p[HDR + 64 + k], 0xaa);
    }
    check_canonical(twin, a, ps, da.p, la);
    check_canonical(twin, b, ps, db.p, lb);
    apply_both(twin, merge, ps, da.p, la, 32, db.p, lb, 32);
    apply_both(twin, merge, ps, db.p, lb, 32, da.p, la, 32);
    out_check_guard(&da);
    out_check_guard(&db);
    free(twin); free(a); free(b); free(merge); free(da.p); free(db.p);
}

/* Two nodes change disjoint bytes of the same page against the same twin
 * (alternate bytes, halves of words, stretches that touch each other at
 * any byte, random bytes): their diffs applied to a copy of the twin in
 * either order give the merge. */
static void test_multiple_writers(void **state)
{
    (void)state;
    rng_seed(0xab);
    for (size_t s = 0; s < NPAGE_SIZES; s++) {
        size_t ps = page_sizes[s];
        unsigned char *twin = page_alloc(ps), *a = page_alloc(ps);
        unsigned char *b = page_alloc(ps), *merge = page_alloc(ps);
        struct outbuf da = out_alloc(ps), db = out_alloc(ps);
        size_t la, lb;
        long na = 0, nb = 0;

        fill_random(twin, ps);
        memcpy(a, twin, ps);
        memcpy(b, twin, ps);
        memcpy(merge, twin, ps);
        for (size_t i = 0; i < ps; i++) {
            int who;
            if (i < ps / 4)
                who = i % 2;                    /* interleaved bytes */
            else if (i < ps / 2)
                who = (i / 2) % 2;              /* halves of 4-byte words */
            else if (i < 3 * ps / 4)
                who = (i / 13) % 2;             /* touching stretches */
            else
                who = rng32() % 3;              /* random, some untouched */
            if (who == 0) {
                change_byte(twin, a, i);
                merge[i] = a[i];
                na++;
            } else if (who == 1) {
                change_byte(twin, b, i);
                merge[i] = b[i];
                nb++;
            }
        }
        la = dsm__diff_make(twin, a, ps, da.p, da.cap);
        lb = dsm__diff_make(twin, b, ps, db.p, db.cap);
        check_canonical(twin, a, ps, da.p, la);
        check_canonical(twin, b, ps, db.p, lb);
        out_check_guard(&da);
        out_check_guard(&db);

        apply_both(twin, merge, ps, da.p, la, na, db.p, lb, nb);
        apply_both(twin, merge, ps, db.p, lb, nb, da.p, la, na);

        free(twin); free(a); free(b); free(merge);
        free(da.p); free(db.p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_apply_handmade),
        cmocka_unit_test(test_writers_of_one_word),
        cmocka_unit_test(test_multiple_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
