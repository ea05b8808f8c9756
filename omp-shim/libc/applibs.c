/*
 * applibs.c - which code is the program's, for the heap (heap.c, libc_alloc.c).
 *
 * The program's code is the executable's text and the text of the
 * libraries it needs (its DT_NEEDED entries and theirs: libjpeg, libgsl,
 * libstdc++, ...), except the C runtime (libc, libm, libgomp, libgcc_s,
 * the loader), anything libompshim needs itself (MPI, UCX, hwloc,
 * libsigsegv and their own dependencies), and OpenBLAS (below).  A malloc
 * from the program's code gets memory in the DSM, so that a structure a
 * library builds for the program (libjpeg's image buffers and their
 * function pointers, say) can be read by every rank.  Libraries loaded
 * later with dlopen by the runtime (MPI's transport modules) are never the
 * program's; those the program loads join with shim_applibs_add (dlopen.c).
 *
 * Their writable data (.data and .bss after the RELRO part) is the
 * program's too: start.c brings it under the DSM with the executable's,
 * so that a library's global variables (GraphicsMagick's semaphores and
 * caches, say) are the same on every rank.
 *
 * OpenBLAS is kept out although the program needs it (through libblas.so.3
 * or liblapack.so.3): its globals are a per-process thread pool, the C
 * library's mutexes and condition variables its workers sleep in since its
 * constructor ran, and a table of buffers it mapped in this process.  None
 * of that means anything on another rank.  Shared, each rank's copy of a
 * condition variable was merged with the others' at barriers, and rank 0
 * hung at exit in OpenBLAS's pthread_cond_destroy, waiting for a waiter
 * that no thread of rank 0 was (tests/foreign rdatatable).  Private, every
 * rank has its own pool as in any process; the matrices it is given are
 * the program's, in shared memory, and it reads and writes them within
 * the call, like any code running in the caller's thread (blas.c gives it
 * one thread a rank).
 *
 * Threads: shim_applibs_scan runs on the main thread, twice: before the
 * executable's constructors (whose allocations go to the pre-main arena,
 * premain_heap.c, by the same test) and at start-up, before shim.active is
 * set; shim_applibs_add on the main thread of every
 * rank in a dlopen (an entry is written before the count that shows it);
 * shim_code_in_prog_lib on any thread.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "shim.h"

#define MAX_OBJS 256

/* Objects that are never the program's, by the start of their file name. */
static const char *const runtime_names[] = {
    "libc.so", "libm.so", "libmvec.so", "libgomp.so", "libpthread.so", "libdl.so",
    "librt.so", "libgcc_s.so", "ld-linux", "linux-vdso", "libompshim.so", "libdsm.so",
    "libopenblas",
};

struct obj {
    struct link_map *lm;
    const char *base;           /* file name without the directory */
    int runtime, program;
};

static struct obj objs[MAX_OBJS];
static int nobjs;

static int is_runtime_name(const char *base)
{
    for (size_t k = 0; k < sizeof runtime_names / sizeof runtime_names[0]; k++)
        if (!strncmp(base, runtime_names[k], strlen(runtime_names[k])))
            return 1;
    return 0;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static struct obj *find_obj(const char *name)
{
    for (int i = 0; i < nobjs; i++)
        if (!strcmp(objs[i].base, name))
            return &objs[i];
    return NULL;
}

/* Call fn for each DT_NEEDED name of lm. */
static void each_needed(struct link_map *lm, void (*fn)(const char *, int), int mark)
{
    const ElfW(Dyn) *d;
    uintptr_t strtab = 0;
    if (!lm->l_ld)
        return;
    for (d = lm->l_ld; d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_STRTAB)
            strtab = d->d_un.d_ptr;
    if (!strtab)
        return;
    strtab = shim_dyn_ptr(strtab, lm->l_addr);
    for (d = lm->l_ld; d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_NEEDED)
            fn((const char *)strtab + d->d_un.d_val, mark);
}

/* Mark name and what it needs: mark 1 runtime, 2 program (not through a
 * runtime object). */
static void mark_tree(const char *name, int mark)
{
    struct obj *o = find_obj(name);
    if (!o)
        return;
    if (mark == 1) {
        if (o->runtime)
            return;
        o->runtime = 1;
    } else {
        if (o->runtime || o->program)
            return;
        o->program = 1;
    }
    each_needed(o->lm, mark_tree, mark);
}

struct text_scan {
    struct link_map *lm;
    uintptr_t lo, hi;           /* its code */
    struct shim_image_data data;
};

/* An object's code (its executable PT_LOADs) and writable data. */
static void scan_object(const struct dl_phdr_info *info, struct text_scan *t)
{
    shim_image_data_of(info, &t->data);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
            if (!t->lo || lo < t->lo) t->lo = lo;
            if (hi > t->hi) t->hi = hi;
        }
    }
}

