/*
 * dlarena.c - where the libraries the program loads with dlopen go: an
 * address range reserved on every rank, so that a library can have the
 * same address everywhere (dlopen.c).
 *
 * The loader lets the kernel choose where an object goes, and the kernel
 * takes the top of the highest free gap that is large enough (the
 * top-down layout), so the ranks' own mappings (MPI's, which differ from
 * rank to rank) decide.  Instead, at start-up every rank reserves the same
 * range (PROT_NONE placeholders, no memory behind them).  For a dlopen,
 * shim_dlarena_begin fills every free gap above the arena with temporary
 * placeholders and releases the arena's free parts, so that whatever the
 * loader maps lands at the top of the arena; shim_dlarena_end puts the
 * placeholders back over what is still free.  When the arena's free parts
 * are the same on two ranks, the same dlopen maps the same objects at the
 * same addresses on both: rank 0 sends its free parts with the load, and
 * another rank first takes up what rank 0 has used and it has not.
 *
 * Threads: the main thread of every rank (rank 0: the thread that calls
 * dlopen, under dlopen.c's mutex).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

#define ARENA_SIZE ((uintptr_t)4 << 30)
/* 96 TiB: above the brk heap (which must keep room to grow while the
 * arena is open: malloc falls back to mmap when it cannot, and that
 * mapping would land in the arena) and far below the top-down area. */
#define ARENA_AT   ((uintptr_t)0x600000000000)
#define PLACE_FLAGS (MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE)

static uintptr_t arena_lo, arena_hi;    /* 0: no arena (dlopen is not replayed) */
static struct shim_extents held;        /* the arena's placeholders: its free parts */
/* Temporary placeholders above it: one per gap between the mappings of
 * the top-down area, which has more of them than the arena. */
#define MAX_ABOVE 4096
static uintptr_t above_lo[MAX_ABOVE], above_hi[MAX_ABOVE];
static int nabove;

static void add(struct shim_extents *e, uintptr_t lo, uintptr_t hi)
{
    if (e->n == SHIM_MAX_EXTENTS)
        dsm__fatal("the address space around the libraries loaded with dlopen is cut "
                   "into more than %d pieces; load fewer libraries", SHIM_MAX_EXTENTS);
    e->lo[e->n] = lo;
    e->hi[e->n] = hi;
    e->n++;
}

static int place(uintptr_t lo, uintptr_t hi)
{
    void *p = mmap((void *)lo, hi - lo, PROT_NONE, PLACE_FLAGS, -1, 0);
    if (p == (void *)lo)
        return 0;
    if (p != MAP_FAILED)
        munmap(p, hi - lo);
    return -1;
}

/* Call fn(line, arg) for each line of /proc/self/maps.  With the system
 * calls themselves: a program may define its own open or fopen (ntcard
 * does), and fn must not map memory (that changes the file being read). */
static void each_map_line(void (*fn)(const char *, void *), void *arg)
{
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    char buf[4096], line[512];
    size_t ll = 0;
    ssize_t k;
    if (fd < 0)
        dsm__fatal("cannot read /proc/self/maps to load a library on every rank: %s",
                   strerror(errno));
    while ((k = (ssize_t)syscall(SYS_read, fd, buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < k; i++) {
            if (buf[i] != '\n') {
                if (ll < sizeof line - 1)
                    line[ll++] = buf[i];
                continue;
            }
            line[ll] = 0;
            ll = 0;
            fn(line, arg);
        }
    syscall(SYS_close, fd);
}

struct gap_scan {
    uintptr_t from, to, prev;
    size_t n;
    uintptr_t lo[MAX_ABOVE + 1], hi[MAX_ABOVE + 1];
};

static void gap_line(const char *line, void *arg)
{
    struct gap_scan *g = arg;
    unsigned long a, b;
    if (sscanf(line, "%lx-%lx", &a, &b) != 2 || b <= g->from || a >= g->to)
        return;
    if (a > g->prev) {
        if (g->n == MAX_ABOVE)
            dsm__fatal("more than %d gaps between this rank's mappings: the OpenMP "
                       "shim cannot steer a library loaded with dlopen into its "
                       "arena", MAX_ABOVE);
        g->lo[g->n] = g->prev;
        g->hi[g->n] = a < g->to ? a : g->to;
        g->n++;
    }
    if (b > g->prev)
        g->prev = b;
}

/* Call fn(lo, hi) for each gap between this process's mappings in
 * [from, to), in address order. */
static void each_gap(uintptr_t from, uintptr_t to, void (*fn)(uintptr_t, uintptr_t))
{
    static struct gap_scan g;
    g.from = from;
    g.to = to;
    g.prev = from;
    g.n = 0;
    each_map_line(gap_line, &g);    /* collect first: fn maps memory */
    if (g.prev < to) {
        g.lo[g.n] = g.prev;
        g.hi[g.n] = to;
        g.n++;
    }
    for (size_t i = 0; i < g.n; i++)
        fn(g.lo[i], g.hi[i]);
}

struct first_overlap { uintptr_t lo, hi; char *out; size_t size; int found; };

static void overlap_line(const char *line, void *arg)
{
    struct first_overlap *o = arg;
    unsigned long a, b;
    if (!o->found && sscanf(line, "%lx-%lx", &a, &b) == 2 && a < o->hi && b > o->lo) {
        snprintf(o->out, o->size, "%s", line);
        o->found = 1;
    }
}

/* What this process has mapped in [lo, hi): the first line of
 * /proc/self/maps that overlaps it, for a message. */
static void mapped_in(uintptr_t lo, uintptr_t hi, char *out, size_t size)
{
    struct first_overlap o = { lo, hi, out, size, 0 };
    snprintf(out, size, "(unknown)");
    each_map_line(overlap_line, &o);
}

static void hold_gap(uintptr_t lo, uintptr_t hi)
{
    if (place(lo, hi) == 0)
        add(&held, lo, hi);
}

static void fill_gap(uintptr_t lo, uintptr_t hi)
{
    if (nabove == MAX_ABOVE)
        dsm__fatal("more than %d gaps between this rank's mappings: the OpenMP shim "
                   "cannot steer a library loaded with dlopen into its arena", MAX_ABOVE);
    if (place(lo, hi) == 0) {
        above_lo[nabove] = lo;
        above_hi[nabove] = hi;
        nabove++;
    }
}

/* The top of what the kernel's top-down search may use: below the main
 * stack's room to grow. */
static void stack_line(const char *line, void *arg)
{
    unsigned long a, b;
    if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &a, &b) == 2)
        *(uintptr_t *)arg = a;
}

