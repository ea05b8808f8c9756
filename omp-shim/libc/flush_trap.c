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
 * program's code is made to run dsm_flush().  The program's code: the
 * executable, and the libraries it needs that use OpenMP themselves
 * (DT_NEEDED libgomp; applibs.c says which are the program's).  Not the C
 * runtime's, MPI's or the shim's own fences.
 *   - `lock orq $0,(%rsp)` (6 bytes) becomes a jump to a stub of its own
 *     (below the code, within 2 GiB), which steps below the red zone, calls
 *     shim_flush_tramp_common (every register saved, XSAVE for the vector
 *     state), and jumps back after the instruction: about 1 us.
 *   - `mfence` (3 bytes, no room for a jump), and every site when there is
 *     no room for stubs, no XSAVE, or OMPSHIM_FLUSH=trap, becomes `ud2` and
 *     a nop; the SIGILL handler runs dsm_flush() and steps over it: tens
 *     of us on a virtual machine (docs/RESULTS.md).
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
 * constructors ran (their fences stay fences: sequential code); its sites
 * trap, since stubs would take address space that the ranks' later loads
 * must find the same (dlarena.c).
 *
 * OMPSHIM_FLUSH=off leaves the code as it is.  A SIGILL that is not one of
 * these goes to the program's own SIGILL action (signals.c), or kills the
 * process as it would have.  On libdsm's communication thread (a library's
 * callback into the program), in a forked child and outside the run, a
 * flush stays a fence.
 *
 * Threads: shim_flush_trap_init on the main thread at start-up, before
 * shim.active; shim_flush_trap_object on the thread that runs a dlopen
 * (one at a time, dlopen.c); the handler and the trampolines on whichever
 * thread ran the instruction.
 */
#define _GNU_SOURCE
#include <capstone/capstone.h>
#include <cpuid.h>
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

