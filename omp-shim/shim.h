/*
 * shim.h - the OpenMP shim's internal interface (the omp-shim sources).
 *
 * The shim is linked into libompshim.so together with libdsm's core; of
 * libdsm it uses the public API (dsm.h) and the interface libdsm gives a
 * runtime on top of it (dsm_runtime.h: internal functions, accessors of its
 * state, the hooks), nothing else of libdsm.  Nothing here is exported: the
 * exported names are the libgomp ABI (libompshim.map).
 */
#ifndef OMPSHIM_SHIM_H
#define OMPSHIM_SHIM_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "dsm.h"
#include "dsm_runtime.h"

#define SHIM_HIDDEN __attribute__((visibility("hidden")))
#define SHIM_EXPORT __attribute__((visibility("default")))

#define SHIM_MAX_LOCAL 64       /* OpenMP threads on one rank */
#define SHIM_WS_SLOTS  64       /* work-share counters, reused round-robin */
#define SHIM_MAX_PROG_LIBS 96   /* libraries whose allocations are shared */
/* Room in the DSM for the globals of libraries the program loads with dlopen. */
#define SHIM_DLOPEN_DATA_SPARE ((size_t)32 << 20)
#define SHIM_MAX_KEYS 128       /* pthread keys made into shared variables (once_keys.c) */

/* DSM lock ids the shim reserves; omp locks and named criticals get ids from
 * SHIM_LOCK_FIRST_FREE up (a counter at node 0). */
enum { SHIM_LOCK_CRITICAL = 0, SHIM_LOCK_ATOMIC, SHIM_LOCK_ORDERED,
       SHIM_LOCK_ONCE,                 /* pthread_once: "done" written under it */
       SHIM_LOCK_HASHED = 8,           /* 8..263: named criticals outside the DSM */
       SHIM_LOCK_TASKS = 264,          /* 264..327: rank r's tasks (task.c) */
       SHIM_LOCK_FIRST_FREE = 328 };

/* Schedules, as libgomp numbers them (GOMP_loop_start's sched argument). */
enum { SHIM_SCHED_RUNTIME = 0, SHIM_SCHED_STATIC = 1, SHIM_SCHED_DYNAMIC = 2,
       SHIM_SCHED_GUIDED = 3, SHIM_SCHED_AUTO = 4 };
#define SHIM_SCHED_MONOTONIC 0x80000000u

/* A loop as the runtime sees it: n iterations 0..n-1, mapped back to the
 * program's long or unsigned long long induction values. */
struct shim_loop_desc {
    int sched;                  /* SHIM_SCHED_* (never RUNTIME/AUTO here) */
    int ull, up;                /* unsigned long long loop; counting up */
    long lstart, lincr;
    unsigned long long ustart, uincr;
    uint64_t n, chunk;          /* chunk 0: static without a chunk size */
};

/* The shared control block: one page in the DSM, homed at node 0, written
 * by rank 0 before a fork and read by everyone after it. */
struct shim_ctl {
    uint64_t seq;               /* parallel regions forked so far */
    void (*fn)(void *);
    void *data;
    uint32_t nthreads;          /* team size */
    uint32_t tpr;               /* threads per rank in this team */
    int32_t exit_now, status;
    int32_t run_sched;          /* run-sched-var at the fork */
    int32_t ws_kind;            /* combined constructs: 0, 1 loop, 2 sections */
    uint64_t run_chunk;
    struct shim_loop_desc loop; /* ws_kind 1 */
    uint64_t sections;          /* ws_kind 2 */
    void *copy_ptr;             /* single copyprivate: the winner's data */
    uint64_t next_lock;         /* next free DSM lock id (atomic at node 0) */
    int32_t icv_nthreads;       /* nthreads-var the team inherits */
    int32_t tasks_on;           /* the program creates tasks (task.c) */
    /* dsm_bcast from sequential code (bcast.c): set with seq, instead of
     * a region. */
    int32_t bcast, bcast_root;
    void *bcast_addr;
    uint64_t bcast_len;
    /* A library the program loaded with dlopen (dlopen.c): set with seq;
     * its description, in rank 0's part of the heap. */
    int32_t dlopen, pad2;
    const void *dl_desc;
    /* GOMP_parallel_reductions: the region's task reduction descriptor
     * (task_reduction.c), else NULL. */
    void *task_red;
    /* pthread keys whose variable is shared (once_keys.c): the next index
     * (atomic at node 0) and each one's destructor. */
    uint64_t next_key;
    uint64_t key_dtor[SHIM_MAX_KEYS];
};
/* What a fork carries: every field up to the pthread keys. */
#define SHIM_FORK_BYTES offsetof(struct shim_ctl, next_key)
_Static_assert(SHIM_FORK_BYTES <= DSM_BARRIER_CARRY_MAX, "a fork's fields fit a release");
/* What a join carries: the region's number (seq).  Its length tells a join
 * from a fork on the other ranks, and a team barrier carries nothing. */
