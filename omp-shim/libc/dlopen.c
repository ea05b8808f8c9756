/*
 * dlopen.c - a library the program loads with dlopen, on every rank.
 *
 * Under the shim only rank 0 runs the program's sequential code, so a
 * plain dlopen there would load a library (an R package, a plugin) on
 * rank 0 alone, and a parallel region that calls into it would jump to
 * unmapped code on the other ranks.  The program's dlopen (its GOT entry,
 * got.c) comes here instead.  Rank 0 loads the library, then forks the
 * load like a region (as bcast.c does for dsm_bcast): every other rank
 * loads the same files at the same addresses, each object's code joins the
 * program's (applibs.c: its malloc calls get shared memory, and so do
 * those of its constructors while dlopen runs, shim_dlopen_owns), its mmap and
 * dlopen calls are redirected like the executable's, and its writable data
 * is put under the DSM with rank 0's contents (dsm__segments_add).
 *
 * The same addresses: the objects land in an arena reserved on every
 * rank (dlarena.c).  Rank 0 sends the arena's free parts as they were
 * before its dlopen; the other rank makes its own the same and calls
 * dlopen with the same file argument and flags, so the loader and the
 * kernel make the same choices: a bare name makes the loader search, and
 * the search maps /etc/ld.so.cache for the time of the load, which moves
 * the library down by the cache's size; the file's full path would not.
 * The result is checked: an object anywhere else stops the job with a
 * message.
 *
 * Not replayed: dlclose of such a library (it stays loaded, which is what
 * the other ranks need), a dlopen inside a parallel region (loaded where
 * it is called, with a warning), dlmopen.
 *
 * Threads: shim_dlopen on any thread (the replay only from rank 0's
 * sequential code, under one mutex); shim_dlopen_worker on the main thread
 * of the other ranks, in shim_worker_loop.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

#define MAX_NEW 64              /* objects one dlopen may bring in */
#define MAX_SEEN 1024           /* objects loaded before it */

/* The description rank 0 writes into shared memory for the others. */
struct dl_obj {
    uint64_t addr;              /* load address (dlpi_addr) */
    uint32_t path;              /* offset of its file name in names[] */
    uint32_t pad;
};
struct dl_desc {
    int32_t mode, nobj;         /* dlopen's flags; the objects it loaded */
    uint32_t names_len;
    uint32_t file;              /* offset in names[] of dlopen's file argument */
    struct shim_extents free_parts;     /* rank 0's arena before the load */
    struct dl_obj obj[MAX_NEW];
    char names[];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* Set on the thread that runs a program's dlopen, while it runs: the new
 * objects' constructors allocate for the program (shim_dlopen_owns). */
__thread int shim_dl_loading;
int shim_dl_busy;

/* ---- the objects the loader has ---- */

struct seen { uintptr_t addr[MAX_SEEN]; int n; };

static int seen_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct seen *s = arg;
    (void)size;
    if (s->n < MAX_SEEN)
        s->addr[s->n++] = info->dlpi_addr;
    return 0;
}

static int was_seen(const struct seen *s, uintptr_t a)
{
    for (int i = 0; i < s->n; i++)
        if (s->addr[i] == a)
            return 1;
    return 0;
}

/* The objects loaded before the dlopen under way (under mu). */
static struct seen before;

int shim_dlopen_owns(uintptr_t a)
{
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1((void *)a, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
        was_seen(&before, lm->l_addr))
        return 0;
    return shim_applibs_is_program_name(lm->l_name);
}

struct collect {
    const struct seen *before;
    struct dl_obj obj[MAX_NEW];
    const char *path[MAX_NEW];
    int n, overflow;
};

static int collect_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct collect *c = arg;
    (void)size;
    if (was_seen(c->before, info->dlpi_addr) || !info->dlpi_name || !info->dlpi_name[0])
        return 0;
    if (c->n == MAX_NEW) {
        c->overflow = 1;
        return 0;
    }
    struct dl_obj *o = &c->obj[c->n];
    memset(o, 0, sizeof *o);
    o->addr = info->dlpi_addr;
    c->path[c->n++] = info->dlpi_name;
    return 0;
}

/* ---- rank 0 ---- */

/* The first new object is the one dlopen was asked for (the loader lists
 * an object before its dependencies). */
