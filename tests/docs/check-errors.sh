#!/bin/sh
# check-errors.sh - docs/ERRORS.md must stay true: every phrase it lists
# (first column of its tables, in backquotes) must appear in the sources,
# and every test it names must exist.
#
# The sources are libdsm/, omp-shim/ and tools/, with adjacent C string
# literals joined ("abc " "def" reads "abc def"), so a phrase may span the
# lines a message is split over.  A test is named by a backquoted path in
# the last column: it exists if the file is in the source tree, or if a
# Makefile.inc lists it (test-case stamps are made by the build).
# Exit status: 0 all found, 1 something missing, 99 cannot run.
srcdir=${srcdir:-$(dirname "$0")/../..}
doc=$srcdir/docs/ERRORS.md
[ -f "$doc" ] || { echo "check-errors: $doc not found" >&2; exit 99; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# All sources on one line, literals joined.
find "$srcdir/libdsm" "$srcdir/omp-shim" "$srcdir/tools" -name '*.c' -o -name '*.h' \
    -o -name '*.in' | sort | xargs cat | tr '\n\t' '  ' |
    sed -e 's/"[[:space:]]*"//g' > "$tmp/src"
cat "$srcdir"/Makefile.am "$srcdir"/*/Makefile.inc "$srcdir"/*/*/Makefile.inc \
    "$srcdir"/*/*/*/Makefile.inc > "$tmp/mk" 2>/dev/null

fail=0 nphrase=0 ntest=0
# Table rows: | `phrase` | message | tests |
grep -E '^\| `' "$doc" > "$tmp/rows"
while IFS= read -r row; do
    phrase=$(printf '%s\n' "$row" | sed -e 's/^| `\([^`]*\)`.*/\1/')
    nphrase=$((nphrase + 1))
    if ! grep -F -q -- "$phrase" "$tmp/src"; then
        echo "check-errors: FAIL: phrase not in the sources: $phrase"
        fail=1
    fi
    tests=$(printf '%s\n' "$row" | awk -F'|' '{print $(NF-1)}' | grep -o '`[^`]*`' | tr -d '`')
    for t in $tests; do
        ntest=$((ntest + 1))
        [ -e "$srcdir/$t" ] && continue
        grep -F -q -- "$t" "$tmp/mk" && continue
        echo "check-errors: FAIL: test not found: $t (row: $phrase)"
        fail=1
    done
done < "$tmp/rows"
# Tests named in the prose, too.
for t in $(grep -v '^| `' "$doc" | grep -o '`tests/[^` ]*`' | tr -d '`'); do
    ntest=$((ntest + 1))
    [ -e "$srcdir/$t" ] || grep -F -q -- "$t" "$tmp/mk" ||
        { echo "check-errors: FAIL: test not found: $t"; fail=1; }
done
echo "check-errors: $nphrase phrases and $ntest test references checked"
[ "$nphrase" -gt 50 ] || { echo "check-errors: FAIL: only $nphrase rows read: is the table format broken?"; fail=1; }
exit $fail
