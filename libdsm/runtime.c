/*
 * runtime.c - the accessors of dsm_runtime.h: what a runtime built on top
 * of libdsm reads and sets of libdsm's global state (dsm__g), what it says
 * before dsm_init (dsm__rt_params, read by init.c), and the hooks it
 * registers (dsm__hooks, read by bcast.c, fault.c, races.c and watchdog.c).
 *
 * Threads: any, also a signal handler: each function reads or writes one
 * value (dsm_rt_set_hooks copies the struct; the runtime calls it while no
 * hook can run).  dsm_rt_preinit: the main thread, before dsm_init.
 */
#include <pthread.h>

#include "dsm_internal.h"

struct dsm_runtime_hooks dsm__hooks;
struct dsm_runtime_params dsm__rt_params;

void dsm_rt_preinit(const struct dsm_runtime_params *p)
{
    if (dsm__g.state != DSM_STATE_NEW)
        dsm__fatal("internal error: dsm_rt_preinit called after dsm_init");
    dsm__rt_params = *p;
}

void dsm_rt_set_hooks(const struct dsm_runtime_hooks *h)
{
    if (h)
        dsm__hooks = *h;
    else
        dsm__hooks = (struct dsm_runtime_hooks){ 0 };
}

/* ---- the job and the configuration ---- */

int dsm_rt_running(void) { return dsm__g.state == DSM_STATE_RUNNING; }
int dsm_rt_rank(void) { return dsm__g.rank; }
int dsm_rt_nodes(void) { return dsm__g.nodes; }
MPI_Comm dsm_rt_comm(void) { return dsm__g.comm; }
int dsm_rt_on_comm_thread(void) { return pthread_equal(pthread_self(), dsm__g.comm_thread); }
uintptr_t dsm_rt_base(void) { return dsm__g.cfg.base; }
int dsm_rt_max_locks(void) { return dsm__g.cfg.max_locks; }
int dsm_rt_check_races(void) { return dsm__g.cfg.check_races; }

/* ---- the region ---- */

size_t dsm_rt_os_page(void) { return dsm__g.os_page; }
size_t dsm_rt_page_size(void) { return dsm__g.page_size; }
size_t dsm_rt_npages(void) { return dsm__g.npages; }
int dsm_rt_in_region(const void *a) { return dsm__in_region(a); }
size_t dsm_rt_page_of(const void *a) { return dsm__page_of(a); }

int dsm_rt_page_homed_elsewhere(size_t p)
{
    return p < dsm__g.npages && dsm__g.pages[p].home != dsm__g.rank &&
           dsm__g.pages[p].state != DSM_P_UNALLOC;
}

int dsm_rt_page_home(size_t p)
{
    if (p >= dsm__g.npages || dsm__g.pages[p].state == DSM_P_UNALLOC)
        return -1;
    return dsm__g.pages[p].home;
}

void dsm_rt_set_keep_mapped(int on) { dsm__g.keep_mapped = on; }
int dsm_rt_exec_pages(void) { return dsm__g.exec_pages; }
void dsm_rt_set_exec_pages(int on) { dsm__g.exec_pages = on; }

void dsm_rt_wait_for(const char *what) { dsm__wait_what = what; }

/* ---- the event log ---- */

void dsm_rt_trace(int kind, uint64_t a, uint64_t b)
{
    DSM_TRACE(kind, 0, -1, a, b);
}
