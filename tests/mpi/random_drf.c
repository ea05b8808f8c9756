/*
 * random_drf.c - a seeded random data-race-free program against its
 * sequential replay.
 *
 * Shared state: S int64 slots on SLOT_PAGES pages (cyclic homes) and NACC
 * accumulators on two more pages.  Every rank runs the same generator from
 * the same seed, so all ranks agree on the plan of each round without
 * talking:
 *   - each slot gets at most one writer rank (or none) and a value; the
 *     density changes from round to round (nothing, sparse, dense, all);
 *   - each rank reads some slots that nobody writes in this round and checks
 *     them against the values of the earlier rounds (barrier visibility,
 *     invalidation of stale copies);
 *   - each rank adds to some accumulators, each under its lock; inside the
 *     lock the value must lie between what the earlier rounds left and that
 *     plus every add of this round;
 *   - the writers write (a scratch value first, then the final one), and
 *     the round ends with a barrier.
 * Every CHECK_EVERY rounds all ranks check everything between two barriers.
 * At the end every rank compares the whole shared memory with a sequential
 * replay of all rounds computed locally from the seed.
 *
 * The seed is printed; MPITEST_SEED=<n> reruns one.  By default rank 0 picks
 * it from the clock and hands it to the others through shared memory.
 * MPITEST_ROUNDS overrides the number of rounds.
 */
#include <time.h>

#include "mpitest.h"

#define SLOT_PAGES   8
#define ACC_PAGES    2
#define NACC         24
#define NLOCKS       5
#define LOCK_BASE    100
#define MAX_LOCK_OPS 6
#define CHECK_EVERY  8
#define READS        256

struct lock_op {
    int acc;
    int64_t add;
};

/* The plan of one round, the same on every rank. */
struct plan {
    int16_t *writer;              /* per slot: writing rank, or -1 */
    int64_t *value;               /* per slot: the value written */
    int nops[64];                 /* per rank: lock operations */
    struct lock_op ops[64][MAX_LOCK_OPS];
    int64_t round_add[NACC];      /* per accumulator: sum of this round */
};

static size_t nslots;
static int nranks;

static void make_plan(uint64_t *rng, struct plan *p)
{
    static const unsigned density[] = { 0, 1, 8, 64, 128, 256, 256 };
    unsigned d = density[mt_rand_below(rng, sizeof density / sizeof *density)];

    for (size_t s = 0; s < nslots; s++) {
        p->writer[s] = -1;
        if (mt_rand_below(rng, 256) < d) {
            p->writer[s] = (int16_t)mt_rand_below(rng, (uint64_t)nranks);
            p->value[s] = (int64_t)mt_rand(rng);
        }
    }
    memset(p->round_add, 0, sizeof p->round_add);
    for (int r = 0; r < nranks; r++) {
        p->nops[r] = (int)mt_rand_below(rng, MAX_LOCK_OPS + 1);
        for (int i = 0; i < p->nops[r]; i++) {
            struct lock_op *op = &p->ops[r][i];

            op->acc = (int)mt_rand_below(rng, NACC);
            op->add = (int64_t)mt_rand_below(rng, 1000) - 300;
            p->round_add[op->acc] += op->add;
        }
    }
}

/* Apply a round to a private model of the shared state. */
static void apply_plan(const struct plan *p, int64_t *slots, int64_t *acc)
{
    for (size_t s = 0; s < nslots; s++)
        if (p->writer[s] >= 0)
            slots[s] = p->value[s];
    for (int j = 0; j < NACC; j++)
        acc[j] += p->round_add[j];
}

static int lock_of(int acc)
{
    return (LOCK_BASE + acc % NLOCKS) % dsm_lock_count();
}

static int64_t *acc_addr(char *accmem, size_t ps, int j)
{
    /* Spread the accumulators over both pages, a few words apart. */
    return (int64_t *)(accmem + (size_t)(j % ACC_PAGES) * ps) + 3 * (j / ACC_PAGES);
}

static void check_all(const char *what, const int64_t *shared, char *accmem,
                      size_t ps, const int64_t *slots, const int64_t *acc)
{
    for (size_t s = 0; s < nslots; s++)
        mt_expect_u64(what, (const uint64_t *)&shared[s], (uint64_t)slots[s]);
    for (int j = 0; j < NACC; j++)
        mt_expect_u64(what, (const uint64_t *)acc_addr(accmem, ps, j),
                      (uint64_t)acc[j]);
}