#define SHIM_JOIN_BYTES sizeof(uint64_t)
_Static_assert(SHIM_JOIN_BYTES != SHIM_FORK_BYTES, "a join's carry differs from a fork's");
/* The control block has the first page of its two (start.c). */
_Static_assert(sizeof(struct shim_ctl) <= 4096, "shim_ctl fits the smallest DSM page");

/* Per OpenMP thread. */
struct shim_thr {
    int num, size;              /* omp_get_thread_num / omp_get_num_threads */
    int level, active_level;
    int local;                  /* index among this rank's threads */
    int uid;                    /* unique in the job: rank * SHIM_MAX_LOCAL + local + 1 */
    uint64_t seq;               /* region this thread is in */
    uint32_t ws;                /* work-share constructs met in the region */
    /* current loop */
    struct shim_loop_desc lp;
    uint64_t gen;               /* its work-share generation */
    int slot, ordered;
    uint64_t next;              /* static: next chunk index */
    uint64_t local_pos;         /* team of one: next iteration */
    uint64_t cur_s, cur_e;      /* current chunk (ordered) */
    int turn;                   /* holds the ordered token */
    int icv_nthreads;           /* set inside a region: this thread's nthreads-var */
    int program_thread;         /* started by the program (pthread_create): its
                                 * regions have one thread (team.c) */
};

struct shim_shared_ws { uint64_t gen, pos; };

/* ---- dsm_settings.c: the DSM_* variables the shim reads itself ---- */
#define SHIM_DEFAULT_STACK_SIZE ((size_t)8 << 20)     /* 8 MiB */
struct shim_dsm_settings {
    unsigned threads_per_rank;  /* DSM_THREADS_PER_RANK, 1 to SHIM_MAX_LOCAL */
    size_t stack_size;          /* DSM_STACK_SIZE, 64K to 4G */
};
/* Their names, NULL-terminated (struct dsm_runtime_params's env_names). */
extern const char *const shim_dsm_settings_names[] SHIM_HIDDEN;
/* Fill s from envp (environ-style; NULL: none).  Returns 0, or -DSM_EINVAL
 * with the whole message (what is wrong, what to do) in err. */
SHIM_HIDDEN int shim_dsm_settings_parse(struct shim_dsm_settings *s, char *const *envp,
                                        char *err, size_t errlen);

/* ---- start.c ---- */
struct shim_global {
    int active;                 /* the shim runs the program across ranks */
    int rank, nodes, tpr;       /* tpr: DSM_THREADS_PER_RANK (dsm_settings.c) */
    uintptr_t text_lo, text_hi; /* the executable's code */
    /* The code of the libraries the program needs (applibs.c). */
    int nprog_libs;
    uintptr_t prog_lib_lo[SHIM_MAX_PROG_LIBS], prog_lib_hi[SHIM_MAX_PROG_LIBS];
    const char *prog_lib_name[SHIM_MAX_PROG_LIBS];
    size_t stack_size, stack_slots;
    unsigned char **stacks;     /* per rank: stack_slots stacks */
    struct shim_ctl *ctl;
    struct shim_shared_ws *ws, *ord;
    int icv_nthreads;           /* nthreads-var */
    int icv_sched; uint64_t icv_chunk;  /* run-sched-var */
    int icv_max_levels;
    size_t tls_size;            /* the executable's TLS (threadprivate) block */
    void *tls_main;             /* ... of the main thread */
    unsigned char *tls_image;   /* rank 0's copy at each fork, in the DSM */
};
extern struct shim_global shim SHIM_HIDDEN;
/* The return address ret is in the program's code: the executable's or a
 * library's it needs (applibs.c; never the C runtime's, MPI's or the
 * shim's).  Inline for malloc's sake: most calls come from the executable. */
