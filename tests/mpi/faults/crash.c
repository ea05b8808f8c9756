/*
 * crash.c - one rank dies while the others are inside libdsm.
 *
 * Usage: crash HOW WHERE
 *   HOW   segv  (a store to a null pointer in user code)
 *         abort (abort())
 *         kill  (kill -9 of itself: nothing runs after it)
 *         exit  (exit(3) without dsm_finalize)
 *         exit0 (exit(0) without dsm_finalize: libdsm must refuse it)
 *         _exit0 (_exit(0): nothing in the process can see it; see
 *                docs/ERRORS.md for what mpiexec does)
 *         wait  (the victim waits in pause(), signals open: for SIGUSR1)
 *         stop  (SIGSTOP: the whole process, communication thread included,
 *                stops answering; only DSM_TIMEOUT can end the job)
 *         hang  (the victim stops answering: it blocks every signal it can
 *                and sleeps, so only DSM_TIMEOUT can end the job)
 *         compute (no fault: the victim computes for CRASH_COMPUTE_S seconds
 *                without touching shared memory, longer than DSM_TIMEOUT,
 *                while the others wait; its communication thread answers,
 *                so nobody may declare it dead: the job ends with 0)
 *   WHERE where the survivors are when the victim dies:
 *         barrier (in dsm_barrier)
 *         fetch   (faulting on a page homed on the victim)
 *         lock    (acquiring a lock the victim holds)
 *         compute (computing for 10 s, off shared memory: no thread of theirs
 *                 waits in libdsm when the victim fails)
 * The victim is the last rank, or CRASH_VICTIM (a rank number, "mid" for
 * the middle one, "last").  Before its fault it prints the time
 * (CLOCK_REALTIME) as "fails at SECONDS", for the checker's bound.  The
 * program never exits 0 (but for compute): a run that ends normally means
 * the crash went unnoticed.  tests/mpi/faults/check-fault.sh
 * checks the message, the exit status, the time and leftover processes.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dsm.h"

static void die(const char *how)
{
    if (!strcmp(how, "segv")) {
        volatile int *p = NULL;
        *p = 1;
    } else if (!strcmp(how, "abort")) {
        abort();
    } else if (!strcmp(how, "kill")) {
        kill(getpid(), SIGKILL);
    } else if (!strcmp(how, "exit")) {
        exit(3);
    } else if (!strcmp(how, "exit0")) {
        exit(0);
    } else if (!strcmp(how, "_exit0")) {
        _exit(0);
    } else if (!strcmp(how, "wait")) {
        for (;;)
            pause();
    } else if (!strcmp(how, "stop")) {
        kill(getpid(), SIGSTOP);
    } else if (!strcmp(how, "hang")) {
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, NULL);
        for (;;)
            pause();
    }
    fprintf(stderr, "crash: unknown HOW '%s'\n", how);
    exit(99);
}

/* Compute for s seconds without touching shared memory. */
static void busy(double s)
{
    struct timespec t0, t;
    volatile unsigned long x = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < 1000000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < s);
}

int main(int argc, char **argv)
{
    dsm_init(&argc, &argv);
    /* A fourth argument is ignored: the checker's tag to find leftovers. */
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: crash segv|abort|kill|exit|exit0|_exit0|stop|hang|wait|compute barrier|fetch|lock|compute\n");
        return 99;
    }
    int me = dsm_node_id(), n = dsm_node_count(), victim = n - 1;
    const char *v = getenv("CRASH_VICTIM");
    if (v && !strcmp(v, "mid"))
        victim = n / 2;
    else if (v && strcmp(v, "last"))
        victim = atoi(v);
    if (victim < 0 || victim >= n) {
        fprintf(stderr, "crash: CRASH_VICTIM=%s: no such rank in %d\n", v, n);
        return 99;
    }
    const int compute = !strcmp(argv[1], "compute");
    size_t ps = dsm_page_size();
    /* One page homed on the victim. */
    int *page = dsm_malloc_home(ps, DSM_HOME_NODE, victim);
    const char *where = argv[2];

    if (me == victim && !strcmp(where, "lock"))
        dsm_lock_acquire(1);
    dsm_barrier();
    if (me == victim) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        printf("crash[rank %d]: pid %d fails at %ld.%09ld\n", me, (int)getpid(),
               (long)now.tv_sec, now.tv_nsec);
        fflush(stdout);
        if (compute) {
            /* Busy, off shared memory, with the lock held for "lock". */
            busy(atof(getenv("CRASH_COMPUTE_S") ? getenv("CRASH_COMPUTE_S") : "5"));
            if (!strcmp(where, "lock"))
                dsm_lock_release(1);
        } else {
            die(argv[1]);
        }
    }
    /* Let the victim die first (for "fetch": before it served the page). */
    struct timespec ts = { 0, 300 * 1000000L };
    nanosleep(&ts, NULL);
    if (!strcmp(where, "compute"))
        busy(10);
    if (!strcmp(where, "barrier"))
        dsm_barrier();
    else if (!strcmp(where, "fetch"))
        printf("crash[rank %d]: read %d\n", me, page[me]);
    else if (!strcmp(where, "lock"))
        dsm_lock_acquire(1);
    if (compute && !strcmp(where, "lock"))
        dsm_lock_release(1);
    dsm_barrier();
    if (compute) {
        printf("crash[rank %d]: all ranks alive after the victim's computation\n", me);
        dsm_finalize();
        return 0;
    }
    fprintf(stderr, "crash[rank %d]: FAIL: still running after the victim died\n", me);
    dsm_finalize();
    return 0;
}
