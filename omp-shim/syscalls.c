/*
 * syscalls.c - system calls on shared memory.
 *
 * The kernel does not fault on a protected page the way the program does:
 * read(2) into a buffer whose DSM pages are not writable here fails with
 * EFAULT (or comes back short), write(2) from invalid pages likewise.  So
 * the shim wraps the calls that move data between a file and a buffer
 * (read, pread, readv, write, pwrite, writev, recv, send, and fread and
 * fwrite, whose large transfers go straight to the system call), and makes
 * the buffer's pages valid first: one read per page for data going out, one
 * atomic add of zero per page for data coming in (a write fault that makes
 * the page writable without changing it).  A stdio buffer that the
 * program gives setvbuf or setbuf in shared memory would be written out by
 * the C library's own write(2), which these wrappers do not see (`gm
 * convert` on 2 ranks failed with "writing to file ... [Bad address]"): the
 * stream gets a buffer of the C library's instead, of the same size and
 * mode.  Other system calls that write into shared memory (stat into a
 * global struct, say) are not covered; see ompshim(7).  On a rank other
 * than 0, the program's read and write on a descriptor or stream that
 * rank 0 opened go to rank 0 (fds.c, fileio.c).
 *
 * Threads: any.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "shim.h"

void shim_io_prepare(const void *buf, size_t len, int incoming)
{
    if (!shim.active || len == 0 || !buf)
        return;
    const unsigned char *p = buf, *end = p + len;
    if (!dsm__in_region(p) && !dsm__in_region(end - 1))
        return;
    size_t os = dsm__g.os_page;
    for (const unsigned char *q = p; q < end; q = (const unsigned char *)
             (((uintptr_t)q + os) & ~(uintptr_t)(os - 1))) {
        if (!dsm__in_region(q))
            continue;
        if (incoming)
            __atomic_fetch_add((unsigned char *)q, 0, __ATOMIC_RELAXED);
        else
            (void)*(const volatile unsigned char *)q;
    }
}

/* Another thread of this rank can take the buffer's pages away between
 * shim_io_prepare and the call: a barrier or lock release in a parallel
 * region write-protects the pages this rank wrote, an acquire drops stale
 * copies.  The call then fails with EFAULT having moved nothing (cdo's
 * operator threads read their files while the main thread's region ran
 * on: "Open failed ... Unsupported file type"), and is made again, after
 * the pages are made valid again.  A call that moved some bytes first
 * returns them, as a short transfer. */
static int lost_pages(ssize_t r, const void *buf, size_t n)
{
    return r < 0 && errno == EFAULT && shim.active && n &&
           (dsm__in_region(buf) || dsm__in_region((const char *)buf + n - 1));
}

#define IO_RETRY(buf, n, incoming, call) \
    ({ \
        ssize_t r_; \
        int tries_ = 0; \
        do { \
            shim_io_prepare(buf, n, incoming); \
            r_ = (call); \
        } while (lost_pages(r_, buf, n) && ++tries_ < 1000); \
        r_; \
    })

/* The program's call on a rank other than 0, on a descriptor (stream) that
 * rank 0 opened (fds.c): it goes to rank 0 (fileio.c).  The caller is
 * looked at first: it costs no shared memory. */
#define REMOTE_FD(fd) \
    (shim.rank != 0 && shim_code_is_program(__builtin_return_address(0)) && \
     shim_fd_remote(fd))
#define REMOTE_STREAM(f) \
    (shim.rank != 0 && shim_code_is_program(__builtin_return_address(0)) && \
     shim_stream_remote(f))

SHIM_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    SHIM_REAL(read);
    if (REMOTE_FD(fd))
        return shim_fio_read(fd, buf, n, 0, 0);
    return IO_RETRY(buf, n, 1, real_read(fd, buf, n));
}

SHIM_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    SHIM_REAL(pread);
    if (REMOTE_FD(fd))
        return shim_fio_read(fd, buf, n, off, 1);
    return IO_RETRY(buf, n, 1, real_pread(fd, buf, n, off));
}

SHIM_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    SHIM_REAL(write);
    if (REMOTE_FD(fd))
        return shim_fio_write(fd, buf, n, 0, 0);
    return IO_RETRY(buf, n, 0, real_write(fd, buf, n));
}

SHIM_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    SHIM_REAL(pwrite);
    if (REMOTE_FD(fd))
        return shim_fio_write(fd, buf, n, off, 1);
    return IO_RETRY(buf, n, 0, real_pwrite(fd, buf, n, off));
}

