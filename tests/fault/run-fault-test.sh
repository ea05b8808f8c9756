#!/bin/sh
# run-fault-test.sh - run one tests/fault case on one rank and judge its exit.
# Usage: run-fault-test.sh NAME   where NAME is a *.ft file name:
#   home_write_faults.ft, read_after_install.ft
#                               must exit 0 (77: skipped)
#   segv_null.ft, segv_wild.ft, segv_unallocated.ft, segv_freed.ft
#                               must die of SIGSEGV, with libdsm's line
#                               "this rank dies of SIGSEGV at address ..."
#                               saying whether the address is a null
#                               pointer, other memory or shared memory,
#                               and no protocol error
#   map_count_limit.ft          must exit non-zero naming vm.max_map_count
set -u
name=$(basename "$1" .ft)
# The programs sit beside the case's stamp file, in the build tree (which
# is not this script's folder in a VPATH build).
dir=$(dirname "$1")
MPIEXEC=${MPIEXEC:-mpiexec}
out=$(mktemp); trap 'rm -f "$out"' EXIT
run() { timeout 120 "$MPIEXEC" -n 1 "$@" >"$out" 2>&1; }
case $name in
home_write_faults|read_after_install)
    run "$dir/$name"; rc=$?; cat "$out"; exit $rc ;;
segv_*)
    mode=${name#segv_}
    run "$dir/segv_passthrough" "$mode"; rc=$?; cat "$out"
    if grep -q "protocol error" "$out"; then echo "FAIL: libdsm claimed a foreign fault"; exit 1; fi
    case $mode in
        null) where="a null pointer, or a small offset from one" ;;
        wild) where="not shared memory: a bug in the program" ;;
        *)    where="unallocated shared memory" ;;
    esac
    if ! grep -q "libdsm\[rank 0\]: this rank dies of SIGSEGV at address 0x[0-9a-f]* ($where" "$out"; then
        echo "FAIL: no 'this rank dies of SIGSEGV ... ($where' line"; exit 1; fi
    # mpiexec reports a process killed by SIGSEGV as exit 139 (128 + 11).
    if [ $rc -eq 139 ] || grep -qi "signal 11\|segmentation fault" "$out"; then
        echo "ok: died of SIGSEGV (status $rc)"; exit 0; fi
    echo "FAIL: expected death by SIGSEGV, got status $rc"; exit 1 ;;
map_count_limit)
    DSM_PAGE_SIZE=4096 DSM_HEAP_SIZE=2G run "$dir/map_count_limit"; rc=$?; cat "$out"
    [ $rc -eq 77 ] && exit 77
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "vm.max_map_count" "$out"; then
        echo "ok: clear message, status $rc"; exit 0; fi
    echo "FAIL: status $rc, message missing"; exit 1 ;;
*) echo "unknown fault test $name"; exit 1 ;;
esac
