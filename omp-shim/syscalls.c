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
 * than 0, the program's read and write on a descriptor that only rank 0
 * has stop the job (fds.c).
 *
 * Threads: any.
 */
#define _GNU_SOURCE
#include <stdio.h>
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

/* The program's call on a rank other than 0: is fd one that only rank 0
 * has (fds.c)? */
#define CHECK_FD(fd, call) \
    do { \
        if (shim.rank != 0 && shim_code_is_program(__builtin_return_address(0))) \
            shim_fd_check(fd, call); \
    } while (0)

SHIM_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    SHIM_REAL(read);
    CHECK_FD(fd, "read");
    shim_io_prepare(buf, n, 1);
    return real_read(fd, buf, n);
}

SHIM_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    SHIM_REAL(pread);
    CHECK_FD(fd, "pread");
    shim_io_prepare(buf, n, 1);
    return real_pread(fd, buf, n, off);
}

SHIM_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    SHIM_REAL(write);
    CHECK_FD(fd, "write");
    shim_io_prepare(buf, n, 0);
    return real_write(fd, buf, n);
}

SHIM_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    SHIM_REAL(pwrite);
    CHECK_FD(fd, "pwrite");
    shim_io_prepare(buf, n, 0);
    return real_pwrite(fd, buf, n, off);
}

SHIM_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    SHIM_REAL(readv);
    CHECK_FD(fd, "readv");
    for (int i = 0; i < cnt; i++)
        shim_io_prepare(iov[i].iov_base, iov[i].iov_len, 1);
    return real_readv(fd, iov, cnt);
}

SHIM_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    SHIM_REAL(writev);
    CHECK_FD(fd, "writev");
    for (int i = 0; i < cnt; i++)
        shim_io_prepare(iov[i].iov_base, iov[i].iov_len, 0);
    return real_writev(fd, iov, cnt);
}

SHIM_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    SHIM_REAL(recv);
    shim_io_prepare(buf, n, 1);
    return real_recv(fd, buf, n, flags);
}

SHIM_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    SHIM_REAL(send);
    shim_io_prepare(buf, n, 0);
    return real_send(fd, buf, n, flags);
}

SHIM_EXPORT size_t fread(void *buf, size_t size, size_t n, FILE *f)
{
    SHIM_REAL(fread);
    if (size && n <= (size_t)-1 / size)
        shim_io_prepare(buf, size * n, 1);
    return real_fread(buf, size, n, f);
}

SHIM_EXPORT size_t fwrite(const void *buf, size_t size, size_t n, FILE *f)
{
    SHIM_REAL(fwrite);
    if (size && n <= (size_t)-1 / size)
        shim_io_prepare(buf, size * n, 0);
    return real_fwrite(buf, size, n, f);
}

SHIM_EXPORT int setvbuf(FILE *f, char *buf, int mode, size_t size)
{
    SHIM_REAL(setvbuf);
    if (buf && shim.active && dsm__in_region(buf))
        buf = NULL;
    return real_setvbuf(f, buf, mode, size);
}

SHIM_EXPORT void setbuf(FILE *f, char *buf)
{
    setvbuf(f, buf, buf ? _IOFBF : _IONBF, BUFSIZ);
}
