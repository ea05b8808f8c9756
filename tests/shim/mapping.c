/*
 * mapping.c - what becomes of the program's mmap at the end of the run and
 * when it cannot be shared (run-shim-test.sh.in, case "mapping").
 *
 *   mapping FILE write   makes FILE two pages and 10 bytes long, maps it
 *                        shared and writable, has the team write every
 *                        byte, and exits without msync or munmap: the
 *                        shim must write the mapping back at the end;
 *   mapping FILE check   reads FILE with read(2) and checks every byte;
 *   mapping FILE exec    asks for an executable mapping of shared memory
 *                        with mprotect: the shim stops the job, saying so.
 */
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIZE (2 * 4096 + 10)

static unsigned char pat(long i) { return (unsigned char)(i * 11 + 1); }

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mapping FILE write|check|exec\n");
        return 2;
    }
    if (!strcmp(argv[2], "write")) {
        int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || ftruncate(fd, SIZE) != 0) {
            perror("mapping: FAIL: cannot make the file");
            return 1;
        }
        unsigned char *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            perror("mapping: FAIL: mmap");
            return 1;
        }
        close(fd);
        long i;
#pragma omp parallel for
        for (i = 0; i < SIZE; i++)
            p[i] = pat(i);
        printf("mapping: written by a team of %d\n", omp_get_max_threads());
        return 0;
    }
    if (!strcmp(argv[2], "check")) {
        unsigned char buf[SIZE + 1];
        long got = 0, bad = 0;
        ssize_t r;
        int fd = open(argv[1], O_RDONLY);
        while (fd >= 0 && got < SIZE + 1 && (r = read(fd, buf + got, SIZE + 1 - got)) > 0)
            got += r;
        for (long i = 0; i < got && i < SIZE; i++)
            bad += buf[i] != pat(i);
        if (got != SIZE || bad) {
            printf("mapping: FAIL: the file has %ld bytes, %ld of them wrong\n", got, bad);
            return 1;
        }
        printf("mapping: file ok\n");
        return 0;
    }
    if (!strcmp(argv[2], "exec")) {
        unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        p[0] = 0xc3;                    /* ret */
        if (mprotect(p, 4096, PROT_READ | PROT_EXEC) == 0)
            ((void (*)(void))p)();
        printf("mapping: FAIL: went on after mprotect(PROT_EXEC)\n");
        return 1;
    }
    fprintf(stderr, "mapping: unknown mode %s\n", argv[2]);
    return 2;
}
