/*
 * firstcopy.c - a rank's first copy of a page (xfer_first_us, dsmtool(1)):
 * the PAGE_REPLY that brings a rank a page it never had takes longer to
 * receive than a later one of the same page, as the receiver's own frame
 * of that page is allocated and zeroed by the kernel as the reply lands
 * (in the rmr traces of bench.sh simulate: 22-31 us median in the
 * warm-up round, 5-7 us in the others).  This file marks, per event, the
 * PAGE_REPLY receives that are their rank's first of that page; sim.c
 * measures their mean send-to-receive time (calibrate) and replays them
 * with it.  Single-threaded, called from sim.c.
 */
#include <stdlib.h>

#include "sim_int.h"

#define MSG_PAGE_REPLY 2            /* libdsm/wire.h */

struct rx { uint64_t page, t; int rank; size_t gid; };

static int cmp_rx(const void *a, const void *b)
{
    const struct rx *x = a, *y = b;
    if (x->rank != y->rank) return x->rank - y->rank;
    if (x->page != y->page) return x->page < y->page ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->gid < y->gid ? -1 : x->gid > y->gid;
}

int first_setup(struct sim *s)
{
    size_t n = 0, cap = 1024;
    struct rx *v = malloc(cap * sizeof *v);
    s->first = calloc(s->nev + 1, 1);
    if (!v || !s->first) {
        free(v);
        return -1;
    }
    for (int i = 0; i < s->nthr; i++) {
        const struct thr *h = &s->thr[i];
        for (size_t k = 0; k < h->th->n; k++) {
            const struct dsm_trace_rec *e = &h->th->ev[k];
            if (e->kind != DSM_TR_RECV || e->sub != MSG_PAGE_REPLY)
                continue;
            if (n == cap) {
                struct rx *nv = realloc(v, 2 * cap * sizeof *v);
                if (!nv) {
                    free(v);
                    return -1;
                }
                v = nv;
                cap *= 2;
            }
            v[n].page = e->b;
            v[n].t = e->t;
            v[n].rank = h->rank;
            v[n++].gid = h->base + k;
        }
    }
    qsort(v, n, sizeof *v, cmp_rx);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || v[i].rank != v[i - 1].rank || v[i].page != v[i - 1].page)
            s->first[v[i].gid] = 1;
    free(v);
    return 0;
}
