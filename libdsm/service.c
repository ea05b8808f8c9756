/*
 * service.c - service calls: a function that another rank runs for this one.
 *
 * Some things exist on one rank only: a file that rank 0 opened is open
 * there and nowhere else.  A service is a function registered under a small
 * number on every rank (dsm__service_register, before the first call); a
 * thread calls dsm__call(node, service, request) and waits; node runs the
 * function on the request and sends its result and reply bytes back.
 *
 * Calls are served one at a time, in the order they arrive, by a service
 * thread of the serving rank, started when the first service is
 * registered.  Not by the communication thread: a service may block (a
 * read from a pipe), and the communication thread must keep serving pages
 * meanwhile.  The service thread touches no shared memory and holds no
 * libdsm lock while a service runs.  A request may arrive in a thread that
 * polls for its own page inside the SIGSEGV handler (the direct
 * transport), so taking it in calls no malloc: it goes into one of
 * DSM_SERVICE_SLOTS slots allocated at registration.
 *
 * Threads: dsm__call from any application thread; on_call_req and
 * on_call_reply (the handlers of CALL_REQ, CALL_REPLY) under the progress
 * token; the service thread.
 */
#include <stdlib.h>
#include <string.h>

#include "dsm_internal.h"

struct call_req {
    struct call_req *next;
    struct dsm_wire_hdr h;
    unsigned char data[DSM_CALL_MAX];
};

struct call_result {
    void   *reply;
    size_t  cap;
    size_t  len;
    int64_t r;
};

static dsm__service_fn services[DSM_SERVICE_MAX];
static struct {
    pthread_mutex_t lock;
    pthread_cond_t  cond;
    struct call_req *head, *tail, *free;
    struct call_req *slots;
    pthread_t thread;
    int started, stop;
} q = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, NULL, NULL,
        0, 0, 0 };

static void *serve(void *arg);

/* Once per process, before the first request can arrive: the slots (calloc:
 * pages untouched until used) and the service thread. */
void dsm__service_register(unsigned id, dsm__service_fn fn)
{
    if (id >= DSM_SERVICE_MAX)
        dsm__fatal("internal error: service %u registered (at most %d)", id,
                   DSM_SERVICE_MAX);
    pthread_mutex_lock(&q.lock);
    if (!q.slots) {
        q.slots = calloc(DSM_SERVICE_SLOTS, sizeof *q.slots);
        if (!q.slots)
            dsm__fatal("out of private memory for the service call slots");
        for (int i = DSM_SERVICE_SLOTS - 1; i >= 0; i--) {
            q.slots[i].next = q.free;
            q.free = &q.slots[i];
        }
    }
    if (!q.started) {
        if (pthread_create(&q.thread, NULL, serve, NULL) != 0)
            dsm__fatal("cannot start the service thread: out of threads?");
        q.started = 1;
    }
    services[id] = fn;
    pthread_mutex_unlock(&q.lock);
}

int64_t dsm__call(int node, unsigned id, const void *head, size_t hlen, const void *body,
                  size_t blen, void *reply, size_t cap, size_t *reply_len)
{
    struct dsm_global *g = &dsm__g;
    size_t len = hlen + blen;
    if (id >= DSM_SERVICE_MAX || len > DSM_CALL_MAX || node < 0 || node >= g->nodes ||
        node == g->rank)
        dsm__fatal("internal error: service call %u to rank %d with %zu bytes", id,
                   node, len);
    /* The request first: copying a body in shared memory may fault, and
     * the fault takes a waiter slot of its own. */
    struct dsm_msg *m = dsm__msg_new(DSM_MSG_CALL_REQ, node, len);
    m->hdr.id = id;
    m->hdr.len = (uint32_t)len;
    if (hlen)
        memcpy(m->payload, head, hlen);
    if (blen)
        memcpy(m->payload + hlen, body, blen);
    struct call_result res = { reply, cap, 0, 0 };
    uint32_t w = dsm__waiter_get(DSM_WAIT_CALL, 1, &res);
    dsm__waiter_note(w, node, id);
    m->hdr.waiter = w;
    dsm__msg_send(m);
    dsm__waiter_wait(w);
    dsm__waiter_put(w);
    if (reply_len)
        *reply_len = res.len;
    return res.r;
}

