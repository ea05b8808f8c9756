/*
 * fds.c - the descriptors the program opens on rank 0, so that another
 * rank's read or write on one of them stops the job instead of reaching a
 * file of its own that has the same number.
 *
 * Open files belong to the process that opened them.  A parallel region
 * that writes to a descriptor rank 0 opened in sequential code (R's
 * data.table: fwrite with several threads) writes, on another rank, to
 * whatever that rank has at the same number: an MPI socket, a file of its
 * own.  The program's open, openat, creat, fopen, freopen, dup, dup2, dup3,
 * close and fclose (their GOT entries, got.c) come here: on rank 0 each
 * descriptor the program opens is recorded, with its file's device and
 * inode, in a table in shared memory; on another rank, in a private list of
 * its own.  The shim's read and write wrappers (syscalls.c) call
 * shim_fd_check for the program's calls on ranks other than 0: a
 * descriptor in rank 0's table, not opened by the program here, that is
 * closed here or another file, is a fatal error.  Descriptors made by other
 * calls (socket, pipe, mkstemp) are not recorded: no check for them.
 *
 * Threads: any (the table's entries are single words written by rank 0).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"

#define FD_MAX 1024

struct fd_entry { uint64_t dev, ino; };    /* ino 0: not rank 0's program's */

static struct fd_entry *table;      /* in shared memory, homed at rank 0 */
static unsigned char mine[FD_MAX];  /* other ranks: opened by the program here */

static void opened(int fd)
{
    struct stat st;
    if (!table || fd < 3 || fd >= FD_MAX)
        return;
    if (shim.rank != 0) {
        mine[fd] = 1;
        return;
    }
    if (fstat(fd, &st) != 0)
        return;
    table[fd].dev = st.st_dev;
    __atomic_store_n(&table[fd].ino, st.st_ino ? (uint64_t)st.st_ino : 1, __ATOMIC_RELAXED);
}

static void closing(int fd)
{
    if (!table || fd < 3 || fd >= FD_MAX)
        return;
    if (shim.rank != 0)
        mine[fd] = 0;
    else if (table[fd].ino)
        __atomic_store_n(&table[fd].ino, 0, __ATOMIC_RELAXED);
}

void shim_fd_check(int fd, const char *call)
{
    struct stat st;
    char here[256];
    if (fd < 3 || fd >= FD_MAX || !table || mine[fd])
        return;
    uint64_t ino = __atomic_load_n(&table[fd].ino, __ATOMIC_RELAXED);
    if (!ino)
        return;
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_dev == table[fd].dev &&
        (st.st_ino ? (uint64_t)st.st_ino : 1) == ino)
        return;                 /* the same file here too (opened before start-up) */
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(link, here, sizeof here - 1);
    if (k > 0)
        here[k] = 0;
    dsm__fatal("%s on descriptor %d from a parallel region: the program opened it on "
               "rank 0, and only rank 0 has that file open; on this rank descriptor %d "
               "is %s%s. Open the file inside the region, in the thread that uses it, "
               "or do this I/O in sequential code (ompshim(7), LIMITS)", call, fd, fd,
               k > 0 ? "another file: " : "not open", k > 0 ? here : "");
}

/* ---- the program's calls ---- */

static int want_mode(int flags)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* A new descriptor (or -1), recorded. */
static int track(int fd)
{
    if (fd >= 0)
        opened(fd);
    return fd;
}

static int shim_open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = want_mode(flags) ? (mode_t)va_arg(ap, int) : 0;
    va_end(ap);
    return track(open(path, flags, mode));
}

static int shim_openat(int dir, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = want_mode(flags) ? (mode_t)va_arg(ap, int) : 0;
    va_end(ap);
    return track(openat(dir, path, flags, mode));
}

static int shim_creat(const char *path, mode_t mode)
{
    return track(creat(path, mode));
}

static FILE *shim_fopen(const char *path, const char *how)
{
    FILE *f = fopen(path, how);
    if (f)
        opened(fileno(f));
    return f;
}

static FILE *shim_freopen(const char *path, const char *how, FILE *old)
{
    if (old)
        closing(fileno(old));
    FILE *f = freopen(path, how, old);
    if (f)
        opened(fileno(f));
    return f;
}

static int shim_dup(int fd)
{
    return track(dup(fd));
}

static int shim_dup2(int fd, int to)
{
    return track(dup2(fd, to));
}

static int shim_dup3(int fd, int to, int flags)
{
    return track(dup3(fd, to, flags));
}

static int shim_close(int fd)
{
    closing(fd);
    return close(fd);
}

static int shim_fclose(FILE *f)
{
    if (f)
        closing(fileno(f));
    return fclose(f);
}

void shim_fds_init(void)
{
    static const struct shim_got_entry calls[] = {
        { "open", (void *)shim_open }, { "open64", (void *)shim_open },
        { "openat", (void *)shim_openat }, { "openat64", (void *)shim_openat },
        { "creat", (void *)shim_creat }, { "creat64", (void *)shim_creat },
        { "fopen", (void *)shim_fopen }, { "fopen64", (void *)shim_fopen },
        { "freopen", (void *)shim_freopen }, { "freopen64", (void *)shim_freopen },
        { "dup", (void *)shim_dup }, { "dup2", (void *)shim_dup2 },
        { "dup3", (void *)shim_dup3 }, { "close", (void *)shim_close },
        { "fclose", (void *)shim_fclose },
    };
    table = dsm_malloc_home(FD_MAX * sizeof *table, DSM_HOME_NODE, 0);
    if (!table)
        dsm__fatal("the shared region is too small for the shim's table of open files; "
                   "raise DSM_HEAP_SIZE");
    shim_got_bind(calls, sizeof calls / sizeof calls[0]);
}
