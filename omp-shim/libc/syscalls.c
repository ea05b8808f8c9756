/*
 * syscalls.c - system calls on shared memory.
 *
 * The kernel does not fault on a protected page the way the program does:
 * read(2) into a buffer whose DSM pages are not writable here fails with
 * EFAULT, or comes back short if it moved some bytes first; write(2) from
 * invalid pages likewise.  So the shim wraps the calls that move data
 * between a file and a buffer (read, pread, readv, write, pwrite, writev,
 * recv, send, and fread and fwrite, whose large transfers go straight to
 * the system call).  When the buffer is shared memory, the data goes
 * through a private buffer of the same size: the system call reads into it
 * (or writes from it) and ordinary stores copy it into shared memory (or
 * loads out of it), which fault and are served like any other.
 *
 * Making the pages valid first and calling the kernel on them (what the
 * shim did before) is not enough while other threads of the rank run:
 * a barrier or a lock release write-protects the pages this rank wrote, an
 * acquire drops stale copies, at any moment.  A read that lost a page
 * part-way came back short, and libnetcdf takes a short read of a file for
 * its end and fills the rest of its buffer with zeros, without an error.
 * cdo's chain of operators under DSM_COMM=rma (operator threads read
 * topo.nc while the others' mutex releases write-protect pages) stopped
 * with "cdf_get_vara_float: Bad address" in 2 of 54 runs, and once in CI
 * wrote output that differed from libgomp's.
 *
 * The kernel still gets the rank's own stacks in place: they are homed
 * here and never write-protected here.  Without private memory for a
 * transfer the job stops with a message; there is no in-place way that
 * another thread cannot cut short.
 *
 * A stdio buffer that the program gives setvbuf or setbuf in shared memory
 * would be written out by the C library's own write(2), which these
 * wrappers do not see (`gm convert` on 2 ranks failed with "writing to
 * file ... [Bad address]"): the stream gets a buffer of the C library's
 * instead, of the same size and mode.  Other system calls that write into shared memory (stat into a
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

/* Whether [buf, buf + n) lies in one of this rank's own stacks, above its
 * lowest page (start.c): homed here and never write-protected here, so the
 * kernel may use it in place.  The common case (a buffer on the caller's
 * stack), and libdsm's fatal messages, which are written from the SIGSEGV
 * handler, where malloc must not be called. */
static int own_stack(const void *buf, size_t n)
{
    if (!shim.stacks || !shim.stack_size)
        return 0;
    uintptr_t a = (uintptr_t)buf, lo = (uintptr_t)shim.stacks[shim.rank];
    if (a < lo || a - lo >= shim.stack_slots * shim.stack_size)
        return 0;
    uintptr_t base = lo + (a - lo) / shim.stack_size * shim.stack_size;
    size_t low = shim.stack_size > dsm_rt_page_size() ? dsm_rt_page_size() : 0;
    return a >= base + low && n <= base + shim.stack_size - a;
}

/* Whether a transfer at [buf, buf + n) must not be left to the kernel. */
static int shared(const void *buf, size_t n)
{
    return shim.active && buf && n &&
           (dsm_rt_in_region(buf) || dsm_rt_in_region((const char *)buf + n - 1)) &&
           !own_stack(buf, n);
}

/* Private memory for a transfer of n bytes (what: the call, for the
 * message). */
static void *private_buf(size_t n, const char *what)
{
    void *tmp = __libc_malloc(n ? n : 1);
    if (!tmp)
        dsm__fatal("out of private memory for a %s of %zu bytes to or from shared memory, "
                   "which goes through a private buffer of its size; transfer less at "
                   "a time", what, n);
    return tmp;
}

/* The same for n bytes going out of shared memory at buf: copied in. */
static void *private_copy(const void *buf, size_t n, const char *what)
{
    void *tmp = private_buf(n, what);
    memcpy(tmp, buf, n);
    return tmp;
}

/* The end of a transfer of up to n bytes through tmp: the r bytes it read
 * go to buf (none for a transfer out, buf NULL; recv with MSG_TRUNC may say
 * more than n); errno survives. */
static ssize_t bounce_done(void *buf, void *tmp, ssize_t r, size_t n)
{
    int e = errno;
    if (buf && r > 0)
        memcpy(buf, tmp, (size_t)r < n ? (size_t)r : n);
    __libc_free(tmp);
    errno = e;
    return r;
}

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
    if (!shared(buf, n))
        return real_read(fd, buf, n);
    void *tmp = private_buf(n, "read");
    return bounce_done(buf, tmp, real_read(fd, tmp, n), n);
}

SHIM_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    SHIM_REAL(pread);
    if (REMOTE_FD(fd))
        return shim_fio_read(fd, buf, n, off, 1);
    if (!shared(buf, n))
        return real_pread(fd, buf, n, off);
    void *tmp = private_buf(n, "pread");
    return bounce_done(buf, tmp, real_pread(fd, tmp, n, off), n);
}

SHIM_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    SHIM_REAL(write);
    if (REMOTE_FD(fd))
        return shim_fio_write(fd, buf, n, 0, 0);
    if (!shared(buf, n))
        return real_write(fd, buf, n);
    void *tmp = private_copy(buf, n, "write");
    return bounce_done(NULL, tmp, real_write(fd, tmp, n), n);
}

