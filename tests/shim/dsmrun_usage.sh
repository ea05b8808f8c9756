#!/bin/sh
# dsmrun_usage.sh - tools/dsmrun's help and usage errors, and the launcher
# command it builds (no MPI job: DSMRUN_MPIEXEC is a printf that shows it).
#   --help and -h: the help on standard output, nothing on standard error,
#     status 0;
#   a wrong usage (no arguments, an unknown option, -n 0, a missing host
#     file): the usage line on standard error, nothing on standard output,
#     status 2;
#   -f FILE and DSMRUN_MPIEXEC_ARGS reach the launcher before -n.
# Exit status: 0 pass, 1 fail, 77 not built.
top=${top_builddir:-.}
run=$top/tools/dsmrun
[ -x "$run" ] || { echo "dsmrun_usage: SKIP: $run not built"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "dsmrun_usage: FAIL: $*"; fail=1; }

for h in --help -h; do
    "$run" $h >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc = 0 ] || bad "dsmrun $h: status $rc, expected 0"
    [ -s "$tmp/err" ] && bad "dsmrun $h: wrote to standard error: $(cat "$tmp/err")"
    grep -q "^usage: dsmrun -n RANKS" "$tmp/out" || bad "dsmrun $h: no usage line on standard output"
    for w in "-f, --hostfile FILE" DSMRUN_MPIEXEC_ARGS DSM_THREADS_PER_RANK "setarch" "dsmrun(1)"; do
        grep -q -F -e "$w" "$tmp/out" || bad "dsmrun $h: the help does not mention $w"
    done
done

# A wrong usage: "ARGS|what the line before the usage says" (empty: none).
for c in "|" "--bogus /bin/true|unknown option --bogus" "-n 0 /bin/true|-n needs a number of ranks" \
         "-n 2 -f $tmp/none /bin/true|no such host file" "-n 2 -f|"; do
    args=${c%%|*}
    why=${c#*|}
    # Word-split ARGS on purpose.
    DSMRUN_MPIEXEC=false "$run" $args >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc = 2 ] || bad "dsmrun $args: status $rc, expected 2"
    [ -s "$tmp/out" ] && bad "dsmrun $args: wrote to standard output: $(cat "$tmp/out")"
    grep -q "^usage: dsmrun -n RANKS" "$tmp/err" || bad "dsmrun $args: no usage line on standard error"
    [ -z "$why" ] || grep -q -F -e "$why" "$tmp/err" || bad "dsmrun $args: no '$why' on standard error"
done

# The command: the launcher's own options, then -f FILE (a name with a
# space stays one word), then -n.
echo "localhost:2" >"$tmp/host file"
DSMRUN_MPIEXEC="printf <%s>" DSMRUN_MPIEXEC_ARGS="-iface lo" \
    "$run" -f "$tmp/host file" -n 2 -t 3 /bin/true >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] || bad "dsmrun -f: status $rc: $(cat "$tmp/err")"
# Each rank under dsmrun-monitor (it names a rank a signal killed).
grep -q -F -e "<-iface><lo><-f><$tmp/host file><-n><2><$(cd "$top/tools" && pwd)/dsmrun-monitor><setarch>" "$tmp/out" ||
    bad "dsmrun -f: launcher command was $(cat "$tmp/out")"
grep -q -F -e "<DSM_THREADS_PER_RANK=3><LD_BIND_NOW=1>" "$tmp/out" ||
    bad "dsmrun -t 3: launcher command was $(cat "$tmp/out")"
DSMRUN_MPIEXEC="printf <%s>" "$run" --hostfile "$tmp/host file" -n 1 /bin/true >"$tmp/out" 2>&1
grep -q -F -e "<-f><$tmp/host file><-n><1>" "$tmp/out" ||
    bad "dsmrun --hostfile: launcher command was $(cat "$tmp/out")"

[ $fail = 0 ] && echo "dsmrun_usage: ok"
exit $fail