/* readv and writev on rank 0's descriptor: one read (write) of the total,
 * scattered (gathered) here. */
static size_t iov_total(const struct iovec *iov, int cnt)
{
    size_t t = 0;
    for (int i = 0; i < cnt; i++)
        t += iov[i].iov_len;
    return t;
}

static ssize_t remote_readv(int fd, const struct iovec *iov, int cnt)
{
    size_t t = iov_total(iov, cnt), pos = 0;
    unsigned char *tmp = malloc(t ? t : 1);
    if (!tmp)
        dsm__fatal("out of private memory for a readv of %zu bytes", t);
    ssize_t k = shim_fio_read(fd, tmp, t, 0, 0);
    for (int i = 0; k > 0 && i < cnt && pos < (size_t)k; i++) {
        size_t m = (size_t)k - pos < iov[i].iov_len ? (size_t)k - pos : iov[i].iov_len;
        memcpy(iov[i].iov_base, tmp + pos, m);
        pos += m;
    }
    free(tmp);
    return k;
}

static ssize_t remote_writev(int fd, const struct iovec *iov, int cnt)
{
    size_t t = iov_total(iov, cnt), pos = 0;
    unsigned char *tmp = malloc(t ? t : 1);
    if (!tmp)
        dsm__fatal("out of private memory for a writev of %zu bytes", t);
    for (int i = 0; i < cnt; i++) {
        memcpy(tmp + pos, iov[i].iov_base, iov[i].iov_len);
        pos += iov[i].iov_len;
    }
    ssize_t k = shim_fio_write(fd, tmp, t, 0, 0);
    free(tmp);
    return k;
}

/* readv or writev here, made again after EFAULT as IO_RETRY does. */
static ssize_t iov_call(ssize_t (*fn)(int, const struct iovec *, int), int fd,
                        const struct iovec *iov, int cnt, int incoming)
{
    ssize_t r;
    int tries = 0;
    do {
        for (int i = 0; i < cnt; i++)
            shim_io_prepare(iov[i].iov_base, iov[i].iov_len, incoming);
        r = fn(fd, iov, cnt);
    } while (r < 0 && errno == EFAULT && shim.active && ++tries < 1000);
    return r;
}

SHIM_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    SHIM_REAL(readv);
    if (REMOTE_FD(fd))
        return remote_readv(fd, iov, cnt);
    return iov_call(real_readv, fd, iov, cnt, 1);
}

SHIM_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    SHIM_REAL(writev);
    if (REMOTE_FD(fd))
        return remote_writev(fd, iov, cnt);
    return iov_call(real_writev, fd, iov, cnt, 0);
}

SHIM_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    SHIM_REAL(recv);
    return IO_RETRY(buf, n, 1, real_recv(fd, buf, n, flags));
}

SHIM_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    SHIM_REAL(send);
    return IO_RETRY(buf, n, 0, real_send(fd, buf, n, flags));
}

SHIM_EXPORT size_t fread(void *buf, size_t size, size_t n, FILE *f)
{
    SHIM_REAL(fread);
    if (REMOTE_STREAM(f))
        return shim_stream_fread(buf, size, n, f);
    if (size && n <= (size_t)-1 / size)
        shim_io_prepare(buf, size * n, 1);
    return real_fread(buf, size, n, f);
}

SHIM_EXPORT size_t fwrite(const void *buf, size_t size, size_t n, FILE *f)
{
    SHIM_REAL(fwrite);
    if (REMOTE_STREAM(f))
        return shim_stream_fwrite(buf, size, n, f);
    if (size && n <= (size_t)-1 / size)
        shim_io_prepare(buf, size * n, 0);
    return real_fwrite(buf, size, n, f);
}

SHIM_EXPORT int setvbuf(FILE *f, char *buf, int mode, size_t size)
{
    SHIM_REAL(setvbuf);
    if (REMOTE_STREAM(f))
        return shim_fio_stream(FIO_SETVBUF, f, mode, (int64_t)size, NULL, 0, NULL, 0,
                               NULL) < 0 ? -1 : 0;
    if (buf && shim.active && dsm__in_region(buf))
        buf = NULL;
    return real_setvbuf(f, buf, mode, size);
}

SHIM_EXPORT void setbuf(FILE *f, char *buf)
{
    setvbuf(f, buf, buf ? _IOFBF : _IONBF, BUFSIZ);
}
