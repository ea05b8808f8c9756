/*
 * threads.c - several application threads per rank on shared memory.
 *
 * T threads per rank (a phase with T = 2, then one with T = 4) access the
 * same shared pages at the same time:
 *   - writes: thread t of rank r writes the words i with
 *     i % (N*T) == r*T + t of every page homed on another node, so the
 *     threads of one rank take write faults on the same pages at once and
 *     their words interleave with those of the other ranks;
 *   - reads: after the barrier all threads of a rank read all pages in the
 *     same order, starting together, so they fault on the same invalid page
 *     at once (one fetch, the others wait for it);
 *   - locks: every thread increments a shared counter under one lock, so
 *     threads of one rank compete for a lock with each other as well as
 *     with other ranks.
 * Only thread 0 calls dsm_barrier(), between two pthread barriers, while
 * the other threads of the rank do not touch shared memory.
 *
 * Run by run-mpi-test.sh with 2, 3 and 4 ranks, for each DSM_COMM variant.
 * MPITEST_ROUNDS and MPITEST_ITERS override the rounds and lock increments.
 */
#include <pthread.h>

#include "mpitest.h"

#define MAX_THREADS 4
#define COUNTER_LOCK 3

static int me, n, rounds;
static long iters;
static size_t ps, words, npages;
static uint32_t *pages;
static volatile uint64_t *counter;
static pthread_barrier_t pbar;

/* Value of word i of page q written in round `round` of the phase with
 * `threads` threads. */
static uint32_t value(int threads, int round, size_t q, size_t i)
{
    return (uint32_t)threads << 28 ^ (uint32_t)round << 20
           ^ (uint32_t)q << 14 ^ (uint32_t)i ^ 0x01000000u;
}

static int home(size_t q)
{
    return (int)(q % (size_t)n);
}

/* The rank that writes word i in a phase with `threads` threads. */
static int writer(int threads, size_t i)
{
    return (int)(i % ((size_t)n * (size_t)threads)) / threads;
}

/* What word i of page q holds after round `round` of the phase with
 * `threads` threads: its writer skips pages homed on itself, where the
 * word keeps the value of the earlier phase (or the initial zero). */
static uint32_t expected(int threads, int round, size_t q, size_t i)
{
    if (writer(threads, i) != home(q))
        return value(threads, round, q, i);
    if (threads > 2)
        return expected(threads / 2, rounds - 1, q, i);
    return 0;
}

struct worker {
    pthread_t thread;
    int tid, threads;
};

/* Thread 0 makes the DSM barrier while the others wait outside shared
 * memory; the pthread barriers on both sides keep them out. */
static void node_barrier(int tid)
{
    pthread_barrier_wait(&pbar);
    if (tid == 0)
        dsm_barrier();
    pthread_barrier_wait(&pbar);
}

static void *work(void *arg)
{
    struct worker *w = arg;
    int t = w->tid, threads = w->threads;
    size_t stride = (size_t)n * (size_t)threads;
    size_t first = (size_t)me * (size_t)threads + (size_t)t;
    char what[96];

    for (int round = 0; round < rounds; round++) {
        for (size_t q = 0; q < npages; q++) {
            uint32_t *page = pages + q * words;

            if (home(q) == me)
                continue;
            for (size_t i = first; i < words; i += stride)
                page[i] = value(threads, round, q, i);
        }
        node_barrier(t);

        snprintf(what, sizeof what, "%d threads, round %d, thread %d",
                 threads, round, t);
        for (size_t q = 0; q < npages; q++)
            for (size_t i = 0; i < words; i++)
                mt_expect_u32(what, pages + q * words + i,
                              expected(threads, round, q, i));
        mt_check_point(what);
        node_barrier(t);
    }

    for (long k = 0; k < iters; k++) {
        dsm_lock_acquire(COUNTER_LOCK);
        *counter = *counter + 1;
        dsm_lock_release(COUNTER_LOCK);
    }
    return NULL;
}

static void phase(int threads, uint64_t *counted)
{
    struct worker w[MAX_THREADS];
    int rc;

    rc = pthread_barrier_init(&pbar, NULL, (unsigned)threads);
    if (rc != 0)
        mt_fail("pthread_barrier_init: %s", strerror(rc));
    for (int t = 0; t < threads; t++) {
        w[t].tid = t;
        w[t].threads = threads;
        rc = pthread_create(&w[t].thread, NULL, work, &w[t]);
        if (rc != 0)
            mt_fail("pthread_create: %s", strerror(rc));
    }
    for (int t = 0; t < threads; t++)
        pthread_join(w[t].thread, NULL);
    pthread_barrier_destroy(&pbar);

    dsm_barrier();
    *counted += (uint64_t)n * (uint64_t)threads * (uint64_t)iters;
    mt_expect_u64("lock counter", (const uint64_t *)counter, *counted);
    mt_check_point("lock counter after the threads joined");
    dsm_barrier();
}

int main(int argc, char **argv)
{
    uint64_t counted = 0;

    mt_init(&argc, &argv);
    rounds = (int)mt_param("MPITEST_ROUNDS", 20);
    iters = mt_param("MPITEST_ITERS", 100);
    me = dsm_node_id();
    n = dsm_node_count();
    ps = dsm_page_size();
    words = ps / sizeof(uint32_t);
    npages = 2 * (size_t)n;

    pages = mt_malloc_home(npages * ps, DSM_HOME_CYCLIC, 0);
    counter = mt_malloc_home(ps, DSM_HOME_NODE, n - 1);
    mt_note("%d ranks, %zu pages, %d rounds, %ld lock increments per thread",
            n, npages, rounds, iters);

    phase(2, &counted);
    phase(4, &counted);

    dsm_free((void *)counter);
    dsm_free(pages);
    mt_finalize();
    return 0;
}
