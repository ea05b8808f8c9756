/*
 * fault.c - libsigsegv glue and the fault path.
 *
 * Handler contract (written once, here): the handler runs in the faulting
 * application thread, inside a SIGSEGV handler, for every protection fault
 * in the process.  Faults outside the region, or on pages not allocated, are
 * not ours: return 0 and libsigsegv passes the signal on, so a real segfault
 * crashes as it would without libdsm.  For our pages it may take page locks,
 * the written-list mutex, the message pool mutex and waiter slots (none is
 * ever held while touching shared memory, so the fault cannot have
 * interrupted a holder), send messages, and wait for replies.  It never calls
 * malloc or stdio.  Returning 1 retries the faulting access.
 */
#include <signal.h>
#include <sigsegv.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm_internal.h"

uint32_t dsm__upgrades;

static int handle(size_t p)
{
    struct dsm_global *g = &dsm__g;
    struct dsm_page *pg = &g->pages[p];

    dsm__page_lock(p);
    int home = pg->home == g->rank;
    /* A home maps an untouched page writable at once, unless others may
     * read it unseen (dsm__remote_reads): then it maps it read-only, as if
     * it had served it, so that its first write traps and is noticed. */
    enum dsm_pevent ev = home && pg->state == DSM_P_INVALID && dsm__remote_reads() &&
                         !(pg->flags & DSM_PF_NOTRAP) ? DSM_EV_SERVE : DSM_EV_FAULT;
    struct dsm_ptrans t = dsm__page_transition(pg->state, ev, home);
    if (t.actions & DSM_ACT_SEGV) {
        dsm__page_unlock(p);
        return 0;
    }
    if (t.actions & DSM_ACT_ERROR)
        dsm__fatal("protocol error: fault on page %zu in state %s (home %d)",
                   p, dsm__page_state_name(pg->state), pg->home);
    if (t.actions & DSM_ACT_WAIT) {
        /* Another thread of this node is fetching it: wait for that fetch,
         * then retry the access. */
        uint32_t seen = __atomic_load_n(&g->installs, __ATOMIC_ACQUIRE);
        dsm__page_unlock(p);
        while (__atomic_load_n(&pg->state, __ATOMIC_ACQUIRE) == DSM_P_IN_FLIGHT) {
            dsm__pt_install_wait(seen);
            seen = __atomic_load_n(&g->installs, __ATOMIC_ACQUIRE);
        }
        return 1;
    }
    if (t.actions & DSM_ACT_FETCH) {
        pg->state = t.next;
        pg->flags &= (uint8_t)~DSM_PF_STALE;
        dsm__page_unlock(p);
        DSM_STAT_ADD(read_faults, 1);
        dsm__fetch_page(p);
        return 1;   /* a write faults again, on READ_ONLY, and upgrades */
    }
    if (home && (t.actions & DSM_ACT_MARK) && g->cfg.check_races &&
        !(pg->flags & (DSM_PF_TWIN | DSM_PF_NOTRAP))) {
        /* DSM_CHECK=races: the home diffs its own writes too (races.c). */
        memcpy(dsm__twin_page(p), dsm__sys_page(p), g->page_size);
        pg->flags |= DSM_PF_TWIN;
    }
    if (t.actions & DSM_ACT_TWIN) {
        memcpy(dsm__twin_page(p), dsm__sys_page(p), g->page_size);
        pg->flags |= DSM_PF_TWIN;
        DSM_STAT_ADD(twins, 1);
    }
    if (t.actions & DSM_ACT_MARK) {
        dsm__pt_mark_written(p);
        DSM_STAT_ADD(write_faults, 1);
    }
    if (t.actions & DSM_ACT_PROTECT) {
        if (t.next == DSM_P_READ_WRITE)
            __atomic_fetch_add(&dsm__upgrades, 1, __ATOMIC_SEQ_CST);
        dsm__vm_protect(p, 1, dsm__page_prot(t.next));
    }
    pg->state = t.next;
    dsm__page_unlock(p);
    return 1;
}

static int on_sigsegv(void *addr, int serious)
{
    (void)serious;
    if (dsm__g.state != DSM_STATE_RUNNING || !dsm__in_region(addr))
        return 0;
    return handle(dsm__page_of(addr));
}

int dsm__fault_init(void)
{
    if (sigsegv_install_handler(on_sigsegv) != 0)
        return -DSM_ESYS;
    /* Run the handler on the thread's alternate signal stack when it has
     * one: a thread whose stack lives in the region (OpenMP shim) faults on
     * it, and the kernel cannot push a signal frame onto a protected page. */
    static const int sigs[] = { SIGSEGV, SIGBUS };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        if (sigaction(sigs[i], NULL, &sa) == 0 && sa.sa_handler != SIG_DFL &&
            sa.sa_handler != SIG_IGN) {
            sa.sa_flags |= SA_ONSTACK;
            sigaction(sigs[i], &sa, NULL);
        }
    }
    return 0;
}

void dsm__fault_fini(void)
{
    sigsegv_deinstall_handler();
}
