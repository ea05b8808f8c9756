#!/bin/sh
# run-foreign-test.sh - one case of the foreign-program tests: an OpenMP
# program that nobody here wrote, as Debian ships it (built with gcc
# -fopenmp against libgomp), run across ranks with tools/dsmrun (the shim
# preloaded in front of libgomp) and compared byte for byte with the same
# binary under the stock libgomp with the same number of threads.
#
# Usage: tests/foreign/run-foreign-test.sh [DIR/]PROG.SHAPE.COMM[.frgt]
# SHAPE is nRANKS or nRANKStTHREADS (threads per rank); COMM a DSM_COMM.
# PROG is one of:
#   fasttree  fasttreeMP (package fasttree): a phylogenetic tree of 120
#             nucleotide sequences of 600 sites; the tree printed
#   andi      andi: distances between six 200 kb genomes (its sequences
#             come from strndup); the matrix printed
#   jpegqs    jpegqs: smooths a JPEG (libjpeg's coefficient arrays and
#             their function pointers, read in a parallel loop); the JPEG
#   aaphoto   aaphoto: auto-adjusts a JPEG's colours; the JPEG written.
#             Not in make check, and not installed by .ci/install-deps.sh:
#             it adds to shared sums with "omp atomic", which plain gcc
#             -fopenmp makes inline lock cmpxchg loops that the shim
#             cannot see, so additions from different ranks are lost and
#             the JPEG differs (DSM_CHECK=races names the sums on main's
#             stack); kept here to show that (README.md).
#   par2      par2 create (C++: operator new): recovery files for 2 MB;
#             every .par2 file
# The inputs are made here with awk (and cjpeg, package
# libjpeg-turbo-progs, for the JPEG), the same for both runs.
# Exit status: 0 pass, 1 fail, 77 skip (the program is not installed:
# .ci/install-deps.sh installs them), 99 harness error, 124 timeout.

top_builddir='/work/main'
me=run-foreign-test
name=${1##*/}
name=${name%.frgt}
comm=${name##*.}
rest=${name%.*}
shape=${rest##*.}
prog=${rest%.*}
case $shape in
    n*t*) ranks=${shape#n}; ranks=${ranks%%t*}; threads=${shape#*t} ;;
    n*)   ranks=${shape#n}; threads=1 ;;
    *)    ranks=; threads= ;;
esac
case $ranks$threads in ''|*[!0-9]*)
    echo "$me: cannot read a case from '$1': expected PROG.nRANKS[tTHREADS].COMM" >&2
    exit 99 ;;
esac
team=$((ranks * threads))
limit=${FOREIGNTEST_TIMEOUT:-180}
run=$top_builddir/tools/dsmrun
[ -x "$run" ] || { echo "$me: $run is not built" >&2; exit 99; }

need() {
    for b in "$@"; do
        command -v "$b" >/dev/null 2>&1 && continue
        echo "$me: $b is not installed (sh .ci/install-deps.sh installs it): skip"
        exit 77
    done
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/ref" "$work/dsm"

fail() {
    echo "$me: $name: FAIL: $*" >&2
    for f in "$work"/dsm.err "$work"/ref.err; do
        [ -s "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }
    done
    exit 1
}

# run_both DIR-RELATIVE COMMAND...: in ref/ under libgomp, in dsm/ on the
# shim; standard output to out.txt in each.
run_both() {
    (cd "$work/ref" && OMP_NUM_THREADS=$team timeout "$limit" "$@" \
        > out.txt 2> ../ref.err)
    rc=$?
    [ $rc = 124 ] && fail "the libgomp run timed out after $limit s"
    [ $rc = 0 ] || { echo "$me: the libgomp reference failed (exit $rc)" >&2;
                     cat "$work/ref.err" >&2; exit 99; }
    (cd "$work/dsm" && DSM_COMM=$comm timeout "$limit" "$run" -n "$ranks" \
        -t "$threads" "$@" > out.txt 2> ../dsm.err)
    rc=$?
    [ $rc = 124 ] && { echo "$me: $name: the shim's run timed out after $limit s" >&2;
                       exit 124; }
    [ $rc = 0 ] || fail "exit status $rc under the shim"
}

# Pseudo-random bases from awk, one line: seed, count.
bases() {
    awk -v seed="$1" -v n="$2" 'BEGIN { srand(seed);
        for (i = 0; i < n; i++) printf "%s", substr("ACGT", int(rand() * 4) + 1, 1);
        printf "\n" }'
}

# mutate FILE RATE SEED: the line in FILE, each site replaced with a random
# base at RATE.
mutate() {
    awk -v r="$2" -v seed="$3" 'BEGIN { srand(seed) }
        { n = length($0);
          for (i = 1; i <= n; i++)
              printf "%s", ((rand() < r) ? substr("ACGT", int(rand() * 4) + 1, 1) : substr($0, i, 1));
          printf "\n" }' "$1"
}

make_jpeg() {
    need cjpeg
    awk 'BEGIN { w = 480; h = 360; print "P3"; print w, h; print 255;
        for (y = 0; y < h; y++) for (x = 0; x < w; x++)
            printf "%d %d %d\n", int(127 + 120 * sin(x / 23.0) * cos(y / 17.0)),
                (x * y) % 256, int(127 + 100 * sin((x + y) / 40.0)) }' > "$work/img.ppm"
    cjpeg -quality 30 "$work/img.ppm" > "$1" || { echo "$me: cjpeg failed" >&2; exit 99; }
}

case $prog in
fasttree)
    need fasttreeMP
    bases 11 600 > "$work/root"
    for clade in 0 1 2 3 4 5 6 7; do
        mutate "$work/root" 0.15 $((100 + clade)) > "$work/anc$clade"
    done
    i=0
    while [ $i -lt 120 ]; do
        # Eight clades, each a mutation of its own ancestor.
        clade=$((i % 8))
        printf '>s%d_c%d\n' $i $clade
        mutate "$work/anc$clade" 0.04 $((1000 + i))
        i=$((i + 1))
    done > "$work/aln.fa"
    cp "$work/aln.fa" "$work/ref/" && cp "$work/aln.fa" "$work/dsm/"
    run_both fasttreeMP -nt -quiet aln.fa
    files=out.txt ;;