static void *serve(void *arg)
{
    (void)arg;
    unsigned char *out = malloc(DSM_CALL_MAX);
    if (!out)
        dsm__fatal("out of private memory for the service thread");
    pthread_mutex_lock(&q.lock);
    for (;;) {
        while (!q.head && !q.stop)
            pthread_cond_wait(&q.cond, &q.lock);
        if (!q.head)
            break;
        struct call_req *c = q.head;
        q.head = c->next;
        if (!q.head)
            q.tail = NULL;
        pthread_mutex_unlock(&q.lock);

        size_t olen = 0;
        int64_t r = services[c->h.id](c->h.src, c->data, c->h.len, out, &olen);
        if (olen > DSM_CALL_MAX)
            dsm__fatal("internal error: service %u replied %zu bytes", c->h.id, olen);
        struct dsm_msg *m = dsm__msg_new(DSM_MSG_CALL_REPLY, c->h.src, olen);
        m->hdr.id = c->h.id;
        m->hdr.waiter = c->h.waiter;
        m->hdr.len = (uint32_t)olen;
        m->hdr.arg = (uint64_t)r;
        if (olen)
            memcpy(m->payload, out, olen);
        dsm__msg_send(m);
        pthread_mutex_lock(&q.lock);
        c->next = q.free;
        q.free = c;
    }
    pthread_mutex_unlock(&q.lock);
    free(out);
    return NULL;
}

static void on_call_req(const struct dsm_wire_hdr *h, const unsigned char *payload)
{
    pthread_mutex_lock(&q.lock);
    struct call_req *c = q.free;
    if (!services[h->id] || !c) {
        pthread_mutex_unlock(&q.lock);
        if (!services[h->id])
            dsm__fatal("rank %d asked for service %u, which this rank has not registered "
                       "(a program that runs the runtime on top of libdsm on some ranks "
                       "only?)",
                       h->src, h->id);
        dsm__fatal("more than %d service calls wait here at once (from rank %d)",
                   DSM_SERVICE_SLOTS, h->src);
    }
    q.free = c->next;
    c->next = NULL;
    c->h = *h;
    memcpy(c->data, payload, h->len);
    if (q.tail)
        q.tail->next = c;
    else
        q.head = c;
    q.tail = c;
    pthread_cond_signal(&q.cond);
    pthread_mutex_unlock(&q.lock);
}

static void on_call_reply(const struct dsm_wire_hdr *h, const unsigned char *payload)
{
    struct dsm_waiter *w = dsm__waiter_at(h->waiter, DSM_WAIT_CALL);
    if (!w)
        dsm__fatal("malformed CALL_REPLY from rank %d: waiter %u is not waiting",
                   h->src, h->waiter);
    struct call_result *res = w->ctx;
    if (h->len > res->cap)
        dsm__fatal("malformed CALL_REPLY from rank %d: %u bytes for a buffer of %zu",
                   h->src, h->len, res->cap);
    if (h->len)
        memcpy(res->reply, payload, h->len);
    res->len = h->len;
    res->r = (int64_t)h->arg;
    dsm__waiter_complete(w);
}

void dsm__service_stop(void)
{
    pthread_mutex_lock(&q.lock);
    int started = q.started;
    q.stop = 1;
    pthread_cond_signal(&q.cond);
    pthread_mutex_unlock(&q.lock);
    if (started)
        pthread_join(q.thread, NULL);
    pthread_mutex_lock(&q.lock);
    q.started = 0;
    q.stop = 0;
    free(q.slots);
    q.slots = q.free = q.head = q.tail = NULL;
    memset(services, 0, sizeof services);
    pthread_mutex_unlock(&q.lock);
}

void dsm__service_handlers(void)
{
    dsm__handler_register(DSM_MSG_CALL_REQ, on_call_req);
    dsm__handler_register(DSM_MSG_CALL_REPLY, on_call_reply);
}
