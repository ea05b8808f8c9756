/*
 * mmap_file.c - memory from mmap(2) read and written by every thread.
 *
 * The initial thread maps memory and the team reads and writes it: an
 * anonymous mapping (zero at first), a file mapped privately and read-only
 * (its descriptor closed at once; bytes past the end of the file read as
 * zero; a mapping at an offset), and a file mapped shared and writable,
 * whose writes must reach the file by msync and by munmap.  Then mremap
 * grows the anonymous mapping (the old part kept, the new part zero),
 * madvise(MADV_DONTNEED) zeroes it, mprotect leaves it usable, and a
 * mapping made and freed inside a region by whichever thread runs a single
 * construct is written by all.  Under the shim every rank must see the
 * same memory (ompshim(7), SHARED MEMORY).
 */
#define _GNU_SOURCE
#define OT_NAME "mmap_file"
#include "omptest.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096L
#define NBYTES (3 * PAGE + 100)     /* the file: not a whole number of pages */
#define NLONG 200000L               /* the anonymous mapping, in longs */

static unsigned char pat(long i) { return (unsigned char)(i * 7 + 3); }
static unsigned char pat2(long i) { return (unsigned char)(i * 13 + 5); }

static void write_all(int fd, const unsigned char *b, long n)
{
    while (n > 0) {
        ssize_t w = write(fd, b, (size_t)n);
        if (w <= 0) {
            perror(OT_NAME ": write");
            exit(1);
        }
        b += w;
        n -= w;
    }
}

/* Bytes of the file at path that differ from want (the whole file, and its size). */
static long file_diff(const char *path, unsigned char (*want)(long), long n, long *size)
{
    unsigned char buf[NBYTES + 16];
    int fd = open(path, O_RDONLY);
    long got = 0, bad = 0, i;
    ssize_t r;
    while (fd >= 0 && (r = read(fd, buf + got, sizeof buf - (size_t)got)) > 0)
        got += r;
    if (fd >= 0)
        close(fd);
    for (i = 0; i < n && i < got; i++)
        bad += buf[i] != want(i);
    *size = got;
    return bad;
}

static unsigned char even_new(long i) { return i % 2 ? pat(i) : pat2(i); }

int main(void)
{
    int n = ot_team_size();
    char path[] = "/tmp/mmap_file.XXXXXX";
    unsigned char buf[NBYTES];
    long i, bad, sum, size;
    int fd;

    /* Anonymous. */
    long *a = mmap(NULL, NLONG * sizeof(long), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) {
        perror(OT_NAME ": mmap");
        return 1;
    }
    bad = 0;
#pragma omp parallel for reduction(+:bad)
    for (i = 0; i < NLONG; i++) {
        bad += a[i] != 0;
        a[i] = 3 * i + 1;
    }
    OT_CHECK(bad == 0, "anonymous mapping: %ld longs not zero at first", bad);
    sum = 0;
    for (i = 0; i < NLONG; i++)
        sum += a[i];
    OT_CHECK(sum == 3 * (NLONG - 1) * NLONG / 2 + NLONG, "anonymous mapping: sum %ld", sum);
    ot_print("anonymous: team of %d wrote %ld longs, sum %ld", n, NLONG, sum);

    /* A file, private and read-only. */
    fd = mkstemp(path);
    if (fd < 0) {
        perror(OT_NAME ": mkstemp");
        return 1;
    }
    for (i = 0; i < NBYTES; i++)
        buf[i] = pat(i);
    write_all(fd, buf, NBYTES);
    long mapped = 4 * PAGE;
    unsigned char *p = mmap(NULL, NBYTES, PROT_READ, MAP_PRIVATE, fd, 0);
    unsigned char *q = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 2 * PAGE);
    close(fd);
    if (p == MAP_FAILED || q == MAP_FAILED) {
        perror(OT_NAME ": mmap of the file");
        return 1;
    }
    long tail = 0;
    bad = sum = 0;
