/*
 * prefetch_race.c - a prefetch and faults on the same pages at the same
 * time, from two threads of one rank (dsm_prefetch(3)).
 *
 * Every rank is home of PER pages (block homes).  Each round the homes
 * write new values into their pages and thread 0 calls dsm_barrier (thread
 * 1 waits off shared memory); then, released together, thread 0 prefetches
 * the whole array and reads it from the first page on while thread 1 reads
 * it from the last page down, so that thread 1's faults meet pages that are
 * not marked yet, marked and in flight, and already prefetched.  Both check
 * every value they read.  Whatever the interleaving, every remote page must
 * be fetched exactly once per round: pages_fetched grows by the number of
 * remote pages, and read_faults (fetches by a fault) plus prefetch_issued
 * (fetches by the prefetch) add up to the same number; a fault that meets a
 * prefetch under way waits for it instead of asking again.
 */
#include <pthread.h>

#include "mpitest.h"

#define PER 6

static uint32_t *arr;
static size_t psz, words, npages;
static int me, nodes;
static long round_now;
static pthread_barrier_t pb;

static uint32_t value(long round, size_t page, size_t w)
{
    return (uint32_t)(round * 7919u) ^ (uint32_t)(page << 16) ^ (uint32_t)w;
}

static void read_page(size_t p, const char *who)
{
    const uint32_t *a = arr + p * words;
    for (size_t w = 0; w < words; w += 61)
        mt_expect_u32(who, &a[w], value(round_now, p, w));
    mt_expect_u32(who, &a[words - 1], value(round_now, p, words - 1));
}

static void *reader(void *arg)
{
    long rounds = (long)(intptr_t)arg;
    for (long r = 0; r < rounds; r++) {
        pthread_barrier_wait(&pb);          /* values written, barrier done */
        for (size_t p = npages; p-- > 0;)
            read_page(p, "thread 1 (faults)");
        pthread_barrier_wait(&pb);          /* round finished */
    }
    return NULL;
}

static struct dsm_stats stats(void)
{
    struct dsm_stats s;
    if (dsm_stats_get(&s) != 0)
        mt_fail("dsm_stats_get failed");
    return s;
}

int main(int argc, char **argv)
{
    long rounds = mt_param("MPITEST_ROUNDS", 30);
    pthread_t th;
    uint64_t remote;

    mt_init(&argc, &argv);
    me = dsm_node_id();
    nodes = dsm_node_count();
    psz = dsm_page_size();
    words = psz / 4;
    npages = (size_t)nodes * PER;
    remote = (uint64_t)(nodes - 1) * PER;
    arr = mt_malloc_home(npages * psz, DSM_HOME_BLOCK, 0);
    mt_note("%d ranks, %zu pages, %ld rounds, 2 threads per rank", nodes, npages, rounds);
    if (pthread_barrier_init(&pb, NULL, 2) != 0)
        mt_fail("pthread_barrier_init failed");
    if (pthread_create(&th, NULL, reader, (void *)(intptr_t)rounds) != 0)
        mt_fail("pthread_create failed");

    for (long r = 0; r < rounds; r++) {
        struct dsm_stats s0, s1;
        for (size_t p = (size_t)me * PER; p < (size_t)(me + 1) * PER; p++)
            for (size_t w = 0; w < words; w++)
                arr[p * words + w] = value(r, p, w);
        round_now = r;
        dsm_barrier();
        s0 = stats();
        pthread_barrier_wait(&pb);          /* go */
        if (dsm_prefetch(arr, npages) != 0)
            mt_fail("dsm_prefetch failed");
        for (size_t p = 0; p < npages; p++)
            read_page(p, "thread 0 (prefetch)");
        pthread_barrier_wait(&pb);          /* both finished reading */
        mt_check_point("values read while a prefetch races with faults");
        /* Everything was read, so every prefetch has arrived. */
        s1 = stats();
        if (s1.pages_fetched - s0.pages_fetched != remote ||
            (s1.read_faults - s0.read_faults) + (s1.prefetch_issued - s0.prefetch_issued) != remote)
            mt_fail("round %ld: %llu pages fetched, %llu by faults and %llu by the prefetch, "
                    "for %llu remote pages: a page was fetched twice or not at all", r,
                    (unsigned long long)(s1.pages_fetched - s0.pages_fetched),
                    (unsigned long long)(s1.read_faults - s0.read_faults),
                    (unsigned long long)(s1.prefetch_issued - s0.prefetch_issued),
                    (unsigned long long)remote);
        dsm_barrier();
    }
    pthread_join(th, NULL);
    {
        struct dsm_stats s = stats();
        mt_note("over all rounds on rank 0: %llu prefetched, %llu used, %llu late "
                "(waited for), %llu fetched by faults",
                (unsigned long long)s.prefetch_issued, (unsigned long long)s.prefetch_used,
                (unsigned long long)s.prefetch_late, (unsigned long long)s.read_faults);
    }
    mt_finalize();
    return 0;
}
