/*
 * page_state.c - the per-page coherence state machine as a pure table.
 *
 * The fault handler (application threads), the communication thread and the
 * barrier/lock code all ask dsm__page_transition() what a state and an event
 * lead to, and carry out the returned actions themselves under the page's
 * lock.  Keeping the table here makes it testable without signals or MPI.
 */
#include <sys/mman.h>

#include "libc.h"
#include "dsm_pure.h"

static struct dsm_ptrans T(enum dsm_pstate next, unsigned actions)
{
    struct dsm_ptrans t = { next, actions };
    return t;
}

struct dsm_ptrans dsm__page_transition(enum dsm_pstate s, enum dsm_pevent ev,
                                       int is_home)
{
    switch (ev) {
    case DSM_EV_FAULT:
        switch (s) {
        case DSM_P_UNALLOC:    return T(s, DSM_ACT_SEGV);
        case DSM_P_INVALID:
            /* At its home, INVALID means "not mapped yet": the home copy is
             * the master and valid; the first touch only maps it. */
            return is_home ? T(DSM_P_READ_WRITE, DSM_ACT_PROTECT)
                           : T(DSM_P_IN_FLIGHT, DSM_ACT_FETCH);
        case DSM_P_IN_FLIGHT:  return T(s, DSM_ACT_WAIT);
        case DSM_P_READ_ONLY:
            return is_home ? T(DSM_P_READ_WRITE, DSM_ACT_MARK | DSM_ACT_PROTECT)
                           : T(DSM_P_READ_WRITE, DSM_ACT_TWIN | DSM_ACT_MARK | DSM_ACT_PROTECT);
        case DSM_P_READ_WRITE:
            /* Another thread of this node upgraded the page between our trap
             * and our taking the page lock: retry the access. */
            return T(s, 0);
        case DSM_P_PREFETCHED:
            /* The copy is here already: only open it (paper 003, 6.1). */
            if (!is_home)
                return T(DSM_P_READ_ONLY, DSM_ACT_PROTECT);
            break;
        default: break;
        }
        break;
    case DSM_EV_PREFETCH:
        /* Only a page with no copy here is requested; anything else (a
         * valid copy, a fetch under way, the home, unallocated) is left. */
        if (s == DSM_P_INVALID && !is_home)
            return T(DSM_P_IN_FLIGHT, DSM_ACT_FETCH);
        return T(s, 0);
    case DSM_EV_PREFETCHED:
        /* Installed in the system view; the application view stays
         * PROT_NONE until the first access. */
        if (s == DSM_P_IN_FLIGHT && !is_home)
            return T(DSM_P_PREFETCHED, 0);
        break;
    case DSM_EV_FETCHED:
        if (s == DSM_P_IN_FLIGHT && !is_home)
            return T(DSM_P_READ_ONLY, DSM_ACT_PROTECT);
        break;
    case DSM_EV_INVALIDATE:
        if (is_home)
            break;
        if (s == DSM_P_READ_ONLY || s == DSM_P_READ_WRITE)
            return T(DSM_P_INVALID, DSM_ACT_PROTECT | DSM_ACT_DROP_TWIN);
        if (s == DSM_P_INVALID || s == DSM_P_UNALLOC)
            return T(s, 0);
        if (s == DSM_P_PREFETCHED)    /* never opened: already PROT_NONE */
            return T(DSM_P_INVALID, 0);
        break;
    case DSM_EV_DOWNGRADE:
        if (s == DSM_P_READ_WRITE)
            return T(DSM_P_READ_ONLY,
                     is_home ? DSM_ACT_PROTECT : DSM_ACT_PROTECT | DSM_ACT_DROP_TWIN);
        if (s == DSM_P_READ_ONLY || s == DSM_P_INVALID || s == DSM_P_PREFETCHED)
            return T(s, 0);
        break;
    case DSM_EV_SERVE:
        if (!is_home)
            break;
        if (s == DSM_P_READ_WRITE || s == DSM_P_INVALID)
            return T(DSM_P_READ_ONLY, DSM_ACT_PROTECT);
        if (s == DSM_P_READ_ONLY)
            return T(s, 0);
        break;
    case DSM_EV_UNTRACK:
        if (!is_home)
            break;
        if (s == DSM_P_READ_ONLY)
            return T(DSM_P_READ_WRITE, DSM_ACT_PROTECT);
        if (s == DSM_P_READ_WRITE || s == DSM_P_INVALID)
            return T(s, 0);
        break;
    default:
        break;
    }
    return T(s, DSM_ACT_ERROR);
}

int dsm__page_prot(enum dsm_pstate s)
{
    switch (s) {
    case DSM_P_READ_ONLY:  return PROT_READ;
    case DSM_P_READ_WRITE: return PROT_READ | PROT_WRITE;
    default:               return PROT_NONE;
    }
}

const char *dsm__page_state_name(enum dsm_pstate s)
{
    static const char *const names[DSM_P_NSTATES] = {
        "UNALLOC", "INVALID", "IN_FLIGHT", "READ_ONLY", "READ_WRITE", "PREFETCHED"
    };
    return (unsigned)s < DSM_P_NSTATES ? names[s] : "BAD_STATE";
}
