#!/bin/sh
# netns-launch.sh - hydra's "ssh" for the hosts of tests/hosts: enter the
# network namespace of the host instead of logging in to it.
#
# mpiexec runs it as it would run ssh (-launcher ssh -launcher-exec THIS):
#   netns-launch.sh [OPTIONS] HOST COMMAND...
# HOST is 10.77.0.N; it runs COMMAND (joined with spaces and given to
# sh -c, as ssh does) in namespace ${DSMHOSTS_PREFIX}hN-1, in a UTS
# namespace of its own whose host name is ${DSMHOSTS_PREFIX}hN-1, so that
# every "host" has its own name as on a cluster.
while [ $# -gt 0 ]; do
    case $1 in -*) shift ;; *) break ;; esac
done
host=$1
shift
case $host in
    10.77.0.[1-9]) i=$(( ${host##*.} - 1 )) ;;
    *) echo "netns-launch: unknown host '$host' (expected 10.77.0.N)" >&2; exit 255 ;;
esac
ns=${DSMHOSTS_PREFIX:?DSMHOSTS_PREFIX is not set}h$i
exec ip netns exec "$ns" unshare --uts sh -c "hostname $ns; exec $*"