/* Write len bytes of code at c. */
static void write_code(uintptr_t c, const uint8_t *bytes, size_t len)
{
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t lo = c & ~(uintptr_t)(ps - 1);
    size_t span = c + len - lo;
    if (mprotect((void *)lo, span, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        dsm__fatal("cannot make the program's code at %#lx writable to trap its "
                   "flush (%s); run with OMPSHIM_FLUSH=off (ompshim(7))",
                   (unsigned long)c, strerror(errno));
    memcpy((void *)c, bytes, len);
    if (mprotect((void *)lo, span, PROT_READ | PROT_EXEC) != 0)
        dsm__fatal("cannot make the program's code at %#lx executable again (%s)",
                   (unsigned long)c, strerror(errno));
}

/* ---- trampolines ----
 * A `lock orq $0,(%rsp)` (6 bytes) becomes `jmp stub; nop`, and its stub,
 * within 2 GiB of it:
 *     lea -128(%rsp),%rsp        step below the red zone the code may use
 *     call *slot(%rip)           shim_flush_tramp_common (below)
 *     lea 128(%rsp),%rsp
 *     jmp site+6
 * A call costs far less than a trap (docs/RESULTS.md).  An mfence (3
 * bytes) has no room for a jump: it traps.  Without room for the stubs
 * near the code, or without XSAVE, every site traps. */
#define STUB 32
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

extern void shim_flush_tramp_common(void) SHIM_HIDDEN;
uint64_t shim_xsave_size SHIM_HIDDEN;      /* read by the assembly below */

static int trap_only;          /* OMPSHIM_FLUSH=trap */

/* A flush of the program: the trampolines (with every register saved),
 * the trap and the out-of-line __sync_synchronize come here.  Not on
 * libdsm's communication thread (a library's callback into the program):
 * a flush there would wait for its own acks; nor in a forked child or
 * outside the run. */
void shim_flush_now(void)
{
    int saved = errno;
    if (enabled && shim.active && dsm_initialized() &&
        !dsm_rt_on_comm_thread())
        dsm_flush();
    else
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    errno = saved;
}

/* The common part of the trampolines.  Entered by the stub's call, below
 * the red zone; saves every register the C code may change (the flags,
 * the caller-saved general registers, and the whole extended state with
 * XSAVE: the program may hold live vector registers across a flush, which
 * is no call for the compiler), calls shim_flush_now, restores them
 * and returns to the stub.  The XSAVE area is 64-byte aligned, and its
 * header (bytes 512-575) zeroed, as XRSTOR requires. */
__asm__(
    ".text\n"
    ".globl shim_flush_tramp_common\n"
    ".hidden shim_flush_tramp_common\n"
    ".type shim_flush_tramp_common, @function\n"
    "shim_flush_tramp_common:\n"
    "endbr64\n"                 /* reached by an indirect call */
    "pushfq\n"
    "pushq   %rax\n"
    "pushq   %rcx\n"
    "pushq   %rdx\n"
    "pushq   %rsi\n"
    "pushq   %rdi\n"
    "pushq   %r8\n"
    "pushq   %r9\n"
    "pushq   %r10\n"
    "pushq   %r11\n"
    "pushq   %rbp\n"
    "movq    %rsp, %rbp\n"
    "movq    shim_xsave_size(%rip), %rax\n"
    "subq    %rax, %rsp\n"
    "andq    $-64, %rsp\n"
    "xorl    %eax, %eax\n"
    "movq    %rax, 512(%rsp)\n"
    "movq    %rax, 520(%rsp)\n"
    "movq    %rax, 528(%rsp)\n"
    "movq    %rax, 536(%rsp)\n"
    "movq    %rax, 544(%rsp)\n"
    "movq    %rax, 552(%rsp)\n"
    "movq    %rax, 560(%rsp)\n"
    "movq    %rax, 568(%rsp)\n"
    "movl    $-1, %eax\n"
    "movl    $-1, %edx\n"
    "xsave64 (%rsp)\n"
    "call    shim_flush_now\n"
    "movl    $-1, %eax\n"
    "movl    $-1, %edx\n"
    "xrstor64 (%rsp)\n"
    "movq    %rbp, %rsp\n"
    "popq    %rbp\n"
    "popq    %r11\n"
    "popq    %r10\n"
    "popq    %r9\n"
    "popq    %r8\n"
    "popq    %rdi\n"
    "popq    %rsi\n"
    "popq    %rdx\n"
    "popq    %rcx\n"
    "popq    %rax\n"
    "popfq\n"
    "ret\n"
    ".size shim_flush_tramp_common, .-shim_flush_tramp_common\n");

static void xsave_init(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)))   /* OSXSAVE */
        return;
    if (!__get_cpuid_count(0xd, 0, &a, &b, &c, &d) || b < 576)
        return;
    shim_xsave_size = (uint64_t)b + 64;        /* room to align to 64 */
}

