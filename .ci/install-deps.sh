#!/bin/sh
# install-deps.sh - install the Debian 12 packages libdsm needs.
#   sh .ci/install-deps.sh          to build it and run the demo and the
#                                   benchmarks (README's first command);
#   sh .ci/install-deps.sh --tests  also what the test suite needs (cmocka,
#                                   the verification tools, the OpenMP
#                                   programs of tests/foreign): README's
#                                   second command and .ci/run.
# Runs apt-get as root, or through sudo.
set -e
case "${1:-}" in
    '') tests=0 ;;
    --tests) tests=1 ;;
    *) echo "install-deps.sh: unknown option '$1'; use no option or --tests" >&2; exit 2 ;;
esac
pkgs="build-essential gfortran autoconf automake libtool pkg-config mpich libmpich-dev libsigsegv-dev zlib1g-dev libcapstone-dev"
if [ $tests = 1 ]; then
    # make check (cmocka), make check-hosts (ip), make check-model (spin),
    # make fuzz (clang with libFuzzer)
    pkgs="$pkgs libcmocka-dev iproute2 spin clang libclang-rt-14-dev"
    # tests/foreign: OpenMP programs nobody here wrote, and cjpeg for their input
    pkgs="$pkgs fasttree andi jpegqs par2 clustalo cd-hit iqtree libjpeg-turbo-progs graphicsmagick sox gettext sumaclust ngspice bart gmic gretl ntcard r-base-core r-cran-mgcv r-cran-data.table aaphoto libopenblas0-pthread cdo primecount normaliz xtb splash"
fi
missing=""
for p in $pkgs; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
