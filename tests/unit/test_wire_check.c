/*
 * test_wire_check.c - the validator of received messages
 * (libdsm/wire_check.c): hand-made messages at the edges of every check,
 * then every input of the fuzzer's seed corpus (tests/fuzz/corpus) and of
 * its regression inputs (tests/fuzz/regress: inputs that broke an earlier
 * decoder, and crashes the fuzzer finds) replayed through the fuzzer's
 * oracle (tests/fuzz/wire_oracle.c) without libFuzzer.  One thread.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <cmocka.h>

#include "wire_check.h"
#include "wire_oracle.h"

#ifndef WIRE_FUZZ_DIR
#error WIRE_FUZZ_DIR must name tests/fuzz of the source tree
#endif

static const struct dsm_wire_limits L = {
    .rank = 1, .nodes = 3, .npages = 16, .page_size = 256, .max_locks = 9, .max_aop = 12,
};

static unsigned char buf[sizeof(struct dsm_wire_hdr) + DSM_CALL_MAX + 8];

/* Build a message from rank src into buf; returns its length. */
static size_t mk(uint16_t type, int src, uint32_t id, const void *pl, uint32_t len)
{
    struct dsm_wire_hdr h;
    memset(&h, 0, sizeof h);
    h.type = type;
    h.src = src;
    h.id = id;
    h.len = len;
    memcpy(buf, &h, sizeof h);
    if (len)
        memcpy(buf + sizeof h, pl, len);
    return sizeof h + len;
}

static char why[160];     /* the last rejection's reason */

static int check(const struct dsm_wire_limits *l, size_t n, int src)
{
    why[0] = 0;
    int rc = dsm__wire_check(l, buf, n, src, why, sizeof why);
    if (rc < 0)
        assert_true(why[0] != 0);     /* every rejection says why */
    return rc;
}

static void test_header(void **state)
{
    (void)state;
    size_t n = mk(DSM_MSG_DIFF_ACK, 0, 0, NULL, 0);
    assert_int_equal(check(&L, n, 0), 0);
    assert_int_equal(check(&L, n, 2), -DSM_EPROTO);        /* source is not MPI's */
    assert_int_equal(check(&L, n - 1, 0), -DSM_EPROTO);    /* short of a header */
    assert_int_equal(check(&L, n + 4, 0), -DSM_EPROTO);    /* length disagrees */
    n = mk(DSM_MSG_DIFF_ACK, 3, 0, NULL, 0);
    assert_int_equal(check(&L, n, 3), -DSM_EPROTO);        /* not a rank */
    n = mk(0, 0, 0, NULL, 0);
    assert_int_equal(check(&L, n, 0), -DSM_EPROTO);
    n = mk(DSM_MSG_NTYPES, 0, 0, NULL, 0);
    assert_int_equal(check(&L, n, 0), -DSM_EPROTO);
    n = mk(DSM_MSG_PAGE_REPLY, 0, 0, NULL, 0);
    assert_int_equal(check(&L, n, 0), -DSM_EPROTO);
}

static void test_page_ids(void **state)
{
    (void)state;
    assert_int_equal(check(&L, mk(DSM_MSG_PAGE_REQ, 0, 15, NULL, 0), 0), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_PAGE_REQ, 0, 16, NULL, 0), 0), -DSM_EPROTO);
    uint32_t pages[2] = { 15, 16 };
    assert_int_equal(check(&L, mk(DSM_MSG_LOCK_GRANT, 1, 4, pages, 4), 1), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_LOCK_GRANT, 1, 4, pages, 8), 1), -DSM_EPROTO);
    assert_int_equal(check(&L, mk(DSM_MSG_LOCK_GRANT, 1, 4, pages, 6), 1), -DSM_EPROTO);
    /* BARRIER_ENTER: 3 counts, then notices; taken from a child in the
     * barrier tree (with 3 nodes 1 and 2 are node 0's) or from itself. */
    struct dsm_wire_limits l0 = L;
    l0.rank = 0;
    struct { uint32_t counts[3]; struct dsm_wire_notice nt[1]; } e =
        { { 0, 1, 0 }, { { 15, DSM_WRITER_MANY } } };
    assert_int_equal(check(&l0, mk(DSM_MSG_BARRIER_ENTER, 2, 0, &e, sizeof e), 2), 0);
    assert_int_equal(check(&l0, mk(DSM_MSG_BARRIER_ENTER, 0, 0, &e, sizeof e), 0), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_BARRIER_ENTER, 1, 0, &e, sizeof e), 1), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_BARRIER_ENTER, 2, 0, &e, sizeof e), 2),
                     -DSM_EPROTO);                   /* 2 is not node 1's child */
    e.nt[0].page = 16;
    assert_int_equal(check(&l0, mk(DSM_MSG_BARRIER_ENTER, 2, 0, &e, sizeof e), 2), -DSM_EPROTO);
    e.nt[0].page = 15;
    e.counts[2] = 4;                                 /* more senders than nodes */
    assert_int_equal(check(&l0, mk(DSM_MSG_BARRIER_ENTER, 2, 0, &e, sizeof e), 2), -DSM_EPROTO);
    e.counts[2] = 0;
    assert_int_equal(check(&l0, mk(DSM_MSG_BARRIER_ENTER, 2, 0, &e, 8), 2), -DSM_EPROTO);
    assert_int_equal(check(&l0, mk(DSM_MSG_BARRIER_ENTER, 2, 0, &e, sizeof e - 4), 2),
                     -DSM_EPROTO);
}

