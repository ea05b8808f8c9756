/*
 * cxx_global_containers.cc - standard containers at file scope.
 *
 * Containers whose elements are on the heap, made before main by static
 * constructors: a std::vector<double> initialised by a function, a
 * std::map<int, std::string> from an initialiser list, a std::vector<int>
 * of primes filled by the constructor of another global object, a
 * std::vector<std::vector<int>> (one heap block per row).  main changes
 * them before the first region (every rank ran the constructors, rank 0
 * alone runs main: a rank that read its own copy would see the old
 * values): every element of the vector, a string of the map, a row, and
 * the primes moved to a larger block (the one made before main freed).
 * The team reads them all (a reduction over the vector, lookups in the map, the rows
 * summed by a dynamic loop).  Then containers changed by the team: a
 * global vector that every thread appends to under a critical section (it
 * reallocates while other ranks append), a global map that every thread
 * inserts into under a critical section, each read back whole after the
 * region; a std::string grown by the team.  Under the shim the elements
 * made before main are heap memory allocated before the DSM started.
 */
#define OT_NAME "cxx_global_containers"
#include "omptest.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <vector>

namespace {

const int kVec = 20000;

std::vector<double> make_vec()
{
    std::vector<double> v(kVec);
    for (int i = 0; i < kVec; i++)
        v[i] = 0.5 * i;
    return v;
}

std::vector<double> g_vec = make_vec();
std::map<int, std::string> g_names = {
    {1, "one"}, {2, "two"}, {3, "three"}, {5, "five"}, {8, "eight"},
    {13, "thirteen"}, {21, "twenty-one"}, {34, "thirty-four"},
};
std::vector<int> g_primes;
std::vector<std::vector<int>> g_rows;

/* A global object whose constructor fills other globals (defined above it
 * in this file, so constructed first). */
struct Filler {
    Filler()
    {
        for (int p = 2; g_primes.size() < 500; p++) {
            bool prime = true;
            for (int q : g_primes) {
                if (q * q > p)
                    break;
                if (p % q == 0) {
                    prime = false;
                    break;
                }
            }
            if (prime)
                g_primes.push_back(p);
        }
        for (int r = 0; r < 64; r++)
            g_rows.push_back(std::vector<int>(100 + r, r));
    }
} g_filler;

/* Changed by the team. */
std::vector<long> g_appended;
std::map<long, long> g_inserted;
std::string g_text;

}  // namespace

int main()
{
    int n = ot_team_size();
    const int per_thread = 200;
    double vsum = 0;
    long name_len = 0, prime_sum = 0, row_sum = 0;

    ot_print("threads=%d", n);
    OT_CHECK(g_primes.size() == 500 && g_primes[499] == 3571,
             "primes from a static constructor: %zu, last %d", g_primes.size(),
             g_primes.empty() ? -1 : g_primes.back());

    for (double &x : g_vec)
        x += 1;
    g_names[21] = "veintiuno";
    g_names[34] = "thirty-four, made longer than a short string";
    g_rows[0].assign(100, 1000);
    g_primes.reserve(4 * g_primes.capacity());

#pragma omp parallel reduction(+:vsum, name_len, prime_sum, row_sum)
    {
        int me = omp_get_thread_num();

#pragma omp for schedule(static)
        for (int i = 0; i < kVec; i++)
            vsum += g_vec[i];
        for (const auto &kv : g_names) {
            auto it = g_names.find(kv.first);
            if (it == g_names.end() || it->second != kv.second)
                ot_error("g_names[%d] not found in the team", kv.first);
            name_len += (long)kv.second.size();
        }
#pragma omp for schedule(static, 7)
        for (int i = 0; i < 500; i++)
            prime_sum += g_primes[i];
#pragma omp for schedule(dynamic, 3)
        for (int r = 0; r < 64; r++)
            row_sum += std::accumulate(g_rows[r].begin(), g_rows[r].end(), 0L);

        for (int k = 0; k < per_thread; k++) {
#pragma omp critical(append)
            g_appended.push_back((long)me * 100000 + k);
#pragma omp critical(insert)
            g_inserted[(long)me * 100000 + k] = k;
        }
#pragma omp critical(text)
        g_text += std::string(10, (char)('a' + me % 26));
    }

    double want_vsum = 0.5 * ((double)kVec * (kVec - 1) / 2) + kVec;
    OT_CHECK(vsum == want_vsum, "sum of g_vec %.1f, expected %.1f", vsum,
             want_vsum);
    long want_len = 0;
    for (const auto &kv : g_names)
        want_len += (long)kv.second.size();
    OT_CHECK(name_len == n * want_len, "name lengths %ld, expected %ld",
             name_len, n * want_len);
    long want_primes = std::accumulate(g_primes.begin(), g_primes.end(), 0L);
    OT_CHECK(prime_sum == want_primes, "sum of primes %ld, expected %ld",
             prime_sum, want_primes);
    long want_rows = 100L * 1000;
    for (int r = 1; r < 64; r++)
        want_rows += (long)r * (100 + r);
    OT_CHECK(row_sum == want_rows, "sum of rows %ld, expected %ld", row_sum,
             want_rows);

    std::vector<long> sorted(g_appended);
    std::sort(sorted.begin(), sorted.end());
    std::vector<long> want;
    for (int t = 0; t < n; t++)
        for (int k = 0; k < per_thread; k++)
            want.push_back((long)t * 100000 + k);
    OT_CHECK(sorted == want, "appended vector: %zu elements, expected %zu, "
             "or other values", sorted.size(), want.size());
    bool map_ok = g_inserted.size() == want.size();
    for (long key : want) {
        auto it = g_inserted.find(key);
        if (it == g_inserted.end() || it->second != key % 100000)
            map_ok = false;
    }
    OT_CHECK(map_ok, "inserted map: %zu entries, expected %zu, or wrong "
             "values", g_inserted.size(), want.size());
    OT_CHECK(g_text.size() == (size_t)n * 10, "text of %zu characters, "
             "expected %d", g_text.size(), n * 10);

    ot_print("vector sum=%.1f names=%ld primes=%ld rows=%ld", vsum, name_len,
             prime_sum, row_sum);
    ot_print("appended=%zu inserted=%zu text=%zu", g_appended.size(),
             g_inserted.size(), g_text.size());
    return ot_finish();
}
