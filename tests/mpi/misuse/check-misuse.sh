#!/bin/sh
# check-misuse.sh - run one misuse case and check that libdsm refuses it.
#
# Usage: check-misuse.sh CASE RANKS COMM
# Called by tests/mpi/run-mpi-test.sh for the harness entries
# tests/mpi/cases/misuse_CASE.nRANKS.COMM.mpit, with MPIEXEC and top_builddir
# in the environment.
#
# A misuse passes when the job (1) exits non-zero, (2) prints a line
# "libdsm[rank R]: ..." (R may be "?" where no rank is known yet) containing
# the phrase of that error (the error messages of libdsm(7)), from the
# expected rank where one rank is at fault, and (3) does so within
# MPITEST_MISUSE_TIMEOUT seconds (default 60): timeout's 124 means the job
# hung instead of stopping.

me=check-misuse
if [ $# -ne 3 ] || [ -z "${MPIEXEC:-}" ] || [ -z "${top_builddir:-}" ]; then
    echo "usage: MPIEXEC=... top_builddir=... $0 CASE RANKS COMM" >&2
    exit 99
fi
case_name=$1
ranks=$2
comm=$3

# The table: program (in tests/mpi/misuse), its arguments, extra
# environment, the phrases that must appear on one libdsm line, and the rank
# that must report it (empty: any rank).
args=
env_extra=
phrase2=
rank=
case $case_name in
    unknown_var)
        prog=init_only; env_extra=DSM_FOO=1
        phrase="unknown environment variable DSM_"; phrase2=DSM_FOO ;;
    bad_comm)
        # The variant in the case name is the bad value itself.
        prog=init_only; phrase="bad value"; phrase2=DSM_COMM ;;
    bad_page_size)
        prog=init_only; env_extra=DSM_PAGE_SIZE=12345
        phrase="bad value"; phrase2=DSM_PAGE_SIZE ;;
    small_page_size)
        prog=init_only; env_extra=DSM_PAGE_SIZE=2048
        phrase="bad value"; phrase2=DSM_PAGE_SIZE ;;
    free_foreign)
        prog=free_foreign; phrase="is not a pointer returned by dsm_malloc"
        rank=$((ranks - 1)) ;;
    oom)
        prog=oom; phrase="out of shared memory" ;;
    barrier_before_init)
        prog=before_init; args=barrier; phrase="dsm_barrier() called before dsm_init()" ;;
    malloc_before_init)
        # dsm_malloc goes through dsm_malloc_home: the message names dsm_malloc.
        prog=before_init; args=malloc; phrase="dsm_malloc() called before dsm_init()" ;;
    lock_before_init)
        # Through libdsm's lock id check: the message names dsm_lock_acquire.
        prog=before_init; args=lock; phrase="dsm_lock_acquire() called before dsm_init()" ;;
    barrier_after_finalize)
        prog=after_finalize; phrase="after dsm_finalize" ;;
    size_mismatch)
        prog=size_mismatch; phrase="ranks disagree" ;;
    past_end)
        prog=api; args=past_end; rank=$((ranks - 1))
        phrase="this rank dies of SIGSEGV at address"
        phrase2="(unallocated shared memory: past the end of a dsm_malloc block, or freed)" ;;
    collective_mismatch)
        prog=api; args=collective_mismatch; rank=0
        phrase="ranks disagree on a collective call: rank 0 called dsm_barrier while rank 1 called dsm_malloc" ;;
    finalize_mismatch)
        prog=api; args=finalize_mismatch; rank=0
        phrase="ranks disagree on a collective call: rank 0 called dsm_barrier while rank $((ranks - 1)) called dsm_finalize" ;;
    lock_range)
        prog=api; args=lock_range; phrase="dsm_lock_acquire(4096): lock id out of range" ;;
    release_unheld)
        prog=api; args=release_unheld; rank=$(( 3 % ranks ))
        phrase="released lock 3, which it does not hold (it is free)" ;;
    bad_home_node)
        prog=api; args=bad_home_node
        phrase="dsm_malloc_home: bad value $ranks for the home node" ;;
    bad_home_policy)
        prog=api; args=bad_home_policy
        phrase="dsm_malloc_home: bad value 77 for the home policy" ;;
    free_twice)
        prog=api; args=free_twice; phrase="is not a pointer returned by dsm_malloc (or it was freed already)" ;;
    init_twice)
        prog=api; args=init_twice; phrase="dsm_init() called twice" ;;
    disagree_env)
        prog=api; args=disagree_env
        phrase="ranks disagree on DSM_PAGE_SIZE: rank 0 has 16K, rank 1 has 8K" ;;
    disagree_comm)
        # Transports by name, not by their number.
        prog=api; args=disagree_comm
        other=direct; [ "$comm" = direct ] && other=queue
        phrase="ranks disagree on DSM_COMM: rank 0 has $comm, rank 1 has $other" ;;
    lock_deadlock)
        prog=api; args=lock_deadlock; env_extra=DSM_SYNC_TIMEOUT=3
        phrase="no reply within DSM_SYNC_TIMEOUT=3 s"; phrase2="for lock 1 from its manager" ;;
    bcast_mismatch)
        prog=bcast_misuse; args=mismatch; phrase="ranks disagree on dsm_bcast" ;;
    bcast_outside)
        prog=bcast_misuse; args=outside; phrase="is not inside the shared region"
        rank=$((ranks - 1)) ;;
    bcast_root)
        prog=bcast_misuse; args=root; phrase="is not a node" ;;
    bcast_freed)
        prog=bcast_misuse; args=freed; phrase="which is not allocated" ;;
    bcast_collective)
        prog=bcast_misuse; args=collective; phrase="ranks disagree on a collective call"
        phrase2=dsm_bcast ;;
    thread_level)
        prog=thread_level; phrase="needs MPI_THREAD_MULTIPLE"; phrase2="DSM_COMM=$comm" ;;
    *)
        echo "$me: no misuse case '$case_name' (see the table in $0)" >&2
        exit 99 ;;
