#!/bin/sh
# run-spam-test.sh - run one case of the SPAM tests (benchmarks/spam): a
# small problem in one form, checked against the sequential form run here,
# in the same test, with the same problem.
#
# Usage: tests/spam/run-spam-test.sh [DIR/]CASE[.spamt]
#   mpi.nR.MAPPING           benchmarks/spam/spam, mpiexec -n R, one thread
#                            per rank, --mapping MAPPING (flat, cyclic)
#   hybrid.nRtT.FORCE.SCHED.SORT
#                            spam with R ranks of T threads (OMP_NUM_THREADS),
#                            --force FORCE --schedule SCHED --sorting SORT
#   balance.nR               spam --mapping flat and --mapping cyclic on R
#                            ranks: the cyclic mapping's force imbalance
#                            (max / mean force computations per rank) must be
#                            smaller than the flat mapping's
#   dsm.nR.COMM[.FORCE.SCHED.SORT]
#                            benchmarks/spam/spam_omp.dsm under tools/dsmrun
#                            -n R with DSM_COMM=COMM (default variant:
#                            reduction, cyclic, thread)
#   gomp.tT[.FORCE.SCHED.SORT]
#                            benchmarks/spam/spam_omp.gomp, OMP_NUM_THREADS=T
# The problem is --particles 2000 --steps 10 (SPAMTEST_ARGS to change it;
# the critical variants on the DSM use --particles 300 --steps 2: one DSM
# lock per pair).  A case passes when the sequential run (mpiexec -n 1
# spam, one thread) and the form exit 0 (each exits 1 if its energy is not
# conserved to 1e-5 relative), and their checksums of positions differ by
# at most 1e-9 relative (spam.h: SPAM_CTOL).
#
# Exit status: 0 pass, 1 fail, 99 harness error (bad case name, program not
# built), 124 a run did not finish within SPAMTEST_TIMEOUT seconds (default
# 300).  DSM_* variables in the environment are passed on.

top_builddir='/work/wt/spam'
MPIEXEC='mpiexec.mpich'
me=run-spam-test

[ $# -eq 1 ] || { echo "usage: $0 [DIR/]CASE[.spamt] (see the header)" >&2; exit 99; }
name=${1##*/}
name=${name%.spamt}
limit=${SPAMTEST_TIMEOUT:-300}
args=${SPAMTEST_ARGS:---particles 2000 --steps 10}
spam=$top_builddir/benchmarks/spam/spam
gomp=$top_builddir/benchmarks/spam/spam_omp.gomp
dsm=$top_builddir/benchmarks/spam/spam_omp.dsm
dsmrun=$top_builddir/tools/dsmrun

bad() {
    echo "$me: cannot read a case from '$1' (see the header of $0)" >&2
    exit 99
}
need() {
    [ -x "$1" ] || { echo "$me: $1 is not built: run 'make check' in $top_builddir" >&2; exit 99; }
}
num() {
    case $1 in ''|*[!0-9]*|0*) return 1 ;; esac
}

unset OMP_NUM_THREADS OMP_DYNAMIC OMP_SCHEDULE OMP_NESTED OMP_MAX_ACTIVE_LEVELS OMP_THREAD_LIMIT
out=$(mktemp -d "${TMPDIR:-/tmp}/spamtest.XXXXXX") || exit 99
trap 'rm -rf "$out"' EXIT

# run LABEL COMMAND...: run it (stdin from /dev/null: mpiexec forwards
# stdin), show its output, fail the case on a time-out or a non-zero exit.
run() {
    label=$1
    shift
    echo "--- $label: $*"
    timeout -k 10 "$limit" "$@" >"$out/$label.out" 2>"$out/$label.err" </dev/null
    st=$?
    grep -v '^{"bench"' "$out/$label.out"
    [ -s "$out/$label.err" ] && { echo "--- $label stderr"; cat "$out/$label.err"; }
    if [ $st -eq 124 ] || [ $st -eq 137 ]; then
        echo "$me: $name: $label did not finish within ${limit}s: a hang?" \
             "(SPAMTEST_TIMEOUT=<seconds> to change the limit)"
        exit 124
    fi
    if [ $st -ne 0 ]; then
        echo "$me: $name: $label exited with status $st"
        exit 1
    fi
}

# metric LABEL NAME: the value of result line NAME of a run.
metric() {
    sed -n 's/^{"bench":"[a-z_]*","metric":"'"$2"'","value":\([^,]*\),.*/\1/p' \
        "$out/$1.out" | head -n 1
}

# agree LABEL: the run's checksum against the sequential one.
agree() {
    a=$(metric seq checksum)
    b=$(metric "$1" checksum)
    [ -n "$a" ] && [ -n "$b" ] || { echo "$me: $name: no checksum from $1 or seq"; exit 1; }
    if awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d;
            m = a < 0 ? -a : a; exit !(d <= 1e-9 * m) }'; then
        echo "$me: $name: checksum $b agrees with seq $a (limit 1e-9 relative)"
    else
        echo "$me: $name: checksum $b differs from seq $a by more than 1e-9 relative"
        exit 1
    fi
}

