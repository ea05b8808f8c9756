/*
 * start.c - process start-up and exit under the OpenMP shim.
 *
 * The shim defines __libc_start_main, so that it runs before the program's
 * main whether it is linked in (dsmcc) or preloaded (dsmrun on a binary
 * built with plain gcc -fopenmp).  Start-up, on every rank:
 *   1. re-execute once with address randomisation off, so that code and
 *      data sit at the same addresses on every rank; find the program's
 *      code and open the pre-main arena, where the executable's
 *      constructors allocate (premain_heap.c);
 *   2. read the shim's own DSM_* variables (dsm_settings.c) and tell
 *      libdsm the threads per rank and those names (dsm_rt_preinit);
 *      dsm_init (MPI), then check that the addresses do match;
 *   3. bring the executable's .data and .bss, and those of the libraries it
 *      needs (applibs.c), under the DSM (homed at rank 0, moving to the
 *      first node that alone writes a page), and the used part of the
 *      pre-main arena with rank 0's contents;
 *   4. allocate the control block, the work-share counters, one stack per
 *      OpenMP thread (homed where the thread runs) and the heap arenas; find
 *      the libraries whose code counts as the program's (applibs.c); take
 *      over the program's SIGSEGV handlers (signals.c);
 *   5. rank 0 runs main on its stack in the DSM, with a copy of argv in the
 *      DSM; the others serve parallel regions (team.c) until rank 0 exits.
 * Rank 0's exit (return from main or exit()) reaches shim_finish through
 * on_exit, which tells the others to finish with the same status.
 *
 * Threads: the main thread of each process.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <unistd.h>

#include "shim.h"

struct shim_global shim;
/* DSM_THREADS_PER_RANK and DSM_STACK_SIZE (dsm_settings.c). */
static struct shim_dsm_settings settings;

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void),
                        void (*)(void), void *);

static main_fn program_main;

struct exe_info {
    uintptr_t base, text_lo, text_hi;
    struct shim_image_data data;
    size_t tls_size;
    void *tls_data;
    int found;
};

void shim_image_data_of(const struct dl_phdr_info *info, struct shim_image_data *d)
{
    memset(d, 0, sizeof *d);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && !(ph->p_flags & PF_X)) {
            if (!d->data_lo || lo < d->data_lo) d->data_lo = lo;
            if (hi > d->data_hi) d->data_hi = hi;
            if (d->nrw < SHIM_MAX_RW) {
                d->rw_lo[d->nrw] = lo;
                d->rw_hi[d->nrw] = hi;
                d->nrw++;
            }
        } else if (ph->p_type == PT_GNU_RELRO) {
            d->relro_hi = hi;
        }
    }
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct exe_info *e = arg;
    (void)size;
    if (e->found)
        return 1;
    e->found = 1;               /* the first object is the executable */
    e->base = info->dlpi_addr;
    e->tls_data = info->dlpi_tls_data;
    shim_image_data_of(info, &e->data);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            if (!e->text_lo || lo < e->text_lo) e->text_lo = lo;
            if (hi > e->text_hi) e->text_hi = hi;
        } else if (ph->p_type == PT_TLS) {
            e->tls_size = ph->p_memsz;
        }
    }
    return 1;
}

/* Step 1: the addresses of a position-independent executable and of every
 * library depend on randomisation; turn it off for this process. */
static void maybe_reexec(char **argv)
{
    int pers = personality(0xffffffff);
    if (pers == -1 || (pers & ADDR_NO_RANDOMIZE) || shim_setting_reexeced())
        return;
    FILE *f = fopen("/proc/sys/kernel/randomize_va_space", "r");
    if (f) {
        int c = fgetc(f);
        fclose(f);
        if (c == '0')
            return;
    }
    if (personality((unsigned long)pers | ADDR_NO_RANDOMIZE) == -1)
        return;
    setenv("OMPSHIM_REEXECED", "1", 1);
    execv("/proc/self/exe", argv);
    /* Not fatal here: the address check below explains what to do. */
    personality((unsigned long)pers);
}

/* Drop the shim from LD_PRELOAD, so that programs this one starts (a shell
 * from system(), say) do not load it. */
