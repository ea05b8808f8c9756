/*
 * stress.c - seeded random data-race-free programs, checked against a
 * sequential model; the worker of `make check-stress` (run-stress.sh).
 *
 * Every rank draws the same plan from the same seed (the shared stream), so
 * all ranks agree on what happens without talking.  A round is:
 *   1. maybe an allocation step: dsm_free of a random live block, and/or
 *      dsm_malloc_home of a new block (random size from 4 bytes to 5 pages,
 *      random placement: block, cyclic, or one node), collective;
 *   2. 1 to 4 phases, each ended by dsm_barrier().  In a phase:
 *      - write ranges are drawn: (block, first word, length, owner rank);
 *        a word gets at most one owner per phase, so ranks write disjoint
 *        words of shared pages (multiple writers);
 *      - every rank reads random words (its own stream) that nobody else
 *        writes in this phase and checks them against the model: the value
 *        of the last phase that wrote them;
 *      - every rank does lock operations: adds to accumulators, and updates
 *        of lock-protected records (a sequence number and a payload
 *        spanning pages, which must agree with each other inside the lock);
 *      - the owners write their words, then read them back;
 *      - prefetches of random page ranges at random points of the phase,
 *        and maybe one dsm_bcast, collective, at its start or after its
 *        writes (see "Extra operations" below);
 *      - dsm_barrier(), after which the model applies the phase's writes.
 *   3. every 8 rounds every rank checks every word of every live block.
 * At the end every rank compares all shared memory with the model, which
 * is computed from the plans alone (a sequential replay), never from what
 * shared memory returned.
 *
 * Usage: stress [ROUNDS [SEED]] (defaults 100 and a clock-derived seed
 * picked by rank 0).  The seed is printed; rerun a failure with the same
 * seed, ranks, DSM_COMM and DSM_PREFETCH.  Exit 0 pass, 1 mismatch (named, with seed).
 */
#include <time.h>

#include "../mpi/mpitest.h"

#define MAX_BLOCKS   12
#define MAX_WORDS    (5 * 16384 / 4)    /* per block, at 16 KiB pages */
#define NACC         16
#define NREC         4
#define REC_PAGES    3                  /* a record spans pages */
#define LOCK_ACC     200                /* locks LOCK_ACC + acc % 5 */
#define LOCK_REC     300                /* lock LOCK_REC + record */
#define READS        200
#define CHECK_EVERY  8

struct block {
    uint32_t *mem;            /* shared */
    uint32_t *model;          /* private: what it must contain */
    size_t nwords;
};

static struct block blocks[MAX_BLOCKS];
static int nblocks;
static int me, nranks;
static size_t ps;
static uint64_t seed;

/* Accumulators and lock-protected records, in one fixed allocation:
 * acc[j] at accmem + j * 40 bytes (several per page, on two pages),
 * record r at recmem + r * REC_PAGES pages + 64 bytes: seq, then payload
 * words up to the end of its pages. */
static char *accmem, *recmem;
static int64_t model_acc[NACC];
static int64_t model_seq[NREC];

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static int64_t *acc_at(int j)
{
    return (int64_t *)(accmem + (size_t)(j % 2) * ps + (size_t)(j / 2) * 40);
}

static int64_t *rec_seq(int r)
{
    return (int64_t *)(recmem + (size_t)r * REC_PAGES * ps + 64);
}

static size_t rec_words(void)
{
    return (REC_PAGES * ps - 64 - sizeof(int64_t)) / 4;
}

static uint32_t *rec_payload(int r)
{
    return (uint32_t *)(rec_seq(r) + 1);
}

static uint32_t rec_value(int r, int64_t s, size_t i)
{
    return (uint32_t)mix64(((uint64_t)r << 56) ^ ((uint64_t)s << 20) ^ i);
}

/* ---- allocation step (collective) ---- */

