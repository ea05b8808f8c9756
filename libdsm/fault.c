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
 *
 * libsigsegv does not say whether the access was a read or a write, and the
 * protocol mostly does not need to know: a fault on a READ_ONLY page is a
 * write.  Except when the page was not readable at the time of the access
 * and became readable before the handler took its lock: a read that
 * faulted on a page another thread was fetching (IN_FLIGHT) finds it
 * READ_ONLY, and taking that for a write made the page writable, twinned
 * and listed for nothing.  Under the shim that is worse than waste: the
 * rank's inline atomics on that page then run on its copy instead of at
 * the home (seen: inline_atomic, a PLT read of the GOT on the page of the
 * counter, "ranks 0 and 1 both wrote").  So a thin SIGSEGV handler in front
 * of libsigsegv's reads the kind of access from the kernel's page-fault
 * error code where the machine gives it (x86-64 Linux: ucontext REG_ERR,
 * bit 1 = write), and a read on a page that is readable now is retried
 * without a transition.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sigsegv.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "dsm_internal.h"

uint32_t dsm__upgrades;

/* The fault's kind in its FAULT_END trace event (dsm-trace(5)). */
enum { FK_READ = 0, FK_WRITE = 1, FK_INFLIGHT = 2, FK_PROTECT = 3, FK_NOTOURS = 4 };

/* The access that faulted, as segv_front read it for this thread's current
 * fault; ACCESS_UNKNOWN where the machine does not say. */
enum { ACCESS_UNKNOWN = 0, ACCESS_READ, ACCESS_WRITE };

/* A read on a page that is readable (by its state) has nothing to do. */
static int is_readable(int state)
{
    return state == DSM_P_READ_ONLY || state == DSM_P_READ_WRITE;
}

static int handle_kind(size_t p, int access, int *kind, uint64_t *wait_ns);

static int handle(size_t p, int access)
{
    int kind = FK_NOTOURS, rc;
    uint64_t wait_ns = 0;
    if (dsm__likely(!dsm__trace_on))
        return handle_kind(p, access, &kind, &wait_ns);
    int home = dsm__g.pages[p].home;
    dsm__trace_enter_ev(DSM_TR_FAULT_BEGIN, 0, home, p, 0);
    rc = handle_kind(p, access, &kind, &wait_ns);
    dsm__trace_leave_ev(DSM_TR_FAULT_END, kind, home, p, wait_ns);
    return rc;
}

