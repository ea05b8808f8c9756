/*
 * home_write_faults.c - real protection faults on one rank.
 *
 * A home page that another node holds is write-protected at its home; the
 * home's first write traps, is recorded, and the page becomes writable.  We
 * make pages of a one-rank run "tracked" by hand (as serving a copy would),
 * then let two threads write them at once: every page must trap exactly
 * once, be recorded once, and keep both threads' data.  After a barrier
 * (nobody else holds a copy) the pages must be writable without any fault:
 * laplace's interior rows cost nothing.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "dsm_internal.h"

#define NPAGES 8
static int *data;
static size_t words_per_page;

static void *writer(void *arg)
{
    long t = (long)arg;
    for (size_t p = 0; p < NPAGES; p++)
        for (size_t w = (size_t)t; w < words_per_page; w += 2)
            data[p * words_per_page + w] = (int)(p * 100000 + w);
    return NULL;
}

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)

int main(int argc, char **argv)
{
    struct dsm_stats s;
    pthread_t th[2];
    uint32_t *ep;

    dsm_init(&argc, &argv);
    words_per_page = dsm_page_size() / sizeof(int);
    data = dsm_malloc(NPAGES * dsm_page_size());
    size_t first = dsm__page_of(data);

    /* Pretend node 0 served copies: tracked home pages are READ_ONLY. */
    for (size_t p = first; p < first + NPAGES; p++) {
        dsm__g.pages[p].copyset = 1;
        dsm__g.pages[p].state = DSM_P_READ_ONLY;
    }
    dsm__vm_protect(first, NPAGES, PROT_READ);
    dsm_stats_reset();

    for (long t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, writer, (void *)t);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);

    dsm_stats_get(&s);
    CHECK(s.write_faults == NPAGES, "write faults %llu, expected %d",
          (unsigned long long)s.write_faults, NPAGES);
    CHECK(s.twins == 0, "a home page got a twin");
    size_t n = dsm__pt_copy_epoch(&ep);
    CHECK(n == NPAGES, "%zu pages recorded as written, expected %d", n, NPAGES);
    free(ep);
    for (size_t p = first; p < first + NPAGES; p++)
        CHECK(dsm__g.pages[p].state == DSM_P_READ_WRITE, "page %zu in state %s", p,
              dsm__page_state_name(dsm__g.pages[p].state));
    for (size_t i = 0; i < NPAGES * words_per_page; i++)
        CHECK(data[i] == (int)((i / words_per_page) * 100000 + i % words_per_page),
              "word %zu is %d", i, data[i]);

    /* The barrier drops the (pretend) copies: nobody holds the pages now. */
    for (size_t p = first; p < first + NPAGES; p++)
        dsm__g.pages[p].copyset = 0;
    dsm_barrier();
    dsm_stats_reset();
    for (int round = 0; round < 3; round++) {
        writer((void *)0);
        writer((void *)1);
        dsm_barrier();
    }
    dsm_stats_get(&s);
    CHECK(s.write_faults == 0 && s.read_faults == 0,
          "untracked home pages took %llu write and %llu read faults",
          (unsigned long long)s.write_faults, (unsigned long long)s.read_faults);
    dsm_free(data);
    dsm_finalize();
    printf("home_write_faults: ok\n");
    return 0;
}
