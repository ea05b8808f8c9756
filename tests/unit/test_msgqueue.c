/*
 * test_msgqueue.c - the multi-producer single-consumer send queue
 * (libdsm/msgqueue.c).
 *
 * Single-threaded cases check FIFO order, the "was empty" result of a push
 * and the reuse of nodes.  The concurrent case runs 4 producer threads and
 * one consumer taking batches while they push; the consumer only records
 * what it saw, and everything is checked after the threads are joined.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <cmocka.h>

#include "dsm_pure.h"

struct item {
    struct dsm_qnode node;    /* first member: a node pointer is an item pointer */
    int producer;
    int seq;
};

static struct item *item_of(struct dsm_qnode *n)
{
    return (struct item *)((char *)n - offsetof(struct item, node));
}

static void test_empty(void **state)
{
    struct dsm_mqueue q;

    (void)state;
    dsm__mq_init(&q);
    assert_true(dsm__mq_empty(&q));
    assert_null(dsm__mq_take_all(&q));
    assert_null(dsm__mq_take_all(&q));
    assert_true(dsm__mq_empty(&q));
    dsm__mq_destroy(&q);
}

static void test_fifo(void **state)
{
    struct dsm_mqueue q;
    struct item it[10];
    struct dsm_qnode *n;
    int i;

    (void)state;
    dsm__mq_init(&q);
    for (i = 0; i < 10; i++) {
        it[i].seq = i;
        it[i].node.next = (struct dsm_qnode *)&it[(i + 3) % 10];  /* stale link */
        dsm__mq_push(&q, &it[i].node);
        assert_false(dsm__mq_empty(&q));
    }
    n = dsm__mq_take_all(&q);
    assert_true(dsm__mq_empty(&q));
    for (i = 0; i < 10; i++) {
        assert_non_null(n);
        assert_ptr_equal(item_of(n), &it[i]);
        n = n->next;
    }
    assert_null(n);                      /* the batch ends with NULL */
    assert_null(dsm__mq_take_all(&q));
    dsm__mq_destroy(&q);
}

static void test_push_reports_empty(void **state)
{
    struct dsm_mqueue q;
    struct item a, b, c;

    (void)state;
    dsm__mq_init(&q);
    assert_int_equal(dsm__mq_push(&q, &a.node), 1);
    assert_int_equal(dsm__mq_push(&q, &b.node), 0);
    assert_int_equal(dsm__mq_push(&q, &c.node), 0);
    assert_non_null(dsm__mq_take_all(&q));
    assert_int_equal(dsm__mq_push(&q, &c.node), 1);
    assert_int_equal(dsm__mq_push(&q, &a.node), 0);
    dsm__mq_destroy(&q);
}

/* Nodes are reused once the consumer is done with a batch: a node's stale
 * next pointer from an earlier batch must not leak into the new one. */
static void test_reuse_nodes(void **state)
{
    struct dsm_mqueue q;
    struct item a, b, c;
    struct dsm_qnode *n;

    (void)state;
    dsm__mq_init(&q);
    dsm__mq_push(&q, &a.node);
    dsm__mq_push(&q, &b.node);
    dsm__mq_push(&q, &c.node);
    n = dsm__mq_take_all(&q);
    assert_ptr_equal(n, &a.node);
    assert_ptr_equal(n->next, &b.node);
    assert_ptr_equal(n->next->next, &c.node);
    assert_null(n->next->next->next);

    /* a.next still points to b from the previous batch. */
    dsm__mq_push(&q, &c.node);
    dsm__mq_push(&q, &a.node);
    n = dsm__mq_take_all(&q);
    assert_ptr_equal(n, &c.node);
    assert_ptr_equal(n->next, &a.node);
    assert_null(n->next->next);
    dsm__mq_destroy(&q);
}

/* ---- concurrent producers ---------------------------------------------- */

#define NPROD 4
#define PER_PROD 10000
#define TOTAL (NPROD * PER_PROD)

static struct dsm_mqueue cq;
static struct item citems[NPROD][PER_PROD];
static struct item *seen[TOTAL];
static size_t nseen;
static int overflow;              /* the consumer saw more than TOTAL nodes */
static int producers_done;        /* set (release) after every producer joined */
static unsigned long batches;

