/*
 * trace.h - hooks of the DSM_TRACE event log (trace.c; format in
 * trace_format.h and dsm-trace(5)).
 *
 * Every hook is a macro that tests one global flag first, so that with
 * tracing off a hook costs one predictable, never-taken branch and no call.
 * Any thread may call them, including the fault handler: recording takes no
 * lock and never calls malloc or stdio (buffers come from mmap, full ones go
 * out with one write(2)).
 *
 * Library entries and exits: DSM_TRACE_ENTER records, on the outermost entry
 * of a thread, the compute interval since that thread last left the library
 * (wall and thread CPU time) as a COMPUTE event, then the event itself;
 * DSM_TRACE_LEAVE records the event and starts the next compute interval.
 */
#ifndef DSM_TRACE_H
#define DSM_TRACE_H

#include <stdint.h>
#include "trace_format.h"

#ifndef DSM_HIDDEN
#define DSM_HIDDEN __attribute__((visibility("hidden")))
#endif

extern int dsm__trace_on DSM_HIDDEN;

DSM_HIDDEN void dsm__trace_ev(int kind, int sub, int peer, uint64_t a, uint64_t b);
DSM_HIDDEN void dsm__trace_enter_ev(int kind, int sub, int peer, uint64_t a, uint64_t b);
DSM_HIDDEN void dsm__trace_leave_ev(int kind, int sub, int peer, uint64_t a, uint64_t b);
/* Name the calling thread's role (DSM_TR_ROLE_*) in the log. */
DSM_HIDDEN void dsm__trace_role(int role);
/* dsm_init, after the communicator exists and before the communication
 * thread starts: open PREFIX.RANK if DSM_TRACE is set (collective: aligns
 * the clocks with a barrier). */
DSM_HIDDEN void dsm__trace_init(void);
/* dsm_finalize, after the communication thread stopped: flush every
 * thread's buffer and close the log. */
DSM_HIDDEN void dsm__trace_fini(void);
/* The thread CPU time of the calling thread, ns. */
DSM_HIDDEN uint64_t dsm__thread_cpu_ns(void);

#define DSM_TRACE(kind, sub, peer, a, b) \
    do { if (__builtin_expect(dsm__trace_on, 0)) \
             dsm__trace_ev((kind), (sub), (peer), (uint64_t)(a), (uint64_t)(b)); } while (0)
#define DSM_TRACE_ENTER(kind, sub, peer, a, b) \
    do { if (__builtin_expect(dsm__trace_on, 0)) \
             dsm__trace_enter_ev((kind), (sub), (peer), (uint64_t)(a), (uint64_t)(b)); } while (0)
#define DSM_TRACE_LEAVE(kind, sub, peer, a, b) \
    do { if (__builtin_expect(dsm__trace_on, 0)) \
             dsm__trace_leave_ev((kind), (sub), (peer), (uint64_t)(a), (uint64_t)(b)); } while (0)

/* The prefetch hook (dsm_prefetch calls it once per request). */
#define DSM_TRACE_PREFETCH(first, npages) \
    DSM_TRACE(DSM_TR_PREFETCH, 0, -1, (first), (npages))

#endif /* DSM_TRACE_H */
