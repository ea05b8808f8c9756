/*
 * fileio.c - another rank's I/O on a file that rank 0 opened, run by rank 0.
 *
 * A descriptor or stdio stream the program opened on rank 0 (fds.c) exists
 * in rank 0's process only.  When a thread on another rank reads, writes,
 * seeks or closes it, the call travels to rank 0 as a libdsm service call
 * (libdsm/service.c), rank 0's service thread makes it on its own
 * descriptor or FILE, and the result, errno and any data read come back.
 * The file offset and the stream's buffer are rank 0's alone, so every
 * rank's calls go through one position in one order: the order in which
 * they reach rank 0, which the program's synchronisation (critical,
 * ordered, a lock) decides as it would in one process.  A call moves at
 * most SHIM_FIO_DATA bytes; longer reads and writes are split here.
 *
 * Threads: the shim_fio_* calls from any thread of a rank other than 0;
 * serve() on rank 0's service thread (it touches no shared memory: the
 * data comes in the request and goes back in the reply).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"

#define SHIM_SVC_FILEIO 0

struct fio_req {
    uint32_t op;
    int32_t  fd;
    uint64_t stream;
    int64_t  a, b;
};

/* A failed call's result: -1 - errno, so that errno 0 still reads as failure. */
static int64_t failed(void)
{
    return -1 - (int64_t)errno;
}

static int64_t serve_stream(const struct fio_req *rq, FILE *f, const unsigned char *data,
                            size_t len, unsigned char *out, size_t *olen)
{
    int c;
    switch (rq->op) {
    case FIO_FWRITE:
        /* A short count with the stream's error set, as fwrite gives. */
        return (int64_t)fwrite(data, 1, len, f);
    case FIO_FREAD: {
        size_t want = (size_t)rq->b < SHIM_FIO_DATA ? (size_t)rq->b : SHIM_FIO_DATA;
        *olen = fread(out, 1, want, f);
        return (int64_t)*olen;
    }
    case FIO_FGETS: {
        int n = rq->b < SHIM_FIO_DATA ? (int)rq->b : SHIM_FIO_DATA;
        if (!fgets((char *)out, n, f))
            return failed();
        *olen = strlen((char *)out);
        return (int64_t)*olen;
    }
    case FIO_FGETC:
        c = fgetc(f);
        return c == EOF ? failed() : c;
    case FIO_UNGETC:
        c = ungetc((int)rq->a, f);
        return c == EOF ? failed() : c;
    case FIO_GETDELIM: {
        /* Up to the delimiter or SHIM_FIO_DATA bytes; b = 1: a delimiter
         * ended this piece (the caller asks again otherwise). */
        size_t n = 0;
        while (n < SHIM_FIO_DATA) {
            c = getc(f);
            if (c == EOF)
                break;
            out[n++] = (unsigned char)c;
            if (c == (int)rq->a)
                break;
        }
        *olen = n;
        return n ? (int64_t)n : failed();
    }
    case FIO_FFLUSH:
        return fflush(f) ? failed() : 0;
    case FIO_FSEEK:
        return fseeko(f, (off_t)rq->a, (int)rq->b) ? failed() : 0;
    case FIO_FTELL: {
        off_t o = ftello(f);
        return o < 0 ? failed() : (int64_t)o;
    }
    case FIO_FEOF:
        return feof(f);
    case FIO_FERROR:
        return ferror(f);
    case FIO_CLEARERR:
        clearerr(f);
        return 0;
    case FIO_FILENO:
        return fileno(f);
    case FIO_FCLOSE:
        shim_fd_closed(fileno(f));
        shim_stream_closed(f);
        return fclose(f) ? failed() : 0;
    case FIO_SETVBUF:
        return setvbuf(f, NULL, (int)rq->a, (size_t)rq->b) ? failed() : 0;
    }
    errno = EINVAL;
    return failed();
}

