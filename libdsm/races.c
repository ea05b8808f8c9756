/*
 * races.c - DSM_CHECK=races: two nodes writing the same byte of a page in
 * one barrier interval.
 *
 * The home of a page sees every write to it: the diffs other nodes send,
 * and (in this mode) its own writes, which it twins on the write fault like
 * any other node and diffs at the release.  For each page it keeps, for the
 * current interval, which node wrote each byte; a byte claimed by two nodes
 * is a race, and one of the two updates is lost (the later diff overwrites
 * the earlier one).  This is how a program built with GCC's inline atomics
 * (plain gcc with its threads on the shim) shows its lost updates.  Only
 * writes flushed at a barrier count: a flush at a lock release comes from a
 * critical section, ordered by the lock.  Reports go to stderr, at most
 * RACE_REPORTS of them, with a total at dsm_finalize.
 *
 * Threads: dsm__race_diff and dsm__race_home_at under the progress token;
 * dsm__race_home from the application thread that flushes; one mutex.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm_internal.h"

#define RACE_REPORTS 10

struct race_page { uint32_t epoch; uint8_t owner[]; };   /* owner: node + 1 */

static pthread_mutex_t race_mu = PTHREAD_MUTEX_INITIALIZER;
static struct race_page **pages;
static uint64_t races_found;

static struct race_page *page_map(size_t p, uint32_t epoch)
{
    size_t bytes = dsm__g.page_size;
    if (!pages) {
        pages = mmap(NULL, dsm__g.npages * sizeof *pages, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (pages == MAP_FAILED)
            dsm__fatal("DSM_CHECK=races: out of memory for the race maps");
    }
    struct race_page *r = pages[p];
    if (!r) {
        r = calloc(1, sizeof *r + bytes);
        if (!r)
            dsm__fatal("DSM_CHECK=races: out of memory for the race map of page %zu", p);
        r->epoch = epoch;
        pages[p] = r;
    } else if (r->epoch != epoch) {
        memset(r->owner, 0, bytes);
        r->epoch = epoch;
    }
    return r;
}

static void report(size_t p, size_t byte, int a, int b, uint32_t epoch)
{
    const unsigned char *addr = dsm__app_page(p) + byte;
    char name[256] = "";
    races_found++;
    if (races_found > RACE_REPORTS)
        return;
    if (dsm__hooks.name_address &&
        dsm__hooks.name_address(addr, name + 2, sizeof name - 4) == 0) {
        name[0] = ' ';
        name[1] = '(';
        strcat(name, ")");
    }
    fprintf(stderr, "libdsm[rank %d]: DSM_CHECK=races: race: ranks %d and %d both wrote "
            "the byte at %p%s in barrier interval %" PRIu32 "; one of the "
            "updates is lost. Make the update atomic (build with dsmcc, which adds "
            "-fno-inline-atomics), or put it in a critical section or under a lock\n",
            dsm__g.rank, a < b ? a : b, a < b ? b : a, (const void *)addr, name, epoch);
    fflush(stderr);
}

static void claim(struct race_page *r, size_t p, size_t b, int writer, uint32_t epoch)
{
    uint8_t o = r->owner[b];
    if (o == 0)
        r->owner[b] = (uint8_t)(writer + 1);
    else if (o != writer + 1)
        report(p, b, o - 1, writer, epoch);
}

/* Claim every byte the diff writes (dsm_pure.h: whole chunks, or the bytes
 * of their masks).  The diff has been checked (dsm__diff_check) or made
 * here. */
static void record(size_t p, uint32_t epoch, int writer, const unsigned char *diff, size_t len)
{
    struct race_page *r = page_map(p, epoch);
    size_t pos = 0;
    if (dsm__diff_check(dsm__g.page_size, diff, len) < 0)
        return;
    while (pos < len) {
        struct dsm_diff_run run;
        memcpy(&run, diff + pos, sizeof run);
        pos += sizeof run;
        size_t n = dsm__diff_run_chunks(&run);
        const unsigned char *mask = diff + pos + n * DSM_DIFF_CHUNK;
        for (size_t k = 0; k < n; k++)
            for (size_t j = 0; j < DSM_DIFF_CHUNK; j++)
                if (!(run.count & DSM_DIFF_MASKED) || (mask[k] >> j & 1))
                    claim(r, p, run.offset + k * DSM_DIFF_CHUNK + j, writer, epoch);
        pos += dsm__diff_run_body(&run);
    }
}

void dsm__race_diff(size_t p, uint32_t epoch, int writer, const void *diff, size_t len)
{
    pthread_mutex_lock(&race_mu);
    record(p, epoch, writer, diff, len);
    pthread_mutex_unlock(&race_mu);
}

void dsm__race_home(size_t p)
{
    dsm__race_home_at(p, dsm__g.epoch);
}

void dsm__race_home_at(size_t p, uint32_t epoch)
{
    size_t ps = dsm__g.page_size;
    unsigned char *buf = malloc(dsm__diff_max_size(ps));
    if (!buf)
        dsm__fatal("DSM_CHECK=races: out of memory diffing page %zu", p);
    size_t len = dsm__diff_make(dsm__twin_page(p), dsm__sys_page(p), ps, buf,
                                dsm__diff_max_size(ps));
    if (len != (size_t)-1 && len > 0) {
        pthread_mutex_lock(&race_mu);
        record(p, epoch, dsm__g.rank, buf, len);
        pthread_mutex_unlock(&race_mu);
    }
    free(buf);
}

uint64_t dsm__races_found(void)
{
    return races_found;
}
