#!/usr/bin/env bash
# run.sh - run test programs, each under a timeout; print one line per test and
# a closing line "N passed, N failed, N skipped". Exit codes of a test: 0 pass,
# 77 skip, anything else (a timeout too) fail.
#
#   tests/run.sh [--label NAME] BINARY...
# Environment: XCALL_TEST_TIMEOUT seconds per test (default 300).
set -u
label=tests
if [ "${1:-}" = "--label" ]; then label=$2; shift 2; fi
limit=${XCALL_TEST_TIMEOUT:-300}
pass=0 fail=0 skip=0 failed=()
for t in "$@"; do
	name=$(basename "$t")
	out=$(mktemp)
	start=$(date +%s.%N)
	timeout --signal=KILL "$limit" "$t" >"$out" 2>&1
	rc=$?
	secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
	case $rc in
	0)  pass=$((pass+1)); printf '  PASS  %-22s %6ss\n' "$name" "$secs" ;;
	77) skip=$((skip+1)); printf '  SKIP  %-22s %s\n' "$name" "$(tail -n1 "$out")" ;;
	*)  fail=$((fail+1)); failed+=("$name")
	    [ $rc = 137 ] && echo "timed out after ${limit}s" >>"$out"
	    printf '  FAIL  %-22s %6ss (exit %d)\n' "$name" "$secs" "$rc"
	    sed 's/^/        | /' "$out" | tail -n 30 ;;
	esac
	grep -h '^stress:' "$out" | sed 's/^/        /'
	rm -f "$out"
done
echo "$label: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
