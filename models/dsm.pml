/*
 * dsm.pml - a Promela model of libdsm's coherence protocol (home-based,
 * multiple-writer, eager release consistency), checked with spin by
 * 'make check-model'.  docs/MODEL.md says what it abstracts away and which
 * functions of libdsm each part stands for.
 *
 * One shared page of W words, homed at node HOME, N nodes.  Each node runs
 * an application process (App: one thread of the program below) and a
 * handler process (Handler: the communication thread, which serves
 * requests and installs arriving pages); each non-home node also has a
 * Prefetcher that may start one asynchronous fetch of the page at any
 * moment (dsm_prefetch / DSM_PREFETCH=history).  Control messages to a node
 * go through one FIFO channel (MPI keeps each pair's order); pages travel on
 * a channel of their own, as they do on their own MPI tag, so a page reply
 * and a control message may overtake each other.
 *
 * The program is data-race-free: word 0 is a counter touched only under the
 * lock; word k+1 is written by node k only, between two barriers.
 *   1. critical section: acquire, read the counter, add one, release
 *   2. write own word, then a critical section while that write is still
 *      unreleased (the acquire's invalidation must flush it first)
 *   3. barrier, then read the counter, the home's word and its own word
 *   4. non-home nodes write their word again (with N = 2 node 1 is the
 *      page's only writer of the interval and keeps its copy), barrier
 *   5. critical section (the home's write of the counter must still be
 *      noticed: the home may stop trapping its writes only when no other
 *      node holds a copy)
 * Checked: each read of the counter after an acquire returns the value of
 * the last release before it (assert in cs), no diff is lost (the reads
 * after the barrier), and no deadlock (spin's invalid end states).
 *
 * SHORT (make check-model-3, with N = 3): a shorter program, so that the
 * search with three nodes ends (the program above with N = 3 did not: 47 M
 * states in 21 minutes).  Step 1's critical section only on node 1; in
 * step 4 only node 1 writes (it keeps its copy, as with N = 2); after the
 * second barrier node 2 reads node 1's word, which reaches it through the
 * home (the third-party case: writer and reader both non-home, also met
 * by the counter handed between nodes 1 and 2 under the lock, whose
 * manager is node 2); one prefetcher, on node 1.
 *
 * Mutations (each must make spin report a violation; check-model checks):
 *   MUT_NO_INVALIDATE  an acquire ignores its write notices
 *   MUT_INSTALL_STALE  a page reply that crossed an invalidation is installed
 *   MUT_WHOLE_PAGE     a release sends the whole page instead of a diff
 *   MUT_NO_DEFER       the home serves a request of a node that left the
 *                      barrier before the home applied it (protocol.c's
 *                      dsm__defer_early deferral removed)
 *   MUT_NO_DIFF_WAIT   the home ends a barrier without waiting for the
 *                      unacked diffs its release counts (barrier.c's
 *                      wait_barrier_diffs removed; found with N = 3, where a
 *                      third node asks the home for the page)
 *   MUT_STAMP_OLD      a page request sent while its node applies a barrier
 *                      carries the old epoch (libdsm before the fix that
 *                      this model found: a copy fetched then, by a prefetch
 *                      or another thread, was forgotten by the home's
 *                      copyset; if that node then wrote the page alone in
 *                      the next interval, the home stopped trapping its own
 *                      writes while the node still held a copy, and the
 *                      node read a stale value after a lock acquire)
 */
#ifndef N
#define N 2
#endif
#define W (N + 1)
#define HOME 0
#define MGR (N - 1)          /* the lock's manager: id % nodes */
#define MANY 255             /* barrier: more than one writer */

/* A non-home copy's state (enum dsm_pstate).  At the home the page is
 * always valid: RO there means "writes trap" (someone may hold a copy),
 * RW means "writes do not trap". */
#define INVALID  0
#define INFLIGHT 1
#define RO       2
#define RW       3

mtype = { PAGE_REQ, DIFF, BDIFF, LOCK_REQ, LOCK_REL, BAR_ENTER,   /* to Handler */
          DIFF_ACK, GRANT, BAR_REL };                      /* to App */