static void test_prefetch(void **state)
{
    (void)state;
    /* A list of pages, the first of them in the id (prefetch.c). */
    uint32_t pages[3] = { 4, 15, 9 };
    assert_int_equal(check(&L, mk(DSM_MSG_PREFETCH_REQ, 2, 4, pages, 12), 2), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_PREFETCH_REQ, 2, 5, pages, 12), 2), -DSM_EPROTO);
    assert_int_equal(check(&L, mk(DSM_MSG_PREFETCH_REQ, 2, 4, pages, 0), 2), -DSM_EPROTO);
    assert_int_equal(check(&L, mk(DSM_MSG_PREFETCH_REQ, 2, 4, pages, 6), 2), -DSM_EPROTO);
    pages[1] = 16;                                        /* beyond the region */
    assert_int_equal(check(&L, mk(DSM_MSG_PREFETCH_REQ, 2, 4, pages, 12), 2), -DSM_EPROTO);
}

static void test_locks(void **state)
{
    (void)state;
    /* This is rank 1: it manages locks 1, 4, 7. */
    assert_int_equal(check(&L, mk(DSM_MSG_LOCK_REQ, 0, 7, NULL, 0), 0), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_LOCK_REQ, 0, 6, NULL, 0), 0), -DSM_EPROTO);
    assert_int_equal(check(&L, mk(DSM_MSG_LOCK_REQ, 0, 10, NULL, 0), 0), -DSM_EPROTO);
    assert_int_equal(check(&L, mk(DSM_MSG_LOCK_REL, 2, 4, NULL, 0), 2), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_LOCK_REL, 2, 5, NULL, 0), 2), -DSM_EPROTO);
    /* A release's notices are of the sender's epoch or, from a thread
     * outside a barrier the sender is in, of the next one, or of an
     * earlier one if barriers passed between the list and the send
     * (lock.c); never later than the next. */
    static const uint64_t args[] = { 6, 7, 5, 0, 8, (uint64_t)1 << 32 };
    for (int i = 0; i < 6; i++) {
        struct dsm_wire_hdr h;
        size_t n = mk(DSM_MSG_LOCK_REL, 2, 4, NULL, 0);
        memcpy(&h, buf, sizeof h);
        h.epoch = 6;
        h.arg = args[i];
        memcpy(buf, &h, sizeof h);
        assert_int_equal(check(&L, n, 2), i < 4 ? 0 : -DSM_EPROTO);
    }
    /* Grants and acks come from the lock's manager. */
    assert_int_equal(check(&L, mk(DSM_MSG_LOCK_REL_ACK, 2, 5, NULL, 0), 2), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_LOCK_REL_ACK, 0, 5, NULL, 0), 0), -DSM_EPROTO);
    assert_int_equal(check(&L, mk(DSM_MSG_LOCK_GRANT, 0, 5, NULL, 0), 0), -DSM_EPROTO);
}

/* One DIFF entry for page: a single run {off, count} (count may carry
 * DSM_DIFF_MASKED) with its documented body, count * 8 data bytes and, if
 * masked, one mask byte per chunk; the entry claims cut bytes fewer than
 * that.  Returns the entry's length. */
