/*
 * imports.c - no silent fall-through to libgomp: every name of the OpenMP
 * runtime's ABI (GOMP_*, omp_*, GOACC_*, acc_*) that a loaded object
 * imports must bind to libompshim.
 *
 * A name the shim does not export (an entry point of a newer libgomp, say)
 * binds to libgomp, or to whatever other library defines it, and its call
 * then runs on one rank as if there were no others: a wrong answer, or a
 * crash far from the cause.  So at start-up, before main, and after each
 * dlopen of the program's, every object but libompshim and libgomp (and
 * libgomp's plug-ins) is read: the undefined symbols its relocations
 * (DT_RELA and DT_JMPREL) name with one of those prefixes are looked up as
 * the loader would, at the version the object asks for (DT_VERSYM,
 * DT_VERNEED), in the global scope and then in the object's own; each must
 * land in libompshim, or be weak and found nowhere.  The first that does
 * not stops the job with a line naming it, the object that imports it and
 * where it resolves.  An address in another object that imports the same
 * name itself is that object's canonical PLT entry (a non-PIE executable
 * that takes the function's address): that object's own import decides.
 *
 * Objects already read (by load address and name) are not read again.
 *
 * Threads: rank 0's main thread at start-up (start.c); the thread that
 * runs a dlopen of the program's (dlopen.c), under a mutex of its own.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

/* An object's dynamic tables. */
struct dyn_tables {
    uintptr_t base;
    const ElfW(Sym) *sym;
    const char *str;
    const ElfW(Rela) *rela, *jmprel;
    size_t relasz, pltrelsz;
    const ElfW(Half) *versym;
    const ElfW(Verneed) *verneed;
    size_t verneednum;
};

static int read_dynamic(uintptr_t base, const ElfW(Dyn) *dyn, struct dyn_tables *t)
{
    memset(t, 0, sizeof *t);
    t->base = base;
    if (!dyn)
        return 0;
    uintptr_t sym = 0, str = 0, rela = 0, jmprel = 0, versym = 0, verneed = 0;
    long pltrel = DT_RELA;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: sym = d->d_un.d_ptr; break;
        case DT_STRTAB: str = d->d_un.d_ptr; break;
        case DT_RELA: rela = d->d_un.d_ptr; break;
        case DT_RELASZ: t->relasz = d->d_un.d_val; break;
        case DT_JMPREL: jmprel = d->d_un.d_ptr; break;
        case DT_PLTRELSZ: t->pltrelsz = d->d_un.d_val; break;
        case DT_PLTREL: pltrel = (long)d->d_un.d_val; break;
        case DT_VERSYM: versym = d->d_un.d_ptr; break;
        case DT_VERNEED: verneed = d->d_un.d_ptr; break;
        case DT_VERNEEDNUM: t->verneednum = d->d_un.d_val; break;
        default: break;
        }
    }
    if (!sym || !str)
        return 0;
    t->sym = (const ElfW(Sym) *)shim_dyn_ptr(sym, base);
    t->str = (const char *)shim_dyn_ptr(str, base);
    if (rela)
        t->rela = (const ElfW(Rela) *)shim_dyn_ptr(rela, base);
    /* x86-64's PLT relocations are RELA; anything else is not ours to read. */
    if (jmprel && pltrel == DT_RELA)
        t->jmprel = (const ElfW(Rela) *)shim_dyn_ptr(jmprel, base);
    if (versym)
        t->versym = (const ElfW(Half) *)shim_dyn_ptr(versym, base);
    if (verneed)
        t->verneed = (const ElfW(Verneed) *)shim_dyn_ptr(verneed, base);
    return 1;
}

static int abi_name(const char *n)
{
    return !strncmp(n, "GOMP_", 5) || !strncmp(n, "omp_", 4) || !strncmp(n, "GOACC_", 6) ||
           !strncmp(n, "acc_", 4);
}

/* The version the object asks for symbol i at; NULL for none. */
static const char *needed_version(const struct dyn_tables *t, size_t i)
{
    if (!t->versym || !t->verneed)
        return NULL;
    ElfW(Half) v = t->versym[i] & 0x7fff;
    if (v < 2)                  /* local or global: no version */
        return NULL;
    const ElfW(Verneed) *vn = t->verneed;
    for (size_t k = 0; k < t->verneednum; k++) {
        const ElfW(Vernaux) *va = (const ElfW(Vernaux) *)((const char *)vn + vn->vn_aux);
        for (unsigned a = 0; a < vn->vn_cnt; a++) {
            if (va->vna_other == v)
                return t->str + va->vna_name;
            va = (const ElfW(Vernaux) *)((const char *)va + va->vna_next);
        }
        if (!vn->vn_next)
            break;
        vn = (const ElfW(Verneed) *)((const char *)vn + vn->vn_next);
    }
    return NULL;
}

/* Call fn for each undefined symbol with an ABI prefix that the object's
 * relocations name; stop at the first that returns non-zero. */
typedef int (*import_fn)(const struct dyn_tables *t, const ElfW(Sym) *s, const char *name,
                         const char *version, void *arg);

static int walk_table(const struct dyn_tables *t, const ElfW(Rela) *rel, size_t bytes,
                      import_fn fn, void *arg)
{
    for (size_t k = 0; k < bytes / sizeof *rel; k++) {
        size_t i = ELF64_R_SYM(rel[k].r_info);
        if (i == 0)
            continue;
        const ElfW(Sym) *s = &t->sym[i];
        if (s->st_shndx != SHN_UNDEF)
            continue;
        const char *name = t->str + s->st_name;
        if (abi_name(name)) {
            int r = fn(t, s, name, needed_version(t, i), arg);
            if (r)
                return r;
        }
    }
    return 0;
}

