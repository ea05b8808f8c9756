/*
 * streams.c - the program's stdio calls on a stream that rank 0 opened,
 * made on another rank: sent to rank 0 (fileio.c).
 *
 * A FILE from fopen lives in rank 0's private memory (the C library
 * allocates it for itself), so on another rank the pointer leads nowhere.
 * The program's calls of the stdio functions that take a stream (their GOT
 * entries, got.c; fread and fwrite are the shim's own, syscalls.c) look at
 * the stream first: one of rank 0's, on another rank, and the operation
 * goes to rank 0 whole (formatted output is formatted here first).
 * Anything else goes straight to the C library.  Reading with fscanf from
 * such a stream is not supported: it stops the job with a message.  The
 * locking calls (flockfile, funlockfile, ftrylockfile) do nothing for such a
 * stream: rank 0 takes the stream's lock for each forwarded call, and the
 * program's own synchronisation orders the calls of different ranks.
 *
 * Threads: any.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

static int64_t simple(int op, FILE *f, int64_t a, int64_t b)
{
    return shim_fio_stream(op, f, a, b, NULL, 0, NULL, 0, NULL);
}

/* ---- output ---- */

size_t shim_stream_fwrite(const void *buf, size_t size, size_t n, FILE *f)
{
    if (!size || !n)
        return 0;
    if (n > (size_t)-1 / size) {
        errno = EOVERFLOW;
        return 0;
    }
    size_t total = size * n, done = 0;
    while (done < total) {
        size_t k = total - done < SHIM_FIO_DATA ? total - done : SHIM_FIO_DATA;
        int64_t r = shim_fio_stream(FIO_FWRITE, f, 0, 0, (const char *)buf + done, k,
                                    NULL, 0, NULL);
        if (r <= 0)
            break;
        done += (size_t)r;
        if ((size_t)r < k)
            break;
    }
    return done / size;
}

static int s_fputc(int c, FILE *f)
{
    if (!shim_stream_remote(f))
        return fputc(c, f);
    unsigned char b = (unsigned char)c;
    return shim_stream_fwrite(&b, 1, 1, f) == 1 ? b : EOF;
}

static int s_fputs(const char *s, FILE *f)
{
    if (!shim_stream_remote(f))
        return fputs(s, f);
    size_t n = strlen(s);
    return shim_stream_fwrite(s, 1, n, f) == n ? 1 : EOF;
}

static size_t s_fwrite_unlocked(const void *buf, size_t size, size_t n, FILE *f)
{
    if (!shim_stream_remote(f))
        return fwrite_unlocked(buf, size, n, f);
    return shim_stream_fwrite(buf, size, n, f);
}

/* Formatted here, written there. */
static int remote_vprintf(FILE *f, const char *fmt, va_list ap)
{
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    if (n < 0)
        return -1;
    size_t w = shim_stream_fwrite(s, 1, (size_t)n, f);
    free(s);
    return w == (size_t)n ? n : -1;
}

static int s_vfprintf(FILE *f, const char *fmt, va_list ap)
{
    if (shim_stream_remote(f))
        return remote_vprintf(f, fmt, ap);
    return vfprintf(f, fmt, ap);
}

static int s_fprintf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = s_vfprintf(f, fmt, ap);
    va_end(ap);
    return n;
}

extern int __vfprintf_chk(FILE *, int, const char *, va_list);

static int s_vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap)
{
    if (shim_stream_remote(f))
        return remote_vprintf(f, fmt, ap);
    return __vfprintf_chk(f, flag, fmt, ap);
}

static int s_fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = s_vfprintf_chk(f, flag, fmt, ap);
    va_end(ap);
    return n;
}

static int s_fflush(FILE *f)
{
    if (!shim_stream_remote(f))
        return fflush(f);
    return simple(FIO_FFLUSH, f, 0, 0) < 0 ? EOF : 0;
}

/* ---- input ---- */

size_t shim_stream_fread(void *buf, size_t size, size_t n, FILE *f)
{
    if (!size || !n)
        return 0;
    if (n > (size_t)-1 / size) {
        errno = EOVERFLOW;
        return 0;
    }
    size_t total = size * n, done = 0;
    unsigned char *tmp = malloc(SHIM_FIO_DATA);
    if (!tmp)
        dsm__fatal("out of private memory for an fread");
    while (done < total) {
        size_t k = total - done < SHIM_FIO_DATA ? total - done : SHIM_FIO_DATA, got = 0;
        int64_t r = shim_fio_stream(FIO_FREAD, f, 0, (int64_t)k, NULL, 0, tmp,
                                    SHIM_FIO_DATA, &got);
        if (r < 0 || got == 0)
            break;
        memcpy((char *)buf + done, tmp, got);
        done += got;
        if (got < k)
            break;
    }
    free(tmp);
    return done / size;
}

