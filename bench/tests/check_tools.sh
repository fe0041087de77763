#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check_tools.sh - the suite (xcall-bench with no subcommand) says it once, at once, and a
# case whose operation never ends is given up.
#
#   1. Every bad argument of the suite is refused before anything runs: exit 2, one line on
#      stderr, nothing on stdout (no machine header, no "all skipped" lines).
#   2. The suite keeps results/latest.json for `make run` (which names it with --json):
#      without --json it writes results/suite-TIME.json and prints that path.
#   3. Beside a busy loop on each CPU, a wake case whose sleeper stops answering
#      (XCALL_BENCH_WAKE_STALL) is given up 1 s past its --case-limit: the run ends, and
#      the record says capped and abandoned. The busy loops and the bench die on every
#      way out (trap; should this script be killed by SIGKILL, each busy loop dies with
#      it: busy.sh).
#   4. The counting tools (bench/tools/count_lines.py, count_roundtrip.py): --help prints
#      their usage and exits 0; an unknown option, a build directory without their build or
#      an unknown case is refused at once, exit 2, naming what is wrong (no traceback).
#
# usage: check_tools.sh BUILD/xcall-bench      Exit 0 when the checks passed.
set -u -o pipefail

BIN=$(realpath "${1:-build/xcall-bench}")
TOOLS=$(realpath "$(dirname "$0")/../tools")	# before any cd below
. "$(dirname "$0")/busy.sh"
RUN_LIMIT=120           # a run past this is a hang: the stalled case was never given up

say() { echo "check_tools: $*"; }
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

dir=$(mktemp -d -t xcall-bench-tools-XXXXXX)
cleanup()
{
	busy_stop
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# ---- 1. bad arguments of the suite
cd "$dir" || exit 1
bad=(
	"--cpus 99|CPU not online"
	"--cpus abc|not a cpulist"
	"--cpus 0-100000|cpulist out of range"
	"--trace |empty --trace"
	"--json $dir/nonexistent/deeper/x.json|--json in a missing directory"
	"--bogus|unknown option"
	"stray|stray argument"
	"--cpus|missing value"
)
for b in "${bad[@]}"; do
	args=${b%%|*}
	what=${b#*|}
	if [ "$what" = "empty --trace" ]; then
		set -- --trace ""
	else
		read -r -a a <<<"$args"
		set -- "${a[@]}"
	fi
	timeout 60 "$BIN" "$@" >out 2>err
	rc=$?
	lines=$(grep -c . err)
	if [ "$rc" = 2 ] && [ "$lines" = 1 ] && [ ! -s out ] && [ ! -e results ]; then
		check "suite: $what refused at once (exit 2, one line)" ok
	else
		check "suite: $what refused at once (exit 2, one line)" \
			"rc=$rc, stderr lines=$lines, stdout: $(head -c 120 out | tr '\n' ' ')"
	fi
	rm -rf out err results
done

# ---- 2. the suite's results file
cpu0=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
timeout "$RUN_LIMIT" "$BIN" --cpus "$cpu0" --quiet >out 2>err
rc=$?
made=$(ls results/suite-*.json 2>/dev/null)
if [ "$rc" = 0 ] && [ ! -e results/latest.json ] && [ -n "$made" ] && [ "$(tail -n 1 out)" = "$made" ]; then
	check "suite without --json: results/suite-TIME.json, its path printed, no latest.json" ok
else
	check "suite without --json: results/suite-TIME.json, its path printed, no latest.json" \
		"rc=$rc, made='$made', latest.json $([ -e results/latest.json ] && echo written || echo absent), stdout's last line '$(tail -n 1 out)'"
fi
rm -rf out err results

# ---- 3. a stalled case is given up, beside a busy loop on each CPU
busy_start
ncpu=${#busy[@]}
if [ "$ncpu" -lt 2 ]; then
	say "skipped: the stalled wake needs 2 CPUs, this process may run on $ncpu"
else
	# the sleeper answers the first timed wake and stops answering at the second: counted
	# from the timed part, whose first wakes run however slow the machine (the warm-up has
	# its own time, the timed loop its own --case-limit), so the stall comes on any machine.
	# One run each, with a limit whose case bound (twice it, and a start) outlasts the
	# limit and the grace, so that the plan leaves the case its time beside the busy loops
	for mech in signal-handler futex; do
		name="$mech: a stalled wake is given up 1 s past --case-limit, its case capped and abandoned"
		XCALL_BENCH_WAKE_STALL=1 timeout "$RUN_LIMIT" "$BIN" wake --mechs "$mech" --states hot \
			--iterations 1000 --case-limit 2 --quiet --json stall.json >out 2>err
		rc=$?
		if [ "$rc" != 0 ]; then
			check "$name" "rc=$rc (124: never given up), stderr: $(tail -c 300 err)"
			continue
		fi
		verdict=$(python3 - stall.json "$mech/hot" <<'EOF'
import json, sys
res = {r["case"]: r for r in json.load(open(sys.argv[1]))["results"]}
case = sys.argv[2]
r = res.get(case)
p = (r or {}).get("params", {})
if r is None:
    print(f"{case}: no record")
elif not (p.get("capped") and p.get("abandoned") and 0 < r["n"] < 1000):
    print(f"{case}: capped={p.get('capped')} abandoned={p.get('abandoned')} n={r['n']} "
          f"skipped={p.get('skipped')}")
else:
    print("ok")
EOF
)
		check "$name" "$verdict"
	done
fi

# ---- 4. the counting tools' command lines (nothing is counted: no valgrind needed)
for tool in count_lines count_roundtrip; do
	timeout 30 python3 "$TOOLS/$tool.py" --help >out 2>err
	rc=$?
	if [ "$rc" = 0 ] && grep -q "^usage: $tool.py" out && [ ! -s err ]; then
		check "$tool --help: its usage, exit 0" ok
	else
		check "$tool --help: its usage, exit 0" "rc=$rc, stderr: $(head -c 200 err)"
	fi
	# arguments|what stderr must say|the case
	refusals=("--bogus $dir|unknown option --bogus|an unknown option"
	     "$dir/none|is not built|a build directory without its build")
	[ "$tool" = count_lines ] && refusals+=("--cases nowait $dir|no case named 'nowait'|an unknown case")
	for b in "${refusals[@]}"; do
		IFS='|' read -r args want what <<<"$b"
		read -r -a a <<<"$args"
		timeout 30 python3 "$TOOLS/$tool.py" "${a[@]}" >out 2>err
		rc=$?
		if [ "$rc" = 2 ] && grep -q "$want" err && ! grep -q Traceback err; then
			check "$tool: $what refused, named (exit 2)" ok
		else
			check "$tool: $what refused, named (exit 2)" "rc=$rc, stderr: $(head -c 200 err)"
		fi
	done
	rm -f out err
done

[ "$fails" = 0 ] && say "all passed" || say "$fails failed"
[ "$fails" = 0 ]
