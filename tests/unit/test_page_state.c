/*
 * test_page_state.c - the per-page state machine (libdsm/page_state.c).
 *
 * The expected rows are the protocol's transition table written out by hand
 * (home-based, invalidate, multiple writers; see dsm_pure.h): each row is
 * checked for the exact next state and the exact set of actions.  Cells the
 * protocol does not define are only required to name a valid state.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "dsm_pure.h"

enum { NONHOME = 0, HOME = 1 };

struct row {
    enum dsm_pstate s;
    enum dsm_pevent ev;
    int is_home;
    enum dsm_pstate next;
    unsigned actions;
    const char *what;
};

static const struct row defined[] = {
    /* Fault on a page we have no copy of: fetch it from its home. */
    { DSM_P_INVALID, DSM_EV_FAULT, NONHOME, DSM_P_IN_FLIGHT, DSM_ACT_FETCH,
      "fault on INVALID non-home" },
    /* The page arrived: readable, writes still trapped. */
    { DSM_P_IN_FLIGHT, DSM_EV_FETCHED, NONHOME, DSM_P_READ_ONLY, DSM_ACT_PROTECT,
      "FETCHED on IN_FLIGHT" },
    /* Write to a valid copy: twin it (non-home), mark it, open it. */
    { DSM_P_READ_ONLY, DSM_EV_FAULT, NONHOME, DSM_P_READ_WRITE,
      DSM_ACT_TWIN | DSM_ACT_MARK | DSM_ACT_PROTECT, "fault on READ_ONLY non-home" },
    /* The home writes in place: no twin, its copy is the master. */
    { DSM_P_READ_ONLY, DSM_EV_FAULT, HOME, DSM_P_READ_WRITE,
      DSM_ACT_MARK | DSM_ACT_PROTECT, "fault on READ_ONLY home" },
    /* Another thread's fetch is under way: wait for it. */
    { DSM_P_IN_FLIGHT, DSM_EV_FAULT, NONHOME, DSM_P_IN_FLIGHT, DSM_ACT_WAIT,
      "fault on IN_FLIGHT" },
    /* Not ours: a real segfault. */
    { DSM_P_UNALLOC, DSM_EV_FAULT, NONHOME, DSM_P_UNALLOC, DSM_ACT_SEGV,
      "fault on UNALLOC (non-home)" },
    { DSM_P_UNALLOC, DSM_EV_FAULT, HOME, DSM_P_UNALLOC, DSM_ACT_SEGV,
      "fault on UNALLOC (home)" },
    /* Two threads faulted on one page; the other one upgraded it first. */
    { DSM_P_READ_WRITE, DSM_EV_FAULT, NONHOME, DSM_P_READ_WRITE, 0,
      "fault on READ_WRITE non-home" },
    { DSM_P_READ_WRITE, DSM_EV_FAULT, HOME, DSM_P_READ_WRITE, 0,
      "fault on READ_WRITE home" },
    /* Write notice: drop our copy. */
    { DSM_P_READ_ONLY, DSM_EV_INVALIDATE, NONHOME, DSM_P_INVALID,
      DSM_ACT_PROTECT | DSM_ACT_DROP_TWIN, "INVALIDATE READ_ONLY non-home" },
    { DSM_P_READ_WRITE, DSM_EV_INVALIDATE, NONHOME, DSM_P_INVALID,
      DSM_ACT_PROTECT | DSM_ACT_DROP_TWIN, "INVALIDATE READ_WRITE non-home" },
    /* Release/barrier: writes flushed, trap the next write again. */
    { DSM_P_READ_WRITE, DSM_EV_DOWNGRADE, NONHOME, DSM_P_READ_ONLY,
      DSM_ACT_PROTECT | DSM_ACT_DROP_TWIN, "DOWNGRADE READ_WRITE non-home" },
    { DSM_P_READ_WRITE, DSM_EV_DOWNGRADE, HOME, DSM_P_READ_ONLY,
      DSM_ACT_PROTECT, "DOWNGRADE READ_WRITE home" },
    /* Home: another node takes a copy, so our writes must be seen again. */
    { DSM_P_READ_WRITE, DSM_EV_SERVE, HOME, DSM_P_READ_ONLY, DSM_ACT_PROTECT,
      "SERVE READ_WRITE home" },
    { DSM_P_READ_ONLY, DSM_EV_SERVE, HOME, DSM_P_READ_ONLY, 0,
      "SERVE READ_ONLY home" },
    /* Home: nobody else holds a copy, writes need not be trapped. */
    { DSM_P_READ_ONLY, DSM_EV_UNTRACK, HOME, DSM_P_READ_WRITE, DSM_ACT_PROTECT,
      "UNTRACK READ_ONLY home" },
    /* Home pages start unmapped (INVALID): the first touch maps them
     * writable without a message; serving one maps it read-only. */
    { DSM_P_INVALID, DSM_EV_FAULT, HOME, DSM_P_READ_WRITE, DSM_ACT_PROTECT,
      "fault on INVALID home (first touch)" },
    { DSM_P_INVALID, DSM_EV_SERVE, HOME, DSM_P_READ_ONLY, DSM_ACT_PROTECT,
      "SERVE INVALID home" },
    { DSM_P_INVALID, DSM_EV_UNTRACK, HOME, DSM_P_INVALID, 0,
      "UNTRACK INVALID home" },
    /* Prefetch (prefetch.c): only a page with no copy here is requested. */
    { DSM_P_INVALID, DSM_EV_PREFETCH, NONHOME, DSM_P_IN_FLIGHT, DSM_ACT_FETCH,
      "PREFETCH INVALID non-home" },
    { DSM_P_INVALID, DSM_EV_PREFETCH, HOME, DSM_P_INVALID, 0, "PREFETCH INVALID home" },
    { DSM_P_IN_FLIGHT, DSM_EV_PREFETCH, NONHOME, DSM_P_IN_FLIGHT, 0,
      "PREFETCH IN_FLIGHT (a fetch under way)" },
    { DSM_P_READ_ONLY, DSM_EV_PREFETCH, NONHOME, DSM_P_READ_ONLY, 0,
      "PREFETCH READ_ONLY" },
    { DSM_P_READ_WRITE, DSM_EV_PREFETCH, NONHOME, DSM_P_READ_WRITE, 0,
      "PREFETCH READ_WRITE" },
    { DSM_P_PREFETCHED, DSM_EV_PREFETCH, NONHOME, DSM_P_PREFETCHED, 0,
      "PREFETCH PREFETCHED" },
    { DSM_P_UNALLOC, DSM_EV_PREFETCH, NONHOME, DSM_P_UNALLOC, 0, "PREFETCH UNALLOC" },
    /* The prefetched page arrives: valid, but not opened (no PROTECT). */
    { DSM_P_IN_FLIGHT, DSM_EV_PREFETCHED, NONHOME, DSM_P_PREFETCHED, 0,
      "PREFETCHED on IN_FLIGHT" },
    /* First touch of a prefetched page: only the protection changes. */
    { DSM_P_PREFETCHED, DSM_EV_FAULT, NONHOME, DSM_P_READ_ONLY, DSM_ACT_PROTECT,
      "fault on PREFETCHED" },
    /* A notice drops an untouched prefetched copy; already PROT_NONE. */
    { DSM_P_PREFETCHED, DSM_EV_INVALIDATE, NONHOME, DSM_P_INVALID, 0,
      "INVALIDATE PREFETCHED" },
    { DSM_P_PREFETCHED, DSM_EV_DOWNGRADE, NONHOME, DSM_P_PREFETCHED, 0,
      "DOWNGRADE PREFETCHED" },
};