static void alloc_step(uint64_t *rng, int exec)
{
    if (nblocks > 0 && mt_rand_below(rng, 4) == 0) {
        int b = (int)mt_rand_below(rng, (uint64_t)nblocks);
        if (exec)
            dsm_free(blocks[b].mem);
        free(blocks[b].model);
        blocks[b] = blocks[--nblocks];
    }
    if (nblocks < MAX_BLOCKS && (nblocks == 0 || mt_rand_below(rng, 3) == 0)) {
        static const enum dsm_home_policy pol[] = { DSM_HOME_BLOCK, DSM_HOME_CYCLIC,
                                                    DSM_HOME_NODE };
        size_t maxw = 5 * ps / 4 < MAX_WORDS ? 5 * ps / 4 : MAX_WORDS;
        size_t words = 1 + (size_t)mt_rand_below(rng, mt_rand_below(rng, 2) ? maxw : 64);
        enum dsm_home_policy p = pol[mt_rand_below(rng, 3)];
        int node = (int)mt_rand_below(rng, (uint64_t)nranks);
        struct block *b = &blocks[nblocks++];
        b->nwords = words;
        b->model = calloc(words, 4);
        if (!b->model)
            mt_fail("out of private memory");
        /* Fresh shared memory reads as zero (libdsm(7)). */
        b->mem = exec ? mt_malloc_home(words * 4, p, node) : NULL;
    }
}

/* ---- one phase ---- */

struct range { int block; size_t first, len; int owner; };
#define MAX_RANGES 256
static struct range ranges[MAX_RANGES];
static int nranges;
static int16_t *owner[MAX_BLOCKS];     /* per block, per word: this phase */

/* Lock operations of one rank in one phase: accumulator adds and record
 * updates, drawn from the shared stream so every rank knows the totals. */
struct lockop { int kind, idx, pf; int64_t add; };
#define MAX_LOCKOPS 4
static struct lockop lockops[64][MAX_LOCKOPS];
static int nlockops[64];

static uint32_t word_value(uint64_t key, int b, size_t w)
{
    return (uint32_t)mix64(key ^ ((uint64_t)b << 40) ^ w);
}

static void plan_phase(uint64_t *rng, uint64_t *key)
{
    *key = mt_rand(rng);
    for (int b = 0; b < nblocks; b++)
        for (size_t w = 0; w < blocks[b].nwords; w++)
            owner[b][w] = -1;
    nranges = nblocks ? (int)mt_rand_below(rng, (uint64_t)(4 * nranks + 1)) : 0;
    for (int i = 0; i < nranges; i++) {
        struct range *r = &ranges[i];
        r->block = (int)mt_rand_below(rng, (uint64_t)nblocks);
        size_t n = blocks[r->block].nwords;
        r->first = (size_t)mt_rand_below(rng, n);
        size_t maxlen = n - r->first;
        size_t want = 1 + (size_t)mt_rand_below(rng, mt_rand_below(rng, 2) ? 2 * ps / 4 : 16);
        r->len = want < maxlen ? want : maxlen;
        r->owner = (int)mt_rand_below(rng, (uint64_t)nranks);
        for (size_t w = r->first; w < r->first + r->len; w++)
            if (owner[r->block][w] < 0)
                owner[r->block][w] = (int16_t)r->owner;
    }
    for (int r = 0; r < nranks; r++) {
        nlockops[r] = (int)mt_rand_below(rng, MAX_LOCKOPS + 1);
        for (int i = 0; i < nlockops[r]; i++) {
            struct lockop *o = &lockops[r][i];
            o->kind = (int)mt_rand_below(rng, 2);
            o->idx = (int)mt_rand_below(rng, o->kind ? NREC : NACC);
            o->add = (int64_t)mt_rand_below(rng, 1000) - 400;
            /* Prefetch the pages the lock protects right before acquiring
             * it: they may be in flight when the grant's notices come. */
            o->pf = (int)mt_rand_below(rng, 2);
        }
    }
}

static void check_word(const char *what, int b, size_t w)
{
    uint32_t got = ((volatile uint32_t *)blocks[b].mem)[w], want = blocks[b].model[w];
    if (got != want)
        mt_error("seed %" PRIu64 ", %s: block %d word %zu at %p (home %d) is 0x%08" PRIx32
                 ", expected 0x%08" PRIx32, seed, what, b, w, (void *)&blocks[b].mem[w],
                 dsm_home_of(&blocks[b].mem[w]), got, want);
}