static size_t put_diff_cut(unsigned char *p, uint32_t page, uint32_t off, uint32_t count,
                           uint32_t cut)
{
    uint32_t chunks = count & ~DSM_DIFF_MASKED;
    uint32_t body = chunks * 8 + ((count & DSM_DIFF_MASKED) ? chunks : 0);
    struct dsm_wire_diff e = { page, (uint32_t)sizeof(struct dsm_diff_run) + body - cut };
    struct dsm_diff_run r = { off, count };
    memcpy(p, &e, sizeof e);
    memcpy(p + sizeof e, &r, sizeof r);
    memset(p + sizeof e + sizeof r, 0x11, chunks * 8);
    memset(p + sizeof e + sizeof r + chunks * 8, 0x81, body - chunks * 8);
    return sizeof e + e.len;
}

static size_t put_diff(unsigned char *p, uint32_t page, uint32_t off, uint32_t count)
{
    return put_diff_cut(p, page, off, count, 0);
}

static void test_diffs(void **state)
{
    unsigned char pl[512];
    size_t n;
    const uint32_t M = DSM_DIFF_MASKED;

    (void)state;
    /* 256-byte pages hold 32 chunks: a run may end at byte 256, not past. */
    n = put_diff(pl, 15, 240, 2);
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)n), 0), 0);
    n = put_diff(pl, 15, 240, 2 | M);
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)n), 0), 0);
    n = put_diff(pl, 15, 0, 32 | M);                /* the whole page, masked */
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)n), 0), 0);
    n = put_diff(pl, 15, 240, 3);
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)n), 0), -DSM_EPROTO);
    n = put_diff(pl, 15, 240, 3 | M);
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)n), 0), -DSM_EPROTO);
    n = put_diff(pl, 15, 256, 1);                   /* starts past the page */
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)n), 0), -DSM_EPROTO);
    n = put_diff(pl, 15, 244, 1);                   /* offset not a multiple of 8 */
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)n), 0), -DSM_EPROTO);
    n = put_diff(pl, 15, 8, 0);                     /* no chunk */
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)n), 0), -DSM_EPROTO);
    n = put_diff(pl, 16, 0, 1);
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)n), 0), -DSM_EPROTO);
    /* A run longer than its entry: a masked run without its last mask
     * byte, or without any (the length of an unmasked run), data cut. */
    n = put_diff_cut(pl, 15, 0, 2 | M, 1);
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)n), 0), -DSM_EPROTO);
    n = put_diff_cut(pl, 15, 0, 2 | M, 2);
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)n), 0), -DSM_EPROTO);
    n = put_diff_cut(pl, 15, 0, 2, 1);
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)n), 0), -DSM_EPROTO);
    /* Two entries, the second overrunning the message by one byte. */
    n = put_diff(pl, 3, 0, 1 | M);
    size_t m = put_diff(pl + n, 4, 0, 1);
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)(n + m)), 0), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)(n + m - 1)), 0),
                     -DSM_EPROTO);
    /* An entry header cut short. */
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, pl, (uint32_t)(n + 4)), 0),
                     -DSM_EPROTO);
    /* An empty DIFF with LAST is what a flush sends when every written byte
     * went back to its old value. */
    assert_int_equal(check(&L, mk(DSM_MSG_DIFF, 0, 0, NULL, 0), 0), 0);
}

