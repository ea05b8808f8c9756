/*
 * cxx_new_delete.cc - new and delete in parallel regions.
 *
 *  - an object made with new by the thread that runs a single (a
 *    polymorphic one: its vtable pointer must mean the same everywhere),
 *    its pointer left in a shared variable, read and called by every
 *    thread after the single's barrier, deleted by another single;
 *  - every thread makes an array with new[] and an object holding a
 *    std::vector, the next thread reads both after a barrier, and deletes
 *    them (memory freed by a thread other than the one that allocated it);
 *  - a std::shared_ptr made by one thread and copied by all (its count
 *    changed by every thread with atomics), the last copy freeing it;
 *  - std::unique_ptr in every thread, 200 small new/delete pairs each;
 * 10 rounds.
 */
#define OT_NAME "cxx_new_delete"
#include "omptest.h"

#include <memory>
#include <vector>

namespace {

struct Shape {
    virtual ~Shape() = default;
    virtual long area() const = 0;
};

struct Rect : Shape {
    Rect(long w, long h) : w_(w), h_(h) {}
    long area() const override { return w_ * h_; }
    long w_, h_;
};

struct Square : Shape {
    explicit Square(long s) : s_(s) {}
    long area() const override { return s_ * s_; }
    long s_;
};

struct Bag {
    explicit Bag(int owner, int len) : owner(owner), values(len)
    {
        for (int i = 0; i < len; i++)
            values[i] = owner * 1000 + i;
    }
    int owner;
    std::vector<int> values;
};

Shape *g_shape;
long *g_arrays[OT_MAX_THREADS];
Bag *g_bags[OT_MAX_THREADS];
std::shared_ptr<std::vector<long>> g_shared;
int g_destroyed;

struct Counted {
    explicit Counted(int v) : v(v) {}
    ~Counted()
    {
#pragma omp atomic
        g_destroyed++;
    }
    int v;
};

}  // namespace

int main()
{
    int n = ot_team_size();
    const int rounds = 10;
    long area_sum = 0, bad = 0, shared_sum = 0, small = 0;

    ot_print("threads=%d", n);

#pragma omp parallel reduction(+:area_sum, bad, shared_sum, small)
    {
        int me = omp_get_thread_num();
        int nt = omp_get_num_threads();
        int next = (me + 1) % nt;

        for (int r = 0; r < rounds; r++) {
#pragma omp single
            {
                if (r % 2 == 0)
                    g_shape = new Rect(r + 1, 3);
                else
                    g_shape = new Square(r + 1);
            }
            area_sum += g_shape->area();
#pragma omp barrier
#pragma omp single
            {
                delete g_shape;
                g_shape = nullptr;
            }

            int len = 100 + 10 * me + r;
            g_arrays[me] = new long[len];
            for (int i = 0; i < len; i++)
                g_arrays[me][i] = (long)me * 100000 + r * 1000 + i;
            g_bags[me] = new Bag(me, 50 + r);
#pragma omp barrier
            int nlen = 100 + 10 * next + r;
            for (int i = 0; i < nlen; i++)
                if (g_arrays[next][i] != (long)next * 100000 + r * 1000 + i)
                    bad++;
            if (g_bags[next]->owner != next
                || g_bags[next]->values.size() != (size_t)(50 + r)
                || g_bags[next]->values[49] != next * 1000 + 49)
                bad++;
#pragma omp barrier
            /* Free what the previous thread made. */
            delete[] g_arrays[next];
            delete g_bags[next];
#pragma omp barrier

#pragma omp single
            {
                g_shared = std::make_shared<std::vector<long>>(1000, r);
            }
            {
                std::shared_ptr<std::vector<long>> mine = g_shared;
                shared_sum += (*mine)[999];
#pragma omp barrier
#pragma omp single
                g_shared.reset();
                /* mine is the last owners' copies: the vector goes when
                 * the last thread leaves this block. */
            }

            for (int k = 0; k < 200 / rounds; k++) {
                std::unique_ptr<Counted> p(new Counted(k));
                small += p->v;
            }
        }
    }

    long want_area = 0;
    for (int r = 0; r < rounds; r++)
        want_area += r % 2 == 0 ? (long)(r + 1) * 3 : (long)(r + 1) * (r + 1);
    OT_CHECK(area_sum == want_area * n, "areas %ld, expected %ld", area_sum,
             want_area * n);
    OT_CHECK(bad == 0, "%ld values read from another thread's new wrong",
             bad);
    OT_CHECK(shared_sum == (long)n * rounds * (rounds - 1) / 2, "shared_ptr "
             "values %ld, expected %ld", shared_sum,
             (long)n * rounds * (rounds - 1) / 2);
    OT_CHECK(g_shared == nullptr, "g_shared still set");
    OT_CHECK(g_destroyed == n * (200 / rounds) * rounds, "destructors run %d, "
             "expected %d", g_destroyed, n * (200 / rounds) * rounds);
    OT_CHECK(small == (long)n * rounds * 190, "unique_ptr values %ld", small);

    ot_print("areas=%ld shared=%ld destroyed=%d small=%ld", area_sum,
             shared_sum, g_destroyed, small);
    return ot_finish();
}
