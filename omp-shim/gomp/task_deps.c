/*
 * task_deps.c - depend clauses: the last writer and the readers since of
 * each address among the children of one task (a hash table in the parent),
 * and the edges from predecessors to a new task; the heap blocks a task's
 * dependences name (prefetched before it runs, and where it writes one,
 * the rank it should run on: task.c).
 *
 * Orders: in after the last out; out, inout, mutexinoutset and inoutset
 * after every earlier one (stricter than needed for the last two, an order
 * OpenMP allows).
 *
 * Threads: OpenMP threads creating tasks, with T.mu (task.c) held.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "task_internal.h"

void shim_dep_table_free(struct dep_table *d)
{
    if (!d)
        return;
    for (int i = 0; i < DEP_BUCKETS; i++) {
        struct dep_entry *e = d->b[i], *n;
        for (; e; e = n) {
            n = e->next;
            if (e->last_out)
                shim_task_unref(e->last_out);
            for (int k = 0; k < e->nreaders; k++)
                shim_task_unref(e->readers[k]);
            free(e->readers);
            free(e);
        }
    }
    free(d);
}

static void add_edge(struct task *pred, struct task *t)
{
    if (pred == t || pred->state == ST_DONE)
        return;
    for (int i = 0; i < pred->nsucc; i++)
        if (pred->succ[i] == t)
            return;
    if (pred->nsucc == pred->capsucc) {
        pred->capsucc = pred->capsucc ? 2 * pred->capsucc : 4;
        pred->succ = shim_task_xrealloc(pred->succ, (size_t)pred->capsucc * sizeof *pred->succ);
    }
    pred->succ[pred->nsucc++] = t;
    t->npred++;
}

static struct dep_entry *dep_lookup(struct task *parent, void *addr)
{
    if (!parent->deps)
        parent->deps = shim_task_xcalloc(1, sizeof *parent->deps);
    uintptr_t h = (uintptr_t)addr;
    h = (h >> 3) ^ (h >> 12);
    struct dep_entry **b = &parent->deps->b[h % DEP_BUCKETS];
    for (struct dep_entry *e = *b; e; e = e->next)
        if (e->addr == addr)
            return e;
    struct dep_entry *e = shim_task_xcalloc(1, sizeof *e);
    e->addr = addr;
    e->next = *b;
    *b = e;
    return e;
}

static void dep_add(struct task *parent, struct task *t, void *addr, int kind)
{
    struct dep_entry *e = dep_lookup(parent, addr);
    if (e->last_out)
        add_edge(e->last_out, t);
    if (kind == DEP_IN) {
        /* Drop readers that are done, then add this one. */
        int k = 0;
        for (int i = 0; i < e->nreaders; i++) {
            if (e->readers[i]->state == ST_DONE)
                shim_task_unref(e->readers[i]);
            else
                e->readers[k++] = e->readers[i];
        }
        e->nreaders = k;
        if (e->nreaders == e->cap) {
            e->cap = e->cap ? 2 * e->cap : 4;
            e->readers = shim_task_xrealloc(e->readers, (size_t)e->cap * sizeof *e->readers);
        }
        e->readers[e->nreaders++] = t;
        t->refs++;
        return;
    }
    /* out, inout, and (more strictly than needed, which OpenMP allows:
     * an order among them is one of the permitted schedules)
     * mutexinoutset and inoutset. */
    for (int i = 0; i < e->nreaders; i++) {
        add_edge(e->readers[i], t);
        shim_task_unref(e->readers[i]);
    }
    e->nreaders = 0;
    if (e->last_out)
        shim_task_unref(e->last_out);
    e->last_out = t;
    t->refs++;
}

/* Call fn(ctx, address, kind) for each dependence of GCC's depend array:
 * either depend[0] = n, depend[1] = out/inout count, then n addresses
 * (out/inout first); or depend[0] = 0, depend[1] = n, depend[2] =
 * out/inout, depend[3] = mutexinoutset, depend[4] = in counts, their
 * addresses from depend[5], then the remaining n - those as pointers to
 * depend objects (address, kind). */
static void each_dep(void **depend, void (*fn)(void *ctx, void *addr, int kind), void *ctx)
{
    uintptr_t n = (uintptr_t)depend[0];
    if (n) {
        uintptr_t nout = (uintptr_t)depend[1];
        for (uintptr_t i = 0; i < n; i++)
            fn(ctx, depend[2 + i], i < nout ? DEP_OUT : DEP_IN);
        return;
    }
    n = (uintptr_t)depend[1];
    uintptr_t nout = (uintptr_t)depend[2], nmut = (uintptr_t)depend[3];
    uintptr_t nin = (uintptr_t)depend[4];
    uintptr_t i = 0;
    for (; i < nout + nmut + nin && i < n; i++)
        fn(ctx, depend[5 + i],
           i < nout ? DEP_OUT : i < nout + nmut ? DEP_MUTEXINOUTSET : DEP_IN);
    for (; i < n; i++) {
        void **obj = depend[5 + i];
        uintptr_t kind = (uintptr_t)obj[1];
        if (kind < DEP_IN || kind > DEP_INOUTSET)
            dsm__fatal("a depend clause with a dependence object of kind %lu, which "
                       "the OpenMP shim does not know (a depobj not initialised?)",
                       (unsigned long)kind);
        fn(ctx, obj[0], (int)kind);
    }
}

struct add_ctx { struct task *parent, *t; };

static void add_one(void *ctx, void *addr, int kind)
{
    struct add_ctx *c = ctx;
    dep_add(c->parent, c->t, addr, kind);
}

void shim_deps_of(struct task *parent, struct task *t, void **depend)
{
    struct add_ctx c = { parent, t };
    each_dep(depend, add_one, &c);
}

struct block_ctx { struct task_blocks *b; int aff_ranks; };

/* Note addr if it starts a block of the shared heap (its size from the
 * block's header). */
static void note_block(void *ctx, void *addr, int kind)
{
    struct block_ctx *c = ctx;
    struct task_blocks *b = c->b;
    if (b->npf >= PF_DEPS || !addr)
        return;
    size_t bytes = shim_heap_block_size(addr);
    if (!bytes)
        return;
    if (kind != DEP_IN && !b->aff1 && c->aff_ranks > 1) {
        /* A task that writes the block should run at the block's home
         * (homes move only at barriers): its writes then cost no diff, and
         * only the block's readers fetch it. */
        int home = dsm_rt_page_home(dsm_rt_page_of(addr));
        if (home >= 0 && home < c->aff_ranks)
            b->aff1 = 1 + home;
    }
    b->pf[b->npf].addr = (uint64_t)(uintptr_t)addr;
    b->pf[b->npf].bytes = (uint32_t)(bytes < PF_BLOCK_MAX ? bytes : PF_BLOCK_MAX);
    b->npf++;
}

void shim_deps_blocks(void **depend, int aff_ranks, struct task_blocks *b)
{
    struct block_ctx c = { b, aff_ranks };
    memset(b, 0, sizeof *b);
    each_dep(depend, note_block, &c);
}
