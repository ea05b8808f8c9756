/*
 * fault_victim.c - under the OpenMP shim, one rank stops (SIGSTOP) or dies
 * (SIGKILL) while the others are in an OpenMP fork or join; the job must
 * end promptly naming it (tests/mpi/faults/check-fault.sh, cases *_fork and
 * *_join).  Not one of tests/omp's comparisons with libgomp: it never ends
 * normally.
 *
 * Usage (one thread per rank, so that thread t runs on rank t):
 *   dsmrun -n RANKS -t 1 fault_victim stop|kill fork|join [TAG]
 * The victim is the last rank, or CRASH_VICTIM (a rank number, "mid",
 * "last"), as in tests/mpi/faults/crash.c; before its fault it prints
 * "fails at SECONDS" (CLOCK_REALTIME).
 *   fork: in the first parallel region the victim starts a shell that
 *         waits 0.3 s and then stops or kills the victim's process (as a
 *         user with kill would); the master computes sequentially for
 *         0.8 s, then starts the second region.  The fault comes while the
 *         workers wait for the fork and rank 0 computes.  A worker victim
 *         had entered the fork's barrier before it stopped, so the fork
 *         completes and the others find it silent in the second region's
 *         join; with rank 0 the victim, they find it silent in the fork.
 *   join: the victim faults inside the region, 0.3 s in; the others wait
 *         at its end.
 */
#include <omp.h>
#include <spawn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int how_sig;

static void fails_now(void)
{
    struct timespec now;
    char line[96];
    clock_gettime(CLOCK_REALTIME, &now);
    int n = snprintf(line, sizeof line, "fault_victim: pid %d fails at %ld.%09ld\n",
                     (int)getpid(), (long)now.tv_sec, now.tv_nsec);
    if (write(1, line, (size_t)n) < 0) { /* the checker then misses the time */ }
}

extern char **environ;

/* A shell that faults this process 0.3 s from now, printing the time. */
static void fault_later(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "sleep 0.3; echo \"fault_victim: pid %d fails at $(date "
             "+%%s.%%N)\"; kill -%s %d", (int)getpid(), how_sig == SIGSTOP ? "STOP" : "KILL",
             (int)getpid());
    char *argv[] = { "sh", "-c", cmd, NULL };
    pid_t pid;
    if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) != 0) {
        fprintf(stderr, "fault_victim: cannot start /bin/sh\n");
        exit(99);
    }
}

static void busy(double s)
{
    double t0 = omp_get_wtime();
    volatile unsigned long x = 0;
    while (omp_get_wtime() - t0 < s)
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "stop") && strcmp(argv[1], "kill")) ||
        (strcmp(argv[2], "fork") && strcmp(argv[2], "join"))) {
        fprintf(stderr, "usage: fault_victim stop|kill fork|join [TAG]\n");
        return 99;
    }
    how_sig = !strcmp(argv[1], "stop") ? SIGSTOP : SIGKILL;
    int join = !strcmp(argv[2], "join");
    int n = omp_get_max_threads(), victim = n - 1;
    const char *v = getenv("CRASH_VICTIM");
    if (v && !strcmp(v, "mid"))
        victim = n / 2;
    else if (v && strcmp(v, "last"))
        victim = atoi(v);
    if (n < 2 || victim < 0 || victim >= n) {
        fprintf(stderr, "fault_victim: victim %d of a team of %d: run with dsmrun -n 2 "
                "or more, -t 1\n", victim, n);
        return 99;
    }
    #pragma omp parallel num_threads(n)
    {
        if (omp_get_thread_num() == victim) {
            if (join) {
                busy(0.3);
                fails_now();
                kill(getpid(), how_sig);
            } else {
                fault_later();
            }
        }
    }
    busy(0.8);
    #pragma omp parallel num_threads(n)
    {
        busy(0.01);
    }
    fprintf(stderr, "fault_victim: FAIL: still running after the victim's fault\n");
    return 1;
}
