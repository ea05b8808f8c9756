#!/bin/sh
# run-stress.sh - `make check-stress`: random data-race-free programs
# (tests/stress/stress.c) on 2, 3 and 4 ranks for every transport, new seed
# each run, for STRESS_MINUTES minutes in all (default 10), split evenly
# between the transports.  Each run's final memory is compared with the
# sequential model inside the program.
#
# Environment:
#   STRESS_MINUTES  total time (default 10; CI uses less)
#   STRESS_ROUNDS   rounds per run (default 150)
#   STRESS_COMMS    transports (default: every DSM_COMM value libdsm/config.c
#                   accepts, read from its source)
#   STRESS_TIMEOUT  seconds one run may take before it counts as a hang (300)
#   STRESS_PREFETCH DSM_PREFETCH values to alternate between runs (default
#                   "none history"; a DSM_PREFETCH in the environment fixes it)
#   other DSM_* variables are passed on (e.g. DSM_PAGE_SIZE=4096).
# On failure: the seed, ranks, transport and the command that reruns it,
# and the run's output.  Exit status: 0 no failure, 1 failures.
MPIEXEC=${MPIEXEC:-mpiexec}
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
prog=$top_builddir/tests/stress/stress
[ -x "$prog" ] || { echo "run-stress: $prog not built (make tests/stress/stress)" >&2; exit 99; }
minutes=${STRESS_MINUTES:-10}
rounds=${STRESS_ROUNDS:-150}
limit=${STRESS_TIMEOUT:-300}
comms=${STRESS_COMMS:-$(sed -n 's/.*strcmp(v, "\([a-z]*\)")) cfg->comm = .*/\1/p' \
    "$top_srcdir/libdsm/config.c" | tr '\n' ' ')}
[ -n "$comms" ] || comms="queue direct"
prefetches=${DSM_PREFETCH:-${STRESS_PREFETCH:-none history}}
npf=$(echo $prefetches | wc -w)
ncomm=$(echo $comms | wc -w)
per=$(( minutes * 60 / ncomm ))
[ $per -gt 0 ] || per=1
echo "run-stress: $minutes min over transports: $comms (${per}s each), $rounds rounds per run, DSM_PREFETCH alternating: $prefetches"
out=$(mktemp -d "${TMPDIR:-/tmp}/stress.XXXXXX") || exit 99
trap 'rm -rf "$out"' EXIT
runs=0 fails=0 seedn=0
for comm in $comms; do
    end=$(( $(date +%s) + per ))
    n=2
    while [ "$(date +%s)" -lt "$end" ]; do
        seedn=$((seedn + 1))
        seed=$(( ($(date +%s) * 7919 + seedn * 104729 + $$) % 4294967296 ))
        runs=$((runs + 1))
        # DSM_PREFETCH alternates run by run (seedn counts every run).
        pf=$(echo $prefetches | cut -d' ' -f$(( (seedn - 1) % npf + 1 )))
        timeout -k 5 "$limit" "$MPIEXEC" -n $n env DSM_COMM=$comm DSM_PREFETCH=$pf \
            /bin/sh -c 'exec "$@" >"$0/rank.$PMI_RANK" 2>&1' "$out" "$prog" "$rounds" "$seed" \
            </dev/null >"$out/mpiexec" 2>&1
        st=$?
        if [ $st -ne 0 ]; then
            fails=$((fails + 1))
            echo "run-stress: FAIL (status $st$( [ $st = 124 ] && echo ': a hang')): seed $seed, $n ranks, DSM_COMM=$comm DSM_PREFETCH=$pf"
            echo "run-stress:   rerun: $MPIEXEC -n $n env DSM_COMM=$comm DSM_PREFETCH=$pf $prog $rounds $seed"
            cat "$out/mpiexec" "$out"/rank.* | head -60 | sed 's/^/    /'
        fi
        rm -f "$out"/rank.*
        n=$(( n == 4 ? 2 : n + 1 ))
    done
done
echo "run-stress: $runs runs, $fails failed"
[ $fails -eq 0 ]
