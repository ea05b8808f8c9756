/*
 * cxx_task.cc - C++ objects in tasks.
 *
 *  - a std::vector<int> and a std::string firstprivate in 20 tasks: each
 *    task gets a copy made by the copy constructor when it is created (g++
 *    emits a copy function, cpyfn, for the task), while the creator
 *    grows, changes and clears its own right after; a class whose copy
 *    constructor and destructor count themselves: after a taskwait every
 *    copy made for a task has been destroyed;
 *  - lambdas: a lambda called in tasks with its captures by reference, a
 *    lambda object firstprivate (copied with what it captured by value),
 *    a std::function firstprivate, tasks made inside a lambda;
 *  - a member function whose tasks update the object's members through
 *    this, with a taskwait;
 *  - a taskgroup around tasks that make children, each writing a
 *    std::string into a vector slot of its own (the vector sized before);
 *  - an exception thrown and caught inside a task;
 *  - every thread at once: tasks with a firstprivate vector each.
 */
#define OT_NAME "cxx_task"
#include "omptest.h"

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int ROUNDS = 20;
constexpr int PER_THREAD = 6;

int g_constructed, g_copied, g_destroyed;

struct Counted {
    explicit Counted(int v) : v(v)
    {
#pragma omp atomic
        g_constructed++;
    }
    Counted(const Counted &o) : v(o.v)
    {
#pragma omp atomic
        g_copied++;
    }
    Counted &operator=(const Counted &) = default;
    ~Counted()
    {
#pragma omp atomic
        g_destroyed++;
    }
    int v;
};

int counter(int *c)
{
    int k;

#pragma omp atomic read
    k = *c;
    return k;
}

std::vector<int> round_values(int r)
{
    std::vector<int> v;

    for (int i = 0; i < 10 + r; i++)
        v.push_back(r * 100 + i);
    return v;
}

bool g_round_ok[ROUNDS];
bool g_team_ok[OT_MAX_THREADS][PER_THREAD];

class Grid {
public:
    explicit Grid(int n) : cells_(n, 0), n_(n) {}

    /* Each task writes its own cells through this. */
    void fill(int scale)
    {
        for (int i = 0; i < n_; i += 10) {
#pragma omp task firstprivate(i, scale)
            for (int j = i; j < i + 10 && j < n_; j++)
                cells_[j] = j * scale;
        }
#pragma omp taskwait
    }

    long sum() const
    {
        long s = 0;

        for (int c : cells_)
            s += c;
        return s;
    }

private:
    std::vector<int> cells_;
    int n_;
};

} // namespace

