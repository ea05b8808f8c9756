/*
 * premain.cc - memory the program's own code allocates before main is
 * shared: a global std::vector filled in its constructor, a file-scope
 * malloc, a global object whose constructor builds a std::map, a static
 * member array from new[] in a constructor, a strdup, an aligned block and
 * a buffer grown with realloc from a constructor.  Rank 0 changes some of it in main; a parallel region
 * reads all of it on every thread of every rank, checks the values and
 * writes into it; main checks what the region wrote.  Then free, delete[]
 * and realloc of such blocks after start-up, and a second region on the
 * realloc'd block and on the map main changed.  A constructor forks and
 * runs a shell before the blocks after it are made.
 *
 * Built with plain g++ -fopenmp; dsmrun preloads the shim.  Prints one line
 * "premain: team T, ... 0 wrong" and exits 0 when every check passed.
 * With PREMAIN_RANKDEP=1 the ranks allocate differently before main.
 *
 * Threads: main (rank 0) and the OpenMP threads of two regions.
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <map>
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

static const int N = 100000;       /* the vector */
static const int M = 50000;        /* the file-scope malloc */
static const int K = 1000;         /* the map */
static const int A = 20000;        /* the static member array */

/* A global std::vector, filled in its constructor. */
struct Table : std::vector<double> {
    Table() : std::vector<double>(N)
    {
        for (int i = 0; i < N; i++)
            (*this)[i] = 0.5 * i + 1;
    }
};
Table table;

/* A file-scope malloc, initialised before main. */
static double *x = (double *)malloc(M * sizeof(double));
static bool x_ready = [] {
    for (int i = 0; i < M; i++)
        x[i] = 3.0 * i;
    return true;
}();

/* A global object whose constructor builds a std::map. */
struct Squares {
    std::map<int, double> m;
    Squares()
    {
        for (int i = 0; i < K; i++)
            m[i] = (double)i * i;
    }
};
Squares squares;

/* A static member array allocated with new[] in a constructor. */
struct Holder {
    static int *arr;
    Holder()
    {
        arr = new int[A];
        for (int i = 0; i < A; i++)
            arr[i] = 7 * i + 2;
    }
};
int *Holder::arr;
static Holder holder;

/* Through the C library's functions that allocate for the caller, and an
 * aligned block. */
static char *name = strdup("a string strdup made before main, longer than a short one");
static double *aligned = [] {
    void *p = nullptr;
    if (posix_memalign(&p, 4096, 8192) != 0)
        return (double *)nullptr;
    double *d = (double *)p;
    for (int i = 0; i < 1024; i++)
        d[i] = -i;
    return d;
}();

/* One slot a thread, from before main too: written by the region. */
static int *slots = (int *)calloc(4096, sizeof(int));

/* A buffer a constructor grows with realloc, with a temporary block freed
 * between two steps (the arena grows the last block in place, and takes a
 * freed last block back). */
static const int G = 100000;
static int *grown = [] {
    int *b = nullptr;
    for (int n = 1000; n <= G; n += 1000) {
        int *c = (int *)realloc(b, n * sizeof(int));
        if (!c)
            return (int *)nullptr;
        b = c;
        for (int i = n - 1000; i < n; i++)
            b[i] = 5 * i;
        if (n % 10000 == 0)
            free(malloc(100));
    }
    return b;
}();

/* A constructor that forks a child, which allocates in its own copy and
 * exits, and one that runs a shell (with the shim still preloaded: it must
 * stay out of the shell's way): neither changes what the parent allocates
 * next. */
static int forked = [] {
    pid_t p = fork();
    if (p == 0) {
        void *q = malloc(1 << 20);
        _exit(q ? 0 : 1);
    }
    int st = 1;
    if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
        return 1;
    return system("exit 0") == 0 ? 0 : 1;
}();
static double *after_fork = [] {
    double *d = new double[1000];
    for (int i = 0; i < 1000; i++)
        d[i] = i + 0.25;
    return d;
}();

/* PREMAIN_RANKDEP=1: a constructor allocates as much as the rank's number
 * says (mpiexec's PMI_RANK), so the ranks' blocks differ: the shim must
 * stop at start-up rather than share them. */
static void *rankdep = [] {
    const char *on = getenv("PREMAIN_RANKDEP"), *r = getenv("PMI_RANK");
    return on && r ? malloc(64 + 4096 * (size_t)atoi(r)) : nullptr;
}();

