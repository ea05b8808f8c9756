/*
 * applib.c - memory a library allocates for the program, used by the team.
 *
 * libapplib.so (applib_lib.c), a library this program links with, builds a
 * table with its own malloc, calloc and strdup and puts a pointer to one of
 * its functions in it, as libjpeg does with its image buffers.  The initial
 * thread builds a table of 100,000 values; every thread calls the table's
 * function on its share of a static loop and reads its name; the sum is
 * checked against the sequential one.  Then each thread builds a table of
 * its own inside the region, and the initial thread reads them all after
 * the join and frees them.  Under the shim, a table the library had
 * allocated privately on rank 0 would crash the other ranks.
 *
 * Then the library's global variables: the initial thread sets a level in
 * the library, every thread reads it in a region and adds to a total in
 * the library's globals through applib_add, under the library's own
 * pthread mutexes (a static one, and a recursive one it took from malloc;
 * half the calls by pthread_mutex_trylock); the initial thread checks the
 * total after the join.  With the libraries' globals private to each rank,
 * the other ranks read level 0 and add to totals of their own; with the
 * mutexes left to the C library, two ranks hold one at once, or a rank
 * sleeps on a futex no one on its rank wakes.
 *
 * Last, a count per thread under a key the library makes with pthread_once
 * (as gnulib does in GNU gettext), first called by the initial thread: the
 * once is done for every rank, but only rank 0's process had the key, and
 * the other ranks' pthread_setspecific failed (the library aborts).
 */
#define OT_NAME "applib"
#include <string.h>

#include "applib_lib.h"
#include "omptest.h"

#define N 100000
#define M 600

static struct applib_table *mine[OT_MAX_THREADS];

int main(void)
{
    int n = ot_team_size();
    struct applib_table *t = applib_new(N, 0.5, "the initial thread's table");
    double sum = 0, want = 0;
    long badname = 0;

    if (n > OT_MAX_THREADS) {
        printf("%s: skip: team of %d, at most %d\n", OT_NAME, n, OT_MAX_THREADS);
        return 77;
    }
    if (!t) {
        fprintf(stderr, "%s: FAIL: applib_new failed\n", OT_NAME);
        return 1;
    }
    ot_print("threads=%d", n);
    for (long i = 0; i < N; i++)
        want += t->value_at(t, i);

#pragma omp parallel reduction(+:sum, badname)
    {
        int me = omp_get_thread_num();
        char name[64];
#pragma omp for schedule(static)
        for (long i = 0; i < N; i++)
            sum += t->value_at(t, i);
        if (strcmp(t->name, "the initial thread's table") != 0)
            badname++;
        snprintf(name, sizeof name, "table of thread %d", me);
        mine[me] = applib_new(1000 + me, (double)me, name);
    }
    OT_CHECK(sum == want, "sum over the library's table: %.1f, expected %.1f", sum, want);
    OT_CHECK(badname == 0, "%ld threads read the table's name wrong", badname);
    ot_print("sum=%.1f", sum);

    for (int k = 0; k < n; k++) {
        char name[64];
        snprintf(name, sizeof name, "table of thread %d", k);
        OT_CHECK(mine[k] && mine[k]->n == 1000 + k && !strcmp(mine[k]->name, name) &&
                 mine[k]->value_at(mine[k], 999) == 999.0 * k,
                 "thread %d's table reads wrong after the join", k);
        applib_free(mine[k]);
    }
    applib_free(t);

    long want_total = 0, badlevel = 0;
    for (long i = 0; i < M; i++)
        want_total += 1 + i % 3;
    applib_set_level(42);
#pragma omp parallel reduction(+:badlevel)
    {
        if (applib_level() != 42)
            badlevel++;
#pragma omp for schedule(static)
        for (long i = 0; i < M; i++)
            applib_add(1 + i % 3, (int)(i % 2));
    }
    OT_CHECK(badlevel == 0, "%ld threads read the library's level wrong", badlevel);
    OT_CHECK(applib_total() == want_total, "the library's total is %ld, expected %ld",
             applib_total(), want_total);
    ot_print("total=%ld", applib_total());

    /* The initial thread first: the key exists in its process only, and the
     * library's once says done for everyone. */
    long badcount = 0;
    OT_CHECK(applib_count() == 1, "the initial thread's first count is not 1");
#pragma omp parallel reduction(+:badcount)
    {
        long want = omp_get_thread_num() == 0 ? 2 : 1;
        for (int k = 0; k < 50; k++, want++)
            if (applib_count() != want)
                badcount++;
    }
    OT_CHECK(badcount == 0, "%ld per-thread counts under the library's key were wrong",
             badcount);
    OT_CHECK(applib_key_inits() == 1, "the library made its key %d times, expected once",
             applib_key_inits());
    ot_print("counts under the library's key: right");
    return ot_finish();
}