static size_t s_fread_unlocked(void *buf, size_t size, size_t n, FILE *f)
{
    if (!shim_stream_remote(f))
        return fread_unlocked(buf, size, n, f);
    return shim_stream_fread(buf, size, n, f);
}

extern size_t __fread_chk(void *, size_t, size_t, size_t, FILE *);

static size_t s_fread_chk(void *buf, size_t buflen, size_t size, size_t n, FILE *f)
{
    if (!shim_stream_remote(f))
        return __fread_chk(buf, buflen, size, n, f);
    if (size && n > buflen / size)
        dsm__fatal("fread: buffer overflow (%zu bytes for %zu x %zu)", buflen, n, size);
    return shim_stream_fread(buf, size, n, f);
}

static int s_fgetc(FILE *f)
{
    if (!shim_stream_remote(f))
        return fgetc(f);
    int64_t r = simple(FIO_FGETC, f, 0, 0);
    return r < 0 ? EOF : (int)r;
}

static int s_ungetc(int c, FILE *f)
{
    if (!shim_stream_remote(f))
        return ungetc(c, f);
    int64_t r = simple(FIO_UNGETC, f, c, 0);
    return r < 0 ? EOF : (int)r;
}

static char *remote_fgets(char *s, int n, FILE *f)
{
    if (n <= 0)
        return NULL;
    char *tmp = malloc(SHIM_FIO_DATA);
    int pos = 0;
    if (!tmp)
        dsm__fatal("out of private memory for an fgets");
    /* Pieces of at most SHIM_FIO_DATA - 1 bytes until a newline or n - 1. */
    while (pos < n - 1) {
        size_t got = 0;
        int want = n - pos < SHIM_FIO_DATA ? n - pos : SHIM_FIO_DATA;
        if (shim_fio_stream(FIO_FGETS, f, 0, want, NULL, 0, tmp, SHIM_FIO_DATA, &got) < 0)
            break;
        memcpy(s + pos, tmp, got);
        pos += (int)got;
        if (got == 0 || tmp[got - 1] == '\n')
            break;
    }
    free(tmp);
    if (pos == 0)
        return NULL;
    s[pos] = 0;
    return s;
}

static char *s_fgets(char *s, int n, FILE *f)
{
    if (!shim_stream_remote(f))
        return fgets(s, n, f);
    return remote_fgets(s, n, f);
}

static char *s_fgets_unlocked(char *s, int n, FILE *f)
{
    if (!shim_stream_remote(f))
        return fgets_unlocked(s, n, f);
    return remote_fgets(s, n, f);
}

extern char *__fgets_chk(char *, size_t, int, FILE *);

static char *s_fgets_chk(char *s, size_t size, int n, FILE *f)
{
    if (!shim_stream_remote(f))
        return __fgets_chk(s, size, n, f);
    if ((size_t)n > size)
        dsm__fatal("fgets: buffer overflow (%zu bytes for %d)", size, n);
    return remote_fgets(s, n, f);
}

/* getdelim's buffer is the program's: malloc'd as the program's own
 * (shared memory), grown with its realloc. */
static ssize_t s_getdelim(char **line, size_t *cap, int delim, FILE *f)
{
    if (!shim_stream_remote(f))
        return getdelim(line, cap, delim, f);
    if (!line || !cap) {
        errno = EINVAL;
        return -1;
    }
    char *tmp = malloc(SHIM_FIO_DATA);
    size_t len = 0;
    if (!tmp)
        dsm__fatal("out of private memory for a getline");
    for (;;) {
        size_t got = 0;
        if (shim_fio_stream(FIO_GETDELIM, f, delim, 0, NULL, 0, tmp, SHIM_FIO_DATA,
                            &got) < 0 || got == 0)
            break;
        if (!*line || *cap < len + got + 1) {
            size_t want = (len + got + 1) * 2;
            char *p = shim_realloc_as(*line, want, 1);
            if (!p) {
                free(tmp);
                errno = ENOMEM;
                return -1;
            }
            *line = p;
            *cap = want;
        }
        memcpy(*line + len, tmp, got);
        len += got;
        if ((unsigned char)tmp[got - 1] == (unsigned char)delim)
            break;
    }
    free(tmp);
    if (len == 0)
        return -1;
    (*line)[len] = 0;
    return (ssize_t)len;
}