set -- $(echo "$name" | tr . ' ')
kind=$1
need "$spam"
variant() {  # FORCE SCHED SORT -> options
    case $1 in reduction|critical) ;; *) bad "$name" ;; esac
    case $2 in static|cyclic|dynamic) ;; *) bad "$name" ;; esac
    case $3 in serial|thread) ;; *) bad "$name" ;; esac
    vopts="--force $1 --schedule $2 --sorting $3"
}

case $kind in
mpi)
    [ $# -eq 3 ] || bad "$name"
    r=${2#n}; num "$r" || bad "$name"
    case $3 in flat|cyclic) ;; *) bad "$name" ;; esac
    run seq env OMP_NUM_THREADS=1 "$MPIEXEC" -n 1 "$spam" $args
    run form env OMP_NUM_THREADS=1 "$MPIEXEC" -n "$r" "$spam" $args --mapping "$3"
    agree form ;;
hybrid)
    [ $# -eq 5 ] || bad "$name"
    r=${2#n}; r=${r%%t*}; t=${2#*t}
    num "$r" && num "$t" || bad "$name"
    variant "$3" "$4" "$5"
    run seq env OMP_NUM_THREADS=1 "$MPIEXEC" -n 1 "$spam" $args
    run form env OMP_NUM_THREADS="$t" "$MPIEXEC" -n "$r" "$spam" $args $vopts
    agree form ;;
balance)
    [ $# -eq 2 ] || bad "$name"
    r=${2#n}; num "$r" || bad "$name"
    run seq env OMP_NUM_THREADS=1 "$MPIEXEC" -n 1 "$spam" $args
    run flat env OMP_NUM_THREADS=1 "$MPIEXEC" -n "$r" "$spam" $args --mapping flat
    run cyclic env OMP_NUM_THREADS=1 "$MPIEXEC" -n "$r" "$spam" $args --mapping cyclic
    agree flat
    agree cyclic
    f=$(metric flat force_imbalance)
    c=$(metric cyclic force_imbalance)
    if [ -n "$f" ] && [ -n "$c" ] && awk -v f="$f" -v c="$c" 'BEGIN { exit !(c < f) }'; then
        echo "$me: $name: force imbalance cyclic $c < flat $f"
    else
        echo "$me: $name: force imbalance cyclic '$c' is not below flat '$f'"
        exit 1
    fi ;;
dsm)
    need "$dsm"; need "$dsmrun"
    r=${2#n}; num "$r" || bad "$name"
    comm=$3
    [ -n "$comm" ] || bad "$name"
    vopts=
    if [ $# -eq 6 ]; then
        variant "$4" "$5" "$6"
        [ "$4" = critical ] && [ -z "$SPAMTEST_ARGS" ] && args="--particles 300 --steps 2"
    elif [ $# -ne 3 ]; then
        bad "$name"
    fi
    run seq env OMP_NUM_THREADS=1 "$MPIEXEC" -n 1 "$spam" $args
    run form env DSM_COMM="$comm" "$dsmrun" -n "$r" "$dsm" $args $vopts
    agree form ;;
gomp)
    need "$gomp"
    t=${2#t}; num "$t" || bad "$name"
    vopts=
    if [ $# -eq 5 ]; then
        variant "$3" "$4" "$5"
    elif [ $# -ne 2 ]; then
        bad "$name"
    fi
    run seq env OMP_NUM_THREADS=1 "$MPIEXEC" -n 1 "$spam" $args
    run form env OMP_NUM_THREADS="$t" "$gomp" $args $vopts
    agree form ;;
*)
    bad "$name" ;;
esac
echo "$me: $name passed"
exit 0