/*
 * Extra operations of a phase.  Each has a `plan`, which draws from the
 * shared stream (every rank draws the same numbers, whether it takes part or
 * not; called with exec 0 in the replay too), and a `run`, which does this
 * rank's part at one of the points of the phase below.  An operation that
 * changes shared memory also updates the model, the same way on every rank,
 * in run_phase.
 *
 *  prefetch  every rank prefetches a few random page ranges of random blocks
 *            (or the lock records' pages) at random points of the phase:
 *            before its reads, right before its lock operations (pages in
 *            flight at a lock acquire; each lock operation also prefetches
 *            the pages of its lock half the time), after its writes (pages
 *            that other ranks write in this interval, in flight at the
 *            barrier), and
 *            right before a broadcast.  A hint: no effect on the model; the
 *            reads and checks that follow check it.
 *  bcast     dsm_bcast of a random word range of a random block from a
 *            random root, collective: at the start of the phase (so it meets
 *            the history prefetches of the barrier before it) or after the
 *            phase's writes.  Then every rank checks every word of the range
 *            (without a read fault: the copies are there), and ranks write
 *            other words of the same pages (outside the range, so no rank
 *            reads them) and release a lock at once, so that their diffs
 *            reach the homes while slower ranks, and the root, may still be
 *            in the broadcast.
 */
enum { AT_START, AT_LOCKS, AT_WRITTEN, AT_BCAST, AT_END, NPOINTS };

#define MAX_PF 4
struct pf { int block; size_t page, npages; int at; };
static struct pf pfs[64][MAX_PF];
static int npfs[64];

static void prefetch_plan(uint64_t *rng)
{
    for (int r = 0; r < nranks; r++) {
        npfs[r] = nblocks ? (int)mt_rand_below(rng, MAX_PF + 1) : 0;
        for (int i = 0; i < npfs[r]; i++) {
            struct pf *f = &pfs[r][i];
            /* block -1: the lock records, so that a lock acquire meets them
             * in flight. */
            f->block = mt_rand_below(rng, 5) == 0 ? -1
                       : (int)mt_rand_below(rng, (uint64_t)nblocks);
            size_t pages = f->block < 0 ? NREC * REC_PAGES
                           : (blocks[f->block].nwords * 4 + ps - 1) / ps + 1;
            f->page = (size_t)mt_rand_below(rng, pages);
            f->npages = 1 + (size_t)mt_rand_below(rng, pages - f->page);
            f->at = (int)mt_rand_below(rng, NPOINTS);
        }
    }
}

static void prefetch_run(int at)
{
    for (int i = 0; i < npfs[me]; i++) {
        const struct pf *f = &pfs[me][i];
        if (f->at != at)
            continue;
        const char *base = f->block < 0 ? recmem : (const char *)blocks[f->block].mem;
        int rc = dsm_prefetch(base + f->page * ps, f->npages);
        if (rc != 0)
            mt_fail("seed %" PRIu64 ": dsm_prefetch(%p, %zu) returned %d", seed,
                    (const void *)(base + f->page * ps), f->npages, rc);
    }
}

/* The broadcast of this phase (bc_at < 0: none), and the words written after
 * it (owner2: per block, per word, the writer; -1 none). */
static int bc_at, bc_block, bc_root;
static size_t bc_first, bc_len;
static int16_t *owner2[MAX_BLOCKS];
struct range2 { int block; size_t first, len; int owner; };
static struct range2 post[MAX_RANGES];
static int npost;

static void bcast_plan(uint64_t *rng)
{
    bc_at = -1;
    npost = 0;
    if (!nblocks || mt_rand_below(rng, 3) != 0)
        return;
    bc_at = mt_rand_below(rng, 2) ? AT_BCAST : AT_START;
    bc_block = (int)mt_rand_below(rng, (uint64_t)nblocks);
    bc_root = (int)mt_rand_below(rng, (uint64_t)nranks);
    size_t n = blocks[bc_block].nwords;
    bc_first = (size_t)mt_rand_below(rng, n);
    size_t want = 1 + (size_t)mt_rand_below(rng, mt_rand_below(rng, 2) ? n : 8 * ps / 4);
    bc_len = want < n - bc_first ? want : n - bc_first;
    for (size_t w = 0; w < n; w++)
        owner2[bc_block][w] = -1;
    if (bc_at != AT_BCAST)
        return;
    /* Words near the range (within two pages of it, so mostly on its first
     * and last pages), outside it: nobody reads them in this phase. */
    size_t lo = bc_first > 2 * ps / 4 ? bc_first - 2 * ps / 4 : 0;
    size_t hi = n - (bc_first + bc_len) > 2 * ps / 4 ? bc_first + bc_len + 2 * ps / 4 : n;
    npost = (int)mt_rand_below(rng, (uint64_t)(2 * nranks + 1));
    for (int i = 0; i < npost; i++) {
        struct range2 *r = &post[i];
        r->block = bc_block;
        r->owner = (int)mt_rand_below(rng, (uint64_t)nranks);
        r->first = lo + (size_t)mt_rand_below(rng, hi - lo);
        r->len = 1 + (size_t)mt_rand_below(rng, 64);
        if (r->len > hi - r->first)
            r->len = hi - r->first;
        for (size_t w = r->first; w < r->first + r->len; w++)
            if (owner2[bc_block][w] < 0 && (w < bc_first || w >= bc_first + bc_len))
                owner2[bc_block][w] = (int16_t)r->owner;
    }
}

