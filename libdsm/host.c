/*
 * host.c - where this node runs: how many ranks share its host
 * (MPI_COMM_TYPE_SHARED) and how many CPUs there are, on the host and for
 * this process (its affinity).  dsm_init() asks once, before the
 * communication thread starts, to choose the spins (dsm__spin_us_for and
 * dsm__comm_spin_us_for, config.c); the statistics report prints them.
 * Collective; main thread.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>

#include "dsm_internal.h"

void dsm__host_probe(struct dsm_host *h)
{
    MPI_Comm local;
    cpu_set_t set;
    int n = 1;
    long online = sysconf(_SC_NPROCESSORS_ONLN);

    if (MPI_Comm_split_type(dsm__g.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) ==
        MPI_SUCCESS) {
        MPI_Comm_size(local, &n);
        MPI_Comm_free(&local);
    }
    h->ranks = (unsigned)n;
    h->online_cpus = online > 0 ? (unsigned)online : 0;
    h->my_cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? (unsigned)CPU_COUNT(&set) : 0;
}
