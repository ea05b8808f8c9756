#!/bin/sh
# check-fault.sh - one rank fails; check that the whole job ends loudly,
# promptly and completely.
#
# Usage: check-fault.sh [DIR/]CASE.nRANKS.COMM[.fltt]
# Needs MPIEXEC and top_builddir in the environment (tests/mpi/faults/
# Makefile.inc passes them).  The program is tests/mpi/faults/crash (its
# header says what each HOW and WHERE does); the victim is the last rank.
#
# A case passes when the job (1) exits non-zero, (2) within LIMIT seconds
# (30 unless the table says less: the bound libdsm promises, see
# docs/ERRORS.md), (3) prints the expected line(s), and (4) leaves no
# process of the job behind.  Exit status: 0 pass, 1 fail, 99 harness error.

me=check-fault
if [ $# -ne 1 ] || [ -z "${MPIEXEC:-}" ] || [ -z "${top_builddir:-}" ]; then
    echo "usage: MPIEXEC=... top_builddir=... $0 CASE.nRANKS.COMM" >&2
    exit 99
fi
name=${1##*/}
name=${name%.fltt}
comm=${name##*.}
rest=${name%.*}
ranks=${rest##*.n}
case_name=${rest%.n*}
case $ranks in ''|*[!0-9]*) echo "$me: bad case name '$1'" >&2; exit 99 ;; esac
victim=$((ranks - 1))

# The table: HOW WHERE, extra environment, extra mpiexec options, the time
# limit, and up to two phrases (grep -E) that must appear in the output;
# usr1=1: send SIGUSR1 to mpiexec once the job waits, expect a dump from
# every rank, then stop the job with SIGTERM.
env_extra=
mpi_extra=
limit=30
p1=
p2=
usr1=0
case $case_name in
    segv_barrier)
        how=segv; where=barrier
        p1="libdsm\[rank $victim\]: this rank dies of SIGSEGV at address 0x0 \(a null pointer, or a small offset from one: a bug in the program, not in the DSM\)"
        p2="libdsm\[rank $victim\]:   running the program" ;;
    abort_lock)
        how=abort; where=lock
        p1="libdsm\[rank $victim\]: this rank dies of SIGABRT" ;;
    kill_fetch)
        # SIGKILL leaves the rank no last word, and mpiexec kills the
        # others at once: the only report is mpiexec's (it names a pid and
        # the host, not necessarily the victim's: see docs/ERRORS.md).
        how=kill; where=fetch
        p1="BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES"
        p2="Killed \(signal 9\)" ;;
    exit_gone)
        # A launcher that does not clean up (-disable-auto-cleanup): the
        # survivors notice that the victim's process is gone.
        how=exit; where=fetch; mpi_extra=-disable-auto-cleanup
        p1="libdsm\[rank [0-9]+\]: rank $victim \(pid [0-9]+\) is gone"
        p2="waiting [0-9.]+ s for page 0 from its home, rank $victim" ;;
    exit0_barrier)
        how=exit0; where=barrier
        p1="libdsm\[rank $victim\]: the process exits .* without calling dsm_finalize" ;;
    stop_fetch)
        # The victim stops, communication thread and all: DSM_TIMEOUT.
        how=stop; where=fetch; env_extra=DSM_TIMEOUT=3; limit=15
        p1="libdsm\[rank [0-9]+\]: no reply within DSM_TIMEOUT=3 s: waited [0-9.]+ s for page 0 from its home, rank $victim \((PAGE_REQ|MPI_Rget)"
        p2="pages in flight: 0\(home $victim\)" ;;
    hang_lock)
        how=hang; where=lock; env_extra=DSM_SYNC_TIMEOUT=3; limit=15
        p1="libdsm\[rank [0-9]+\]: no reply within DSM_SYNC_TIMEOUT=3 s: waited [0-9.]+ s for lock 1 from its manager, rank 1 \(LOCK_REQ"
        p2="locks managed here and held: 1\(by rank $victim" ;;
    hang_barrier)
        how=hang; where=barrier; env_extra=DSM_SYNC_TIMEOUT=3; limit=15
        p1="libdsm\[rank 0\]: no reply within DSM_SYNC_TIMEOUT=3 s: waited [0-9.]+ s for the release of barrier 2"
        p2="libdsm\[rank 0\]:   barrier master: barrier 2, $victim of $ranks nodes arrived; not yet: $victim" ;;
    usr1_lock)
        how=wait; where=lock; usr1=1; limit=20
        p1="libdsm\[rank 0\]: state dump \(SIGUSR1\)"
        p2="libdsm\[rank 0\]:   waiting [0-9.]+ s for lock 1 from its manager, rank 1" ;;
    *)
        echo "$me: no fault case '$case_name' (see the table in $0)" >&2
        exit 99 ;;
