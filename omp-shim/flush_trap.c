/*
 * flush_trap.c - OpenMP's flush in the program's code, made a DSM flush.
 *
 * GCC compiles `#pragma omp flush` (and __sync_synchronize and
 * __atomic_thread_fence(__ATOMIC_SEQ_CST)) into `lock orq $0,(%rsp)`, and
 * older code has `mfence`: a fence of this CPU only, which calls nothing.
 * A program that hands data from thread to thread through a flag and
 * flush (a pipeline that waits for its neighbour, a producer that sets
 * "ready") then never sees the flag change on another rank: the writer's
 * store stays in its rank's copy and the reader reads its own.
 *
 * So at start-up, before the program runs, every such instruction of the
 * program's code is replaced by `ud2` and a nop of the rest of its length,
 * and a SIGILL handler runs dsm_flush() for it and steps over it.  The
 * program's code: the executable, and the libraries it needs that use
 * OpenMP themselves (DT_NEEDED libgomp; applibs.c says which are the
 * program's).  Not the C runtime's, MPI's or the shim's own fences.
 *
 * The instructions are found without trusting a byte pattern alone: a
 * candidate (the bytes of the instruction, found with memmem) is patched
 * only if disassembling (capstone) from the start of the function that
 * holds it (the .eh_frame_hdr table of function starts) reaches an
 * instruction at exactly that address with exactly those bytes.  Code with
 * no such table is swept from the start of its segment; a sweep that meets
 * bytes it cannot decode patches nothing after them.
 *
 * A library the program loads later with dlopen is scanned the same way
 * when it joins the program on every rank (dlopen.c), after its
 * constructors ran (their fences stay fences: sequential code).
 *
 * OMPSHIM_FLUSH=off leaves the code as it is.  A SIGILL that is not one of
 * these goes to the program's own SIGILL action (signals.c), or kills the
 * process as it would have.
 *
 * Threads: shim_flush_trap_init on the main thread at start-up, before
 * shim.active; shim_flush_trap_object on the thread that runs a dlopen
 * (one at a time, dlopen.c); the handler on whichever thread ran the
 * instruction.
 */
#define _GNU_SOURCE
#include <capstone/capstone.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "shim.h"

struct fence { const uint8_t *bytes; size_t len; const uint8_t *patch; };

static const uint8_t lock_or_rsp[6] = { 0xf0, 0x48, 0x83, 0x0c, 0x24, 0x00 };
static const uint8_t ud2_nop4[6] = { 0x0f, 0x0b, 0x0f, 0x1f, 0x40, 0x00 };
static const uint8_t mfence_[3] = { 0x0f, 0xae, 0xf0 };
static const uint8_t ud2_nop1[3] = { 0x0f, 0x0b, 0x90 };

static const struct fence fences[] = {
    { lock_or_rsp, sizeof lock_or_rsp, ud2_nop4 },
    { mfence_, sizeof mfence_, ud2_nop1 },
};

/* The patched instructions, sorted by address.  The handler reads the
 * table without a lock: a library loaded later gets a new table, published
 * with one atomic store, and the old one is never freed. */
struct site { uintptr_t pc; size_t len; };
struct site_table { size_t n; struct site s[]; };
static struct site_table *table;
/* Found by the scan under way (start-up, or one dlopen). */
static struct site *found;
static size_t nfound, found_cap;
static struct sigaction next_act;
static int enabled;
static csh cs;

static int cmp_site(const void *a, const void *b)
{
    uintptr_t x = ((const struct site *)a)->pc, y = ((const struct site *)b)->pc;
    return x < y ? -1 : x > y;
}

static void add_site(uintptr_t pc, size_t len)
{
    if (nfound == found_cap) {
        size_t nc = found_cap ? 2 * found_cap : 64;
        struct site *s = realloc(found, nc * sizeof *s);
        if (!s)
            dsm__fatal("out of private memory for the flush sites");
        found = s;
        found_cap = nc;
    }
    found[nfound].pc = pc;
    found[nfound++].len = len;
}

