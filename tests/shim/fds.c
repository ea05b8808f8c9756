/*
 * fds.c - files opened in sequential code, used by every thread of a
 * parallel region (run-shim-test.sh.in, "fds").  On 2 or more ranks the
 * threads of other ranks reach rank 0's descriptor or stream through the
 * shim (fileio.c, streams.c); the results are checked here and, for the
 * files written, by the test script from outside.
 *
 *   fds shared FILE   every thread writes its line with write(2), under
 *                     critical, to one descriptor;
 *   fds dup FILE      the same through dup2 to descriptor 200;
 *   fds stdio FILE    every thread writes with fprintf, fputs, fputc and
 *                     fwrite to one stream; then the threads read the
 *                     lines back with fgets, getline, fgetc and fread from
 *                     one stream, with ftell, fseek, fgetpos, fsetpos,
 *                     feof and fileno;
 *   fds fpos FILE     a stream written in sequential code in blocks larger
 *                     than its buffer, their starts kept with fgetpos:
 *                     every thread goes to its block with fsetpos, reads
 *                     it back and checks ftell, fgetpos and fgetpos64
 *                     after it;
 *   fds pos FILE      a file written in sequential code: every thread
 *                     checks fstat, reads its own block with pread and
 *                     with lseek + read; one thread truncates and fsyncs,
 *                     another closes the descriptor;
 *   fds scanf FILE    fscanf in a region: on a rank other than 0 the job
 *                     stops with the shim's message;
 *   fds pipe FILE     FILE, opened and moved to descriptor 40, stays open
 *                     on rank 0 while every thread makes 16 pipes of its
 *                     own, writes to each and reads it back: on another
 *                     rank a pipe is that rank's, even where its number is
 *                     40 (the script checks that some pipe had it);
 *   fds own DIR       every thread opens, writes and closes a file of its
 *                     own in the region; then the files are read back.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXT 64
#define BLOCK 5000              /* bytes per thread in "pos": over a page */

static int line_of(char *buf, size_t size, int t)
{
    return snprintf(buf, size, "thread %d\n", t);
}

static int own(const char *dir)
{
    int bad = 0, n = 0;
#pragma omp parallel reduction(+ : bad)
    {
        char path[4096], buf[64];
        int t = omp_get_thread_num(), k = line_of(buf, sizeof buf, t);
        snprintf(path, sizeof path, "%s/part.%d", dir, t);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, buf, (size_t)k) != k || close(fd) != 0)
            bad++;
#pragma omp master
        n = omp_get_num_threads();
    }
    for (int t = 0; t < n; t++) {
        char path[4096], buf[64], want[64];
        int k = line_of(want, sizeof want, t);
        snprintf(path, sizeof path, "%s/part.%d", dir, t);
        int fd = open(path, O_RDONLY);
        if (fd < 0 || read(fd, buf, sizeof buf) != k || memcmp(buf, want, (size_t)k))
            bad++;
        if (fd >= 0)
            close(fd);
    }
    printf("fds: %d files of their own, %d wrong\n", n, bad);
    return bad != 0;
}

static int shared_fd(const char *path, int dup)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror("fds: open");
        return 1;
    }
    if (dup) {
        if (dup2(fd, 200) != 200) {
            perror("fds: dup2");
            return 1;
        }
        close(fd);
        fd = 200;
    }
    int bad = 0;
#pragma omp parallel reduction(+ : bad)
    {
        char buf[64];
        int k = line_of(buf, sizeof buf, omp_get_thread_num());
#pragma omp critical
        if (write(fd, buf, (size_t)k) != k)
            bad++;
    }
    if (close(fd) != 0)
        bad++;
    printf("fds: written, %d failed\n", bad);
    return bad != 0;
}

/* Each thread writes 4 lines, one per call; they are read back by every
 * thread in turn, with 4 ways of reading a line.  Per-thread tallies go to
 * arrays (no reduction: plain gcc may compile one to an inline atomic). */
static int stdio_stream(const char *path)
{
    FILE *f = fopen(path, "w+");
    int n = 0, bad[MAXT] = { 0 }, got[MAXT] = { 0 };
    long sum[MAXT] = { 0 };
    if (!f) {
        perror("fds: fopen");
        return 1;
    }
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        char buf[64];
#pragma omp master
        n = omp_get_num_threads();
#pragma omp critical
        {
            if (fprintf(f, "%d fprintf\n", t) < 0)
                bad[t]++;
            snprintf(buf, sizeof buf, "%d fputs\n", t);
            if (fputs(buf, f) == EOF)
                bad[t]++;
            snprintf(buf, sizeof buf, "%d fputc", t);
            for (char *p = buf; *p; p++)
                if (fputc(*p, f) != (unsigned char)*p)
                    bad[t]++;
            if (putc('\n', f) != '\n')
                bad[t]++;
            snprintf(buf, sizeof buf, "%d fwrite\n", t);
            if (fwrite(buf, 1, strlen(buf), f) != strlen(buf))
                bad[t]++;
        }
    }
    if (n > MAXT || fflush(f) != 0)
        return 1;
    long size = ftell(f);
    rewind(f);