SHIM_HIDDEN int shim_code_in_prog_lib(uintptr_t a);
/* dlopen.c: while a program's dlopen runs (the new objects' constructors):
 * shim_dl_busy in the process, shim_dl_loading on its thread; and whether
 * a is in such an object.  The plain global is read first: cheaper than
 * a thread-local variable of a shared library. */
extern int shim_dl_busy SHIM_HIDDEN;
extern __thread int shim_dl_loading SHIM_HIDDEN;
SHIM_HIDDEN int shim_dlopen_owns(uintptr_t a);
static inline int shim_code_is_program(const void *ret)
{
    uintptr_t a = (uintptr_t)ret;
    if (!shim.active)
        return 0;
    if (a >= shim.text_lo && a < shim.text_hi)
        return 1;
    if (shim.nprog_libs && shim_code_in_prog_lib(a))
        return 1;
    return shim_dl_busy && shim_dl_loading && shim_dlopen_owns(a);
}

/* ---- settings.c: the OMP_* and OMPSHIM_* environment variables ---- */
/* Each reads and parses its variable on the first call (a bad value stops
 * the job then) and returns the kept value after. */
/* OMP_NUM_THREADS's first number, or dflt when it is unset. */
SHIM_HIDDEN int shim_setting_num_threads(int dflt);
/* OMP_SCHEDULE: a SHIM_SCHED_* kind (| SHIM_SCHED_MONOTONIC) and a chunk;
 * dynamic,1 when unset. */
SHIM_HIDDEN void shim_setting_schedule(int *kind, uint64_t *chunk);
/* OMPSHIM_REEXECED is set: this process is the restarted one. */
SHIM_HIDDEN int shim_setting_reexeced(void);
/* OMPSHIM_PREMAIN_HEAP in bytes (0: no pre-main arena). */
SHIM_HIDDEN size_t shim_setting_premain_heap(void);
/* OMPSHIM_LIB_DATA: the libraries' globals are shared (the default). */
SHIM_HIDDEN int shim_share_lib_data(void);
/* OMPSHIM_DLOPEN, OMPSHIM_MMAP: shared (1, the default) or private (0). */
SHIM_HIDDEN int shim_setting_dlopen_shared(void);
SHIM_HIDDEN int shim_setting_mmap_shared(void);
/* OMPSHIM_FLUSH: one of these. */
enum { SHIM_FLUSH_ON, SHIM_FLUSH_TRAP, SHIM_FLUSH_OFF };
SHIM_HIDDEN int shim_setting_flush(void);
/* OMPSHIM_INLINE_ATOMICS: on (1, the default) or off (0). */
SHIM_HIDDEN int shim_setting_inline_atomics(void);
/* OMPSHIM_TASK_AFFINITY: -1 off, else the microseconds a task waits for
 * its home rank (0: home, the default: a preference only). */
SHIM_HIDDEN int shim_setting_task_affinity(void);
/* OMPSHIM_TEST_GAP: 0 unset, 1 the first dlopen on each rank, 2 every one. */
SHIM_HIDDEN int shim_setting_test_gap(void);

/* ---- premain_heap.c: what the program allocates before main ---- */
/* Set from __libc_start_main until the C library calls main: the
 * executable's constructors run. */
extern int shim_premain_open SHIM_HIDDEN;
SHIM_HIDDEN void shim_premain_begin(void);
SHIM_HIDDEN void shim_premain_end(void);
/* A block of size bytes at align (a power of two) from the pre-main arena;
 * fatal when it is full. */
