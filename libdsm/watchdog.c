/*
 * watchdog.c - failures reported loudly: replies that never come
 * (DSM_TIMEOUT, DSM_SYNC_TIMEOUT), protocol state dumps on SIGUSR1, and a
 * line naming the rank and what it was doing when a fatal signal ends it.
 *
 * Threads: dsm__watchdog_check runs in a waiting application thread (the
 * fault handler included), dsm__watchdog_tick in the communication thread,
 * the signal handlers in whatever thread the signal lands on.  Everything
 * that may run in a signal handler here formats into a stack buffer and
 * writes with write(2): no malloc, no stdio, no locks.  The state it reports
 * (waiter slots, page states, lock and barrier tables) is read without
 * locks: a dump is a snapshot for a human, not something to act on, and
 * taking a lock could hang the very process that is being diagnosed.
 *
 * A rank that dies is normally reaped by mpiexec (hydra kills the job when
 * a process exits abnormally, and sends SIGTERM to the others); the reports
 * here make the output say which rank died and what every rank was doing.
 * A rank that hangs without dying is caught by the timeouts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "dsm_internal.h"

static int pid_gone(int32_t pid);

/* Every node's pid and host, to tell which ranks on this host are gone
 * when the launcher stops the job. */
struct peer { int32_t pid; char host[60]; };
static struct peer *peers;
static int reporting;                /* one report per process */

/* ---- line buffers (async-signal-safe) ---- */

void dsm__sb_begin(struct dsm_sbuf *sb)
{
    sb->n = 0;
    dsm__sb_str(sb, "libdsm[rank ");
    if (dsm__g.rank < 0)
        dsm__sb_str(sb, "?");
    else
        dsm__sb_u(sb, (uint64_t)dsm__g.rank);
    dsm__sb_str(sb, "]: ");
}

void dsm__sb_str(struct dsm_sbuf *sb, const char *s)
{
    while (*s && sb->n < sizeof sb->b - 1)
        sb->b[sb->n++] = *s++;
}

