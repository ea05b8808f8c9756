/*
 * init.c - start-up and shut-down order, and the small public queries.
 *
 * dsm_init: MPI (ours or the caller's, which must give MPI_THREAD_MULTIPLE),
 * configuration from DSM_* variables, agreement of all nodes on it, the
 * host (its ranks and CPUs choose the spin, DSM_SPIN_US), the
 * region at the same address everywhere, page table, allocator, fault
 * handler, and finally the communication thread.  dsm_finalize undoes it
 * after a last barrier.  Both run on one thread of each process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsm_internal.h"

extern char **environ;

/* MPICH builds its datatype engine at the first derived datatype and reads
 * the environment then (getenv).  Under a runtime that puts the program's
 * globals under the DSM (the OpenMP shim), `environ` may be a page this
 * rank has no copy of by the time dsm_bcast builds its receive layout: the
 * fault would be served from inside MPI, which its MPI calls re-enter (a
 * communication thread died so, 13b31a1's message).  Build one now, while
 * the environment is private memory. */
static void warm_datatypes(void)
{
    MPI_Aint at = 0;
    MPI_Datatype t;
    if (MPI_Type_create_hindexed_block(1, 1, &at, MPI_BYTE, &t) == MPI_SUCCESS &&
        MPI_Type_commit(&t) == MPI_SUCCESS)
        MPI_Type_free(&t);
}

struct dsm_global dsm__g = { .state = DSM_STATE_NEW, .rank = -1, .memfd = -1 };

/* The settings every rank must share, compared in one allgather.  Where
 * they differ every rank says the same: the first setting, rank 0's value
 * and the first rank's that differs, as the variable writes them (a
 * transport by its name, a size with its suffix). */
static void agree(void)
{
    const struct dsm_config *c = &dsm__g.cfg;
    static const char *const var[] = {
        "DSM_PAGE_SIZE", "DSM_PAGE_CHUNK", "DSM_HEAP_SIZE", "DSM_BASE",
        "DSM_COMM", "DSM_MAX_LOCKS", "DSM_HOME", "DSM_STATS" };
    enum { NSET = sizeof var / sizeof *var };
    uint64_t mine[NSET] = { c->page_size, c->page_chunk, c->heap_size, c->base,
                            (uint64_t)c->comm, (uint64_t)c->max_locks,
                            (uint64_t)c->home, (uint64_t)c->stats };
    static uint64_t all[DSM_MAX_NODES * NSET];
    char a[64], b[64];

    MPI_Allgather(mine, NSET, MPI_UINT64_T, all, NSET, MPI_UINT64_T, dsm__g.comm);
    for (int i = 0; i < NSET; i++)
        for (int r = 1; r < dsm__g.nodes; r++)
            if (all[r * NSET + i] != all[i])
                dsm__fatal("ranks disagree on %s: rank 0 has %s, rank %d has %s; set the "
                           "same value on every rank (give every rank the same DSM_* "
                           "environment)", var[i],
                           dsm__config_value_text(var[i], all[i], a, sizeof a), r,
                           dsm__config_value_text(var[i], all[r * NSET + i], b, sizeof b));
}

static void must(int rc, const char *what)
{
    if (rc)
        dsm__fatal("%s failed (%s)", what,
                   rc == -DSM_ENOMEM ? "out of memory" : "system error");
}

/* A process that ends with status 0 while libdsm runs skipped
 * dsm_finalize(): the other ranks would wait for it forever (or, under
 * mpiexec, be killed while the job reports success).  A non-zero status is
 * a failure reported elsewhere (MPI_Abort exits through here too). */
static void exit_check(int status, void *arg)
{
    (void)arg;
    if (status == 0 && dsm__g.state == DSM_STATE_RUNNING && !dsm__dying)
        dsm__fatal("the process exits (return from main, or exit(0)) without calling "
                   "dsm_finalize(); every rank must call dsm_finalize() before it ends");
}

