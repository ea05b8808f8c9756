/*
 * msg.c - message buffers and the send entry point.
 *
 * Small messages (requests, acks) come from a preallocated pool so that the
 * fault handler never calls malloc; larger ones (pages, diffs, notice lists)
 * are malloc'd by the threads that build them (never the fault handler).  A
 * message belongs to the transport from dsm__msg_send() until MPI is done
 * with it; the transport then frees it.  Any thread.
 */
#include <stdlib.h>
#include <string.h>

#include "dsm_internal.h"

#define DSM_POOL_MSGS 4096

static unsigned char *pool_mem;
static struct dsm_msg *pool_free;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t pool_stride;

int dsm__msg_init(void)
{
    pool_stride = (sizeof(struct dsm_msg) + DSM_SMALL_PAYLOAD + 63) & ~(size_t)63;
    pool_mem = calloc(DSM_POOL_MSGS, pool_stride);
    if (!pool_mem)
        return -DSM_ENOMEM;
    pool_free = NULL;
    for (int i = DSM_POOL_MSGS - 1; i >= 0; i--) {
        struct dsm_msg *m = (struct dsm_msg *)(pool_mem + (size_t)i * pool_stride);
        m->pooled = 1;
        m->cap = DSM_SMALL_PAYLOAD;
        m->q.next = (struct dsm_qnode *)pool_free;
        pool_free = m;
    }
    return 0;
}

size_t dsm__msg_max_payload(void)
{
    /* One page with its header, or one page's worst-case diff. */
    size_t ps = dsm__g.page_size;
    size_t need = dsm__diff_max_size(ps) + sizeof(struct dsm_wire_diff);
    if (need < ps)
        need = ps;
    return need < 65536 ? 65536 : need;
}

struct dsm_msg *dsm__msg_new(int type, int dest, size_t cap)
{
    struct dsm_msg *m = NULL;

    if (cap <= DSM_SMALL_PAYLOAD) {
        pthread_mutex_lock(&pool_lock);
        m = pool_free;
        if (m)
            pool_free = (struct dsm_msg *)m->q.next;
        pthread_mutex_unlock(&pool_lock);
    }
    if (!m) {
        size_t c = cap < DSM_SMALL_PAYLOAD ? DSM_SMALL_PAYLOAD : cap;
        m = malloc(sizeof *m + c);
        if (!m)
            dsm__fatal("out of private memory for a %zu-byte message", cap);
        m->pooled = 0;
        m->cap = c;
    }
    memset(&m->hdr, 0, sizeof m->hdr);
    m->hdr.type = (uint16_t)type;
    m->ext = NULL;
    m->ext_len = 0;
    m->ext_n = 0;
    m->tag = DSM_TAG;
    m->recv_page = -1;
    m->recv_npages = 0;
    m->dest = dest;
    m->q.next = NULL;
    return m;
}

void dsm__msg_free(struct dsm_msg *m)
{
    if (!m->pooled) {
        free(m);
        return;
    }
    pthread_mutex_lock(&pool_lock);
    m->q.next = (struct dsm_qnode *)pool_free;
    pool_free = m;
    pthread_mutex_unlock(&pool_lock);
}

void dsm__msg_send_pages(int type, int dest, const uint32_t *pages, size_t n,
                         uint32_t id, uint32_t waiter, uint16_t flags,
                         uint64_t arg, uint64_t arg2)
{
    size_t per = dsm__msg_max_payload() / sizeof *pages, i = 0;
    do {
        size_t k = n - i < per ? n - i : per;
        struct dsm_msg *m = dsm__msg_new(type, dest, k * sizeof *pages);
        memcpy(m->payload, pages + i, k * sizeof *pages);
        i += k;
        m->hdr.len = (uint32_t)(k * sizeof *pages);
        m->hdr.id = id;
        m->hdr.waiter = waiter;
        m->hdr.flags = flags;
        m->hdr.arg = arg;
        m->hdr.arg2 = arg2;
        if (i == n)
            m->hdr.flags |= DSM_MF_LAST;
        dsm__msg_send(m);
    } while (i < n);
}

void dsm__msg_send(struct dsm_msg *m)
{
    m->hdr.src = dsm__g.rank;
    m->hdr.epoch = __atomic_load_n(&dsm__g.epoch, __ATOMIC_ACQUIRE);
    if (m->hdr.type == DSM_MSG_PAGE_REQ || m->hdr.type == DSM_MSG_PREFETCH_REQ) {
        /* One epoch ahead while this node applies a barrier (protocol.c,
         * dsm__fetch_epoch): the home must not hand out this copy before
         * it has reset its copyset for the same barrier. */
        uint32_t f = __atomic_load_n(&dsm__fetch_epoch, __ATOMIC_ACQUIRE);
        if (f > m->hdr.epoch)
            m->hdr.epoch = f;
    }
    if (m->hdr.type == DSM_MSG_HEARTBEAT) {
        dsm__g.ops->send(m);        /* not the program's traffic (liveness.c) */
        return;
    }
    if (m->dest != dsm__g.rank) {
        DSM_STAT_ADD(msgs_sent, 1);
        DSM_STAT_ADD(bytes_sent, m->ext ? m->ext_len : sizeof m->hdr + m->hdr.len);
    }
    /* Recorded before the transport has it: the send's time is never later
     * than the receive's, whichever thread receives.  A batch of pages is
     * one message but traced as a send per page, as its receiver traces
     * each page it installs (comm.c): dsmtool pairs sends and receives by
     * page. */
    if (m->ext_n) {
        for (size_t i = 0; i < m->ext_n; i++)
            DSM_TRACE(DSM_TR_SEND, m->hdr.type, m->dest,
                      (uint64_t)dsm__g.page_size | (uint64_t)m->hdr.waiter << 32,
                      (m->hdr.id + i) | (uint64_t)m->hdr.flags << 32);
    } else {
        DSM_TRACE(DSM_TR_SEND, m->hdr.type, m->dest,
                  (m->ext ? m->ext_len : sizeof m->hdr + m->hdr.len) |
                  (uint64_t)m->hdr.waiter << 32,
                  m->hdr.id | (uint64_t)m->hdr.flags << 32);
    }
    dsm__g.ops->send(m);
}
