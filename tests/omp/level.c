/*
 * level.c - omp_get_level, omp_get_active_level, omp_get_ancestor_thread_num,
 * omp_get_team_size, and a nested region.
 *
 * Outside any region the level is 0; in a region it is 1, and the active
 * level is 1 when the team has more than one thread (0 otherwise).  With
 * max-active-levels set to 1 (omp_set_max_active_levels), a region nested
 * in an active region runs with one thread: level 2, active level 1,
 * omp_get_ancestor_thread_num(1) the outer thread, omp_get_team_size(1)
 * the outer team, omp_get_team_size(2) 1.  (When the outer team has one
 * thread it is inactive, and the nested num_threads(2) region is the
 * first active one: two threads.)
 */
#define OT_NAME "level"
#include "omptest.h"

static int lvl[OT_MAX_THREADS], act[OT_MAX_THREADS];
static int in_lvl[OT_MAX_THREADS], in_act[OT_MAX_THREADS];
static int in_size[OT_MAX_THREADS], anc[OT_MAX_THREADS];
static int outer_size[OT_MAX_THREADS], inner_size[OT_MAX_THREADS];

int main(void)
{
    int n = ot_team_size();
    int t, active = n > 1, nested_team = active ? 1 : 2;

    ot_print("threads=%d", n);
    omp_set_max_active_levels(1);
    OT_CHECK(omp_get_max_active_levels() == 1, "omp_get_max_active_levels() "
             "is %d after setting 1", omp_get_max_active_levels());
    OT_CHECK(omp_get_level() == 0 && omp_get_active_level() == 0,
             "outside any region: level %d, active level %d",
             omp_get_level(), omp_get_active_level());
    OT_CHECK(omp_get_ancestor_thread_num(0) == 0 && omp_get_team_size(0) == 1,
             "outside any region: ancestor 0 is %d, team size at level 0 %d",
             omp_get_ancestor_thread_num(0), omp_get_team_size(0));

#pragma omp parallel
    {
        int me = omp_get_thread_num();

        lvl[me] = omp_get_level();
        act[me] = omp_get_active_level();
#pragma omp parallel num_threads(2)
        if (omp_get_thread_num() == 0) {
            in_lvl[me] = omp_get_level();
            in_act[me] = omp_get_active_level();
            in_size[me] = omp_get_num_threads();
            anc[me] = omp_get_ancestor_thread_num(1);
            outer_size[me] = omp_get_team_size(1);
            inner_size[me] = omp_get_team_size(2);
        }
    }

    for (t = 0; t < n; t++) {
        OT_CHECK(lvl[t] == 1 && act[t] == active, "thread %d: level %d, "
                 "active level %d, expected 1 and %d", t, lvl[t], act[t],
                 active);
        OT_CHECK(in_lvl[t] == 2 && in_act[t] == 1
                 && in_size[t] == nested_team, "thread %d, nested region: "
                 "level %d, active level %d, team %d, expected 2, 1, %d", t,
                 in_lvl[t], in_act[t], in_size[t], nested_team);
        OT_CHECK(anc[t] == t && outer_size[t] == n
                 && inner_size[t] == nested_team, "thread %d, nested region: "
                 "ancestor %d, team sizes %d and %d, expected %d, %d, %d", t,
                 anc[t], outer_size[t], inner_size[t], t, n, nested_team);
    }
    OT_CHECK(omp_get_level() == 0, "level %d after the regions",
             omp_get_level());
    ot_print("level 1 (active %d), nested level 2 (active %d, team %d)",
             act[0], in_act[0], in_size[0]);
    return ot_finish();
}
