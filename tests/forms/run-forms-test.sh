#!/bin/sh
# run-forms-test.sh - one case of the forms tests: a small run of a
# benchmark of issue 9 in each of its forms, which must all give the same
# checksum (benchmarks/matmul, nbody, grayscott; see tests/forms/Makefile.inc).
#
# Usage: top_builddir=DIR MPIEXEC=mpiexec run-forms-test.sh [DIR/]PROG.nRANKS.COMM[.formt]
#   matmul     (two repetitions each, the second with other matrices)
#              matmul_mpi on RANKS ranks, matmul_omp.gomp with 2 threads,
#              matmul_omp.dsm on RANKS ranks (on-demand and dsm_bcast modes):
#              five checksums, all equal (entries are integers: exact);
#   nbody      nbody_omp.gomp with 2 threads and nbody_omp.dsm on RANKS
#              ranks (both modes): equal checksums, and each run checks its
#              tree forces against the direct sum itself (exit 1 otherwise);
#   grayscott  grayscott_mpi on RANKS ranks, grayscott_hybrid on RANKS ranks
#              x 2 threads, grayscott_omp.gomp with 2 threads and
#              grayscott_omp.dsm on RANKS ranks: equal checksums.
#   shim_bcast tests/forms/shim_bcast.dsm on RANKS ranks: dsm_bcast from an
#              OpenMP program (no faults after it, coherence after rank 0
#              rewrites), its refusal inside a parallel region, and under
#              DSM_CHECK=races a stack array read, broadcast from the last
#              rank and written word by word (no race may be reported).
# The DSM runs use DSM_COMM=COMM.  Exit status: 0 pass, 1 fail, 99 harness
# error, 124 a run took longer than FORMSTEST_TIMEOUT seconds (default 300).