static void test_notices(void **state)
{
    struct { uint32_t counts[3]; struct dsm_wire_notice nt[2]; } r =
        { { 1, 0, 2 }, { { 15, DSM_WRITER_MANY }, { 0, 2 } } };
    struct dsm_wire_notice *nt = r.nt;
    (void)state;
    assert_int_equal(check(&L, mk(DSM_MSG_BARRIER_RELEASE, 0, 0, &r, sizeof r), 0), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_BARRIER_RELEASE, 1, 0, &r, sizeof r), 1),
                     -DSM_EPROTO);                   /* only the parent releases */
    /* With 4 nodes node 3's parent is node 2. */
    struct dsm_wire_limits l4 = L;
    l4.nodes = 4;
    l4.rank = 3;
    struct { uint32_t counts[4]; struct dsm_wire_notice nt[1]; } r4 =
        { { 0, 0, 0, 0 }, { { 3, 3 } } };
    assert_int_equal(check(&l4, mk(DSM_MSG_BARRIER_RELEASE, 2, 0, &r4, sizeof r4), 2), 0);
    assert_int_equal(check(&l4, mk(DSM_MSG_BARRIER_RELEASE, 0, 0, &r4, sizeof r4), 0),
                     -DSM_EPROTO);
    r.counts[1] = 5;
    assert_int_equal(check(&L, mk(DSM_MSG_BARRIER_RELEASE, 0, 0, &r, sizeof r), 0),
                     -DSM_EPROTO);
    r.counts[1] = 0;
    /* Carried bytes at the end (dsm__barrier_carry): arg says how many. */
    struct { uint32_t counts[3]; struct dsm_wire_notice nt[1]; char carry[5]; }
        __attribute__((packed)) rc = { { 0, 0, 0 }, { { 3, 1 } }, "abcd" };
    size_t n = mk(DSM_MSG_BARRIER_RELEASE, 0, 0, &rc, sizeof rc);
    struct dsm_wire_hdr hh;
    memcpy(&hh, buf, sizeof hh);
    hh.arg = 5;
    memcpy(buf, &hh, sizeof hh);
    assert_int_equal(check(&L, n, 0), 0);
    hh.arg = 4;                                     /* the notices would not line up */
    memcpy(buf, &hh, sizeof hh);
    assert_int_equal(check(&L, n, 0), -DSM_EPROTO);
    hh.arg = sizeof rc;                             /* more than the payload holds */
    memcpy(buf, &hh, sizeof hh);
    assert_int_equal(check(&L, n, 0), -DSM_EPROTO);
    nt[1].writer = 3;
    assert_int_equal(check(&L, mk(DSM_MSG_BARRIER_RELEASE, 0, 0, &r, sizeof r), 0),
                     -DSM_EPROTO);
    nt[1].writer = -1;
    assert_int_equal(check(&L, mk(DSM_MSG_BARRIER_RELEASE, 0, 0, &r, sizeof r), 0),
                     -DSM_EPROTO);
    nt[1].writer = 64;
    assert_int_equal(check(&L, mk(DSM_MSG_BARRIER_RELEASE, 0, 0, &r, sizeof r), 0),
                     -DSM_EPROTO);
    nt[1].writer = 0;
    nt[0].page = 16;
    assert_int_equal(check(&L, mk(DSM_MSG_BARRIER_RELEASE, 0, 0, &r, sizeof r), 0),
                     -DSM_EPROTO);
}

static void test_atomics(void **state)
{
    struct dsm_wire_atomic o;

    (void)state;
    memset(&o, 0, sizeof o);
    o.op = 4;
    o.size = 8;
    o.offset = 248;
    assert_int_equal(check(&L, mk(DSM_MSG_ATOMIC_REQ, 0, 2, &o, sizeof o), 0), 0);
    o.offset = 256;
    assert_int_equal(check(&L, mk(DSM_MSG_ATOMIC_REQ, 0, 2, &o, sizeof o), 0), -DSM_EPROTO);
    o.offset = 4;                                 /* misaligned */
    assert_int_equal(check(&L, mk(DSM_MSG_ATOMIC_REQ, 0, 2, &o, sizeof o), 0), -DSM_EPROTO);
    o.offset = 0;
    o.size = 3;
    assert_int_equal(check(&L, mk(DSM_MSG_ATOMIC_REQ, 0, 2, &o, sizeof o), 0), -DSM_EPROTO);
    o.size = 0;
    assert_int_equal(check(&L, mk(DSM_MSG_ATOMIC_REQ, 0, 2, &o, sizeof o), 0), -DSM_EPROTO);
    o.size = 16;
    o.offset = 240;
    assert_int_equal(check(&L, mk(DSM_MSG_ATOMIC_REQ, 0, 2, &o, sizeof o), 0), 0);
    o.op = 13;
    assert_int_equal(check(&L, mk(DSM_MSG_ATOMIC_REQ, 0, 2, &o, sizeof o), 0), -DSM_EPROTO);
    /* Registered pair operations (dsm__atomic_register): ops from pair_fn0
     * up are accepted only where their bit is set. */
    struct dsm_wire_limits r = L;
    r.max_aop = 19;
    r.pair_fn0 = 12;
    r.pair_fns = 0x5;                               /* ids 0 and 2 */
    o.op = 12;
    assert_int_equal(check(&r, mk(DSM_MSG_ATOMIC_REQ, 0, 2, &o, sizeof o), 0), 0);
    o.op = 14;
    assert_int_equal(check(&r, mk(DSM_MSG_ATOMIC_REQ, 0, 2, &o, sizeof o), 0), 0);
    o.op = 13;
    assert_int_equal(check(&r, mk(DSM_MSG_ATOMIC_REQ, 0, 2, &o, sizeof o), 0), -DSM_EPROTO);
    assert_non_null(strstr(why, "not registered"));
    o.op = 19;
    assert_int_equal(check(&r, mk(DSM_MSG_ATOMIC_REQ, 0, 2, &o, sizeof o), 0), -DSM_EPROTO);
    o.op = 20;
    assert_int_equal(check(&r, mk(DSM_MSG_ATOMIC_REQ, 0, 2, &o, sizeof o), 0), -DSM_EPROTO);
    o.op = 11;                                      /* a built-in pair operation */
    assert_int_equal(check(&r, mk(DSM_MSG_ATOMIC_REQ, 0, 2, &o, sizeof o), 0), 0);
    o.op = 4;
    assert_int_equal(check(&L, mk(DSM_MSG_ATOMIC_REQ, 0, 16, &o, sizeof o), 0), -DSM_EPROTO);
    assert_int_equal(check(&L, mk(DSM_MSG_ATOMIC_REQ, 0, 2, &o, sizeof o - 1), 0),
                     -DSM_EPROTO);
}

