#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check_env.sh - libxcall's XCALL_* variables and --trace's file are checked before anything
# runs, in a subcommand and in the whole suite alike:
#
#   1. each bad value is refused at once: exit 2, one line on stderr naming the variable (or
#      --trace), its value and why, with the errno's name; nothing on stdout (no machine
#      header: nothing ran), no progress line, and no results file;
#   2. a variable whose field the bench's cases set says so in one line, and the run goes on;
#      one libxcall does not know is named as read by nothing.
#
# The bench's own test hooks (XCALL_BENCH_*) are not libxcall's and are left alone.
# usage: check_env.sh BUILD/xcall-bench      Exit 0 when the checks passed.
set -u -o pipefail

BIN=$(realpath "${1:-build/xcall-bench}")
say() { echo "check_env: $*"; }
fails=0
check() {
	if [ "$2" = ok ]; then
		echo "ok   $1"
	else
		echo "FAIL $1: $2"
		fails=$((fails + 1))
	fi
}
if [ ! -x "$BIN" ]; then
	say "$BIN not built"
	exit 1
fi
dir=$(mktemp -d -t xcall-bench-env-XXXXXX)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
cpus=$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0))[:2])))')

# ---- 1. refused before anything runs
# VAR=VALUE (or --trace FILE)|what stderr must name
bad=(
	"XCALL_POLL_NS=abc|XCALL_POLL_NS=\"abc\": invalid"
	"XCALL_CPUS=7-9999|XCALL_CPUS=\"7-9999\""
	"XCALL_CPUS=0-|XCALL_CPUS=\"0-\": invalid"
	"XCALL_RING_ENTRIES=3|XCALL_RING_ENTRIES=\"3\": invalid"
	"XCALL_TRACE_EVENTS=3|XCALL_TRACE_EVENTS=\"3\": invalid"
	"XCALL_STUCK_MS=0|XCALL_STUCK_MS=\"0\": invalid"
	"XCALL_URGENT_SIGNAL=SIGUSR1|XCALL_URGENT_SIGNAL=\"SIGUSR1\": invalid"
	"XCALL_SERIAL_BRINGUP=yes|XCALL_SERIAL_BRINGUP=\"yes\": invalid"
	"XCALL_BRINGUP_TIMEOUT_MS=0|XCALL_BRINGUP_TIMEOUT_MS=\"0\": invalid"
	"XCALL_ABLATE=speed|XCALL_ABLATE=\"speed\": invalid"
	"XCALL_FOLLOW_OS=2|XCALL_FOLLOW_OS=\"2\": invalid"
	"XCALL_VERBOSE=2|XCALL_VERBOSE=\"2\": invalid"
	"XCALL_ATTACH=1|XCALL_ATTACH=\"1\": xcall-bench needs a worker"
	"XCALL_TRACE=$dir/missing/t.json|(ENOENT)"
	"--trace $dir/missing/t.json|--trace '$dir/missing/t.json': No such file or directory (ENOENT)"
	"--trace $dir|--trace '$dir': Is a directory (EISDIR)"
)
# the suite, and one subcommand (its own command line: --json, as make run's)
for where in suite pingpong; do
	for b in "${bad[@]}"; do
		input=${b%%|*}
		want=${b#*|}
		env=() args=()
		case "$input" in
		--trace*) args=(--trace "${input#--trace }") ;;
		*) env=("$input") ;;
		esac
		if [ "$where" = suite ]; then
			cmd=("$BIN" --cpus "$cpus" --json results/x.json "${args[@]}")
		else
			cmd=("$BIN" pingpong --cpus "$cpus" --iterations 100 --json results/x.json "${args[@]}")
		fi
		start=$(date +%s%N)
		env "${env[@]}" timeout 60 "${cmd[@]}" >out 2>err
		rc=$?
		ms=$((($(date +%s%N) - start) / 1000000))
		lines=$(grep -c . err)
		name="$where: $input refused before anything runs (exit 2, one line, no results file)"
		if [ "$rc" = 2 ] && [ "$lines" = 1 ] && grep -qF -- "$want" err && [ ! -s out ] &&
			[ ! -e results ]; then
			check "$name" ok
			echo "     $ms ms: $(cat err)"
		else
			check "$name" "rc=$rc, stderr lines=$lines (want '$want'): $(head -c 300 err | tr '\n' ' ')" \
				"stdout: $(head -c 100 out | tr '\n' ' ') results: $(ls results 2>/dev/null)"
		fi
		rm -rf out err results
	done
done

# ---- 2. said, and the run goes on
# VAR=VALUE|the line stderr must hold
said=(
	"XCALL_POLL_NS=forever|XCALL_POLL_NS=\"forever\" is not used: each case sets its poll policy"
	"XCALL_CPUS=$cpus|XCALL_CPUS=\"$cpus\" is not used"
	"XCALL_POLLNS=forever|XCALL_POLLNS=\"forever\" is not a libxcall option"
)
for s in "${said[@]}"; do
	input=${s%%|*}
	want=${s#*|}
	env "$input" XCALL_BENCH_UNRELATED=1 timeout 60 "$BIN" pingpong --cpus "$cpus" --cases cacheline \
		--iterations 100 --quiet --json x.json >out 2>err
	rc=$?
	name="pingpong with $input: said in one line, the run goes on"
	if [ "$rc" = 0 ] && [ "$(grep -cF -- "$want" err)" = 1 ] && [ -s x.json ] &&
		! grep -q XCALL_BENCH_UNRELATED err; then
		check "$name" ok
	else
		check "$name" "rc=$rc, stderr: $(head -c 300 err | tr '\n' ' ')"
	fi
	rm -f out err x.json
done

[ "$fails" = 0 ] && say "all passed" || say "$fails failed"
[ "$fails" = 0 ]