SHIM_HIDDEN void *shim_premain_alloc(size_t size, size_t align);
/* p is in a block of the arena (before and after start-up). */
SHIM_HIDDEN int shim_premain_contains(const void *p);
SHIM_HIDDEN size_t shim_premain_size(const void *p);
SHIM_HIDDEN void shim_premain_free(void *p);
/* The last block, resized in place while the phase is open; else NULL. */
SHIM_HIDDEN void *shim_premain_resize(void *p, size_t size);
/* Collective, at start-up: check that every rank allocated alike; the
 * bytes of segment pages the arena needs (0: none).  Then, after
 * dsm__segments_attach set them aside, put it under the DSM. */
SHIM_HIDDEN size_t shim_premain_check(void);
SHIM_HIDDEN void shim_premain_attach(void);
/* An allocation by the caller whose return address is ret goes to the
 * program's heap: the shared one after start-up (shim_code_is_program),
 * the pre-main arena while the executable's constructors run (the same
 * text ranges, found before them: start.c). */
static inline int shim_alloc_is_program(const void *ret)
{
    if (shim_code_is_program(ret))
        return 1;
    /* Relaxed: the text ranges were written before the flag by the thread
     * that runs the constructors, and a thread they start was created
     * after it (pthread_create orders that). */
    if (__builtin_expect(!__atomic_load_n(&shim_premain_open, __ATOMIC_RELAXED), 1))
        return 0;
    uintptr_t a = (uintptr_t)ret;
    return (a >= shim.text_lo && a < shim.text_hi) || shim_code_in_prog_lib(a);
}
/* Run fn(arg) on the stack whose top is top (stack.c). */
SHIM_HIDDEN void shim_call_on_stack(void (*fn)(void *), void *arg, void *top);
SHIM_HIDDEN void *shim_stack_top(int rank, int local);
SHIM_HIDDEN void shim_unsupported(const char *what) __attribute__((noreturn));

/* ---- team.c ---- */
SHIM_HIDDEN struct shim_thr *shim_self(void);
SHIM_HIDDEN void shim_worker_loop(void) __attribute__((noreturn));
SHIM_HIDDEN void shim_team_barrier(void);
/* Rank 0, after writing shim.ctl for the other ranks' shim_worker_loop (a
 * region, a broadcast, a dlopen, the exit): the barrier that starts it,
 * carrying the control block's first SHIM_FORK_BYTES in its release, so that
 * the others read them without a page fault (dsm__barrier_carry). */
SHIM_HIDDEN void shim_fork_barrier(void);
/* Fork a team running fn(data); ws_kind/loop/sections preset a work-share
 * for the combined constructs.  Returns after the join. */
SHIM_HIDDEN void shim_parallel(void (*fn)(void *), void *data, unsigned nthreads,
                               int ws_kind, const struct shim_loop_desc *loop,
                               uint64_t sections);
SHIM_HIDDEN void shim_parallel_start(void (*fn)(void *), void *data, unsigned nthreads,
                                     int ws_kind, const struct shim_loop_desc *loop,
                                     uint64_t sections);
SHIM_HIDDEN void shim_parallel_end(void);
/* The size of the team a region started now with nthreads would have. */
SHIM_HIDDEN int shim_team_size_next(unsigned nthreads);
SHIM_HIDDEN void shim_finish(int status);
/* Thread number and team size of the enclosing team at `level` (below the
 * current one); 0 if found. */
SHIM_HIDDEN int shim_outer(int level, int *num, int *size);
/* This rank's threads in the current team. */
SHIM_HIDDEN int shim_local_count(void);

/* ---- loop.c ---- */
/* The shim's pair operations (dsm__atomic_register): the grab of a dynamic
 * or guided loop's next chunk on a {generation, position} counter. */
enum { SHIM_PAIR_WS_GRAB = 0 };
#define SHIM_AOP_WS_GRAB ((enum dsm_aop)(DSM_AOP_PAIR_FN + SHIM_PAIR_WS_GRAB))
/* Register them with libdsm: on every rank, before dsm_init (start.c). */
SHIM_HIDDEN void shim_loop_register(void);
/* Begin a work-share construct: a new generation and slot (every thread of
 * the team calls it for every construct, in the same order). */