struct bad { enum dsm_pstate s; enum dsm_pevent ev; int is_home; const char *what; };

static const struct bad impossible[] = {
    { DSM_P_READ_ONLY, DSM_EV_FETCHED, NONHOME, "FETCHED on READ_ONLY" },
    { DSM_P_READ_WRITE, DSM_EV_FETCHED, NONHOME, "FETCHED on READ_WRITE" },
    { DSM_P_READ_ONLY, DSM_EV_SERVE, NONHOME, "SERVE READ_ONLY non-home" },
    { DSM_P_READ_WRITE, DSM_EV_SERVE, NONHOME, "SERVE READ_WRITE non-home" },
    { DSM_P_READ_ONLY, DSM_EV_INVALIDATE, HOME, "INVALIDATE READ_ONLY home" },
    { DSM_P_READ_WRITE, DSM_EV_INVALIDATE, HOME, "INVALIDATE READ_WRITE home" },
    { DSM_P_READ_ONLY, DSM_EV_UNTRACK, NONHOME, "UNTRACK READ_ONLY non-home" },
    { DSM_P_PREFETCHED, DSM_EV_FAULT, HOME, "fault on PREFETCHED home" },
    { DSM_P_READ_ONLY, DSM_EV_PREFETCHED, NONHOME, "PREFETCHED on READ_ONLY" },
    { DSM_P_INVALID, DSM_EV_PREFETCHED, NONHOME, "PREFETCHED on INVALID" },
    { DSM_P_IN_FLIGHT, DSM_EV_PREFETCHED, HOME, "PREFETCHED at the home" },
};