int dsm_init(int *argc, char ***argv)
{
    struct dsm_global *g = &dsm__g;
    int inited = 0, provided = 0, ok, all_ok;
    char err[512];

    if (g->state == DSM_STATE_RUNNING)
        dsm__fatal("dsm_init() called twice; call it once per process");
    if (g->state == DSM_STATE_FINALIZED)
        dsm__fatal("dsm_init() called after dsm_finalize(); libdsm cannot be restarted "
                   "in the same process");
    MPI_Initialized(&inited);
    if (!inited) {
        if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
            dsm__fatal("MPI_Init_thread failed; start the program with mpiexec");
        g->own_mpi = 1;
    } else {
        MPI_Query_thread(&provided);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &g->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g->nodes);
    if (g->nodes > DSM_MAX_NODES)
        dsm__fatal("%d ranks, but libdsm supports at most %d nodes", g->nodes, DSM_MAX_NODES);
    MPI_Comm_dup(MPI_COMM_WORLD, &g->comm);
    warm_datatypes();

    g->os_page = (size_t)sysconf(_SC_PAGESIZE);
    if (dsm__config_parse(&g->cfg, environ, g->os_page, dsm__rt_params.env_names,
                          dsm__rt_params.name, err, sizeof err) != 0)
        dsm__fatal("%s", err);
    if (dsm__rt_params.error)
        dsm__fatal("%s", dsm__rt_params.error);
    /* One application thread per rank, unless a runtime said otherwise. */
    if (dsm__rt_params.app_threads > 1)
        g->cfg.threads_per_rank = dsm__rt_params.app_threads;
    /* The runtime's default prefetch, unless DSM_PREFETCH says otherwise. */
    if (!g->cfg.prefetch_set && dsm__rt_params.prefetch != DSM_PREFETCH_NONE)
        g->cfg.prefetch = (enum dsm_prefetch_kind)dsm__rt_params.prefetch;
    /* Every transport has a communication thread next to the application's
     * (and multiple and rma call MPI from any thread with no lock at all),
     * so the level must be MPI_THREAD_MULTIPLE, also when the application
     * initialised MPI itself. */
    if (provided < MPI_THREAD_MULTIPLE)
        dsm__fatal("MPI was initialised with thread level %s, but libdsm (DSM_COMM=%s) "
                   "needs MPI_THREAD_MULTIPLE: call MPI_Init_thread(&argc, &argv, "
                   "MPI_THREAD_MULTIPLE, &provided) instead of MPI_Init, or let dsm_init() "
                   "initialise MPI", provided == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE" :
                   provided == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED" :
                   "MPI_THREAD_SERIALIZED",
                   g->cfg.comm == DSM_COMM_MULTIPLE ? "multiple" :
                   g->cfg.comm == DSM_COMM_RMA ? "rma" :
                   g->cfg.comm == DSM_COMM_DIRECT ? "direct" : "queue");
    agree();
    /* The spins, unless DSM_SPIN_US gives them, from the host (config.c). */
    dsm__host_probe(&g->host);
    g->cfg.spin_us = dsm__spin_us_for(&g->cfg, &g->host);
    g->cfg.comm_spin_us = dsm__comm_spin_us_for(&g->cfg, &g->host);
    /* The barrier tree: each level is a hop, and where ranks outnumber CPUs
     * a hop waits for a core (16 ranks on 2 CPUs, medians of 3: empty
     * barrier 1075 us flat, 1137 us as a tree, with a dirty page 1581 and
     * 1773 us; 4 ranks: within the noise; docs/RESULTS.md); a host with a
     * CPU per rank gets the tree's log2 hops instead of N - 1 messages
     * through node 0.  Every node must use the same shape. */
    int flat = g->cfg.barrier_shape == DSM_BARRIER_FLAT ||
               (g->cfg.barrier_shape == DSM_BARRIER_AUTO && g->host.online_cpus &&
                g->host.ranks * g->cfg.threads_per_rank > g->host.online_cpus);
    MPI_Allreduce(&flat, &g->tree_flat, 1, MPI_INT, MPI_MAX, g->comm);
    must(dsm__watchdog_init(), "setting up failure reports");
    must(dsm__liveness_init(), "setting up the heartbeats");
    on_exit(exit_check, NULL);

    g->page_size = g->cfg.page_size;
    g->page_shift = (unsigned)__builtin_ctzl(g->page_size);
    g->page_chunks = dsm__page_chunks(g->page_size, g->cfg.page_chunk);
    g->chunk_size = g->page_size / g->page_chunks;
    g->npages = g->cfg.heap_size / g->page_size;
    if (g->npages >= DSM_NOTICE_NOCOPY)
        dsm__fatal("DSM_HEAP_SIZE / DSM_PAGE_SIZE = %zu pages: bad value, at most 2^31-1 "
                   "pages; raise DSM_PAGE_SIZE or lower DSM_HEAP_SIZE", g->npages);
    switch (g->cfg.comm) {
    case DSM_COMM_DIRECT:   g->ops = &dsm__comm_direct; break;
    case DSM_COMM_MULTIPLE: g->ops = &dsm__comm_multiple; break;
    case DSM_COMM_RMA:      g->ops = &dsm__comm_rma; break;
    default:                g->ops = &dsm__comm_queue; break;
    }

    ok = dsm__vm_init() == 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, g->comm);
    if (!ok)
        dsm__fatal("cannot map the shared region at %#lx (%zu bytes): the address range "
                   "is in use or too large here; choose another DSM_BASE (e.g. "
                   "DSM_BASE=0x300000000000) or a smaller DSM_HEAP_SIZE",
                   (unsigned long)g->cfg.base, g->cfg.heap_size);
    if (!all_ok)
        dsm__fatal("another rank could not map the shared region at %#lx; see its message",
                   (unsigned long)g->cfg.base);

    must(dsm__pt_init(), "allocating the page table");
    must(dsm__waiter_init(), "allocating waiter slots");
    must(dsm__msg_init(), "allocating the message pool");
    must(dsm__alloc_init(), "initialising the allocator");
    must(dsm__barrier_init(), "initialising the barrier");
    must(dsm__lock_init(), "initialising the locks");
    must(dsm__prefetch_init(), "initialising prefetch");
    dsm__protocol_init();
    dsm__dispatch_init();       /* every message type's handler, before any arrives */
    must(dsm__ordered_init(), "allocating the ordered flush's page holds");
    memset(&dsm__st, 0, sizeof dsm__st);
    g->epoch = 0;
    if (dsm__fault_init() != 0)
        dsm__fatal("cannot install the SIGSEGV handler (libsigsegv does not support "
                   "this platform)");
    g->state = DSM_STATE_RUNNING;
    dsm__trace_init();
    must(dsm__comm_start(), "starting the communication thread");
    MPI_Barrier(g->comm);
    DSM_TRACE_LEAVE(DSM_TR_INIT, 0, -1, 0, 0);
    return 0;
}

