/*
 * pthreads.c - the program's own threads (pthread_create in sequential
 * code, so on rank 0 only) with mutexes and condition variables in the
 * heap, which the shim shares (run-shim-test.sh.in, "pthreads").
 *
 *   pthreads pipeline   a producer and a consumer thread hand 2,000 items
 *                       through a queue of 4 slots guarded by a mutex and
 *                       two condition variables (cdo's pipeline of
 *                       operators, C++'s std::condition_variable); the
 *                       producer makes each item with an OpenMP loop, a
 *                       region on a thread of the program's, which must
 *                       have that thread alone; then main's region spans
 *                       the ranks as usual;
 *   pthreads recursive  a thread's trylock of a recursive mutex another
 *                       thread holds is EBUSY (each thread is an owner of
 *                       its own); then two threads each take it twice and
 *                       add to a counter with a yield between the read
 *                       and the write, 5,000 times: the count is exact;
 *   pthreads ranks      inside a region across ranks, thread 0 and the
 *                       team's last thread (another rank's) pass a turn
 *                       100 times with a condition variable on a mutex in
 *                       the heap: a signal from another rank cannot wake
 *                       the sleeper, which must still see the turn; then a
 *                       timed wait that nobody signals, called again after
 *                       each spurious wake-up, returns ETIMEDOUT, not before
 *                       its deadline, with the mutex held;
 *   pthreads io FILE    a thread of the program reads FILE with pread, over
 *                       and over, into a heap buffer on the page that
 *                       main's 300 regions write: each barrier
 *                       write-protects that page on rank 0, and a read in
 *                       the kernel then fails with EFAULT unless the shim
 *                       makes it again (266-330 failed reads of a run
 *                       without that);
 *   pthreads bigio FILE a thread of the program reads a 256 KiB FILE into
 *                       a heap buffer by read, pread, readv and fread in
 *                       turn while main's 300 regions read the buffer's
 *                       pages on every rank: each barrier write-protects
 *                       pages of it on rank 0, and a read in the kernel
 *                       that lost a page part-way came back short
 *                       (libnetcdf takes that for the file's end and
 *                       fills the rest with zeros: cdo under rma); each
 *                       read must return the file (107-198 of a run
 *                       failed, short, before the shim's private buffer);
 *   pthreads placement  an array that a schedule(static) region writes moves
 *                       its pages' homes to the ranks that wrote them
 *                       (first-touch placement); after the program started
 *                       a thread, a second array's do not: that thread
 *                       could drop a new home's copy during the barrier
 *                       (libdsm(7), THREADS; cdo stopped with "migrates
 *                       here but is INVALID here").
 *   pthreads placement-c11
 *                       the same with a thread started by C11's
 *                       thrd_create, which glibc does not start through
 *                       pthread_create's symbol.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <threads.h>
#include <time.h>

#define ITEMS 2000
#define SLOTS 4

struct queue {
    pthread_mutex_t mu;
    pthread_cond_t not_full, not_empty;
    long slot[SLOTS];
    int head, count;
    long sum;                   /* the consumer's */
    int bad;                    /* regions on the producer that had > 1 thread */
};

static long item_of(int i)
{
    long v = 0;
    /* A region on the producer thread: one thread, whatever was asked. */
#pragma omp parallel for reduction(+ : v) num_threads(4)
    for (int k = 0; k <= i % 50; k++)
        v += k + (omp_get_num_threads() > 1 ? 1000000 : 0);
    return v + i;
}

