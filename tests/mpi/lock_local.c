/*
 * lock_local.c - locks that the acquiring node manages itself (lock id with
 * id % nodes == rank), which lock.c grants without a message.
 *
 *   1. own lock: each rank increments its counter K times under lock
 *      `rank` (it manages it): every acquire must be counted in the
 *      statistics' locks_local, and the counter must read K at each step.
 *   2. hand-over: ranks 0 and N-1 take turns (ordered by MPI messages
 *      sent after each release) incrementing a data word homed at N-1 (so
 *      rank 0 works on a copy) under lock 0, which rank 0 manages: its
 *      acquires find the lock free and are local, and each must bring rank
 *      N-1's last write (the grant's notices drop rank 0's stale copy).
 *      Each turn checks the word against the turns taken so far.
 *   3. try: while rank N-1 holds lock 0 (acquired remotely), rank 0's try
 *      of it must be refused; after the release, granted.  While rank 0
 *      holds its own lock 0, rank N-1's try must be refused.
 *   4. hand-off: rank N-1 releases (the hand-off a runtime's unlock of
 *      another thread's lock makes) lock 0 that rank 0 acquired locally;
 *      then rank 0 acquires it again, which must not wait forever.
 *   5. contention: every rank increments one counter under lock 0 K times;
 *      rank 0's acquires are local, queued behind remote holders or not.
 *      After a barrier the counter must be N*K.
 *
 * Linked with libdsm's internals (dsm__lock_try,
 * dsm__lock_release_handoff).  Run with 2, 3 and 4 ranks, every transport.
 * MPITEST_ITERS overrides K.
 */
#include "mpitest.h"

int dsm__lock_try(int id, const char *what);
void dsm__lock_release_handoff(int id, const char *what);

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    const long k = mt_param("MPITEST_ITERS", 200);
    const int n = dsm_node_count(), me = dsm_node_id(), last = n - 1;
    const size_t ps = dsm_page_size();
    struct dsm_stats s0, s1;

    volatile uint64_t *own = mt_malloc_home(ps * (size_t)n, DSM_HOME_BLOCK, 0);
    volatile uint64_t *datapage = mt_malloc_home(ps, DSM_HOME_NODE, last);
    volatile uint64_t *total = mt_malloc_home(ps, DSM_HOME_NODE, n > 2 ? 1 : 0);
    volatile uint64_t *data = datapage;
    mt_note("%d ranks, %ld rounds per phase", n, k);

    /* 1. own lock */
    volatile uint64_t *mine = own + (size_t)((me + 1) % n) * ps / sizeof *own;
    dsm_stats_get(&s0);
    for (long i = 0; i < k; i++) {
        dsm_lock_acquire(me);
        if (*mine != (uint64_t)i)
            mt_fail("own lock %d, round %ld: counter is %" PRIu64, me, i, *mine);
        *mine = *mine + 1;
        dsm_lock_release(me);
    }
    dsm_stats_get(&s1);
    if (s1.locks_local - s0.locks_local != (uint64_t)k ||
        s1.lock_acquires - s0.lock_acquires != (uint64_t)k)
        mt_fail("own lock %d: %ld acquires of a free lock this rank manages, but the "
                "statistics count %" PRIu64 " acquires, %" PRIu64 " of them local",
                me, k, s1.lock_acquires - s0.lock_acquires, s1.locks_local - s0.locks_local);
    dsm_barrier();
    for (int r = 0; r < n; r++)
        mt_expect_u64("own lock counter",
                      (const uint64_t *)(own + (size_t)((r + 1) % n) * ps / sizeof *own),
                      (uint64_t)k);
    mt_check_point("own locks");

    /* 2. hand-over between rank 0 (local manager of lock 0) and rank N-1,
     * their turns ordered by MPI messages sent after each release: rank 0
     * acquires when lock 0 is free again, and its local grant must bring
     * rank N-1's writes (rank 0 holds a copy of the page from its own turn). */
    if (me == 0 || me == last) {
        const int peer = me == 0 ? last : 0;
        int token = 0;
        for (long i = 0; i < k; i++) {
            if (me == last)
                MPI_Recv(&token, 1, MPI_INT, peer, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            dsm_lock_acquire(0);
            /* Before rank 0's turn i both have had i turns; before rank
             * N-1's, rank 0 has had one more. */
            uint64_t want = 2 * (uint64_t)i + (uint64_t)(me != 0);
            if (*data != want)
                mt_fail("hand-over round %ld on rank %d: data is %" PRIu64 ", expected %"
                        PRIu64 " (the grant of lock 0 did not bring rank %d's release)",
                        i, me, *data, want, peer);
            *data = want + 1;
            dsm_lock_release(0);
            MPI_Send(&token, 1, MPI_INT, peer, 77, MPI_COMM_WORLD);
            if (me == 0)
                MPI_Recv(&token, 1, MPI_INT, peer, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    dsm_barrier();
    mt_expect_u64("hand-over data", (const uint64_t *)data, 2 * (uint64_t)k);
    mt_check_point("hand-over");

    /* 3. try: refused while the other holds it */
    if (me == last)
        dsm_lock_acquire(0);
    dsm_barrier();
    if (me == 0 && n > 1 && dsm__lock_try(0, "lock_local try"))
        mt_fail("try of lock 0 granted here while rank %d holds it", last);
    dsm_barrier();
    if (me == last)
        dsm_lock_release(0);
    dsm_barrier();
    if (me == 0) {
        if (!dsm__lock_try(0, "lock_local try"))
            mt_fail("try of lock 0 refused here, though nobody holds it");
    }
    dsm_barrier();
    if (me == last && n > 1 && dsm__lock_try(0, "lock_local try"))
        mt_fail("try of lock 0 granted to rank %d while rank 0 holds it", me);
    dsm_barrier();
    if (me == 0)
        dsm_lock_release(0);
    dsm_barrier();

    /* 4. hand-off of a locally granted lock */
    if (me == 0)
        dsm_lock_acquire(0);
    dsm_barrier();
    if (me == last)
        dsm__lock_release_handoff(0, "lock_local hand-off");
    dsm_barrier();
    if (me == 0) {
        if (!dsm__lock_try(0, "lock_local try"))
            mt_fail("lock 0 still held after rank %d released it for rank 0", last);
        dsm_lock_release(0);
    }
    dsm_barrier();

    /* 5. contention on lock 0 */
    for (long i = 0; i < k; i++) {
        dsm_lock_acquire(0);
        *total = *total + 1;
        dsm_lock_release(0);
    }
    dsm_barrier();
    mt_expect_u64("lock 0 counter", (const uint64_t *)total, (uint64_t)n * (uint64_t)k);
    mt_check_point("contention");

    dsm_barrier();
    dsm_free((void *)total);
    dsm_free((void *)datapage);
    dsm_free((void *)own);
    mt_finalize();
    return 0;
}