static struct dl_desc *describe(const struct collect *c, const char *file, int mode,
                                const struct shim_extents *free_parts)
{
    size_t names = strlen(file) + 1;
    for (int i = 0; i < c->n; i++)
        names += strlen(c->path[i]) + 1;
    struct dl_desc *d = shim_dsm_malloc(sizeof *d + names, 16);
    if (!d)
        dsm__fatal("out of shared memory describing a library loaded with dlopen; "
                   "raise DSM_HEAP_SIZE");
    d->mode = mode;
    d->nobj = c->n;
    d->names_len = (uint32_t)names;
    d->free_parts = *free_parts;
    uint32_t off = 0;
    for (int i = 0; i < c->n; i++) {
        d->obj[i] = c->obj[i];
        d->obj[i].path = off;
        memcpy(d->names + off, c->path[i], strlen(c->path[i]) + 1);
        off += (uint32_t)strlen(c->path[i]) + 1;
    }
    d->file = off;
    memcpy(d->names + off, file, strlen(file) + 1);
    return d;
}

/* ---- every rank: the new objects join the program ---- */

/* info[i] for the description's object i, in its order (the same on
 * every rank, as the segments must be). */
struct join_ctx { const struct dl_desc *d; struct dl_phdr_info info[MAX_NEW]; int have[MAX_NEW]; };

static int join_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct join_ctx *j = arg;
    (void)size;
    for (int i = 0; i < j->d->nobj; i++)
        if (info->dlpi_addr == j->d->obj[i].addr && info->dlpi_name &&
            !strcmp(info->dlpi_name, j->d->names + j->d->obj[i].path)) {
            j->info[i] = *info;
            j->have[i] = 1;
        }
    return 0;
}