static void *producer(void *arg)
{
    int p = (int)(intptr_t)arg;
    for (int i = 0; i < PER_PROD; i++) {
        citems[p][i].producer = p;
        citems[p][i].seq = i;
        dsm__mq_push(&cq, &citems[p][i].node);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (;;) {
        /* Read the flag before taking: if it was set and the queue is then
         * empty, every push has been taken. */
        int done = __atomic_load_n(&producers_done, __ATOMIC_ACQUIRE);
        struct dsm_qnode *n = dsm__mq_take_all(&cq);

        if (n == NULL) {
            if (done)
                break;
            sched_yield();
            continue;
        }
        batches++;
        for (; n != NULL; n = n->next) {
            if (nseen >= TOTAL) {
                overflow = 1;
                return NULL;
            }
            seen[nseen++] = item_of(n);
        }
    }
    return NULL;
}

static void test_concurrent(void **state)
{
    pthread_t prod[NPROD], cons;
    int last[NPROD];
    static unsigned char count[NPROD][PER_PROD];

    (void)state;
    dsm__mq_init(&cq);
    memset(citems, 0, sizeof(citems));
    nseen = 0;
    overflow = 0;
    producers_done = 0;
    batches = 0;
    assert_int_equal(pthread_create(&cons, NULL, consumer, NULL), 0);
    for (int p = 0; p < NPROD; p++)
        assert_int_equal(pthread_create(&prod[p], NULL, producer,
                                        (void *)(intptr_t)p), 0);
    for (int p = 0; p < NPROD; p++)
        assert_int_equal(pthread_join(prod[p], NULL), 0);
    __atomic_store_n(&producers_done, 1, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(cons, NULL), 0);

    assert_false(overflow);
    assert_int_equal(nseen, TOTAL);
    assert_true(dsm__mq_empty(&cq));
    memset(count, 0, sizeof(count));
    for (int p = 0; p < NPROD; p++)
        last[p] = -1;
    for (size_t k = 0; k < nseen; k++) {
        struct item *it = seen[k];
        int p, i;

        assert_true(it >= &citems[0][0] && it < &citems[0][0] + TOTAL);
        p = (int)((it - &citems[0][0]) / PER_PROD);
        i = (int)((it - &citems[0][0]) % PER_PROD);
        assert_int_equal(it->producer, p);
        assert_int_equal(it->seq, i);
        count[p][i]++;
        /* Per-producer order: each producer's items in push order. */
        if (i != last[p] + 1)
            fail_msg("producer %d: item %d seen after item %d", p, i, last[p]);
        last[p] = i;
    }
    for (int p = 0; p < NPROD; p++)
        for (int i = 0; i < PER_PROD; i++)
            if (count[p][i] != 1)
                fail_msg("producer %d item %d seen %d times", p, i, count[p][i]);
    print_message("%lu batches\n", batches);
    dsm__mq_destroy(&cq);
}

/* ---- the communication thread's loop ----------------------------------
 * comm/queue.c's progress loop peeks with dsm__mq_empty (no lock) while
 * application threads push, and takes the queue only when the peek saw
 * something.  The peek and the pushes touch the head pointer from different
 * threads: under ThreadSanitizer (make check-tsan) this case fails if any of
 * those accesses is a plain one.  Every push must still be seen once, in
 * per-producer order. */
static void *peeking_consumer(void *arg)
{
    (void)arg;
    for (;;) {
        int done = __atomic_load_n(&producers_done, __ATOMIC_ACQUIRE);
        if (dsm__mq_empty(&cq)) {
            if (done && dsm__mq_empty(&cq))
                break;
            sched_yield();
            continue;
        }
        struct dsm_qnode *n = dsm__mq_take_all(&cq);
        if (n == NULL)
            fail_msg("the queue looked non-empty but nothing was taken");
        batches++;
        for (; n != NULL; n = n->next) {
            if (nseen >= TOTAL) {
                overflow = 1;
                return NULL;
            }
            seen[nseen++] = item_of(n);
        }
    }
    return NULL;
}

static void test_concurrent_peek(void **state)
{
    pthread_t prod[NPROD], cons;
    int last[NPROD];

    (void)state;
    dsm__mq_init(&cq);
    memset(citems, 0, sizeof(citems));
    nseen = 0;
    overflow = 0;
    producers_done = 0;
    batches = 0;
    assert_int_equal(pthread_create(&cons, NULL, peeking_consumer, NULL), 0);
    for (int p = 0; p < NPROD; p++)
        assert_int_equal(pthread_create(&prod[p], NULL, producer,
                                        (void *)(intptr_t)p), 0);
    for (int p = 0; p < NPROD; p++)
        assert_int_equal(pthread_join(prod[p], NULL), 0);
    __atomic_store_n(&producers_done, 1, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(cons, NULL), 0);

    assert_false(overflow);
    assert_int_equal(nseen, TOTAL);
    for (int p = 0; p < NPROD; p++)
        last[p] = -1;
    for (size_t k = 0; k < nseen; k++) {
        struct item *it = seen[k];
        int p = it->producer, i = it->seq;
        if (i != last[p] + 1)
            fail_msg("producer %d: item %d seen after item %d", p, i, last[p]);
        last[p] = i;
    }
    for (int p = 0; p < NPROD; p++)
        assert_int_equal(last[p], PER_PROD - 1);
    dsm__mq_destroy(&cq);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_fifo),
        cmocka_unit_test(test_push_reports_empty),
        cmocka_unit_test(test_reuse_nodes),
        cmocka_unit_test(test_concurrent),
        cmocka_unit_test(test_concurrent_peek),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