chan req[N] = [2 * N] of { mtype, byte, byte, byte, byte, byte, byte };
chan rep[N] = [2] of { mtype, byte };
chan pgc[N] = [2] of { byte, byte, byte, byte };  /* page replies: W <= 4 words */
chan rack[N] = [2] of { byte };  /* LOCK_REL_ACKs, counted (lock.c: rel_unacked) */

byte st[N];              /* page state */
bool stale[N];           /* DSM_PF_STALE: invalidated while in flight */
byte copy[N * W];        /* copy[HOME * W + w] is the master copy */
byte twin[N * W];
bool marked[N];          /* DSM_PF_MARKED: written since the last flush */
byte relpend[N];         /* lock releases sent, acks not yet received */
bool ewritten[N];        /* written since the last barrier (dsm__pt_copy_epoch) */
byte epoch[N];
bool relrcvd[N];         /* has barrier epoch[i]'s release, not applied yet */
byte copyset;            /* at the home: one bit per node holding a copy */
bool deferred[N];        /* at the home: a PAGE_REQ waiting for its epoch */
byte defep[N];

/* Lock manager (lock.c), at node MGR. */
bool held;
byte holder;
byte waiting;            /* bit per node queued for the lock */
bool lnotice;            /* the page is in the epoch's notices */
byte lepoch;
/* Barrier master (barrier.c), at node 0. */
byte arrived;
byte bwriter;            /* 0 none, k+1 node k alone, MANY */
byte bsent;              /* nodes that flushed unacked diffs (BDIFF) this barrier */
byte bexpect;            /* sent to the home in its release (BARRIER_RELEASE arg) */
/* The home's count of BDIFFs applied and not yet waited for (barrier.c,
 * bd_count; one counter: a sender here is never a barrier ahead, below). */
byte bdiffs;

/* Ghost state for the assertions. */
byte expect[W];          /* what a data-race-free read must return */
byte done;

/* The epoch a page request carries (msg.c, dsm__fetch_epoch): one ahead
 * from the moment the node has a barrier's release until it has applied it,
 * so that the home defers it until the home has applied that barrier too. */
#ifdef MUT_STAMP_OLD
#define STAMP(i) epoch[i]
#else
#define STAMP(i) (epoch[i] + relrcvd[i])
#endif

/* ---- home side (protocol.c: on_page_req, on_diff) ---- */

inline serve(s)
{
    copyset = copyset | (1 << s);
    if
    :: st[HOME] == RW -> st[HOME] = RO   /* write-protect first, copy second */
    :: else -> skip
    fi;
    pgc[s]!copy[HOME * W + 0], copy[HOME * W + 1], copy[HOME * W + 2],
           copy[HOME * W + (W > 3 -> 3 : 2)]
}

/* ---- requesting side (fault.c, protocol.c: dsm__fetch_page, page_arrived) ---- */

inline fetch(i)
{
    do
    :: atomic { st[i] == INVALID -> st[i] = INFLIGHT;
                req[HOME]!PAGE_REQ, i, STAMP(i), 0, 0, 0, 0 }
       (st[i] != INFLIGHT)                      /* wait for the reply */
    :: atomic { st[i] == INFLIGHT -> skip }     /* a prefetch is in flight */
       (st[i] != INFLIGHT)
    :: st[i] == RO || st[i] == RW -> break
    od
}

inline install(i, a, b, c, d)
{
    atomic {
        assert(st[i] == INFLIGHT);
#ifdef MUT_INSTALL_STALE
        stale[i] = 0;
#endif
        if
        :: stale[i] -> stale[i] = 0; st[i] = INVALID    /* discard: fetch again */
        :: else ->
            copy[i * W + 0] = a; copy[i * W + 1] = b; copy[i * W + 2] = c;
            if :: W > 3 -> copy[i * W + (W > 3 -> 3 : 2)] = d :: else -> skip fi;
            st[i] = RO
        fi
    }
}

/* A read, checked: a data-race-free read returns the last value written to
 * the word (expect[], ghost state).  The check is in the read's own step:
 * as a step of its own it would only add interleavings, since no other
 * node writes the word in between (the program is data-race-free). */