int main()
{
    int n = ot_team_size();

    ot_print("threads=%d", n);

#pragma omp parallel
#pragma omp single
    {
        std::vector<int> v;
        std::string s;
        Counted c(0);

        for (int r = 0; r < ROUNDS; r++) {
            v = round_values(r);
            s = "round " + std::to_string(r);
            c.v = r;
#pragma omp task firstprivate(v, s, c, r)
            {
                bool ok = v == round_values(r) &&
                          s == "round " + std::to_string(r) && c.v == r;

                /* The copies are the task's own. */
                v.push_back(-1);
                s += " (changed)";
                g_round_ok[r] = ok;
            }
            v.push_back(-2);
            v[0] = -3;
            s = "spoilt";
            c.v = -1;
            if (r % 2)
                v.clear();
        }
#pragma omp taskwait
    }
    for (int r = 0; r < ROUNDS; r++)
        OT_CHECK(g_round_ok[r], "round %d: the task's vector, string or "
                 "object was not the creator's value at creation", r);
    {
        int made = counter(&g_constructed) + counter(&g_copied);
        int gone = counter(&g_destroyed);

        OT_CHECK(made == gone, "%d Counted objects made (%d copies), %d "
                 "destroyed: every task's copy should be gone", made,
                 counter(&g_copied), gone);
        OT_CHECK(counter(&g_copied) >= ROUNDS, "%d copies of Counted for %d "
                 "tasks with it firstprivate", counter(&g_copied), ROUNDS);
    }
    ot_print("%d tasks with a firstprivate vector, string and object: "
             "copies at creation, all destroyed", ROUNDS);

    long by_ref = 0, by_value = 0, by_function = 0, nested = 0;
#pragma omp parallel
#pragma omp single
    {
        long total = 0;
        auto add = [&total](long k) {
#pragma omp atomic
            total += k;
        };

        for (int k = 1; k <= 10; k++) {
#pragma omp task firstprivate(k)
            add(k);
        }
#pragma omp taskwait
        by_ref = total;

        std::vector<long> results(10, 0);
        for (int k = 0; k < 10; k++) {
            auto square = [k]() { return (long)k * k; };
            long *slot = &results[k];
#pragma omp task firstprivate(square, slot)
            *slot = square();
        }
        std::function<long(long)> triple = [](long x) { return 3 * x; };
        long tripled[5] = { 0 };
        for (int k = 0; k < 5; k++) {
#pragma omp task firstprivate(triple, k) shared(tripled)
            tripled[k] = triple(k + 1);
        }
        triple = [](long x) { return -x; };   /* the tasks have copies */
#pragma omp taskwait
        for (long r : results)
            by_value += r;
        for (long t : tripled)
            by_function += t;

        auto spawn = [](long *out, int count) {
            for (int i = 0; i < count; i++) {
#pragma omp task firstprivate(i, out)
                out[i] = i + 100;
            }
#pragma omp taskwait
        };
        long made[8] = { 0 };
        spawn(made, 8);
        for (long m : made)
            nested += m;
    }
    OT_CHECK(by_ref == 55, "a lambda capturing by reference: %ld, expected "
             "55", by_ref);
    OT_CHECK(by_value == 285, "firstprivate lambdas: %ld, expected 285",
             by_value);
    OT_CHECK(by_function == 45, "firstprivate std::function: %ld, expected "
             "45", by_function);
    OT_CHECK(nested == 828, "tasks made in a lambda: %ld, expected 828",
             nested);
    ot_print("lambdas: %ld %ld %ld %ld", by_ref, by_value, by_function,
             nested);

    long grid_sum = -1;
    std::vector<std::string> names(40);
    int caught = 0;
#pragma omp parallel
#pragma omp single
    {
        Grid g(95);

        g.fill(3);
        grid_sum = g.sum();

#pragma omp taskgroup
        {
            for (int t = 0; t < 8; t++) {
#pragma omp task firstprivate(t) shared(names)
                {
                    for (int c = 0; c < 5; c++) {
#pragma omp task firstprivate(t, c) shared(names)
                        names[t * 5 + c] = "node " + std::to_string(t) +
                            "." + std::to_string(c);
                    }
                }
            }
        }

#pragma omp task shared(caught)
        {
            try {
                std::vector<int> small(3);
                (void)small.at(7);
            } catch (const std::out_of_range &) {
                caught = 1;
            }
        }
#pragma omp taskwait
    }
    OT_CHECK(grid_sum == 3L * 95 * 94 / 2, "a member function's tasks: sum "
             "%ld, expected %ld", grid_sum, 3L * 95 * 94 / 2);
    {
        int bad = 0;

        for (int t = 0; t < 8; t++)
            for (int c = 0; c < 5; c++)
                if (names[t * 5 + c] != "node " + std::to_string(t) + "." +
                    std::to_string(c))
                    bad++;
        OT_CHECK(bad == 0, "taskgroup: %d strings not written at its end",
                 bad);
    }
    OT_CHECK(caught == 1, "an exception in a task was not caught there");
    ot_print("member function tasks: %ld; taskgroup of strings; an "
             "exception caught in a task", grid_sum);

#pragma omp parallel
    {
        int me = omp_get_thread_num();
        std::vector<int> mine;

        for (int j = 0; j < PER_THREAD; j++) {
            mine.assign(5 + j, me * 10 + j);
#pragma omp task firstprivate(mine, me, j)
            g_team_ok[me][j] = mine == std::vector<int>(5 + j, me * 10 + j);
            mine.assign(3, -1);
        }
    }
    for (int t = 0; t < n; t++)
        for (int j = 0; j < PER_THREAD; j++)
            OT_CHECK(g_team_ok[t][j], "thread %d, task %d: its vector was "
                     "not the creator's at creation", t, j);
    ot_print("every thread: %d tasks with a firstprivate vector",
             n * PER_THREAD);
    return ot_finish();
}
