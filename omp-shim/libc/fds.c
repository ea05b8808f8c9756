/*
 * fds.c - the files the program opens on rank 0, so that another rank's
 * I/O on one of them goes to rank 0 (fileio.c) instead of reaching a file
 * of its own that has the same number.
 *
 * Open files belong to the process that opened them.  A parallel region
 * that writes to a descriptor or a stdio stream that rank 0 opened in
 * sequential code (R's data.table: fwrite with several threads; a FILE
 * written under `omp critical`) would, on another rank, write to whatever
 * that rank has at the same number (an MPI socket, a file of its own), or
 * read a FILE that is not there.  The program's open, openat, creat,
 * fopen, fdopen, freopen, tmpfile, dup, dup2, dup3, close and fclose (their
 * GOT entries, got.c) come here: on rank 0 each descriptor the program opens
 * is recorded, with its file's device and inode, in a table in shared
 * memory, and each stream in a second table; on another rank, in private
 * lists of its own.  So do the program's other calls that make a
 * descriptor (pipe, socket, accept, mkstemp, memfd_create, eventfd, ...):
 * a descriptor of its own on another rank must stay its own, even at a
 * number that is one of rank 0's files.  On a rank other than 0, the
 * program's I/O calls (syscalls.c, fileio.c, streams.c) ask shim_fd_remote
 * and shim_stream_remote whether the descriptor or stream is rank 0's, and
 * if so send the call there.  dup, dup2, dup3 and fcntl(F_DUPFD) of rank
 * 0's descriptor on another rank stop the job with a message.
 *
 * Threads: any (the tables' entries are single words written by rank 0).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"

#define FD_MAX 1024
#define STREAM_MAX 512

struct fd_entry { uint64_t dev, ino; };    /* ino 0: not rank 0's program's */

static struct fd_entry *table;      /* in shared memory, homed at rank 0 */
static unsigned char mine[FD_MAX];  /* other ranks: opened by the program here */
/* Rank 0's FILE pointers (0: free), shared; slots [0, hi) have been used, so
 * a lookup (every stdio call of the program on another rank) reads only
 * those, and none while rank 0 has opened no stream. */
static struct stream_table { uint64_t hi; uint64_t f[STREAM_MAX]; } *streams;
static FILE *my_streams[STREAM_MAX];        /* other ranks: opened here */
static pthread_mutex_t my_lock = PTHREAD_MUTEX_INITIALIZER;

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

void shim_fd_closed(int fd)
{
    closing(fd);
}

int shim_fd_remote(int fd)
{
    if (shim.rank == 0 || !shim.active || fd < 3 || fd >= FD_MAX || !table || mine[fd])
        return 0;
    return __atomic_load_n(&table[fd].ino, __ATOMIC_RELAXED) != 0;
}

int shim_fd_rank0(int fd)
{
    return table && fd >= 3 && fd < FD_MAX &&
           __atomic_load_n(&table[fd].ino, __ATOMIC_RELAXED) != 0;
}

/* ---- streams ---- */