/* Replay every file of WIRE_FUZZ_DIR/sub through the oracle; returns the
 * number of files, the messages the validator accepted in *acc, and the
 * fewest accepted of one file in *least. */
static int replay(const char *sub, unsigned long *acc, unsigned long *least)
{
    char path[4096];
    int files = 0;

    snprintf(path, sizeof path, "%s/%s", WIRE_FUZZ_DIR, sub);
    DIR *d = opendir(path);
    if (!d)
        fail_msg("cannot open %s", path);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/%s", WIRE_FUZZ_DIR, sub, de->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            fail_msg("cannot open %s", path);
        static uint8_t in[1 << 20];
        size_t n = fread(in, 1, sizeof in, f);
        fclose(f);
        unsigned long a = 0;
        const char *err = wire_oracle(in, n, &a);
        if (err)
            fail_msg("%s: %s", path, err);
        if (acc)
            *acc += a;
        if (least && (files == 0 || a < *least))
            *least = a;
        files++;
    }
    closedir(d);
    return files;
}

/* FLUSH_NOTICE (flush.c): a list of pages of the region, from any rank,
 * possibly empty (a last chunk). */
static void test_flush_notice(void **state)
{
    (void)state;
    uint32_t pages[3] = { 0, 5, (uint32_t)L.npages - 1 };
    assert_int_equal(check(&L, mk(DSM_MSG_FLUSH_NOTICE, 0, 0, pages, sizeof pages), 0), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_FLUSH_NOTICE, 2, 0, NULL, 0), 2), 0);
    pages[1] = (uint32_t)L.npages;
    assert_int_equal(check(&L, mk(DSM_MSG_FLUSH_NOTICE, 0, 0, pages, sizeof pages), 0),
                     -DSM_EPROTO);
    assert_int_equal(check(&L, mk(DSM_MSG_FLUSH_NOTICE, 0, 0, pages, 6), 0), -DSM_EPROTO);
}

/* The ordered flush (ordered.c): UPDATE as DIFF, or with FULL whole pages;
 * UPDATE_ACK empty; UNHOLD a list of pages of the region. */
static size_t mk_flags(uint16_t type, int src, const void *pl, uint32_t len, uint8_t flags)
{
    size_t n = mk(type, src, 0, pl, len);
    struct dsm_wire_hdr h;
    memcpy(&h, buf, sizeof h);
    h.flags = flags;
    memcpy(buf, &h, sizeof h);
    return n;
}

