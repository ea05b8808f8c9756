/*
 * applib_lib.c - a library an OpenMP test program links with (libapplib.so,
 * for tests/omp/applib.c): it allocates with malloc and strdup from its own
 * code, and hands the program a structure with a function pointer in it, as
 * libjpeg's memory manager does; and it keeps global variables of its own,
 * one guarded by its pthread mutexes, as GraphicsMagick keeps its
 * semaphores.  Plain C, no OpenMP.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "applib_lib.h"

static double value_at(const struct applib_table *t, long i)
{
    return t->v[i % t->n] * t->scale;
}

struct applib_table *applib_new(long n, double scale, const char *name)
{
    struct applib_table *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    t->v = calloc((size_t)n, sizeof *t->v);
    t->name = strdup(name);
    if (!t->v || !t->name) {
        free(t->v);
        free(t->name);
        free(t);
        return NULL;
    }
    t->n = n;
    t->scale = scale;
    t->value_at = value_at;
    for (long i = 0; i < n; i++)
        t->v[i] = (double)(i % 1000);
    return t;
}

void applib_free(struct applib_table *t)
{
    if (!t)
        return;
    free(t->v);
    free(t->name);
    free(t);
}

static int level;
static long total;
static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *nest_lock;      /* recursive */

void applib_set_level(int l)
{
    level = l;
    if (!nest_lock) {
        pthread_mutexattr_t a;
        nest_lock = malloc(sizeof *nest_lock);
        if (!nest_lock)
            abort();
        pthread_mutexattr_init(&a);
        pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
        pthread_mutex_init(nest_lock, &a);
        pthread_mutexattr_destroy(&a);
    }
}

int applib_level(void)
{
    return level;
}

void applib_add(long k, int try)
{
    if (try) {
        while (pthread_mutex_trylock(&total_lock) != 0)
            ;
    } else {
        pthread_mutex_lock(&total_lock);
    }
    pthread_mutex_lock(nest_lock);
    pthread_mutex_lock(nest_lock);
    total += k;
    pthread_mutex_unlock(nest_lock);
    pthread_mutex_unlock(nest_lock);
    pthread_mutex_unlock(&total_lock);
}

long applib_total(void)
{
    return total;
}

/* A count per thread, under a key the library makes once (pthread_once,
 * pthread_key_create into its globals), as gnulib's fstrcmp keeps its
 * buffers in GNU gettext. */
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t count_key;
static int key_inits;

static void make_key(void)
{
    if (pthread_key_create(&count_key, free) != 0)
        abort();
    key_inits++;
}

long applib_count(void)
{
    long *c;
    if (pthread_once(&key_once, make_key) != 0)
        abort();
    c = pthread_getspecific(count_key);
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c || pthread_setspecific(count_key, c) != 0)
            abort();
    }
    return ++*c;
}

int applib_key_inits(void)
{
    return key_inits;
}
