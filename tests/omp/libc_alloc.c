/*
 * libc_alloc.c - memory the C library allocates for the program, and main's
 * argv, read by the team.
 *
 * The initial thread gets strings from strdup, strndup, asprintf, vasprintf,
 * getline and getdelim (from a temporary file it wrote), realpath and getcwd
 * with a null buffer, and takes argv[0]; every thread then reads each one
 * and compares it with a copy the initial thread made into a global array
 * (shared by the executable's globals).  Under the shim, a string the C
 * library allocated privately on rank 0 would read as garbage, or kill the
 * rank, on the others.  Then each thread makes its own strdup and asprintf
 * strings inside the region, the initial thread reads them all after the
 * join, and frees everything (free and realloc of C library memory).
 */
#define OT_NAME "libc_alloc"
#define _GNU_SOURCE
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "omptest.h"

enum { S_STRDUP, S_STRNDUP, S_ASPRINTF, S_VASPRINTF, S_GETLINE1, S_GETLINE2,
       S_GETDELIM, S_REALPATH, S_GETCWD, S_ARGV0, NSTR };
static const char *const what[NSTR] = {
    "strdup", "strndup", "asprintf", "vasprintf", "getline (1st line)",
    "getline (2nd line)", "getdelim", "realpath", "getcwd", "argv[0]"
};

static char expect[NSTR][PATH_MAX + 64];
static char *got[NSTR];
static char *made[OT_MAX_THREADS][2];

static int my_vasprintf(char **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(out, fmt, ap);
    va_end(ap);
    return n;
}

int main(int argc, char **argv)
{
    int n = ot_team_size();
    long bad = 0;
    char *line = NULL;
    size_t cap = 0;
    FILE *f;

    (void)argc;
    if (n > OT_MAX_THREADS) {
        printf("%s: skip: team of %d, at most %d\n", OT_NAME, n, OT_MAX_THREADS);
        return 77;
    }
    ot_print("threads=%d", n);

    got[S_STRDUP] = strdup("a string from strdup, read by every thread");
    got[S_STRNDUP] = strndup("strndup keeps only this part|not this", 28);
    if (asprintf(&got[S_ASPRINTF], "asprintf %d %s %.3f", 42, "words", 2.5) < 0)
        got[S_ASPRINTF] = NULL;
    if (my_vasprintf(&got[S_VASPRINTF], "vasprintf %0300d|", 7) < 0)
        got[S_VASPRINTF] = NULL;
    f = tmpfile();
    if (!f) {
        fprintf(stderr, "%s: FAIL: tmpfile failed\n", OT_NAME);
        return 1;
    }
    fputs("first line of the file\nsecond, a longer line: ", f);
    for (int i = 0; i < 40; i++)
        fputs("0123456789", f);
    fputs("\nthird;fourth\n", f);
    rewind(f);
    if (getline(&line, &cap, f) > 0)
        got[S_GETLINE1] = strdup(line);         /* a copy; line is reused */
    if (getline(&line, &cap, f) > 0)
        got[S_GETLINE2] = line;                 /* kept: line grew to hold it */
    line = NULL;
    cap = 0;
    if (getdelim(&line, &cap, ';', f) > 0)
        got[S_GETDELIM] = line;
    fclose(f);
    got[S_REALPATH] = realpath("/tmp/../tmp/.", NULL);
    got[S_GETCWD] = getcwd(NULL, 0);
    got[S_ARGV0] = argv[0];

    snprintf(expect[S_STRDUP], sizeof expect[0], "a string from strdup, read by every thread");
    snprintf(expect[S_STRNDUP], sizeof expect[0], "strndup keeps only this part");
    snprintf(expect[S_ASPRINTF], sizeof expect[0], "asprintf 42 words 2.500");
    snprintf(expect[S_VASPRINTF], sizeof expect[0], "vasprintf %0300d|", 7);
    snprintf(expect[S_GETLINE1], sizeof expect[0], "first line of the file\n");
    snprintf(expect[S_GETLINE2], sizeof expect[0], "second, a longer line: ");
    for (int i = 0; i < 40; i++)
        strcat(expect[S_GETLINE2], "0123456789");
    strcat(expect[S_GETLINE2], "\n");
    snprintf(expect[S_GETDELIM], sizeof expect[0], "third;");
    snprintf(expect[S_REALPATH], sizeof expect[0], "/tmp");
    if (!getcwd(expect[S_GETCWD], sizeof expect[0]))
        expect[S_GETCWD][0] = '\0';
    snprintf(expect[S_ARGV0], sizeof expect[0], "%s", argv[0]);
    for (int s = 0; s < NSTR; s++)
        OT_CHECK(got[s] && !strcmp(got[s], expect[s]),
                 "%s on the initial thread: got \"%.40s\"", what[s],
                 got[s] ? got[s] : "(null)");

#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num();
        for (int s = 0; s < NSTR; s++) {
            if (!got[s] || strcmp(got[s], expect[s]) != 0) {
                ot_error("thread %d: %s reads \"%.40s\", expected \"%.40s\"", me,
                         what[s], got[s] ? got[s] : "(null)", expect[s]);
                bad++;
            }
        }
        made[me][0] = strdup(expect[me % NSTR]);
        if (asprintf(&made[me][1], "thread %d of %d", me, omp_get_num_threads()) < 0)
            made[me][1] = NULL;
    }
    OT_CHECK(bad == 0, "%ld strings read wrong in the region", bad);

    for (int t = 0; t < n; t++) {
        char want[64];
        snprintf(want, sizeof want, "thread %d of %d", t, n);
        OT_CHECK(made[t][0] && !strcmp(made[t][0], expect[t % NSTR]),
                 "thread %d's strdup reads wrong after the join", t);
        OT_CHECK(made[t][1] && !strcmp(made[t][1], want),
                 "thread %d's asprintf reads \"%s\" after the join, expected \"%s\"", t,
                 made[t][1] ? made[t][1] : "(null)", want);
        free(made[t][0]);
        free(made[t][1]);
    }
    got[S_STRDUP] = realloc(got[S_STRDUP], 100000);
    OT_CHECK(got[S_STRDUP] && !strcmp(got[S_STRDUP], expect[S_STRDUP]),
             "realloc of strdup's string lost its contents");
    for (int s = 0; s < NSTR; s++)
        if (s != S_ARGV0)
            free(got[s]);
    ot_print("strings checked: %d", NSTR);
    return ot_finish();
}
