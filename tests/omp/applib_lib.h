/*
 * applib_lib.h - the interface of libapplib.so (applib_lib.c), the library
 * tests/omp/applib.c links with.
 */
#ifndef APPLIB_LIB_H
#define APPLIB_LIB_H

struct applib_table {
    double (*value_at)(const struct applib_table *t, long i);
    double *v;                  /* n values, from the library's calloc */
    long n;
    double scale;
    char *name;                 /* from the library's strdup */
};

struct applib_table *applib_new(long n, double scale, const char *name);
void applib_free(struct applib_table *t);

/* The library's own global variables: a level the program sets, and a
 * total that applib_add adds to under two mutexes of the library's (a
 * static one, and a recursive one from its malloc, taken twice; with try
 * set, by pthread_mutex_trylock until it succeeds). */
void applib_set_level(int level);
int applib_level(void);
void applib_add(long k, int try);
long applib_total(void);

/* How many times this thread has called it (a count under a key the
 * library makes with pthread_once), and how many times the library made
 * its key (1). */
long applib_count(void);
int applib_key_inits(void);

#endif