static void stream_opened(FILE *f)
{
    if (!f || !streams)
        return;
    if (shim.rank != 0) {
        pthread_mutex_lock(&my_lock);
        for (int i = 0; i < STREAM_MAX; i++)
            if (!my_streams[i]) {
                my_streams[i] = f;
                break;
            }
        pthread_mutex_unlock(&my_lock);
        return;
    }
    for (uint64_t i = 0; i < STREAM_MAX; i++)
        if (__atomic_compare_exchange_n(&streams->f[i], &(uint64_t){ 0 },
                                        (uint64_t)(uintptr_t)f, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            uint64_t hi = __atomic_load_n(&streams->hi, __ATOMIC_RELAXED);
            while (hi < i + 1 && !__atomic_compare_exchange_n(&streams->hi, &hi, i + 1, 0,
                                                              __ATOMIC_RELAXED,
                                                              __ATOMIC_RELAXED))
                ;
            return;
        }
    fprintf(stderr, "libompshim[rank 0]: warning: the program has more than %d streams "
            "open; this one cannot be used from other ranks\n", STREAM_MAX);
}

void shim_stream_closed(FILE *f)
{
    if (!f || !streams)
        return;
    if (shim.rank != 0) {
        pthread_mutex_lock(&my_lock);
        for (int i = 0; i < STREAM_MAX; i++)
            if (my_streams[i] == f)
                my_streams[i] = NULL;
        pthread_mutex_unlock(&my_lock);
        return;
    }
    uint64_t hi = __atomic_load_n(&streams->hi, __ATOMIC_RELAXED);
    for (uint64_t i = 0; i < hi; i++)
        if (__atomic_load_n(&streams->f[i], __ATOMIC_RELAXED) == (uint64_t)(uintptr_t)f)
            __atomic_store_n(&streams->f[i], 0, __ATOMIC_RELAXED);
}

int shim_stream_rank0(const FILE *f)
{
    if (!f || !streams)
        return 0;
    uint64_t hi = __atomic_load_n(&streams->hi, __ATOMIC_RELAXED);
    for (uint64_t i = 0; i < hi && i < STREAM_MAX; i++)
        if (__atomic_load_n(&streams->f[i], __ATOMIC_RELAXED) == (uint64_t)(uintptr_t)f)
            return 1;
    return 0;
}

int shim_stream_remote(const FILE *f)
{
    if (shim.rank == 0 || !shim.active || !f || !streams || f == stdin || f == stdout ||
        f == stderr || !shim_stream_rank0(f))
        return 0;
    /* The same address as one of rank 0's: a stream of this rank's own? */
    int mine_here = 0;
    pthread_mutex_lock(&my_lock);
    for (int i = 0; i < STREAM_MAX && !mine_here; i++)
        mine_here = my_streams[i] == f;
    pthread_mutex_unlock(&my_lock);
    return !mine_here;
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

static FILE *stream(FILE *f)
{
    if (f) {
        opened(fileno(f));
        stream_opened(f);
    }
    return f;
}

static FILE *shim_fopen(const char *path, const char *how)
{
    return stream(fopen(path, how));
}

static FILE *shim_fdopen(int fd, const char *how)
{
    if (shim_fd_remote(fd))
        dsm__fatal("fdopen(%d) on rank %d: descriptor %d is a file rank 0 opened; a "
                   "stream over it works on rank 0 only. Call fdopen in sequential "
                   "code, and use the stream from any rank (ompshim(7), FILES)",
                   fd, shim.rank, fd);
    return stream(fdopen(fd, how));
}

static FILE *shim_tmpfile(void)
{
    return stream(tmpfile());
}

static FILE *shim_freopen(const char *path, const char *how, FILE *old)
{
    if (old && shim_stream_remote(old))
        dsm__fatal("freopen on rank %d of a stream rank 0 opened: call freopen in "
                   "sequential code (ompshim(7), FILES)", shim.rank);
    if (old) {
        closing(fileno(old));
        shim_stream_closed(old);
    }
    return stream(freopen(path, how, old));
}

/* A copy of rank 0's descriptor made on another rank would be a copy of
 * whatever this rank has at that number. */
static void no_dup(int fd, const char *call)
{
    if (shim_fd_remote(fd))
        dsm__fatal("%s(%d) on rank %d: descriptor %d is a file rank 0 opened; copies of "
                   "it can be made on rank 0 only. Call %s in sequential code (ompshim(7), "
                   "FILES)", call, fd, shim.rank, fd, call);
}

static int shim_dup(int fd)
{
    no_dup(fd, "dup");
    return track(dup(fd));
}

static int shim_dup2(int fd, int to)
{
    no_dup(fd, "dup2");
    return track(dup2(fd, to));
}

static int shim_dup3(int fd, int to, int flags)
{
    no_dup(fd, "dup3");
    return track(dup3(fd, to, flags));
}

static int shim_fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);    /* int or pointer: one register either way */
    va_end(ap);
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) {
        no_dup(fd, "fcntl(F_DUPFD)");
        return track(fcntl(fd, cmd, (int)arg));
    }
    if (shim_fd_remote(fd)) {
        if (cmd == F_GETFD || cmd == F_GETFL || cmd == F_SETFD || cmd == F_SETFL) {
            int64_t r = shim_fio_fd(FIO_FCNTL, fd, cmd, arg, NULL, 0, NULL, 0, NULL);
            return r < 0 ? -1 : (int)r;
        }
        dsm__fatal("fcntl(%d, %d) on rank %d: descriptor %d is a file rank 0 opened; of "
                   "fcntl, only F_GETFD, F_SETFD, F_GETFL and F_SETFL go to rank 0 "
                   "(ompshim(7), FILES)", fd, cmd, shim.rank, fd);
    }
    return fcntl(fd, cmd, arg);
}

/* ---- the program's other calls that make descriptors ---- */

static int track2(int rc, const int *fds)
{
    if (rc == 0) {
        opened(fds[0]);
        opened(fds[1]);
    }
    return rc;
}