static ssize_t s_getline(char **line, size_t *cap, FILE *f)
{
    return s_getdelim(line, cap, '\n', f);
}

/* Reading rank 0's stream with fscanf cannot be sent there whole (the
 * results go to the caller's pointers), so it stops the job. */
extern int __isoc99_vfscanf(FILE *, const char *, va_list);
typedef int (*vscan_fn)(FILE *, const char *, va_list);

static int scan(vscan_fn fn, FILE *f, const char *fmt, va_list ap)
{
    if (shim_stream_remote(f))
        dsm__fatal("fscanf on rank %d from a stream rank 0 opened: reading such a stream "
                   "with fscanf is not supported on other ranks. Read lines with fgets or "
                   "getline and parse them with sscanf, or read in sequential code "
                   "(ompshim(7), FILES)", shim.rank);
    return fn(f, fmt, ap);
}

static int s_vfscanf(FILE *f, const char *fmt, va_list ap)
{
    return scan(vfscanf, f, fmt, ap);
}

static int s_isoc99_vfscanf(FILE *f, const char *fmt, va_list ap)
{
    return scan(__isoc99_vfscanf, f, fmt, ap);
}

static int s_fscanf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = scan(vfscanf, f, fmt, ap);
    va_end(ap);
    return n;
}

static int s_isoc99_fscanf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = scan(__isoc99_vfscanf, f, fmt, ap);
    va_end(ap);
    return n;
}

/* ---- position, state, locking ---- */

static int s_fseeko(FILE *f, off_t off, int whence)
{
    if (!shim_stream_remote(f))
        return fseeko(f, off, whence);
    return simple(FIO_FSEEK, f, off, whence) < 0 ? -1 : 0;
}

static int s_fseek(FILE *f, long off, int whence)
{
    return s_fseeko(f, (off_t)off, whence);
}

static off_t s_ftello(FILE *f)
{
    if (!shim_stream_remote(f))
        return ftello(f);
    int64_t r = simple(FIO_FTELL, f, 0, 0);
    return r < 0 ? -1 : (off_t)r;
}

static long s_ftell(FILE *f)
{
    return (long)s_ftello(f);
}

/* An fpos_t holds the offset and the stream's multibyte conversion state.
 * The state of a stream of rank 0's is rank 0's: what another rank gets
 * is the offset, with an initial state (the shim forwards the byte
 * functions only, which do not use it). */
static int s_fgetpos(FILE *f, fpos_t *pos)
{
    if (!shim_stream_remote(f))
        return fgetpos(f, pos);
    int64_t r = simple(FIO_FTELL, f, 0, 0);
    if (r < 0)
        return -1;
    memset(pos, 0, sizeof *pos);
    pos->__pos = (off_t)r;
    return 0;
}

static int s_fsetpos(FILE *f, const fpos_t *pos)
{
    if (!shim_stream_remote(f))
        return fsetpos(f, pos);
    return simple(FIO_FSEEK, f, pos->__pos, SEEK_SET) < 0 ? -1 : 0;
}

/* The 64-bit names: on x86-64 glibc's fpos64_t is fpos_t, and fgetpos64
 * the same function as fgetpos. */
_Static_assert(sizeof(fpos64_t) == sizeof(fpos_t) &&
               __builtin_offsetof(fpos64_t, __pos) == __builtin_offsetof(fpos_t, __pos) &&
               sizeof(((fpos64_t *)0)->__pos) == sizeof(((fpos_t *)0)->__pos),
               "fpos64_t and fpos_t differ");

static int s_fgetpos64(FILE *f, fpos64_t *pos)
{
    return s_fgetpos(f, (fpos_t *)(void *)pos);
}

static int s_fsetpos64(FILE *f, const fpos64_t *pos)
{
    return s_fsetpos(f, (const fpos_t *)(const void *)pos);
}

static void s_rewind(FILE *f)
{
    if (!shim_stream_remote(f)) {
        rewind(f);
        return;
    }
    simple(FIO_FSEEK, f, 0, SEEK_SET);
    simple(FIO_CLEARERR, f, 0, 0);
}