int main()
{
    long wrong = 0;
    if (rankdep)
        printf("premain: FAIL: ranks that allocated differently before main got to main\n");
    if (forked) {
        printf("premain: FAIL: fork or system in a constructor\n");
        wrong++;
    }
    if (!x_ready || !aligned || !slots || !name || !grown) {
        printf("premain: FAIL: a constructor's allocation failed\n");
        return 1;
    }
    if ((uintptr_t)aligned % 4096) {
        printf("premain: FAIL: posix_memalign gave %p\n", (void *)aligned);
        wrong++;
    }
    if (malloc_usable_size(x) < M * sizeof(double)) {
        printf("premain: FAIL: malloc_usable_size(x) %zu\n", malloc_usable_size(x));
        wrong++;
    }
    /* Rank 0's changes, which every other rank must see. */
    table[N - 1] = 42;
    x[0] = 11;
    squares.m[5] = -5;
    Holder::arr[A - 1] = 99;
    name[0] = 'A';
    aligned[1023] = 1023;

    int team = 0;
    long rwrong = 0;
#pragma omp parallel reduction(+ : rwrong)
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads();
        if (me == 0)
            team = nt;
        /* Every thread reads all of it. */
        for (int i = 0; i < N; i++)
            if (table[i] != (i == N - 1 ? 42 : 0.5 * i + 1))
                rwrong++;
        for (int i = 0; i < M; i++)
            if (x[i] != (i == 0 ? 11 : 3.0 * i))
                rwrong++;
        for (int i = 0; i < K; i++) {
            auto it = squares.m.find(i);
            if (it == squares.m.end() || it->second != (i == 5 ? -5 : (double)i * i))
                rwrong++;
        }
        for (int i = 0; i < A; i++)
            if (Holder::arr[i] != (i == A - 1 ? 99 : 7 * i + 2))
                rwrong++;
        if (strncmp(name, "A string strdup made before main", 32) != 0)
            rwrong++;
        for (int i = 0; i < 1024; i++)
            if (aligned[i] != (i == 1023 ? 1023 : -i))
                rwrong++;
        for (int i = 0; i < 1000; i++)
            if (after_fork[i] != i + 0.25)
                rwrong++;
        for (int i = 0; i < G; i++)
            if (grown[i] != 5 * i)
                rwrong++;
#pragma omp barrier
        /* ... and writes its share. */
#pragma omp for schedule(static)
        for (int i = 0; i < N; i++)
            table[i] = 2 * table[i];
#pragma omp for schedule(static)
        for (int i = 0; i < M; i++)
            x[i] += 1;
#pragma omp for schedule(static)
        for (int i = 0; i < A; i++)
            Holder::arr[i] = -Holder::arr[i];
        slots[me] = me + 1000;
    }
    wrong += rwrong;

    for (int i = 0; i < N; i++)
        if (table[i] != 2 * (i == N - 1 ? 42 : 0.5 * i + 1))
            wrong++;
    for (int i = 0; i < M; i++)
        if (x[i] != (i == 0 ? 12 : 3.0 * i + 1))
            wrong++;
    for (int i = 0; i < A; i++)
        if (Holder::arr[i] != -(i == A - 1 ? 99 : 7 * i + 2))
            wrong++;
    for (int t = 0; t < team; t++)
        if (slots[t] != t + 1000)
            wrong++;

    /* After start-up: free and delete of blocks from before main, a
     * realloc of one (its contents kept), the map changed (its old nodes
     * freed, new ones from the shared heap). */
    delete[] after_fork;
    delete[] Holder::arr;
    Holder::arr = nullptr;
    free(name);
    free(aligned);
    double *y = (double *)realloc(x, 2 * M * sizeof(double));
    if (!y) {
        printf("premain: FAIL: realloc\n");
        return 1;
    }
    x = y;
    if (malloc_usable_size(x) < 2 * M * sizeof(double))
        wrong++;
    for (int i = M; i < 2 * M; i++)
        x[i] = 3.0 * i + 1;
    for (int i = 0; i < K; i += 2)
        squares.m.erase(i);
    for (int i = K; i < 2 * K; i++)
        squares.m[i] = (double)i * i;

    long rwrong2 = 0;
#pragma omp parallel reduction(+ : rwrong2)
    {
        for (int i = 0; i < 2 * K; i++) {
            auto it = squares.m.find(i);
            bool want = i >= K || i % 2;
            if ((it != squares.m.end()) != want ||
                (want && it->second != (i == 5 ? -5 : (double)i * i)))
                rwrong2++;
        }
#pragma omp for schedule(static)
        for (int i = 0; i < 2 * M; i++) {
            if (x[i] != (i == 0 ? 12 : 3.0 * i + 1))
                rwrong2++;
            x[i] = i;
        }
    }
    wrong += rwrong2;
    for (int i = 0; i < 2 * M; i++)
        if (x[i] != i)
            wrong++;
    free(x);
    free(slots);
    free(grown);

    printf("premain: team %d, vector %d, malloc %d, map %d, new[] %d, %ld wrong\n", team, N,
           M, K, A, wrong);
    return wrong ? 1 : 0;
}
