#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check_slow.sh - xcall-bench's results from a machine too slow for its plan pass their checks.
#
# The runs of check-scale's guest B whose records check_bench.py --results judges one by
# one (matrix, heatmap, bringup, ipi), each with a tiny --case-limit beside a busy loop on
# each CPU, and stopped (SIGSTOP, then SIGCONT) as its first case begins for 60% of the
# bound it printed, as a machine that other work or emulation slows down stalls it: the plan
# runs out of time, skips the cases it has no time left for and stops loops before their
# count. check_bench.py --results must pass on what comes back: a skipped record is
# reported as skipped, a capped one is judged by what it says ran, neither as a measured
# one. The busy loops and the bench die on every way out (trap; should this script be
# killed by SIGKILL, each busy loop dies with it (busy.sh), and setpriv's parent death signal
# kills the bench).
#
# usage: check_slow.sh BUILD/xcall-bench      Exit 0 when the checks passed.
set -u -o pipefail

BIN=${1:-build/xcall-bench}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/busy.sh"
TAGS="matrix heatmap bringup ipi"
LIMIT=0.001             # --case-limit: every case's share of the bound about 0.1 s
QUIET_LIMIT=120         # a run silent this long is a hang, not a slow machine
PAUSE=0.6               # the stop as the first case begins, a share of the bound

say() { echo "check_slow: $*"; }

if [ ! -x "$BIN" ]; then
	say "$BIN not built"
	exit 1
fi

cpus=$(busy_cpus) || exit 1
if [ "$(wc -w <<<"$cpus")" -lt 2 ]; then
	say "skipped: matrix, heatmap and ipi need 2 CPUs, this process may run on 1"
	exit 0
fi

dir=$(mktemp -d -t xcall-bench-slow-XXXXXX)
pid=
cleanup()
{
	if [ -n "$pid" ]; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	busy_stop
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

busy_start
say "beside ${#busy[@]} busy loops (one per CPU), --case-limit $LIMIT: $TAGS"

# the bench, stopped or not, dies with this script where setpriv can say so
death=
setpriv --pdeathsig KILL true 2>/dev/null && death="setpriv --pdeathsig KILL"
plan=$(python3 "$HERE/check_bench.py" --plan b) || exit 1
mkfifo "$dir/stderr" || exit 1
for tag in $TAGS; do
	args=$(awk -v t="$tag" '$1 == t { $1 = ""; print }' <<<"$plan")
	if [ -z "$args" ]; then
		say "$tag: not in guest B's plan"
		exit 1
	fi
	args=${args/--case-limit 1/--case-limit $LIMIT}
	# shellcheck disable=SC2086 # the plan's arguments, split on purpose
	$death "$BIN" $args --json "$dir/$tag.json" >/dev/null 2>"$dir/stderr" </dev/null &
	pid=$!
	bound=2
	paused=
	# its stderr: the bound it prints first, then a progress line before each case
	while :; do
		IFS= read -r -t "$QUIET_LIMIT" line
		r=$?
		[ $r = 0 ] || break     # 1: its end; over 128: silent too long
		printf '%s\n' "$line" >>"$dir/$tag.err"
		case $line in
		"xcall-bench $tag: "*", at most "*" s"*)
			bound=$(sed -n 's/.*, at most \([0-9.]*\) s.*/\1/p' <<<"$line")
			;;
		*" .. [1/"*)
			s=$(awk -v b="$bound" -v f="$PAUSE" 'BEGIN { printf "%.2f", (b > 0 ? b : 2) * f }')
			if kill -STOP "$pid" 2>/dev/null; then
				sleep "$s"
				kill -CONT "$pid"
				paused=$s
			fi
			;;
		esac
	done <"$dir/stderr"
	if [ $r -gt 128 ]; then
		say "$tag: xcall-bench$args silent for ${QUIET_LIMIT}s"
		exit 1
	fi
	wait "$pid"
	rc=$?
	pid=
	if [ $rc != 0 ]; then
		say "$tag: xcall-bench$args exited $rc"
		tail -n 5 "$dir/$tag.err"
		exit 1
	fi
	took=$(sed -n "s/^xcall-bench $tag: took //p" "$dir/$tag.err")
	say "$tag: stopped for ${paused:-0 (it had ended)} s as its first case began; took $took"
done
# the checks need no load
for p in "${busy[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
busy=()

python3 - "$dir" $TAGS <<'EOF'
import json, os, sys
n = skipped = capped = 0
for tag in sys.argv[2:]:
    with open(os.path.join(sys.argv[1], tag + ".json")) as f:
        for r in json.load(f)["results"]:
            p = r.get("params", {})
            n += 1
            skipped += "skipped" in p
            capped += bool(p.get("capped"))
print(f"check_slow: {n} records, {skipped} skipped, {capped} capped" +
      ("" if skipped else " (none skipped: the machine kept up; the checks ran all the same)"))
EOF
python3 "$HERE/check_bench.py" --results "$dir" b $TAGS
rc=$?
[ $rc = 0 ] && say "passed" || say "FAILED"
exit $rc