/* Bytes of a DWARF pointer encoding's value, for the ones the table uses. */
static size_t enc_size(uint8_t enc)
{
    switch (enc & 0x0f) {
    case 0x02: case 0x0a: return 2;
    case 0x03: case 0x0b: return 4;
    case 0x04: case 0x0c: return 8;
    default: return 0;
    }
}

/* The function starts of .eh_frame_hdr's search table (sorted), or 0. */
static size_t function_starts(const struct dl_phdr_info *info, uintptr_t **out)
{
    const uint8_t *h = NULL;
    *out = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
            h = (const uint8_t *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    /* version 1; count udata4; table of datarel sdata4 pairs. */
    if (!h || h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b || !enc_size(h[1]))
        return 0;
    size_t off = 4 + enc_size(h[1]);
    uint32_t n;
    memcpy(&n, h + off, 4);
    off += 4;
    uintptr_t *s = malloc((n ? n : 1) * sizeof *s);
    if (!s)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        int32_t rel;
        memcpy(&rel, h + off + 8 * (size_t)i, 4);
        s[i] = (uintptr_t)h + (uintptr_t)(intptr_t)rel;
    }
    *out = s;
    return n;
}

/* 1 if a sweep from `from` decodes an instruction at exactly c that is f. */
static int is_instruction(uintptr_t from, uintptr_t c, const struct fence *f)
{
    const uint8_t *code = (const uint8_t *)from;
    size_t size = c + f->len - from;
    uint64_t addr = from;
    cs_insn *insn = cs_malloc(cs);
    int found = 0;
    if (!insn)
        return 0;
    while (addr < c && cs_disasm_iter(cs, &code, &size, &addr, insn))
        ;
    if (addr == c && cs_disasm_iter(cs, &code, &size, &addr, insn) &&
        insn->size == f->len && !memcmp(insn->bytes, f->bytes, f->len))
        found = 1;
    cs_free(insn, 1);
    return found;
}

static void patch(uintptr_t c, const struct fence *f)
{
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t lo = c & ~(uintptr_t)(ps - 1);
    size_t span = c + f->len - lo;
    if (mprotect((void *)lo, span, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        dsm__fatal("cannot make the program's code at %#lx writable to trap its "
                   "flush (%s); run with OMPSHIM_FLUSH=off (ompshim(7))",
                   (unsigned long)c, strerror(errno));
    memcpy((void *)c, f->patch, f->len);
    if (mprotect((void *)lo, span, PROT_READ | PROT_EXEC) != 0)
        dsm__fatal("cannot make the program's code at %#lx executable again (%s)",
                   (unsigned long)c, strerror(errno));
    add_site(c, f->len);
}

/* Find and patch the fences of one object's executable segments. */
static void scan(const struct dl_phdr_info *info)
{
    uintptr_t *starts = NULL;
    size_t nstarts = function_starts(info, &starts);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_filesz;
        for (size_t k = 0; k < sizeof fences / sizeof fences[0]; k++) {
            const struct fence *f = &fences[k];
            uintptr_t at = lo;
            const uint8_t *m;
            while (at < hi &&
                   (m = memmem((const void *)at, hi - at, f->bytes, f->len)) != NULL) {
                uintptr_t c = (uintptr_t)m, from = lo;
                /* The last function start at or before c, in this segment. */
                size_t a = 0, b = nstarts;
                while (a < b) {
                    size_t mid = (a + b) / 2;
                    if (starts[mid] <= c) a = mid + 1; else b = mid;
                }
                if (a > 0 && starts[a - 1] >= lo)
                    from = starts[a - 1];
                if (is_instruction(from, c, f))
                    patch(c, f);
                at = c + 1;
            }
        }
    }
    free(starts);
}

static int needs_libgomp(const struct dl_phdr_info *info)
{
    const ElfW(Dyn) *d = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!d)
        return 0;
    uintptr_t strtab = 0;
    for (const ElfW(Dyn) *e = d; e->d_tag != DT_NULL; e++)
        if (e->d_tag == DT_STRTAB)
            strtab = shim_dyn_ptr(e->d_un.d_ptr, info->dlpi_addr);
    if (!strtab)
        return 0;
    for (const ElfW(Dyn) *e = d; e->d_tag != DT_NULL; e++)
        if (e->d_tag == DT_NEEDED &&
            !strncmp((const char *)strtab + e->d_un.d_val, "libgomp.so", 10))
            return 1;
    return 0;
}

