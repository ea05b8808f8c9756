/*
 * cxx_mutex.cc - std::mutex and its relatives between OpenMP threads.
 *
 * A global std::mutex guards a non-atomic counter and an "inside" check
 * (std::lock_guard); a std::mutex member of an object made with new guards
 * a std::vector the threads append to (std::unique_lock); try_lock fails
 * while thread 0 holds the mutex across two barriers and succeeds when it
 * is free, one thread at a time; a std::recursive_mutex taken three deep;
 * std::scoped_lock of two mutexes in both orders (no deadlock).  The
 * mutexes are pthread mutexes in shared memory: under the shim, DSM locks
 * (omp-shim/libc/mutex.c).  ITERS rounds per thread.
 */
#define OT_NAME "cxx_mutex"
#include "omptest.h"

#include <mutex>
#include <vector>

namespace {

const int kIters = 100;

std::mutex g_mutex;
long g_count;
int g_inside;

struct Log {
    std::mutex m;
    std::vector<int> entries;
};

std::recursive_mutex g_rmutex;
long g_rcount;

void recurse(int depth)
{
    std::lock_guard<std::recursive_mutex> hold(g_rmutex);
    if (depth > 1)
        recurse(depth - 1);
    else
        g_rcount++;
}

std::mutex g_a, g_b;
long g_ab;

}  // namespace

int main()
{
    int n = ot_team_size();
    Log *log = new Log;
    long failed_while_held = 0, got_when_free = 0;

    ot_print("threads=%d", n);

#pragma omp parallel reduction(+:failed_while_held, got_when_free)
    {
        int me = omp_get_thread_num();
        int nt = omp_get_num_threads();

        for (int k = 0; k < kIters; k++) {
            {
                std::lock_guard<std::mutex> hold(g_mutex);
                g_inside++;
                OT_CHECK(g_inside == 1, "%d threads hold g_mutex", g_inside);
                g_count += me + 1;
                g_inside--;
            }
            if (k % 4 == 0) {
                std::unique_lock<std::mutex> hold(log->m);
                log->entries.push_back(me);
            }
        }

#pragma omp barrier
        if (me == 0)
            g_mutex.lock();
#pragma omp barrier
        if (me != 0) {
            if (!g_mutex.try_lock())
                failed_while_held++;
            else
                ot_error("try_lock took a mutex thread 0 holds");
        }
#pragma omp barrier
        if (me == 0)
            g_mutex.unlock();
#pragma omp barrier
        for (int t = 0; t < nt; t++) {
            if (t == me) {
                if (g_mutex.try_lock()) {
                    got_when_free++;
                    g_mutex.unlock();
                } else {
                    ot_error("try_lock failed on a free mutex");
                }
            }
#pragma omp barrier
        }

        for (int k = 0; k < kIters / 10; k++)
            recurse(3);
        for (int k = 0; k < kIters / 4; k++) {
            if ((me + k) % 2 == 0) {
                std::scoped_lock hold(g_a, g_b);
                g_ab++;
            } else {
                std::scoped_lock hold(g_b, g_a);
                g_ab++;
            }
        }
    }

    long want = (long)kIters * n * (n + 1) / 2;
    OT_CHECK(g_count == want, "g_mutex count %ld, expected %ld", g_count, want);
    OT_CHECK(log->entries.size() == (size_t)n * (kIters / 4), "log entries %zu,"
             " expected %d", log->entries.size(), n * (kIters / 4));
    std::vector<int> per(n, 0);
    for (int e : log->entries)
        if (e >= 0 && e < n)
            per[e]++;
    for (int t = 0; t < n; t++)
        OT_CHECK(per[t] == kIters / 4, "log entries of thread %d: %d", t,
                 per[t]);
    OT_CHECK(failed_while_held == n - 1, "try_lock failed %ld times while "
             "held, expected %d", failed_while_held, n - 1);
    OT_CHECK(got_when_free == n, "try_lock succeeded %ld times when free, "
             "expected %d", got_when_free, n);
    OT_CHECK(g_rcount == (long)n * (kIters / 10), "recursive count %ld",
             g_rcount);
    OT_CHECK(g_ab == (long)n * (kIters / 4), "scoped_lock count %ld", g_ab);

    ot_print("count=%ld log=%zu try_lock: failed %ld while held, got %ld when "
             "free; recursive=%ld scoped=%ld", g_count, log->entries.size(),
             failed_while_held, got_when_free, g_rcount, g_ab);
    delete log;
    return ot_finish();
}