esac

path=$top_builddir/tests/mpi/faults/crash
[ -x "$path" ] || { echo "$me: $path is not built: run 'make check'" >&2; exit 99; }
outdir=$(mktemp -d "${TMPDIR:-/tmp}/fault.XXXXXX") || exit 99
trap 'rm -rf "$outdir"' EXIT
# The tag (a fourth argument crash ignores) finds this job's processes.
tag=$outdir
echo "$me: timeout 60 $MPIEXEC $mpi_extra -n $ranks env DSM_COMM=$comm $env_extra $path $how $where"
start=$(date +%s.%N)
timeout -k 5 60 "$MPIEXEC" $mpi_extra -n "$ranks" env DSM_COMM="$comm" $env_extra \
    /bin/sh -c 'exec "$@" >"$0/rank.$PMI_RANK" 2>&1' "$outdir" "$path" "$how" "$where" "$tag" \
    </dev/null >"$outdir/mpiexec" 2>&1 &
job=$!
if [ "$usr1" = 1 ]; then
    # Once every rank has started waiting, ask for the dumps, then stop the job.
    sleep 2
    mpx=$(pgrep -f -- "^$MPIEXEC .*$tag")
    [ -n "$mpx" ] && kill -USR1 "$mpx"
    sleep 1
    [ -n "$mpx" ] && kill -TERM "$mpx"
fi
wait $job
status=$?
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
sleep 0.5
left=$(pgrep -f -- "$tag" | grep -v "^$$\$")
cat "$outdir/mpiexec"
for f in "$outdir"/rank.*; do [ -f "$f" ] && { echo "--- ${f##*/}"; cat "$f"; }; done
all=$(cat "$outdir/mpiexec" "$outdir"/rank.* 2>/dev/null)
echo "$me: exit status $status after ${elapsed}s (limit ${limit}s)"

fail=0
# (usr1 cases: the job ends by the SIGTERM sent here, and mpiexec's status
# after a forwarded SIGTERM is 0 or 15 depending on timing: not checked.)
if [ "$status" -eq 0 ] && [ "$usr1" = 0 ]; then
    echo "$me: FAIL: the job exited 0: the failure went unnoticed"; fail=1
fi
[ "$status" -eq 124 ] && { echo "$me: FAIL: the job hung (killed by timeout after 60 s)"; fail=1; }
if [ "$(echo "$elapsed > $limit" | bc)" = 1 ]; then
    echo "$me: FAIL: took ${elapsed}s, more than ${limit}s"; fail=1
fi
if [ -n "$p1" ] && ! printf '%s\n' "$all" | grep -E -q -- "$p1"; then
    echo "$me: FAIL: no line matches: $p1"; fail=1
fi
if [ -n "$p2" ] && ! printf '%s\n' "$all" | grep -E -q -- "$p2"; then
    echo "$me: FAIL: no line matches: $p2"; fail=1
fi
if [ "$usr1" = 1 ]; then
    r=0
    while [ $r -lt "$ranks" ]; do
        grep -q "libdsm\[rank $r\]: state dump (SIGUSR1)" "$outdir/rank.$r" ||
            { echo "$me: FAIL: rank $r printed no state dump"; fail=1; }
        r=$((r + 1))
    done
fi
if [ -n "$left" ]; then
    echo "$me: FAIL: processes left behind:"; ps -o pid,stat,args -p $(echo $left | tr ' ' ,)
    kill -9 $left 2>/dev/null
    fail=1
fi
[ $fail = 0 ] && echo "$me: $name: ok"
exit $fail
