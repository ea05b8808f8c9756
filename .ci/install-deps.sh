#!/bin/sh
# install-deps.sh - install the Debian 12 packages libdsm needs to build,
# test and benchmark.  Runs apt-get as root, or through sudo.
set -e
pkgs="build-essential gfortran autoconf automake libtool pkg-config mpich libmpich-dev libsigsegv-dev libcmocka-dev zlib1g-dev libcapstone-dev iproute2"
# make check-model (spin), make fuzz (clang with libFuzzer)
pkgs="$pkgs spin clang libclang-rt-14-dev"
# tests/foreign: OpenMP programs nobody here wrote, and cjpeg for their input
pkgs="$pkgs fasttree andi jpegqs par2 clustalo cd-hit iqtree libjpeg-turbo-progs graphicsmagick sox gettext sumaclust ngspice bart gmic gretl ntcard r-base-core r-cran-mgcv r-cran-data.table aaphoto libopenblas0-pthread cdo primecount normaliz xtb splash"
missing=""
for p in $pkgs; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