SHIM_HIDDEN void shim_ws_begin(struct shim_thr *t);
SHIM_HIDDEN void shim_loop_init(struct shim_thr *t, const struct shim_loop_desc *d,
                                int ordered);
/* Next chunk [a, b) of iterations; false when the loop is used up. */
SHIM_HIDDEN bool shim_loop_next_iter(struct shim_thr *t, uint64_t *a, uint64_t *b);
SHIM_HIDDEN void shim_ordered_pass(struct shim_thr *t);
SHIM_HIDDEN uint64_t shim_ws_grab(struct shim_thr *t, uint64_t n, uint64_t chunk,
                                  uint64_t guided_threads, uint64_t *size);

/* ---- local_sync.c: mutual exclusion before start-up and after the end ---- */
SHIM_HIDDEN void shim_local_lock(const void *key);
SHIM_HIDDEN void shim_local_unlock(const void *key);
SHIM_HIDDEN int shim_local_trylock(const void *key);

/* ---- libc_alloc.c ---- */
/* The C library's function name, behind the shim's of the same name
 * (dlsym RTLD_NEXT, kept in *cache); fatal if missing. */
SHIM_HIDDEN void *shim_libc_fn(void **cache, const char *name);
/* A word in shared memory that names its DSM lock (a mutex's first word,
 * a pthread_once_t): SHIM_WORD_TAG | (lock id + 1).  shim_word_tag gives
 * the word such a lock if its value at the home is still seen (a
 * compare-and-swap there, with an id from shim_new_lock_id) and returns
 * the word's value at the home afterwards: tagged, or what another writer
 * put there.  A tagged result is written to this node's copy too (locks.c). */
#define SHIM_WORD_TAG 0x40000000u
SHIM_HIDDEN uint32_t shim_word_tag(uint32_t *w, uint32_t seen);
/* In a wrapper of the C library's name: real_name, the C library's own. */
#define SHIM_REAL(name) SHIM_REAL_AS(name, #name)
/* The same, for a function the C library exports under another symbol. */
#define SHIM_REAL_AS(name, symbol) \
    static void *name##_cache; \
    __typeof__(&name) real_##name = (__typeof__(&name))shim_libc_fn(&name##_cache, symbol)

/* ---- signals.c: the program's SIGSEGV/SIGBUS handlers ---- */
/* Sets h->foreign_fault (start.c registers the hooks). */
SHIM_HIDDEN void shim_signals_init(struct dsm_runtime_hooks *h);
/* ---- inline_atomics.c: lock-prefixed instructions run at the home ---- */
SHIM_HIDDEN void shim_inline_atomics_init(void);
/* ---- flush_trap.c ---- */
SHIM_HIDDEN void shim_flush_trap_init(void);
SHIM_HIDDEN int shim_flush_trap_enabled(void);
struct dl_phdr_info;
SHIM_HIDDEN void shim_flush_trap_object(const struct dl_phdr_info *info);
/* A flush of the program's (dsm_flush where it may run, else a fence). */
SHIM_HIDDEN void shim_flush_now(void);
/* signals.c: run the program's own SIGILL action; 0 if it has none. */
SHIM_HIDDEN int shim_program_sigill(int sig, siginfo_t *si, void *uc);

/* The C library's own allocator: private memory, whoever calls. */
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);


/* A pointer from an object's dynamic section (DT_STRTAB, DT_SYMTAB, ...):
 * the loader relocates these in place on x86-64; elsewhere one may still
 * be relative to the load address base. */
static inline uintptr_t shim_dyn_ptr(uintptr_t v, uintptr_t base)
{
    return v < base ? v + base : v;
}

/* ---- fds.c: descriptors the program opened on rank 0 ---- */
/* Collective, at start-up: the table in shared memory, the GOT entries. */
SHIM_HIDDEN void shim_fds_init(void);
/* On a rank other than 0: fd (a stream f) is one the program opened on rank
 * 0, not here, so its I/O goes to rank 0 (fileio.c). */