static void test_defined_transitions(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(defined) / sizeof(defined[0]); i++) {
        const struct row *r = &defined[i];
        struct dsm_ptrans t = dsm__page_transition(r->s, r->ev, r->is_home);
        if (t.next != r->next || t.actions != r->actions)
            fail_msg("%s: expected next=%d actions=0x%x, got next=%d actions=0x%x",
                     r->what, (int)r->next, r->actions, (int)t.next, t.actions);
    }
}

static void test_impossible_transitions(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(impossible) / sizeof(impossible[0]); i++) {
        const struct bad *b = &impossible[i];
        struct dsm_ptrans t = dsm__page_transition(b->s, b->ev, b->is_home);
        if (!(t.actions & DSM_ACT_ERROR))
            fail_msg("%s: expected ERROR, got next=%d actions=0x%x",
                     b->what, (int)t.next, t.actions);
    }
}

/* A transition that is not an error never carries the ERROR bit along with
 * work to do, and every cell of the table names a real state. */
static void test_every_cell_is_a_state(void **state)
{
    (void)state;
    for (int s = 0; s < DSM_P_NSTATES; s++)
        for (int ev = 0; ev < DSM_EV_NEVENTS; ev++)
            for (int h = 0; h <= 1; h++) {
                struct dsm_ptrans t = dsm__page_transition((enum dsm_pstate)s,
                                                           (enum dsm_pevent)ev, h);
                if ((int)t.next < 0 || t.next >= DSM_P_NSTATES)
                    fail_msg("state %d event %d home %d: next=%d out of range",
                             s, ev, h, (int)t.next);
                if (t.actions & ~0xffu)
                    fail_msg("state %d event %d home %d: unknown action bits 0x%x",
                             s, ev, h, t.actions);
            }
}

/* The protection of each state follows from the state: a fault on
 * INVALID/IN_FLIGHT/UNALLOC for any access, writes trapped in READ_ONLY. */
static void test_prot(void **state)
{
    (void)state;
    assert_int_equal(dsm__page_prot(DSM_P_UNALLOC), PROT_NONE);
    assert_int_equal(dsm__page_prot(DSM_P_INVALID), PROT_NONE);
    assert_int_equal(dsm__page_prot(DSM_P_IN_FLIGHT), PROT_NONE);
    assert_int_equal(dsm__page_prot(DSM_P_READ_ONLY), PROT_READ);
    assert_int_equal(dsm__page_prot(DSM_P_READ_WRITE), PROT_READ | PROT_WRITE);
    assert_int_equal(dsm__page_prot(DSM_P_PREFETCHED), PROT_NONE);
}

static void test_names(void **state)
{
    (void)state;
    for (int a = 0; a < DSM_P_NSTATES; a++) {
        const char *na = dsm__page_state_name((enum dsm_pstate)a);
        assert_non_null(na);
        assert_true(na[0] != '\0');
        for (int b = 0; b < a; b++)
            assert_string_not_equal(na, dsm__page_state_name((enum dsm_pstate)b));
    }
}

/* A typical life of a non-home page driven through the table: read fault,
 * fetch, write fault, barrier downgrade, invalidation, refetch. */
static void test_nonhome_lifecycle(void **state)
{
    static const struct { enum dsm_pevent ev; enum dsm_pstate next; } step[] = {
        { DSM_EV_FAULT, DSM_P_IN_FLIGHT },
        { DSM_EV_FAULT, DSM_P_IN_FLIGHT },      /* a second thread waits */
        { DSM_EV_FETCHED, DSM_P_READ_ONLY },
        { DSM_EV_FAULT, DSM_P_READ_WRITE },
        { DSM_EV_FAULT, DSM_P_READ_WRITE },     /* a second thread's write */
        { DSM_EV_DOWNGRADE, DSM_P_READ_ONLY },
        { DSM_EV_INVALIDATE, DSM_P_INVALID },
        { DSM_EV_FAULT, DSM_P_IN_FLIGHT },
    };
    enum dsm_pstate s = DSM_P_INVALID;

    (void)state;
    for (size_t i = 0; i < sizeof(step) / sizeof(step[0]); i++) {
        struct dsm_ptrans t = dsm__page_transition(s, step[i].ev, NONHOME);
        assert_false(t.actions & DSM_ACT_ERROR);
        assert_int_equal(t.next, step[i].next);
        s = t.next;
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defined_transitions),
        cmocka_unit_test(test_impossible_transitions),
        cmocka_unit_test(test_every_cell_is_a_state),
        cmocka_unit_test(test_prot),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_nonhome_lifecycle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