SHIM_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    SHIM_REAL(pwrite);
    if (REMOTE_FD(fd))
        return shim_fio_write(fd, buf, n, off, 1);
    if (!shared(buf, n))
        return real_pwrite(fd, buf, n, off);
    void *tmp = private_copy(buf, n, "pwrite");
    return bounce_done(NULL, tmp, real_pwrite(fd, tmp, n, off), n);
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

/* The k bytes read into tmp, spread over iov. */
static void iov_scatter(const struct iovec *iov, int cnt, const unsigned char *tmp, ssize_t k)
{
    size_t pos = 0;
    for (int i = 0; k > 0 && i < cnt && pos < (size_t)k; i++) {
        size_t m = (size_t)k - pos < iov[i].iov_len ? (size_t)k - pos : iov[i].iov_len;
        memcpy(iov[i].iov_base, tmp + pos, m);
        pos += m;
    }
}

/* iov's bytes, one after another, into tmp. */
static void iov_gather(unsigned char *tmp, const struct iovec *iov, int cnt)
{
    size_t pos = 0;
    for (int i = 0; i < cnt; i++) {
        memcpy(tmp + pos, iov[i].iov_base, iov[i].iov_len);
        pos += iov[i].iov_len;
    }
}

static ssize_t remote_readv(int fd, const struct iovec *iov, int cnt)
{
    size_t t = iov_total(iov, cnt);
    unsigned char *tmp = private_buf(t, "readv");
    ssize_t k = shim_fio_read(fd, tmp, t, 0, 0);
    iov_scatter(iov, cnt, tmp, k);
    __libc_free(tmp);
    return k;
}

static ssize_t remote_writev(int fd, const struct iovec *iov, int cnt)
{
    size_t t = iov_total(iov, cnt);
    unsigned char *tmp = private_buf(t, "writev");
    iov_gather(tmp, iov, cnt);
    ssize_t k = shim_fio_write(fd, tmp, t, 0, 0);
    __libc_free(tmp);
    return k;
}

/* readv or writev here: through one private buffer when any part is in
 * shared memory (as read and write), else in place. */
static ssize_t iov_call(ssize_t (*fn)(int, const struct iovec *, int), int fd,
                        const struct iovec *iov, int cnt, int incoming)
{
    int any = 0;
    for (int i = 0; i < cnt; i++)
        any |= shared(iov[i].iov_base, iov[i].iov_len);
    if (!any)
        return fn(fd, iov, cnt);
    size_t t = iov_total(iov, cnt);
    unsigned char *tmp = private_buf(t, incoming ? "readv" : "writev");
    struct iovec one = { tmp, t };
    if (!incoming)
        iov_gather(tmp, iov, cnt);
    ssize_t r = fn(fd, &one, 1);
    int e = errno;
    if (incoming)
        iov_scatter(iov, cnt, tmp, r);
    __libc_free(tmp);
    errno = e;
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
    if (!shared(buf, n))
        return real_recv(fd, buf, n, flags);
    void *tmp = private_buf(n, "recv");
    return bounce_done(buf, tmp, real_recv(fd, tmp, n, flags), n);
}

SHIM_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    SHIM_REAL(send);
    if (!shared(buf, n))
        return real_send(fd, buf, n, flags);
    void *tmp = private_copy(buf, n, "send");
    return bounce_done(NULL, tmp, real_send(fd, tmp, n, flags), n);
}

SHIM_EXPORT size_t fread(void *buf, size_t size, size_t n, FILE *f)
{
    SHIM_REAL(fread);
    if (REMOTE_STREAM(f))
        return shim_stream_fread(buf, size, n, f);
    if (!size || n > (size_t)-1 / size || !shared(buf, size * n))
        return real_fread(buf, size, n, f);
    /* The C library's fread moves size * n bytes and returns how many
     * whole elements that was: so does this, through a private buffer. */
    void *tmp = private_buf(size * n, "fread");
    size_t got = real_fread(tmp, 1, size * n, f);
    bounce_done(buf, tmp, (ssize_t)got, size * n);
    return got == size * n ? n : got / size;
}

SHIM_EXPORT size_t fwrite(const void *buf, size_t size, size_t n, FILE *f)
{
    SHIM_REAL(fwrite);
    if (REMOTE_STREAM(f))
        return shim_stream_fwrite(buf, size, n, f);
    if (!size || n > (size_t)-1 / size || !shared(buf, size * n))
        return real_fwrite(buf, size, n, f);
    void *tmp = private_copy(buf, size * n, "fwrite");
    size_t put = real_fwrite(tmp, size, n, f);
    bounce_done(NULL, tmp, 0, 0);
    return put;
}

SHIM_EXPORT int setvbuf(FILE *f, char *buf, int mode, size_t size)
{
    SHIM_REAL(setvbuf);
    if (REMOTE_STREAM(f))
        return shim_fio_stream(FIO_SETVBUF, f, mode, (int64_t)size, NULL, 0, NULL, 0,
                               NULL) < 0 ? -1 : 0;
    if (buf && shim.active && dsm_rt_in_region(buf))
        buf = NULL;
    return real_setvbuf(f, buf, mode, size);
}

SHIM_EXPORT void setbuf(FILE *f, char *buf)
{
    setvbuf(f, buf, buf ? _IOFBF : _IONBF, BUFSIZ);
}