inline read(i, w, v)
{
    if
    :: i == HOME -> atomic { v = copy[HOME * W + w]; assert(v == expect[w]) }
    :: else ->
        fetch(i);
        atomic {
            assert(st[i] == RO || st[i] == RW);
            v = copy[i * W + w];
            assert(v == expect[w])
        }
    fi
}

/* The fault path of a write (DSM_EV_FAULT on READ_ONLY: twin and mark).
 * expect[w], the ghost a later read is checked against, is set in the
 * same step, for the same reason as the check in read. */
inline write(i, w, v)
{
    if
    :: i == HOME ->
        atomic {
            if
            :: st[HOME] == RO -> marked[i] = 1; ewritten[i] = 1; st[HOME] = RW
            :: else -> skip
            fi;
            copy[HOME * W + w] = v;
            expect[w] = v
        }
    :: else ->
        fetch(i);
        atomic {
            assert(st[i] == RO || st[i] == RW);
            if
            :: st[i] == RO ->
                k = 0;
                do :: k < W -> twin[i * W + k] = copy[i * W + k]; k++ :: else -> break od;
                marked[i] = 1; ewritten[i] = 1; st[i] = RW
            :: else -> skip
            fi;
            copy[i * W + w] = v;
            expect[w] = v
        }
    fi
}

/* dsm__flush: send the diff of a dirty copy, wait for the ack, downgrade. */
inline flush(i)
{
    if
    :: i == HOME && marked[i] -> atomic { st[HOME] = RO; marked[i] = 0 }
    :: i != HOME && st[i] == RW && marked[i] ->
        /* One step: while the copy is RW only this App writes it (install
         * needs INFLIGHT), so splitting the diff into steps adds states,
         * not behaviours. */
        d_step {
            mask = 0; k = 0;
            do
            :: k < W ->
#ifdef MUT_WHOLE_PAGE
                mask = mask | (1 << k);
#else
                if :: copy[i * W + k] != twin[i * W + k] -> mask = mask | (1 << k) :: else -> skip fi;
#endif
                k++
            :: else -> break
            od
        };
        req[HOME]!DIFF, i, mask, copy[i * W + 0], copy[i * W + 1], copy[i * W + 2],
                  copy[i * W + (W > 3 -> 3 : 2)];
        rep[i]?DIFF_ACK, _;
        st[i] = RO; marked[i] = 0
    :: else -> skip
    fi
}

/* dsm__flush(DSM_FLUSH_BARRIER_NOACK): make the diff and downgrade, but do
 * not send it yet: the barrier sends it without waiting for an ack, and the
 * model sends it at the latest moment the protocol allows, once the node
 * has its release (the schedule of libdsm's dsm__barrier_late_diffs), so
 * that the home certainly has its release first.  pend: a BDIFF is due. */
inline bflush(i)
{
    pend = 0;
    if
    :: i == HOME && marked[i] -> atomic { st[HOME] = RO; marked[i] = 0 }
    :: i != HOME && st[i] == RW && marked[i] ->
        d_step {
            mask = 0; k = 0;
            do
            :: k < W ->
#ifdef MUT_WHOLE_PAGE
                mask = mask | (1 << k);
#else
                if :: copy[i * W + k] != twin[i * W + k] -> mask = mask | (1 << k) :: else -> skip fi;
#endif
                k++
            :: else -> break
            od
        };
        st[i] = RO; marked[i] = 0; pend = 1
    :: else -> skip
    fi
}

/* dsm__invalidate_copy: a write notice for the page. */
inline invalidate(i)
{
    if
    :: i == HOME -> skip
    :: else ->
        if
        :: st[i] == RW -> flush(i); st[i] = INVALID    /* own writes go first */
        :: else ->
            atomic {
                if
                :: st[i] == INFLIGHT -> stale[i] = 1
                :: st[i] == RO -> st[i] = INVALID
                :: else -> skip
                fi
            }
        fi
    fi
}

/* lock.c, manager side (on_lock_rel's end, pass_on): the lock goes to a
 * waiting node, or is free.  Inside the caller's atomic step. */
