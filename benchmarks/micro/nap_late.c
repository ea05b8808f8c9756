/*
 * nap_late.c - how much later than asked a short timed sleep ends on this
 * machine when every core is busy: the nap_late_us of dsmtool calibrate's
 * model (dsmtool(1), commnap.c's nap rule).
 *
 * libdsm's idle communication thread naps on a futex with a timeout of
 * 20 us, then 40, 80, 160 and 200 us (libdsm/comm/comm.c), and a message
 * that arrives meanwhile waits for the nap's end.  A nap lasts longer than
 * its timeout: the kernel's timer slack (50 us for an ordinary thread),
 * the timer interrupt (25-30 us under this machine's nested hypervisor),
 * and the switch to the woken thread.  On a host whose ranks fill its
 * cores (the case the model's naps matter for) a computing thread holds
 * the core, so the main thread here naps those timeouts in turn while
 * --busy threads (default: one per online CPU) spin.  Plain C, no MPI.
 *
 *   nap_late [--naps N] [--busy T]
 *
 * Prints one line per timeout, then one JSON line:
 *   {"bench":"nap_late","metric":"nap_late_us","value":..,"unit":"us",
 *    "naps":N,"busy_threads":T,"mean_us":..}
 * value is the median of (time slept - timeout) over all naps.
 * Threads: the main thread naps; the busy threads only spin.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../json.h"

static const long timeouts_ns[] = { 20000, 40000, 80000, 160000, 200000 };
#define NT (sizeof timeouts_ns / sizeof timeouts_ns[0])

static int word, stop;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *spin(void *arg)
{
    volatile unsigned long n = 0;
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
        n++;
    return NULL;
}

static long arg_long(const char *opt, const char *v, long lo)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo) {
        fprintf(stderr, "nap_late: %s %s: give a whole number >= %ld\n", opt, v, lo);
        exit(2);
    }
    return x;
}

int main(int argc, char **argv)
{
    long naps = 500, busy = sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--naps") && i + 1 < argc)
            naps = arg_long("--naps", argv[++i], (long)NT);
        else if (!strcmp(argv[i], "--busy") && i + 1 < argc)
            busy = arg_long("--busy", argv[++i], 0);
        else {
            fprintf(stderr, "usage: nap_late [--naps N (>= %zu, default 500)] "
                    "[--busy THREADS (default: online CPUs)]\n", NT);
            return 2;
        }
    }
    if (busy < 0)
        busy = 0;
    pthread_t *th = calloc((size_t)busy + 1, sizeof *th);
    double *late = malloc((size_t)naps * sizeof *late);
    double *per[NT];
    size_t nper[NT] = { 0 };
    int oom = !th || !late;
    for (size_t k = 0; k < NT; k++)
        oom |= !(per[k] = malloc((size_t)naps * sizeof *per[k]));
    if (oom) {
        fprintf(stderr, "nap_late: out of memory\n");
        return 1;
    }
    for (long i = 0; i < busy; i++)
        if (pthread_create(&th[i], NULL, spin, NULL) != 0) {
            fprintf(stderr, "nap_late: cannot start busy thread %ld\n", i + 1);
            return 1;
        }
    /* 10 untimed naps first: the busy threads are running by then. */
    for (long i = -10; i < naps; i++) {
        size_t k = (size_t)(i < 0 ? -i : i) % NT;
        struct timespec ts = { 0, timeouts_ns[k] };
        double t0 = now();
        syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
        double d = (now() - t0) * 1e6 - (double)timeouts_ns[k] / 1e3;
        if (i >= 0) {
            late[i] = d;
            per[k][nper[k]++] = d;
        }
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (long i = 0; i < busy; i++)
        pthread_join(th[i], NULL);
    for (size_t k = 0; k < NT; k++)
        printf("nap of %3ld us: %zu naps, median %.1f us late\n", timeouts_ns[k] / 1000,
               nper[k], stats_median(per[k], nper[k]));
    double mean = stats_mean(late, (size_t)naps), med = stats_median(late, (size_t)naps);
    printf("{\"bench\":\"nap_late\",\"metric\":\"nap_late_us\",\"value\":");
    json_number(med, 0);
    printf(",\"unit\":\"us\",\"naps\":%ld,\"busy_threads\":%ld,\"mean_us\":", naps, busy);
    json_number(mean, 0);
    printf("}\n");
    return 0;
}