#pragma omp parallel for reduction(+:bad, sum, tail)
    for (i = 0; i < mapped; i++) {
        if (i < NBYTES) {
            bad += p[i] != pat(i);
            sum += p[i];
        } else {
            tail += p[i] != 0;
        }
        if (i < PAGE)
            bad += q[i] != pat(2 * PAGE + i);
    }
    OT_CHECK(bad == 0 && tail == 0, "private file mapping: %ld bytes wrong, %ld past the "
             "end not zero", bad, tail);
    ot_print("private file: %ld bytes, sum %ld, past the end zero", NBYTES, sum);
    munmap(p, NBYTES);
    munmap(q, PAGE);

    /* A file, shared and writable: even bytes now, msync, odd bytes, munmap. */
    fd = open(path, O_RDWR);
    p = fd < 0 ? MAP_FAILED : mmap(NULL, NBYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        perror(OT_NAME ": shared mapping of the file");
        return 1;
    }
    close(fd);
#pragma omp parallel for
    for (i = 0; i < NBYTES; i += 2)
        p[i] = pat2(i);
    OT_CHECK(msync(p, NBYTES, MS_SYNC) == 0, "msync failed");
    bad = file_diff(path, even_new, NBYTES, &size);
    OT_CHECK(bad == 0 && size == NBYTES, "after msync: %ld bytes of the file wrong, size %ld",
             bad, size);
    ot_print("shared file after msync: %ld bytes wrong, size %ld", bad, size);
#pragma omp parallel for
    for (i = 1; i < NBYTES; i += 2)
        p[i] = pat2(i);
    OT_CHECK(munmap(p, NBYTES) == 0, "munmap failed");
    bad = file_diff(path, pat2, NBYTES, &size);
    OT_CHECK(bad == 0 && size == NBYTES, "after munmap: %ld bytes of the file wrong, size %ld",
             bad, size);
    ot_print("shared file after munmap: %ld bytes wrong, size %ld", bad, size);
    unlink(path);

    /* mremap, madvise, mprotect on the anonymous mapping. */
    long *b = mremap(a, NLONG * sizeof(long), 2 * NLONG * sizeof(long), MREMAP_MAYMOVE);
    if (b == MAP_FAILED) {
        perror(OT_NAME ": mremap");
        return 1;
    }
    bad = 0;
#pragma omp parallel for reduction(+:bad)
    for (i = 0; i < 2 * NLONG; i++)
        bad += b[i] != (i < NLONG ? 3 * i + 1 : 0);
    OT_CHECK(bad == 0, "after mremap: %ld longs wrong", bad);
    OT_CHECK(madvise(b, 2 * NLONG * sizeof(long), MADV_DONTNEED) == 0, "madvise failed");
    OT_CHECK(mprotect(b, 2 * NLONG * sizeof(long), PROT_READ | PROT_WRITE) == 0,
             "mprotect failed");
    long nonzero = 0;
#pragma omp parallel for reduction(+:nonzero)
    for (i = 0; i < 2 * NLONG; i++) {
        nonzero += b[i] != 0;
        b[i] = i;
    }
    OT_CHECK(nonzero == 0, "after madvise(MADV_DONTNEED): %ld longs not zero", nonzero);
    ot_print("mremap kept %ld longs; madvise zeroed %ld", NLONG, 2 * NLONG);
    munmap(b, 2 * NLONG * sizeof(long));

    /* Made and freed inside a region, by one thread of the team. */
    static long *shared_map;
    long total = 0;
#pragma omp parallel
    {
#pragma omp single
        shared_map = mmap(NULL, OT_MAX_THREADS * PAGE, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (shared_map != MAP_FAILED)
            shared_map[omp_get_thread_num() * (PAGE / sizeof(long))] = omp_get_thread_num() + 1;
#pragma omp barrier
#pragma omp single
        {
            for (int t = 0; shared_map != MAP_FAILED && t < omp_get_num_threads(); t++)
                total += shared_map[t * (PAGE / sizeof(long))];
            munmap(shared_map, OT_MAX_THREADS * PAGE);
        }
    }
    OT_CHECK(total == (long)n * (n + 1) / 2, "mapping made in a region: sum %ld, expected %ld",
             total, (long)n * (n + 1) / 2);
    ot_print("mapping made in a region: sum %ld", total);
    return ot_finish();
}