static void drop_preload(void)
{
    const char *v = getenv("LD_PRELOAD");
    if (!v || !strstr(v, "libompshim"))
        return;
    char *copy = strdup(v), *out = calloc(1, strlen(v) + 1), *save = NULL;
    if (!copy || !out)
        return;
    for (char *tok = strtok_r(copy, " :", &save); tok; tok = strtok_r(NULL, " :", &save)) {
        if (strstr(tok, "libompshim"))
            continue;
        if (*out)
            strcat(out, ":");
        strcat(out, tok);
    }
    if (*out)
        setenv("LD_PRELOAD", out, 1);
    else
        unsetenv("LD_PRELOAD");
    free(copy);
    free(out);
}

static void check_same(const char *what, uintptr_t v)
{
    uint64_t mn = v, mx = v;
    MPI_Allreduce(MPI_IN_PLACE, &mn, 1, MPI_UINT64_T, MPI_MIN, dsm_rt_comm());
    MPI_Allreduce(MPI_IN_PLACE, &mx, 1, MPI_UINT64_T, MPI_MAX, dsm_rt_comm());
    if (mn != mx)
        dsm__fatal("%s is not at the same address on every rank (from %#lx to %#lx): "
                   "the OpenMP shim needs identical code and data addresses. Start the "
                   "program with dsmrun, or turn address randomisation off for it "
                   "(setarch -R, or sysctl kernel.randomize_va_space=0); the shim "
                   "restarts the program that way by itself unless OMPSHIM_REEXECED is set",
                   what, (unsigned long)mn, (unsigned long)mx);
}

/* Step 3: the writable data of an object (the executable, or a library it
 * needs), after its RELRO part, page by page, as one segment; only the
 * pages not all zero need copying into the region.  0 if it has none. */
int shim_data_segment(const struct shim_image_data *d, struct dsm_segment_spec *spec,
                      struct dsm_range *copy)
{
    size_t os = dsm_rt_os_page();
    uintptr_t lo = d->data_lo > d->relro_hi ? d->data_lo : d->relro_hi;
    uintptr_t hi = d->data_hi;
    lo = (lo + os - 1) & ~(uintptr_t)(os - 1);
    hi = (hi + os - 1) & ~(uintptr_t)(os - 1);
    if (hi <= lo)
        return 0;
    /* Copy what the loader mapped (the writable PT_LOADs); a hole between
     * two of them is not mapped, so it is not read. */
    size_t n = 0;
    for (int i = 0; i < d->nrw; i++) {
        uintptr_t a = d->rw_lo[i] & ~(uintptr_t)(os - 1), b = (d->rw_hi[i] + os - 1) & ~(uintptr_t)(os - 1);
        if (a < lo) a = lo;
        if (b > hi) b = hi;
        if (b > a) {
            copy[n].start = a - lo;
            copy[n].count = b - a;
            n++;
        }
    }
    spec->addr = (void *)lo;
    spec->len = hi - lo;
    spec->copy = copy;
    spec->ncopy = n;
    return 1;
}

/* The executable's globals and those of the libraries it needs (unless
 * OMPSHIM_LIB_DATA=private), homed at rank 0 and migrating to the first
 * node that alone writes a page. */
static void attach_globals(const struct exe_info *e)
{
    static struct dsm_segment_spec spec[1 + SHIM_MAX_PROG_LIBS];
    static struct dsm_range copy[1 + SHIM_MAX_PROG_LIBS][SHIM_MAX_RW];
    size_t n = 0;
    int share_libs = shim_share_lib_data();

    n += shim_data_segment(&e->data, &spec[n], copy[n]);
    for (int i = 0; share_libs && i < shim.nprog_libs; i++) {
        const struct shim_image_data *d = shim_applibs_data(i);
        if (shim_data_segment(d, &spec[n], copy[n])) {
            check_same(shim.prog_lib_name[i], (uintptr_t)spec[n].addr);
            n++;
        }
    }
    /* Spare pages for the pre-main arena (added next, with rank 0's
     * contents only) and the libraries the program loads later (dlopen.c). */
    size_t premain = shim_premain_check();
    dsm__segments_attach(spec, n, 0, (share_libs ? SHIM_DLOPEN_DATA_SPARE : 0) + premain);
    shim_premain_attach();
    for (size_t i = 0; i < n; i++)
        dsm__set_migrate(spec[i].addr, spec[i].len);
}

