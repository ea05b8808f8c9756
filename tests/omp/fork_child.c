/*
 * fork_child.c - fork(2) in sequential code and in a region.
 *
 * A child changes a local variable of the function that forked, a global
 * and a heap block, and recurses deep on its stack, while the parent
 * recurses on its own; then the child exits with a status that says
 * whether it saw its own values.  The parent must still see its values
 * (a child has its own copy of memory).  Under the shim those variables
 * are in shared memory, whose pages fork would leave shared with the
 * child.  Then a child that runs /bin/true, forks from every thread of a
 * region, and a region after all that.
 */
#define _GNU_SOURCE
#define OT_NAME "fork_child"
#include "omptest.h"

#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 10

static int global_marker = 1;
static double sum_after[OT_MAX_THREADS];

/* Write a frame per level and read it back on the way up. */
static long deep(int depth, long salt)
{
    volatile long frame[64];
    long s = 0;
    for (int i = 0; i < 64; i++)
        frame[i] = salt * 64 + i;
    if (depth > 0)
        s = deep(depth - 1, salt);
    for (int i = 0; i < 64; i++)
        s += frame[i] == salt * 64 + i;
    return s;
}

static int child_status(pid_t pid)
{
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
    int n = ot_team_size(), round, wrong = 0;
    int local_marker = 1;
    int *heap = malloc(64 * sizeof(int));

    heap[0] = 1;
#pragma omp parallel
    sum_after[omp_get_thread_num()] = 1;

    for (round = 0; round < ROUNDS; round++) {
        pid_t pid = fork();
        if (pid == 0) {
            local_marker = 2;
            global_marker = 2;
            heap[0] = 2;
            long got = deep(100, 7);
            _exit(local_marker == 2 && global_marker == 2 && heap[0] == 2 &&
                  got == 101 * 64 ? 3 : 4);
        }
        long mine = deep(100, 5);
        int st = child_status(pid);
        OT_CHECK(st == 3, "round %d: the child exited with %d, expected 3", round, st);
        OT_CHECK(mine == 101 * 64, "round %d: the parent's frames changed under it", round);
        wrong += local_marker != 1 || global_marker != 1 || heap[0] != 1;
    }
    OT_CHECK(wrong == 0, "the child's writes reached the parent in %d rounds (local %d, "
             "global %d, heap %d)", wrong, local_marker, global_marker, heap[0]);
    ot_print("%d forks: the parent kept its values", ROUNDS);

    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(5);
    }
    OT_CHECK(child_status(pid) == 0, "the child that ran /bin/true did not exit 0");

    int bad = 0;
#pragma omp parallel reduction(+:bad)
    {
        int mine = omp_get_thread_num() + 10;
        pid_t p = fork();
        if (p == 0)
            _exit(mine == omp_get_thread_num() + 10 ? 0 : 6);
        bad += child_status(p) != 0;
        bad += mine != omp_get_thread_num() + 10;
    }
    OT_CHECK(bad == 0, "%d threads saw a fork in a region go wrong", bad);

    double total = 0;
#pragma omp parallel reduction(+:total)
    {
        sum_after[omp_get_thread_num()] += 1;
        total += sum_after[omp_get_thread_num()];
    }
    OT_CHECK(total == 2.0 * n, "after the forks a region summed %.1f, expected %.1f",
             total, 2.0 * n);
    ot_print("team of %d forked in a region; a region after: %.1f", n, total);
    free(heap);
    return ot_finish();
}
