/*
 * mmap.c - the program's own mmap(2), in shared memory.
 *
 * A program that maps its input file and reads it in a parallel region
 * (bart's fft, say) would hand every other rank an address that only rank
 * 0 has.  So the program's calls of mmap and mmap64 (redirected here
 * through its GOT, got.c) give memory from the shared heap instead:
 *   - anonymous: zero-filled;
 *   - a regular file: its bytes read in at once (zeros past the end of the
 *     file).  MAP_SHARED with PROT_WRITE keeps a private copy of what was
 *     read; msync, munmap and the end of the run write back the pages that
 *     differ from that copy, up to the file's current end, through a
 *     duplicate of the descriptor.
 * The kernel still maps what shared memory cannot hold: MAP_FIXED outside
 * the region, PROT_EXEC, stacks, devices and other files that are not
 * regular, and anything larger than the heap has left.  OMPSHIM_MMAP=private
 * leaves every call to the kernel.  Changes made to the file in other ways
 * after the mapping are not seen in it.
 *
 * The program's munmap, mremap, msync, mprotect and madvise on the region
 * never reach the kernel (they would undo the DSM's protections): munmap
 * frees a whole mapping made on this rank (one made on another rank stays,
 * and is written back at the end by that rank); mremap shrinks in place or
 * moves; mprotect does nothing (PROT_EXEC stops the job with a message);
 * madvise MADV_DONTNEED and MADV_REMOVE zero an anonymous mapping, other
 * advice does nothing.
 *
 * Threads: any; one mutex for this rank's list of mappings.  The write-back
 * at the end runs on every rank between the last barrier and dsm_finalize
 * (shim_mmap_flush_all).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"

struct mapping {
    unsigned char *addr;
    size_t len;                 /* the program's length, rounded to OS pages */
    int anon;
    int back;                   /* MAP_SHARED and PROT_WRITE: write back */
    int fd;                     /* a file's: our own duplicate; else -1 */
    off_t off;
    unsigned char *orig;        /* write-back: the bytes last read or written */
};

static struct {
    int warned_size;
    struct mapping *v;
    size_t n, cap;
    pthread_mutex_t mu;
} M = { .mu = PTHREAD_MUTEX_INITIALIZER };

static size_t os_round(size_t n)
{
    size_t os = dsm_rt_os_page();
    return (n + os - 1) & ~(os - 1);
}

/* The mapping of this rank that contains a, or NULL; M.mu held. */
static struct mapping *find(const unsigned char *a)
{
    for (size_t i = 0; i < M.n; i++)
        if (a >= M.v[i].addr && a < M.v[i].addr + M.v[i].len)
            return &M.v[i];
    return NULL;
}

/* m has bytes in [lo, hi). */
static int overlaps(const struct mapping *m, const unsigned char *lo, const unsigned char *hi)
{
    return m->addr < hi && m->addr + m->len > lo;
}

static void forget(struct mapping *m)
{
    if (m->fd >= 0)
        close(m->fd);
    free(m->orig);
    *m = M.v[--M.n];
}

/* Read the file's bytes [off, off + len) into p (shared memory), zeros past
 * its end: through a private buffer, as syscalls.c does, since another
 * thread of the rank may take p's pages away while the kernel writes. */