int main(int argc, char **argv)
{
    int rounds, me;
    size_t ps;
    uint64_t seed, rng, *seedbox;
    const char *seed_env;
    int64_t *shared, *model, model_acc[NACC] = { 0 };
    char *accmem, what[128];
    struct plan plan;

    mt_init(&argc, &argv);
    rounds = (int)mt_param("MPITEST_ROUNDS", 100);
    me = dsm_node_id();
    nranks = dsm_node_count();
    if (nranks > 64)
        mt_fail("this test handles at most 64 ranks, not %d", nranks);
    ps = dsm_page_size();
    nslots = SLOT_PAGES * ps / sizeof(int64_t);

    /* Agree on the seed. */
    seed_env = getenv("MPITEST_SEED");
    seedbox = mt_malloc_home(ps, DSM_HOME_NODE, 0);
    if (me == 0)
        *seedbox = seed_env ? strtoull(seed_env, NULL, 0)
                            : (uint64_t)time(NULL) ^ (uint64_t)clock();
    dsm_barrier();
    seed = *seedbox;
    mt_note("seed %" PRIu64 " (rerun with MPITEST_SEED=%" PRIu64 "), "
            "%d ranks, %zu slots, %d rounds", seed, seed, nranks, nslots, rounds);

    shared = mt_malloc_home(SLOT_PAGES * ps, DSM_HOME_CYCLIC, 0);
    accmem = mt_malloc_home(ACC_PAGES * ps, DSM_HOME_CYCLIC, 1 % nranks);
    model = calloc(nslots, sizeof *model);
    plan.writer = malloc(nslots * sizeof *plan.writer);
    plan.value = malloc(nslots * sizeof *plan.value);
    if (model == NULL || plan.writer == NULL || plan.value == NULL)
        mt_fail("out of private memory");

    rng = seed;
    for (int round = 0; round < rounds; round++) {
        uint64_t rrng;

        make_plan(&rng, &plan);
        /* Reads: a per-rank choice of slots, from a stream derived from the
         * seed, so that it does not shift the shared plan stream. */
        rrng = seed ^ ((uint64_t)round << 32) ^ (uint64_t)me * 0x632BE59BD9B4E019ull;
        snprintf(what, sizeof what, "seed %" PRIu64 ", round %d, read of a "
                 "slot of an earlier round", seed, round);
        for (int i = 0; i < READS; i++) {
            size_t s = mt_rand_below(&rrng, nslots);

            if (plan.writer[s] < 0 || plan.writer[s] == me)
                mt_expect_u64(what, (const uint64_t *)&shared[s],
                              (uint64_t)model[s]);
        }
        mt_check_point(what);

        for (int i = 0; i < plan.nops[me]; i++) {
            const struct lock_op *op = &plan.ops[me][i];
            int64_t *a = acc_addr(accmem, ps, op->acc);
            int64_t lo = model_acc[op->acc], hi = lo;

            /* The sum of the round lies between the sum of its negative
             * and of its positive adds; so does every partial sum. */
            for (int r = 0; r < nranks; r++)
                for (int k = 0; k < plan.nops[r]; k++)
                    if (plan.ops[r][k].acc == op->acc) {
                        if (plan.ops[r][k].add < 0)
                            lo += plan.ops[r][k].add;
                        else
                            hi += plan.ops[r][k].add;
                    }
            dsm_lock_acquire(lock_of(op->acc));
            if (*a < lo || *a > hi)
                mt_fail("seed %" PRIu64 ", round %d: accumulator %d is %" PRId64
                        " inside its lock %d, outside [%" PRId64 ", %" PRId64 "]",
                        seed, round, op->acc, *a, lock_of(op->acc), lo, hi);
            *a += op->add;
            dsm_lock_release(lock_of(op->acc));
        }

        for (size_t s = 0; s < nslots; s++)
            if (plan.writer[s] == me) {
                shared[s] = ~plan.value[s];
                shared[s] = plan.value[s];
            }
        dsm_barrier();
        apply_plan(&plan, model, model_acc);

        if (round % CHECK_EVERY == CHECK_EVERY - 1) {
            snprintf(what, sizeof what, "seed %" PRIu64 ", full check after "
                     "round %d", seed, round);
            check_all(what, shared, accmem, ps, model, model_acc);
            mt_check_point(what);
            dsm_barrier();
        }
    }

    /* The sequential replay, from scratch. */
    {
        int64_t *replay = calloc(nslots, sizeof *replay);
        int64_t replay_acc[NACC] = { 0 };

        if (replay == NULL)
            mt_fail("out of private memory");
        rng = seed;
        for (int round = 0; round < rounds; round++) {
            make_plan(&rng, &plan);
            apply_plan(&plan, replay, replay_acc);
        }
        snprintf(what, sizeof what, "seed %" PRIu64 ", final state against "
                 "the sequential replay", seed);
        check_all(what, shared, accmem, ps, replay, replay_acc);
        mt_check_point(what);
        free(replay);
    }

    dsm_barrier();
    dsm_free(accmem);
    dsm_free(shared);
    dsm_free(seedbox);
    free(model);
    free(plan.writer);
    free(plan.value);
    mt_finalize();
    return 0;
}