static void *producer(void *arg)
{
    struct queue *q = arg;
    for (int i = 0; i < ITEMS; i++) {
        long v = item_of(i);
        pthread_mutex_lock(&q->mu);
        while (q->count == SLOTS)
            pthread_cond_wait(&q->not_full, &q->mu);
        q->slot[(q->head + q->count) % SLOTS] = v;
        q->count++;
        pthread_cond_signal(&q->not_empty);
        pthread_mutex_unlock(&q->mu);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    struct queue *q = arg;
    for (int i = 0; i < ITEMS; i++) {
        pthread_mutex_lock(&q->mu);
        while (q->count == 0)
            pthread_cond_wait(&q->not_empty, &q->mu);
        q->sum += q->slot[q->head];
        q->head = (q->head + 1) % SLOTS;
        q->count--;
        pthread_cond_signal(&q->not_full);
        pthread_mutex_unlock(&q->mu);
    }
    return NULL;
}

static int pipeline(void)
{
    struct queue *q = calloc(1, sizeof *q);
    pthread_t p, c;
    long want = 0;
    if (!q || pthread_mutex_init(&q->mu, NULL) || pthread_cond_init(&q->not_full, NULL) ||
        pthread_cond_init(&q->not_empty, NULL))
        return 1;
    for (int i = 0; i < ITEMS; i++)
        want += i + (long)(i % 50) * (i % 50 + 1) / 2;
    if (pthread_create(&p, NULL, producer, q) || pthread_create(&c, NULL, consumer, q))
        return 1;
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    int team = 0;
#pragma omp parallel
#pragma omp master
    team = omp_get_num_threads();
    printf("pthreads: pipeline %d items, sums %s, main's team %d\n", ITEMS,
           q->sum == want ? "agree" : "differ", team);
    return q->sum != want;
}

struct counted {
    pthread_mutex_t mu;
    long n;
    int ready;                  /* threads started: both run at once */
    int held, tried, busy;      /* the trylock while the other holds it */
};

/* Thread A holds the mutex (twice) while thread B tries it: EBUSY, since
 * B is not its owner. */
static void *hold(void *arg)
{
    struct counted *k = arg;
    pthread_mutex_lock(&k->mu);
    pthread_mutex_lock(&k->mu);
    __atomic_store_n(&k->held, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&k->tried, __ATOMIC_SEQ_CST))
        sched_yield();
    pthread_mutex_unlock(&k->mu);
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

static void *try_held(void *arg)
{
    struct counted *k = arg;
    while (!__atomic_load_n(&k->held, __ATOMIC_SEQ_CST))
        sched_yield();
    int rc = pthread_mutex_trylock(&k->mu);
    k->busy = rc == EBUSY;
    if (rc == 0)
        pthread_mutex_unlock(&k->mu);
    __atomic_store_n(&k->tried, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void *add_many(void *arg)
{
    struct counted *k = arg;
    __atomic_add_fetch(&k->ready, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&k->ready, __ATOMIC_SEQ_CST) < 2)
        sched_yield();
    for (int i = 0; i < 5000; i++) {
        pthread_mutex_lock(&k->mu);
        pthread_mutex_lock(&k->mu);
        long v = k->n;
        sched_yield();
        k->n = v + 1;
        pthread_mutex_unlock(&k->mu);
        pthread_mutex_unlock(&k->mu);
    }
    return NULL;
}

static int recursive(void)
{
    struct counted *k = calloc(1, sizeof *k);
    pthread_mutexattr_t a;
    pthread_t t[2];
    if (!k || pthread_mutexattr_init(&a) ||
        pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE) ||
        pthread_mutex_init(&k->mu, &a))
        return 1;
    if (pthread_create(&t[0], NULL, hold, k) || pthread_create(&t[1], NULL, try_held, k))
        return 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, add_many, k))
            return 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("pthreads: recursive trylock of another's %s, count %ld of 10000\n",
           k->busy ? "EBUSY" : "not EBUSY", k->n);
    return !k->busy || k->n != 10000;
}

struct turns {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int turn;                   /* 0: thread 0's, 1: the last thread's */
    int rounds;
};

static int ranks(void)
{
    struct turns *s = calloc(1, sizeof *s);
    int bad = 0, timed = -1, team = 0;
    if (!s || pthread_mutex_init(&s->mu, NULL) || pthread_cond_init(&s->cv, NULL))
        return 1;
#pragma omp parallel reduction(+ : bad)
    {
        int me = omp_get_thread_num(), last = omp_get_num_threads() - 1;
#pragma omp master
        team = last + 1;
        if (last > 0 && (me == 0 || me == last)) {
            int side = me == 0 ? 0 : 1;
            for (int r = 0; r < 100; r++) {
                pthread_mutex_lock(&s->mu);
                while (s->turn != side)
                    pthread_cond_wait(&s->cv, &s->mu);
                if (s->rounds != 2 * r + side)
                    bad++;
                s->rounds++;
                s->turn = 1 - side;
                pthread_cond_broadcast(&s->cv);
                pthread_mutex_unlock(&s->mu);
            }
        }
#pragma omp barrier
        if (me == last) {
            struct timespec t;
            clock_gettime(CLOCK_REALTIME, &t);
            t.tv_nsec += 20000000;
            if (t.tv_nsec >= 1000000000) {
                t.tv_sec++;
                t.tv_nsec -= 1000000000;
            }
            pthread_mutex_lock(&s->mu);
            /* Nobody signals: every return before the deadline is a
             * spurious wake-up, as POSIX allows, and the caller waits on. */
            do
                timed = pthread_cond_timedwait(&s->cv, &s->mu, &t);
            while (timed == 0);
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            if (now.tv_sec < t.tv_sec || (now.tv_sec == t.tv_sec && now.tv_nsec < t.tv_nsec))
                bad++;
            /* Held again: a normal mutex's trylock by its holder is EBUSY. */
            if (pthread_mutex_trylock(&s->mu) != EBUSY)
                bad++;
            pthread_mutex_unlock(&s->mu);
        }
    }
    printf("pthreads: ranks team %d, %d turns, timed wait %s, %d failed\n", team,
           s->rounds, timed == ETIMEDOUT ? "ETIMEDOUT" : "not ETIMEDOUT", bad);
    return bad != 0 || timed != ETIMEDOUT || (team > 1 && s->rounds != 200);
}

