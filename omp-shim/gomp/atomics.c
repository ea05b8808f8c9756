/*
 * atomics.c - the out-of-line atomic functions GCC calls under
 * -fno-inline-atomics (and that libatomic would otherwise provide):
 * __atomic_{load,store,exchange,compare_exchange}_N, __atomic_fetch_OP_N,
 * __atomic_OP_fetch_N for N = 1, 2, 4, 8, the generic size_t forms, and the
 * __sync_* functions.
 *
 * On an address in the DSM region the operation runs at the page's home
 * (dsm__atomic), which is the only place it can be atomic across processes.
 * Anywhere else it is an ordinary atomic of this process.  This file is
 * compiled with inline atomics, so the builtins below are instructions, not
 * calls back into these functions.  (GCC 12 on x86-64 expands __sync_*
 * builtins inline even under -fno-inline-atomics; the __sync_* functions are
 * here for code built otherwise.)
 *
 * Threads: any.
 */
#include <stdbool.h>
#include <string.h>

#include "shim.h"

#define SEQ __ATOMIC_SEQ_CST

static inline int shared(const volatile void *p)
{
    return dsm_rt_running() && dsm_rt_in_region((const void *)p);
}

#define DEFINE_SIZE(N, T)                                                          \
SHIM_EXPORT T shim_load_##N(const volatile void *p, int mo) __asm__("__atomic_load_" #N); \
T shim_load_##N(const volatile void *p, int mo)                                    \
{                                                                                  \
    (void)mo;                                                                      \
    if (shared(p))                                                                 \
        return (T)dsm__atomic((void *)p, DSM_AOP_LOAD, N, 0, 0, 0, 0, NULL);       \
    return __atomic_load_n((const volatile T *)p, SEQ);                            \
}                                                                                  \
SHIM_EXPORT void shim_store_##N(volatile void *p, T v, int mo) __asm__("__atomic_store_" #N); \
void shim_store_##N(volatile void *p, T v, int mo)                                 \
{                                                                                  \
    (void)mo;                                                                      \
    if (shared(p))                                                                 \
        dsm__atomic((void *)p, DSM_AOP_STORE, N, (uint64_t)v, 0, 0, 0, NULL);      \
    else                                                                           \
        __atomic_store_n((volatile T *)p, v, SEQ);                                 \
}                                                                                  \
SHIM_EXPORT T shim_xchg_##N(volatile void *p, T v, int mo) __asm__("__atomic_exchange_" #N); \
T shim_xchg_##N(volatile void *p, T v, int mo)                                     \
{                                                                                  \
    (void)mo;                                                                      \
    if (shared(p))                                                                 \
        return (T)dsm__atomic((void *)p, DSM_AOP_XCHG, N, (uint64_t)v, 0, 0, 0, NULL); \
    return __atomic_exchange_n((volatile T *)p, v, SEQ);                           \
}                                                                                  \
SHIM_EXPORT bool shim_cas_##N(volatile void *p, void *expected, T desired, bool weak, \
                              int smo, int fmo) __asm__("__atomic_compare_exchange_" #N); \
bool shim_cas_##N(volatile void *p, void *expected, T desired, bool weak, int smo, int fmo) \
{                                                                                  \
    (void)weak; (void)smo; (void)fmo;                                              \
    if (shared(p)) {                                                               \
        T e;                                                                       \
        uint64_t ok = 0;                                                           \
        memcpy(&e, expected, N);                                                   \
        T old = (T)dsm__atomic((void *)p, DSM_AOP_CAS, N, (uint64_t)desired,       \
                               (uint64_t)e, 0, 0, &ok);                            \
        if (!ok)                                                                   \
            memcpy(expected, &old, N);                                             \
        return ok != 0;                                                            \
    }                                                                              \
    return __atomic_compare_exchange_n((volatile T *)p, (T *)expected, desired, 0, SEQ, SEQ); \
}                                                                                  \
DEFINE_OP(N, T, add, ADD, +)                                                       \
DEFINE_OP(N, T, sub, SUB, -)                                                       \
DEFINE_OP(N, T, and, AND, &)                                                       \
DEFINE_OP(N, T, or, OR, |)                                                         \
DEFINE_OP(N, T, xor, XOR, ^)                                                       \
DEFINE_NAND(N, T)                                                                  \
SHIM_EXPORT T shim_sync_vcas_##N(volatile void *p, T o, T n) __asm__("__sync_val_compare_and_swap_" #N); \
T shim_sync_vcas_##N(volatile void *p, T o, T n)                                   \
{                                                                                  \
    T e = o;                                                                       \
    shim_cas_##N(p, &e, n, 0, SEQ, SEQ);                                           \
    return e;                                                                      \
}                                                                                  \
SHIM_EXPORT bool shim_sync_bcas_##N(volatile void *p, T o, T n) __asm__("__sync_bool_compare_and_swap_" #N); \
bool shim_sync_bcas_##N(volatile void *p, T o, T n)                                \
{                                                                                  \
    T e = o;                                                                       \
    return shim_cas_##N(p, &e, n, 0, SEQ, SEQ);                                    \
}                                                                                  \
SHIM_EXPORT T shim_sync_tas_##N(volatile void *p, T v) __asm__("__sync_lock_test_and_set_" #N); \
T shim_sync_tas_##N(volatile void *p, T v) { return shim_xchg_##N(p, v, SEQ); }    \
SHIM_EXPORT void shim_sync_rel_##N(volatile void *p) __asm__("__sync_lock_release_" #N); \
void shim_sync_rel_##N(volatile void *p) { shim_store_##N(p, 0, SEQ); }

#define DEFINE_OP(N, T, name, OP, op)                                              \
SHIM_EXPORT T shim_fetch_##name##_##N(volatile void *p, T v, int mo)               \
    __asm__("__atomic_fetch_" #name "_" #N);                                       \
T shim_fetch_##name##_##N(volatile void *p, T v, int mo)                           \
{                                                                                  \
    (void)mo;                                                                      \
    if (shared(p))                                                                 \
        return (T)dsm__atomic((void *)p, DSM_AOP_FETCH_##OP, N, (uint64_t)v, 0, 0, 0, NULL); \
    return __atomic_fetch_##name((volatile T *)p, v, SEQ);                         \
}                                                                                  \
SHIM_EXPORT T shim_##name##_fetch_##N(volatile void *p, T v, int mo)               \
    __asm__("__atomic_" #name "_fetch_" #N);                                       \
T shim_##name##_fetch_##N(volatile void *p, T v, int mo)                           \
{ return (T)(shim_fetch_##name##_##N(p, v, mo) op v); }                            \
SHIM_EXPORT T shim_sync_fetch_##name##_##N(volatile void *p, T v)                  \
    __asm__("__sync_fetch_and_" #name "_" #N);                                     \
T shim_sync_fetch_##name##_##N(volatile void *p, T v)                              \
{ return shim_fetch_##name##_##N(p, v, SEQ); }                                     \
SHIM_EXPORT T shim_sync_##name##_fetch_##N(volatile void *p, T v)                  \
    __asm__("__sync_" #name "_and_fetch_" #N);                                     \
T shim_sync_##name##_fetch_##N(volatile void *p, T v)                              \
{ return (T)(shim_fetch_##name##_##N(p, v, SEQ) op v); }

#define DEFINE_NAND(N, T)                                                          \
SHIM_EXPORT T shim_fetch_nand_##N(volatile void *p, T v, int mo)                   \
    __asm__("__atomic_fetch_nand_" #N);                                            \
T shim_fetch_nand_##N(volatile void *p, T v, int mo)                               \
{                                                                                  \
    (void)mo;                                                                      \
    if (shared(p))                                                                 \
        return (T)dsm__atomic((void *)p, DSM_AOP_FETCH_NAND, N, (uint64_t)v, 0, 0, 0, NULL); \
    return __atomic_fetch_nand((volatile T *)p, v, SEQ);                           \
}                                                                                  \
SHIM_EXPORT T shim_nand_fetch_##N(volatile void *p, T v, int mo)                   \
    __asm__("__atomic_nand_fetch_" #N);                                            \
T shim_nand_fetch_##N(volatile void *p, T v, int mo)                               \
{ return (T)~(shim_fetch_nand_##N(p, v, mo) & v); }                                \
SHIM_EXPORT T shim_sync_fetch_nand_##N(volatile void *p, T v)                      \
    __asm__("__sync_fetch_and_nand_" #N);                                          \
T shim_sync_fetch_nand_##N(volatile void *p, T v) { return shim_fetch_nand_##N(p, v, SEQ); } \
SHIM_EXPORT T shim_sync_nand_fetch_##N(volatile void *p, T v)                      \
    __asm__("__sync_nand_and_fetch_" #N);                                          \
T shim_sync_nand_fetch_##N(volatile void *p, T v)                                  \
{ return (T)~(shim_fetch_nand_##N(p, v, SEQ) & v); }

DEFINE_SIZE(1, uint8_t)
DEFINE_SIZE(2, uint16_t)
DEFINE_SIZE(4, uint32_t)
DEFINE_SIZE(8, uint64_t)

SHIM_EXPORT void shim_sync_synchronize(void) __asm__("__sync_synchronize");
void shim_sync_synchronize(void)
{
    /* A flush, as the inline form the shim traps (flush_trap.c), when the
     * program calls it (never for a runtime library's thread). */
    if (shim_code_is_program(__builtin_return_address(0)))
        shim_flush_now();
    else
        __atomic_thread_fence(SEQ);
}

/* ---- generic forms: sizes 1, 2, 4 and 8 ---- */

static void bad_size(const char *fn, size_t n)
{
    dsm__fatal("%s on an object of %zu bytes: the OpenMP shim supports atomic "
               "objects of 1, 2, 4 and 8 bytes", fn, n);
}

SHIM_EXPORT void shim_load(size_t n, void *p, void *ret, int mo) __asm__("__atomic_load");
void shim_load(size_t n, void *p, void *ret, int mo)
{
    switch (n) {
    case 1: { uint8_t v = shim_load_1(p, mo); memcpy(ret, &v, n); return; }
    case 2: { uint16_t v = shim_load_2(p, mo); memcpy(ret, &v, n); return; }
    case 4: { uint32_t v = shim_load_4(p, mo); memcpy(ret, &v, n); return; }
    case 8: { uint64_t v = shim_load_8(p, mo); memcpy(ret, &v, n); return; }
    }
    bad_size("__atomic_load", n);
}

SHIM_EXPORT void shim_store(size_t n, void *p, void *val, int mo) __asm__("__atomic_store");
void shim_store(size_t n, void *p, void *val, int mo)
{
    switch (n) {
    case 1: { uint8_t v; memcpy(&v, val, n); shim_store_1(p, v, mo); return; }
    case 2: { uint16_t v; memcpy(&v, val, n); shim_store_2(p, v, mo); return; }
    case 4: { uint32_t v; memcpy(&v, val, n); shim_store_4(p, v, mo); return; }
    case 8: { uint64_t v; memcpy(&v, val, n); shim_store_8(p, v, mo); return; }
    }
    bad_size("__atomic_store", n);
}

SHIM_EXPORT void shim_exchange(size_t n, void *p, void *val, void *ret, int mo)
    __asm__("__atomic_exchange");
void shim_exchange(size_t n, void *p, void *val, void *ret, int mo)
{
    switch (n) {
    case 1: { uint8_t v; memcpy(&v, val, n); v = shim_xchg_1(p, v, mo); memcpy(ret, &v, n); return; }
    case 2: { uint16_t v; memcpy(&v, val, n); v = shim_xchg_2(p, v, mo); memcpy(ret, &v, n); return; }
    case 4: { uint32_t v; memcpy(&v, val, n); v = shim_xchg_4(p, v, mo); memcpy(ret, &v, n); return; }
    case 8: { uint64_t v; memcpy(&v, val, n); v = shim_xchg_8(p, v, mo); memcpy(ret, &v, n); return; }
    }
    bad_size("__atomic_exchange", n);
}

SHIM_EXPORT bool shim_compare_exchange(size_t n, void *p, void *expected, void *desired,
                                       int smo, int fmo) __asm__("__atomic_compare_exchange");
bool shim_compare_exchange(size_t n, void *p, void *expected, void *desired, int smo, int fmo)
{
    switch (n) {
    case 1: { uint8_t v; memcpy(&v, desired, n); return shim_cas_1(p, expected, v, 0, smo, fmo); }
    case 2: { uint16_t v; memcpy(&v, desired, n); return shim_cas_2(p, expected, v, 0, smo, fmo); }
    case 4: { uint32_t v; memcpy(&v, desired, n); return shim_cas_4(p, expected, v, 0, smo, fmo); }
    case 8: { uint64_t v; memcpy(&v, desired, n); return shim_cas_8(p, expected, v, 0, smo, fmo); }
    }
    bad_size("__atomic_compare_exchange", n);
    return false;
}
