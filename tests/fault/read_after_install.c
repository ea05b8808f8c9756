/*
 * read_after_install.c - a read that faulted on a page being fetched, and
 * found it installed: no write is recorded.
 *
 * A thread reads a page while another thread's fetch of it is under way
 * (IN_FLIGHT, no access); before its fault handler takes the page lock, the
 * fetch installs the page READ_ONLY.  libdsm used to take any fault on a
 * READ_ONLY page for a write: the page became writable, twinned and listed
 * although nobody wrote it (with the OpenMP shim, the rank's inline atomics
 * on that page then ran on its copy: tests/omp inline_atomic's "ranks 0 and
 * 1 both wrote").  Here the install is done by hand on one rank: the main
 * thread holds the page's lock and marks the page IN_FLIGHT; the reader
 * faults and waits for the lock (seen in /proc: asleep in futex); the main
 * thread then installs the page READ_ONLY and lets go.  The read must
 * return the data and leave the page READ_ONLY with no write fault; a write
 * afterwards must still trap once and be recorded.
 *
 * x86-64 Linux only (the kernel's fault error code says read or write);
 * elsewhere it exits 77.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dsm_internal.h"

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)

static volatile int *data;
static pid_t reader_tid;
static int seen;

static void *reader(void *arg)
{
    (void)arg;
    __atomic_store_n(&reader_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    seen = data[1];                 /* faults: the page is IN_FLIGHT */
    return NULL;
}

/* 1 when thread tid sleeps in futex (the page lock), from /proc. */
static int asleep_in_futex(pid_t tid)
{
    char path[96], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int n = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    return n && strncmp(buf, "202 ", 4) == 0;     /* SYS_futex on x86-64 */
}

int main(int argc, char **argv)
{
#if !defined(__x86_64__) || !defined(__linux__)
    (void)argc; (void)argv;
    puts("skip: the read/write kind of a fault is read only on x86-64 Linux");
    return 77;
#else
    struct dsm_stats s;
    pthread_t th;

    dsm_init(&argc, &argv);
    data = dsm_malloc(dsm_page_size());
    data[1] = 4242;
    dsm_barrier();                  /* page written and settled */
    size_t p = dsm__page_of((const void *)data);
    struct dsm_page *pg = &dsm__g.pages[p];

    /* As if another thread were fetching it. */
    dsm__page_lock(p);
    pg->state = DSM_P_IN_FLIGHT;
    dsm__vm_protect(p, 1, PROT_NONE);
    dsm_stats_reset();
    pthread_create(&th, NULL, reader, NULL);
    pid_t tid;
    while ((tid = __atomic_load_n(&reader_tid, __ATOMIC_ACQUIRE)) == 0 || !asleep_in_futex(tid))
        sched_yield();
    /* The fetch completes: READ_ONLY, readable. */
    dsm__vm_protect(p, 1, PROT_READ);
    pg->state = DSM_P_READ_ONLY;
    dsm__page_unlock(p);
    pthread_join(th, NULL);

    dsm_stats_get(&s);
    CHECK(seen == 4242, "the read returned %d, expected 4242", seen);
    CHECK(pg->state == DSM_P_READ_ONLY, "the page is %s after a read, expected READ_ONLY: "
          "the read was taken for a write", dsm__page_state_name(pg->state));
    CHECK(s.write_faults == 0, "%llu write fault(s) recorded for a read",
          (unsigned long long)s.write_faults);

    /* A write still traps and is recorded. */
    data[2] = 7;
    dsm_stats_get(&s);
    CHECK(pg->state == DSM_P_READ_WRITE, "the page is %s after a write, expected READ_WRITE",
          dsm__page_state_name(pg->state));
    CHECK(s.write_faults == 1, "%llu write faults after one write, expected 1",
          (unsigned long long)s.write_faults);
    dsm_barrier();
    printf("ok: the read after the install recorded no write; the write after it one\n");
    dsm_finalize();
    return 0;
#endif
}
