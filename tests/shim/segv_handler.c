/*
 * segv_handler.c - a program with its own SIGSEGV handler, as crash
 * reporters install one (IQ-TREE does): installed with signal() and then
 * sigaction(SA_SIGINFO), it must not take the DSM's page faults (regions
 * read and write shared arrays afterwards on every rank), sigaction must
 * report it back, and a real bad access on rank 0 must reach it, with the
 * address.  The handler exits with status 42.
 * Before that, its own SIGILL handler (the shim's handler traps the
 * program's flush instructions in front of it) must get a real illegal
 * instruction of the program, after regions that flush, and sigaction must
 * report it back.
 */
#define _GNU_SOURCE
#include <omp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 200000

static double a[N];
static volatile int *bad = (int *)16;

static void plain_handler(int sig)
{
    (void)sig;
    _exit(41);                  /* replaced below: never runs */
}

static void info_handler(int sig, siginfo_t *si, void *uc)
{
    char line[128];
    (void)uc;
    int n = snprintf(line, sizeof line, "segv_handler: caught signal %d at %p\n", sig,
                     si ? si->si_addr : NULL);
    if (write(1, line, (size_t)n) < 0)
        _exit(43);
    _exit(42);
}

static sigjmp_buf ill_jump;

static void ill_handler(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    siglongjmp(ill_jump, sig);
}

int main(void)
{
    struct sigaction sa, back;
    double sum = 0;

    if (signal(SIGSEGV, plain_handler) == SIG_ERR) {
        printf("segv_handler: FAIL: signal() failed\n");
        return 1;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = info_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &back) != 0 || back.sa_handler != plain_handler) {
        printf("segv_handler: FAIL: sigaction did not give back the signal() handler\n");
        return 1;
    }
    if (sigaction(SIGSEGV, NULL, &back) != 0 || !(back.sa_flags & SA_SIGINFO) ||
        back.sa_sigaction != info_handler) {
        printf("segv_handler: FAIL: sigaction did not report the handler installed\n");
        return 1;
    }
#pragma omp parallel for
    for (long i = 0; i < N; i++)
        a[i] = (double)i;
#pragma omp parallel for reduction(+:sum)
    for (long i = 0; i < N; i++)
        sum += a[(i * 7919) % N];
    if (sum != (double)N * (N - 1) / 2) {
        printf("segv_handler: FAIL: sum %.1f\n", sum);
        return 1;
    }
    printf("segv_handler: regions done, sum %.1f\n", sum);

    /* A flag handed through flushes, then a real illegal instruction. */
    int flag = 0;
#pragma omp parallel shared(flag)
    {
        if (omp_get_thread_num() == 0) {
#pragma omp flush
            flag = 1;
#pragma omp flush
        }
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = ill_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGILL, &sa, NULL) != 0 || sigaction(SIGILL, NULL, &back) != 0 ||
        !(back.sa_flags & SA_SIGINFO) || back.sa_sigaction != ill_handler) {
        printf("segv_handler: FAIL: sigaction did not report the SIGILL handler\n");
        return 1;
    }
    int got = sigsetjmp(ill_jump, 1);
    if (got == 0)
        __asm__ volatile("ud2");
    printf("segv_handler: caught signal %d (SIGILL), flag %d\n", got, flag);
    fflush(stdout);
    return *bad;                /* SIGSEGV at 0x10: the handler exits 42 */
}
