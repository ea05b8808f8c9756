/*
 * inline_atomics.c - the program's inline atomic instructions on shared
 * memory, run at the page's home.
 *
 * GCC compiles `#pragma omp atomic`, the reduction of a scalar and the
 * __atomic and __sync builtins into lock-prefixed instructions (lock add,
 * lock xadd, lock cmpxchg loops, xchg) unless told -fno-inline-atomics, as
 * dsmcc does.  In a binary built with plain gcc -fopenmp they act on the
 * rank's own copy of the page, and two ranks' updates of one variable in
 * one interval collide at the home: one is lost (pngquant's reduction of a
 * double, aaphoto's atomic sums).  But such an instruction on a page that
 * this rank may not write (a copy, or no copy) faults first.  Here a
 * SIGSEGV handler in front of libsigsegv's looks at the faulting
 * instruction: if it is one of the atomic read-modify-write instructions
 * below, on an aligned word of a page homed elsewhere, it runs the
 * operation at the home (dsm__atomic, as the shim's out-of-line __atomic_*
 * functions do), writes the registers and flags the instruction would
 * have written, and steps over it; the page stays as it was, so the next
 * one faults too.  Only instructions of the program's code (the executable
 * and the libraries it loads, applibs.c) are run this way: the shim's own
 * `lock add $0` (syscalls.c) is there to make a page writable here.  Any
 * other fault goes on to libsigsegv and libdsm.
 *
 * Decoded: [lock] add, or, and, sub, xor (register or immediate source),
 * inc, dec, not, neg, xadd, cmpxchg, bts, btr, btc (immediate, or a
 * register bit number inside the operand), and xchg, on 1, 2, 4 or 8
 * bytes.  Not: cmpxchg8b/16b, adc, sbb, fs/gs-relative operands.
 * What it cannot help: an atomic on a page this rank has already made
 * writable in the interval (it wrote other data there) runs on the copy.
 * The first write fault that makes such a page writable, on a page where
 * atomics ran at the home before, gets a warning (once a process).
 * (Running the plain stores of such pages at the home too was tried: the
 * page of pngquant that needs it takes tens of thousands of stores an
 * interval, and the run took 44-60 s instead of 3.)
 * OMPSHIM_INLINE_ATOMICS=off leaves every fault to libdsm.
 *
 * Threads: the handler runs in whichever thread faulted.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "shim.h"

enum kind { K_ADD = 1, K_OR, K_AND, K_SUB, K_XOR, K_INC, K_DEC, K_NOT, K_NEG, K_XADD,
            K_CMPXCHG, K_XCHG, K_BTS, K_BTR, K_BTC };

struct insn {
    int len;            /* bytes, to step over */
    int size;           /* operand bytes */
    int kind;
    int has_reg;        /* register operand (source or destination) */
    int reg;            /* its number, 0-15 (ModRM.reg with REX.R) */
    int rex;            /* a REX prefix: the 8-bit registers are spl..dil */
    int has_imm;
    uint64_t imm;       /* sign-extended to 64 bits */
};

static const int greg_of[16] = { REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP,
                                 REG_RSI, REG_RDI, REG_R8, REG_R9, REG_R10, REG_R11,
                                 REG_R12, REG_R13, REG_R14, REG_R15 };

static const int alu_kind[8] = { K_ADD, K_OR, 0, 0, K_AND, K_SUB, K_XOR, 0 };

static int64_t sext(uint64_t v, int bytes)
{
    int sh = 64 - 8 * bytes;
    return (int64_t)(v << sh) >> sh;
}

