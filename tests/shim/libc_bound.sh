#!/bin/sh
# libc_bound.sh - libdsm reaches the C library through libdsm/libc.h only:
# no object of libdsm may refer to a name that libompshim.so defines for the
# program (malloc, write, pthread_mutex_lock, ...), because inside
# libompshim.so such a reference binds to the shim's wrapper, not to glibc.
#
# Lists the undefined symbols of libdsm's archives (libdsmcore, libdsmpure)
# that libdsm does not define itself and libompshim.so exports; any such
# name fails the test.  The fix is a line in libdsm/libc.h.
# Exit status: 0 none, 1 some, 77 no nm or no build, 99 cannot run.
top=${top_builddir:-.}
core=$top/libdsm/.libs/libdsmcore.a
pure=$top/libdsm/.libs/libdsmpure.a
shim=$top/omp-shim/.libs/libompshim.so
command -v nm >/dev/null 2>&1 || { echo "libc_bound: SKIP: no nm"; exit 77; }
for f in "$core" "$pure" "$shim"; do
    [ -f "$f" ] || { echo "libc_bound: SKIP: $f not built"; exit 77; }
done
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# Names only, without a symbol version (nm -D writes name@VERSION); a weak
# reference (w, v) binds like a strong one.
nm -u "$core" "$pure" 2>/dev/null | awk 'NF >= 2 && ($1 == "U" || $1 == "w" || $1 == "v") { print $2 }' |
    sed -e 's/@.*//' | sort -u > "$tmp/undef" || exit 99
nm --defined-only "$core" "$pure" 2>/dev/null | awk 'NF == 3 { print $3 }' |
    sort -u > "$tmp/own" || exit 99
nm -D --defined-only "$shim" | awk 'NF == 3 { print $3 }' | sed -e 's/@.*//' |
    sort -u > "$tmp/shim" || exit 99
[ -s "$tmp/undef" ] && [ -s "$tmp/shim" ] || { echo "libc_bound: nm gave nothing" >&2; exit 99; }

comm -23 "$tmp/undef" "$tmp/own" | comm -12 - "$tmp/shim" > "$tmp/bad"
n=$(wc -l < "$tmp/bad")
if [ "$n" -ne 0 ]; then
    echo "libc_bound: FAIL: libdsm refers to $n name(s) that libompshim.so interposes;" >&2
    echo "libc_bound: bind each to glibc in libdsm/libc.h:" >&2
    sed -e 's/^/  /' "$tmp/bad" >&2
    exit 1
fi
echo "libc_bound: PASS: $(wc -l < "$tmp/undef") undefined names in libdsm, none interposed by the shim"
exit 0
