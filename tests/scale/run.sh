#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/scale/run.sh - `make check-scale`: libxcall and xcall-bench on more CPUs than the
# host has, in two QEMU guests (tests/guest/run.sh; software emulation is fine: this
# checks behaviour and counters, never times):
#   A  16 vCPUs, 2 sockets of 8 cores, 2 NUMA nodes, an LLC per socket
#   B  80 possible vCPUs (2 sockets, 2 NUMA nodes) booted with maxcpus=8, then exactly
#      0,1,5,63-65,79 online: sparse ids across 64, in both nodes
# In each: every tests/*.c program (tests/scale/tests-a, -b; the OS-hotplug ones in A),
# every xcall-bench subcommand in a quick mode (check_bench.py --plan a|b), their results
# files checked by check_bench.py --results, xcall-report html drawn from them, and in A
# the storm counters for 1..15 senders (bench/tests/scale_table.py).
#
# Exit 0 when both guests passed; 0 with "skipped" when the guest kernel cannot be
# installed. SCALE_GUESTS="a b" (both) picks the guests; GUEST_ACCEL as check-guest.
set -u -o pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build}
REPORT=${REPORT:-build/venv/bin/xcall-report}
OUT="$TOP/$BUILD/check-scale"
mkdir -p "$OUT"
rc=0
t0=$(date +%s)

say() { echo "check-scale: $*"; }

run_guest() {
	local g=$1 dir="$OUT/$1"
	mkdir -p "$dir"
	python3 bench/tests/check_bench.py --plan "$g" >"$dir/bench-plan" || return 1
	case $g in
	a)
		say "guest A: 16 vCPUs, 2 sockets x 8 cores, NUMA nodes 0-7 and 8-15"
		GUEST_NAME=scale-a GUEST_TIMEOUT=1500 GUEST_SMP=16,sockets=2,cores=8,threads=1 GUEST_MEM=1024 \
		GUEST_QEMU="-object memory-backend-ram,id=m0,size=512M -object memory-backend-ram,id=m1,size=512M
			-numa node,nodeid=0,cpus=0-7,memdev=m0 -numa node,nodeid=1,cpus=8-15,memdev=m1" \
		GUEST_TESTS=tests/scale/tests-a GUEST_BENCH="$dir/bench-plan" GUEST_RESULTS_DIR="$dir/results" \
			bash tests/guest/run.sh | tee "$dir/guest.log"
		;;
	b)
		say "guest B: 80 possible vCPUs (2 sockets x 40, NUMA nodes 0-39 and 40-79), maxcpus=8, online 0,1,5,63-65,79"
		GUEST_NAME=scale-b GUEST_TIMEOUT=1500 GUEST_SMP=80,sockets=2,cores=40,threads=1 GUEST_MEM=1024 \
		GUEST_QEMU="-object memory-backend-ram,id=m0,size=512M -object memory-backend-ram,id=m1,size=512M
			-numa node,nodeid=0,cpus=0-39,memdev=m0 -numa node,nodeid=1,cpus=40-79,memdev=m1" \
		GUEST_APPEND=maxcpus=8 \
		GUEST_ONLINE=0,1,5,63-65,79 \
		GUEST_TESTS=tests/scale/tests-b GUEST_BENCH="$dir/bench-plan" GUEST_RESULTS_DIR="$dir/results" \
			bash tests/guest/run.sh | tee "$dir/guest.log"
		;;
	esac
	local grc=$?
	grep -q "0 failed, 1 skipped" "$dir/guest.log" && grep -q "skipped:" "$dir/guest.log" && return 77
	[ $grc = 0 ] || return 1
	say "guest ${g^^}: results files checked by check_bench.py --results"
	python3 bench/tests/check_bench.py --results "$dir/results" "$g" | grep -v '^ok ' || return 1
	if [ -x "$REPORT" ]; then
		MPLBACKEND=Agg "$REPORT" html "$dir"/results/*.json -o "$dir/report.html" >"$dir/report.log" 2>&1 ||
			{ tail -n 5 "$dir/report.log"; say "guest ${g^^}: xcall-report html failed"; return 1; }
		say "guest ${g^^}: xcall-report html: $dir/report.html ($(wc -c <"$dir/report.html") bytes)"
	else
		say "guest ${g^^}: $REPORT missing (make venv): no html drawn"
		return 1
	fi
	if [ "$g" = a ]; then
		python3 bench/tests/scale_table.py "$dir/results" || return 1
	fi
	return 0
}

for g in ${SCALE_GUESTS:-a b}; do
	run_guest "$g"
	case $? in
	0) say "guest ${g^^}: passed" ;;
	77) say "guest ${g^^}: skipped" ;;
	*) say "guest ${g^^}: FAILED"; rc=1 ;;
	esac
done
say "$(( $(date +%s) - t0 )) s in all"
[ $rc = 0 ] && echo "scale: passed" || echo "scale: FAILED"
exit $rc