/* 1: p holds an instruction this file runs, described in *in. */
static int decode(const uint8_t *p, struct insn *in)
{
    int i = 0, lock = 0, o16 = 0, rex = 0, imm_bytes = 0, byte_op = 0, modrm_op;
    memset(in, 0, sizeof *in);
    for (;; i++) {
        uint8_t b = p[i];
        if (i > 4)
            return 0;
        if (b == 0xf0)
            lock = 1;
        else if (b == 0x66)
            o16 = 1;
        else if (b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x3e || b == 0x26 || b == 0x36)
            continue;           /* lock elision hints, ignored segments */
        else
            break;
    }
    if ((p[i] & 0xf0) == 0x40)
        rex = p[i++];
    uint8_t op = p[i++];
    if (op == 0x0f) {
        uint8_t op2 = p[i++];
        modrm_op = (p[i] >> 3) & 7;
        switch (op2) {
        case 0xb0: case 0xb1: in->kind = K_CMPXCHG; byte_op = op2 == 0xb0; in->has_reg = 1; break;
        case 0xc0: case 0xc1: in->kind = K_XADD; byte_op = op2 == 0xc0; in->has_reg = 1; break;
        case 0xab: in->kind = K_BTS; in->has_reg = 1; break;
        case 0xb3: in->kind = K_BTR; in->has_reg = 1; break;
        case 0xbb: in->kind = K_BTC; in->has_reg = 1; break;
        case 0xba:
            if (modrm_op < 5)
                return 0;
            in->kind = modrm_op == 5 ? K_BTS : modrm_op == 6 ? K_BTR : K_BTC;
            imm_bytes = 1;
            break;
        default:
            return 0;
        }
        if (!lock)
            return 0;
    } else {
        modrm_op = (p[i] >> 3) & 7;
        switch (op) {
        case 0x00: case 0x01: case 0x08: case 0x09: case 0x20: case 0x21:
        case 0x28: case 0x29: case 0x30: case 0x31:
            in->kind = alu_kind[op >> 3];
            byte_op = !(op & 1);
            in->has_reg = 1;
            break;
        case 0x80: case 0x81: case 0x83:
            if (!(in->kind = alu_kind[modrm_op]))
                return 0;
            byte_op = op == 0x80;
            imm_bytes = op == 0x81 ? -1 : 1;
            break;
        case 0x86: case 0x87:
            in->kind = K_XCHG;      /* atomic without a lock prefix */
            byte_op = op == 0x86;
            in->has_reg = 1;
            lock = 1;
            break;
        case 0xf6: case 0xf7:
            if (modrm_op != 2 && modrm_op != 3)
                return 0;
            in->kind = modrm_op == 2 ? K_NOT : K_NEG;
            byte_op = op == 0xf6;
            break;
        case 0xfe: case 0xff:
            if (modrm_op > 1)
                return 0;
            in->kind = modrm_op == 0 ? K_INC : K_DEC;
            byte_op = op == 0xfe;
            break;
        default:
            return 0;
        }
        if (!lock)
            return 0;
    }
    uint8_t modrm = p[i++];
    int mod = modrm >> 6, rm = modrm & 7;
    if (mod == 3)
        return 0;
    if (rm == 4) {
        uint8_t sib = p[i++];
        if (mod == 0 && (sib & 7) == 5)
            i += 4;
    }
    if (mod == 1)
        i += 1;
    else if (mod == 2 || (mod == 0 && rm == 5))
        i += 4;
    in->size = byte_op ? 1 : (rex & 8) ? 8 : o16 ? 2 : 4;
    if (imm_bytes == -1)
        imm_bytes = in->size == 2 ? 2 : 4;
    if (imm_bytes) {
        uint64_t v = 0;
        memcpy(&v, p + i, (size_t)imm_bytes);
        in->imm = (uint64_t)sext(v, imm_bytes);
        in->has_imm = 1;
        i += imm_bytes;
    }
    in->reg = ((modrm >> 3) & 7) | ((rex & 4) << 1);
    in->rex = rex != 0;
    in->len = i;
    return 1;
}

static uint64_t mask_of(int size)
{
    return size == 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * size)) - 1;
}

static uint64_t reg_get(const greg_t *g, const struct insn *in)
{
    if (in->size == 1 && !in->rex && in->reg >= 4 && in->reg < 8)
        return ((uint64_t)g[greg_of[in->reg - 4]] >> 8) & 0xff;   /* ah, ch, dh, bh */
    return (uint64_t)g[greg_of[in->reg]] & mask_of(in->size);
}

/* As the processor writes a register: 4 bytes clear the upper half, 1 and 2
 * keep the rest. */
static void reg_put(greg_t *g, int reg, int high8, int size, uint64_t v)
{
    uint64_t *r = (uint64_t *)&g[greg_of[reg]];
    if (high8)
        *r = (*r & ~(uint64_t)0xff00) | ((v & 0xff) << 8);
    else if (size == 4)
        *r = v & 0xffffffffu;
    else
        *r = (*r & ~mask_of(size)) | (v & mask_of(size));
}

#define F_CF 0x1u
#define F_PF 0x4u
#define F_AF 0x10u
#define F_ZF 0x40u
#define F_SF 0x80u
#define F_OF 0x800u
#define F_ARITH (F_CF | F_PF | F_AF | F_ZF | F_SF | F_OF)

static unsigned zsp(uint64_t res, int size)
{
    unsigned f = 0;
    res &= mask_of(size);
    if (!res)
        f |= F_ZF;
    if (res >> (8 * size - 1))
        f |= F_SF;
    if (!__builtin_parity((unsigned)(res & 0xff)))
        f |= F_PF;
    return f;
}

