#!/bin/sh
# fuzz/replay.sh BINDIR NAME... - replay fuzz/regressions/NAME/* and fuzz/corpus/NAME/*
# through the standalone build of each harness (BINDIR/NAME, made by check-fuzz-regress).
# Inputs listed in fuzz/regressions/KNOWN (a bug found and not yet fixed) are skipped
# with their reason. The driver's lines show as they come (it says how far it got every
# 10 s). Closes with "fuzz-regress: N passed, N failed, N skipped".
set -u
bindir=$1
shift
here=$(dirname "$0")
known="$here/regressions/KNOWN"
passed=0 failed=0 skipped=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

is_known() {	# is_known NAME/FILE: prints the reason if listed
	[ -f "$known" ] || return 1
	awk -v k="$1" '$1 == k { $1 = ""; sub(/^ +/, ""); print; found = 1; exit } END { exit !found }' "$known"
}

for name in "$@"; do
	set --
	for f in "$here/regressions/$name"/* "$here/corpus/$name"/*; do
		[ -f "$f" ] || continue
		rel=${f#"$here/regressions/"}
		if [ "$rel" != "$f" ] && reason=$(is_known "$rel"); then
			echo "SKIP $rel: known, not fixed yet: $reason"
			skipped=$((skipped + 1))
			continue
		fi
		set -- "$@" "$f"
	done
	if [ $# -eq 0 ]; then
		echo "$name: no inputs"
		continue
	fi
	echo "$name: $# inputs"
	"$bindir/$name" "$name" "$@" | tee "$tmp"
	line=$(tail -n 1 "$tmp")
	p=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
	q=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
	if [ -z "$p" ]; then	# the driver itself died
		p=0 q=$#
	fi
	passed=$((passed + p))
	failed=$((failed + q))
done
echo "fuzz-regress: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
