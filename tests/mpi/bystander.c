/*
 * bystander.c - a thread that takes no part in barriers works on shared
 * memory and locks while its rank's main thread is inside dsm_barrier().
 *
 * The OpenMP shim meets this with the program's own threads (cdo's operator
 * threads lock mutexes and write the heap while the initial thread's
 * regions end in barriers).  Rank B = n-1 runs such a thread, T; in round k
 * the ranks' main threads do:
 *
 *   B:        write P[k]; lock L, unlock L; enter barrier k.
 *   T (on B): once B's barrier entry is on the wire, lock L (its notices
 *             name P[k], written by B's main, and drop B's copy); write
 *             R[k] and S[k]; unlock L; lock S_LOCK, unlock it; tell rank 0
 *             by MPI; check P[k].
 *   rank 0:   wait for T's MPI message, then enter barrier k (so T's work
 *             falls inside B's barrier); after it, lock S_LOCK and check
 *             S[k].
 *   everyone: after barrier k check P[k]; at the top of round k check
 *             R[k-2] and take copies of R[k+1] and S[k+1] (zeros).
 *
 * What each check catches:
 *   - P[k] is a first-touch page (dsm__set_migrate) written by B alone, so
 *     barrier k moves its home to B; T's lock acquire dropped B's copy
 *     during the barrier.  libdsm stopped with "page N migrates here but is
 *     INVALID here" before pages stopped migrating once a rank declares
 *     such threads (dsm__barrier_bystanders).
 *   - R[k] is written by T during barrier k: it belongs to the next
 *     interval, so barrier k+1 must name it and drop the others' copies.
 *     Before, the end of barrier k cleared the written-page list after T
 *     had added R[k] to it, and R[k-2] read stale.
 *   - S[k], written by T during barrier k and released under S_LOCK: rank
 *     0, already past barrier k, acquires S_LOCK and must see it.  Before,
 *     the release was stamped with barrier k's epoch, and the lock manager
 *     dropped its notices for a requester of the next epoch.
 *
 * Run by run-mpi-test.sh with 2, 3 and 4 ranks, for each DSM_COMM variant.
 * MPITEST_ROUNDS overrides the number of rounds.
 */
#include <pthread.h>
#include <sched.h>

#include "mpitest.h"
#include "dsm_internal.h"

#define L_LOCK 1
#define S_LOCK 2
#define TAG_DONE 77

static int me, n, rounds, B;
static size_t ps, words;
static unsigned char *P, *R, *S;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go = -1, done = -1;          /* round the main thread / T reached */
static uint64_t entered_at;             /* msgs_sent before B's barrier */

static uint64_t value(int round, size_t i, int kind)
{
    return (uint64_t)(round + 1) << 32 | (uint64_t)kind << 24 | i;
}

static uint64_t *page(unsigned char *base, int k)
{
    return (uint64_t *)(void *)(base + (size_t)k * ps);
}

static void write_page(unsigned char *base, int k, int kind)
{
    uint64_t *w = page(base, k);
    for (size_t i = 0; i < words; i++)
        w[i] = value(k, i, kind);
}

/* expect_round < 0: zeros. */
static void check_page(const char *what, unsigned char *base, int k, int expect_round,
                       int kind)
{
    const volatile uint64_t *w = page(base, k);
    for (size_t i = 0; i < words; i++) {
        uint64_t want = expect_round < 0 ? 0 : value(expect_round, i, kind);
        if (w[i] != want)
            mt_error("%s[%d] word %zu: expected %#" PRIx64 ", got %#" PRIx64, what, k, i,
                     want, w[i]);
    }
    mt_check_point(what);
}

static void *bystander(void *arg)
{
    (void)arg;
    for (int k = 0; k < rounds; k++) {
        pthread_mutex_lock(&mu);
        while (go < k)
            pthread_cond_wait(&cv, &mu);
        uint64_t m0 = entered_at;
        pthread_mutex_unlock(&mu);
        /* The main thread's BARRIER_ENTER is its first message after m0
         * (its writes went out with the lock release before). */
        while (__atomic_load_n(&dsm__st.msgs_sent, __ATOMIC_ACQUIRE) <= m0)
            sched_yield();

        dsm_lock_acquire(L_LOCK);
        write_page(R, k, 'R');
        write_page(S, k, 'S');
        dsm_lock_release(L_LOCK);
        dsm_lock_acquire(S_LOCK);
        dsm_lock_release(S_LOCK);
        if (MPI_Send(&k, 1, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD) != MPI_SUCCESS)
            mt_fail("MPI_Send to rank 0 failed");
        /* Not before: the copy must be missing when the barrier ends. */
        check_page("P (bystander)", P, k, k, 'P');

        pthread_mutex_lock(&mu);
        done = k;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th;

    mt_init(&argc, &argv);
    me = dsm_node_id();
    n = dsm_node_count();
    B = n - 1;
    rounds = (int)mt_param("MPITEST_ROUNDS", 40);
    ps = dsm_page_size();
    words = ps / sizeof(uint64_t);

    P = mt_malloc_home((size_t)rounds * ps, DSM_HOME_NODE, 0);
    R = mt_malloc_home((size_t)(rounds + 1) * ps, DSM_HOME_NODE, B);
    S = mt_malloc_home((size_t)(rounds + 1) * ps, DSM_HOME_NODE, B);
    dsm__set_migrate(P, (size_t)rounds * ps);
    if (me == B) {
        dsm__barrier_bystanders();
        if (pthread_create(&th, NULL, bystander, NULL) != 0)
            mt_fail("pthread_create failed");
    }
    if (me != B) {
        check_page("R", R, 0, -1, 'R');
        check_page("S", S, 0, -1, 'S');
    }
    dsm_barrier();

    for (int k = 0; k < rounds; k++) {
        if (me != B) {
            if (k >= 2)
                check_page("R", R, k - 2, k - 2, 'R');
            check_page("R", R, k + 1, -1, 'R');
            check_page("S", S, k + 1, -1, 'S');
        }
        if (me == B) {
            write_page(P, k, 'P');
            dsm_lock_acquire(L_LOCK);
            dsm_lock_release(L_LOCK);
            pthread_mutex_lock(&mu);
            entered_at = __atomic_load_n(&dsm__st.msgs_sent, __ATOMIC_ACQUIRE);
            go = k;
            pthread_cond_broadcast(&cv);
            pthread_mutex_unlock(&mu);
        } else if (me == 0) {
            int got;
            if (MPI_Recv(&got, 1, MPI_INT, B, TAG_DONE, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE) != MPI_SUCCESS || got != k)
                mt_fail("round %d: bad message from rank %d's thread", k, B);
        }
        dsm_barrier();
        if (me == B) {
            pthread_mutex_lock(&mu);
            while (done < k)
                pthread_cond_wait(&cv, &mu);
            pthread_mutex_unlock(&mu);
        }
        if (me == 0) {
            dsm_lock_acquire(S_LOCK);
            check_page("S", S, k, k, 'S');
            dsm_lock_release(S_LOCK);
        }
        check_page("P", P, k, k, 'P');
    }
    dsm_barrier();
    if (me == B)
        pthread_join(th, NULL);
    mt_finalize();
    return 0;
}
