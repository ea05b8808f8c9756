/*
 * fds.c - descriptors and parallel regions (run-shim-test.sh.in, "fds").
 *
 *   fds shared FILE   opens FILE in sequential code and has every thread
 *                     write its line to that descriptor: on 2 or more ranks
 *                     the shim stops the job (the descriptor is rank 0's),
 *                     instead of letting the other ranks write to whatever
 *                     they have at that number;
 *   fds dup FILE      the same through dup2 to descriptor 200;
 *   fds own DIR       every thread opens, writes and closes a file of its
 *                     own in the region; then the files are read back.
 */
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int line_of(char *buf, size_t size, int t)
{
    return snprintf(buf, size, "thread %d\n", t);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fds shared|dup|own PATH\n");
        return 2;
    }
    if (!strcmp(argv[1], "own")) {
        int bad = 0, n = 0;
#pragma omp parallel reduction(+ : bad)
        {
            char path[4096], buf[64];
            int t = omp_get_thread_num(), k = line_of(buf, sizeof buf, t);
            snprintf(path, sizeof path, "%s/part.%d", argv[2], t);
            int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || write(fd, buf, (size_t)k) != k || close(fd) != 0)
                bad++;
#pragma omp master
            n = omp_get_num_threads();
        }
        for (int t = 0; t < n; t++) {
            char path[4096], buf[64], want[64];
            int k = line_of(want, sizeof want, t);
            snprintf(path, sizeof path, "%s/part.%d", argv[2], t);
            int fd = open(path, O_RDONLY);
            if (fd < 0 || read(fd, buf, sizeof buf) != k || memcmp(buf, want, (size_t)k))
                bad++;
            if (fd >= 0)
                close(fd);
        }
        printf("fds: %d files of their own, %d wrong\n", n, bad);
        return bad != 0;
    }
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror("fds: open");
        return 1;
    }
    if (!strcmp(argv[1], "dup")) {
        if (dup2(fd, 200) != 200) {
            perror("fds: dup2");
            return 1;
        }
        close(fd);
        fd = 200;
    }
#pragma omp parallel
    {
        char buf[64];
        int k = line_of(buf, sizeof buf, omp_get_thread_num());
#pragma omp critical
        if (write(fd, buf, (size_t)k) != k)
            fprintf(stderr, "fds: write failed\n");
    }
    close(fd);
    printf("fds: written\n");
    return 0;
}
