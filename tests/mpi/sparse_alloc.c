/*
 * sparse_alloc.c - a huge allocation costs only the pages touched.
 *
 * With DSM_HEAP_SIZE=8G (set here before dsm_init), the ranks allocate
 * 6 GiB collectively with block homes and write a sparse set of pages: the
 * first and last, both sides of every block boundary (so every node is home
 * of some), and a few in between.  After a barrier every rank checks all of
 * them, and that the home of each is the one the block policy promises.  The
 * 6 GiB are freed and allocated again with cyclic homes (which fails with
 * "out of shared memory" if the free did not give the space back); the
 * pages touched before must read as zero (fresh memory is zero), then are
 * written and checked again.  Throughout, the resident set of each process
 * (VmRSS) must stay below RSS_LIMIT_MIB: the region is reserved, not
 * committed, and per-page metadata must not be proportional to more than a
 * few bytes per page.
 *
 * The program initialises MPI itself (MPI_THREAD_MULTIPLE) so that all ranks
 * can agree to skip (exit 77) when the machine cannot reserve the region:
 * an address-space limit (ulimit -v) or strict overcommit accounting.
 */
#include <sys/resource.h>

#include "mpitest.h"

#define GIB          (1024ull * 1024 * 1024)
#define ALLOC_SIZE   (6 * GIB)
#define RSS_LIMIT_MIB 512
#define MAX_PICKS    64

static size_t picks[MAX_PICKS];
static int npicks;

static void pick(size_t page, size_t pages)
{
    if (page >= pages)
        return;
    for (int i = 0; i < npicks; i++)
        if (picks[i] == page)
            return;
    if (npicks < MAX_PICKS)
        picks[npicks++] = page;
}

/* Why this machine cannot run the test, or NULL. */
static const char *cannot_run(void)
{
    static char why[160];
    struct rlimit rl;
    FILE *f;
    int mode;

    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
        && rl.rlim_cur < 32 * GIB) {
        snprintf(why, sizeof why, "the address-space limit (ulimit -v) is "
                 "%llu KiB; an 8 GiB region needs 32 GiB of address space",
                 (unsigned long long)rl.rlim_cur / 1024);
        return why;
    }
    f = fopen("/proc/sys/vm/overcommit_memory", "r");
    if (f != NULL) {
        if (fscanf(f, "%d", &mode) == 1 && mode == 2) {
            fclose(f);
            return "vm.overcommit_memory is 2 (strict): an 8 GiB region "
                   "cannot be reserved without being committed";
        }
        fclose(f);
    }
    return NULL;
}

static long rss_kib(void)
{
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");

    if (f == NULL)
        mt_fail("cannot open /proc/self/status: %s", strerror(errno));
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    if (kib < 0)
        mt_fail("no VmRSS line in /proc/self/status");
    return kib;
}

static void check_rss(const char *when)
{
    long kib = rss_kib();

    if (kib > RSS_LIMIT_MIB * 1024L)
        mt_fail("%s: VmRSS is %ld MiB, more than %d MiB for a few touched "
                "pages of a %llu GiB allocation", when, kib / 1024,
                RSS_LIMIT_MIB, ALLOC_SIZE / GIB);
    mt_note("%s: VmRSS %ld MiB", when, kib / 1024);
}

/* Three words of each picked page carry a signature of (page, pass). */
static uint64_t sig(size_t page, int pass)
{
    return 0x5A5A000000000000ull ^ (uint64_t)page << 8 ^ (uint64_t)pass;
}

static void write_picks(char *mem, size_t ps, int pass, int me, int n)
{
    for (int i = 0; i < npicks; i++) {
        uint64_t *w = (uint64_t *)(mem + picks[i] * ps);

        if ((i + pass) % n != me)
            continue;
        w[0] = sig(picks[i], pass);
        w[ps / 16] = sig(picks[i], pass) + 1;
        w[ps / 8 - 1] = sig(picks[i], pass) + 2;
    }
}

