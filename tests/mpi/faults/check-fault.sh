#!/bin/sh
# check-fault.sh - one rank fails; check that the whole job ends loudly,
# promptly and completely.
#
# Usage: check-fault.sh [DIR/]CASE.nRANKS.COMM[.fltt]
# Needs MPIEXEC and top_builddir in the environment (tests/mpi/faults/
# Makefile.inc passes them).  The program is tests/mpi/faults/crash (its
# header says what each HOW and WHERE does), or for *_fork and *_join
# tests/omp/fault_victim.dsm under tools/dsmrun; the victim is the last
# rank unless the case names another.
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
# CASE is HOW_WHERE, or HOW_WHERE_VICTIM with VICTIM r0 (rank 0), mid (the
# middle rank, n/2) or last (the default).
victim=$((ranks - 1))
victim_env=
case $case_name in
    *_r0) victim=0; victim_env=CRASH_VICTIM=0; case_name=${case_name%_r0} ;;
    *_mid) victim=$((ranks / 2)); victim_env=CRASH_VICTIM=mid; case_name=${case_name%_mid} ;;
    *_last) case_name=${case_name%_last} ;;
esac

# The table: HOW WHERE, extra environment, extra mpiexec options, the time
# limit, and up to two phrases (grep -E) that must appear in the output;
# usr1=1: send SIGUSR1 to mpiexec once the job waits, expect a dump from
# every rank, then stop the job with SIGTERM.
# monitor=1: each rank under tools/dsmrun-monitor, as dsmrun runs it (it
# names a rank a signal killed); omp=1: the OpenMP program
# tests/omp/fault_victim.dsm under tools/dsmrun (one thread per rank);
# bound=S: the job must end within S seconds of the victim's fault (its
# "fails at" line); ok=1: no fault, the job must exit 0 (compute cases).
env_extra=
mpi_extra=
limit=30
p1=
p2=
usr1=0
monitor=0
omp=0
bound=
ok=0
# A rank that stops (SIGSTOP): the others find it silent (liveness.c), or a
# page request to it times out first; both name it (DSM_TIMEOUT=3: the
# bound is DSM_TIMEOUT + 2 s).
silent="libdsm\[rank [0-9]+\]: (rank $victim \(pid [0-9]+ on [^)]*\) is not responding: nothing from it for [0-9.]+ s \(DSM_TIMEOUT=3 s\)|no reply within DSM_TIMEOUT=3 s: waited [0-9.]+ s for .*rank $victim )"
killed="dsmrun: rank $victim \(pid [0-9]+ on [^)]*\) was killed by signal 9 \(SIGKILL\)"
case $case_name in
    stop_compute)
        # Nobody waits in libdsm: the communication thread ends the job
        # (half a second after the report, liveness.c).
        how=stop; where=compute; env_extra=DSM_TIMEOUT=3; limit=20; bound=5
        p1=$silent
        p2="this rank was running the program" ;;
    stop_barrier|stop_lock|stop_fork|stop_join)
        how=stop; where=${case_name#stop_}; env_extra=DSM_TIMEOUT=3; limit=20; bound=5
        p1=$silent
        case $where in
            barrier) p2="this rank was waiting [0-9.]+ s for the release of barrier" ;;
            lock) p2="this rank was waiting [0-9.]+ s for lock 1 from its manager" ;;
            fork)
                # A worker victim stops inside the fork's barrier, which it
                # had entered: the others find it silent in the join that
                # follows (tests/omp/fault_victim.c).
                omp=1; p2="this rank was waiting [0-9.]+ s for the release of barrier [0-9]+, an OpenMP fork"
                [ "$victim" != 0 ] && p2="this rank was waiting [0-9.]+ s for the release of barrier [0-9]+, an OpenMP (fork|join)" ;;
            join) omp=1; p2="this rank was waiting [0-9.]+ s for the release of barrier [0-9]+, an OpenMP join" ;;
        esac ;;
    kill_barrier|kill_lock|kill_fetch|kill_fork|kill_join)
        # SIGKILL leaves the rank no last word; its monitor names it.
        how=kill; where=${case_name#kill_}; monitor=1; limit=20; bound=3; p1=$killed
        case $where in fork|join) omp=1 ;; esac ;;
    compute_barrier|compute_lock)
        # The victim computes for 5 s, past DSM_TIMEOUT=2, while the others
        # wait for it: alive, since its communication thread answers.
        how=compute; where=${case_name#compute_}; ok=1; limit=30
        env_extra="DSM_TIMEOUT=2 CRASH_COMPUTE_S=5"
        p1="crash\[rank 0\]: all ranks alive after the victim's computation" ;;
    segv_barrier)
        how=segv; where=barrier
        p1="libdsm\[rank $victim\]: this rank dies of SIGSEGV at address 0x0 \(a null pointer, or a small offset from one: a bug in the program, not in the DSM\)"
        p2="libdsm\[rank $victim\]:   running the program" ;;
    abort_lock)
        how=abort; where=lock
        p1="libdsm\[rank $victim\]: this rank dies of SIGABRT" ;;
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
        # The victim stops, communication thread and all.
        how=stop; where=fetch; env_extra=DSM_TIMEOUT=3; limit=20; bound=5
        p1=$silent
        p2="page [0-9]+ from its home, rank $victim \((PAGE_REQ|MPI_Rget)" ;;
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
[ "$omp" = 1 ] && path=$top_builddir/tests/omp/fault_victim.dsm
[ -x "$path" ] || { echo "$me: $path is not built: run 'make check'" >&2; exit 99; }
mon=
if [ "$monitor" = 1 ]; then
    mon=$top_builddir/tools/dsmrun-monitor
    [ -x "$mon" ] || { echo "$me: $mon is not built: run 'make'" >&2; exit 99; }