void *shim_stack_top(int rank, int local)
{
    if ((size_t)local >= shim.stack_slots)
        return NULL;
    unsigned char *top = shim.stacks[rank] + (size_t)(local + 1) * shim.stack_size;
    return (void *)((uintptr_t)(top - 64) & ~(uintptr_t)15);
}

/* A loaded object asks for an executable stack (PT_GNU_STACK with PF_X, or
 * no PT_GNU_STACK at all, which the C library takes the same way on this
 * machine): GCC's nested functions put trampolines on the stack. */
static int exec_stack_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    int found = 0;
    (void)size;
    if (!info->dlpi_phnum)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_STACK) {
            found = 1;
            if (info->dlpi_phdr[i].p_flags & PF_X)
                *(int *)arg = 1;
        }
    if (!found && info->dlpi_name && !strstr(info->dlpi_name, "linux-vdso"))
        *(int *)arg = 1;
    return 0;
}

static int needs_exec_stack(void)
{
    int need = 0;
    dl_iterate_phdr(exec_stack_cb, &need);
    return need;
}

/* The program's code, for heap.c's test of a caller: the executable's text
 * and that of the libraries it needs (applibs.c).  Found before the
 * executable's constructors run (for the pre-main arena) and again here. */
static void find_program_code(struct exe_info *e)
{
    memset(e, 0, sizeof *e);
    dl_iterate_phdr(phdr_cb, e);
    shim.text_lo = e->text_lo;
    shim.text_hi = e->text_hi;
    shim_applibs_scan();
}

static void setup(char **argv)
{
    struct exe_info e;
    find_program_code(&e);

    shim.rank = dsm_rt_rank();
    shim.nodes = dsm_rt_nodes();
    shim.tpr = (int)settings.threads_per_rank;
    dsm_rt_set_keep_mapped(1);
    /* The stacks are in the DSM: if the program's own stack had to be
     * executable, so must they be (pages of the region get PROT_EXEC). */
    dsm_rt_set_exec_pages(needs_exec_stack());

    check_same("the executable", e.base);
    check_same("the C library", (uintptr_t)dlsym(RTLD_DEFAULT, "printf"));
    check_same("libompshim", (uintptr_t)&shim);
    check_same("the main function", (uintptr_t)program_main);
    (void)argv;
    /* No name of the OpenMP ABI falls through to libgomp (one line: rank
     * 0's; its fatal error ends the others too). */
    if (shim.rank == 0)
        shim_imports_check();

    attach_globals(&e);

    shim.icv_nthreads = shim_setting_num_threads(shim.nodes * shim.tpr);
    shim_setting_schedule(&shim.icv_sched, &shim.icv_chunk);
    shim.icv_max_levels = 1;

    /* Control block and work-share counters: node 0. */
    unsigned char *c = dsm_malloc_home(2 * dsm_rt_page_size(), DSM_HOME_NODE, 0);
    if (!c)
        dsm__fatal("the shared region is too small for the shim's control block; "
                   "raise DSM_HEAP_SIZE");
    shim.ctl = (struct shim_ctl *)(void *)c;
    shim.ws = (struct shim_shared_ws *)(void *)(c + dsm_rt_page_size());
    shim.ord = shim.ws + SHIM_WS_SLOTS;

    /* Stacks: one per OpenMP thread a rank may run. */
    size_t per = (size_t)(shim.icv_nthreads + shim.nodes - 1) / (size_t)shim.nodes;
    shim.stack_slots = per > (size_t)shim.tpr ? per : (size_t)shim.tpr;
    if (shim.stack_slots > SHIM_MAX_LOCAL)
        shim.stack_slots = SHIM_MAX_LOCAL;
    shim.stack_size = (settings.stack_size + dsm_rt_page_size() - 1) &
                      ~(dsm_rt_page_size() - 1);
    shim.stacks = calloc((size_t)shim.nodes, sizeof *shim.stacks);
    if (!shim.stacks)
        dsm__fatal("out of private memory at start-up");
    for (int r = 0; r < shim.nodes; r++) {
        shim.stacks[r] = dsm_malloc_home(shim.stack_slots * shim.stack_size,
                                         DSM_HOME_NODE, r);
        if (!shim.stacks[r])
            dsm__fatal("the shared region is too small for %zu stacks of %zu bytes per "
                       "rank; lower DSM_STACK_SIZE or raise DSM_HEAP_SIZE",
                       shim.stack_slots, shim.stack_size);
        /* Each stack but its lowest page, which stays unmapped until a
         * thread really goes that deep: a boundary between two stacks in
         * the kernel's map of this process.  Without it main's stack and
         * the next one are one mapping, and a program that takes the top
         * of its stack from the mapping that holds __libc_stack_end (R
         * does) measures its depth from the wrong end. */
        size_t low = shim.stack_size > dsm_rt_page_size() ? dsm_rt_page_size() : 0;
        for (size_t k = 0; k < shim.stack_slots; k++)
            dsm__set_notrap(shim.stacks[r] + k * shim.stack_size + low,
                            shim.stack_size - low);
    }
    if (e.tls_size && e.tls_data) {
        check_same("the main thread's threadprivate variables", (uintptr_t)e.tls_data);
        shim.tls_size = e.tls_size;
        shim.tls_main = e.tls_data;
        shim.tls_image = dsm_malloc_home(e.tls_size, DSM_HOME_NODE, 0);
        if (!shim.tls_image)
            dsm__fatal("no room in the shared region for %zu bytes of threadprivate "
                       "data; raise DSM_HEAP_SIZE", e.tls_size);
    }
    shim_fds_init();            /* before the heap takes the rest of the region */
    shim_heap_init();
    /* What libdsm asks the shim (dsm_runtime.h): filled in below, registered
     * in one piece once complete.  Until then libdsm runs without them;
     * nothing below calls dsm_bcast, and the program's handlers (the
     * foreign-fault hook) are recorded only once the shim is active. */
    struct dsm_runtime_hooks hooks = { 0 };
    shim_signals_init(&hooks);
    shim_inline_atomics_init();
    shim_flush_trap_init();
    shim_mmap_init();
    shim_fileio_init();
    shim_task_init();
    shim_streams_init();
    shim_dlopen_init();
    shim_bcast_init(&hooks);
    shim_blas_one_thread(RTLD_DEFAULT);
    hooks.unshared_hint =
        " (not shared memory: memory only this rank has, such as the global "
        "variables of the C runtime or MPI, or memory that one of them allocated for "
        "itself, which the OpenMP shim does not share "
        "(ompshim(7), SHARED MEMORY); or a bug in the program)";
    if (dsm_rt_check_races())
        shim_symbols_init(&hooks);
    dsm_rt_set_hooks(&hooks);
    if (shim.rank == 0) {
        shim.ctl->next_lock = SHIM_LOCK_FIRST_FREE;
        shim.ctl->seq = 0;
    }
    dsm_barrier();
    shim.active = 1;
}

