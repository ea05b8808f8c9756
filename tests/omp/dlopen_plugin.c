/*
 * dlopen_plugin.c - libdlplugin.so, a plug-in that tests/omp/dlopen_lib.c
 * loads with dlopen, as R loads a package: compiled with -fopenmp, it has
 * parallel loops of its own that read its global variables (set by its
 * constructor and by calls from sequential code) and memory it allocated
 * with malloc, and it calls into a library it needs (libdldep.so).
 */
#include <omp.h>
#include <stdlib.h>

#define TABLE 1000

long dldep_offset(void);
void dldep_set_offset(long v);

static long table[TABLE];
static long *ctor_block;        /* allocated by the constructor */
static long calls;
static long *block;
static long block_n;

__attribute__((constructor)) static void plugin_init(void)
{
    for (int i = 0; i < TABLE; i++)
        table[i] = (long)i * 3 + 1;
    ctor_block = malloc(TABLE * sizeof *ctor_block);
    if (ctor_block)
        for (int i = 0; i < TABLE; i++)
            ctor_block[i] = (long)i * 5 + 2;
}

/* Sequential: change the plugin's globals and its dependency's. */
void plugin_set(long c, long offset)
{
    calls = c;
    dldep_set_offset(offset);
}

/* Its own parallel loop over its globals: out[i] for i < n. */
void plugin_fill(long *out, long n)
{
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++)
        out[i] = table[i % TABLE] * calls + dldep_offset() + ctor_block[i % TABLE];
}

/* Memory the plugin allocates and fills in sequential code. */
long *plugin_make(long n)
{
    free(block);
    block = malloc((size_t)n * sizeof *block);
    if (!block)
        return NULL;
    block_n = n;
    for (long i = 0; i < n; i++)
        block[i] = i % 97;
    return block;
}

/* A sum over that memory in the plugin's own region: per-thread partial
 * sums, added up in sequential code.  (Not reduction(+:s): built with
 * plain gcc -fopenmp, as R packages are, that combines with an inline
 * lock instruction, which no runtime sees and which loses additions
 * across ranks: ompshim(7), ATOMICS.) */
long plugin_block_sum(void)
{
    int nt = omp_get_max_threads();
    long *part = calloc((size_t)nt, sizeof *part), s = 0;
    if (!part)
        return -1;
#pragma omp parallel for schedule(dynamic, 64)
    for (long i = 0; i < block_n; i++)
        part[omp_get_thread_num()] += block[i] + table[i % TABLE];
    for (int t = 0; t < nt; t++)
        s += part[t];
    free(part);
    return s;
}