/* The broadcast itself, at point `at` of the phase; then the checks and the
 * writes after it.  `key2` gives the values written after it. */
static void bcast_run(int at, int round, int phase, uint64_t key2)
{
    char what[128];
    struct block *b = &blocks[bc_block];

    if (bc_at != at)
        return;
    prefetch_run(AT_BCAST);
    dsm_bcast(b->mem + bc_first, bc_len * 4, bc_root);
    /* The root's view is copied to everyone; in a data-race-free program
     * the root's view of the range after the broadcast's barrier is the
     * model with every write before the broadcast (run_phase applied those
     * of this phase already).  After it, nobody writes the range until the
     * phase's barrier, except the phase's own writes when the broadcast is
     * at its start: every rank checks the rest, without a read fault. */
    struct dsm_stats st;
    dsm_stats_get(&st);
    uint64_t f0 = st.read_faults;
    snprintf(what, sizeof what, "round %d phase %d, dsm_bcast(block %d words %zu+%zu, "
             "root %d)", round, phase, bc_block, bc_first, bc_len, bc_root);
    for (size_t w = bc_first; w < bc_first + bc_len; w++)
        if (at != AT_START || owner[bc_block][w] < 0 || owner[bc_block][w] == me)
            check_word(what, bc_block, w);
    dsm_stats_get(&st);
    if (st.read_faults != f0)
        mt_error("seed %" PRIu64 ", %s: %" PRIu64 " read fault(s) reading the range "
                 "after the broadcast", seed, what, st.read_faults - f0);
    mt_check_point(what);
    /* Writes next to the range, released at once (a lock release sends the
     * diffs to the homes now), while others may still be in the broadcast. */
    int wrote = 0;
    for (int i = 0; i < npost; i++) {
        const struct range2 *r = &post[i];
        if (r->owner != me)
            continue;
        for (size_t w = r->first; w < r->first + r->len; w++)
            if (owner2[bc_block][w] == me) {
                b->mem[w] = word_value(key2, bc_block, w);
                wrote = 1;
            }
    }
    if (wrote) {
        int lock = (LOCK_ACC + me % 5) % dsm_lock_count();
        dsm_lock_acquire(lock);
        dsm_lock_release(lock);
    }
}

/* The model: the phase's writes before the broadcast point (idempotent). */
static void model_writes(uint64_t key)
{
    for (int i = 0; i < nranges; i++) {
        const struct range *r = &ranges[i];
        for (size_t w = r->first; w < r->first + r->len; w++)
            if (owner[r->block][w] == r->owner)
                blocks[r->block].model[w] = word_value(key, r->block, w);
    }
}