/* A thread of the program reads a file into a heap buffer on the page that
 * main's regions write on every rank: each barrier write-protects it on
 * rank 0 while the read may be in the kernel. */
struct reader {
    char buf[64];
    long writes;                /* main's regions', same page */
    int fd, done, failed, reads;
};

static void *read_loop(void *arg)
{
    struct reader *r = arg;
    while (!__atomic_load_n(&r->done, __ATOMIC_SEQ_CST)) {
        ssize_t k = pread(r->fd, r->buf, sizeof r->buf, 0);
        if (k != (ssize_t)sizeof r->buf || r->buf[0] != 'x' || r->buf[63] != 'x')
            r->failed++;
        r->reads++;
    }
    return NULL;
}

static int io(const char *path)
{
    struct reader *r = calloc(1, sizeof *r);
    char line[64];
    pthread_t t;
    memset(line, 'x', sizeof line);
    FILE *f = fopen(path, "w");
    if (!r || !f || fwrite(line, 1, sizeof line, f) != sizeof line || fclose(f) != 0)
        return 1;
    r->fd = open(path, O_RDONLY);
    if (r->fd < 0 || pthread_create(&t, NULL, read_loop, r))
        return 1;
    for (int i = 0; i < 300; i++) {
#pragma omp parallel
        {
#pragma omp atomic
            r->writes++;
        }
    }
    __atomic_store_n(&r->done, 1, __ATOMIC_SEQ_CST);
    pthread_join(t, NULL);
    printf("pthreads: io while regions run: %s reads, %d failed, %s\n",
           r->reads > 0 ? "some" : "no", r->failed, r->writes >= 300 ? "ok" : "writes lost");
    return r->failed != 0 || r->reads == 0;
}

/* A thread of the program reads a 256 KiB file into a heap buffer of as
 * many pages, by read, pread, readv and fread in turn, while main's
 * regions read a byte of each of the buffer's pages on every rank: each
 * barrier write-protects on rank 0 the pages the last read wrote, also in
 * the middle of the next read.  Every read must return the whole file,
 * byte for byte. */
#define BIG (256 << 10)

struct big_reader {
    unsigned char *buf;
    const char *path;
    int done, failed, short_, reads;
    long writes;
};

static unsigned char big_byte(size_t i)
{
    return (unsigned char)(i * 131 + i / 4096 + 7);
}

static ssize_t big_read(int how, int fd, FILE *f, unsigned char *buf)
{
    struct iovec v[2] = { { buf, 100000 }, { buf + 100000, BIG - 100000 } };
    switch (how) {
    case 0:
        return lseek(fd, 0, SEEK_SET) == 0 ? read(fd, buf, BIG) : -1;
    case 1:
        return pread(fd, buf, BIG, 0);
    case 2:
        return lseek(fd, 0, SEEK_SET) == 0 ? readv(fd, v, 2) : -1;
    default:
        /* 64 elements of 4 KiB: a large fread goes to read(2) directly. */
        return fseek(f, 0, SEEK_SET) == 0 ? (ssize_t)fread(buf, 4096, BIG / 4096, f) * 4096
                                          : -1;
    }
}