inline pass_on(k)
{
    if
    :: waiting == 0 -> held = 0
    :: else ->
        if                   /* any waiter: the order is not modelled */
        :: waiting & 1 -> k = 0
        :: waiting & 2 -> k = 1
#if N > 2
        :: waiting & 4 -> k = 2
#endif
        fi;
        waiting = waiting & ~(1 << k); holder = k;
        rep[k]!GRANT, lnotice
    fi
}

/* lock.c, manager side (add_notices): node s's release of epoch b, which
 * wrote the page (a) since the barrier. */
inline add_notices(s, a, b)
{
    assert(held && holder == s);
    if :: b > lepoch -> lnotice = 0; lepoch = b :: else -> skip fi;
    lnotice = lnotice || a
}

/* lock.c: acquire, read the counter, increment, release.  The manager's
 * own node runs the manager's code in place (request_here, and the local
 * branch of release): no LOCK_REQ, no LOCK_REL, no ack; a request that
 * finds the lock held waits for a GRANT like a remote one. */
inline cs(i)
{
    if
    :: i == MGR ->
        atomic {
            if
            :: !held -> held = 1; holder = i; n = lnotice; got = 1
            :: else -> waiting = waiting | (1 << i); got = 0
            fi
        };
        if :: !got -> rep[i]?GRANT, n :: else -> skip fi
    :: else ->
        req[MGR]!LOCK_REQ, i, 0, 0, 0, 0, 0;
        rep[i]?GRANT, n
    fi;
#ifndef MUT_NO_INVALIDATE
    if :: n -> invalidate(i) :: else -> skip fi;
#endif
    read(i, 0, v);                   /* the value of the last release */
    write(i, 0, v + 1);
    flush(i);
    if
    :: i == MGR ->
        atomic { add_notices(i, ewritten[i], epoch[i]); pass_on(got) }
    :: else ->                       /* the ack is waited for at the barrier */
        req[MGR]!LOCK_REL, i, ewritten[i], epoch[i], 0, 0, 0;
        relpend[i]++
    fi
}

/* barrier.c: dsm__barrier_checked and apply_release, with unacked diffs
 * (DSM_BARRIER_DIFFS=unacked): the BAR_ENTER says whether this node sends
 * the home a BDIFF; the master counts them into the home's release, and the
 * home does not end the barrier until it has applied that many.  The copy
 * cannot change between bflush and the BDIFF: it is RO, not INFLIGHT. */
inline barrier(i)
{
    bflush(i);
    do                                /* lock.c: dsm__lock_wait_releases */
    :: relpend[i] > 0 -> rack[i]?_; relpend[i]--
    :: else -> break
    od;
    req[0]!BAR_ENTER, i, ewritten[i], pend, 0, 0, 0;
    atomic { rep[i]?BAR_REL, n; relrcvd[i] = 1 }
    if
    :: pend -> req[HOME]!BDIFF, i, mask, copy[i * W + 0], copy[i * W + 1], copy[i * W + 2],
                 copy[i * W + (W > 3 -> 3 : 2)];
               pend = 0
    :: else -> skip
    fi;
#ifndef MUT_NO_DIFF_WAIT
    if
    :: i == HOME -> atomic { bdiffs >= bexpect -> bdiffs = bdiffs - bexpect }
    :: else -> skip
    fi;
#endif
    atomic {
        if
        :: n != 0 && i == HOME ->
            was = copyset;
            if
            :: n != MANY && n - 1 != HOME && (was & (1 << (n - 1))) -> copyset = 1 << (n - 1)
            :: else -> copyset = 0
            fi;
            if :: copyset == 0 && was == 0 -> st[HOME] = RW :: else -> skip fi  /* untrack */
        :: else -> skip
        fi
    }
    if
    :: n != 0 && i != HOME && n != i + 1 -> invalidate(i)
    :: else -> skip
    fi;
    ewritten[i] = 0;
    atomic { epoch[i]++; relrcvd[i] = 0 }
}

