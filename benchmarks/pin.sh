#!/bin/sh
# pin.sh - run a program pinned to one core, chosen by its MPI rank:
# core (PMI_RANK mod PIN_CORES), PIN_CORES defaulting to the number of
# CPUs.  bench.sh transports starts every rank through it (mpiexec -n N
# sh pin.sh PROG ARGS), so that rank r always runs on core r mod 2 here:
# its application and communication threads share that core.
cores=${PIN_CORES:-$(nproc)}
exec taskset -c $(( ${PMI_RANK:-0} % cores )) "$@"