SHIM_HIDDEN int shim_fd_remote(int fd);
SHIM_HIDDEN int shim_stream_remote(const FILE *f);
/* On any rank: fd (f) is one the program has open on rank 0. */
SHIM_HIDDEN int shim_fd_rank0(int fd);
SHIM_HIDDEN int shim_stream_rank0(const FILE *f);
/* Rank 0: descriptor fd is closed (for another rank). */
SHIM_HIDDEN void shim_fd_closed(int fd);
/* Rank 0's stream f is closed (by rank 0, or for another rank). */
SHIM_HIDDEN void shim_stream_closed(FILE *f);

/* ---- fileio.c: another rank's I/O on rank 0's files, run by rank 0 ---- */
/* Collective, at start-up: the service of rank 0. */
SHIM_HIDDEN void shim_fileio_init(void);
/* On a rank other than 0, for a descriptor (stream) of rank 0's: the call,
 * run by rank 0; errno as rank 0's call left it. */
SHIM_HIDDEN ssize_t shim_fio_read(int fd, void *buf, size_t n, off_t off, int at);
SHIM_HIDDEN ssize_t shim_fio_write(int fd, const void *buf, size_t n, off_t off, int at);
SHIM_HIDDEN int shim_fio_close(int fd);
SHIM_HIDDEN int shim_fio_fclose(FILE *f);
enum shim_fio_op {
    /* descriptors: a = offset (FIO_PREAD, FIO_PWRITE, FIO_LSEEK), b = count
     * or whence or length */
    FIO_READ = 1, FIO_WRITE, FIO_PREAD, FIO_PWRITE, FIO_LSEEK, FIO_CLOSE, FIO_FSTAT,
    FIO_FSYNC, FIO_FDATASYNC, FIO_FTRUNCATE, FIO_FCNTL,
    /* streams */
    FIO_FWRITE, FIO_FREAD, FIO_FGETS, FIO_FGETC, FIO_UNGETC, FIO_GETDELIM, FIO_FFLUSH,
    FIO_FSEEK, FIO_FTELL, FIO_FEOF, FIO_FERROR, FIO_CLEARERR, FIO_FILENO, FIO_FCLOSE,
    FIO_SETVBUF, FIO_NOPS
};
/* A stream operation with data to send and room for the reply.  Returns
 * the call's result, or -1 - errno if it failed. */
SHIM_HIDDEN int64_t shim_fio_stream(int op, FILE *f, int64_t a, int64_t b,
                                    const void *data, size_t len, void *out, size_t cap,
                                    size_t *olen);
/* Another rank's descriptor call: the same, by descriptor. */
SHIM_HIDDEN int64_t shim_fio_fd(int op, int fd, int64_t a, int64_t b, const void *data,
                                size_t len, void *out, size_t cap, size_t *olen);
/* Largest data of one forwarded call. */
#define SHIM_FIO_DATA (DSM_CALL_MAX - 64)

/* ---- streams.c: the program's stdio calls on rank 0's streams ---- */
SHIM_HIDDEN void shim_streams_init(void);
/* fread and fwrite (syscalls.c defines them) on rank 0's stream. */
SHIM_HIDDEN size_t shim_stream_fread(void *buf, size_t size, size_t n, FILE *f);
SHIM_HIDDEN size_t shim_stream_fwrite(const void *buf, size_t size, size_t n, FILE *f);

/* ---- got.c ---- */
struct shim_got_entry { const char *name; void *fn; };
/* Point the program's own relocations for each name at fn; the number of
 * slots rewritten.  The list is kept, for objects the program loads later. */
SHIM_HIDDEN size_t shim_got_bind(const struct shim_got_entry *want, size_t n);
/* Apply every list given to shim_got_bind to the object loaded at base. */
SHIM_HIDDEN void shim_got_bind_object(uintptr_t base);

/* ---- mmap.c: the program's mmap in shared memory ---- */
/* Redirect the program's mmap calls (got.c), unless OMPSHIM_MMAP=private. */
SHIM_HIDDEN void shim_mmap_init(void);
/* Write back this rank's shared file mappings (at the end of the run). */
SHIM_HIDDEN void shim_mmap_flush_all(void);

