/*
 * dlopen_plugin.c - libdlplugin.so, a plug-in that tests/omp/dlopen_lib.c
 * loads with dlopen, as R loads a package: compiled with -fopenmp, it has
 * parallel loops of its own that read its global variables (set by its
 * constructor and by calls from sequential code) and memory it allocated
 * with malloc, and it calls into a library it needs (libdldep.so).
 * plugin_handoff hands a value from thread 0 to the last thread through a
 * flag and flushes: the shim traps the flushes of a library loaded with
 * dlopen too (ompshim(7), SYNCHRONISATION).
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

/* Every thread reads the block and the flag; after a barrier thread 0
 * writes v into the block and sets the flag, flushing between and after;
 * the last thread waits for the flag (flushing, at most 20 s), flushes and
 * reads the block.  Returns what it read, or -1. */
long plugin_handoff(long v)
{
    long *box = calloc(1024, sizeof *box), got = -1;
    int *flag = calloc(1024, sizeof *flag);
    if (!box || !flag)
        return -1;
#pragma omp parallel
    {
        int me = omp_get_thread_num(), last = omp_get_num_threads() - 1;
        /* The reader holds copies of both pages before the writes (a
         * stale copy is what the flushes must replace). */
        volatile long peek = box[1023] + *flag;
        (void)peek;
#pragma omp barrier
        if (me == 0) {
            /* Write only once the reader polls its copy: written at once,
             * the reader's first read may come after the write reached its
             * copy by other means, and the test would not test the flushes
             * (without them it passes then; with this it fails). */
            double t = omp_get_wtime();
            while (omp_get_wtime() - t < 0.05)
                ;
            for (int i = 0; i < 1024; i++)
                box[i] = v;
#pragma omp flush
            *flag = 1;
#pragma omp flush
        }
        if (me == last) {
            double t0 = omp_get_wtime();
            int seen = 0;
            while (!seen && omp_get_wtime() - t0 < 20.0) {
#pragma omp flush
                seen = *flag;
            }
#pragma omp flush
            if (seen)
                got = box[1023];
        }
    }
    free(box);
    free(flag);
    return got;
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
