/*
 * local_sync.c - OpenMP mutual exclusion while the shim is not running the
 * program across ranks: before start-up (the program's constructors) and
 * after the end (exit handlers and static destructors, which run after
 * dsm_finalize on every rank).  The process is then an ordinary one, with
 * the DSM gone or not yet there, so critical sections, atomic blocks,
 * ordered blocks and omp locks use process-local mutexes, one per key (the
 * lock's or the critical name's address, or a fixed key), made on first use
 * and never freed.
 *
 * Threads: any.
 */
#include <pthread.h>
#include <stdlib.h>

#include "shim.h"

#define BUCKETS 128

struct local_mutex {
    const void *key;
    pthread_mutex_t mu;
    struct local_mutex *next;
};

static struct local_mutex *buckets[BUCKETS];
static pthread_mutex_t map_mu = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t *mutex_of(const void *key)
{
    uintptr_t h = (uintptr_t)key;
    h ^= h >> 17;
    h *= 0x9e3779b97f4a7c15ULL;
    struct local_mutex **b = &buckets[(h >> 32) % BUCKETS], *m;

    pthread_mutex_lock(&map_mu);
    for (m = *b; m; m = m->next)
        if (m->key == key)
            break;
    if (!m) {
        m = calloc(1, sizeof *m);      /* from the shim: the private heap */
        if (!m)
            dsm__fatal("out of private memory for an OpenMP lock outside the run");
        m->key = key;
        pthread_mutex_init(&m->mu, NULL);
        m->next = *b;
        *b = m;
    }
    pthread_mutex_unlock(&map_mu);
    return &m->mu;
}

void shim_local_lock(const void *key)
{
    pthread_mutex_lock(mutex_of(key));
}

void shim_local_unlock(const void *key)
{
    pthread_mutex_unlock(mutex_of(key));
}

int shim_local_trylock(const void *key)
{
    return pthread_mutex_trylock(mutex_of(key)) == 0;
}