static void run_phase(uint64_t *rng, int round, int phase, int exec)
{
    uint64_t key, key2;
    char what[96];

    plan_phase(rng, &key);
    prefetch_plan(rng);
    bcast_plan(rng);
    key2 = mt_rand(rng);
    if (exec) {
        prefetch_run(AT_START);
        bcast_run(AT_START, round, phase, key2);
        snprintf(what, sizeof what, "round %d phase %d, read of an earlier write",
                 round, phase);
        uint64_t own = seed ^ mix64((uint64_t)round * 977 + (uint64_t)phase) ^
                       (uint64_t)me * 0x632BE59BD9B4E019ull;
        for (int i = 0; nblocks && i < READS; i++) {
            int b = (int)mt_rand_below(&own, (uint64_t)nblocks);
            size_t w = (size_t)mt_rand_below(&own, blocks[b].nwords);
            if (owner[b][w] < 0 || owner[b][w] == me)
                check_word(what, b, w);
        }
        mt_check_point(what);
        prefetch_run(AT_LOCKS);
        for (int i = 0; i < nlockops[me]; i++) {
            const struct lockop *o = &lockops[me][i];
            if (o->kind == 0) {
                /* Bounds: what earlier phases left, plus any subset of
                 * this phase's adds to the same accumulator. */
                int64_t lo = model_acc[o->idx], hi = lo;
                for (int r = 0; r < nranks; r++)
                    for (int k = 0; k < nlockops[r]; k++)
                        if (lockops[r][k].kind == 0 && lockops[r][k].idx == o->idx) {
                            if (lockops[r][k].add < 0) lo += lockops[r][k].add;
                            else hi += lockops[r][k].add;
                        }
                int lock = (LOCK_ACC + o->idx % 5) % dsm_lock_count();
                if (o->pf)
                    dsm_prefetch(acc_at(o->idx), 1);
                dsm_lock_acquire(lock);
                int64_t *a = acc_at(o->idx);
                if (*a < lo || *a > hi)
                    mt_fail("seed %" PRIu64 ", round %d phase %d: accumulator %d is %"
                            PRId64 " inside lock %d, outside [%" PRId64 ", %" PRId64 "]",
                            seed, round, phase, o->idx, *a, lock, lo, hi);
                *a += o->add;
                dsm_lock_release(lock);
            } else {
                int lock = (LOCK_REC + o->idx) % dsm_lock_count();
                if (o->pf)
                    dsm_prefetch(rec_seq(o->idx), REC_PAGES);
                dsm_lock_acquire(lock);
                int64_t s = *rec_seq(o->idx);
                uint32_t *pl = rec_payload(o->idx);
                size_t n = rec_words(), bad = 0;
                for (size_t k = 0; k < n; k++)
                    if (pl[k] != (s ? rec_value(o->idx, s, k) : 0))
                        bad++;
                if (bad)
                    mt_fail("seed %" PRIu64 ", round %d phase %d: record %d has seq %"
                            PRId64 " but %zu of its %zu payload words disagree inside "
                            "lock %d (a lock acquire saw part of a release)",
                            seed, round, phase, o->idx, s, bad, n, lock);
                for (size_t k = 0; k < n; k++)
                    pl[k] = rec_value(o->idx, s + 1, k);
                *rec_seq(o->idx) = s + 1;
                dsm_lock_release(lock);
            }
        }
        for (int i = 0; i < nranges; i++) {
            const struct range *r = &ranges[i];
            if (r->owner != me)
                continue;
            for (size_t w = r->first; w < r->first + r->len; w++)
                if (owner[r->block][w] == me)
                    blocks[r->block].mem[w] = word_value(key, r->block, w);
        }
        for (int i = 0; i < nranges; i++) {
            const struct range *r = &ranges[i];
            if (r->owner != me)
                continue;
            for (size_t w = r->first; w < r->first + r->len; w++)
                if (owner[r->block][w] == me &&
                    blocks[r->block].mem[w] != word_value(key, r->block, w))
                    mt_error("seed %" PRIu64 ", round %d phase %d: own write to block %d "
                             "word %zu reads back wrong", seed, round, phase, r->block, w);
        }
        mt_check_point("reading back own writes");
        prefetch_run(AT_WRITTEN);
        if (bc_at == AT_BCAST) {
            model_writes(key);
            bcast_run(AT_BCAST, round, phase, key2);
        }
        prefetch_run(AT_END);
        dsm_barrier();
    }
    /* The model: the phase's writes, those after its broadcast, and the
     * lock operations. */
    model_writes(key);
    for (int i = 0; i < npost; i++) {
        const struct range2 *r = &post[i];
        for (size_t w = r->first; w < r->first + r->len; w++)
            if (owner2[r->block][w] == r->owner)
                blocks[r->block].model[w] = word_value(key2, r->block, w);
    }
    for (int r = 0; r < nranks; r++)
        for (int k = 0; k < nlockops[r]; k++) {
            if (lockops[r][k].kind == 0)
                model_acc[lockops[r][k].idx] += lockops[r][k].add;
            else
                model_seq[lockops[r][k].idx]++;
        }
}