#pragma omp parallel
    {
        int t = omp_get_thread_num(), k = 0, done = 0;
        char line[64], *lp = NULL;
        size_t cap = 0;
        for (; !done; k++) {
#pragma omp critical
            {
                int c;
                size_t r;
                switch (k % 4) {
                case 0:
                    done = !fgets(line, sizeof line, f);
                    break;
                case 1:
                    done = getline(&lp, &cap, f) < 0;
                    if (!done)
                        strcpy(line, lp);
                    break;
                case 2:
                    for (r = 0; (c = fgetc(f)) != EOF && r < sizeof line - 1;) {
                        line[r++] = (char)c;
                        if (c == '\n')
                            break;
                    }
                    line[r] = 0;
                    done = r == 0;
                    break;
                default: {
                    /* A line starts "<t> " then a word: read 2 bytes, peek
                     * at the stream's position, go back to the line's start
                     * with fsetpos and read them again, then the rest with
                     * fgets. */
                    fpos_t at;
                    char again[2];
                    if (fgetpos(f, &at) != 0)
                        bad[t]++;
                    r = fread(line, 1, 2, f);
                    done = r == 0;
                    if (!done && ftell(f) < 2)
                        bad[t]++;
                    if (!done && (fsetpos(f, &at) != 0 || fread(again, 1, r, f) != r ||
                                  memcmp(again, line, r) != 0))
                        bad[t]++;
                    if (!done && !fgets(line + r, (int)(sizeof line - r), f))
                        line[r] = 0;
                    break;
                }
                }
                if (done && !feof(f))
                    bad[t]++;
                if (fileno(f) < 0)
                    bad[t]++;
            }
            if (!done) {
                got[t]++;
                sum[t] += atol(line) + (long)strlen(line);
            }
        }
        free(lp);
    }
    long want_sum = 0, total_sum = 0;
    int total = 0, nbad = 0;
    char buf[64];
    for (int t = 0; t < n; t++) {
        const char *w[4] = { "fprintf", "fputs", "fputc", "fwrite" };
        for (int i = 0; i < 4; i++)
            want_sum += t + snprintf(buf, sizeof buf, "%d %s\n", t, w[i]);
        total += got[t];
        total_sum += sum[t];
        nbad += bad[t];
    }
    if (fseek(f, 0, SEEK_END) != 0 || ftell(f) != size)
        nbad++;
    fclose(f);
    printf("fds: stdio %d lines read of %d, %ld bytes, sums %s, %d failed\n", total, 4 * n,
           size, total_sum == want_sum ? "agree" : "differ", nbad);
    return nbad != 0 || total != 4 * n || total_sum != want_sum;
}

static int positions(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    static char data[MAXT * BLOCK];
    int n = 0, bad[MAXT] = { 0 };
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)('a' + i % 23);
    if (fd < 0 || write(fd, data, sizeof data) != (ssize_t)sizeof data)
        return 1;
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        char *buf = malloc(BLOCK);
        struct stat st;
#pragma omp master
        n = omp_get_num_threads();
        if (fstat(fd, &st) != 0 || st.st_size != (off_t)sizeof data)
            bad[t]++;
        if (pread(fd, buf, BLOCK, (off_t)t * BLOCK) != BLOCK ||
            memcmp(buf, data + (size_t)t * BLOCK, BLOCK))
            bad[t]++;
#pragma omp critical
        {
            ssize_t k = 0, r;
            if (lseek(fd, (off_t)t * BLOCK, SEEK_SET) != (off_t)t * BLOCK)
                bad[t]++;
            memset(buf, 0, BLOCK);
            while (k < BLOCK && (r = read(fd, buf + k, BLOCK - (size_t)k)) > 0)
                k += r;
            if (k != BLOCK || memcmp(buf, data + (size_t)t * BLOCK, BLOCK))
                bad[t]++;
        }
#pragma omp barrier
#pragma omp single
        if (ftruncate(fd, BLOCK) != 0 || fsync(fd) != 0)
            bad[t]++;
#pragma omp single
        if (close(fd) != 0)
            bad[t]++;
        free(buf);
    }
    struct stat st;
    int nbad = 0;
    for (int t = 0; t < n; t++)
        nbad += bad[t];
    if (stat(path, &st) != 0 || st.st_size != BLOCK)
        nbad++;
    if (fcntl(fd, F_GETFD) != -1)
        nbad++;                 /* closed by whichever thread ran the single */
    printf("fds: positions of %d threads, %d failed\n", n, nbad);
    return nbad != 0;
}