static int64_t serve_fd(const struct fio_req *rq, const unsigned char *data, size_t len,
                        unsigned char *out, size_t *olen)
{
    int fd = rq->fd;
    ssize_t k;
    struct stat st;
    size_t want = (size_t)rq->b < SHIM_FIO_DATA ? (size_t)rq->b : SHIM_FIO_DATA;
    switch (rq->op) {
    case FIO_READ:
        k = read(fd, out, want);
        break;
    case FIO_PREAD:
        k = pread(fd, out, want, (off_t)rq->a);
        break;
    case FIO_WRITE:
        return (k = write(fd, data, len)) < 0 ? failed() : k;
    case FIO_PWRITE:
        return (k = pwrite(fd, data, len, (off_t)rq->a)) < 0 ? failed() : k;
    case FIO_LSEEK: {
        off_t o = lseek(fd, (off_t)rq->a, (int)rq->b);
        return o < 0 ? failed() : (int64_t)o;
    }
    case FIO_CLOSE:
        /* The program's close, as if rank 0 had called it. */
        return close(fd) ? failed() : 0;
    case FIO_FSTAT:
        if (fstat(fd, &st))
            return failed();
        memcpy(out, &st, sizeof st);
        *olen = sizeof st;
        return 0;
    case FIO_FSYNC:
        return fsync(fd) ? failed() : 0;
    case FIO_FDATASYNC:
        return fdatasync(fd) ? failed() : 0;
    case FIO_FTRUNCATE:
        return ftruncate(fd, (off_t)rq->a) ? failed() : 0;
    case FIO_FCNTL: {
        /* F_GETFD, F_SETFD, F_GETFL, F_SETFL only (fds.c): int arguments. */
        int cmd = (int)rq->a;
        if (cmd != F_GETFD && cmd != F_SETFD && cmd != F_GETFL && cmd != F_SETFL) {
            errno = EINVAL;
            return failed();
        }
        int r = fcntl(fd, cmd, (int)rq->b);
        return r < 0 ? failed() : r;
    }
    default:
        errno = EINVAL;
        return failed();
    }
    if (k < 0)
        return failed();
    *olen = (size_t)k;
    return k;
}

static int64_t serve(int src, const void *req, size_t len, void *reply, size_t *reply_len)
{
    struct fio_req rq;
    (void)src;
    *reply_len = 0;
    if (len < sizeof rq) {
        errno = EINVAL;
        return failed();
    }
    memcpy(&rq, req, sizeof rq);
    errno = 0;                  /* a failure that sets none says so (-1) */
    const unsigned char *data = (const unsigned char *)req + sizeof rq;
    len -= sizeof rq;
    if (rq.op >= FIO_FWRITE) {
        FILE *f = (FILE *)(uintptr_t)rq.stream;
        /* Closed by now (another rank's fclose came first): as stdio would
         * after fclose, but without touching freed memory. */
        if (!shim_stream_rank0(f)) {
            errno = EBADF;
            return failed();
        }
        return serve_stream(&rq, f, data, len, reply, reply_len);
    }
    if (!shim_fd_rank0(rq.fd)) {
        errno = EBADF;
        return failed();
    }
    if (rq.op == FIO_CLOSE)
        shim_fd_closed(rq.fd);
    return serve_fd(&rq, data, len, reply, reply_len);
}

/* ---- the caller's side (ranks other than 0) ---- */

static int64_t call(const struct fio_req *rq, const void *data, size_t len, void *out,
                    size_t cap, size_t *olen)
{
    size_t got = 0;
    int64_t r = dsm__call(0, SHIM_SVC_FILEIO, rq, sizeof *rq, data, len, out, cap, &got);
    if (olen)
        *olen = got;
    if (r < -1)
        errno = (int)(-1 - r);  /* -1: failed without errno (end of file) */
    return r;
}

int64_t shim_fio_stream(int op, FILE *f, int64_t a, int64_t b, const void *data,
                        size_t len, void *out, size_t cap, size_t *olen)
{
    struct fio_req rq = { (uint32_t)op, -1, (uint64_t)(uintptr_t)f, a, b };
    return call(&rq, data, len, out, cap, olen);
}

int64_t shim_fio_fd(int op, int fd, int64_t a, int64_t b, const void *data, size_t len,
                    void *out, size_t cap, size_t *olen)
{
    struct fio_req rq = { (uint32_t)op, fd, 0, a, b };
    return call(&rq, data, len, out, cap, olen);
}