andi)
    need andi
    bases 21 200000 > "$work/base"
    for g in 0 1 2 3 4 5; do
        { printf '>g%d\n' $g; mutate "$work/base" "0.0$((g + 1))" $((300 + g)); } > "$work/g$g.fa"
    done
    cp "$work"/g?.fa "$work/ref/" && cp "$work"/g?.fa "$work/dsm/"
    run_both andi -t "$team" g0.fa g1.fa g2.fa g3.fa g4.fa g5.fa
    files=out.txt ;;
jpegqs)
    need jpegqs
    make_jpeg "$work/in.jpg"
    cp "$work/in.jpg" "$work/ref/" && cp "$work/in.jpg" "$work/dsm/"
    run_both jpegqs -t "$team" -i 0 in.jpg out.jpg
    files="out.txt out.jpg" ;;
aaphoto)
    need aaphoto
    make_jpeg "$work/in.jpg"
    for d in ref dsm; do cp "$work/in.jpg" "$work/$d/" && mkdir "$work/$d/o"; done
    run_both aaphoto -s -a -t "$team" -o o in.jpg
    files="out.txt o/in_new.jpg" ;;
par2)
    need par2
    awk 'BEGIN { srand(31); for (i = 0; i < 40000; i++) {
        l = ""; for (j = 0; j < 7; j++) l = l sprintf("%08x", int(rand() * 4294967296));
        print l } }' > "$work/d.bin"
    cp "$work/d.bin" "$work/ref/" && cp "$work/d.bin" "$work/dsm/"
    run_both par2 create -q -t"$team" -r10 d.par2 d.bin
    files="out.txt $(cd "$work/ref" && ls ./*.par2)" ;;
*)
    echo "$me: unknown program '$prog' (fasttree, andi, jpegqs, aaphoto, par2)" >&2
    exit 99 ;;
esac

for f in $files; do
    [ -f "$work/ref/$f" ] || { echo "$me: the libgomp run wrote no $f" >&2; exit 99; }
    [ -f "$work/dsm/$f" ] || fail "the shim's run wrote no $f"
    cmp -s "$work/ref/$f" "$work/dsm/$f" || fail "$f differs from the libgomp run's"
done
[ "$files" = out.txt ] && [ ! -s "$work/ref/out.txt" ] && { echo "$me: empty output" >&2; exit 99; }
echo "$me: $name: $prog on $ranks ranks x $threads threads ($comm) wrote the same" \
     "$(echo $files | wc -w) file(s) as under libgomp with $team threads"
exit 0