/* A mapping of size bytes below the code at lo, as near as is free. */
static uint8_t *stub_area(uintptr_t lo, size_t size)
{
    const uintptr_t step = (uintptr_t)2 << 20;
    for (uintptr_t k = 1; k <= 256; k++) {
        uintptr_t hint = (lo & ~(step - 1)) - k * step;
        if (hint < step || hint > lo)
            break;
        void *p = mmap((void *)hint, size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (p == (void *)hint)
            return p;
        if (p != MAP_FAILED)
            munmap(p, size);
    }
    return NULL;
}

static int fits_rel32(uintptr_t from_next, uintptr_t to)
{
    int64_t d = (int64_t)(to - from_next);
    return d >= INT32_MIN && d <= INT32_MAX;
}

static void put_rel32(uint8_t *at, uintptr_t from_next, uintptr_t to)
{
    int32_t r = (int32_t)(int64_t)(to - from_next);
    memcpy(at, &r, 4);
}

struct cand { uintptr_t pc; const struct fence *f; };

/* Patch one object's verified fences: jumps to stubs where it can, traps
 * elsewhere. */
static void install(const struct cand *c, size_t n, uintptr_t text_lo, int stubs)
{
    size_t nj = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        nj += c[i].f == &fences[0];
    long ps = sysconf(_SC_PAGESIZE);
    size_t size = (8 + nj * STUB + (size_t)ps - 1) & ~((size_t)ps - 1);
    uint8_t *area = stubs && nj && shim_xsave_size && !trap_only ?
                    stub_area(text_lo, size) : NULL;
    uintptr_t common = (uintptr_t)shim_flush_tramp_common;
    if (area)
        memcpy(area, &common, 8);
    uintptr_t *stub = calloc(n ? n : 1, sizeof *stub);     /* 0: it traps */
    if (!stub)
        dsm__fatal("out of private memory for the flush sites");
    for (size_t i = 0; area && i < n; i++) {
        if (c[i].f != &fences[0])
            continue;
        uint8_t *s = area + 8 + k * STUB;
        uintptr_t su = (uintptr_t)s, site = c[i].pc;
        if (!fits_rel32(site + 5, su) || !fits_rel32(su + 24, site + 6))
            continue;
        static const uint8_t lea_down[5] = { 0x48, 0x8d, 0x64, 0x24, 0x80 };
        static const uint8_t lea_up[8] = { 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00 };
        memset(s, 0xcc, STUB);
        memcpy(s, lea_down, 5);
        s[5] = 0xff;
        s[6] = 0x15;
        put_rel32(s + 7, su + 11, (uintptr_t)area);
        memcpy(s + 11, lea_up, 8);
        s[19] = 0xe9;
        put_rel32(s + 20, su + 24, site + 6);
        stub[i] = su;
        k++;
    }
    if (area && mprotect(area, size, PROT_READ | PROT_EXEC) != 0)
        dsm__fatal("cannot make the flush trampolines executable (%s)", strerror(errno));
    for (size_t i = 0; i < n; i++) {
        if (stub[i]) {
            uint8_t j[6] = { 0xe9, 0, 0, 0, 0, 0x90 };
            put_rel32(j + 1, c[i].pc + 5, stub[i]);
            write_code(c[i].pc, j, 6);
            continue;
        }
        write_code(c[i].pc, c[i].f->patch, c[i].f->len);
        add_site(c[i].pc, c[i].f->len);
    }
    free(stub);
}

/* Find and patch the fences of one object's executable segments. */
static void scan(const struct dl_phdr_info *info, int stubs)
{
    uintptr_t *starts = NULL, text_lo = 0;
    size_t nstarts = function_starts(info, &starts), n = 0, cap = 0;
    struct cand *c = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_filesz;
        if (!text_lo || lo < text_lo)
            text_lo = lo;
        for (size_t k = 0; k < sizeof fences / sizeof fences[0]; k++) {
            const struct fence *f = &fences[k];
            uintptr_t at = lo;
            const uint8_t *m;
            while (at < hi &&
                   (m = memmem((const void *)at, hi - at, f->bytes, f->len)) != NULL) {
                uintptr_t pc = (uintptr_t)m, from = lo;
                /* The last function start at or before pc, in this segment. */
                size_t a = 0, b = nstarts;
                while (a < b) {
                    size_t mid = (a + b) / 2;
                    if (starts[mid] <= pc) a = mid + 1; else b = mid;
                }
                if (a > 0 && starts[a - 1] >= lo)
                    from = starts[a - 1];
                if (is_instruction(from, pc, f)) {
                    if (n == cap) {
                        cap = cap ? 2 * cap : 16;
                        struct cand *nc = realloc(c, cap * sizeof *c);
                        if (!nc)
                            dsm__fatal("out of private memory for the flush sites");
                        c = nc;
                    }
                    c[n].pc = pc;
                    c[n++].f = f;
                }
                at = pc + 1;
            }
        }
    }
    if (n)
        install(c, n, text_lo, stubs);
    free(c);
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
        scan(info, 1);
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
        shim_flush_now();
        uc->uc_mcontext.gregs[REG_RIP] += len;
        return;
    }
    if (!shim_program_sigill(sig, si, ucv))
        dsm__pass_signal(&next_act, sig, si, ucv);  /* traps again and kills */
}

int shim_flush_trap_enabled(void)
{
    return enabled;
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
    /* Traps only: a stub area would take address space from the arena
     * where the ranks must load the next library at the same address
     * (dlarena.c); a dlopen on rank 0 alone changes it first. */
    scan(info, 0);
    publish();
    cs_close(&cs);
}

void shim_flush_trap_init(void)
{
    SHIM_REAL(sigaction);
    int mode = shim_setting_flush();
    if (mode == SHIM_FLUSH_OFF)
        return;
    trap_only = mode == SHIM_FLUSH_TRAP;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
        dsm__fatal("cannot start the disassembler (capstone) that finds the program's "
                   "flush instructions; run with OMPSHIM_FLUSH=off (ompshim(7))");
    xsave_init();
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
