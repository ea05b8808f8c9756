/*
 * atomic.c - remote atomic operations, run at the page's home.
 *
 * A DSM word is only atomic where its master copy lives: the home.  The
 * requester sends ATOMIC_REQ (page, offset, operation, operands) and waits
 * for ATOMIC_REPLY; the home runs the operation on its system view with the
 * processor's atomic instructions, so remote requests (served under the
 * progress token) and the home's own threads (which call dsm__atomic too)
 * are atomic with respect to each other.  The home then records the page as
 * written in this interval, so that the next barrier or lock release
 * invalidates the copies other nodes hold.
 *
 * The pair operations act on a 16-byte pair of words under one mutex: a
 * load and a store of both words, and the operations a runtime registers
 * (dsm__atomic_register), such as the shim's grab of a loop's next chunk.
 * They are the runtime's own bookkeeping: no copy of a pair is kept up to
 * date at the requester, and dsm_flush does not announce them.
 *
 * Threads: dsm__atomic from any application thread; on_atomic_req and
 * on_atomic_reply (the handlers of ATOMIC_REQ, ATOMIC_REPLY) under the
 * progress token; dsm__atomic_register on the main thread at start-up.
 */
#include <string.h>

#include "dsm_internal.h"

static pthread_mutex_t pair_lock = PTHREAD_MUTEX_INITIALIZER;

struct atomic_result { uint64_t r, r2; };

/* The registered pair operations.  Written before the communication thread
 * starts (dsm__atomic_register's contract) and read-only after; the atomic
 * accesses cost nothing and keep a late registration well defined. */
static dsm__pair_fn pair_fns[DSM_PAIR_FN_MAX];
static uint32_t pair_mask;          /* bit k: pair_fns[k] is set */

void dsm__atomic_register(unsigned id, dsm__pair_fn fn)
{
    if (id >= DSM_PAIR_FN_MAX || !fn)
        dsm__fatal("internal error: pair operation %u registered with %s (ids go from 0 "
                   "to %d)", id, fn ? "a bad id" : "no function", DSM_PAIR_FN_MAX - 1);
    __atomic_store_n(&pair_fns[id], fn, __ATOMIC_RELEASE);
    __atomic_fetch_or(&pair_mask, 1u << id, __ATOMIC_RELEASE);
}

static dsm__pair_fn pair_fn(unsigned op)
{
    if (op < DSM_AOP_PAIR_FN || op >= DSM_AOP_PAIR_FN + DSM_PAIR_FN_MAX)
        return NULL;
    return __atomic_load_n(&pair_fns[op - DSM_AOP_PAIR_FN], __ATOMIC_ACQUIRE);
}

uint32_t dsm__atomic_pair_fns(void)
{
    return __atomic_load_n(&pair_mask, __ATOMIC_ACQUIRE);
}

static int modifies(int op)
{
    return op != DSM_AOP_LOAD && op != DSM_AOP_PAIR_LOAD;
}