static int own_pipes(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int bad[MAXT] = { 0 }, same[MAXT] = { 0 }, n = 0;
    if (fd < 0 || dup2(fd, 40) != 40 || close(fd) != 0)
        return 1;
    fd = 40;
#pragma omp parallel
    {
        int t = omp_get_thread_num(), p[16][2];
        char msg[32], back[32];
#pragma omp master
        n = omp_get_num_threads();
        for (int i = 0; i < 16; i++)
            if (pipe(p[i]) != 0)
                p[i][0] = p[i][1] = -1;
        for (int i = 0; i < 16; i++) {
            int k = snprintf(msg, sizeof msg, "pipe %d of %d", i, t);
            same[t] += p[i][0] == fd || p[i][1] == fd;
            if (p[i][0] < 0 || write(p[i][1], msg, (size_t)k) != k ||
                read(p[i][0], back, sizeof back) != k || memcmp(msg, back, (size_t)k) ||
                close(p[i][0]) || close(p[i][1]))
                bad[t]++;
        }
        char line[64];
        int k = line_of(line, sizeof line, t);
#pragma omp critical
        if (write(fd, line, (size_t)k) != k)
            bad[t]++;
    }
    int nbad = 0, nsame = 0;
    for (int t = 0; t < n; t++) {
        nbad += bad[t];
        nsame += same[t];
    }
    if (close(fd) != 0)
        nbad++;
    printf("fds: own pipes of %d threads, %d failed\n", n, nbad);
    fprintf(stderr, "fds: %d pipes had descriptor %d\n", nsame, fd);
    return nbad != 0;
}

/* Blocks of BLOCK bytes (more than the stream's 4 KiB buffer): each
 * fsetpos of a thread must move the descriptor of rank 0's stream. */
static int fpos_region(const char *path)
{
    static fpos_t at[MAXT + 1];
    static char block[BLOCK];
    FILE *f = fopen(path, "w+");
    int n = 0, bad[MAXT] = { 0 };
    if (!f)
        return 1;
    for (int t = 0; t <= MAXT; t++) {
        if (fgetpos(f, &at[t]) != 0)
            return 1;
        memset(block, 'a' + t % 26, BLOCK);
        if (t < MAXT && fwrite(block, 1, BLOCK, f) != BLOCK)
            return 1;
    }
    if (fflush(f) != 0)
        return 1;
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        char *buf = malloc(BLOCK);
        fpos_t after;
        fpos64_t after64;
#pragma omp master
        n = omp_get_num_threads();
#pragma omp critical
        {
            if (!buf || fsetpos(f, &at[t]) != 0 || fread(buf, 1, BLOCK, f) != BLOCK)
                bad[t]++;
            else
                for (int i = 0; i < BLOCK; i++)
                    if (buf[i] != 'a' + t % 26) {
                        bad[t]++;
                        break;
                    }
            if (ftell(f) != (long)(t + 1) * BLOCK)
                bad[t]++;
            /* Where the next block starts: the same offset as at[t + 1]. */
            if (fgetpos(f, &after) != 0 || fsetpos(f, &after) != 0 ||
                ftell(f) != (long)(t + 1) * BLOCK)
                bad[t]++;
            /* The same through the 64-bit names (_FILE_OFFSET_BITS=64). */
            if (fgetpos64(f, &after64) != 0 || fseek(f, 0, SEEK_SET) != 0 ||
                fsetpos64(f, &after64) != 0 || ftell(f) != (long)(t + 1) * BLOCK)
                bad[t]++;
        }
        free(buf);
    }
    int nbad = 0;
    for (int t = 0; t < n && t < MAXT; t++)
        nbad += bad[t];
    if (n > MAXT || fclose(f) != 0)
        nbad++;
    printf("fds: fpos of %d threads, %d failed\n", n, nbad);
    return nbad != 0;
}

static int scanf_region(const char *path)
{
    FILE *f = fopen(path, "w+");
    int v[MAXT];
    if (!f)
        return 1;
    for (int i = 0; i < MAXT; i++)
        fprintf(f, "%d\n", i);
    rewind(f);
#pragma omp parallel
    {
#pragma omp critical
        if (fscanf(f, "%d", &v[omp_get_thread_num()]) != 1)
            v[omp_get_thread_num()] = -1;
    }
    fclose(f);
    printf("fds: scanf done\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fds shared|dup|stdio|fpos|pos|scanf|pipe|own PATH\n");
        return 2;
    }
    if (!strcmp(argv[1], "own"))
        return own(argv[2]);
    if (!strcmp(argv[1], "shared") || !strcmp(argv[1], "dup"))
        return shared_fd(argv[2], !strcmp(argv[1], "dup"));
    if (!strcmp(argv[1], "stdio"))
        return stdio_stream(argv[2]);
    if (!strcmp(argv[1], "fpos"))
        return fpos_region(argv[2]);
    if (!strcmp(argv[1], "pos"))
        return positions(argv[2]);
    if (!strcmp(argv[1], "scanf"))
        return scanf_region(argv[2]);
    if (!strcmp(argv[1], "pipe"))
        return own_pipes(argv[2]);
    fprintf(stderr, "fds: unknown mode %s\n", argv[1]);
    return 2;
}
