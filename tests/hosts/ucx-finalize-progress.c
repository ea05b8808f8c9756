/* ucx-finalize-progress.c - an LD_PRELOAD library for `make check-hosts`
 * only: keeps UCX progressing while MPI_Finalize waits in its PMI barrier,
 * so that MPICH 4.0.2 over UCX TCP does not deadlock in MPI_Finalize.
 *
 * The hang (tests/hosts/run-hosts.sh, about 1 run in 3 of a plain MPI
 * program across the namespace hosts, with or without libdsm): MPICH
 * 4.0.2's ch4:ucx MPI_Finalize first closes every UCX endpoint
 * (ucp_disconnect_nb) and calls ucp_worker_progress until the closes have
 * completed, then enters a PMI barrier (a blocking read from hydra), and
 * only after that destroys the worker.  Over TCP an endpoint close needs
 * an answer from the peer.  A rank whose closes completed first sits in
 * the PMI barrier and no longer progresses UCX, so a peer still closing
 * its endpoint to it waits for an answer that never comes, and never
 * reaches the barrier: every rank hangs in MPI_Finalize (stacks: ranks in
 * ucp_worker_progress, one in read() under PMPI_Finalize).  MPICH fixed
 * it in pull request pmodels/mpich#6596 ("ch4/ucx: remove MPIR_pmi_barrier
 * in finalize", July 2023), after 4.0.2; Open MPI met the same pattern
 * with PMIx and answered it with a progress thread during the fence
 * (open-mpi/ompi#5307).  This library does the same from outside MPICH.
 *
 * How: it interposes three functions.
 *   ucp_worker_create   asks for UCS_THREAD_MODE_MULTI (MPICH asks for
 *                       SERIALIZED), so that a second thread may call
 *                       ucp_worker_progress while MPICH's own thread uses
 *                       the worker; UCX then locks the worker itself.  A
 *                       worker that does not end up MULTI (a UCX built
 *                       without thread support) is left alone.
 *   MPI_Finalize        (through PMPI_Finalize) starts a helper thread that
 *                       calls ucp_worker_progress on the MULTI workers until
 *                       they are destroyed, then calls PMPI_Finalize.
 *   ucp_worker_destroy  stops and joins the helper before the worker goes,
 *                       so the helper never touches a destroyed worker.
 * The helper never calls MPI: MPI calls that overlap MPI_Finalize are
 * erroneous at every thread level (and MPI_COMM_SELF is freed early in
 * MPICH's finalize), so it works the same whether the program got
 * MPI_THREAD_SINGLE or MPI_THREAD_MULTIPLE; what makes the second thread
 * legal is the worker's UCX thread mode, which is checked with
 * ucp_worker_query.  With another MPI (no ucp_worker_create) or a worker
 * that is not MULTI, MPI_Finalize is a plain call to PMPI_Finalize.
 *
 * It is not part of libdsm and is not installed: only run-hosts.sh
 * preloads it (LD_PRELOAD in the mpiexec wrapper), because the hang needs
 * UCX over TCP between hosts; on one host MPICH uses shared memory.
 * DSMHOSTS_FINALIZE_DEBUG=1 prints one line per rank when the helper
 * starts and stops.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <ucp/api/ucp.h>

#define MAX_WORKERS 64

typedef ucs_status_t (*worker_create_fn)(ucp_context_h, const ucp_worker_params_t *,
                                         ucp_worker_h *);
typedef void (*worker_destroy_fn)(ucp_worker_h);
typedef unsigned (*worker_progress_fn)(ucp_worker_h);
typedef ucs_status_t (*worker_query_fn)(ucp_worker_h, ucp_worker_attr_t *);
typedef int (*finalize_fn)(void);

/* The workers that are MULTI; written by the thread that creates or
 * destroys a worker while the helper is not running (the lock orders the
 * writes before the helper's start). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ucp_worker_h workers[MAX_WORKERS];
static int nworkers;
static pthread_t helper;
static int helper_running;      /* under lock */
static int stop;                /* written under lock, read by the helper */
static unsigned long rounds;    /* progress calls that did something */

static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "ucx-finalize-progress: %s not found: %s\n", name, dlerror());
        abort();
    }
    return f;
}