static void check_everything(const char *what)
{
    for (int b = 0; b < nblocks; b++)
        for (size_t w = 0; w < blocks[b].nwords; w++)
            check_word(what, b, w);
    for (int j = 0; j < NACC; j++)
        if (*acc_at(j) != model_acc[j])
            mt_error("seed %" PRIu64 ", %s: accumulator %d is %" PRId64 ", expected %"
                     PRId64, seed, what, j, *acc_at(j), model_acc[j]);
    for (int r = 0; r < NREC; r++) {
        int64_t s = *rec_seq(r);
        if (s != model_seq[r])
            mt_error("seed %" PRIu64 ", %s: record %d has seq %" PRId64 ", expected %"
                     PRId64, seed, what, r, s, model_seq[r]);
        for (size_t k = 0; k < rec_words(); k++)
            if (rec_payload(r)[k] != (s ? rec_value(r, s, k) : 0)) {
                mt_error("seed %" PRIu64 ", %s: record %d payload word %zu is wrong",
                         seed, what, r, k);
                break;
            }
    }
    mt_check_point(what);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    me = dsm_node_id();
    nranks = dsm_node_count();
    ps = dsm_page_size();
    if (nranks > 64)
        mt_fail("at most 64 ranks");
    int rounds = argc > 1 ? atoi(argv[1]) : 100;
    uint64_t *box = mt_malloc_home(ps, DSM_HOME_NODE, 0);
    if (me == 0)
        *box = argc > 2 ? strtoull(argv[2], NULL, 0)
                        : (uint64_t)time(NULL) * 1000003u ^ (uint64_t)clock();
    dsm_barrier();
    seed = *box;
    mt_note("seed %" PRIu64 ", %d ranks, comm %s, %d rounds (rerun: stress %d %" PRIu64
            ")", seed, nranks, getenv("DSM_COMM") ? getenv("DSM_COMM") : "default",
            rounds, rounds, seed);
    accmem = mt_malloc_home(2 * ps, DSM_HOME_CYCLIC, 0);
    recmem = mt_malloc_home(NREC * REC_PAGES * ps, DSM_HOME_CYCLIC, 0);
    for (int b = 0; b < MAX_BLOCKS; b++) {
        owner[b] = malloc(MAX_WORDS * sizeof **owner);
        owner2[b] = malloc(MAX_WORDS * sizeof **owner2);
        if (!owner[b] || !owner2[b])
            mt_fail("out of private memory");
    }

    uint64_t rng = seed;
    for (int round = 0; round < rounds; round++) {
        alloc_step(&rng, 1);
        int phases = 1 + (int)mt_rand_below(&rng, 4);
        for (int ph = 0; ph < phases; ph++)
            run_phase(&rng, round, ph, 1);
        if (round % CHECK_EVERY == CHECK_EVERY - 1) {
            char what[64];
            snprintf(what, sizeof what, "full check after round %d", round);
            check_everything(what);
            dsm_barrier();
        }
    }
    check_everything("final state against the sequential model");

    /* The model again, from the seed alone: the plans must replay to the
     * same model (a check of the generator, so that a replay from a
     * reported seed means something). */
    {
        uint32_t sum_live = 0, sum_replay = 0;
        for (int b = 0; b < nblocks; b++)
            for (size_t w = 0; w < blocks[b].nwords; w++)
                sum_live = sum_live * 31 + blocks[b].model[w];
        struct block live[MAX_BLOCKS];
        int nlive = nblocks;
        memcpy(live, blocks, sizeof live);
        nblocks = 0;
        int64_t acc_live[NACC], seq_live[NREC];
        memcpy(acc_live, model_acc, sizeof acc_live);
        memcpy(seq_live, model_seq, sizeof seq_live);
        memset(model_acc, 0, sizeof model_acc);
        memset(model_seq, 0, sizeof model_seq);
        rng = seed;
        for (int round = 0; round < rounds; round++) {
            alloc_step(&rng, 0);
            int phases = 1 + (int)mt_rand_below(&rng, 4);
            for (int ph = 0; ph < phases; ph++)
                run_phase(&rng, round, ph, 0);
        }
        for (int b = 0; b < nblocks; b++)
            for (size_t w = 0; w < blocks[b].nwords; w++)
                sum_replay = sum_replay * 31 + blocks[b].model[w];
        if (nblocks != nlive || sum_live != sum_replay ||
            memcmp(acc_live, model_acc, sizeof acc_live) ||
            memcmp(seq_live, model_seq, sizeof seq_live))
            mt_fail("seed %" PRIu64 ": the replay of the plans differs from the model "
                    "(a bug of this test)", seed);
        for (int b = 0; b < nblocks; b++)
            free(blocks[b].model);
        memcpy(blocks, live, sizeof live);
        nblocks = nlive;
    }
    dsm_barrier();
    for (int b = 0; b < nblocks; b++) {
        dsm_free(blocks[b].mem);
        free(blocks[b].model);
    }
    mt_finalize();
    return 0;
}
