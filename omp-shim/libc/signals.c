/*
 * signals.c - the program's own SIGSEGV and SIGBUS handlers.
 *
 * libdsm catches SIGSEGV (through libsigsegv) to fetch pages: a program
 * that installs a handler of its own for it (a crash reporter, as IQ-TREE
 * does) would take every page fault of the DSM.  So sigaction and signal,
 * called from the program's code (applibs.c) after start-up for SIGSEGV or
 * SIGBUS, only record the program's action and report the one recorded
 * before; libdsm keeps the signal, and runs the recorded action for a fault
 * that is not one of its own (the foreign_fault hook, dsm_runtime.h), with a siginfo
 * that has the signal and the address, and no ucontext.  Calls from
 * anywhere else (libsigsegv, MPI) and every other signal go to the C
 * library.
 *
 * SIGILL likewise when the shim traps the program's flush instructions
 * (flush_trap.c): its handler runs the program's action for any other
 * SIGILL.
 *
 * The same holds for sigaltstack: the alternate stack is where libdsm's
 * handler runs, and the kernel writes the signal frame there before any
 * handler can make a page valid, so a stack that the program allocates
 * (in shared memory, since its malloc is the DSM's) would kill the
 * process at the first page fault (R on one rank died in Rf_cons, its
 * malloc'd signal stack in the region).  So sigaltstack from the
 * program's code after start-up only records the program's stack when
 * the thread already has one (libdsm's) or the new one is in the region,
 * and reports the one recorded before.
 *
 * Threads: any; the fault hook runs in the signal handler of the thread
 * that faulted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "shim.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static struct sigaction program_act[3];         /* SIGSEGV, SIGBUS, SIGILL */
static pthread_mutex_t act_mu = PTHREAD_MUTEX_INITIALIZER;

static int slot_of(int sig)
{
    return sig == SIGSEGV ? 0 : sig == SIGBUS ? 1 :
           sig == SIGILL && shim_flush_trap_enabled() ? 2 : -1;
}

static sigaction_fn libc_sigaction(void)
{
    SHIM_REAL(sigaction);
    return real_sigaction;
}

/* Run the program's SIGSEGV action for a fault at addr that libdsm does
 * not own (libsigsegv does not say whether it was SIGSEGV or SIGBUS).
 * Async-signal context: no lock (a torn read of the action is the
 * program's own race with its sigaction call). */
static int run_program_handler(void *addr)
{
    struct sigaction a = program_act[0];
    if (!(a.sa_flags & SA_SIGINFO) && (a.sa_handler == SIG_DFL || a.sa_handler == SIG_IGN))
        return 0;
    if (a.sa_flags & SA_RESETHAND)
        program_act[0].sa_handler = SIG_DFL, program_act[0].sa_flags = 0;
    if (a.sa_flags & SA_SIGINFO) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        si.si_signo = SIGSEGV;
        si.si_code = SEGV_MAPERR;
        si.si_addr = addr;
        a.sa_sigaction(SIGSEGV, &si, NULL);
    } else {
        a.sa_handler(SIGSEGV);
    }
    return 1;
}

/* A SIGILL that is not a trapped flush (flush_trap.c): the program's own
 * action, with the real siginfo and context. */
int shim_program_sigill(int sig, siginfo_t *si, void *uc)
{
    struct sigaction a = program_act[2];
    if (!(a.sa_flags & SA_SIGINFO) && (a.sa_handler == SIG_DFL || a.sa_handler == SIG_IGN))
        return 0;
    if (a.sa_flags & SA_RESETHAND)
        program_act[2].sa_handler = SIG_DFL, program_act[2].sa_flags = 0;
    if (a.sa_flags & SA_SIGINFO)
        a.sa_sigaction(sig, si, uc);
    else
        a.sa_handler(sig);
    return 1;
}

void shim_signals_init(struct dsm_runtime_hooks *h)
{
    for (int k = 0; k < 3; k++) {
        memset(&program_act[k], 0, sizeof program_act[k]);
        program_act[k].sa_handler = SIG_DFL;
    }
    h->foreign_fault = run_program_handler;
}

SHIM_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int k = slot_of(sig);
    if (k < 0 || !shim.active || !shim_code_is_program(__builtin_return_address(0)))
        return libc_sigaction()(sig, act, old);
    pthread_mutex_lock(&act_mu);
    if (old)
        *old = program_act[k];
    if (act)
        program_act[k] = *act;
    pthread_mutex_unlock(&act_mu);
    return 0;
}

SHIM_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    int k = slot_of(sig);
    if (k < 0 || !shim.active || !shim_code_is_program(__builtin_return_address(0))) {
        SHIM_REAL(signal);
        return real_signal(sig, handler);
    }
    pthread_mutex_lock(&act_mu);
    /* sa_handler and sa_sigaction share their storage (a union in glibc):
     * either way the previous function comes back. */
    sighandler_t prev = program_act[k].sa_handler;
    memset(&program_act[k], 0, sizeof program_act[k]);
    program_act[k].sa_handler = handler;
    program_act[k].sa_flags = SA_RESTART;
    pthread_mutex_unlock(&act_mu);
    return prev;
}

/* The alternate stack the program asked for on this thread, not installed. */
static __thread stack_t program_ss;
static __thread int program_ss_set;

SHIM_EXPORT int sigaltstack(const stack_t *ss, stack_t *old)
{
    SHIM_REAL(sigaltstack);
    stack_t cur;
    if (!shim.active || !shim_code_is_program(__builtin_return_address(0)) ||
        real_sigaltstack(NULL, &cur) != 0)
        return real_sigaltstack(ss, old);
    int has_own = !(cur.ss_flags & SS_DISABLE);
    int keep = ss && !(ss->ss_flags & SS_DISABLE) && (has_own || dsm_rt_in_region(ss->ss_sp) ||
               dsm_rt_in_region((const char *)ss->ss_sp + ss->ss_size - 1));
    if (!keep && !program_ss_set)
        return real_sigaltstack(ss, old);
    if (ss && ss->ss_size < (size_t)MINSIGSTKSZ && !(ss->ss_flags & SS_DISABLE)) {
        errno = ENOMEM;
        return -1;
    }
    if (old)
        *old = program_ss_set ? program_ss : cur;
    if (ss) {
        program_ss = *ss;
        program_ss_set = 1;
    }
    return 0;
}