static void join(const struct dl_desc *d)
{
    static struct dsm_segment_spec spec[MAX_NEW];
    static struct dsm_range copy[MAX_NEW][SHIM_MAX_RW];
    struct join_ctx j;
    size_t n = 0;
    int share = shim_share_lib_data();

    memset(&j, 0, sizeof j);
    j.d = d;
    dl_iterate_phdr(join_cb, &j);
    for (int i = 0; i < d->nobj; i++) {
        if (!j.have[i])
            dsm__fatal("internal error: %s is not loaded at %#lx after dlopen",
                       d->names + d->obj[i].path, (unsigned long)d->obj[i].addr);
        /* The load may have brought OpenBLAS, perhaps not into the global
         * scope (no RTLD_GLOBAL): ask the object itself. */
        void *own = dlopen(j.info[i].dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
        if (own) {
            shim_blas_one_thread(own);
            dlclose(own);
        }
        int k = shim_applibs_add(&j.info[i]);
        if (k < 0)
            continue;
        shim_got_bind_object(j.info[i].dlpi_addr);
        shim_flush_trap_object(&j.info[i]);
        if (share && shim_data_segment(shim_applibs_data(k), &spec[n], copy[n]))
            n++;
    }
    /* Collective: every rank found the same objects at the same addresses.
     * Its barrier (or this one, with no globals to share) is also where
     * rank 0 learns that nobody reads the description any more. */
    if (n)
        dsm__segments_add(spec, n, 0, SHIM_LIB_DATA_ADVICE);
    else
        dsm_barrier();
    for (size_t i = 0; i < n; i++)
        dsm__set_migrate(spec[i].addr, spec[i].len);
}

/* ---- the other ranks: the same files at the same addresses ---- */

/* Where this rank's loader has the object PATH: 1 if at ADDR; else 0, with
 * *where its address (0: not loaded under that name). */
static int loaded_at(const char *path, uintptr_t addr, uintptr_t *where)
{
    *where = 0;
    for (struct link_map *lm = _r_debug.r_map; lm; lm = lm->l_next)
        if (lm->l_name && !strcmp(lm->l_name, path)) {
            if (lm->l_addr == addr)
                return 1;
            *where = lm->l_addr;
        }
    return 0;
}

/* dlopen(file, mode) steered into the arena (dlarena.c; like: rank 0's
 * free parts there, NULL on rank 0; was: on rank 0, the arena's free parts
 * before the load that is kept), with the objects loaded before it noted in
 * `before` and the new ones in *c.
 *
 * Another thread of this process (the communication thread's malloc, MPI,
 * UCX's own thread) may unmap something above the arena while the loader
 * maps: then an object lands in that gap, where the other ranks cannot
 * follow (seen once on rank 0 in a loaded CI run, and once on a replaying
 * rank under DSM_COMM=rma in tests/foreign rmgcv).  Such a load is undone
 * and tried again, up to 4 times; then the job stops.  dlclose comes before
 * shim_dlarena_end, so that the arena's parts it frees are held again and
 * described as free by the next load. */
static void *load_in_arena(const char *file, int mode, const struct shim_extents *like,
                           struct shim_extents *was, struct collect *c)
{
    for (int attempt = 1;; attempt++) {
        before.n = 0;
        dl_iterate_phdr(seen_cb, &before);
        if (was)
            shim_dlarena_free_parts(was);
        shim_dlarena_begin(like);
        shim_dl_busy = shim_dl_loading = 1;
        void *h = dlopen(file, mode);
        shim_dl_busy = shim_dl_loading = 0;
        memset(c, 0, sizeof *c);
        c->before = &before;
        int outside = 0;
        if (h) {
            dl_iterate_phdr(collect_cb, c);
            for (int i = 0; i < c->n; i++)
                outside += !shim_dlarena_contains(c->obj[i].addr);
        }
        if (!outside) {
            shim_dlarena_end();
            return h;
        }
        if (attempt == 4)
            dsm__fatal("dlopen(\"%s\"): %d of its %d objects landed outside the address "
                       "range kept for libraries loaded with dlopen, %d times in a row "
                       "(other threads keep unmapping memory above it?), where the other "
                       "ranks cannot load them at the same address. Link the program "
                       "with the library, or set OMPSHIM_DLOPEN=private if no parallel "
                       "region calls into it", file, outside, c->n, attempt);
        fprintf(stderr, "libompshim[rank %d]: dlopen(\"%s\"): %d of its %d objects landed "
                "outside the address range kept for them (another thread unmapped memory "
                "meanwhile?); loading it again\n", shim.rank, file, outside, c->n);
        dlclose(h);
        shim_dlarena_end();
    }
}

/* The first object of D that this rank's loader does not have where rank
 * 0's has it, or -1; *where as loaded_at says. */
static int first_misplaced(const struct dl_desc *d, uintptr_t *where)
{
    for (int i = 0; i < d->nobj; i++)
        if (!loaded_at(d->names + d->obj[i].path, d->obj[i].addr, where))
            return i;
    return -1;
}

static void replay(const struct dl_desc *d)
{
    static struct collect c;
    const char *path = d->names + d->file;
    uintptr_t where = 0;
    if (!load_in_arena(path, d->mode, &d->free_parts, NULL, &c))
        dsm__fatal("rank 0 loaded %s with dlopen, and loading it here failed: %s",
                   path, dlerror());
    int i = first_misplaced(d, &where);
    if (i < 0)
        return;
    char here[64];
    if (where)
        snprintf(here, sizeof here, "at %#lx", (unsigned long)where);
    else
        snprintf(here, sizeof here, "not at all under that name");
    dsm__fatal("rank 0 loaded %s at %#lx with dlopen(\"%s\"), and this rank's "
               "loader put it %s; the OpenMP shim needs the same addresses on every "
               "rank. Load the library before the first parallel region, or link "
               "the program with it",
               d->names + d->obj[i].path, (unsigned long)d->obj[i].addr, path, here);
}

void shim_dlopen_worker(const struct shim_ctl *c)
{
    const struct dl_desc *d = c->dl_desc;
    replay(d);
    join(d);
}

/* ---- the caller's search path ---- */

/* The loader searches a bare file name along the DT_RUNPATH (or DT_RPATH)
 * of the object that called dlopen, which is now the shim.  So look where
 * the loader would have looked for the program: if the name is found in
 * the caller's path (and not first in LD_LIBRARY_PATH, which comes before
 * a DT_RUNPATH), give the loader the full name.  $ORIGIN is expanded. */
static int find_in(const char *dirs, const char *origin, const char *file, char *out,
                   size_t size)
{
    const char *p = dirs;
    while (p && *p) {
        const char *e = strchr(p, ':');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char dir[PATH_MAX];
        if (len >= 7 && !strncmp(p, "$ORIGIN", 7) && origin)
            snprintf(dir, sizeof dir, "%s%.*s", origin, (int)(len - 7), p + 7);
        else if (len >= 9 && !strncmp(p, "${ORIGIN}", 9) && origin)
            snprintf(dir, sizeof dir, "%s%.*s", origin, (int)(len - 9), p + 9);
        else
            snprintf(dir, sizeof dir, "%.*s", (int)len, p);
        if (len && (size_t)snprintf(out, size, "%s/%s", dir, file) < size &&
            access(out, F_OK) == 0)
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static const char *dyn_path(const struct link_map *lm, long tag)
{
    uintptr_t strtab = 0, off = 0;
    int have = 0;
    if (!lm || !lm->l_ld)
        return NULL;
    for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_STRTAB)
            strtab = shim_dyn_ptr(d->d_un.d_ptr, lm->l_addr);
        if (d->d_tag == tag) {
            off = d->d_un.d_val;
            have = 1;
        }
    }
    return have && strtab ? (const char *)strtab + off : NULL;
}

static const char *resolve(const char *file, const void *caller, char *buf, size_t size)
{
    Dl_info info;
    struct link_map *lm = NULL;
    char origin[PATH_MAX];
    if (strchr(file, '/') || !dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
        return file;
    const char *runpath = dyn_path(lm, DT_RUNPATH), *rpath = dyn_path(lm, DT_RPATH);
    if (!runpath && !rpath)
        return file;
    const char *name = lm->l_name && lm->l_name[0] ? lm->l_name : NULL;
    ssize_t k = 0;
    if (name) {
        snprintf(origin, sizeof origin, "%s", name);
    } else if ((k = readlink("/proc/self/exe", origin, sizeof origin - 1)) > 0) {
        origin[k] = 0;
    } else {
        origin[0] = 0;
    }
    char *slash = strrchr(origin, '/');
    if (slash)
        *slash = 0;
    if (runpath) {
        if (find_in(getenv("LD_LIBRARY_PATH"), NULL, file, buf, size))
            return file;
        return find_in(runpath, origin, file, buf, size) ? buf : file;
    }
    return find_in(rpath, origin, file, buf, size) ? buf : file;
}

/* ---- the program's dlopen and dlclose ---- */

static void *replayed[256];
static int nreplayed;

/* file: resolved as the caller's loader would. */
static void *program_dlopen(const char *file, int mode)
{
    static struct collect c;
    static struct shim_extents free_parts;
    static int warned;

    if (!shim.active || shim.nodes == 1 || !file || (mode & RTLD_NOLOAD))
        return dlopen(file, mode);
    if (shim.rank != 0 || shim_self()->level > 0) {
        void *h = dlopen(file, mode);
        if (h && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
            fprintf(stderr, "libompshim[rank %d]: warning: dlopen(\"%s\") inside a parallel "
                    "region loads the library on this rank only; load it in sequential "
                    "code (ompshim(7), LIBRARIES LOADED WITH DLOPEN)\n", shim.rank, file);
        return h;
    }
    if (!shim_dlarena_ready()) {
        if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
            fprintf(stderr, "libompshim[rank 0]: warning: dlopen(\"%s\") loads the library "
                    "on rank 0 only: no address range was free on every rank for such "
                    "libraries at start-up\n", file);
        return dlopen(file, mode);
    }
    pthread_mutex_lock(&mu);
    void *h = load_in_arena(file, mode, NULL, &free_parts, &c);
    if (!h) {
        pthread_mutex_unlock(&mu);
        return NULL;
    }
    if (c.overflow)
        dsm__fatal("dlopen(\"%s\") brought in more than %d libraries at once; the "
                   "OpenMP shim cannot load that many on the other ranks", file, MAX_NEW);
    if (c.n == 0) {
        pthread_mutex_unlock(&mu);
        return h;
    }
    struct dl_desc *d = describe(&c, file, mode, &free_parts);
    struct shim_ctl *ctl = shim.ctl;
    ctl->dl_desc = d;
    ctl->dlopen = 1;
    ctl->seq = ctl->seq + 1;
    shim_fork_barrier();        /* the fork: the others get its address */
    join(d);                    /* its barrier: every rank has loaded them */
    ctl->dlopen = 0;
    shim_dsm_free(d);
    if (nreplayed < (int)(sizeof replayed / sizeof replayed[0]))
        replayed[nreplayed++] = h;
    pthread_mutex_unlock(&mu);
    return h;
}

static void *shim_dlopen(const char *file, int mode)
{
    char path[PATH_MAX];
    if (file)
        file = resolve(file, __builtin_return_address(0), path, sizeof path);
    void *h = program_dlopen(file, mode);
    /* The library's imports of the OpenMP ABI bind to the shim, or the job
     * stops (imports.c). */
    if (h && shim.active)
        shim_imports_check();
    return h;
}

static int shim_dlclose(void *h)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nreplayed; i++)
        if (replayed[i] == h) {
            /* Loaded on every rank: it stays, as the others cannot follow. */
            pthread_mutex_unlock(&mu);
            return 0;
        }
    pthread_mutex_unlock(&mu);
    return dlclose(h);
}

void shim_dlopen_init(void)
{
    if (!shim_setting_dlopen_shared())
        return;
    if (shim.nodes > 1)
        shim_dlarena_init();
    static const struct shim_got_entry calls[] = {
        { "dlopen", (void *)shim_dlopen }, { "dlclose", (void *)shim_dlclose },
    };
    shim_got_bind(calls, sizeof calls / sizeof calls[0]);
}