struct main_call { int argc; char **argv, **envp; int ret; };

static void call_main(void *arg)
{
    struct main_call *m = arg;
    m->ret = program_main(m->argc, m->argv, m->envp);
}

static void on_rank0_exit(int status, void *arg)
{
    (void)arg;
    /* A fatal error's MPI_Abort: on a job of one rank MPICH ends it with
     * exit(), holding its lock, and finishing would wait for the
     * communication thread, which waits for that lock. */
    if (__atomic_load_n(&dsm__dying, __ATOMIC_SEQ_CST))
        return;
    shim_finish(status);
}

/* main's argv in the shared heap: the strings the C library's start-up left
 * on rank 0's own stack are not shared, and a parallel region may read a
 * file name from argv on any rank. */
static char **shared_argv(int argc, char **argv)
{
    char **v = shim_dsm_malloc(((size_t)argc + 1) * sizeof *v, 16);
    if (!v)
        return argv;
    for (int i = 0; i < argc; i++) {
        size_t n = strlen(argv[i]) + 1;
        v[i] = shim_dsm_malloc(n, 16);
        if (!v[i])
            return argv;
        memcpy(v[i], argv[i], n);
    }
    v[argc] = NULL;
    return v;
}

/* The loader's record of where the initial thread's stack ends.  Programs
 * that check their own stack depth read it (R: "C stack usage ... is too
 * close to the limit" on the first call, measured from the process's stack
 * to the shim's), and so does pthread_getattr_np; main runs on the stack
 * whose top is top from now on.  The variable is in the loader's RELRO. */