static int debug(void)
{
    const char *s = getenv("DSMHOSTS_FINALIZE_DEBUG");
    return s && *s == '1';
}

ucs_status_t ucp_worker_create(ucp_context_h context, const ucp_worker_params_t *params,
                               ucp_worker_h *worker_p)
{
    static worker_create_fn real;
    static worker_query_fn query;
    if (!real) {
        real = (worker_create_fn)next("ucp_worker_create");
        query = (worker_query_fn)next("ucp_worker_query");
    }
    ucp_worker_params_t p = *params;
    p.field_mask |= UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    p.thread_mode = UCS_THREAD_MODE_MULTI;
    ucs_status_t st = real(context, &p, worker_p);
    if (st != UCS_OK)
        return real(context, params, worker_p);   /* as MPICH asked; not tracked */

    ucp_worker_attr_t attr = { .field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE };
    if (query(*worker_p, &attr) != UCS_OK || attr.thread_mode != UCS_THREAD_MODE_MULTI)
        return UCS_OK;          /* no UCX locking: a second thread would race */
    pthread_mutex_lock(&lock);
    if (nworkers < MAX_WORKERS)
        workers[nworkers++] = *worker_p;
    pthread_mutex_unlock(&lock);
    return UCS_OK;
}

static void *progress_loop(void *arg)
{
    worker_progress_fn progress = (worker_progress_fn)arg;
    const struct timespec idle = { 0, 100000 };

    /* Answers the peers' endpoint closes while this rank's main thread is
     * blocked in the PMI barrier.  When nothing happened, it waits 0.1 ms
     * instead of spinning: the main thread may be progressing the same
     * worker (its own closes) on a loaded machine, and the peers only need
     * an answer within a round trip, not at once. */
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        unsigned did = 0;
        for (int i = 0; i < nworkers; i++)
            did += progress(workers[i]);
        if (did)
            rounds++;
        else
            nanosleep(&idle, NULL);
    }
    return NULL;
}

/* Stops the helper, if it runs, and waits for it; under lock. */
static void stop_helper(void)
{
    if (!helper_running)
        return;
    /* Release: nothing to publish, but it pairs with the helper's acquire
     * so that it sees the flag on its next round. */
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(helper, NULL);
    helper_running = 0;
    if (debug())
        fprintf(stderr, "ucx-finalize-progress[%d]: helper stopped after %lu busy rounds\n",
                (int)getpid(), rounds);
}

void ucp_worker_destroy(ucp_worker_h worker)
{
    static worker_destroy_fn real;
    if (!real)
        real = (worker_destroy_fn)next("ucp_worker_destroy");
    pthread_mutex_lock(&lock);
    stop_helper();
    for (int i = 0; i < nworkers; i++)
        if (workers[i] == worker) {
            workers[i] = workers[--nworkers];
            break;
        }
    pthread_mutex_unlock(&lock);
    real(worker);
}

/* PMPI_Finalize, and every UCX function, is looked up with dlsym rather
 * than linked: the library is preloaded into every process of the hosts
 * runs (shells, mpiexec, setarch), some of them with LD_BIND_NOW=1
 * (tools/dsmrun), where an undefined symbol would stop the program from
 * starting.  Only an MPI program ever calls these wrappers. */
int MPI_Finalize(void)
{
    finalize_fn real = (finalize_fn)next("PMPI_Finalize");
    pthread_mutex_lock(&lock);
    if (nworkers > 0 && !helper_running) {
        worker_progress_fn progress = (worker_progress_fn)next("ucp_worker_progress");
        sigset_t all, old;
        /* The helper takes no signal: the program's handlers (libdsm's
         * SIGTERM report, for one) expect to run on the program's threads. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        stop = 0;
        helper_running = pthread_create(&helper, NULL, progress_loop, (void *)progress) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (debug())
            fprintf(stderr, "ucx-finalize-progress[%d]: %s for %d worker(s)\n", (int)getpid(),
                    helper_running ? "helper started" : "could not start the helper", nworkers);
    }
    pthread_mutex_unlock(&lock);

    int rc = real();

    pthread_mutex_lock(&lock);
    stop_helper();              /* normally done already by ucp_worker_destroy */
    pthread_mutex_unlock(&lock);
    return rc;
}
