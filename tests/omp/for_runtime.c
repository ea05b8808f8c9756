/*
 * for_runtime.c - omp for with schedule(runtime): OMP_SCHEDULE and
 * omp_set_schedule / omp_get_schedule.
 *
 * When OMP_SCHEDULE is set (run-omp-test.sh sets it to "dynamic,3" for
 * this program, in both runs), omp_get_schedule must return what it says
 * and a schedule(runtime) loop must follow it.  Then each schedule is set
 * with omp_set_schedule, read back, and a schedule(runtime) loop must keep
 * its promises: static blocks, static round robin, dynamic chunks, guided
 * minimum chunks, the monotonic modifier.  The schedule without OMP_SCHEDULE
 * is the implementation's and is not checked.
 */
#define OT_NAME "for_runtime"
#define OT_LOOP_MAX 3000
#include <stdlib.h>
#include <string.h>

#include "omptest.h"

#define N 3000

static const char *kind_name(omp_sched_t kind)
{
    switch ((omp_sched_t)(kind & ~omp_sched_monotonic)) {
    case omp_sched_static:  return "static";
    case omp_sched_dynamic: return "dynamic";
    case omp_sched_guided:  return "guided";
    case omp_sched_auto:    return "auto";
    default:                return "unknown";
    }
}

/* Parse "[monotonic:|nonmonotonic:]KIND[,CHUNK]"; chunk 0 when absent.
 * Returns 0 when the value is not one this test knows. */
static int parse_schedule(const char *s, omp_sched_t *kind, int *chunk)
{
    static const omp_sched_t kinds[] = { omp_sched_static, omp_sched_dynamic,
                                         omp_sched_guided, omp_sched_auto };
    const char *colon = strchr(s, ':');
    size_t j, len;

    if (colon != NULL)
        s = colon + 1;
    len = strcspn(s, ",");
    *chunk = s[len] == ',' ? atoi(s + len + 1) : 0;
    for (j = 0; j < sizeof kinds / sizeof kinds[0]; j++) {
        if (strlen(kind_name(kinds[j])) == len
            && strncmp(s, kind_name(kinds[j]), len) == 0) {
            *kind = kinds[j];
            return 1;
        }
    }
    return 0;
}

/* Run one schedule(runtime) loop of N iterations into the recorder. */
static void runtime_loop(int monotonic)
{
    long i;

    ot_loop_reset();
#pragma omp parallel for schedule(runtime)
    for (i = 0; i < N; i++) {
        if (monotonic)
            ot_loop_hit_monotonic(i);
        else
            ot_loop_hit(i);
    }
}

/* Set a schedule, read it back, run a runtime loop, check it. */
static void try_schedule(omp_sched_t kind, int chunk, int n)
{
    omp_sched_t got_kind;
    int got_chunk, monotonic = (kind & omp_sched_monotonic) != 0;
    omp_sched_t base = (omp_sched_t)(kind & ~omp_sched_monotonic);
    char what[64];

    snprintf(what, sizeof what, "runtime %s%s,%d",
             monotonic ? "monotonic:" : "", kind_name(kind), chunk);
    omp_set_schedule(kind, chunk);
    omp_get_schedule(&got_kind, &got_chunk);
    OT_CHECK((got_kind & ~omp_sched_monotonic) == base,
             "%s: omp_get_schedule returned kind %s", what,
             kind_name(got_kind));
    if (chunk > 0 && base != omp_sched_auto)
        OT_CHECK(got_chunk == chunk, "%s: omp_get_schedule returned chunk "
                 "%d", what, got_chunk);

    /* Static schedules and the monotonic modifier promise increasing
     * iterations per thread. */
    runtime_loop(monotonic || base == omp_sched_static);
    ot_loop_check(what, N, n);
    if (base == omp_sched_static && chunk <= 0)
        ot_loop_check_blocks(what, N);
    if (base == omp_sched_static && chunk > 0)
        ot_loop_check_static_chunk(what, N, chunk, n);
    if (base == omp_sched_dynamic && chunk > 0)
        ot_loop_check_chunks(what, N, chunk);
    if (base == omp_sched_guided && chunk > 0)
        ot_loop_check_min_runs(what, N, chunk);
    ot_print("%s: iterations=%d", what, N);
}

int main(void)
{
    int n = ot_team_size();
    const char *env = getenv("OMP_SCHEDULE");
    omp_sched_t kind, env_kind;
    int chunk, env_chunk;

    ot_print("threads=%d", n);

    if (env != NULL && parse_schedule(env, &env_kind, &env_chunk)) {
        omp_get_schedule(&kind, &chunk);
        OT_CHECK((kind & ~omp_sched_monotonic) == env_kind,
                 "OMP_SCHEDULE=%s but omp_get_schedule returned kind %s",
                 env, kind_name(kind));
        if (env_chunk > 0)
            OT_CHECK(chunk == env_chunk, "OMP_SCHEDULE=%s but "
                     "omp_get_schedule returned chunk %d", env, chunk);
        runtime_loop(env_kind == omp_sched_static);
        ot_loop_check("runtime from OMP_SCHEDULE", N, n);
        if (env_kind == omp_sched_dynamic && env_chunk > 0)
            ot_loop_check_chunks("runtime from OMP_SCHEDULE", N, env_chunk);
        if (env_kind == omp_sched_static && env_chunk > 0)
            ot_loop_check_static_chunk("runtime from OMP_SCHEDULE", N,
                                       env_chunk, n);
        ot_print("OMP_SCHEDULE=%s: kind=%s", env, kind_name(env_kind));
    } else if (env != NULL) {
        ot_print("OMP_SCHEDULE=%s: not a schedule this test knows, not "
                 "checked", env);
    } else {
        ot_print("OMP_SCHEDULE unset");
    }

    try_schedule(omp_sched_static, 0, n);
    try_schedule(omp_sched_static, 5, n);
    try_schedule(omp_sched_dynamic, 1, n);
    try_schedule(omp_sched_dynamic, 6, n);
    try_schedule(omp_sched_guided, 7, n);
    try_schedule(omp_sched_auto, 0, n);
    try_schedule((omp_sched_t)(omp_sched_dynamic | omp_sched_monotonic), 2, n);
    return ot_finish();
}