static void test_ordered_flush(void **state)
{
    (void)state;
    static unsigned char pl[sizeof(struct dsm_wire_diff) + 256];
    struct dsm_wire_diff e = { 3, 256 };
    memcpy(pl, &e, sizeof e);
    assert_int_equal(check(&L, mk_flags(DSM_MSG_UPDATE, 0, pl, sizeof pl, DSM_MF_FULL), 0), 0);
    /* A whole page of the wrong size, cut short, or beyond the region. */
    e.len = 255;
    memcpy(pl, &e, sizeof e);
    assert_int_equal(check(&L, mk_flags(DSM_MSG_UPDATE, 0, pl, sizeof pl - 1, DSM_MF_FULL), 0),
                     -DSM_EPROTO);
    e.len = 256;
    memcpy(pl, &e, sizeof e);
    assert_int_equal(check(&L, mk_flags(DSM_MSG_UPDATE, 0, pl, sizeof pl - 1, DSM_MF_FULL), 0),
                     -DSM_EPROTO);
    e.page = (uint32_t)L.npages;
    memcpy(pl, &e, sizeof e);
    assert_int_equal(check(&L, mk_flags(DSM_MSG_UPDATE, 0, pl, sizeof pl, DSM_MF_FULL), 0),
                     -DSM_EPROTO);
    /* Without FULL the same bytes are a diff, and a malformed one. */
    e.page = 3;
    memcpy(pl, &e, sizeof e);
    assert_int_equal(check(&L, mk_flags(DSM_MSG_UPDATE, 0, pl, sizeof pl, 0), 0), -DSM_EPROTO);
    assert_int_equal(check(&L, mk_flags(DSM_MSG_UPDATE, 0, NULL, 0, DSM_MF_LAST), 0), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_UPDATE_ACK, 2, 0, NULL, 0), 2), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_UPDATE_ACK, 2, 0, pl, 4), 2), -DSM_EPROTO);
    uint32_t pages[2] = { 0, (uint32_t)L.npages - 1 };
    assert_int_equal(check(&L, mk(DSM_MSG_UNHOLD, 0, 0, pages, sizeof pages), 0), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_UNHOLD, 0, 0, pages, 6), 0), -DSM_EPROTO);
    pages[1] = (uint32_t)L.npages;
    assert_int_equal(check(&L, mk(DSM_MSG_UNHOLD, 0, 0, pages, sizeof pages), 0),
                     -DSM_EPROTO);    /* A heartbeat (liveness.c): empty, from any rank. */
    assert_int_equal(check(&L, mk(DSM_MSG_HEARTBEAT, 2, 0, NULL, 0), 2), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_HEARTBEAT, 2, 0, pl, 4), 2), -DSM_EPROTO);
}

/* Service calls (service.c): a known service, at most DSM_CALL_MAX bytes,
 * from any rank to any rank. */
static void test_calls(void **state)
{
    (void)state;
    static unsigned char pl[DSM_CALL_MAX + 1];
    assert_int_equal(check(&L, mk(DSM_MSG_CALL_REQ, 0, 0, pl, 0), 0), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_CALL_REQ, 2, DSM_SERVICE_MAX - 1, pl, 17), 2), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_CALL_REQ, 2, DSM_SERVICE_MAX, pl, 17), 2),
                     -DSM_EPROTO);
    assert_int_equal(check(&L, mk(DSM_MSG_CALL_REQ, 0, 1, pl, DSM_CALL_MAX), 0), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_CALL_REQ, 0, 1, pl, DSM_CALL_MAX + 1), 0),
                     -DSM_EPROTO);
    assert_int_equal(check(&L, mk(DSM_MSG_CALL_REPLY, 0, 1, pl, DSM_CALL_MAX), 0), 0);
    assert_int_equal(check(&L, mk(DSM_MSG_CALL_REPLY, 0, 1, pl, DSM_CALL_MAX + 1), 0),
                     -DSM_EPROTO);
    assert_int_equal(check(&L, mk(DSM_MSG_CALL_REPLY, 0, 9, pl, 0), 0), -DSM_EPROTO);
    /* The type after the last is still unknown. */
    assert_int_equal(check(&L, mk(DSM_MSG_NTYPES, 0, 0, pl, 0), 0), -DSM_EPROTO);
}

static void test_corpus(void **state)
{
    unsigned long acc = 0, least = 0;

    (void)state;
    int n = replay("corpus", &acc, &least);
    assert_true(n >= 14);
    /* The seeds are well-formed: each is accepted with at least one of the
     * oracle's two page sizes, so the fuzzer starts from inside. */
    assert_true(least >= 1);
}

static void test_regress(void **state)
{
    unsigned long acc = 0;

    (void)state;
    assert_true(replay("regress", &acc, NULL) >= 3);
    assert_int_equal(acc, 0);     /* every regression input is malformed */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header),
        cmocka_unit_test(test_page_ids),
        cmocka_unit_test(test_prefetch),
        cmocka_unit_test(test_locks),
        cmocka_unit_test(test_diffs),
        cmocka_unit_test(test_notices),
        cmocka_unit_test(test_atomics),
        cmocka_unit_test(test_calls),
        cmocka_unit_test(test_flush_notice),
        cmocka_unit_test(test_ordered_flush),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_regress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