static uintptr_t top_of_mmap_area(void)
{
    uintptr_t stack = 0;
    struct rlimit rl;
    uintptr_t room = (uintptr_t)8 << 20;
    each_map_line(stack_line, &stack);
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur > room)
        room = rl.rlim_cur;
    return stack ? stack - room - ((uintptr_t)2 << 20) : (uintptr_t)0x7ff000000000;
}

int shim_dlarena_init(void)
{
    uintptr_t at = ARENA_AT, base = dsm_rt_base();
    uintptr_t end = base + dsm_rt_npages() * dsm_rt_page_size();
    if (at < end && at + ARENA_SIZE > base)
        at = (end + ((uintptr_t)1 << 40)) & ~(((uintptr_t)1 << 30) - 1);
    /* Every rank takes part in the reduction, whatever it found. */
    int ok = at + ARENA_SIZE <= top_of_mmap_area() && place(at, at + ARENA_SIZE) == 0;
    int all = ok;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, dsm_rt_comm());
    if (!all) {
        if (ok)
            munmap((void *)at, ARENA_SIZE);
        return -1;
    }
    arena_lo = at;
    arena_hi = at + ARENA_SIZE;
    held.n = 0;
    add(&held, arena_lo, arena_hi);
    return 0;
}

int shim_dlarena_ready(void)
{
    return arena_hi != 0;
}

int shim_dlarena_contains(uintptr_t a)
{
    return a >= arena_lo && a < arena_hi;
}

void shim_dlarena_free_parts(struct shim_extents *out)
{
    *out = held;
}

/* Fault injection for tests/shim's dlopen case (OMPSHIM_TEST_GAP=1): the
 * first load on each rank (rank 0's own, the others' replay of it) finds
 * the gaps above the arena open, as if other threads had unmapped memory
 * there meanwhile (which gap the kernel's top-down search takes first is
 * its business, so all of them); dlopen.c must notice and load the
 * library again.  With OMPSHIM_TEST_GAP=always every load does, so that
 * dlopen.c gives up. */
static void test_open_gap(void)
{
    static int done;
    int t = shim_setting_test_gap();
    if (done || !t)
        return;
    done = t == 1;
    for (int i = 0; i < nabove; i++)
        munmap((void *)above_lo[i], above_hi[i] - above_lo[i]);
    nabove = 0;
}

void shim_dlarena_begin(const struct shim_extents *like)
{
    /* This rank's own allocations (MPI's, the shim's) must not land in the
     * arena meanwhile, where rank 0's did not: up to 32 MiB they come
     * from the brk heap, not from mmap. */
    if (like)
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
    for (int i = 0; i < held.n; i++)
        munmap((void *)held.lo[i], held.hi[i] - held.lo[i]);
    held.n = 0;
    if (like) {
        /* Free here: at least rank 0's free parts.  Take up the rest. */
        for (int i = 0; i < like->n; i++)
            if (place(like->lo[i], like->hi[i]) != 0) {
                char what[512];
                mapped_in(like->lo[i], like->hi[i], what, sizeof what);
                dsm__fatal("rank 0 loads a library with dlopen into %#lx-%#lx, where "
                           "this rank has other memory (%s): the libraries loaded here "
                           "have diverged from rank 0's", (unsigned long)like->lo[i],
                           (unsigned long)like->hi[i], what);
            }
        each_gap(arena_lo, arena_hi, hold_gap);
        for (int i = 0; i < like->n; i++)
            munmap((void *)like->lo[i], like->hi[i] - like->lo[i]);
        /* The taken-up parts stay used, as they are on rank 0. */
        held.n = 0;
    }
    nabove = 0;
    each_gap(arena_hi, top_of_mmap_area(), fill_gap);
    test_open_gap();
}

void shim_dlarena_end(void)
{
    if (shim.rank != 0)
        mallopt(M_MMAP_THRESHOLD, 128 << 10);     /* the C library's default */
    for (int i = 0; i < nabove; i++)
        munmap((void *)above_lo[i], above_hi[i] - above_lo[i]);
    nabove = 0;
    held.n = 0;
    each_gap(arena_lo, arena_hi, hold_gap);
}
