/*
 * cxx_static_members.cc - static data members and objects built by static
 * constructors.
 *
 * A class with static members of every storage: an int with an
 * initialiser (.data), a long without (.bss), a const table, a
 * std::vector<std::string> (elements on the heap), and an instance of the
 * class itself, whose constructor (run before main) fills an array member
 * and allocates a buffer with new[].  A global object of another class
 * whose constructor allocates a matrix with new[] and whose destructor
 * frees it (after main).  The team reads all of them, adds to the static
 * counter with atomics, and appends to the static vector under a critical
 * section (main first changes the instance's array and the vector's string,
 * after every rank ran the constructors); a static member function with an orphaned "omp for" fills the
 * buffer the constructor made.
 */
#define OT_NAME "cxx_static_members"
#include "omptest.h"

#include <string>
#include <vector>

namespace {

class Registry {
public:
    static int counter;
    static long total;
    static const int table[8];
    static std::vector<std::string> names;
    static Registry instance;

    double factors[64];
    long *buffer;
    int buffer_len;

    Registry() : buffer(new long[5000]), buffer_len(5000)
    {
        for (int i = 0; i < 64; i++)
            factors[i] = 0.25 * i;
        for (int i = 0; i < buffer_len; i++)
            buffer[i] = -1;
        names.push_back("made before main");
    }
    ~Registry() { delete[] buffer; }

    /* An orphaned loop in a static member function. */
    static void fill(int scale)
    {
#pragma omp for schedule(static, 100)
        for (int i = 0; i < instance.buffer_len; i++)
            instance.buffer[i] = (long)i * scale;
    }
};

/* Definitions in this order: names before instance, whose constructor
 * uses it. */
int Registry::counter = 100;
long Registry::total;
const int Registry::table[8] = {2, 3, 5, 7, 11, 13, 17, 19};
std::vector<std::string> Registry::names;
Registry Registry::instance;

class Matrix {
public:
    explicit Matrix(int n) : n_(n), data_(new double[(size_t)n * n])
    {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                data_[(size_t)i * n + j] = i == j ? 2.0 : 0.5;
    }
    ~Matrix() { delete[] data_; }
    double at(int i, int j) const { return data_[(size_t)i * n_ + j]; }
    int size() const { return n_; }

private:
    int n_;
    double *data_;
};

const Matrix g_matrix(120);

}  // namespace

int main()
{
    int n = ot_team_size();
    double fsum = 0, msum = 0;
    long tsum = 0, bad = 0;

    ot_print("threads=%d", n);
    OT_CHECK(Registry::names.size() == 1, "names before main: %zu",
             Registry::names.size());
    /* Changed by main (rank 0 only under the shim) after every rank ran
     * the constructors. */
    for (int i = 0; i < 64; i++)
        Registry::instance.factors[i] *= 2;
    Registry::names[0] += ", changed by main";

#pragma omp parallel reduction(+:fsum, msum, tsum, bad)
    {
        int me = omp_get_thread_num();

        /* Before the appends below (the loops' barriers are between). */
        if (Registry::names.empty()
            || Registry::names[0] != "made before main, changed by main")
            bad++;
        for (int k = 0; k < 50; k++) {
#pragma omp atomic
            Registry::counter += 1;
#pragma omp atomic
            Registry::total += me + 1;
        }
#pragma omp for schedule(static)
        for (int i = 0; i < 64; i++)
            fsum += Registry::instance.factors[i];
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < 8; i++)
            tsum += Registry::table[i];
#pragma omp for schedule(guided)
        for (int i = 0; i < g_matrix.size(); i++)
            for (int j = 0; j < g_matrix.size(); j++)
                msum += g_matrix.at(i, j);
#pragma omp critical
        Registry::names.push_back("thread " + std::to_string(me));
        Registry::fill(3);
        /* fill ended with a barrier: every element is there. */
        for (int i = me; i < Registry::instance.buffer_len; i += 7)
            if (Registry::instance.buffer[i] != (long)i * 3)
                bad++;
    }

    OT_CHECK(Registry::counter == 100 + 50 * n, "static counter %d, expected "
             "%d", Registry::counter, 100 + 50 * n);
    OT_CHECK(Registry::total == 50L * n * (n + 1) / 2, "static total %ld, "
             "expected %ld", Registry::total, 50L * n * (n + 1) / 2);
    OT_CHECK(fsum == 0.5 * 63 * 64 / 2, "factors sum %.2f", fsum);
    OT_CHECK(tsum == 77, "table sum %ld, expected 77", tsum);
    OT_CHECK(msum == 120 * 2.0 + 120.0 * 119 * 0.5, "matrix sum %.1f", msum);
    OT_CHECK(bad == 0, "%ld buffer elements wrong in the team", bad);
    OT_CHECK(Registry::names.size() == (size_t)n + 1, "names %zu, expected "
             "%d", Registry::names.size(), n + 1);
    for (int t = 0; t < n; t++) {
        int found = 0;
        for (const std::string &s : Registry::names)
            found += s == "thread " + std::to_string(t);
        OT_CHECK(found == 1, "name of thread %d found %d times", t, found);
    }

    ot_print("counter=%d total=%ld factors=%.2f table=%ld matrix=%.1f",
             Registry::counter, Registry::total, fsum, tsum, msum);
    ot_print("names=%zu buffer[4999]=%ld", Registry::names.size(),
             Registry::instance.buffer[4999]);
    return ot_finish();
}