#define FETCH_OPS(T, q)                                                        \
    switch (op) {                                                              \
    case DSM_AOP_LOAD:  return __atomic_load_n(q, __ATOMIC_SEQ_CST);           \
    case DSM_AOP_STORE: __atomic_store_n(q, (T)a, __ATOMIC_SEQ_CST); return 0; \
    case DSM_AOP_XCHG:  return __atomic_exchange_n(q, (T)a, __ATOMIC_SEQ_CST); \
    case DSM_AOP_CAS: {                                                        \
        T expected = (T)b;                                                     \
        *r2 = __atomic_compare_exchange_n(q, &expected, (T)a, 0,               \
                                          __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
        return expected;                                                       \
    }                                                                          \
    case DSM_AOP_FETCH_ADD:  return __atomic_fetch_add(q, (T)a, __ATOMIC_SEQ_CST);  \
    case DSM_AOP_FETCH_SUB:  return __atomic_fetch_sub(q, (T)a, __ATOMIC_SEQ_CST);  \
    case DSM_AOP_FETCH_AND:  return __atomic_fetch_and(q, (T)a, __ATOMIC_SEQ_CST);  \
    case DSM_AOP_FETCH_OR:   return __atomic_fetch_or(q, (T)a, __ATOMIC_SEQ_CST);   \
    case DSM_AOP_FETCH_XOR:  return __atomic_fetch_xor(q, (T)a, __ATOMIC_SEQ_CST);  \
    case DSM_AOP_FETCH_NAND: return __atomic_fetch_nand(q, (T)a, __ATOMIC_SEQ_CST); \
    default: break;                                                            \
    }

static uint64_t pair_op(uint64_t *w, const struct dsm_wire_atomic *o, uint64_t *r2)
{
    uint64_t r = 0;
    pthread_mutex_lock(&pair_lock);
    if (o->op == DSM_AOP_PAIR_LOAD) {
        r = w[0];
        *r2 = w[1];
    } else if (o->op == DSM_AOP_PAIR_STORE) {
        w[0] = o->a;
        w[1] = o->b;
    } else {
        r = pair_fn(o->op)(w, o->a, o->b, o->c, o->d, r2);   /* valid_op: registered */
    }
    pthread_mutex_unlock(&pair_lock);
    return r;
}

/* Run one operation on the master copy (system view) of page p. */
static uint64_t exec_op(size_t p, const struct dsm_wire_atomic *o, uint64_t *r2)
{
    unsigned char *at = dsm__sys_page(p) + o->offset;
    uint64_t a = o->a, b = o->b;
    int op = o->op;

    *r2 = 0;
    if (op >= DSM_AOP_PAIR_LOAD)
        return pair_op((uint64_t *)(void *)at, o, r2);
    switch (o->size) {
    case 1: { uint8_t *q = at;  FETCH_OPS(uint8_t, q)  break; }
    case 2: { uint16_t *q = (uint16_t *)(void *)at; FETCH_OPS(uint16_t, q) break; }
    case 4: { uint32_t *q = (uint32_t *)(void *)at; FETCH_OPS(uint32_t, q) break; }
    case 8: { uint64_t *q = (uint64_t *)(void *)at; FETCH_OPS(uint64_t, q) break; }
    }
    dsm__fatal("internal error: atomic operation %d of size %d", op, o->size);
}

static void mark_home_write(size_t p)
{
    dsm__page_lock(p);
    dsm__pt_mark_written(p);
    dsm__page_unlock(p);
}

/* Keep this node's copy of the word (if it holds one) equal to the value
 * the operation left at the home, so that this thread's plain reads that
 * follow see its own atomic update.  The twin gets it too: it is not a
 * write of ours to send back in a diff. */
static void refresh_copy(size_t p, const struct dsm_wire_atomic *o, uint64_t old, uint64_t ok)
{
    struct dsm_page *pg = &dsm__g.pages[p];
    uint64_t v;
    switch (o->op) {
    case DSM_AOP_LOAD:       v = old; break;
    case DSM_AOP_STORE:
    case DSM_AOP_XCHG:       v = o->a; break;
    case DSM_AOP_CAS:        v = ok ? o->a : old; break;
    case DSM_AOP_FETCH_ADD:  v = old + o->a; break;
    case DSM_AOP_FETCH_SUB:  v = old - o->a; break;
    case DSM_AOP_FETCH_AND:  v = old & o->a; break;
    case DSM_AOP_FETCH_OR:   v = old | o->a; break;
    case DSM_AOP_FETCH_XOR:  v = old ^ o->a; break;
    case DSM_AOP_FETCH_NAND: v = ~(old & o->a); break;
    default: return;
    }
    dsm__page_lock(p);
    /* A PREFETCHED copy is valid too (in the system view; the application
     * view opens it at the first access): left as it was, a thread's own
     * atomic was missing from it, and a plain store after the open twinned
     * the old word, so that its diff lost the store (tests/omp
     * task_taskgroup_nested on 3 ranks with DSM_PREFETCH=barriers: a
     * thread's clear of counters it had updated atomically never reached
     * the home, 1-2 runs in 40). */
    if (pg->home != dsm__g.rank &&
        (pg->state == DSM_P_READ_ONLY || pg->state == DSM_P_READ_WRITE ||
         pg->state == DSM_P_PREFETCHED)) {
        memcpy(dsm__sys_page(p) + o->offset, &v, o->size);   /* little-endian */
        if (pg->flags & DSM_PF_TWIN)
            memcpy(dsm__twin_page(p) + o->offset, &v, o->size);
    }
    dsm__page_unlock(p);
}

static int valid_op(const struct dsm_wire_atomic *o, size_t ps)
{
    if (o->op >= DSM_AOP_PAIR_FN && !pair_fn(o->op))
        return 0;                   /* not registered, or beyond the table */
    if (o->op >= DSM_AOP_PAIR_LOAD)
        return o->size == 16 && o->offset % 16 == 0 && o->offset <= ps - 16;
    if (o->op > DSM_AOP_FETCH_NAND)
        return 0;
    return (o->size == 1 || o->size == 2 || o->size == 4 || o->size == 8) &&
           o->offset % o->size == 0 && o->offset <= ps - o->size;
}

/* The program's data changed at its home (done): this node's next
 * dsm_flush tells the others (flush.c).  The pairs are the runtime's own. */
static void announce(size_t p, enum dsm_aop op)
{
    if (op < DSM_AOP_PAIR_LOAD && modifies(op)) {
        uint32_t pg32 = (uint32_t)p;
        dsm__pt_add_announce(&pg32, 1);
    }
}

uint64_t dsm__atomic(void *addr, enum dsm_aop op, unsigned size, uint64_t a, uint64_t b,
                     uint64_t c, uint64_t d, uint64_t *r2)
{
    struct dsm_global *g = &dsm__g;
    struct dsm_wire_atomic o;
    uint64_t dummy;
    size_t p;

    if (!r2)
        r2 = &dummy;
    if (!dsm__in_region(addr))
        dsm__fatal("internal error: atomic operation on %p, outside the shared region", addr);
    p = dsm__page_of(addr);
    memset(&o, 0, sizeof o);
    o.offset = (uint32_t)((uintptr_t)addr - (uintptr_t)dsm__app_page(p));
    o.op = (uint8_t)op;
    o.size = (uint8_t)size;
    o.a = a;
    o.b = b;
    o.c = c;
    o.d = d;
    if (op >= DSM_AOP_PAIR_FN && !pair_fn(op))
        dsm__fatal("internal error: pair operation %d is not registered "
                   "(dsm__atomic_register)", (int)op - DSM_AOP_PAIR_FN);
    if (!valid_op(&o, g->page_size))
        dsm__fatal("atomic operation on %p (%u bytes) is misaligned: atomic variables "
                   "in shared memory must be aligned to their size", addr, size);
    if (g->pages[p].state == DSM_P_UNALLOC)
        dsm__fatal("atomic operation on %p, which is not allocated shared memory", addr);
    DSM_STAT_ADD(atomics, 1);
    if (g->pages[p].home == g->rank) {
        uint64_t r = exec_op(p, &o, r2);
        if (modifies(op))
            mark_home_write(p);
        announce(p, op);
        return r;
    }

    /* This thread's plain writes to the page must reach the home before the
     * operation (program order); MPI keeps the two messages in order. */
    DSM_TRACE_ENTER(DSM_TR_ATOMIC_BEGIN, op, g->pages[p].home, p, 0);
    if (op < DSM_AOP_PAIR_LOAD && (g->pages[p].flags & DSM_PF_TWIN))
        dsm__flush_page_now(p);

    struct atomic_result res = { 0, 0 };
    uint64_t t0 = dsm__now_ns();
    uint32_t id = dsm__waiter_get(DSM_WAIT_ATOMIC, 1, &res);
    dsm__waiter_note(id, g->pages[p].home, p);
    struct dsm_msg *m = dsm__msg_new(DSM_MSG_ATOMIC_REQ, g->pages[p].home, sizeof o);
    m->hdr.id = (uint32_t)p;
    m->hdr.waiter = id;
    m->hdr.len = sizeof o;
    memcpy(m->payload, &o, sizeof o);
    dsm__msg_send(m);
    dsm__waiter_wait(id);
    dsm__waiter_put(id);
    DSM_STAT_ADD(remote_atomics, 1);
    DSM_STAT_ADD(atomic_ns, dsm__now_ns() - t0);
    DSM_TRACE_LEAVE(DSM_TR_ATOMIC_END, op, g->pages[p].home, p, 0);
    *r2 = res.r2;
    if (op < DSM_AOP_PAIR_LOAD)
        refresh_copy(p, &o, res.r, res.r2);
    announce(p, op);
    return res.r;
}

static void on_atomic_req(const struct dsm_wire_hdr *h, const unsigned char *payload)
{
    struct dsm_wire_atomic o;
    size_t p = h->id;
    uint64_t r, r2;

    if (h->id >= dsm__g.npages || h->len != sizeof(struct dsm_wire_atomic))
        dsm__msg_malformed(h);
    if (dsm__defer_early(h, payload))
        return;
    memcpy(&o, payload, sizeof o);
    if (p >= dsm__g.npages || dsm__g.pages[p].home != dsm__g.rank ||
        dsm__g.pages[p].state == DSM_P_UNALLOC || !valid_op(&o, dsm__g.page_size))
        dsm__fatal("malformed ATOMIC_REQ from rank %d: page %zu is not homed here or "
                   "operation %u of %u bytes at offset %u is invalid",
                   h->src, p, o.op, o.size, o.offset);
    r = exec_op(p, &o, &r2);
    if (modifies(o.op))
        mark_home_write(p);
    struct dsm_msg *m = dsm__msg_new(DSM_MSG_ATOMIC_REPLY, h->src, 0);
    m->hdr.waiter = h->waiter;
    m->hdr.arg = r;
    m->hdr.arg2 = r2;
    dsm__msg_send(m);
}

static void on_atomic_reply(const struct dsm_wire_hdr *h, const unsigned char *pl)
{
    (void)pl;
    if (h->len != 0)
        dsm__msg_malformed(h);
    struct dsm_waiter *w = dsm__waiter_at(h->waiter, DSM_WAIT_ATOMIC);
    if (!w)
        dsm__fatal("malformed ATOMIC_REPLY from rank %d: waiter %u is not waiting",
                   h->src, h->waiter);
    struct atomic_result *res = w->ctx;
    res->r = h->arg;
    res->r2 = h->arg2;
    dsm__waiter_complete(w);
}

void dsm__atomic_handlers(void)
{
    dsm__handler_register(DSM_MSG_ATOMIC_REQ, on_atomic_req);
    dsm__handler_register(DSM_MSG_ATOMIC_REPLY, on_atomic_reply);
}
