/*
 * got.c - send the program's own calls of a few C library functions to the
 * shim, by rewriting the program's global offset tables.
 *
 * The shim catches most C library functions by defining them (heap.c,
 * syscalls.c).  That does not work for mmap and its relatives: UCX, under
 * MPICH, patches the code of whatever function the global name "mmap"
 * finds, to learn about every mapping (its "bistro" memory hooks), so a
 * global mmap of the shim's would be overwritten by a jump into UCX.  Here
 * the shim leaves the global names to the C library (and to UCX) and
 * points only the executable's and the program libraries' (applibs.c)
 * relocations for those names at the shim's functions: their JUMP_SLOT and
 * GLOB_DAT entries, inside RELRO too.  MPI, libdsm and the C library keep
 * calling the C library.  A library the program loads later with dlopen
 * is bound the same way when it joins the program's (dlopen.c); a call
 * through a pointer from dlsym is not redirected.
 *
 * Threads: shim_got_bind runs on the main thread at start-up;
 * shim_got_bind_object on the main thread of every rank in a dlopen.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "shim.h"

struct bind_ctx {
    const struct shim_got_entry *want;
    size_t nwant;
    size_t bound;
    uintptr_t only;             /* bind only the object loaded here (0: all) */
};

/* The lists given to shim_got_bind, for objects loaded later. */
static struct { const struct shim_got_entry *want; size_t n; } lists[8];
static int nlists;

static int is_program_object(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        return (a >= shim.text_lo && a < shim.text_hi) || shim_code_in_prog_lib(a);
    }
    return 0;
}

/* Write fn into the slot at a, which may be in the object's RELRO part.  A
 * slot after the RELRO part (lazy binding's .got.plt) may be in shared
 * memory, with the object's data (start.c): there rank 0 writes it for
 * every rank (the shim is at the same address everywhere), since the same
 * bytes written by every rank in one interval would be a race to
 * DSM_CHECK=races. */
static void write_slot(void **a, void *fn, uintptr_t relro_lo, uintptr_t relro_hi)
{
    uintptr_t p = (uintptr_t)a;
    if (dsm_rt_in_region(a) && shim.rank != 0)
        return;
    int relro = p >= relro_lo && p < relro_hi;
    uintptr_t page = p & ~(uintptr_t)(dsm_rt_os_page() - 1);
    if (relro && mprotect((void *)page, dsm_rt_os_page(), PROT_READ | PROT_WRITE) != 0)
        dsm__fatal("cannot make the program's GOT writable at %p to redirect its mmap "
                   "calls; run with OMPSHIM_MMAP=private", (void *)a);
    __atomic_store_n(a, fn, __ATOMIC_RELAXED);
    if (relro)
        mprotect((void *)page, dsm_rt_os_page(), PROT_READ);
}

static void bind_table(const struct dl_phdr_info *info, struct bind_ctx *c,
                       const ElfW(Rela) *rel, size_t bytes, const ElfW(Sym) *symtab,
                       const char *strtab, uintptr_t relro_lo, uintptr_t relro_hi)
{
    for (size_t k = 0; k < bytes / sizeof *rel; k++) {
        unsigned long type = ELF64_R_TYPE(rel[k].r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
            continue;
        const char *name = strtab + symtab[ELF64_R_SYM(rel[k].r_info)].st_name;
        for (size_t w = 0; w < c->nwant; w++)
            if (!strcmp(name, c->want[w].name)) {
                write_slot((void **)(info->dlpi_addr + rel[k].r_offset), c->want[w].fn,
                           relro_lo, relro_hi);
                c->bound++;
            }
    }
}

static int bind_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct bind_ctx *c = arg;
    const ElfW(Dyn) *dyn = NULL;
    uintptr_t relro_lo = 0, relro_hi = 0;
    (void)size;
    if ((c->only && info->dlpi_addr != c->only) || !is_program_object(info))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
        if (ph->p_type == PT_GNU_RELRO) {
            relro_lo = info->dlpi_addr + ph->p_vaddr;
            relro_hi = relro_lo + ph->p_memsz;
        }
    }
    if (!dyn)
        return 0;
    uintptr_t symtab = 0, strtab = 0, jmprel = 0, rela = 0;
    size_t pltrelsz = 0, relasz = 0;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = d->d_un.d_ptr; break;
        case DT_STRTAB: strtab = d->d_un.d_ptr; break;
        case DT_JMPREL: jmprel = d->d_un.d_ptr; break;
        case DT_PLTRELSZ: pltrelsz = d->d_un.d_val; break;
        case DT_RELA: rela = d->d_un.d_ptr; break;
        case DT_RELASZ: relasz = d->d_un.d_val; break;
        default: break;
        }
    }
    if (!symtab || !strtab)
        return 0;
    const ElfW(Sym) *sym = (const ElfW(Sym) *)shim_dyn_ptr(symtab, info->dlpi_addr);
    const char *str = (const char *)shim_dyn_ptr(strtab, info->dlpi_addr);
    if (jmprel)
        bind_table(info, c, (const ElfW(Rela) *)shim_dyn_ptr(jmprel, info->dlpi_addr), pltrelsz,
                   sym, str, relro_lo, relro_hi);
    if (rela)
        bind_table(info, c, (const ElfW(Rela) *)shim_dyn_ptr(rela, info->dlpi_addr), relasz,
                   sym, str, relro_lo, relro_hi);
    return 0;
}

size_t shim_got_bind(const struct shim_got_entry *want, size_t n)
{
    struct bind_ctx c = { want, n, 0, 0 };
    if (nlists == (int)(sizeof lists / sizeof lists[0]))
        dsm__fatal("internal error: too many GOT lists");
    lists[nlists].want = want;
    lists[nlists].n = n;
    nlists++;
    dl_iterate_phdr(bind_cb, &c);
    return c.bound;
}

void shim_got_bind_object(uintptr_t base)
{
    for (int i = 0; i < nlists; i++) {
        struct bind_ctx c = { lists[i].want, lists[i].n, 0, base };
        dl_iterate_phdr(bind_cb, &c);
    }
}
