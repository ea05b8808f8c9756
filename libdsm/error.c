/*
 * error.c - the one fatal path.  Where nothing can be returned (the fault
 * handler, the communication thread, misuse of the API) libdsm prints
 * "libdsm[rank N]: what happened, what to do" and ends the whole job, so that
 * a mistake is never a hang or a wrong answer.  Any thread may call it, also
 * from the SIGSEGV handler: it formats on the stack and uses write(2).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dsm_internal.h"

int dsm__dying;

void dsm__fatal(const char *fmt, ...)
{
    char buf[1024];
    int n;
    va_list ap;

    __atomic_store_n(&dsm__dying, 1, __ATOMIC_SEQ_CST);
    if (dsm__g.rank < 0)
        n = snprintf(buf, sizeof buf, "libdsm[rank ?]: ");
    else
        n = snprintf(buf, sizeof buf, "libdsm[rank %d]: ", dsm__g.rank);
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    if (write(2, buf, (size_t)n) < 0) { /* nothing better to do */ }
    dsm__die();
}

__thread int dsm__in_die;

void dsm__die(void)
{
    int init = 0, fin = 0;

    /* MPI_Abort reads the environment (getenv) and runs the exit handlers;
     * under the OpenMP shim `environ` and stdio live in shared memory, and a
     * fault there could wait for a rank that is itself dead, or recurse
     * into a wait that ends the job again (seen: SIGSEGV in getenv on a
     * worker rank).  This thread's faults from here on open the page with
     * what this rank has (fault.c). */
    dsm__in_die = 1;
    __atomic_store_n(&dsm__dying, 1, __ATOMIC_SEQ_CST);
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) {
        /* mpiexec forwards our stderr through a proxy that MPI_Abort tears
         * down; give it a moment to pass the message on first, or the user
         * may see the job die without the reason. */
        struct timespec ts = { 0, 300000000 };
        nanosleep(&ts, NULL);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    _exit(1);
}

void dsm__check_running(const char *func)
{
    if (dsm__g.state == DSM_STATE_NEW)
        dsm__fatal("%s() called before dsm_init(); call dsm_init(&argc, &argv) first", func);
    dsm__fatal("%s() called after dsm_finalize(); shared memory and "
               "synchronisation are gone once dsm_finalize() returns", func);
}
