#!/bin/sh
# run-hosts.sh - `make check-hosts`: libdsm across three "hosts" made of
# network namespaces on this machine, with MPI forced onto TCP.
#
# Topology: namespaces PREFIXh0, PREFIXh1, PREFIXh2 (PREFIX = dsm<pid>),
# each with one veth interface eth0 (10.77.0.1, .2, .3/24) whose peer is on
# a bridge in namespace PREFIXsw.  Every host has its own UTS namespace and
# host name, so MPICH and libdsm see three machines; they share the file
# system (the build tree) and the kernel, as NFS-mounted cluster nodes would.
#
# MPI: MPICH's mpiexec (hydra) runs in PREFIXh0 and starts its proxies
# through tests/hosts/netns-launch.sh (-launcher ssh -launcher-exec),
# talking to them on 10.77.0.1 (-iface eth0).  MPICH 4.0.2 of Debian 12 is
# ch4:ucx: UCX_TLS=tcp,self makes UCX use TCP between processes (no shared
# memory, no CMA), and MPIR_CVAR_NOLOCAL=1 makes MPICH treat every process
# as remote (no ch4 shared-memory module).  A wrapper put first in PATH as
# mpiexec and mpiexec.mpich adds the hosts and launcher to every mpiexec the
# tests run (tools/dsmrun and the test runners call mpiexec.mpich by name).
#
# MPI_Finalize: MPICH 4.0.2 over UCX TCP deadlocks in MPI_Finalize in about
# 1 run in 3 across these hosts, with or without libdsm: a rank that has
# closed its endpoints waits in a PMI barrier without progressing UCX while
# a peer still waits for it to answer its endpoint close.  Every rank
# therefore runs with tests/hosts/ucx-finalize-progress.so preloaded, which
# progresses UCX from a helper thread while MPI_Finalize runs (its header
# has the details; docs/ERRORS.md section 7).  It is put in LD_PRELOAD by
# the mpiexec wrapper and also in host 0's environment, because
# tools/dsmrun sets LD_PRELOAD for its ranks from its own environment.
#
# Runs, first, a job through a host file (tools/dsmrun -f FILE, the
# launcher without -hosts): hostname and a shim program on 3 ranks, one per
# host; then, for every transport (HOSTS_COMMS, default queue direct):
#   laplace (explicit libdsm API, checked bitwise against seq and MPI) on
#   3 and 4 ranks; the tests/mpi programs on 3 ranks; BT class S on 3 ranks
#   (verified against NPB's norms); the shim's process tests (tests/shim)
#   and the OpenMP tests (tests/omp) on 3 ranks.
# HOSTS_QUICK=1 runs laplace, BT S and the tests/shim cases only.
# run-hosts.sh -- COMMAND...  runs COMMAND on host 0 instead (its mpiexec
# spans the three hosts), e.g. to rerun one case by hand.
#
# Exit status: 0 all passed, 1 a failure, 77 skipped (no root, no ip netns,
# no veth/bridge support: the reason is printed).
top_builddir=${top_builddir:-$(pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
me=run-hosts
skip() { echo "$me: SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "network namespaces need root (run as root, or in CI)"
command -v ip >/dev/null || skip "ip (iproute2) is not installed: apt-get install iproute2"
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
real=$(command -v mpiexec.mpich || command -v mpiexec) || skip "mpiexec not found"
finalize_lib=$top_builddir/tests/hosts/ucx-finalize-progress.so
if [ ! -f "$finalize_lib" ]; then
    echo "$me: $finalize_lib is missing: build it with make tests/hosts/ucx-finalize-progress.so (make check-hosts does)" >&2
    exit 99
fi
preload=$finalize_lib${LD_PRELOAD:+:$LD_PRELOAD}
prefix=dsm$$
export DSMHOSTS_PREFIX=$prefix
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hosts.XXXXXX") || exit 99

cleanup() {
    for n in h0 h1 h2 sw; do ip netns del "$prefix$n" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add ${prefix}sw 2>"$tmp/err" ||
    skip "cannot make a network namespace: $(cat "$tmp/err")"
ip -n ${prefix}sw link add br0 type bridge 2>"$tmp/err" ||
    skip "cannot make a bridge: $(cat "$tmp/err")"
ip -n ${prefix}sw link set br0 up
for i in 0 1 2; do
    ns=${prefix}h$i
    { ip netns add $ns &&
      ip link add eth0 netns $ns type veth peer name p$i netns ${prefix}sw &&
      ip -n ${prefix}sw link set p$i master br0 up &&
      ip -n $ns addr add 10.77.0.$((i + 1))/24 dev eth0 &&
      ip -n $ns link set eth0 up &&
      ip -n $ns link set lo up; } 2>"$tmp/err" ||
        skip "cannot set up host $ns (veth): $(cat "$tmp/err")"
done
echo "$me: hosts ${prefix}h0..h2 = 10.77.0.1..3 on bridge ${prefix}sw/br0"

mkdir "$tmp/bin"
cat > "$tmp/bin/mpiexec" <<EOW
#!/bin/sh
case :\$LD_PRELOAD: in
    *:$finalize_lib:*) ;;
    *) LD_PRELOAD=$finalize_lib\${LD_PRELOAD:+:\$LD_PRELOAD}; export LD_PRELOAD ;;
esac
exec "$real" -launcher ssh -launcher-exec "$top_srcdir/tests/hosts/netns-launch.sh" \\
    -iface eth0 -hosts 10.77.0.1,10.77.0.2,10.77.0.3 "\$@"
EOW
chmod +x "$tmp/bin/mpiexec"
cp "$tmp/bin/mpiexec" "$tmp/bin/mpiexec.mpich"

# Everything below runs on host 0.
cat > "$tmp/inside.sh" <<'EOI'
#!/bin/sh
# Runs in host 0.  $1: the build tree; $2: the transports; $3: quick.
b=$1 comms=$2 quick=$3
cd "$b" || exit 99
pass=0 fail=0 skipped=0
report() {   # NAME STATUS LOG
    case $2 in
        0)  pass=$((pass + 1)); echo "PASS: $1" ;;
        77) skipped=$((skipped + 1)); echo "SKIP: $1" ;;
        *)  fail=$((fail + 1)); echo "FAIL: $1 (status $2)"; sed 's/^/    /' "$3" | tail -40 ;;
    esac
}
log=$(mktemp)
# The host-file path (dsmrun(1), RUNNING ACROSS HOSTS): tools/dsmrun -f FILE
# with the bare launcher (no wrapper, so no -hosts): one rank on each host
# the file names, each with that host's name, and a shim program's team
# spans them.
hf=$(mktemp)
printf '10.77.0.1:1\n10.77.0.2:1\n10.77.0.3:1\n' >"$hf"
DSMRUN_MPIEXEC=$DSMHOSTS_LAUNCHER timeout 120 tools/dsmrun -f "$hf" -n 3 hostname \
    </dev/null >"$log" 2>"$hf.err"