static int s_feof(FILE *f)
{
    return shim_stream_remote(f) ? (int)simple(FIO_FEOF, f, 0, 0) : feof(f);
}

static int s_ferror(FILE *f)
{
    return shim_stream_remote(f) ? (int)simple(FIO_FERROR, f, 0, 0) : ferror(f);
}

static void s_clearerr(FILE *f)
{
    if (shim_stream_remote(f))
        simple(FIO_CLEARERR, f, 0, 0);
    else
        clearerr(f);
}

/* Rank 0's descriptor number: the program's read and write on it go to
 * rank 0 as well (fds.c). */
static int s_fileno(FILE *f)
{
    if (!shim_stream_remote(f))
        return fileno(f);
    int64_t r = simple(FIO_FILENO, f, 0, 0);
    return r < 0 ? -1 : (int)r;
}

static void s_flockfile(FILE *f)
{
    if (!shim_stream_remote(f))
        flockfile(f);
}

static void s_funlockfile(FILE *f)
{
    if (!shim_stream_remote(f))
        funlockfile(f);
}

static int s_ftrylockfile(FILE *f)
{
    return shim_stream_remote(f) ? 0 : ftrylockfile(f);
}

void shim_streams_init(void)
{
    static const struct shim_got_entry calls[] = {
        { "fputc", (void *)s_fputc }, { "putc", (void *)s_fputc },
        { "_IO_putc", (void *)s_fputc }, { "fputc_unlocked", (void *)s_fputc },
        { "putc_unlocked", (void *)s_fputc },
        { "fputs", (void *)s_fputs }, { "fputs_unlocked", (void *)s_fputs },
        { "fwrite_unlocked", (void *)s_fwrite_unlocked },
        { "fprintf", (void *)s_fprintf }, { "vfprintf", (void *)s_vfprintf },
        { "__fprintf_chk", (void *)s_fprintf_chk },
        { "__vfprintf_chk", (void *)s_vfprintf_chk },
        { "fflush", (void *)s_fflush }, { "fflush_unlocked", (void *)s_fflush },
        { "fgetc", (void *)s_fgetc }, { "getc", (void *)s_fgetc },
        { "_IO_getc", (void *)s_fgetc }, { "fgetc_unlocked", (void *)s_fgetc },
        { "getc_unlocked", (void *)s_fgetc }, { "ungetc", (void *)s_ungetc },
        { "fgets", (void *)s_fgets }, { "fgets_unlocked", (void *)s_fgets_unlocked },
        { "__fgets_chk", (void *)s_fgets_chk },
        { "fread_unlocked", (void *)s_fread_unlocked },
        { "__fread_chk", (void *)s_fread_chk },
        { "getline", (void *)s_getline }, { "getdelim", (void *)s_getdelim },
        { "__getdelim", (void *)s_getdelim },
        { "fscanf", (void *)s_fscanf }, { "vfscanf", (void *)s_vfscanf },
        { "__isoc99_fscanf", (void *)s_isoc99_fscanf },
        { "__isoc99_vfscanf", (void *)s_isoc99_vfscanf },
        { "fseek", (void *)s_fseek }, { "fseeko", (void *)s_fseeko },
        { "fseeko64", (void *)s_fseeko }, { "ftell", (void *)s_ftell },
        { "ftello", (void *)s_ftello }, { "ftello64", (void *)s_ftello },
        { "rewind", (void *)s_rewind },
        { "fgetpos", (void *)s_fgetpos }, { "fsetpos", (void *)s_fsetpos },
        { "fgetpos64", (void *)s_fgetpos64 }, { "fsetpos64", (void *)s_fsetpos64 },
        { "feof", (void *)s_feof }, { "feof_unlocked", (void *)s_feof },
        { "ferror", (void *)s_ferror }, { "ferror_unlocked", (void *)s_ferror },
        { "clearerr", (void *)s_clearerr }, { "clearerr_unlocked", (void *)s_clearerr },
        { "fileno", (void *)s_fileno }, { "fileno_unlocked", (void *)s_fileno },
        { "flockfile", (void *)s_flockfile }, { "funlockfile", (void *)s_funlockfile },
        { "ftrylockfile", (void *)s_ftrylockfile },
    };
    shim_got_bind(calls, sizeof calls / sizeof calls[0]);
}
