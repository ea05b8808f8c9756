/*
 * cxx_local_static.cc - function-local statics.
 *
 * A function-local static object with a constructor that takes time and
 * counts its runs, first reached by every thread of a region at once: the
 * C++ runtime's guard (__cxa_guard_acquire/release, a futex wait on the
 * guard word, in shared memory under the shim) must let exactly one
 * thread construct it and make the others wait for the finished object.
 * Also a local static std::vector built by a function, a local static
 * std::string, a local static in a function template (one per
 * instantiation), a plain local static counter updated with atomics, and
 * one initialised by the initial thread before the first region.
 * 5 rounds of regions; the objects are made once in all.
 */
#define OT_NAME "cxx_local_static"
#include "omptest.h"

#include <string>
#include <vector>

namespace {

int g_constructed;

struct Slow {
    Slow()
    {
        /* Long enough that the other threads arrive while it runs. */
        double x = 1;
        for (int i = 0; i < 200000; i++)
            x = x * 1.0000001 + 1e-9;
        value = x > 0 ? 12345 : 0;
#pragma omp atomic
        g_constructed++;
    }
    long value;
};

const Slow &slow()
{
    static Slow s;
    return s;
}

const std::vector<int> &squares()
{
    static const std::vector<int> v = [] {
        std::vector<int> r;
        for (int i = 0; i < 1000; i++)
            r.push_back(i * i);
#pragma omp atomic
        g_constructed++;
        return r;
    }();
    return v;
}

const std::string &greeting()
{
    static const std::string s = std::string("made by the first caller, ")
                                 + std::to_string(42);
    return s;
}

template <typename T>
T &per_type()
{
    static T value = T(7);
    return value;
}

int count_calls()
{
    static int calls;
    int k;
#pragma omp atomic capture
    k = ++calls;
    return k;
}

const std::string &early()
{
    static const std::string s(100, 'e');
    return s;
}

}  // namespace

int main()
{
    int n = ot_team_size();
    const int rounds = 5;
    long slow_sum = 0, sq_sum = 0, text_len = 0, typed = 0, early_len = 0;
    int max_call = 0;

    ot_print("threads=%d", n);
    /* The initial thread makes this one before any region. */
    OT_CHECK(early().size() == 100, "early static of %zu characters",
             early().size());

    for (int r = 0; r < rounds; r++) {
#pragma omp parallel reduction(+:slow_sum, sq_sum, text_len, typed, early_len) \
    reduction(max:max_call)
        {
            slow_sum += slow().value;
            sq_sum += squares()[999];
            text_len += (long)greeting().size();
            typed += per_type<int>() + (long)per_type<double>();
            early_len += (long)early().size();
            int k = count_calls();
            if (k > max_call)
                max_call = k;
        }
    }
#pragma omp parallel
    {
#pragma omp atomic
        per_type<int>() += 1;
    }

    long calls = (long)n * rounds;
    OT_CHECK(g_constructed == 2, "local statics constructed %d times, "
             "expected 2", g_constructed);
    OT_CHECK(slow_sum == 12345 * calls, "slow values %ld, expected %ld",
             slow_sum, 12345 * calls);
    OT_CHECK(sq_sum == 998001L * calls, "squares %ld", sq_sum);
    OT_CHECK(text_len == 28 * calls, "greeting lengths %ld, expected %ld",
             text_len, 28 * calls);
    OT_CHECK(typed == 14 * calls, "template statics %ld, expected %ld", typed,
             14 * calls);
    OT_CHECK(early_len == 100 * calls, "early static %ld", early_len);
    OT_CHECK(max_call == n * rounds, "calls counted %d, expected %ld",
             max_call, calls);
    OT_CHECK(per_type<int>() == 7 + n, "template static after atomics %d, "
             "expected %d", per_type<int>(), 7 + n);

    ot_print("constructed=%d slow=%ld squares=%ld text=%ld typed=%ld calls=%d "
             "int static=%d", g_constructed, slow_sum, sq_sum, text_len, typed,
             max_call, per_type<int>());
    return ot_finish();
}