st=$?
if [ $st = 0 ] && [ "$(sort "$log" | tr '\n' ' ')" != "${DSMHOSTS_PREFIX}h0 ${DSMHOSTS_PREFIX}h1 ${DSMHOSTS_PREFIX}h2 " ]; then
    echo "expected one rank on each of ${DSMHOSTS_PREFIX}h0..h2" >>"$log"; st=1
fi
cat "$hf.err" >>"$log"
report "dsmrun -f HOSTFILE -n 3 hostname: one rank per host" $st "$log"
DSMRUN_MPIEXEC=$DSMHOSTS_LAUNCHER timeout 120 tools/dsmrun -f "$hf" -n 3 tests/shim/exit_status.dsm \
    </dev/null >"$log" 2>&1
st=$?
if [ $st = 3 ] && grep -q -x "exit_status: team of 3" "$log"; then st=0
elif [ $st = 0 ]; then st=1; fi
report "dsmrun -f HOSTFILE -n 3 tests/shim/exit_status.dsm: team of 3, status 3" $st "$log"
# Liveness across hosts, where no rank can see another's process: rank 2
# (on h2) stops in a parallel region; ranks 0 and 1 must find it silent
# (no heartbeat) within DSM_TIMEOUT=3 s and end the job, naming it.  And
# killed: its monitor names it (libdsm(7), FAILURES).
for how in stop kill; do
    t0=$(date +%s)
    DSM_TIMEOUT=3 DSMRUN_MPIEXEC=$DSMHOSTS_LAUNCHER timeout 60 tools/dsmrun -f "$hf" -n 3 -t 1 \
        tests/omp/fault_victim.dsm $how join </dev/null >"$log" 2>&1
    st=$?
    took=$(( $(date +%s) - t0 ))
    if [ $st = 0 ] || [ $st = 124 ] || [ $took -gt 20 ]; then st=1
    elif [ $how = stop ] &&
         grep -q -E "libdsm\[rank [01]\]: rank 2 \(pid [0-9]+ on ${DSMHOSTS_PREFIX}h2\) is not responding" "$log"; then st=0
    elif [ $how = kill ] &&
         grep -q -E "dsmrun: rank 2 \(pid [0-9]+ on ${DSMHOSTS_PREFIX}h2\) was killed by signal 9" "$log"; then st=0
    else st=1; fi
    echo "(ended after $took s)" >>"$log"
    report "dsmrun -f HOSTFILE -n 3 fault_victim $how join: rank 2 named, ended in $took s" $st "$log"