static int text_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct text_scan *t = arg;
    (void)size;
    if (info->dlpi_addr != t->lm->l_addr || !info->dlpi_name ||
        strcmp(info->dlpi_name, t->lm->l_name))
        return 0;
    scan_object(info, t);
    return 1;
}

/* The program libraries' writable data, for start.c. */
static struct shim_image_data lib_data[SHIM_MAX_PROG_LIBS];

void shim_applibs_scan(void)
{
    struct link_map *exe = _r_debug.r_map, *lm;

    nobjs = 0;
    shim.nprog_libs = 0;
    if (!exe)
        return;
    for (lm = exe->l_next; lm && nobjs < MAX_OBJS; lm = lm->l_next) {
        if (!lm->l_name || !lm->l_name[0])
            continue;
        struct obj *o = &objs[nobjs++];
        o->lm = lm;
        o->base = base_name(lm->l_name);
        o->runtime = is_runtime_name(o->base);
        o->program = 0;
    }
    /* What libompshim needs is the runtime's, even if the program needs it
     * too (the runtime's allocations must stay private). */
    for (int i = 0; i < nobjs; i++)
        if (!strncmp(objs[i].base, "libompshim.so", 13))
            each_needed(objs[i].lm, mark_tree, 1);
    each_needed(exe, mark_tree, 2);
    for (int i = 0; i < nobjs; i++) {
        if (!objs[i].program || shim.nprog_libs == SHIM_MAX_PROG_LIBS)
            continue;
        struct text_scan t;
        memset(&t, 0, sizeof t);
        t.lm = objs[i].lm;
        dl_iterate_phdr(text_cb, &t);
        if (t.hi > t.lo) {
            shim.prog_lib_lo[shim.nprog_libs] = t.lo;
            shim.prog_lib_hi[shim.nprog_libs] = t.hi;
            shim.prog_lib_name[shim.nprog_libs] = objs[i].base;
            lib_data[shim.nprog_libs] = t.data;
            shim.nprog_libs++;
        }
    }
}

int shim_applibs_is_program_name(const char *path)
{
    return path && path[0] && !is_runtime_name(base_name(path));
}

int shim_applibs_add(struct dl_phdr_info *info)
{
    struct text_scan t;
    int n = shim.nprog_libs;
    if (!shim_applibs_is_program_name(info->dlpi_name))
        return -1;
    if (n == SHIM_MAX_PROG_LIBS)
        dsm__fatal("the program loaded %s with dlopen, one library more than the %d "
                   "whose code the OpenMP shim can tell apart (SHIM_MAX_PROG_LIBS)",
                   info->dlpi_name, SHIM_MAX_PROG_LIBS);
    memset(&t, 0, sizeof t);
    scan_object(info, &t);
    if (t.hi <= t.lo)
        return -1;
    shim.prog_lib_lo[n] = t.lo;
    shim.prog_lib_hi[n] = t.hi;
    shim.prog_lib_name[n] = base_name(info->dlpi_name);
    lib_data[n] = t.data;
    __atomic_store_n(&shim.nprog_libs, n + 1, __ATOMIC_RELEASE);
    return n;
}

int shim_code_in_prog_lib(uintptr_t a)
{
    int n = __atomic_load_n(&shim.nprog_libs, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (a >= shim.prog_lib_lo[i] && a < shim.prog_lib_hi[i])
            return 1;
    return 0;
}

const struct shim_image_data *shim_applibs_data(int i)
{
    return &lib_data[i];
}
