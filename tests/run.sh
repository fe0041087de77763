#!/usr/bin/env bash
# run.sh - run test programs, each under a timeout; print one line per test and
# a closing line "N passed, N failed, N skipped". Exit codes of a test: 0 pass,
# 77 skip, anything else (a timeout too) fail.
#
#   tests/run.sh [--label NAME] BINARY...
#   tests/run.sh [--label NAME] --flaky K BINARY...
#
# --flaky K: run each program K times beside a hog (one busy process per online
# CPU, pinned there, started here and killed on every way out), and say per
# program how many of its K runs failed, with the output of the first failure.
# A program that skips every run is skipped; one that fails any run fails.
# Environment: XCALL_TEST_TIMEOUT seconds per run (default 300); with --flaky,
# XCALL_FLAKY_LOGS=DIR keeps every failed run's output there as NAME.RUN.log.
set -u
label=tests repeat=0 ticker=
while [ $# -gt 0 ]; do
	case $1 in
	--label) label=$2; shift 2 ;;
	--flaky) repeat=$2; shift 2
		 case $repeat in ''|*[!0-9]*|0) echo "run.sh: --flaky wants a count >= 1" >&2; exit 2 ;; esac ;;
	*) break ;;
	esac
done
limit=${XCALL_TEST_TIMEOUT:-300}
pass=0 fail=0 skip=0 failed=()
tmp=$(mktemp -d)
hogs=() tpid=

# Every way out: the running test (its timeout forwards the signal) and the hog go.
cleanup()
{
	[ -n "$tpid" ] && kill -TERM "$tpid" 2>/dev/null
	[ -n "$ticker" ] && kill "$ticker" 2>/dev/null
	for p in ${hogs[@]+"${hogs[@]}"}; do kill -KILL "$p" 2>/dev/null; done
	for p in ${hogs[@]+"${hogs[@]}"}; do wait "$p" 2>/dev/null; done
	hogs=()
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo "$label: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

start_hog()
{
	local cpus n c
	cpus=$(awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-");
		for (c = r[1]; c <= r[n]; c++) print c } }' /sys/devices/system/cpu/online 2>/dev/null)
	[ -n "$cpus" ] || cpus=$(seq 0 $(($(getconf _NPROCESSORS_ONLN) - 1)))
	# it spins; now and then (well under a second) it checks that this runner
	# lives, so that a runner killed by SIGKILL leaves no hog behind
	spin='while kill -0 "$1" 2>/dev/null; do for ((i = 0; i < 100000; i++)); do :; done; done'
	n=0
	for c in $cpus; do
		if command -v taskset >/dev/null; then
			taskset -c "$c" bash -c "$spin" hog $$ &
		else
			bash -c "$spin" hog $$ &
		fi
		hogs+=($!)
		n=$((n + 1))
	done
	echo "$label: $repeat runs of each test beside a hog: $n busy processes, one per online CPU"
}

# One run of $1 into $2; sets rc and secs. In the background, so that a signal
# reaches the traps at once rather than when the test ends. A run past 20 s says
# so every 20 s: a slow test on a loaded machine is not a silent one.
run_one()
{
	local start
	start=$(date +%s.%N)
	timeout --signal=KILL "$limit" "$1" >"$2" 2>&1 </dev/null &
	tpid=$!
	(n=0; while sleep 20; do n=$((n + 20)); printf '  ....  %-22s still running, %ds\n' "$(basename "$1")" "$n"; done) &
	ticker=$!
	wait "$tpid" 2>/dev/null	# no "Killed" line from bash: the report says it
	rc=$?
	kill "$ticker" 2>/dev/null
	wait "$ticker" 2>/dev/null
	ticker=
	[ $rc = 137 ] && echo "timed out after ${limit}s" >>"$2"
	secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
}

[ "$repeat" -gt 0 ] && start_hog

for t in "$@"; do
	name=$(basename "$t")
	out=$tmp/out
	if [ "$repeat" -eq 0 ]; then
		run_one "$t" "$out"
		case $rc in
		0)  pass=$((pass+1)); printf '  PASS  %-22s %6ss\n' "$name" "$secs" ;;
		77) skip=$((skip+1)); printf '  SKIP  %-22s %s\n' "$name" "$(tail -n1 "$out")" ;;
		*)  fail=$((fail+1)); failed+=("$name")
		    printf '  FAIL  %-22s %6ss (exit %d)\n' "$name" "$secs" "$rc"
		    sed 's/^/        | /' "$out" | tail -n 30 ;;
		esac
		grep -h '^stress:' "$out" | sed 's/^/        /'
		continue
	fi
	nfail=0 nskip=0 total=0 first=$tmp/first firstrc= firstrun=
	rm -f "$first"
	for ((i = 1; i <= repeat; i++)); do
		run_one "$t" "$out"
		total=$(awk -v a="$total" -v b="$secs" 'BEGIN{printf "%.1f", a+b}')
		case $rc in
		0)  ;;
		77) nskip=$((nskip+1)) ;;
		*)  nfail=$((nfail+1))
		    [ -n "${XCALL_FLAKY_LOGS:-}" ] && mkdir -p "$XCALL_FLAKY_LOGS" &&
			{ cat "$out"; echo "exit $rc after ${secs}s"; } >"$XCALL_FLAKY_LOGS/$name.$i.log"
		    if [ -z "$firstrc" ]; then firstrc=$rc firstrun=$i; mv "$out" "$first"; fi ;;
		esac
	done
	if [ "$nfail" -gt 0 ]; then
		fail=$((fail+1)); failed+=("$name")
		printf '  FAIL  %-22s %d/%d runs failed %7ss in all; first: run %d, exit %d\n' \
			"$name" "$nfail" "$repeat" "$total" "$firstrun" "$firstrc"
		sed 's/^/        | /' "$first" | tail -n 40
	elif [ "$nskip" -eq "$repeat" ]; then
		skip=$((skip+1)); printf '  SKIP  %-22s %s\n' "$name" "$(tail -n1 "$out")"
	else
		pass=$((pass+1))
		printf '  PASS  %-22s 0/%d runs failed %7ss in all\n' "$name" "$repeat" "$total"
	fi
done
echo "$label: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