/* Data coming in lands in a private buffer first, then in buf (which may be
 * shared memory: an ordinary store faults it in). */
ssize_t shim_fio_read(int fd, void *buf, size_t n, off_t off, int at)
{
    size_t want = n < SHIM_FIO_DATA ? n : SHIM_FIO_DATA, got = 0;
    unsigned char *tmp = malloc(want ? want : 1);
    if (!tmp)
        dsm__fatal("out of private memory for a read of %zu bytes", want);
    int64_t r = shim_fio_fd(at ? FIO_PREAD : FIO_READ, fd, off, (int64_t)want, NULL, 0,
                            tmp, want, &got);
    if (r >= 0)
        memcpy(buf, tmp, got);
    free(tmp);
    return r < 0 ? -1 : (ssize_t)got;
}

/* All of it, in pieces, unless a piece comes back short or fails. */
ssize_t shim_fio_write(int fd, const void *buf, size_t n, off_t off, int at)
{
    size_t done = 0;
    do {
        size_t k = n - done < SHIM_FIO_DATA ? n - done : SHIM_FIO_DATA;
        int64_t r = shim_fio_fd(at ? FIO_PWRITE : FIO_WRITE, fd, off + (off_t)done, 0,
                                (const char *)buf + done, k, NULL, 0, NULL);
        if (r < 0)
            return done ? (ssize_t)done : -1;
        done += (size_t)r;
        if ((size_t)r < k)
            break;
    } while (done < n);
    return (ssize_t)done;
}

int shim_fio_close(int fd)
{
    return shim_fio_fd(FIO_CLOSE, fd, 0, 0, NULL, 0, NULL, 0, NULL) < 0 ? -1 : 0;
}

int shim_fio_fclose(FILE *f)
{
    return shim_fio_stream(FIO_FCLOSE, f, 0, 0, NULL, 0, NULL, 0, NULL) < 0 ? EOF : 0;
}

/* ---- the program's descriptor calls that have no wrapper elsewhere ---- */

static off_t shim_lseek(int fd, off_t off, int whence)
{
    if (shim_fd_remote(fd)) {
        int64_t r = shim_fio_fd(FIO_LSEEK, fd, off, whence, NULL, 0, NULL, 0, NULL);
        return r < 0 ? -1 : (off_t)r;
    }
    return lseek(fd, off, whence);
}

static int fd_simple(int op, int fd, int64_t a)
{
    return shim_fio_fd(op, fd, a, 0, NULL, 0, NULL, 0, NULL) < 0 ? -1 : 0;
}

static int shim_fsync(int fd)
{
    return shim_fd_remote(fd) ? fd_simple(FIO_FSYNC, fd, 0) : fsync(fd);
}

static int shim_fdatasync(int fd)
{
    return shim_fd_remote(fd) ? fd_simple(FIO_FDATASYNC, fd, 0) : fdatasync(fd);
}

static int shim_ftruncate(int fd, off_t len)
{
    return shim_fd_remote(fd) ? fd_simple(FIO_FTRUNCATE, fd, len) : ftruncate(fd, len);
}

static int shim_fstat(int fd, struct stat *st)
{
    if (!shim_fd_remote(fd))
        return fstat(fd, st);
    struct stat tmp;
    size_t got = 0;
    if (shim_fio_fd(FIO_FSTAT, fd, 0, 0, NULL, 0, &tmp, sizeof tmp, &got) < 0)
        return -1;
    memcpy(st, &tmp, sizeof tmp);
    return 0;
}

void shim_fileio_init(void)
{
    static const struct shim_got_entry calls[] = {
        { "lseek", (void *)shim_lseek }, { "lseek64", (void *)shim_lseek },
        { "fsync", (void *)shim_fsync }, { "fdatasync", (void *)shim_fdatasync },
        { "ftruncate", (void *)shim_ftruncate }, { "ftruncate64", (void *)shim_ftruncate },
        { "fstat", (void *)shim_fstat }, { "fstat64", (void *)shim_fstat },
    };
    dsm__service_register(SHIM_SVC_FILEIO, serve);
    shim_got_bind(calls, sizeof calls / sizeof calls[0]);
}
