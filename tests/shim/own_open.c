/*
 * own_open.c - a program that defines a global function named open, as
 * ntcard does (run-shim-test.sh.in, case "own_open").  Such a function
 * takes the place of the C library's for every object of the process,
 * libdsm included, so libdsm must make its own system calls: its
 * communication thread must never run the program's code (in ntcard it
 * faulted there and the job hung).  MPI's libraries call it too (UCX reads
 * /proc/PID/stat of its peers), which this open serves like the C
 * library's; it stops the process when its caller is libompshim, where
 * libdsm is: the watchdog reads /proc/PID/stat while a rank has waited a
 * second (here at the fork barrier while rank 0 computes), and DSM_TRACE
 * opens its files.
 *
 *   own_open FILE   opens FILE with its own open, computes 1.5 s in
 *                   sequential code, then runs a region.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int open(const char *path, int flags, ...)
{
    int mode = 0;
    if (flags & O_CREAT) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, int);
        va_end(ap);
    }
    Dl_info info;
    if (dladdr(__builtin_return_address(0), &info) && info.dli_fname &&
        strstr(info.dli_fname, "libompshim")) {
        char msg[512];
        int k = snprintf(msg, sizeof msg, "own_open: FAIL: libdsm called the program's "
                         "open(\"%s\")\n", path);
        (void)!write(2, msg, (size_t)k);
        _exit(3);
    }
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: own_open FILE\n");
        return 2;
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror("own_open: open");
        return 1;
    }
    close(fd);
#pragma omp parallel
    (void)0;
    /* The other ranks wait at the next fork meanwhile. */
    volatile double x = 0;
    for (double t0 = now(); now() - t0 < 1.5;)
        x += 1;
    int n = 0;
#pragma omp parallel
#pragma omp master
    n = omp_get_num_threads();
    printf("own_open: done, team of %d\n", n);
    return 0;
}