/* Flags of a + b and a - b on size bytes. */
static unsigned add_flags(uint64_t a, uint64_t b, int size)
{
    uint64_t m = mask_of(size), r = (a + b) & m;
    int top = 8 * size - 1;
    a &= m;
    b &= m;
    return zsp(r, size) | (r < a ? F_CF : 0) | (((a ^ b ^ r) & 0x10) ? F_AF : 0) |
           ((((a ^ r) & (b ^ r)) >> top) & 1 ? F_OF : 0);
}

static unsigned sub_flags(uint64_t a, uint64_t b, int size)
{
    uint64_t m = mask_of(size), r = (a - b) & m;
    int top = 8 * size - 1;
    a &= m;
    b &= m;
    return zsp(r, size) | (a < b ? F_CF : 0) | (((a ^ b ^ r) & 0x10) ? F_AF : 0) |
           ((((a ^ b) & (a ^ r)) >> top) & 1 ? F_OF : 0);
}

static void set_flags(greg_t *g, unsigned which, unsigned f)
{
    g[REG_EFL] = (greg_t)(((uint64_t)g[REG_EFL] & ~(uint64_t)which) | (f & which));
}

/* Runs a read-modify-write whose new value is a function of the old, with
 * compare-and-swap at the home. */
static uint64_t cas_loop(void *addr, int size, int kind)
{
    uint64_t old = dsm__atomic(addr, DSM_AOP_LOAD, (unsigned)size, 0, 0, 0, 0, NULL), ok = 0;
    for (;;) {
        uint64_t nv = (kind == K_NOT ? ~old : (uint64_t)0 - old) & mask_of(size);
        uint64_t seen = dsm__atomic(addr, DSM_AOP_CAS, (unsigned)size, nv, old, 0, 0, &ok);
        if (ok)
            return old;
        old = seen;
    }
}

/* 1: the instruction at the context's rip was run at the home. */
static int emulate(void *addr, ucontext_t *uc)
{
    greg_t *g = uc->uc_mcontext.gregs;
    const uint8_t *pc = (const uint8_t *)g[REG_RIP];
    struct insn in;
    uint64_t old, src = 0, r2 = 0;

    /* The program's code only: the shim's own "lock add $0" (syscalls.c)
     * is there to make a page writable here before the kernel writes it. */
    if (!shim_code_is_program(pc) || !decode(pc, &in))
        return 0;
    if ((uintptr_t)addr % (uintptr_t)in.size)
        return 0;                   /* dsm__atomic wants it aligned: leave it */
    if (in.has_imm)
        src = in.imm & mask_of(in.size);
    else if (in.has_reg)
        src = reg_get(g, &in);
    int high8 = in.size == 1 && !in.rex && in.reg >= 4 && in.reg < 8;
    int dreg = high8 ? in.reg - 4 : in.reg;
    unsigned sz = (unsigned)in.size;

    switch (in.kind) {
    case K_ADD:
        old = dsm__atomic(addr, DSM_AOP_FETCH_ADD, sz, src, 0, 0, 0, NULL);
        set_flags(g, F_ARITH, add_flags(old, src, in.size));
        break;
    case K_SUB:
        old = dsm__atomic(addr, DSM_AOP_FETCH_SUB, sz, src, 0, 0, 0, NULL);
        set_flags(g, F_ARITH, sub_flags(old, src, in.size));
        break;
    case K_AND: case K_OR: case K_XOR: {
        enum dsm_aop op = in.kind == K_AND ? DSM_AOP_FETCH_AND
                        : in.kind == K_OR ? DSM_AOP_FETCH_OR : DSM_AOP_FETCH_XOR;
        old = dsm__atomic(addr, op, sz, src, 0, 0, 0, NULL);
        uint64_t res = in.kind == K_AND ? old & src : in.kind == K_OR ? old | src : old ^ src;
        set_flags(g, F_ARITH, zsp(res, in.size));
        break;
    }
    case K_INC:
        old = dsm__atomic(addr, DSM_AOP_FETCH_ADD, sz, 1, 0, 0, 0, NULL);
        set_flags(g, F_ARITH & ~F_CF, add_flags(old, 1, in.size));
        break;
    case K_DEC:
        old = dsm__atomic(addr, DSM_AOP_FETCH_SUB, sz, 1, 0, 0, 0, NULL);
        set_flags(g, F_ARITH & ~F_CF, sub_flags(old, 1, in.size));
        break;
    case K_NOT:
        cas_loop(addr, in.size, K_NOT);
        break;
    case K_NEG:
        old = cas_loop(addr, in.size, K_NEG);
        set_flags(g, F_ARITH, sub_flags(0, old, in.size));
        break;
    case K_XADD:
        old = dsm__atomic(addr, DSM_AOP_FETCH_ADD, sz, src, 0, 0, 0, NULL);
        set_flags(g, F_ARITH, add_flags(old, src, in.size));
        reg_put(g, dreg, high8, in.size, old);
        break;
    case K_XCHG:
        old = dsm__atomic(addr, DSM_AOP_XCHG, sz, src, 0, 0, 0, NULL);
        reg_put(g, dreg, high8, in.size, old);
        break;
    case K_CMPXCHG: {
        uint64_t want = (uint64_t)g[REG_RAX] & mask_of(in.size);
        old = dsm__atomic(addr, DSM_AOP_CAS, sz, src, want, 0, 0, &r2);
        set_flags(g, F_ARITH, sub_flags(want, old, in.size));
        if (!r2)
            reg_put(g, 0, 0, in.size, old);
        break;
    }
    case K_BTS: case K_BTR: case K_BTC: {
        int64_t bit = in.has_imm ? (int64_t)(in.imm % (uint64_t)(8 * in.size))
                                 : sext(src, in.size);
        if (bit < 0 || bit >= 8 * in.size)
            return 0;               /* a bit outside the operand: another word */
        uint64_t m = (uint64_t)1 << bit;
        enum dsm_aop op = in.kind == K_BTS ? DSM_AOP_FETCH_OR
                        : in.kind == K_BTR ? DSM_AOP_FETCH_AND : DSM_AOP_FETCH_XOR;
        old = dsm__atomic(addr, op, sz, in.kind == K_BTR ? ~m & mask_of(in.size) : m, 0, 0,
                          0, NULL);
        set_flags(g, F_CF, (old >> bit) & 1 ? F_CF : 0);
        break;
    }
    default:
        return 0;
    }
    g[REG_RIP] += in.len;
    return 1;
}