/* ---- applibs.c ---- */
SHIM_HIDDEN void shim_applibs_scan(void);
/* An object's writable data (start.c fills it from its program headers). */
#define SHIM_MAX_RW 8
struct shim_image_data {
    uintptr_t data_lo, data_hi, relro_hi;
    uintptr_t rw_lo[SHIM_MAX_RW], rw_hi[SHIM_MAX_RW];   /* each writable PT_LOAD */
    int nrw;
};
struct dl_phdr_info;
SHIM_HIDDEN void shim_image_data_of(const struct dl_phdr_info *info, struct shim_image_data *d);
/* Program library i's (0 <= i < shim.nprog_libs) writable data. */
SHIM_HIDDEN const struct shim_image_data *shim_applibs_data(int i);
/* Whether an object of that file name may be the program's (not the C
 * runtime's: libc, libm, the loader, ...). */
SHIM_HIDDEN int shim_applibs_is_program_name(const char *path);
/* Make an object the program loaded with dlopen one of the program's
 * libraries; its index, or -1 for the C runtime's (libm, ...). */
SHIM_HIDDEN int shim_applibs_add(struct dl_phdr_info *info);

/* ---- start.c ---- */
/* An object's writable data after its RELRO part as a DSM segment (copy has
 * SHIM_MAX_RW entries); 0 if it has none. */
SHIM_HIDDEN int shim_data_segment(const struct shim_image_data *d,
                                  struct dsm_segment_spec *spec, struct dsm_range *copy);
/* What to do when the room for the globals of libraries loaded later runs
 * out (dsm__segments_add's advice). */
#define SHIM_LIB_DATA_ADVICE \
    "run with OMPSHIM_LIB_DATA=private to keep each library's globals per rank"

/* ---- dlarena.c: where libraries loaded with dlopen go ---- */
#define SHIM_MAX_EXTENTS 256
struct shim_extents { int n; uintptr_t lo[SHIM_MAX_EXTENTS], hi[SHIM_MAX_EXTENTS]; };
/* Collective, at start-up: reserve the arena at one address on every rank;
 * -1 if some rank could not (dlopen is then not replayed). */
SHIM_HIDDEN int shim_dlarena_init(void);
SHIM_HIDDEN int shim_dlarena_ready(void);
/* a is inside the arena. */
SHIM_HIDDEN int shim_dlarena_contains(uintptr_t a);
/* The arena's free parts here (rank 0 sends them with a load). */
SHIM_HIDDEN void shim_dlarena_free_parts(struct shim_extents *out);
/* Around one dlopen: make what the loader maps land in the arena.  like:
 * rank 0's free parts, which become this rank's (NULL on rank 0). */
SHIM_HIDDEN void shim_dlarena_begin(const struct shim_extents *like);
SHIM_HIDDEN void shim_dlarena_end(void);

/* ---- dlopen.c: a library the program loads, on every rank ---- */
SHIM_HIDDEN void shim_dlopen_init(void);
SHIM_HIDDEN void shim_dlopen_worker(const struct shim_ctl *c);

/* ---- heap.c ---- */
SHIM_HIDDEN void shim_heap_init(void);
SHIM_HIDDEN void *shim_dsm_malloc(size_t size, size_t align);
/* realloc with the program's choice of heap (program: shared if new). */
SHIM_HIDDEN void *shim_realloc_as(void *p, size_t size, int program);
/* bcast.c: dsm_bcast from the program's sequential code (sets h->bcast). */
SHIM_HIDDEN void shim_bcast_init(struct dsm_runtime_hooks *h);
SHIM_HIDDEN void shim_bcast_worker(const struct shim_ctl *c);
SHIM_HIDDEN void shim_dsm_free(void *p);
SHIM_HIDDEN int  shim_in_heap(const void *p);
/* The usable size of the shared heap's block that starts at p, or 0 if p is
 * not (as far as its header tells) the start of one. */
SHIM_HIDDEN size_t shim_heap_block_size(const void *p);