static int read_in(int fd, unsigned char *p, size_t len, off_t off)
{
    SHIM_REAL(pread);
    size_t got = 0;
    unsigned char *tmp = __libc_malloc(len ? len : 1);
    if (!tmp) {
        errno = ENOMEM;
        return -1;
    }
    while (got < len) {
        ssize_t r = real_pread(fd, tmp + got, len - got, off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            __libc_free(tmp);
            errno = e;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    memcpy(p, tmp, got);
    memset(p + got, 0, len - got);
    __libc_free(tmp);
    return 0;
}

/* Write back the pages of m in [lo, hi) that differ from m->orig, up to the
 * file's end; M.mu held. */
static int write_back(struct mapping *m, const unsigned char *lo, const unsigned char *hi)
{
    SHIM_REAL(pwrite);
    struct stat st;
    size_t os = dsm_rt_os_page();
    if (!m->back)
        return 0;
    if (fstat(m->fd, &st) != 0)
        return -1;
    if (lo < m->addr)
        lo = m->addr;
    if (hi > m->addr + m->len)
        hi = m->addr + m->len;
    size_t start = (size_t)(lo - m->addr) & ~(os - 1);
    size_t end = (size_t)(hi - m->addr);
    off_t file_end = st.st_size - m->off;
    if (file_end < 0)
        return 0;
    if ((off_t)end > file_end)
        end = (size_t)file_end;
    /* Each page is copied out first (private): the kernel never reads the
     * shared pages, which another thread may invalidate meanwhile. */
    unsigned char *pg = __libc_malloc(os);
    if (!pg) {
        errno = ENOMEM;
        return -1;
    }
    for (size_t at = start; at < end; at += os) {
        size_t n = end - at < os ? end - at : os;
        memcpy(pg, m->addr + at, n);
        if (!memcmp(pg, m->orig + at, n))
            continue;
        for (size_t done = 0; done < n;) {
            ssize_t w = real_pwrite(m->fd, pg + done, n - done, m->off + (off_t)(at + done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                int e = w < 0 ? errno : EIO;
                __libc_free(pg);
                errno = e;
                return -1;
            }
            done += (size_t)w;
        }
        memcpy(m->orig + at, pg, n);
    }
    __libc_free(pg);
    return 0;
}

/* A mapping in shared memory, or MAP_FAILED with errno set, or NULL when
 * the kernel should make it. */
static void *map_shared(size_t len, int prot, int flags, int fd, off_t off)
{
    int anon = (flags & MAP_ANONYMOUS) != 0;
    int type = flags & MAP_TYPE;
    int back = !anon && (prot & PROT_WRITE) &&
               (type == MAP_SHARED || type == MAP_SHARED_VALIDATE);
    struct stat st;
    if (!anon) {
        if (fstat(fd, &st) != 0)
            return MAP_FAILED;          /* EBADF, as the kernel says */
        if (!S_ISREG(st.st_mode))
            return NULL;
        int acc = fcntl(fd, F_GETFL) & O_ACCMODE;
        if (acc == O_WRONLY || (back && acc != O_RDWR)) {
            errno = EACCES;
            return MAP_FAILED;
        }
    }
    size_t size = os_round(len);
    unsigned char *p = shim_dsm_malloc(size, dsm_rt_os_page());
    if (!p) {
        if (!M.warned_size) {
            M.warned_size = 1;
            fprintf(stderr, "ompshim[rank %d]: mmap of %zu bytes does not fit in the shared "
                    "heap; the kernel maps it, and only rank %d can read it (raise "
                    "DSM_HEAP_SIZE to share it)\n", shim.rank, len, shim.rank);
        }
        return NULL;
    }
    struct mapping m = { p, size, anon, back, -1, off, NULL };
    if (anon) {
        memset(p, 0, size);
    } else if (read_in(fd, p, size, off) != 0) {
        int e = errno;
        shim_dsm_free(p);
        errno = e;
        return MAP_FAILED;
    }
    if (!anon) {
        /* The program may close fd now: write-back and mremap use ours. */
        m.fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        m.orig = back ? malloc(size) : NULL;
        if (m.fd < 0 || (back && !m.orig)) {
            if (m.fd >= 0)
                close(m.fd);
            free(m.orig);
            shim_dsm_free(p);
            errno = ENOMEM;
            return MAP_FAILED;
        }
        if (back)
            memcpy(m.orig, p, size);
    }
    pthread_mutex_lock(&M.mu);
    if (M.n == M.cap) {
        size_t nc = M.cap ? 2 * M.cap : 16;
        struct mapping *v = realloc(M.v, nc * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&M.mu);
            if (m.fd >= 0)
                close(m.fd);
            free(m.orig);
            shim_dsm_free(p);
            errno = ENOMEM;
            return MAP_FAILED;
        }
        M.v = v;
        M.cap = nc;
    }
    M.v[M.n++] = m;
    pthread_mutex_unlock(&M.mu);
    return p;
}

static void *shim_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    SHIM_REAL(mmap);
    if (shim.active) {
        if ((flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) && addr && len &&
            (dsm_rt_in_region(addr) || dsm_rt_in_region((unsigned char *)addr + len - 1)))
            dsm__fatal("mmap(%p, %zu) at a fixed address inside the shared region: the "
                       "program cannot map its own memory there under the OpenMP shim",
                       addr, len);
        if (!(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_STACK | MAP_GROWSDOWN)) &&
            !(prot & PROT_EXEC) && len > 0 && (off & (off_t)(dsm_rt_os_page() - 1)) == 0) {
            void *p = map_shared(len, prot, flags, fd, off);
            if (p)
                return p;
        }
    }
    return real_mmap(addr, len, prot, flags, fd, off);
}

/* On the region while the shim runs: not the kernel's business. */
static int ours(const void *addr)
{
    return shim.active && dsm_rt_in_region(addr);
}

/* Write back every mapping of this rank in [lo, hi); at the end of the run
 * (report) a failure is said on stderr.  -1 if any failed. */
static int write_back_range(const unsigned char *lo, const unsigned char *hi, int report)
{
    int rc = 0;
    pthread_mutex_lock(&M.mu);
    for (size_t i = 0; i < M.n; i++) {
        struct mapping *m = &M.v[i];
        if (!m->back || !overlaps(m, lo, hi) || write_back(m, lo, hi) == 0)
            continue;
        rc = -1;
        if (report)
            fprintf(stderr, "ompshim[rank %d]: writing back the file mapping at %p (%zu "
                    "bytes) at the end of the run failed: %s\n", shim.rank,
                    (void *)m->addr, m->len, strerror(errno));
    }
    pthread_mutex_unlock(&M.mu);
    return rc;
}