static void *big_read_loop(void *arg)
{
    struct big_reader *r = arg;
    int fd = open(r->path, O_RDONLY);
    FILE *f = fopen(r->path, "r");
    if (fd < 0 || !f) {
        r->failed = -1;
        return NULL;
    }
    for (int i = 0; !__atomic_load_n(&r->done, __ATOMIC_SEQ_CST); i++) {
        memset(r->buf, 0, BIG);
        ssize_t k = big_read(i % 4, fd, f, r->buf);
        int bad = k != BIG;
        r->short_ += k >= 0 && k < BIG;
        for (size_t j = 0; !bad && j < BIG; j++)
            bad = r->buf[j] != big_byte(j);
        if (bad && r->failed < 4)
            fprintf(stderr, "pthreads: bigio read %d (%s) returned %zd of %d bytes%s\n",
                    i, (const char *[]){ "read", "pread", "readv", "fread" }[i % 4], k, BIG,
                    k == BIG ? ", not the file's" : "");
        r->failed += bad;
        r->reads++;
    }
    close(fd);
    fclose(f);
    return NULL;
}

static int bigio(const char *path)
{
    struct big_reader *r = calloc(1, sizeof *r);
    unsigned char *want = malloc(BIG);
    pthread_t t;
    if (!r || !want || !(r->buf = aligned_alloc(4096, BIG)))
        return 1;
    for (size_t j = 0; j < BIG; j++)
        want[j] = big_byte(j);
    FILE *f = fopen(path, "w");
    if (!f || fwrite(want, 1, BIG, f) != BIG || fclose(f) != 0)
        return 1;
    r->path = path;
    if (pthread_create(&t, NULL, big_read_loop, r))
        return 1;
    for (int i = 0; i < 300; i++) {
#pragma omp parallel
        {
            for (size_t p = 0; p < BIG; p += 4096)
                (void)((volatile unsigned char *)r->buf)[p];
#pragma omp atomic
            r->writes++;
        }
    }
    __atomic_store_n(&r->done, 1, __ATOMIC_SEQ_CST);
    pthread_join(t, NULL);
    printf("pthreads: bigio while regions run: %s reads, %d failed, %d short, %s\n",
           r->reads > 0 ? "some" : "no", r->failed, r->short_,
           r->writes >= 300 ? "ok" : "writes lost");
    return r->failed != 0 || r->reads == 0;
}

/* Pages of [a, a+len) whose home is not rank 0 (where malloc put them). */
static int moved(int (*home_of)(const void *), const char *a, size_t len, size_t ps)
{
    int n = 0;
    for (size_t off = 0; off < len; off += ps)
        n += home_of(a + off) != 0;
    return n;
}

static void *idle_thread(void *arg)
{
    *(volatile int *)arg = 1;
    return NULL;
}

static int idle_c11(void *arg)
{
    *(volatile int *)arg = 1;
    return 0;
}

static int placement(int c11)
{
    int (*home_of)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT, "dsm_home_of");
    size_t (*page_size)(void) = (size_t (*)(void))dlsym(RTLD_DEFAULT, "dsm_page_size");
    if (!home_of || !page_size) {
        fprintf(stderr, "pthreads: dsm_home_of not found: not under the OpenMP shim?\n");
        return 1;
    }
    size_t ps = page_size(), len = 32 * ps * (size_t)omp_get_max_threads();
    char *a = aligned_alloc(ps, len), *b = aligned_alloc(ps, len);
    int ran = 0;
    pthread_t t;
    thrd_t t11;
    if (!a || !b)
        return 1;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < len; i++)
        a[i] = (char)i;
    int moved_a = moved(home_of, a, len, ps);
    if (c11 ? thrd_create(&t11, idle_c11, &ran) != thrd_success ||
              thrd_join(t11, NULL) != thrd_success
            : pthread_create(&t, NULL, idle_thread, &ran) || pthread_join(t, NULL))
        return 1;
    if (!ran)
        return 1;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < len; i++)
        b[i] = (char)i;
    int moved_b = moved(home_of, b, len, ps);
    printf("pthreads: placement: first array moved %s, second array moved %d\n",
           moved_a > 0 ? "some" : "none", moved_b);
    return moved_a == 0 || moved_b != 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pthreads pipeline|recursive|ranks|placement|placement-c11|"
                "io FILE|bigio FILE\n");
        return 2;
    }
    if (!strcmp(argv[1], "io") && argc == 3)
        return io(argv[2]);
    if (!strcmp(argv[1], "bigio") && argc == 3)
        return bigio(argv[2]);
    if (!strcmp(argv[1], "pipeline"))
        return pipeline();
    if (!strcmp(argv[1], "recursive"))
        return recursive();
    if (!strcmp(argv[1], "ranks"))
        return ranks();
    if (!strcmp(argv[1], "placement"))
        return placement(0);
    if (!strcmp(argv[1], "placement-c11"))
        return placement(1);
    fprintf(stderr, "pthreads: unknown mode %s\n", argv[1]);
    return 2;
}
