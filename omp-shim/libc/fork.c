/*
 * fork.c - fork(2) from a program whose stacks, globals and heap are in
 * shared memory.
 *
 * The region's pages are MAP_SHARED views of libdsm's memfd, and fork keeps
 * them shared: whatever the child wrote before it called exec (its stack
 * frames, on the stack main runs on, which is in the region) landed in the
 * parent's memory, and the parent's later writes in the child's.  gretlcli,
 * which runs ldd at start-up, died on rank 0 with "*** stack smashing
 * detected ***".  So the program's fork:
 *   - runs the C library's fork on a private stack of the calling thread;
 *   - in the child, still there: libdsm maps the region privately
 *     (dsm__vm_detach_child), the in-use part of the calling thread's
 *     stack in the region is copied into private memory at the same
 *     addresses, and the shim stops (its wrappers go to the C library,
 *     exit runs no collective);
 *   - the parent waits on a pipe until the child has done so, before it
 *     returns to its own stack.
 * The child sees this rank's copies of shared memory, and can read and
 * write them; it takes no part in the DSM.  Pages of the heap and globals
 * that the child has not written yet still show what the parent writes
 * there later (a private file mapping follows the file until written).
 *
 * Threads: any thread of the program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim.h"

#define FORK_STACK ((size_t)256 << 10)

struct fork_call {
    pid_t (*real)(void);
    pid_t pid;
    uintptr_t sp;               /* the program's stack pointer at the call */
    int sync[2];                /* child -> parent: detached */
};

static __thread unsigned char *fork_stack;
static __thread struct fork_call call;  /* private memory: TLS */

/* Copy [the page of sp, the top of its stack slot) into private memory at
 * the same addresses, if sp is on one of the shim's stacks in the region. */
static int privatise_stack(uintptr_t sp)
{
    size_t os = dsm_rt_os_page();
    for (int r = 0; r < shim.nodes; r++) {
        uintptr_t base = (uintptr_t)shim.stacks[r];
        if (sp < base || sp >= base + shim.stack_slots * shim.stack_size)
            continue;
        uintptr_t lo = (sp - 256) & ~(uintptr_t)(os - 1);       /* the red zone too */
        uintptr_t hi = base + ((sp - base) / shim.stack_size + 1) * shim.stack_size;
        if (lo < base)
            lo = base;
        size_t n = hi - lo;
        void *tmp = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (tmp == MAP_FAILED)
            return -1;
        memcpy(tmp, (void *)lo, n);
        if (mmap((void *)lo, n, PROT_READ | PROT_WRITE | (dsm_rt_exec_pages() ? PROT_EXEC : 0),
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != (void *)lo)
            return -1;
        memcpy((void *)lo, tmp, n);
        munmap(tmp, n);
        return 0;
    }
    return 0;
}

static void fork_on_private_stack(void *arg)
{
    struct fork_call *c = arg;
    char byte = 1;
    c->pid = c->real();
    if (c->pid != 0) {          /* the parent, or a failed fork (errno kept) */
        int e = errno;
        close(c->sync[1]);
        while (read(c->sync[0], &byte, 1) < 0 && errno == EINTR)
            ;
        close(c->sync[0]);
        errno = e;
        return;
    }
    shim.active = 0;
    if (dsm__vm_detach_child() != 0 || privatise_stack(c->sp) != 0)
        _exit(127);             /* cannot keep the child off the parent's memory */
    close(c->sync[0]);
    while (write(c->sync[1], &byte, 1) < 0 && errno == EINTR)
        ;
    close(c->sync[1]);
}

SHIM_EXPORT pid_t fork(void)
{
    SHIM_REAL(fork);
    if (!shim.active)
        return real_fork();
    if (!fork_stack) {
        void *s = mmap(NULL, FORK_STACK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (s == MAP_FAILED)
            return -1;          /* errno from mmap: ENOMEM, as fork's own */
        fork_stack = s;
    }
    call.real = real_fork;
    call.sp = (uintptr_t)__builtin_frame_address(0);
    if (pipe2(call.sync, O_CLOEXEC) != 0)
        return -1;              /* EMFILE or ENFILE */
    shim_call_on_stack(fork_on_private_stack, &call, fork_stack + FORK_STACK);
    return call.pid;            /* the pipe is closed on every path */
}
