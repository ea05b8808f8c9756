/*
 * test_shim_settings.c - the DSM_* variables the OpenMP shim parses itself
 * (omp-shim/dsm_settings.c): DSM_THREADS_PER_RANK and DSM_STACK_SIZE, their
 * defaults, limits and messages.  Only the pure parser is built in; the
 * rest of the shim is not linked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "shim.h"

#define MIB ((size_t)1 << 20)

static char errbuf[512];

static struct shim_dsm_settings ok(char *v)
{
    char *envp[] = { "PATH=/bin", v, NULL };
    struct shim_dsm_settings s;
    memset(&s, 0xee, sizeof s);
    if (shim_dsm_settings_parse(&s, envp, errbuf, sizeof errbuf) != 0)
        fail_msg("%s: expected success: %s", v, errbuf);
    return s;
}

static void bad(char *v, const char *needle)
{
    char *envp[] = { v, NULL };
    struct shim_dsm_settings s;
    memset(errbuf, 0, sizeof errbuf);
    if (shim_dsm_settings_parse(&s, envp, errbuf, sizeof errbuf) != -DSM_EINVAL)
        fail_msg("%s: expected -DSM_EINVAL", v);
    if (!strstr(errbuf, needle))
        fail_msg("%s: message \"%s\" lacks \"%s\"", v, errbuf, needle);
}

static void test_defaults(void **state)
{
    struct shim_dsm_settings s;
    (void)state;
    assert_int_equal(shim_dsm_settings_parse(&s, NULL, errbuf, sizeof errbuf), 0);
    assert_int_equal(s.threads_per_rank, 1);
    assert_int_equal(s.stack_size, 8 * MIB);
    s = ok("DSM_HEAP_SIZE=1G");      /* libdsm's: not looked at here */
    assert_int_equal(s.threads_per_rank, 1);
}

static void test_threads_per_rank(void **state)
{
    (void)state;
    assert_int_equal(ok("DSM_THREADS_PER_RANK=4").threads_per_rank, 4);
    assert_int_equal(ok("DSM_THREADS_PER_RANK=64").threads_per_rank, 64);
    bad("DSM_THREADS_PER_RANK=0", "DSM_THREADS_PER_RANK=0: bad value; give a number of "
        "OpenMP threads per rank from 1 to 64");
    bad("DSM_THREADS_PER_RANK=65", "DSM_THREADS_PER_RANK");
    bad("DSM_THREADS_PER_RANK=", "DSM_THREADS_PER_RANK");
    bad("DSM_THREADS_PER_RANK=+2", "DSM_THREADS_PER_RANK");
    bad("DSM_THREADS_PER_RANK=2x", "DSM_THREADS_PER_RANK");
}

static void test_stack_size(void **state)
{
    (void)state;
    assert_int_equal(ok("DSM_STACK_SIZE=16M").stack_size, 16 * MIB);
    assert_int_equal(ok("DSM_STACK_SIZE=64K").stack_size, (size_t)64 << 10);
    assert_int_equal(ok("DSM_STACK_SIZE=4G").stack_size, (size_t)1 << 32);
    bad("DSM_STACK_SIZE=32K", "DSM_STACK_SIZE=32K: bad value; give a stack size from 64K "
        "to 4G, e.g. DSM_STACK_SIZE=16M");
    bad("DSM_STACK_SIZE=8G", "DSM_STACK_SIZE");
    bad("DSM_STACK_SIZE=big", "DSM_STACK_SIZE");
}

/* The names the shim gives libdsm are the ones it parses. */
static void test_names(void **state)
{
    (void)state;
    assert_string_equal(shim_dsm_settings_names[0], "DSM_THREADS_PER_RANK");
    assert_string_equal(shim_dsm_settings_names[1], "DSM_STACK_SIZE");
    assert_null(shim_dsm_settings_names[2]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_threads_per_rank),
        cmocka_unit_test(test_stack_size),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
