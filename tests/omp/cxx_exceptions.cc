/*
 * cxx_exceptions.cc - exceptions thrown and caught inside parallel
 * regions (as OpenMP requires: none leaves the structured block).
 *
 * In every thread: a std::runtime_error with a message built from the
 * thread number, thrown three calls deep and caught by reference in the
 * region; an exception of the program's own class hierarchy caught by its
 * base class (the type match reads type_info objects, which must be the
 * same everywhere); a rethrow with "throw;" to an outer handler; an
 * exception from std::vector::at; one thrown in some iterations of a
 * worksharing loop and caught in the same iteration; destructors of
 * locals run by the unwinding (counted); std::exception_ptr carrying an
 * exception from a thread to the initial thread after the region.
 * 20 rounds.  The exception objects are allocated by
 * __cxa_allocate_exception (malloc), the unwinding walks stacks that are
 * in shared memory under the shim.
 */
#define OT_NAME "cxx_exceptions"
#include "omptest.h"

#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct AppError {
    explicit AppError(int code) : code(code) {}
    virtual ~AppError() = default;
    virtual int kind() const { return 1; }
    int code;
};

struct DeepError : AppError {
    explicit DeepError(int code) : AppError(code) {}
    int kind() const override { return 2; }
};

int g_destructed;

struct Guard {
    ~Guard()
    {
#pragma omp atomic
        g_destructed++;
    }
};

void level3(int me, int r)
{
    Guard g;
    if (r >= 0)
        throw std::runtime_error("thread " + std::to_string(me) + " round "
                                 + std::to_string(r));
}

void level2(int me, int r)
{
    Guard g;
    level3(me, r);
}

void level1(int me, int r)
{
    Guard g;
    level2(me, r);
}

void throw_app(int me)
{
    if (me % 2 == 0)
        throw DeepError(me);
    throw AppError(me);
}

std::exception_ptr g_saved[OT_MAX_THREADS];

}  // namespace

int main()
{
    int n = ot_team_size();
    const int rounds = 20;
    long caught = 0, msg_ok = 0, app_kinds = 0, rethrown = 0, at_caught = 0;
    long loop_caught = 0;

    ot_print("threads=%d", n);

#pragma omp parallel reduction(+:caught, msg_ok, app_kinds, rethrown, at_caught, loop_caught)
    {
        int me = omp_get_thread_num();
        std::vector<int> small(5, me);

        for (int r = 0; r < rounds; r++) {
            try {
                level1(me, r);
                ot_error("level1 returned instead of throwing");
            } catch (const std::runtime_error &e) {
                caught++;
                std::string want = "thread " + std::to_string(me) + " round "
                                   + std::to_string(r);
                if (want == e.what())
                    msg_ok++;
                else
                    ot_error("message '%s', expected '%s'", e.what(),
                             want.c_str());
            }

            try {
                throw_app(me);
            } catch (const AppError &e) {
                if (e.code == me && e.kind() == (me % 2 == 0 ? 2 : 1))
                    app_kinds++;
            }

            try {
                try {
                    throw DeepError(r);
                } catch (const AppError &) {
                    throw;
                }
            } catch (const DeepError &e) {
                if (e.code == r)
                    rethrown++;
            }

            try {
                small.at(5 + r) = 1;
            } catch (const std::out_of_range &) {
                at_caught++;
            }
        }

#pragma omp for schedule(dynamic, 2)
        for (int i = 0; i < 100; i++) {
            try {
                if (i % 3 == 0)
                    throw i;
            } catch (int v) {
                if (v == i)
                    loop_caught++;
            }
        }

        try {
            throw std::logic_error("saved by thread " + std::to_string(me));
        } catch (...) {
            g_saved[me] = std::current_exception();
        }
    }

    long saved_ok = 0;
    for (int t = 0; t < n; t++) {
        try {
            std::rethrow_exception(g_saved[t]);
        } catch (const std::logic_error &e) {
            if (std::string(e.what()) == "saved by thread " + std::to_string(t))
                saved_ok++;
            else
                ot_error("saved exception of thread %d says '%s'", t, e.what());
        }
        g_saved[t] = nullptr;
    }

    OT_CHECK(caught == (long)n * rounds, "caught %ld, expected %ld", caught,
             (long)n * rounds);
    OT_CHECK(msg_ok == caught, "messages right %ld of %ld", msg_ok, caught);
    OT_CHECK(app_kinds == (long)n * rounds, "own hierarchy caught right %ld, "
             "expected %ld", app_kinds, (long)n * rounds);
    OT_CHECK(rethrown == (long)n * rounds, "rethrown %ld, expected %ld",
             rethrown, (long)n * rounds);
    OT_CHECK(at_caught == (long)n * rounds, "vector::at caught %ld, expected "
             "%ld", at_caught, (long)n * rounds);
    OT_CHECK(loop_caught == 34, "caught in the loop %ld, expected 34",
             loop_caught);
    OT_CHECK(g_destructed == 3 * n * rounds, "destructors run by unwinding %d,"
             " expected %d", g_destructed, 3 * n * rounds);
    OT_CHECK(saved_ok == n, "exception_ptr rethrown right %ld of %d",
             saved_ok, n);

    ot_print("caught=%ld own=%ld rethrown=%ld at=%ld loop=%ld destructed=%d "
             "saved=%ld", caught, app_kinds, rethrown, at_caught, loop_caught,
             g_destructed, saved_ok);
    return ot_finish();
}