done
rm -f "$hf" "$hf.err"
for c in $comms; do
    for n in 3 4; do
        timeout 300 mpiexec -n $n env DSM_COMM=$c benchmarks/laplace/laplace \
            --size 1024 --iter 20 </dev/null >"$log" 2>&1
        report "laplace 1024x1024 x20, $n ranks, $c" $? "$log"
    done
    tests/bt/run-bt-test.sh S.n3.$c >"$log" 2>&1
    report "BT class S, 3 ranks, $c" $? "$log"
    for t in exit_status stats unsupported io preload mpiexec badenv; do
        tests/shim/run-shim-test.sh $t.n3.$c >"$log" 2>&1
        report "tests/shim $t, 3 ranks, $c" $? "$log"
    done
    [ "$quick" = 1 ] && continue
    for p in disjoint_page lock_counter producer_consumer random_drf threads; do
        tests/mpi/run-mpi-test.sh $p.n3.$c >"$log" 2>&1
        report "tests/mpi $p, 3 ranks, $c" $? "$log"
    done
    for f in tests/omp/*.dsm; do
        p=${f##*/}; p=${p%.dsm}
        # Not a comparison with libgomp: the fault tests' victim.
        [ "$p" = fault_victim ] && continue
        tests/omp/run-omp-test.sh $p.n3.$c >"$log" 2>&1
        report "tests/omp $p, 3 ranks, $c" $? "$log"
    done
done
rm -f "$log"
echo "hosts: $pass passed, $fail failed, $skipped skipped"
[ $fail -eq 0 ]
EOI

# The launcher without the wrapper's hosts, for the host-file job.
DSMHOSTS_LAUNCHER="$real -launcher ssh -launcher-exec $top_srcdir/tests/hosts/netns-launch.sh -iface eth0"
export DSMHOSTS_LAUNCHER

if [ "$1" = "--" ]; then
    shift
    PATH=$tmp/bin:$PATH UCX_TLS=tcp,self MPIR_CVAR_NOLOCAL=1 LD_PRELOAD=$preload \
        ip netns exec ${prefix}h0 unshare --uts \
        sh -c "hostname ${prefix}h0; cd '$top_builddir' && exec \"\$@\"" sh "$@" </dev/null
    exit $?
fi
comms=${HOSTS_COMMS:-queue direct}
echo "$me: transports: $comms; MPI over TCP: UCX_TLS=tcp,self MPIR_CVAR_NOLOCAL=1"
echo "$me: preloaded into every rank: $finalize_lib"
start=$(date +%s)
PATH=$tmp/bin:$PATH UCX_TLS=tcp,self MPIR_CVAR_NOLOCAL=1 LD_PRELOAD=$preload \
    ip netns exec ${prefix}h0 unshare --uts \
    sh -c "hostname ${prefix}h0; exec sh '$tmp/inside.sh' '$top_builddir' '$comms' '${HOSTS_QUICK:-0}'" \
    </dev/null
st=$?
echo "$me: done in $(( $(date +%s) - start )) s, status $st"
exit $st
