/*
 * races.c - names for addresses in DSM_CHECK=races reports.
 *
 * A program built without -g or -rdynamic has its globals only in the
 * executable's .symtab, which the dynamic linker does not load; read it
 * from /proc/self/exe once at start-up, and give libdsm a function that
 * turns an address into "symbol+offset".
 *
 * Threads: the main thread at start-up; shim_name_address from libdsm's
 * race reports (any thread).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"

struct sym { uintptr_t lo, hi; const char *name; };
static struct sym *syms;
static size_t nsyms;

static int by_addr(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static uintptr_t exe_base(void)
{
    struct link_map *m = NULL;
    extern struct r_debug _r_debug;
    m = _r_debug.r_map;
    return m ? (uintptr_t)m->l_addr : 0;
}

static int name_address(const void *addr, char *out, size_t outlen)
{
    uintptr_t a = (uintptr_t)addr;
    size_t lo = 0, hi = nsyms;
    for (int r = 0; r < shim.nodes; r++) {
        uintptr_t s = (uintptr_t)shim.stacks[r], len = shim.stack_slots * shim.stack_size;
        if (a >= s && a - s < len) {
            size_t slot = (a - s) / shim.stack_size;
            snprintf(out, outlen, "a variable on the stack of rank %d's thread %zu%s",
                     r, slot, r == 0 && slot == 0 ? ", main's stack" : "");
            return 0;
        }
    }
    if (shim_in_heap(addr)) {
        snprintf(out, outlen, "heap memory");
        return 0;
    }
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (syms[mid].lo <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || a >= syms[lo - 1].hi)
        return -1;
    snprintf(out, outlen, "%s+%lu", syms[lo - 1].name, (unsigned long)(a - syms[lo - 1].lo));
    return 0;
}

void shim_symbols_init(struct dsm_runtime_hooks *h)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return;
    }
    const unsigned char *f = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f == MAP_FAILED)
        return;
    const ElfW(Ehdr) *eh = (const void *)f;
    const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff);
    uintptr_t base = exe_base();
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB)
            continue;
        const ElfW(Sym) *s = (const void *)(f + sh[i].sh_offset);
        const char *str = (const char *)(f + sh[sh[i].sh_link].sh_offset);
        size_t n = sh[i].sh_size / sizeof *s;
        syms = calloc(n, sizeof *syms);
        if (!syms)
            return;
        for (size_t k = 0; k < n; k++) {
            if (ELF64_ST_TYPE(s[k].st_info) != STT_OBJECT || s[k].st_size == 0)
                continue;
            syms[nsyms].lo = base + s[k].st_value;
            syms[nsyms].hi = syms[nsyms].lo + s[k].st_size;
            syms[nsyms].name = str + s[k].st_name;
            nsyms++;
        }
        qsort(syms, nsyms, sizeof *syms, by_addr);
        break;
    }
    h->name_address = name_address;
}