/* ---- blas.c: OpenBLAS (and BLIS) get one thread on a job of ranks ---- */
SHIM_HIDDEN void shim_blas_one_thread(void *scope);
/* ---- program_threads.c: the program started a thread of its own ---- */
SHIM_HIDDEN void shim_program_threads(void);

/* ---- task.c: OpenMP tasks ---- */
/* Service numbers of dsm__call (fileio.c has 0). */
#define SHIM_SVC_TASKS 1
struct shim_task_stats {
    uint64_t created;           /* deferred tasks created on this rank */
    uint64_t stolen;            /* tasks this rank took from others */
    uint64_t lent;              /* tasks others took from this rank */
    uint64_t steal_calls;       /* steal requests (round trips) this rank sent */
    uint64_t publishes;         /* lock passages that made queued tasks stealable */
    uint64_t reports;           /* completion reports (each a batch) this rank sent */
    uint64_t throttled;         /* tasks run at once: enough were ready here */
};
SHIM_HIDDEN void shim_task_init(void);
/* A region starts: this rank runs local_count of its threads, team_ranks
 * ranks have threads in it. */
SHIM_HIDDEN void shim_task_region_begin(int local_count, int team_ranks);
/* Whether this rank treats barriers as task scheduling points across ranks;
 * rank 0 sets it when the program imports a task-creating entry point, and
 * its forks carry it to the others (shim_ctl.tasks_on). */
SHIM_HIDDEN int  shim_task_on(void);
SHIM_HIDDEN void shim_task_set_on(void);
/* Each of the rank's team threads, at a barrier or the region's end: run
 * tasks until every task the rank owns or stole is complete and the team's
 * other ranks are done (returns at once if the rank never used tasks). */
SHIM_HIDDEN void shim_task_quiesce(void);
/* The barrier's last thread, after its DSM barrier: the next barrier
 * counts its arrivals from zero. */
SHIM_HIDDEN void shim_task_barrier_end(void);
/* A thread of this rank enters (1) or leaves (0) the team's DSM barrier. */
SHIM_HIDDEN void shim_task_dsm_barrier(int in);
SHIM_HIDDEN int shim_task_in_final(void);
/* The task reductions (GCC's descriptor chain) of the taskgroup the current
 * task's new children count in, or NULL; set them on the current task's
 * innermost own taskgroup (-1: it has none).  task_reduction.c uses them. */
SHIM_HIDDEN uintptr_t *shim_task_reductions(void);
/* The descriptor of the current region's task reductions (a parallel
 * region with the task modifier), for its implicit tasks: set by
 * GOMP_parallel_reductions on rank 0 and by every fork on the others. */
SHIM_HIDDEN void shim_task_set_region_red(uintptr_t *red);
SHIM_HIDDEN uintptr_t *shim_task_region_red(void);
SHIM_HIDDEN int shim_task_set_reductions(uintptr_t *red);
SHIM_HIDDEN void shim_task_stats(struct shim_task_stats *out);
/* DSM_STATS=1: print this rank's task counts (at the end of the run). */
SHIM_HIDDEN void shim_task_report(void);

/* ---- locks.c ---- */
SHIM_HIDDEN int shim_new_lock_id(void);
/* Fortran's 8-byte nest lock (INTEGER(omp_nest_lock_kind)), for fortran.c:
 * the C nest lock's logic in a layout of its own. */
SHIM_HIDDEN void shim_fnest_init(void *lock);
SHIM_HIDDEN void shim_fnest_destroy(void *lock);
SHIM_HIDDEN void shim_fnest_set(void *lock);
SHIM_HIDDEN void shim_fnest_unset(void *lock);
SHIM_HIDDEN int shim_fnest_test(void *lock);

/* ---- races.c ---- */
/* Sets h->name_address, unless the executable cannot be read. */
SHIM_HIDDEN void shim_symbols_init(struct dsm_runtime_hooks *h);

/* ---- imports.c ---- */
/* Every GOMP_*, omp_*, GOACC_* and acc_* name a loaded object imports (but
 * libgomp) binds to libompshim, or the job stops naming it; objects read
 * before are skipped. */
SHIM_HIDDEN void shim_imports_check(void);

#endif /* OMPSHIM_SHIM_H */