static int walk_imports(const struct dyn_tables *t, import_fn fn, void *arg)
{
    int r = 0;
    if (t->rela)
        r = walk_table(t, t->rela, t->relasz, fn, arg);
    if (!r && t->jmprel)
        r = walk_table(t, t->jmprel, t->pltrelsz, fn, arg);
    return r;
}

/* ---- where a name resolves ---- */

static struct link_map *self_map;   /* libompshim's */
static char exe_name[PATH_MAX];     /* the executable's file, or what to call it */

static int same_name(const struct dyn_tables *t, const ElfW(Sym) *s, const char *name,
                     const char *version, void *arg)
{
    (void)t;
    (void)s;
    (void)version;
    return !strcmp(name, (const char *)arg);
}

/* lm imports name itself: an address in it is its canonical PLT entry. */
static int imports_too(const struct link_map *lm, const char *name)
{
    struct dyn_tables t;
    if (!read_dynamic(lm->l_addr, lm->l_ld, &t))
        return 0;
    return walk_imports(&t, same_name, (void *)name);
}

static void *lookup(void *handle, const char *name, const char *version)
{
    return version ? dlvsym(handle, name, version) : dlsym(handle, name);
}

struct check_ctx {
    const char *object;         /* the importing object's file name */
    void *own;                  /* its handle (its own scope), or NULL */
};

static int check_one(const struct dyn_tables *t, const ElfW(Sym) *s, const char *name,
                     const char *version, void *arg)
{
    /* A program that creates tasks: every barrier is a scheduling point
     * for them across ranks, from the first region on (task.c). */
    if (!strcmp(name, "GOMP_task") || !strncmp(name, "GOMP_taskloop", 13))
        shim_task_set_on();
    struct check_ctx *c = arg;
    (void)t;
    void *a = lookup(RTLD_DEFAULT, name, version);
    if (!a && c->own)
        a = lookup(c->own, name, version);
    if (!a && ELF64_ST_BIND(s->st_info) == STB_WEAK)
        return 0;
    Dl_info info;
    struct link_map *lm = NULL;
    if (a && dladdr1(a, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm &&
        (lm == self_map || imports_too(lm, name)))
        return 0;
    const char *where = a && lm && lm->l_name && lm->l_name[0] ? lm->l_name
                      : a ? exe_name : NULL;
    dsm__fatal("%s imports %s%s%s, which the OpenMP shim does not define (%s%s): its "
               "calls would bypass the shim and run on one rank as if there were no "
               "others; run the program with stock libgomp on one node instead "
               "(ompshim(7), SUPPORTED CONSTRUCTS)",
               c->object, name, version ? "@" : "", version ? version : "",
               where ? "it resolves to " : "no loaded library defines it",
               where ? where : "");
    return 1;
}

/* ---- the objects ---- */

#define MAX_CHECKED 1024
static struct { uintptr_t addr; char name[64]; } checked[MAX_CHECKED];
static int nchecked;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int was_checked(const struct dl_phdr_info *info, const char *name)
{
    for (int i = 0; i < nchecked; i++)
        if (checked[i].addr == info->dlpi_addr && !strncmp(checked[i].name, name,
                                                           sizeof checked[i].name - 1))
            return 1;
    return 0;
}

/* libgomp itself, and its offloading plug-ins, import from libgomp. */
static int is_libgomp(const char *path)
{
    const char *b = strrchr(path, '/');
    return !strncmp(b ? b + 1 : path, "libgomp", 7);
}

static int object_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : NULL;
    int first = *(int *)arg;    /* the first object is the executable */
    *(int *)arg = 0;
    if (!name && !first)
        return 0;               /* the vDSO */
    if (!name)
        name = exe_name;
    if (info->dlpi_addr == self_map->l_addr || is_libgomp(name) || was_checked(info, name))
        return 0;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    struct dyn_tables t;
    if (read_dynamic(info->dlpi_addr, dyn, &t)) {
        struct check_ctx c = { name, first ? NULL : dlopen(name, RTLD_LAZY | RTLD_NOLOAD) };
        walk_imports(&t, check_one, &c);
        if (c.own)
            dlclose(c.own);
    }
    if (nchecked < MAX_CHECKED) {
        checked[nchecked].addr = info->dlpi_addr;
        size_t n = strnlen(name, sizeof checked[nchecked].name - 1);   /* a prefix is enough */
        memcpy(checked[nchecked].name, name, n);
        checked[nchecked].name[n] = '\0';
        nchecked++;
    }
    return 0;
}

void shim_imports_check(void)
{
    Dl_info info;
    pthread_mutex_lock(&mu);
    if (!self_map && !dladdr1((void *)shim_imports_check, &info, (void **)&self_map,
                              RTLD_DL_LINKMAP))
        dsm__fatal("internal error: libompshim cannot find itself with dladdr");
    if (!exe_name[0]) {
        ssize_t n = readlink("/proc/self/exe", exe_name, sizeof exe_name - 1);
        if (n > 0)
            exe_name[n] = '\0';
        else
            strcpy(exe_name, "the executable");
    }
    int first = 1;
    dl_iterate_phdr(object_cb, &first);
    pthread_mutex_unlock(&mu);
}
