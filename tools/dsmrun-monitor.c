/*
 * dsmrun-monitor.c - runs one rank of a job and says how it ended if a
 * signal ended it: "dsmrun: rank 1 (pid 4242 on node7) was killed by signal
 * 9 (SIGKILL)".
 *
 * dsmrun starts it as the process mpiexec launches (dsmrun(1)); it forks the
 * rank's command and waits.  SIGKILL leaves a rank no last word and mpiexec
 * names only a pid (not always the victim's), so without this line a user
 * could not tell which rank died.  The signals a launcher sends a rank
 * (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT) are passed
 * on to it; if this process is killed, the rank gets SIGKILL too
 * (PR_SET_PDEATHSIG), so nothing is left behind.  It ends as the rank ended:
 * the same exit status, or the same signal.
 *
 * Usage: dsmrun-monitor COMMAND [ARGS...]   (the rank: PMI_RANK, PMI_ID or
 * SLURM_PROCID).  One thread; the handlers only forward signals.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t child;
static volatile sig_atomic_t forwarded;     /* the last signal passed on */

static void forward(int sig)
{
    if (child > 0) {
        forwarded = sig;
        kill(child, sig);
    }
}

static const char *rank_name(void)
{
    static const char *vars[] = { "PMI_RANK", "PMI_ID", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return v;
    }
    return "?";
}

int main(int argc, char **argv)
{
    static const int passed[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT };
    pid_t me = getpid();

    if (argc < 2) {
        fprintf(stderr, "usage: dsmrun-monitor COMMAND [ARGS...] (started by dsmrun, see "
                "dsmrun(1))\n");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++)
        sigaction(passed[i], &sa, NULL);

    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "dsmrun: rank %s: cannot start %s: fork: %s\n", rank_name(),
                argv[1], strerror(errno));
        return 127;
    }
    if (pid == 0) {
        for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++)
            signal(passed[i], SIG_DFL);
        /* Killed with this process (mpiexec's clean-up kills what it
         * started); if it is already gone, go too. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != me)
            _exit(137);
        execvp(argv[1], argv + 1);
        fprintf(stderr, "dsmrun: rank %s: cannot start %s: %s\n", rank_name(), argv[1],
                strerror(errno));
        _exit(127);
    }
    child = pid;

    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "dsmrun: rank %s: waitpid: %s\n", rank_name(), strerror(errno));
            return 1;
        }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    int sig = WTERMSIG(status);
    if (sig != forwarded) {
        /* Its own death (a crash, or a kill from outside the launcher):
         * say which rank, before mpiexec's clean-up tears the job down. */
        char host[64] = "?";
        gethostname(host, sizeof host - 1);
        fprintf(stderr, "dsmrun: rank %s (pid %d on %s) was killed by signal %d (SIG%s)%s; "
                "the job stops\n", rank_name(), (int)pid, host, sig, sigabbrev_np(sig)
                ? sigabbrev_np(sig) : "?", WCOREDUMP(status) ? ", core dumped" : "");
        fflush(stderr);
        /* mpiexec's proxy forwards stderr; give the line time to pass
         * before our own end makes it tear the job down. */
        struct timespec ts = { 0, 200 * 1000000L };
        nanosleep(&ts, NULL);
    }
    /* End the same way, so that mpiexec reports the same signal. */
    signal(sig, SIG_DFL);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    prctl(PR_SET_DUMPABLE, 0);      /* no second core file */
    kill(getpid(), sig);
    return 128 + sig;
}