static int shim_munmap(void *addr, size_t len)
{
    SHIM_REAL(munmap);
    if (!ours(addr) && !(len && ours((unsigned char *)addr + len - 1)))
        return real_munmap(addr, len);
    if (len == 0) {
        errno = EINVAL;
        return -1;
    }
    unsigned char *lo = addr, *hi = lo + len;
    int rc = 0;
    pthread_mutex_lock(&M.mu);
    for (size_t i = 0; i < M.n;) {
        struct mapping *m = &M.v[i];
        if (!overlaps(m, lo, hi)) {
            i++;
            continue;
        }
        if (write_back(m, lo, hi) != 0)
            rc = -1;
        if (lo <= m->addr && hi >= m->addr + m->len) {
            shim_dsm_free(m->addr);
            forget(m);          /* moves the last entry here */
        } else {
            i++;                /* part of it: the memory stays until the rest goes */
        }
    }
    pthread_mutex_unlock(&M.mu);
    return rc;
}

static int shim_msync(void *addr, size_t len, int flags)
{
    SHIM_REAL(msync);
    if (!ours(addr))
        return real_msync(addr, len, flags);
    return write_back_range(addr, (unsigned char *)addr + len, 0);
}

static int shim_mprotect(void *addr, size_t len, int prot)
{
    SHIM_REAL(mprotect);
    if (!ours(addr))
        return real_mprotect(addr, len, prot);
    if (prot & PROT_EXEC)
        dsm__fatal("mprotect(%p, %zu, PROT_EXEC): the program makes shared memory "
                   "executable (code generated at run time?); run with "
                   "OMPSHIM_MMAP=private to keep its mappings private", addr, len);
    return 0;
}

static int shim_madvise(void *addr, size_t len, int advice)
{
    SHIM_REAL(madvise);
    if (!ours(addr))
        return real_madvise(addr, len, advice);
    if (advice != MADV_DONTNEED && advice != MADV_REMOVE)
        return 0;
    unsigned char *lo = addr, *hi = lo + len;
    pthread_mutex_lock(&M.mu);
    for (size_t i = 0; i < M.n; i++) {
        struct mapping *m = &M.v[i];
        unsigned char *a = lo > m->addr ? lo : m->addr;
        unsigned char *b = hi < m->addr + m->len ? hi : m->addr + m->len;
        if (m->anon && overlaps(m, lo, hi))
            memset(a, 0, (size_t)(b - a));
    }
    pthread_mutex_unlock(&M.mu);
    return 0;
}

static void *shim_mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    SHIM_REAL(mremap);
    if (!ours(old)) {
        void *to = NULL;
        if (flags & MREMAP_FIXED) {
            va_list ap;
            va_start(ap, flags);
            to = va_arg(ap, void *);
            va_end(ap);
        }
        return real_mremap(old, old_len, new_len, flags, to);
    }
    pthread_mutex_lock(&M.mu);
    struct mapping *m = find(old);
    if (!m || m->addr != old || (flags & MREMAP_FIXED) || new_len == 0) {
        pthread_mutex_unlock(&M.mu);
        errno = EINVAL;
        return MAP_FAILED;
    }
    size_t size = os_round(new_len);
    if (size <= m->len) {
        /* Shrink in place: the tail is written back and forgotten. */
        int rc = write_back(m, m->addr + size, m->addr + m->len);
        m->len = size;
        pthread_mutex_unlock(&M.mu);
        return rc == 0 ? old : MAP_FAILED;
    }
    if (!(flags & MREMAP_MAYMOVE)) {
        pthread_mutex_unlock(&M.mu);
        errno = ENOMEM;
        return MAP_FAILED;
    }
    unsigned char *p = shim_dsm_malloc(size, dsm_rt_os_page());
    unsigned char *orig = m->orig ? realloc(m->orig, size) : NULL;
    if (!p || (m->orig && !orig)) {
        if (p)
            shim_dsm_free(p);
        if (orig)
            m->orig = orig;
        pthread_mutex_unlock(&M.mu);
        errno = ENOMEM;
        return MAP_FAILED;
    }
    memcpy(p, m->addr, m->len);
    if (m->anon) {
        memset(p + m->len, 0, size - m->len);
    } else {
        /* The new part comes from the file, as the kernel's would; a file
         * mapping without write-back has no descriptor left: zeros. */
        if (m->fd < 0 || read_in(m->fd, p + m->len, size - m->len,
                                 m->off + (off_t)m->len) != 0)
            memset(p + m->len, 0, size - m->len);
    }
    if (orig) {
        memcpy(orig + m->len, p + m->len, size - m->len);
        m->orig = orig;
    }
    shim_dsm_free(m->addr);
    m->addr = p;
    m->len = size;
    pthread_mutex_unlock(&M.mu);
    return p;
}

void shim_mmap_flush_all(void)
{
    write_back_range(NULL, (const unsigned char *)UINTPTR_MAX, 1);
}

void shim_mmap_init(void)
{
    static const struct shim_got_entry calls[] = {
        { "mmap", (void *)shim_mmap }, { "mmap64", (void *)shim_mmap },
        { "munmap", (void *)shim_munmap }, { "mremap", (void *)shim_mremap },
        { "msync", (void *)shim_msync }, { "mprotect", (void *)shim_mprotect },
        { "madvise", (void *)shim_madvise },
    };
    if (!shim_setting_mmap_shared())
        return;
    shim_got_bind(calls, sizeof calls / sizeof calls[0]);
}
