/*
 * io.c - system calls on shared memory: fread into a malloc'd (DSM heap)
 * buffer and into a global array, read(2) into a heap buffer written by the
 * other ranks before, fwrite from a buffer the other ranks wrote, stat into
 * a struct on rank 0's stack.  Without the shim's wrappers the kernel
 * returns EFAULT or a short count on protected pages.  Then a stdio buffer
 * in shared memory (setvbuf, as GraphicsMagick does): the stream holds a
 * line in it while another rank writes the same page, which takes the page
 * from rank 0; the C library's own write(2) at fclose must still work.
 *
 *   io PREFIX         all of that, with PREFIX.data as the file
 *   io PREFIX huge    a read(2) of 2^50 bytes into a heap buffer, for which
 *                     no private buffer can be had: the job must stop
 */
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N 300000
static char gbuf[N];

struct vbuf { char buf[4096]; char other[4096]; };

/* 1 if a line written through a stdio buffer in shared memory comes back. */
static int setvbuf_ok(const char *path)
{
    static const char line[] = "a line held in a shared stdio buffer\n";
    struct vbuf *v = malloc(sizeof *v);
    int last = omp_get_max_threads() - 1;
    char back[sizeof line];
    if (!v)
        return 0;
    /* Only the last thread (the last rank) writes the page: it moves there. */
#pragma omp parallel
    if (omp_get_thread_num() == last)
        memset(v->other, 1, sizeof v->other);
    FILE *f = fopen(path, "w");
    if (!f || setvbuf(f, v->buf, _IOFBF, sizeof v->buf) != 0 || fputs(line, f) < 0)
        return 0;
#pragma omp parallel
    if (omp_get_thread_num() == last)
        memset(v->other, 2, sizeof v->other);
    if (fclose(f) != 0) {
        fprintf(stderr, "io: FAIL: fclose of a stream with a shared buffer: %m\n");
        return 0;
    }
    f = fopen(path, "r");
    size_t got = f ? fread(back, 1, sizeof back, f) : 0;
    if (f) fclose(f);
    unlink(path);
    return got == sizeof line - 1 && memcmp(back, line, got) == 0;
}

int main(int argc, char **argv)
{
    char path[256];
    int bad = 0;
    snprintf(path, sizeof path, "%s.data", argc > 1 ? argv[1] : "io");
    if (argc > 2 && !strcmp(argv[2], "huge")) {
        char *b = malloc(4096);
        ssize_t r = b ? read(0, b, (size_t)1 << 50) : -1;
        printf("io: huge read returned %zd\n", r);
        return 1;
    }
    unsigned char *out = malloc(N), *in = malloc(N);
    /* Every thread fills a part of out: the pages end up everywhere. */
#pragma omp parallel for schedule(static, 4096)
    for (long i = 0; i < N; i++)
        out[i] = (unsigned char)(i * 7 + 1);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(out, 1, N, f) != N || fclose(f) != 0) {
        fprintf(stderr, "io: FAIL: fwrite of %d shared bytes\n", N);
        return 1;
    }
    f = fopen(path, "rb");
    size_t got = f ? fread(in, 1, N, f) : 0;
    if (f) fclose(f);
    int fd = open(path, O_RDONLY);
    ssize_t rd = fd >= 0 ? read(fd, gbuf, N) : -1;
    if (fd >= 0) close(fd);
    struct stat st;
    int sr = stat(path, &st);
    long sum = 0;
#pragma omp parallel for reduction(+:sum)
    for (long i = 0; i < N; i++)
        sum += (in[i] == out[i]) + (gbuf[i] == (char)out[i]);
    if (got != N) { fprintf(stderr, "io: FAIL: fread gave %zu of %d bytes\n", got, N); bad = 1; }
    if (rd != N) { fprintf(stderr, "io: FAIL: read gave %zd of %d bytes\n", rd, N); bad = 1; }
    if (sr != 0 || st.st_size != N) { fprintf(stderr, "io: FAIL: stat\n"); bad = 1; }
    if (sum != 2L * N) { fprintf(stderr, "io: FAIL: %ld of %d bytes match\n", sum, 2 * N); bad = 1; }
    unlink(path);
    strcat(path, ".vbuf");
    if (!setvbuf_ok(path)) {
        fprintf(stderr, "io: FAIL: a line through a stdio buffer in shared memory\n");
        bad = 1;
    }
    printf("io: %d bytes out and back: %s\n", N, bad ? "FAIL" : "ok");
    return bad;
}