/* After every communication thread stopped (the barrier before this):
 * messages still queued for this node are heartbeats another node's
 * communication thread sent before it stopped (every request was answered
 * before the finalize barrier).  Receive and drop them, so that
 * MPI_Finalize finds no unexpected message: UCX prints a warning on stdout
 * for each ("unexpected tag-receive descriptor ... was not matched"), seen
 * in about 1 test run in 300 under load. */
static void drain_stray(MPI_Comm comm)
{
    for (;;) {
        int flag = 0, n = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, DSM_TAG, comm, &flag, &st);
        if (!flag)
            return;
        MPI_Get_count(&st, MPI_BYTE, &n);
        void *b = malloc(n > 0 ? (size_t)n : 1);
        if (!b)
            return;
        MPI_Recv(b, n, MPI_BYTE, st.MPI_SOURCE, DSM_TAG, comm, MPI_STATUS_IGNORE);
        free(b);
    }
}

int dsm_finalize(void)
{
    struct dsm_global *g = &dsm__g;

    DSM_CHECK_RUNNING();
    DSM_TRACE_ENTER(DSM_TR_FINALIZE, 0, -1, 0, 0);
    dsm__barrier_checked(DSM_COLL_FINALIZE, 0, 0, NULL, NULL);
    /* After this barrier no node sends another request: every request is
     * answered before its sender can enter a barrier. */
    dsm__service_stop();
    dsm__comm_stop();
    dsm__trace_fini();
    if (g->keep_mapped)
        dsm__vm_open_all();     /* no more fetches: local contents from now on */
    MPI_Barrier(g->comm);
    drain_stray(g->comm);
    if (g->cfg.stats != DSM_STATS_OFF)
        dsm__stats_print_all(stdout, g->cfg.stats == DSM_STATS_JSON);
    if (g->cfg.check_races && dsm__races_found() > 10)
        fprintf(stderr, "libdsm[rank %d]: DSM_CHECK=races: %lu races found here in "
                "all (the first 10 shown)\n", g->rank, (unsigned long)dsm__races_found());
    g->state = DSM_STATE_FINALIZED;
    dsm__fault_fini();
    dsm__vm_fini();
    dsm__ordered_fini();
    dsm__pt_fini();
    dsm__alloc_fini();
    g->npages = 0;
    MPI_Comm_free(&g->comm);
    if (g->own_mpi)
        dsm__finalize_mpi(g->cfg.timeout_s);
    return 0;
}

int dsm_initialized(void)
{
    return dsm__g.state == DSM_STATE_RUNNING;
}

int dsm_node_id(void)
{
    DSM_CHECK_RUNNING();
    return dsm__g.rank;
}

int dsm_node_count(void)
{
    DSM_CHECK_RUNNING();
    return dsm__g.nodes;
}
