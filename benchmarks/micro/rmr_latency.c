/*
 * rmr_latency.c - the distribution of single remote memory reads.
 *
 * Where rmr reports a mean, this times every read on its own (rank 0 reads
 * one word of each of --pages pages homed on rank 1, right after rank 1
 * wrote them, for --rounds rounds) and prints min, percentiles and max, to
 * see whether a change moved the whole distribution or only its tail.  The
 * other ranks only take part in the barriers.  Run: bench.sh rmr_latency.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dsm.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static long arg(int argc, char **argv, const char *name, long def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], name))
            return strtol(argv[i + 1], NULL, 10);
    return def;
}

int main(int argc, char **argv)
{
    dsm_init(&argc, &argv);
    int me = dsm_node_id(), nodes = dsm_node_count();
    long pages = arg(argc, argv, "--pages", 256), rounds = arg(argc, argv, "--rounds", 20);
    size_t ps = dsm_page_size();
    const char *comm = getenv("DSM_COMM"), *poll = getenv("DSM_POLL");

    if (nodes < 2 || pages < 1 || rounds < 2) {
        if (me == 0)
            fprintf(stderr, "rmr_latency: needs 2 or more ranks, --pages >= 1, --rounds >= 2\n");
        dsm_finalize();
        return 1;
    }
    char *a = dsm_malloc_home((size_t)pages * ps, DSM_HOME_NODE, 1);
    double *t = malloc(sizeof *t * (size_t)(pages * rounds));
    long k = 0;
    for (long r = 0; r < rounds; r++) {
        if (me == 1)
            for (long p = 0; p < pages; p++)
                a[p * ps] = (char)r;
        dsm_barrier();
        if (me == 0)
            for (long p = 0; p < pages; p++) {
                double t0 = dsm_wtime();
                volatile char c = a[p * ps];
                double dt = (dsm_wtime() - t0) * 1e6;
                if (c != (char)r) {
                    fprintf(stderr, "rmr_latency: page %ld holds %d, expected %d\n",
                            p, c, (int)(char)r);
                    exit(1);
                }
                if (r > 0)                       /* round 0 warms up */
                    t[k++] = dt;
            }
        dsm_barrier();
    }
    dsm_finalize();
    if (me == 0) {
        qsort(t, (size_t)k, sizeof *t, cmp);
        double q[6] = { t[0], t[k / 10], t[k / 2], t[k * 9 / 10], t[k * 99 / 100], t[k - 1] };
        const char *name[6] = { "min", "p10", "p50", "p90", "p99", "max" };
        printf("rmr_latency: %ld reads: min %.1f p10 %.1f p50 %.1f p90 %.1f p99 %.1f max %.1f us\n",
               k, q[0], q[1], q[2], q[3], q[4], q[5]);
        for (int i = 0; i < 6; i++)
            printf("{\"bench\":\"rmr_latency\",\"metric\":\"rmr_%s_us\",\"value\":%.3f,"
                   "\"unit\":\"us\",\"ranks\":%d,\"comm\":\"%s\",\"poll\":\"%s\","
                   "\"page_size\":%zu,\"pages\":%ld,\"rounds\":%ld}\n",
                   name[i], q[i], nodes, comm && *comm ? comm : "direct",
                   poll && *poll ? poll : "adaptive", ps, pages, rounds);
    }
    free(t);
    return 0;
}
