/*
 * cxx_templates.cc - templates with OpenMP constructs in them.
 *
 * A function template with a "parallel for" reduction, instantiated for
 * int, long, double and a small vector struct with its own operator+ (a
 * "declare reduction" for it); a class template whose member function runs
 * an orphaned "omp for" over its std::vector storage, called in a region
 * for two instantiations; a template with a non-type parameter (the chunk
 * of a dynamic schedule) checking that its chunks stay whole; a generic
 * lambda called in a loop; each against the sequential result.
 */
#define OT_NAME "cxx_templates"
#include "omptest.h"

#include <vector>

namespace {

struct Vec3 {
    long x, y, z;
    Vec3 operator+(const Vec3 &o) const { return {x + o.x, y + o.y, z + o.z}; }
    bool operator==(const Vec3 &o) const
    {
        return x == o.x && y == o.y && z == o.z;
    }
};

#pragma omp declare reduction(+ : Vec3 : omp_out = omp_out + omp_in) \
    initializer(omp_priv = Vec3{0, 0, 0})

template <typename T, typename F>
T parallel_sum(int count, F value)
{
    T acc = T();
    /* T() is the identity of + for every T used here. */
#pragma omp parallel for schedule(static) reduction(+ : acc)
    for (int i = 0; i < count; i++)
        acc = acc + value(i);
    return acc;
}

template <typename T>
class Field {
public:
    explicit Field(int len) : data_(len) {}

    /* Called by every thread of a region: an orphaned loop. */
    void fill(T scale)
    {
#pragma omp for schedule(static, 64)
        for (int i = 0; i < (int)data_.size(); i++)
            data_[i] = scale * (T)i;
    }

    T sum() const
    {
        T acc = T();
#pragma omp parallel for schedule(guided, 8) reduction(+ : acc)
        for (int i = 0; i < (int)data_.size(); i++)
            acc += data_[i];
        return acc;
    }

private:
    std::vector<T> data_;
};

/* schedule(dynamic, Chunk): records the thread of each iteration. */
template <int Chunk>
int chunks_split(int count)
{
    std::vector<int> owner(count, -1);
    int split = 0;

#pragma omp parallel for schedule(dynamic, Chunk)
    for (int i = 0; i < count; i++)
        owner[i] = omp_get_thread_num();
    for (int i = 1; i < count; i++)
        if (i % Chunk != 0 && owner[i] != owner[i - 1])
            split++;
    for (int i = 0; i < count; i++)
        if (owner[i] < 0)
            split++;
    return split;
}

}  // namespace

int main()
{
    int n = ot_team_size();
    const int count = 10000;

    ot_print("threads=%d", n);

    int si = parallel_sum<int>(count, [](int i) { return i % 7; });
    long sl = parallel_sum<long>(count, [](int i) { return (long)i * i; });
    double sd = parallel_sum<double>(count, [](int i) { return 0.5 * i; });
    Vec3 sv = parallel_sum<Vec3>(count, [](int i) {
        return Vec3{i, 2L * i, (long)(i % 3)};
    });

    int ri = 0;
    long rl = 0;
    double rd = 0;
    Vec3 rv = {0, 0, 0};
    for (int i = 0; i < count; i++) {
        ri += i % 7;
        rl += (long)i * i;
        rd += 0.5 * i;
        rv = rv + Vec3{i, 2L * i, (long)(i % 3)};
    }
    OT_CHECK(si == ri, "int sum %d, expected %d", si, ri);
    OT_CHECK(sl == rl, "long sum %ld, expected %ld", sl, rl);
    OT_CHECK(sd == rd, "double sum %.1f, expected %.1f", sd, rd);
    OT_CHECK(sv == rv, "Vec3 sum (%ld, %ld, %ld), expected (%ld, %ld, %ld)",
             sv.x, sv.y, sv.z, rv.x, rv.y, rv.z);

    Field<double> fd(5000);
    Field<long> fl(3000);
#pragma omp parallel
    {
        fd.fill(0.25);
        fl.fill(3);
    }
    double fds = fd.sum();
    long fls = fl.sum();
    OT_CHECK(fds == 0.25 * 4999 * 5000 / 2, "Field<double> sum %.2f", fds);
    OT_CHECK(fls == 3L * 2999 * 3000 / 2, "Field<long> sum %ld", fls);

    int split3 = chunks_split<3>(1000);
    int split17 = chunks_split<17>(1000);
    OT_CHECK(split3 == 0, "dynamic,3 in a template: %d chunks split", split3);
    OT_CHECK(split17 == 0, "dynamic,17 in a template: %d chunks split",
             split17);

    ot_print("int=%d long=%ld double=%.1f vec=(%ld, %ld, %ld)", si, sl, sd,
             sv.x, sv.y, sv.z);
    ot_print("fields=%.2f %ld", fds, fls);
    return ot_finish();
}