me=run-forms-test
if [ $# -ne 1 ] || [ -z "${top_builddir:-}" ] || [ -z "${MPIEXEC:-}" ]; then
    echo "usage: top_builddir=DIR MPIEXEC=mpiexec $0 PROG.nRANKS.COMM[.formt]" >&2
    exit 99
fi
name=${1##*/}
name=${name%.formt}
prog=${name%%.*}
rest=${name#*.}
ranks=${rest%%.*}
ranks=${ranks#n}
comm=${rest#*.}
case $ranks in ''|*[!0-9]*) echo "$me: bad case '$1'" >&2; exit 99 ;; esac
case $comm in ''|*.*) echo "$me: bad case '$1'" >&2; exit 99 ;; esac
limit=${FORMSTEST_TIMEOUT:-300}
b=$top_builddir/benchmarks
dsmrun=$top_builddir/tools/dsmrun
tmp=$(mktemp -d "${TMPDIR:-/tmp}/forms.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# run NAME CMD...: run, keep the output in $tmp/NAME, fail on error.
run() {
    n=$1
    shift
    echo "$me: $*"
    timeout -k 10 "$limit" "$@" </dev/null >"$tmp/$n" 2>&1
    rc=$?
    grep -v '^{"bench":' "$tmp/$n"
    if [ $rc -ne 0 ]; then
        echo "$me: FAIL: exit status $rc"
        [ $rc -eq 124 ] && exit 124
        exit 1
    fi
}

# sum NAME METRIC: the value of the JSON result METRIC in $tmp/NAME.
sum() {
    sed -n "s/.*\"metric\":\"$2\",\"value\":\([^,]*\),.*/\1/p" "$tmp/$1" | head -1
}

# same LABEL VALUES...: every value equal to the first, none empty.
same() {
    label=$1
    shift
    first=$1
    for v in "$@"; do
        if [ -z "$v" ] || [ "$v" != "$first" ]; then
            echo "$me: FAIL: $label checksums differ: $*"
            exit 1
        fi
    done
    echo "$me: $label: all $# checksums are $first"
}

for f in "$dsmrun"; do
    [ -x "$f" ] || { echo "$me: $f is not built" >&2; exit 99; }
done
export DSM_COMM=$comm
case $prog in
matmul)
    run mpi "$MPIEXEC" -n "$ranks" "$b/matmul/matmul_mpi" --size 150 --reps 2
    run gomp env OMP_NUM_THREADS=2 "$b/matmul/matmul_omp.gomp" --size 150 --reps 2
    run dsm env -u OMP_NUM_THREADS "$dsmrun" -n "$ranks" "$b/matmul/matmul_omp.dsm" --size 150 --reps 2
    same matmul "$(sum mpi mpi_checksum)" "$(sum gomp ondemand_checksum)" \
        "$(sum gomp bcast_checksum)" "$(sum dsm ondemand_checksum)" "$(sum dsm bcast_checksum)"
    ;;
nbody)
    run gomp env OMP_NUM_THREADS=2 "$b/nbody/nbody_omp.gomp" --bodies 2000 --steps 2 --sample 50
    run dsm env -u OMP_NUM_THREADS "$dsmrun" -n "$ranks" "$b/nbody/nbody_omp.dsm" --bodies 2000 --steps 2 --sample 50
    same nbody "$(sum gomp ondemand_checksum)" "$(sum gomp bcast_checksum)" \
        "$(sum dsm ondemand_checksum)" "$(sum dsm bcast_checksum)"
    ;;
grayscott)
    run mpi "$MPIEXEC" -n "$ranks" "$b/grayscott/grayscott_mpi" --size 48 --steps 30
    run hybrid env OMP_NUM_THREADS=2 "$MPIEXEC" -n "$ranks" "$b/grayscott/grayscott_hybrid" --size 48 --steps 30
    run gomp env OMP_NUM_THREADS=2 "$b/grayscott/grayscott_omp.gomp" --size 48 --steps 30
    run dsm env -u OMP_NUM_THREADS "$dsmrun" -n "$ranks" "$b/grayscott/grayscott_omp.dsm" --size 48 --steps 30
    same grayscott "$(sum mpi checksum)" "$(sum hybrid checksum)" "$(sum gomp checksum)" \
        "$(sum dsm checksum)"
    ;;
shim_bcast)
    run shim "$dsmrun" -n "$ranks" "$top_builddir/tests/forms/shim_bcast.dsm"
    grep -q '^shim_bcast: 0 mismatches' "$tmp/shim" || { echo "$me: FAIL: no success line"; exit 1; }
    timeout -k 10 "$limit" "$dsmrun" -n "$ranks" "$top_builddir/tests/forms/shim_bcast.dsm" \
        inside </dev/null >"$tmp/inside" 2>&1
    rc=$?
    cat "$tmp/inside"
    [ $rc -ne 0 ] && [ $rc -ne 124 ] ||
        { echo "$me: FAIL: dsm_bcast inside a region: exit status $rc, expected a refusal"; exit 1; }
    grep -q 'libdsm\[rank 0\]: dsm_bcast(.*was called inside a parallel region' "$tmp/inside" ||
        { echo "$me: FAIL: dsm_bcast inside a region: no message"; exit 1; }
    echo "$me: dsm_bcast inside a region refused as expected"
    run stack env DSM_CHECK=races "$dsmrun" -n "$ranks" \
        "$top_builddir/tests/forms/shim_bcast.dsm" stack
    grep -q '^shim_bcast: stack: 0 mismatches' "$tmp/stack" ||
        { echo "$me: FAIL: stack array broadcast from the last rank: no success line"; exit 1; }
    if grep 'libdsm' "$tmp/stack" | grep -qi 'race'; then
        echo "$me: FAIL: stack array broadcast from the last rank: a race was reported"; exit 1
    fi
    ;;
*)
    echo "$me: no program '$prog' (matmul, nbody, grayscott, shim_bcast)" >&2
    exit 99 ;;
esac
exit 0