proctype App(byte i)
{
    byte v, n, k, mask, was, w, pend, got;

#ifndef SHORT
    cs(i);
#else
    if :: i == 1 -> cs(i) :: else -> skip fi;
#endif
    write(i, i + 1, 10 + i);
    cs(i);
    barrier(i);
    w = 0;
    do
    :: w < W && (w < 2 || w == i + 1) ->  /* others' words are written next */
        read(i, w, v); w++
    :: w < W && !(w < 2 || w == i + 1) -> w++
    :: else -> break
    od;
#ifndef SHORT
    if
    :: i != HOME -> write(i, i + 1, 20 + i)
    :: else -> skip
    fi;
#else
    if                                  /* node 1 alone: it keeps its copy */
    :: i == 1 -> write(i, i + 1, 20 + i)
    :: else -> skip
    fi;
#endif
    barrier(i);
#ifdef SHORT
    if                                  /* third party: node 1's word, from the home */
    :: i == N - 1 && i != 1 -> read(i, 2, v)
    :: else -> skip
    fi;
#endif
    cs(i);
    done++
}

/* The communication thread: serves requests, installs pages. */
proctype Handler(byte i)
{
    mtype t;
    byte s, a, b, c, d, e, k;

end:
    do
    :: req[i]?t, s, a, b, c, d, e ->
        atomic {
            if
            :: t == PAGE_REQ ->
                assert(i == HOME);
#ifndef MUT_NO_DEFER
                if
                :: a > epoch[i] -> deferred[s] = 1; defep[s] = a   /* too_early */
                :: else -> serve(s)
                fi
#else
                serve(s)
#endif
            :: t == DIFF || t == BDIFF ->
                assert(i == HOME);
                k = 0;
                do
                :: k < W ->
                    if
                    :: a & (1 << k) ->
                        copy[HOME * W + k] = (k == 0 -> b : (k == 1 -> c : (k == 2 -> d : e)))
                    :: else -> skip
                    fi;
                    k++
                :: else -> break
                od;
                if
                :: t == DIFF -> rep[s]!DIFF_ACK, 0
                :: else -> bdiffs++              /* no ack: counted (barrier.c) */
                fi
            :: t == LOCK_REQ ->
                if
                :: !held -> held = 1; holder = s; rep[s]!GRANT, lnotice
                :: else -> waiting = waiting | (1 << s)
                fi
            :: t == LOCK_REL ->
                add_notices(s, a, b);
                rack[s]!0;
                pass_on(k)
            :: t == BAR_ENTER ->
                assert(i == 0);
                if
                :: a && bwriter == 0 -> bwriter = s + 1
                :: a && bwriter != 0 && bwriter != s + 1 -> bwriter = MANY
                :: else -> skip
                fi;
                bsent = bsent + b;
                arrived++;
                if
                :: arrived == N ->
                    bexpect = bsent; bsent = 0;
                    k = 0;
                    do :: k < N -> rep[k]!BAR_REL, bwriter; k++ :: else -> break od;
                    arrived = 0; bwriter = 0
                :: else -> skip
                fi
            fi
        }
    :: pgc[i]?a, b, c, d -> install(i, a, b, c, d)
    :: atomic { i == HOME && deferred[1] && defep[1] <= epoch[i] -> deferred[1] = 0; serve(1) }
#if N > 2
    :: atomic { i == HOME && deferred[2] && defep[2] <= epoch[i] -> deferred[2] = 0; serve(2) }
#endif
    od
}

/* dsm_prefetch: one asynchronous fetch, at any moment, of an invalid page. */
proctype Prefetcher(byte i)
{
    if
    :: atomic { st[i] == INVALID -> st[i] = INFLIGHT;
                req[HOME]!PAGE_REQ, i, STAMP(i), 0, 0, 0, 0 }
    :: skip
    fi
}

init
{
    byte i;

    atomic {
        st[HOME] = RW;          /* the home's master copy, not trapped yet */
        i = 0;
        do
        :: i < N ->
            run Handler(i);
            run App(i);
#ifdef SHORT
            if :: i == 1 -> run Prefetcher(i) :: else -> skip fi;
#else
            if :: i != HOME -> run Prefetcher(i) :: else -> skip fi;
#endif
            i++
        :: else -> break
        od
    }
    (done == N);
    /* Every diff reached the home: the master holds what the program wrote. */
    i = 0;
    do
    :: i < W -> assert(copy[HOME * W + i] == expect[i]); i++
    :: else -> break
    od
}