static struct sigaction next_act;   /* libsigsegv's */
static int enabled;
static unsigned char *atomic_pages;  /* a bit a page: an atomic ran at its home */
static size_t atomic_npages;
static int warned;

static void note_atomic_page(size_t p)
{
    if (p < atomic_npages)
        __atomic_fetch_or(&atomic_pages[p / 8], (unsigned char)(1u << (p % 8)),
                          __ATOMIC_RELAXED);
}

/* A write fault (not an atomic run here) on a page where atomics ran at the
 * home, which libdsm will make writable: say once that this rank's atomics
 * there now run on its copy.  Async-signal-safe: no stdio. */
static void maybe_warn(size_t p, const void *addr, const ucontext_t *uc)
{
    if (p >= atomic_npages || !(atomic_pages[p / 8] & (1u << (p % 8))) ||
        !(uc->uc_mcontext.gregs[REG_ERR] & 2) ||
        __atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        return;
    struct dsm_sbuf sb;
    sb.n = 0;
    dsm__sb_str(&sb, "libompshim[rank ");
    dsm__sb_u(&sb, (uint64_t)shim.rank);
    dsm__sb_str(&sb, "]: warning: a plain store to shared memory at ");
    dsm__sb_hex(&sb, (uintptr_t)addr);
    dsm__sb_str(&sb, ", on a page whose inline atomic instructions ran at the home: "
                "until the next barrier this rank's atomics on that page run on its "
                "copy, and updates of other ranks may be lost; keep atomic variables "
                "apart from other data, or run with DSM_CHECK=races to see losses "
                "(ompshim(7), ATOMICS)");
    dsm__sb_end(&sb);
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
    void *addr = si->si_addr;
    if (enabled && shim.active && dsm_rt_in_region(addr)) {
        size_t p = dsm_rt_page_of(addr);
        if (dsm_rt_page_homed_elsewhere(p)) {
            if (emulate(addr, ucv)) {
                note_atomic_page(p);
                return;
            }
            maybe_warn(p, addr, ucv);
        }
    }
    dsm__pass_signal(&next_act, sig, si, ucv);  /* libsigsegv's */
}

void shim_inline_atomics_init(void)
{
    SHIM_REAL(sigaction);
    if (!shim_setting_inline_atomics())
        return;
    struct sigaction sa;
    atomic_npages = dsm_rt_npages();
    atomic_pages = calloc(atomic_npages / 8 + 1, 1);
    if (!atomic_pages || real_sigaction(SIGSEGV, NULL, &next_act) != 0)
        return;
    sa = next_act;
    sa.sa_sigaction = on_segv;
    sa.sa_flags |= SA_SIGINFO;
    if (real_sigaction(SIGSEGV, &sa, NULL) == 0)
        enabled = 1;
}