static int shim_pipe(int fds[2])
{
    return track2(pipe(fds), fds);
}

static int shim_pipe2(int fds[2], int flags)
{
    return track2(pipe2(fds, flags), fds);
}

static int shim_socketpair(int dom, int type, int proto, int fds[2])
{
    return track2(socketpair(dom, type, proto, fds), fds);
}

static int shim_socket(int dom, int type, int proto)
{
    return track(socket(dom, type, proto));
}

static int shim_accept(int fd, struct sockaddr *a, socklen_t *len)
{
    return track(accept(fd, a, len));
}

static int shim_accept4(int fd, struct sockaddr *a, socklen_t *len, int flags)
{
    return track(accept4(fd, a, len, flags));
}

static int shim_mkstemp(char *tmpl)
{
    return track(mkstemp(tmpl));
}

static int shim_mkostemp(char *tmpl, int flags)
{
    return track(mkostemp(tmpl, flags));
}

static int shim_mkstemps(char *tmpl, int suffix)
{
    return track(mkstemps(tmpl, suffix));
}

static int shim_mkostemps(char *tmpl, int suffix, int flags)
{
    return track(mkostemps(tmpl, suffix, flags));
}

static int shim_memfd_create(const char *name, unsigned flags)
{
    return track(memfd_create(name, flags));
}

static int shim_eventfd(unsigned init, int flags)
{
    return track(eventfd(init, flags));
}

static int shim_epoll_create(int size)
{
    return track(epoll_create(size));
}

static int shim_epoll_create1(int flags)
{
    return track(epoll_create1(flags));
}

static int shim_close(int fd)
{
    if (shim_fd_remote(fd))
        return shim_fio_close(fd);
    closing(fd);
    return close(fd);
}

static int shim_fclose(FILE *f)
{
    if (shim_stream_remote(f))
        return shim_fio_fclose(f);
    if (f) {
        closing(fileno(f));
        shim_stream_closed(f);
    }
    return fclose(f);
}

void shim_fds_init(void)
{
    static const struct shim_got_entry calls[] = {
        { "open", (void *)shim_open }, { "open64", (void *)shim_open },
        { "openat", (void *)shim_openat }, { "openat64", (void *)shim_openat },
        { "creat", (void *)shim_creat }, { "creat64", (void *)shim_creat },
        { "fopen", (void *)shim_fopen }, { "fopen64", (void *)shim_fopen },
        { "fdopen", (void *)shim_fdopen }, { "tmpfile", (void *)shim_tmpfile },
        { "tmpfile64", (void *)shim_tmpfile },
        { "freopen", (void *)shim_freopen }, { "freopen64", (void *)shim_freopen },
        { "dup", (void *)shim_dup }, { "dup2", (void *)shim_dup2 },
        { "dup3", (void *)shim_dup3 }, { "close", (void *)shim_close },
        { "fclose", (void *)shim_fclose }, { "fcntl", (void *)shim_fcntl },
        { "fcntl64", (void *)shim_fcntl },
        { "pipe", (void *)shim_pipe }, { "pipe2", (void *)shim_pipe2 },
        { "socketpair", (void *)shim_socketpair }, { "socket", (void *)shim_socket },
        { "accept", (void *)shim_accept }, { "accept4", (void *)shim_accept4 },
        { "mkstemp", (void *)shim_mkstemp }, { "mkstemp64", (void *)shim_mkstemp },
        { "mkostemp", (void *)shim_mkostemp }, { "mkostemp64", (void *)shim_mkostemp },
        { "mkstemps", (void *)shim_mkstemps }, { "mkstemps64", (void *)shim_mkstemps },
        { "mkostemps", (void *)shim_mkostemps }, { "mkostemps64", (void *)shim_mkostemps },
        { "memfd_create", (void *)shim_memfd_create }, { "eventfd", (void *)shim_eventfd },
        { "epoll_create", (void *)shim_epoll_create },
        { "epoll_create1", (void *)shim_epoll_create1 },
    };
    table = dsm_malloc_home(FD_MAX * sizeof *table, DSM_HOME_NODE, 0);
    streams = dsm_malloc_home(sizeof *streams, DSM_HOME_NODE, 0);
    if (!table || !streams)
        dsm__fatal("the shared region is too small for the shim's table of open files; "
                   "raise DSM_HEAP_SIZE");
    shim_got_bind(calls, sizeof calls / sizeof calls[0]);
}