void dsm__sb_u(struct dsm_sbuf *sb, uint64_t v)
{
    char t[24];
    int k = 0;
    do {
        t[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (k > 0 && sb->n < sizeof sb->b - 1)
        sb->b[sb->n++] = t[--k];
}

void dsm__sb_i(struct dsm_sbuf *sb, int64_t v)
{
    if (v < 0) {
        dsm__sb_str(sb, "-");
        v = -v;
    }
    dsm__sb_u(sb, (uint64_t)v);
}

void dsm__sb_hex(struct dsm_sbuf *sb, uint64_t v)
{
    char t[20];
    int k = 0;
    do {
        t[k++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    dsm__sb_str(sb, "0x");
    while (k > 0 && sb->n < sizeof sb->b - 1)
        sb->b[sb->n++] = t[--k];
}

void dsm__sb_end(struct dsm_sbuf *sb)
{
    sb->b[sb->n++] = '\n';
    if (write(2, sb->b, sb->n) < 0) { /* nowhere else to say it */ }
    sb->n = 0;
}

/* ---- what a waiter awaits ---- */

static int is_sync(int kind)
{
    return kind == DSM_WAIT_BARRIER || kind == DSM_WAIT_GRANT || kind == DSM_WAIT_COLL ||
           kind == DSM_WAIT_CALL;
}

/* "page 5 from its home, rank 2 (PAGE_REQ)" and so on. */
static void describe(struct dsm_sbuf *sb, const struct dsm_waiter *w)
{
    switch (w->kind) {
    case DSM_WAIT_PAGE:
        dsm__sb_str(sb, "page ");
        dsm__sb_u(sb, w->obj);
        dsm__sb_str(sb, " from its home, rank ");
        dsm__sb_i(sb, w->peer);
        dsm__sb_str(sb, w->ctx == &dsm__rget_wait
                    ? " (MPI_Rget from its window: one-sided read not complete)"
                    : " (PAGE_REQ sent, page data awaited)");
        break;
    case DSM_WAIT_ACKS:
        dsm__sb_i(sb, w->remaining);
        dsm__sb_str(sb, " acknowledgement(s) of diffs sent to the homes of written "
                    "pages (DIFF, DIFF_ACK awaited), or of a dsm_flush's notices "
                    "(FLUSH_NOTICE)");
        break;
    case DSM_WAIT_DIFFS:
        dsm__sb_i(sb, w->remaining);
        dsm__sb_str(sb, " rank(s)' diffs of barrier ");
        dsm__sb_u(sb, w->obj);
        dsm__sb_str(sb, " to pages homed here (DIFF without ack; rank 0's BARRIER_RELEASE "
                    "said they were sent)");
        break;
    case DSM_WAIT_BARRIER:
        dsm__sb_str(sb, "the release of barrier ");
        dsm__sb_u(sb, w->obj);
        if (w->what) {
            dsm__sb_str(sb, ", ");
            dsm__sb_str(sb, w->what);
        }
        if (dsm__g.rank == 0) {
            dsm__sb_str(sb, " (this rank is the root of the barrier tree: the entries of "
                        "the other ranks awaited, BARRIER_ENTER)");
        } else {
            dsm__sb_str(sb, " from rank ");
            dsm__sb_i(sb, w->peer);
            dsm__sb_str(sb, ", its parent in the barrier tree (BARRIER_ENTER sent, "
                        "BARRIER_RELEASE awaited)");
        }
        break;
    case DSM_WAIT_GRANT:
        dsm__sb_str(sb, "lock ");
        dsm__sb_u(sb, w->obj);
        dsm__sb_str(sb, " from its manager, rank ");
        dsm__sb_i(sb, w->peer);
        dsm__sb_str(sb, " (LOCK_REQ sent, LOCK_GRANT awaited)");
        break;
    case DSM_WAIT_RELEASE:
        /* A barrier's entry (lock.c, dsm__lock_wait_releases). */
        dsm__sb_str(sb, "the managers' acknowledgements of ");
        dsm__sb_u(sb, w->obj);
        dsm__sb_str(sb, " lock release(s) before a barrier (LOCK_REL sent, LOCK_REL_ACK "
                        "awaited)");
        break;
    case DSM_WAIT_ATOMIC:
        dsm__sb_str(sb, "an atomic operation on page ");
        dsm__sb_u(sb, w->obj);
        dsm__sb_str(sb, " at its home, rank ");
        dsm__sb_i(sb, w->peer);
        dsm__sb_str(sb, " (ATOMIC_REQ sent, ATOMIC_REPLY awaited)");
        break;
    case DSM_WAIT_PREFETCH:
        dsm__sb_i(sb, w->remaining);
        dsm__sb_str(sb, " page(s) of a prefetch batch from their home, rank ");
        dsm__sb_i(sb, w->peer);
        dsm__sb_str(sb, " (PREFETCH_REQ sent, page data awaited)");
        break;
    case DSM_WAIT_COLL:
        dsm__sb_str(sb, "the other ranks in a dsm_bcast (MPI_Ibcast under way)");
        break;
    case DSM_WAIT_CALL:
        dsm__sb_str(sb, "service ");
        dsm__sb_u(sb, w->obj);
        dsm__sb_str(sb, " on rank ");
        dsm__sb_i(sb, w->peer);
        dsm__sb_str(sb, " (CALL_REQ sent, CALL_REPLY awaited; the shim's file I/O for a "
                    "file that rank opened)");
        break;
    default:
        dsm__sb_str(sb, "a reply of kind ");
        dsm__sb_i(sb, w->kind);
        break;
    }
}

static void sb_secs(struct dsm_sbuf *sb, uint64_t ns)
{
    dsm__sb_u(sb, ns / 1000000000u);
    dsm__sb_str(sb, ".");
    dsm__sb_u(sb, ns / 100000000u % 10);
    dsm__sb_str(sb, " s");
}

/* Waiter slot i if a thread waits on it now, else NULL. */
static const struct dsm_waiter *pending(uint32_t i)
{
    const struct dsm_waiter *w = dsm__waiter_slot(i);
    if (!__atomic_load_n(&w->in_use, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
        return NULL;
    return w;
}

/* One line per thread waiting for a reply; returns how many. */
static int dump_waiters(uint64_t now)
{
    struct dsm_sbuf sb;
    int n = 0;
    for (uint32_t i = 0; i < DSM_MAX_WAITERS; i++) {
        const struct dsm_waiter *w = pending(i);
        if (!w)
            continue;
        uint64_t t0 = __atomic_load_n(&w->t0, __ATOMIC_RELAXED);
        dsm__sb_begin(&sb);
        dsm__sb_str(&sb, "  waiting ");
        sb_secs(&sb, t0 < now ? now - t0 : 0);
        dsm__sb_str(&sb, " for ");
        describe(&sb, w);
        dsm__sb_end(&sb);
        n++;
    }
    return n;
}

/* The protocol state of this node, to stderr.  Async-signal-safe. */
static void dump_state(const char *why)
{
    struct dsm_global *g = &dsm__g;
    struct dsm_sbuf sb;
    uint64_t now = dsm__now_ns();
    size_t inflight = 0, listed = 0;

    dsm__sb_begin(&sb);
    dsm__sb_str(&sb, "state dump (");
    dsm__sb_str(&sb, why);
    dsm__sb_str(&sb, "): ");
    dsm__sb_u(&sb, (uint64_t)g->nodes);
    dsm__sb_str(&sb, " nodes, comm=");
    dsm__sb_str(&sb, g->ops ? g->ops->name : "?");
    dsm__sb_str(&sb, ", barriers passed ");
    dsm__sb_u(&sb, __atomic_load_n(&g->epoch, __ATOMIC_RELAXED));
    dsm__sb_str(&sb, ", pid ");
    dsm__sb_u(&sb, (uint64_t)getpid());
    dsm__sb_end(&sb);
    if (g->state != DSM_STATE_RUNNING) {
        dsm__sb_begin(&sb);
        dsm__sb_str(&sb, g->state == DSM_STATE_NEW ? "  not initialised yet"
                                                   : "  finalized");
        dsm__sb_end(&sb);
        return;
    }
    if (dump_waiters(now) == 0) {
        dsm__sb_begin(&sb);
        dsm__sb_str(&sb, "  no thread waits for a reply");
        dsm__sb_end(&sb);
    }
    /* Pages in flight: requested, not arrived. */
    dsm__sb_begin(&sb);
    dsm__sb_str(&sb, "  pages in flight:");
    for (size_t p = 0; p < g->npages; p++) {
        if (__atomic_load_n(&g->pages[p].state, __ATOMIC_RELAXED) != DSM_P_IN_FLIGHT)
            continue;
        inflight++;
        if (listed < 16) {
            dsm__sb_str(&sb, " ");
            dsm__sb_u(&sb, p);
            dsm__sb_str(&sb, "(home ");
            dsm__sb_u(&sb, g->pages[p].home);
            dsm__sb_str(&sb, ")");
            listed++;
        }
    }
    if (inflight == 0)
        dsm__sb_str(&sb, " none");
    else if (inflight > listed) {
        dsm__sb_str(&sb, " ... ");
        dsm__sb_u(&sb, inflight);
        dsm__sb_str(&sb, " in all");
    }
    dsm__sb_end(&sb);
    dsm__lock_dump(&sb);
    dsm__barrier_dump(&sb);
    dsm__sb_begin(&sb);
    dsm__sb_str(&sb, "  requests deferred to a later barrier: ");
    dsm__sb_str(&sb, dsm__deferred_pending() ? "some" : "none");
    dsm__sb_end(&sb);
}

/* ---- timeouts ---- */

void dsm__watchdog_check(const struct dsm_waiter *w, uint64_t now)
{
    struct dsm_global *g = &dsm__g;
    int kind = w->kind;
    unsigned limit = is_sync(kind) ? g->cfg.sync_timeout_s : g->cfg.timeout_s;
    struct dsm_sbuf sb;
    /* The slot may be taken again while we look: a wait that started after
     * `now` (t0 > now) is not late, and must not wrap around to 584 years. */
    uint64_t t0 = __atomic_load_n(&w->t0, __ATOMIC_RELAXED);

    if (!limit || t0 > now || now - t0 < (uint64_t)limit * 1000000000u ||
        __atomic_load_n(&w->done, __ATOMIC_ACQUIRE) ||
        !__atomic_load_n(&w->in_use, __ATOMIC_ACQUIRE))
        return;
    if (__atomic_exchange_n(&reporting, 1, __ATOMIC_SEQ_CST) || dsm__dying) {
        /* Another thread reports; it ends the job. */
        for (;;)
            pause();
    }
    __atomic_store_n(&dsm__dying, 1, __ATOMIC_SEQ_CST);
    dsm__sb_begin(&sb);
    dsm__sb_str(&sb, "no reply within ");
    dsm__sb_str(&sb, is_sync(kind) ? "DSM_SYNC_TIMEOUT=" : "DSM_TIMEOUT=");
    dsm__sb_u(&sb, limit);
    dsm__sb_str(&sb, " s: waited ");
    sb_secs(&sb, now - t0);
    dsm__sb_str(&sb, " for ");
    describe(&sb, w);
    dsm__sb_str(&sb, is_sync(kind)
        ? "; another rank never got there (a hang, a deadlock, or a rank that "
          "computes longer than the limit); raise DSM_SYNC_TIMEOUT or set it to 0"
        : "; that rank is hung, overloaded or unreachable; the job stops "
          "(raise DSM_TIMEOUT, or 0 to wait forever)");
    dsm__sb_end(&sb);
    dump_state("timeout");
    dsm__die();
}

/* Another rank is dead (liveness.c) or gone: the report is out; the job
 * must end.  Not here in the communication thread's tick: MPI_Abort runs
 * the process's exit handlers (MPICH calls exit()), and under a runtime
 * such as the OpenMP shim those flush stdio buffers in shared memory, whose
 * faults need this very thread (a rank of the shim whose communication
 * thread aborted died of SIGSEGV inside PMPI_Abort; so did one whose new
 * thread did).  A waiting application thread aborts instead (waiter.c
 * checks dsm__job_dead in its loop; the sleepers are woken here); with
 * none waiting, this thread aborts after DSM_DIE_GRACE_NS (liveness.c).
 * Ending with _exit(1) instead left a job across hosts hanging (hydra
 * could not pass the clean-up to the proxy of the stopped rank). */
int dsm__job_dead;

static void hand_off_death(void)
{
    __atomic_store_n(&dsm__job_dead, 1, __ATOMIC_SEQ_CST);
    dsm__waiter_wake_all();
}

/* The oldest wait of this process that has not ended, or NULL. */
static const struct dsm_waiter *oldest_waiter(uint64_t now)
{
    const struct dsm_waiter *best = NULL;
    uint64_t age = 0;
    for (uint32_t i = 0; i < DSM_MAX_WAITERS; i++) {
        const struct dsm_waiter *w = pending(i);
        if (!w)
            continue;
        uint64_t t0 = __atomic_load_n(&w->t0, __ATOMIC_RELAXED);
        if (t0 <= now && (!best || now - t0 > age)) {
            best = w;
            age = now - t0;
        }
    }
    return best;
}

void dsm__watchdog_silent(int r, uint64_t silent_ns)
{
    struct dsm_sbuf sb;
    if (__atomic_exchange_n(&reporting, 1, __ATOMIC_SEQ_CST) || dsm__dying)
        return;
    __atomic_store_n(&dsm__dying, 1, __ATOMIC_SEQ_CST);
    uint64_t now = dsm__now_ns();
    const struct dsm_waiter *w = oldest_waiter(now);
    dsm__sb_begin(&sb);
    dsm__sb_str(&sb, "rank ");
    dsm__sb_u(&sb, (uint64_t)r);
    if (peers) {
        dsm__sb_str(&sb, " (pid ");
        dsm__sb_u(&sb, (uint64_t)peers[r].pid);
        dsm__sb_str(&sb, " on ");
        dsm__sb_str(&sb, peers[r].host[0] ? peers[r].host : "?");
        dsm__sb_str(&sb, ")");
    }
    dsm__sb_str(&sb, " is not responding: nothing from it for ");
    sb_secs(&sb, silent_ns);
    dsm__sb_str(&sb, " (DSM_TIMEOUT=");
    dsm__sb_u(&sb, dsm__g.cfg.timeout_s);
    dsm__sb_str(&sb, " s), not even its communication thread's heartbeat: the process is "
                "stopped or hung, or its host or network is down; this rank was ");
    if (w) {
        dsm__sb_str(&sb, "waiting ");
        sb_secs(&sb, now - __atomic_load_n(&w->t0, __ATOMIC_RELAXED));
        dsm__sb_str(&sb, " for ");
        describe(&sb, w);
    } else {
        dsm__sb_str(&sb, "running the program");
    }
    dsm__sb_str(&sb, "; the job stops (raise DSM_TIMEOUT, or 0 to wait forever)");
    dsm__sb_end(&sb);
    dump_state("a rank is not responding");
    hand_off_death();
}

/* A rank on this host whose process no longer exists, or -1. */
static int gone_peer(void)
{
    int me = dsm__g.rank;
    for (int r = 0; peers && r < dsm__g.nodes; r++)
        if (r != me && strcmp(peers[r].host, peers[me].host) == 0 &&
            pid_gone(peers[r].pid))
            return r;
    return -1;
}

void dsm__watchdog_tick(uint64_t now)
{
    uint64_t oldest = 0;
    dsm__liveness_tick(now);
    for (uint32_t i = 0; i < DSM_MAX_WAITERS; i++) {
        const struct dsm_waiter *w = pending(i);
        if (!w)
            continue;
        dsm__watchdog_check(w, now);
        uint64_t t0 = __atomic_load_n(&w->t0, __ATOMIC_RELAXED);
        if (t0 < now && now - t0 > oldest)
            oldest = now - t0;
    }
    /* Waiting for a second or more: is a rank of this host dead?  (mpiexec
     * normally ends the job first; not when started with
     * -disable-auto-cleanup, or under another launcher.) */
    if (oldest < 1000000000u)
        return;
    int r = gone_peer();
    if (r < 0 || __atomic_exchange_n(&reporting, 1, __ATOMIC_SEQ_CST) || dsm__dying)
        return;
    __atomic_store_n(&dsm__dying, 1, __ATOMIC_SEQ_CST);
    struct dsm_sbuf sb;
    dsm__sb_begin(&sb);
    dsm__sb_str(&sb, "rank ");
    dsm__sb_u(&sb, (uint64_t)r);
    dsm__sb_str(&sb, " (pid ");
    dsm__sb_u(&sb, (uint64_t)peers[r].pid);
    dsm__sb_str(&sb, ") is gone: it died or exited without dsm_finalize (see its "
                "own message, if any); the job stops");
    dsm__sb_end(&sb);
    dump_state("a rank died");
    hand_off_death();
}

/* ---- MPI_Finalize ---- */

static uint32_t finalized_word;

static void *finalize_watch(void *arg)
{
    unsigned limit = (unsigned)(uintptr_t)arg;
    struct timespec ts = { (time_t)limit, 0 };
    struct dsm_sbuf sb;

    /* Sleeps until MPI_Finalize returns (the word changes) or the limit. */
    while (!__atomic_load_n(&finalized_word, __ATOMIC_ACQUIRE)) {
        uint64_t t0 = dsm__now_ns();
        syscall(SYS_futex, &finalized_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
        if (__atomic_load_n(&finalized_word, __ATOMIC_ACQUIRE))
            return NULL;
        uint64_t spent = dsm__now_ns() - t0;
        if (spent >= (uint64_t)ts.tv_sec * 1000000000u) {
            dsm__sb_begin(&sb);
            dsm__sb_str(&sb, "MPI_Finalize has not returned after DSM_TIMEOUT=");
            dsm__sb_u(&sb, limit);
            dsm__sb_str(&sb, " s (libdsm had finished); the process ends with status 1 "
                        "instead of hanging (an MPI problem: see docs/ERRORS.md)");
            dsm__sb_end(&sb);
            _exit(1);
        }
        ts.tv_sec -= (time_t)(spent / 1000000000u);
    }
    return NULL;
}

void dsm__finalize_mpi(unsigned timeout_s)
{
    pthread_t th;
    int watching = timeout_s &&
        pthread_create(&th, NULL, finalize_watch, (void *)(uintptr_t)timeout_s) == 0;
    MPI_Finalize();
    if (watching) {
        __atomic_store_n(&finalized_word, 1, __ATOMIC_RELEASE);
        syscall(SYS_futex, &finalized_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        pthread_join(th, NULL);
    }
}

/* ---- signals ---- */

static const char *sig_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS:  return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE:  return "SIGFPE";
    case SIGILL:  return "SIGILL";
    case SIGTERM: return "SIGTERM";
    default:      return "a signal";
    }
}

/* Whether process pid (on this host) has ended: it no longer exists, or it
 * is a zombie its parent has not reaped yet (mpiexec -disable-auto-cleanup
 * leaves them).  Async-signal-safe. */
static int pid_gone(int32_t pid)
{
    char path[40], buf[256];
    struct dsm_sbuf sb;
    ssize_t n;
    int fd;

    if (kill(pid, 0) == -1 && errno == ESRCH)
        return 1;
    sb.n = 0;
    dsm__sb_str(&sb, "/proc/");
    dsm__sb_u(&sb, (uint64_t)pid);
    dsm__sb_str(&sb, "/stat");
    memcpy(path, sb.b, sb.n);
    path[sb.n] = '\0';
    /* System calls, not the C library's names: a program may define its
     * own open (ntcard does), and this runs on the communication thread,
     * which must never run the program's code. */
    if ((fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    n = (ssize_t)syscall(SYS_read, fd, buf, sizeof buf - 1);
    syscall(SYS_close, fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* "pid (comm) S ...": the state follows the last ')'. */
    char *rp = NULL;
    for (char *c = buf; *c; c++)
        if (*c == ')')
            rp = c;
    return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

/* Ranks on this host whose process is gone (async-signal-safe). */
static void report_gone_peers(void)
{
    struct dsm_sbuf sb;
    int any = 0, me = dsm__g.rank;
    if (!peers || me < 0)
        return;
    dsm__sb_begin(&sb);
    dsm__sb_str(&sb, "ranks whose process is gone:");
    for (int r = 0; r < dsm__g.nodes; r++) {
        if (r == me || strcmp(peers[r].host, peers[me].host) != 0)
            continue;
        if (pid_gone(peers[r].pid)) {
            dsm__sb_str(&sb, " rank ");
            dsm__sb_u(&sb, (uint64_t)r);
            dsm__sb_str(&sb, " (pid ");
            dsm__sb_u(&sb, (uint64_t)peers[r].pid);
            dsm__sb_str(&sb, ")");
            any = 1;
        }
    }
    if (!any)
        dsm__sb_str(&sb, " none on this host");
    dsm__sb_end(&sb);
}

void dsm__crash_report(int sig, const void *addr)
{
    struct dsm_sbuf sb;
    int saved = errno;

    if (dsm__dying || __atomic_exchange_n(&reporting, 1, __ATOMIC_SEQ_CST))
        return;
    dsm__sb_begin(&sb);
    if (sig == SIGTERM) {
        dsm__sb_str(&sb, "stopped by SIGTERM (mpiexec ends the job: another rank "
                    "failed, or the job was interrupted)");
    } else {
        dsm__sb_str(&sb, "this rank dies of ");
        dsm__sb_str(&sb, sig_name(sig));
        if (sig == SIGSEGV || sig == SIGBUS) {
            dsm__sb_str(&sb, " at address ");
            dsm__sb_hex(&sb, (uintptr_t)addr);
            /* The first 64 KiB are never mapped (vm.mmap_min_addr): the
             * access followed a null pointer, whatever a runtime keeps
             * private (x86-64 also reports a non-canonical address as 0). */
            if ((uintptr_t)addr < 65536)
                dsm__sb_str(&sb, " (a null pointer, or a small offset from one: a bug in "
                            "the program, not in the DSM)");
            else if (dsm__g.app && dsm__in_region(addr))
                dsm__sb_str(&sb, " (unallocated shared memory: past the end of a "
                            "dsm_malloc block, or freed)");
            else if (dsm__hooks.unshared_hint)
                dsm__sb_str(&sb, dsm__hooks.unshared_hint);
            else
                dsm__sb_str(&sb, " (not shared memory: a bug in the program)");
        } else if (sig == SIGABRT) {
            dsm__sb_str(&sb, " (abort() called)");
        }
        dsm__sb_str(&sb, "; the job stops");
    }
    dsm__sb_end(&sb);
    dsm__sb_begin(&sb);
    if (dsm__g.state == DSM_STATE_RUNNING) {
        uint64_t now = dsm__now_ns();
        dsm__sb_str(&sb, "what this rank was doing:");
        dsm__sb_end(&sb);
        if (dump_waiters(now) == 0) {
            dsm__sb_begin(&sb);
            dsm__sb_str(&sb, "  running the program (no libdsm request pending)");
            dsm__sb_end(&sb);
        }
    } else {
        dsm__sb_str(&sb, dsm__g.state == DSM_STATE_NEW ? "before dsm_init"
                                                       : "after dsm_finalize");
        dsm__sb_end(&sb);
    }
    if (sig == SIGTERM)
        report_gone_peers();
    errno = saved;
}

static void on_fatal_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    dsm__crash_report(sig, si ? si->si_addr : NULL);
    /* SA_RESETHAND restored the default action: die of the same signal. */
    raise(sig);
}

/* MPICH installs a SIGUSR1 handler of its own (hydra signals process
 * failures with it under -disable-auto-cleanup): ours runs first, then
 * theirs. */
static struct sigaction old_usr1;

static void on_sigusr1(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    dump_state("SIGUSR1");
    errno = saved;
    if (old_usr1.sa_flags & SA_SIGINFO) {
        if (old_usr1.sa_sigaction)
            old_usr1.sa_sigaction(sig, si, uc);
    } else if (old_usr1.sa_handler != SIG_DFL && old_usr1.sa_handler != SIG_IGN) {
        old_usr1.sa_handler(sig);
    }
}

/* Install handler for sig only where nobody else has one: the program's own
 * handlers (and libsigsegv's SIGBUS) win. */
static void install(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
    struct sigaction old, sa;
    if (sigaction(sig, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
        old.sa_handler != SIG_DFL)
        return;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = flags | SA_ONSTACK | SA_SIGINFO;
    sa.sa_sigaction = fn;
    sigaction(sig, &sa, NULL);
}

int dsm__watchdog_init(void)
{
    struct peer me;
    struct dsm_global *g = &dsm__g;

    memset(&me, 0, sizeof me);
    me.pid = (int32_t)getpid();
    if (gethostname(me.host, sizeof me.host - 1) != 0)
        me.host[0] = '\0';
    peers = calloc((size_t)g->nodes, sizeof *peers);
    if (!peers)
        return -DSM_ENOMEM;
    MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, peers, (int)sizeof me, MPI_BYTE, g->comm);
    reporting = 0;
    static const int fatal[] = { SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGTERM };
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        install(fatal[i], on_fatal_signal, SA_RESETHAND);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_sigaction = on_sigusr1;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigaction(SIGUSR1, &sa, &old_usr1);
    return 0;
}