fi
outdir=$(mktemp -d "${TMPDIR:-/tmp}/fault.XXXXXX") || exit 99
trap 'rm -rf "$outdir"' EXIT
shm_before=$(ls /dev/shm 2>/dev/null)
# The tag (an argument the programs ignore) finds this job's processes.
tag=$outdir
start=$(date +%s.%N)
if [ "$omp" = 1 ]; then
    # As a user runs it: dsmrun (each rank under its monitor), one thread
    # per rank; the ranks' output together.
    echo "$me: DSM_COMM=$comm $env_extra $victim_env timeout 60 dsmrun -n $ranks -t 1 $path $how $where"
    env DSM_COMM="$comm" $env_extra $victim_env DSMRUN_MPIEXEC="$MPIEXEC" \
        timeout -k 5 60 "$top_builddir/tools/dsmrun" -n "$ranks" -t 1 "$path" "$how" "$where" \
        "$tag" </dev/null >"$outdir/mpiexec" 2>&1 &
else
    echo "$me: timeout 60 $MPIEXEC $mpi_extra -n $ranks $mon env DSM_COMM=$comm $env_extra $victim_env $path $how $where"
    timeout -k 5 60 "$MPIEXEC" $mpi_extra -n "$ranks" $mon env DSM_COMM="$comm" $env_extra \
        $victim_env /bin/sh -c 'exec "$@" >"$0/rank.$PMI_RANK" 2>&1' "$outdir" "$path" "$how" \
        "$where" "$tag" </dev/null >"$outdir/mpiexec" 2>&1 &
fi
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
end=$(date +%s.%N)
elapsed=$(echo "$end - $start" | bc)
sleep 0.5
left=$(pgrep -f -- "$tag" | grep -v "^$$\$")
cat "$outdir/mpiexec"
for f in "$outdir"/rank.*; do [ -f "$f" ] && { echo "--- ${f##*/}"; cat "$f"; }; done
all=$(cat "$outdir/mpiexec" "$outdir"/rank.* 2>/dev/null)
echo "$me: exit status $status after ${elapsed}s (limit ${limit}s)"

fail=0
# (usr1 cases: the job ends by the SIGTERM sent here, and mpiexec's status
# after a forwarded SIGTERM is 0 or 15 depending on timing: not checked.)
if [ "$ok" = 1 ]; then
    [ "$status" -eq 0 ] || { echo "$me: FAIL: exit status $status: a rank that computes was declared dead, or the job failed"; fail=1; }
elif [ "$status" -eq 0 ] && [ "$usr1" = 0 ]; then
    echo "$me: FAIL: the job exited 0: the failure went unnoticed"; fail=1
fi
if [ -n "$bound" ]; then
    at=$(printf '%s\n' "$all" | sed -n 's/.* fails at \([0-9.]*\).*/\1/p' | head -1)
    if [ -z "$at" ]; then
        echo "$me: FAIL: the victim printed no 'fails at' line"; fail=1
    else
        after=$(echo "$end - $at" | bc)
        echo "$me: the job ended ${after}s after the fault (bound ${bound}s)"
        if [ "$(echo "$after > $bound" | bc)" = 1 ]; then
            echo "$me: FAIL: ended ${after}s after the fault, more than ${bound}s"; fail=1
        fi
    fi
fi
shm_new=$(ls /dev/shm 2>/dev/null | grep -v -x -F "$shm_before")
if [ -n "$shm_new" ] && [ -n "$shm_before$shm_new" ]; then
    # Files another test made meanwhile may also show (MPICH's
    # mpich_shar_tmp* while a job starts): only those still there a second
    # later, open or mapped in no process, count.
    sleep 1
    for f in $shm_new; do
        [ -e "/dev/shm/$f" ] &&
            ! ls -l /proc/[0-9]*/fd 2>/dev/null | grep -q -F "/dev/shm/$f" &&
            ! cat /proc/[0-9]*/maps 2>/dev/null | grep -q -F "/dev/shm/$f" &&
            { echo "$me: FAIL: /dev/shm/$f left behind"; fail=1; }
    done
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
