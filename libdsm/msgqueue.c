/*
 * msgqueue.c - the send queue of the `queue` transport: many producers
 * (application threads, including the fault handler), one consumer (the
 * communication thread).
 *
 * A mutex-protected singly linked list.  The critical sections are a few
 * pointer moves, so the lock is held for nanoseconds; the consumer detaches
 * the whole list at once, so it takes the lock once per batch, not per
 * message.  The head pointer alone is also peeked at without the lock
 * (dsm__mq_empty), so every write to it is an atomic store.  The fault
 * handler may push: the lock is never held by a thread while it touches
 * shared memory, so a fault cannot interrupt a holder.
 */
#include "libc.h"
#include "dsm_pure.h"

void dsm__mq_init(struct dsm_mqueue *q)
{
    pthread_mutex_init(&q->lock, NULL);
    q->head = q->tail = NULL;
    q->pushed = 0;
}

void dsm__mq_destroy(struct dsm_mqueue *q)
{
    pthread_mutex_destroy(&q->lock);
}

int dsm__mq_push(struct dsm_mqueue *q, struct dsm_qnode *n)
{
    int was_empty;

    n->next = NULL;
    pthread_mutex_lock(&q->lock);
    was_empty = q->head == NULL;
    /* The head is also read without the lock by dsm__mq_empty: writes to
     * it are atomic (release: the peeker that sees the node sees its
     * link too, though it takes the lock before following it anyway). */
    if (was_empty)
        __atomic_store_n(&q->head, n, __ATOMIC_RELEASE);
    else
        q->tail->next = n;
    q->tail = n;
    q->pushed++;
    pthread_mutex_unlock(&q->lock);
    return was_empty;
}

struct dsm_qnode *dsm__mq_take_all(struct dsm_mqueue *q)
{
    struct dsm_qnode *h;

    pthread_mutex_lock(&q->lock);
    h = q->head;
    __atomic_store_n(&q->head, NULL, __ATOMIC_RELAXED);
    q->tail = NULL;
    pthread_mutex_unlock(&q->lock);
    return h;
}

int dsm__mq_empty(struct dsm_mqueue *q)
{
    /* A racy peek is enough for the consumer's "anything to do?" check: a
     * push it misses is seen on its next loop, and pushers wake it. */
    return __atomic_load_n(&q->head, __ATOMIC_ACQUIRE) == NULL;
}