static int handle_kind(size_t p, int access, int *kind, uint64_t *wait_ns)
{
    struct dsm_global *g = &dsm__g;
    struct dsm_page *pg = &g->pages[p];

    dsm__page_lock(p);
    if (dsm__page_shut(p)) {
        /* An ordered flush's bytes are going in (ordered.c): wait until
         * all of them are, then retry the access. */
        uint64_t t0 = dsm__now_ns();
        uint32_t seen = __atomic_load_n(&g->installs, __ATOMIC_ACQUIRE);
        dsm__page_unlock(p);
        while (dsm__page_shut(p)) {
            dsm__pt_install_wait(seen);
            seen = __atomic_load_n(&g->installs, __ATOMIC_ACQUIRE);
        }
        *kind = FK_INFLIGHT;
        *wait_ns = dsm__now_ns() - t0;
        DSM_STAT_ADD(page_wait_ns, *wait_ns);
        return 1;
    }
    if (access == ACCESS_READ && is_readable(pg->state)) {
        /* Made readable since the access (by another thread's fetch). */
        dsm__page_unlock(p);
        *kind = FK_INFLIGHT;
        return 1;
    }
    int home = pg->home == g->rank;
    /* A home maps an untouched page writable at once, unless others may
     * read it unseen (dsm__remote_reads): then it maps it read-only, as if
     * it had served it, so that its first write traps and is noticed; also
     * once this node made an ordered flush (ordered.c). */
    enum dsm_pevent ev = home && pg->state == DSM_P_INVALID &&
                         (dsm__remote_reads() ||
                          __atomic_load_n(&dsm__home_tracked, __ATOMIC_ACQUIRE)) &&
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
        /* Another thread of this node, or the communication thread for a
         * prefetch, is fetching it: wait for that fetch (no second request),
         * then retry the access. */
        uint64_t t0 = dsm__now_ns();
        uint32_t seen = __atomic_load_n(&g->installs, __ATOMIC_ACQUIRE);
        if (pg->flags & DSM_PF_PREFETCHING)
            DSM_STAT_ADD(prefetch_late, 1);
        dsm__page_unlock(p);
        *kind = FK_INFLIGHT;
        while (__atomic_load_n(&pg->state, __ATOMIC_ACQUIRE) == DSM_P_IN_FLIGHT) {
            dsm__pt_install_wait(seen);
            seen = __atomic_load_n(&g->installs, __ATOMIC_ACQUIRE);
        }
        *wait_ns = dsm__now_ns() - t0;
        DSM_STAT_ADD(page_wait_ns, *wait_ns);
        return 1;
    }
    if (t.actions & DSM_ACT_FETCH) {
        pg->state = t.next;
        pg->flags &= (uint8_t)~DSM_PF_STALE;
        if (dsm__unlikely(g->cfg.prefetch != DSM_PREFETCH_NONE))
            dsm__history_record(p, 0);
        dsm__page_unlock(p);
        DSM_STAT_ADD(read_faults, 1);
        *kind = FK_READ;
        uint64_t t0 = dsm__now_ns();
        dsm__fetch_page(p);
        *wait_ns = dsm__now_ns() - t0;
        DSM_STAT_ADD(page_wait_ns, *wait_ns);
        return 1;   /* a write faults again, on READ_ONLY, and upgrades */
    }
    if (pg->state == DSM_P_PREFETCHED) {
        /* Prefetched and first touched now: the transition only opens it. */
        DSM_STAT_ADD(prefetch_used, 1);
        if (dsm__unlikely(g->cfg.prefetch != DSM_PREFETCH_NONE))
            dsm__history_record(p, 1);
    }
    if (home && (t.actions & DSM_ACT_MARK) &&
        (g->cfg.check_races || pg->state == DSM_P_READ_ONLY) &&
        !(pg->flags & (DSM_PF_TWIN | DSM_PF_NOTRAP))) {
        /* DSM_CHECK=races: the home diffs its own writes too (races.c).
         * A home write to a page others may hold a copy of (served, so
         * READ_ONLY here): an ordered dsm_flush sends those copies the
         * home's own writes, its twin against its page (ordered.c). */
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
        *kind = FK_WRITE;
    } else {
        *kind = FK_PROTECT;
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

/* A fault on a page that is readable and writable, or a read that faulted
 * on a page that is readable, has nothing to do; one may come from a race
 * with another thread that opened the page.  The same address faulting so
 * over and over is an access that no protection of ours allows: running
 * code there (a GCC nested function's trampoline on a stack in shared
 * memory), or a protection the program set itself.  Stop with a message
 * instead of retrying it forever.
 *
 * Before that, a page whose state says READ_WRITE (or READ_ONLY) may still
 * be protected for a while: a barrier or a flush changes states first and
 * protections in one batch afterwards (dsm__pb_flush).  A thread that takes
 * no part in the barrier (dsm__barrier_bystanders) spins here until the
 * batch goes out, which takes long when it holds the core the barrier's
 * thread needs (seen: cdo, "keeps faulting").  After DSM_NOOP_FAULTS_SYNC
 * such faults the page gets the protection its state says; making it
 * writable counts as an upgrade, so that a flush in progress protects it
 * again before making its diff. */
#define DSM_NOOP_FAULTS_MAX 100000
#define DSM_NOOP_FAULTS_SYNC 64
static __thread void *noop_addr;
static __thread unsigned noop_faults;

static void sync_protection(size_t p)
{
    struct dsm_page *pg = &dsm__g.pages[p];
    dsm__page_lock(p);
    if (dsm__page_shut(p)) {
        dsm__page_unlock(p);    /* handle_kind waits for it */
        return;
    }
    if (pg->state == DSM_P_READ_WRITE) {
        __atomic_fetch_add(&dsm__upgrades, 1, __ATOMIC_SEQ_CST);
        dsm__vm_protect(p, 1, PROT_READ | PROT_WRITE);
    } else if (pg->state == DSM_P_READ_ONLY) {
        dsm__vm_protect(p, 1, PROT_READ);
    }
    dsm__page_unlock(p);
}

static void count_noop(void *addr, int was_rw)
{
    if (!was_rw) {
        noop_faults = 0;
        return;
    }
    if (addr != noop_addr) {
        noop_addr = addr;
        noop_faults = 0;
    }
    if (++noop_faults % DSM_NOOP_FAULTS_SYNC == 0)
        sync_protection(dsm__page_of(addr));
    if (noop_faults >= DSM_NOOP_FAULTS_MAX)
        dsm__fatal("the access at %p keeps faulting (%u times) on a page of shared memory "
                   "that is readable and writable: is the program running code there? "
                   "(GCC's nested functions put trampolines on the stack; shared memory "
                   "is executable only if the runtime on top of libdsm made it so, as the "
                   "shim does when a loaded object asks for an executable stack, "
                   "PT_GNU_STACK.) Or it changed the page's protection itself with "
                   "mprotect", addr, noop_faults);
}

static __thread int fault_access;     /* ACCESS_*, for the current fault */
static struct sigaction segv_next;     /* libsigsegv's */

static void segv_front(int sig, siginfo_t *si, void *ucv)
{
    fault_access = ACCESS_UNKNOWN;
#if defined(__x86_64__) && defined(REG_ERR)
    if (si->si_code == SEGV_ACCERR)
        fault_access = ((const ucontext_t *)ucv)->uc_mcontext.gregs[REG_ERR] & 2
                       ? ACCESS_WRITE : ACCESS_READ;
#endif
    dsm__pass_signal(&segv_next, sig, si, ucv);
}

void dsm__pass_signal(const struct sigaction *next, int sig, siginfo_t *si, void *uc)
{
    if (next->sa_flags & SA_SIGINFO)
        next->sa_sigaction(sig, si, uc);
    else if (next->sa_handler != SIG_DFL && next->sa_handler != SIG_IGN)
        next->sa_handler(sig);
    else
        signal(sig, SIG_DFL);
}

static int on_sigsegv(void *addr, int serious)
{
    (void)serious;
    int access = fault_access;
    fault_access = ACCESS_UNKNOWN;
    if (dsm__g.state != DSM_STATE_RUNNING)
        return 0;
    if (dsm__in_region(addr)) {
        size_t p = dsm__page_of(addr);
        if (dsm__unlikely(dsm__in_die)) {
            /* Ending the process (error.c): no fetch, no wait. */
            dsm__vm_protect(p, 1, PROT_READ | PROT_WRITE);
            return 1;
        }
        int st = __atomic_load_n(&dsm__g.pages[p].state, __ATOMIC_RELAXED);
        if (handle(p, access)) {
            count_noop(addr, st == DSM_P_READ_WRITE ||
                                 (access == ACCESS_READ && is_readable(st)));
            return 1;
        }
    }
    /* Not ours: the program's own handler, if it has one (the shim), else
     * libsigsegv restores the default action and the access kills the
     * process; say which rank and where first. */
    if (dsm__hooks.foreign_fault && dsm__hooks.foreign_fault(addr))
        return 1;
    dsm__crash_report(SIGSEGV, addr);
    return 0;
}

int dsm__fault_init(void)
{
    if (sigsegv_install_handler(on_sigsegv) != 0)
        return -DSM_ESYS;
    struct sigaction front;
    if (sigaction(SIGSEGV, NULL, &segv_next) == 0 && segv_next.sa_handler != SIG_DFL &&
        segv_next.sa_handler != SIG_IGN) {
        front = segv_next;
        front.sa_sigaction = segv_front;
        front.sa_flags |= SA_SIGINFO;
        sigaction(SIGSEGV, &front, NULL);
    }
    /* Run the handler on the thread's alternate signal stack when it has
     * one: a thread whose stack lives in the region (the shim's) faults on
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