static void check_picks(const char *what, char *mem, size_t ps, int pass)
{
    for (int i = 0; i < npicks; i++) {
        uint64_t *w = (uint64_t *)(mem + picks[i] * ps);
        uint64_t s = pass < 0 ? 0 : sig(picks[i], pass);

        mt_expect_u64(what, &w[0], s);
        mt_expect_u64(what, &w[1], 0);
        mt_expect_u64(what, &w[ps / 16], pass < 0 ? 0 : s + 1);
        mt_expect_u64(what, &w[ps / 8 - 1], pass < 0 ? 0 : s + 2);
    }
    mt_check_point(what);
}

int main(int argc, char **argv)
{
    int provided, skip, any_skip, me, n;
    const char *why;
    size_t ps, pages;
    char *mem, *again;
    uint64_t rng = 12345;

    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided)
        != MPI_SUCCESS)
        mt_fail("MPI_Init_thread failed");
    why = cannot_run();
    skip = why != NULL;
    MPI_Allreduce(&skip, &any_skip, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_skip) {
        int r;

        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        if (why != NULL)
            printf("sparse_alloc[rank %d]: SKIP: %s\n", r, why);
        MPI_Finalize();
        return 77;
    }

    if (setenv("DSM_HEAP_SIZE", "8G", 1) != 0)
        mt_fail("setenv: %s", strerror(errno));
    mt_init(&argc, &argv);
    me = dsm_node_id();
    n = dsm_node_count();
    ps = dsm_page_size();
    pages = ALLOC_SIZE / ps;

    pick(0, pages);
    pick(pages - 1, pages);
    for (int k = 1; k < n; k++) {
        pick((size_t)k * pages / (size_t)n - 1, pages);
        pick((size_t)k * pages / (size_t)n, pages);
    }
    pick(pages / 2 + 1, pages);
    for (int i = 0; i < 8; i++)
        pick(mt_rand_below(&rng, pages), pages);
    mt_note("%d ranks, %llu GiB = %zu pages of %zu bytes, %d pages touched",
            n, ALLOC_SIZE / GIB, pages, ps, npicks);

    mem = mt_malloc_home(ALLOC_SIZE, DSM_HOME_BLOCK, 0);
    check_rss("after the first 6 GiB allocation");
    for (int i = 0; i < npicks; i++) {
        int want = mt_block_home(picks[i], pages, n);
        int got = dsm_home_of(mem + picks[i] * ps);

        if (got != want)
            mt_error("block homes: page %zu of %zu is homed on %d, "
                     "expected %d", picks[i], pages, got, want);
    }
    mt_check_point("block homes");
    if (!dsm_is_shared(mem + ALLOC_SIZE - 1))
        mt_fail("the last byte of the allocation is not shared");

    write_picks(mem, ps, 0, me, n);
    dsm_barrier();
    check_picks("block homes, pass 0", mem, ps, 0);
    check_rss("after touching the pages");
    dsm_barrier();
    dsm_free(mem);

    again = mt_malloc_home(ALLOC_SIZE, DSM_HOME_CYCLIC, 0);
    for (int i = 0; i < npicks; i++) {
        int got = dsm_home_of(again + picks[i] * ps);

        if (got != (int)(picks[i] % (size_t)n))
            mt_error("cyclic homes: page %zu is homed on %d, expected %d",
                     picks[i], got, (int)(picks[i] % (size_t)n));
    }
    mt_check_point("cyclic homes");
    /* Same pages as before if the space was reused: they must be zero. */
    check_picks("fresh memory after free and allocate", again, ps, -1);
    dsm_barrier();
    write_picks(again, ps, 1, me, n);
    dsm_barrier();
    check_picks("cyclic homes, pass 1", again, ps, 1);
    check_rss("after the second allocation");
    dsm_barrier();
    dsm_free(again);

    mt_finalize();
    MPI_Finalize();
    return 0;
}
