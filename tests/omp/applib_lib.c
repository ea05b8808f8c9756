/*
 * applib_lib.c - a library an OpenMP test program links with (libapplib.so,
 * for tests/omp/applib.c): it allocates with malloc and strdup from its own
 * code, and hands the program a structure with a function pointer in it, as
 * libjpeg's memory manager does.  Plain C, no OpenMP.
 */
#define _GNU_SOURCE
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