extern void *__libc_stack_end;
static void move_stack_end(void *top)
{
    uintptr_t page = (uintptr_t)&__libc_stack_end & ~(uintptr_t)(dsm_rt_os_page() - 1);
    if (mprotect((void *)page, dsm_rt_os_page(), PROT_READ | PROT_WRITE) != 0)
        return;                 /* keep the old value: only a depth check is off */
    __libc_stack_end = top;
    mprotect((void *)page, dsm_rt_os_page(), PROT_READ);
}

/* The shim's own DSM_* variables (dsm_settings.c), told to libdsm before
 * dsm_init: how many threads a rank runs, and that their names are known.
 * A bad value is reported by dsm_init once it has started MPI, as libdsm
 * reports its own: with the rank, ending the whole job.  Also done for a
 * program that is not an OpenMP one (wanted()): dsmrun sets
 * DSM_THREADS_PER_RANK for whatever it runs, and a plain libdsm program
 * run by it must not be refused for that; such a program (omp 0) keeps
 * libdsm's own defaults. */
static void tell_dsm_settings(int omp)
{
    static char err[512];
    int bad = shim_dsm_settings_parse(&settings, environ, err, sizeof err);
    struct dsm_runtime_params p = {
        .app_threads = settings.threads_per_rank,
        .env_names = shim_dsm_settings_names,
        .name = "the OpenMP shim (ompshim(7))",
        .error = bad ? err : NULL,
        /* Loop-parallel programs read after each barrier what they read
         * after the last one (docs/RESULTS.md: NPB BT class W on 2 ranks).
         * Not after lock acquires: the task runtime's lock grants
         * invalidate tiles that the next grant invalidates again, and
         * their prefetches were mostly wasted.  (A prefetched copy missed
         * the thread's own remote atomics until atomic.c refreshed it too:
         * tests/omp task_taskgroup_nested lost a clear of counters.)
         * DSM_PREFETCH overrides. */
        .prefetch = omp ? DSM_PREFETCH_BARRIERS : DSM_PREFETCH_NONE,
    };

    dsm_rt_preinit(&p);
}

/* libdsm started for the OpenMP program: the settings, and the shim's
 * remote pair operations (loop.c), registered before libdsm's
 * communication thread can serve one. */
static void init_dsm(int *argc, char ***argv)
{
    tell_dsm_settings(1);
    shim_loop_register();
    dsm_init(argc, argv);
}

static int shim_main(int argc, char **argv, char **envp)
{
    shim_premain_end();         /* the executable's constructors are done */
    if (!getenv("DSM_HEAP_SIZE"))
        setenv("DSM_HEAP_SIZE", "8G", 1);
    drop_preload();
    init_dsm(&argc, &argv);
    setup(argv);
    if (shim.rank != 0)
        shim_worker_loop();

    struct main_call m = { argc, shared_argv(argc, argv), envp, 0 };
    on_exit(on_rank0_exit, NULL);
    dsm__altstack_setup();
    shim_self();
    move_stack_end(shim_stack_top(0, 0));
    shim_call_on_stack(call_main, &m, shim_stack_top(0, 0));
    return m.ret;
}

/* Preloaded into a program that is not an OpenMP one (a shell, setarch,
 * env on the way to the real program): stay out of its way. */
static int wanted(void)
{
    const char *pre = getenv("LD_PRELOAD");
    if (!pre || !strstr(pre, "libompshim"))
        return 1;               /* linked in by dsmcc */
    for (struct link_map *m = _r_debug.r_map; m; m = m->l_next)
        if (m->l_name && strstr(m->l_name, "libgomp"))
            return 1;
    return 0;
}

SHIM_EXPORT int __libc_start_main(main_fn main, int argc, char **argv,
                                  void (*init)(void), void (*fini)(void),
                                  void (*rtld_fini)(void), void *stack_end)
{
    start_fn real = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    if (!real) {
        fprintf(stderr, "libompshim: cannot find the C library's __libc_start_main\n");
        _exit(127);
    }
    program_main = main;
    if (!wanted()) {
        tell_dsm_settings(0);
        return real(main, argc, argv, init, fini, rtld_fini, stack_end);
    }
    maybe_reexec(argv);
    struct exe_info e;
    find_program_code(&e);
    shim_premain_begin();
    return real(shim_main, argc, argv, init, fini, rtld_fini, stack_end);
}

void shim_unsupported(const char *what)
{
    dsm__fatal("the program called %s, which the OpenMP shim does not support "
               "(see ompshim(7) for what is supported); run it with stock libgomp "
               "on one node instead", what);
}