static int object_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    int exe = !info->dlpi_name || !info->dlpi_name[0];
    if (exe || (shim_applibs_is_program_name(info->dlpi_name) && needs_libgomp(info)))
        scan(info);
    return 0;
}

/* Publish the table with the sites found added. */
static void publish(void)
{
    struct site_table *old = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
    size_t n0 = old ? old->n : 0;
    if (!nfound)
        return;
    struct site_table *t = malloc(sizeof *t + (n0 + nfound) * sizeof t->s[0]);
    if (!t)
        dsm__fatal("out of private memory for the flush sites");
    if (n0)
        memcpy(t->s, old->s, n0 * sizeof t->s[0]);
    memcpy(t->s + n0, found, nfound * sizeof t->s[0]);
    t->n = n0 + nfound;
    qsort(t->s, t->n, sizeof t->s[0], cmp_site);
    __atomic_store_n(&table, t, __ATOMIC_RELEASE);
    nfound = 0;
}

static int site_at(uintptr_t pc)
{
    const struct site_table *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
    if (!t)
        return 0;
    size_t a = 0, b = t->n;
    while (a < b) {
        size_t mid = (a + b) / 2;
        if (t->s[mid].pc < pc) a = mid + 1; else b = mid;
    }
    return a < t->n && t->s[a].pc == pc ? (int)t->s[a].len : 0;
}

static void on_sigill(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    int len = site_at((uintptr_t)uc->uc_mcontext.gregs[REG_RIP]);
    if (len) {
        int saved = errno;
        /* Not on libdsm's communication thread (a library's callback into
         * the program): a flush there would wait for its own acks. */
        if (shim.active && dsm_initialized() &&
            !pthread_equal(pthread_self(), dsm__g.comm_thread))
            dsm_flush();
        else
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
        uc->uc_mcontext.gregs[REG_RIP] += len;
        errno = saved;
        return;
    }
    if (shim_program_sigill(sig, si, ucv))
        return;
    if (next_act.sa_flags & SA_SIGINFO)
        next_act.sa_sigaction(sig, si, ucv);
    else if (next_act.sa_handler != SIG_DFL && next_act.sa_handler != SIG_IGN)
        next_act.sa_handler(sig);
    else
        signal(sig, SIG_DFL);       /* the instruction traps again and kills */
}

int shim_flush_trap_enabled(void)
{
    return enabled;
}

size_t shim_flush_trap_sites(void)
{
    const struct site_table *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
    return t ? t->n : 0;
}

/* A library the program loaded (dlopen.c), before anything runs its code. */
void shim_flush_trap_object(const struct dl_phdr_info *info)
{
    if (!enabled || !needs_libgomp(info))
        return;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
        dsm__fatal("cannot start the disassembler (capstone) that finds the flush "
                   "instructions of %s; run with OMPSHIM_FLUSH=off (ompshim(7))",
                   info->dlpi_name);
    scan(info);
    publish();
    cs_close(&cs);
}

void shim_flush_trap_init(void)
{
    SHIM_REAL(sigaction);
    const char *e = getenv("OMPSHIM_FLUSH");
    if (e && strcmp(e, "on") && strcmp(e, "off"))
        dsm__fatal("OMPSHIM_FLUSH=%s: bad value; give on (the default) or off", e);
    if (e && !strcmp(e, "off"))
        return;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
        dsm__fatal("cannot start the disassembler (capstone) that finds the program's "
                   "flush instructions; run with OMPSHIM_FLUSH=off (ompshim(7))");
    /* Install the handler before the first patch can run. */
    struct sigaction sa;
    if (real_sigaction(SIGILL, NULL, &next_act) != 0)
        dsm__fatal("sigaction(SIGILL): %s", strerror(errno));
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigill;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (real_sigaction(SIGILL, &sa, NULL) != 0)
        dsm__fatal("sigaction(SIGILL): %s", strerror(errno));
    enabled = 1;
    dl_iterate_phdr(object_cb, NULL);
    publish();
    cs_close(&cs);
}