esac

path=$top_builddir/tests/mpi/misuse/$prog
if [ ! -x "$path" ]; then
    echo "$me: $path is not built: run 'make check' in $top_builddir" >&2
    exit 99
fi

limit=${MPITEST_MISUSE_TIMEOUT:-60}
outdir=$(mktemp -d "${TMPDIR:-/tmp}/misuse.XXXXXX") || exit 99
trap 'rm -rf "$outdir"' EXIT
out=$outdir/all
echo "$me: timeout $limit $MPIEXEC -n $ranks env DSM_COMM=$comm $env_extra $path $args"
echo "$me: expecting a non-zero exit and 'libdsm[rank ${rank:-R}]: ...$phrase...'${phrase2:+ naming $phrase2}"
start=$(date +%s)
# Each rank writes straight to a file of its own: mpiexec (hydra) may drop
# what an aborting rank wrote to its pipe just before MPI_Abort, and that
# line is what is checked here.  $env_extra and $args are single words or
# empty: left unquoted on purpose.
timeout -k 10 "$limit" "$MPIEXEC" -n "$ranks" \
    env DSM_COMM="$comm" $env_extra \
    /bin/sh -c 'exec "$@" >"$0/rank.$PMI_RANK" 2>&1' "$outdir" "$path" $args \
    </dev/null >"$outdir/mpiexec" 2>&1
status=$?
r=0
: >"$out"
while [ "$r" -lt "$ranks" ]; do
    [ -f "$outdir/rank.$r" ] && cat "$outdir/rank.$r" >>"$out"
    r=$((r + 1))
done
elapsed=$(( $(date +%s) - start ))
cat "$outdir/mpiexec" "$out"
echo "$me: exit status $status after ${elapsed}s"

if [ "$status" -eq 77 ] && grep -q "nothing to test" "$out"; then
    echo "$me: SKIP: the MPI library gave more than the misuse asked for"
    exit 77
fi
fail=0
if [ "$status" -eq 0 ]; then
    echo "$me: FAIL: the job exited 0: the misuse went unnoticed"
    fail=1
elif [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "$me: FAIL: the job did not stop within ${limit}s (a hang)"
    fail=1
fi
# Before dsm_init (and after dsm_finalize) the library may not know its
# rank and writes "libdsm[rank ?]: ".
lines=$(grep -E 'libdsm\[rank ([0-9]+|\?)\]: ' "$out" | grep -F -e "$phrase")
if [ -n "$phrase2" ]; then
    lines=$(printf '%s\n' "$lines" | grep -F -e "$phrase2")
fi
if [ -z "$lines" ]; then
    echo "$me: FAIL: no 'libdsm[rank N]: ' line contains '$phrase'${phrase2:+ and '$phrase2'}"
    fail=1
elif [ -n "$rank" ] && ! printf '%s\n' "$lines" | grep -F -q "libdsm[rank $rank]: "; then
    echo "$me: FAIL: the message came from another rank than $rank, which made the mistake"
    fail=1
fi
[ "$fail" -eq 0 ] && echo "$me: $case_name refused as expected"
exit $fail
