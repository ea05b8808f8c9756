/*
 * lock_handoff.c - a simple lock unset by a thread other than the one that
 * set it, as libgomp allows and as SoX's readers-writer lock (libsox,
 * effects_i_dsp.c) does: the first reader in sets the writers' lock, the
 * last reader out unsets it.
 *
 * First a plain hand-off: thread 0 sets a lock, the last thread unsets it,
 * and every thread can then set and unset it in turn.  Then a
 * readers-writer lock made of three simple locks (a counter's lock, the
 * writers' lock, and a lock for readers' order), used for ROUNDS rounds: in
 * each, thread 0 enters as reader first and leaves first, so that the last
 * reader out (and the one that unsets the writers' lock) is another thread;
 * then one thread (a different one each round) writes a table of 64 longs
 * under the writers' lock; every reader checks that the table it reads is
 * whole (all entries equal).  On the shim, with one thread per rank, each
 * hand-off is from one rank to another.
 */
#define OT_NAME "lock_handoff"
#include "omptest.h"

#define ROUNDS 6
#define TABLE 64

static omp_lock_t handoff;
static omp_lock_t count_lock, write_lock, order_lock;
static int readers;
static long table[TABLE];

static void become_reader(void)
{
    omp_set_lock(&order_lock);
    omp_set_lock(&count_lock);
    if (++readers == 1)
        omp_set_lock(&write_lock);      /* the first reader in */
    omp_unset_lock(&count_lock);
    omp_unset_lock(&order_lock);
}

static void cease_reading(void)
{
    omp_set_lock(&count_lock);
    if (--readers == 0)
        omp_unset_lock(&write_lock);    /* the last reader out, maybe another thread */
    omp_unset_lock(&count_lock);
}

static int table_whole(long *version)
{
    int i;
    for (i = 1; i < TABLE; i++)
        if (table[i] != table[0])
            return 0;
    *version = table[0];
    return 1;
}

int main(void)
{
    int n = ot_team_size();
    long handoffs = 0, turns = 0, whole = 0, reads = 0, last_version = -1;

    omp_init_lock(&handoff);
    omp_init_lock(&count_lock);
    omp_init_lock(&write_lock);
    omp_init_lock(&order_lock);
    ot_print("threads=%d", n);

#pragma omp parallel reduction(+:turns, whole, reads)
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads(), r, t;
        long v;

        /* A plain hand-off. */
        if (me == 0)
            omp_set_lock(&handoff);
#pragma omp barrier
        if (me == nt - 1) {
            omp_unset_lock(&handoff);
            handoffs++;
        }
#pragma omp barrier
        for (t = 0; t < nt; t++) {
            if (t == me) {
                omp_set_lock(&handoff);
                turns++;
                omp_unset_lock(&handoff);
            }
#pragma omp barrier
        }

        for (r = 0; r < ROUNDS; r++) {
            /* Thread 0 in first ... */
            if (me == 0)
                become_reader();
#pragma omp barrier
            if (me != 0)
                become_reader();
#pragma omp barrier
            reads++;
            if (table_whole(&v))
                whole++;
            else
                ot_error("round %d: thread %d read a torn table", r, me);
#pragma omp barrier
            /* ... and out first: another thread unsets the writers' lock. */
            if (me == 0)
                cease_reading();
#pragma omp barrier
            if (me != 0)
                cease_reading();
#pragma omp barrier
            if (me == r % nt) {
                int i;
                omp_set_lock(&write_lock);
                OT_CHECK(readers == 0, "round %d: a writer with %d readers", r, readers);
                for (i = 0; i < TABLE; i++)
                    table[i] = r + 1;
                omp_unset_lock(&write_lock);
            }
#pragma omp barrier
        }
#pragma omp single
        {
            become_reader();
            if (table_whole(&last_version))
                cease_reading();
        }
    }

    omp_destroy_lock(&handoff);
    omp_destroy_lock(&count_lock);
    omp_destroy_lock(&write_lock);
    omp_destroy_lock(&order_lock);

    OT_CHECK(handoffs == 1, "hand-offs %ld, expected 1", handoffs);
    OT_CHECK(turns == n, "turns after the hand-off %ld, expected %d", turns, n);
    OT_CHECK(reads == (long)ROUNDS * n && whole == reads, "%ld of %ld reads whole, "
             "expected %ld", whole, reads, (long)ROUNDS * n);
    OT_CHECK(last_version == ROUNDS, "table version %ld at the end, expected %d",
             last_version, ROUNDS);
    OT_CHECK(readers == 0, "%d readers at the end", readers);
    ot_print("hand-offs=%ld turns=%ld reads=%ld whole=%ld version=%ld", handoffs,
             turns, reads, whole, last_version);
    return ot_finish();
}
