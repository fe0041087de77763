#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/guest/run.sh - run test programs (and xcall-bench) in a QEMU guest, never on the
# host. `make check-guest` runs it as is: the tests that take CPUs away from the OS
# (tests/follow-hotplug.c, the stress test under OS hotplug) with 4 vCPUs. `make
# check-scale` (tests/scale/run.sh) runs it per topology. Builds the programs statically,
# boots Debian's cloud kernel (scripts/guest.sh: KVM first, else software emulation) with a
# busybox initramfs whose /init (tests/guest/init) runs them, and prints one line per
# program and `guest: N passed, N failed, N skipped`.
#
# Exit 0 when every program passed or skipped, 1 otherwise; 0 with "skipped" only when
# the kernel packages cannot be installed. Environment:
#   GUEST_ACCEL=kvm|tcg|auto (auto)     GUEST_TIMEOUT=secs for the whole guest (600)
#   GUEST_SMP=qemu -smp value (4)       GUEST_TESTS=file listing the programs (tests/guest/tests)
#   GUEST_NAME=label and log folder (check-guest)
#   GUEST_QEMU=more qemu arguments (NUMA nodes)   GUEST_MEM=MiB (512)
#   GUEST_APPEND=more kernel arguments (maxcpus=8)  GUEST_ONLINE=cpulist the guest keeps online
#   GUEST_BENCH=file of xcall-bench runs (TAG ARGS... a line), GUEST_RESULTS_DIR=where
#     their results files go (BUILD/GUEST_NAME/results)
#   GUEST_TEST_TIMEOUT=secs per program or run (240)
set -u -o pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build}
MAKE=${MAKE:-make}
NAME=${GUEST_NAME:-check-guest}
OUT="$TOP/$BUILD/$NAME"
[ "$NAME" = check-guest ] && OUT="$TOP/$BUILD/guest-test"
SBUILD="$BUILD/guest-static"
GUEST_SAY=$NAME
RESDIR=${GUEST_RESULTS_DIR:-$OUT/results}
# shellcheck source=../../scripts/guest.sh
. scripts/guest.sh

mkdir -p "$OUT"
die() { guest_say "FAILED: $*"; echo "guest: 0 passed, 1 failed, 0 skipped"; exit 1; }

guest_setup
case $? in
0) ;;
1) guest_say "skipped: $GUEST_WHY"; echo "guest: 0 passed, 0 failed, 1 skipped"; exit 0 ;;
*) die "$GUEST_WHY" ;;
esac
guest_say "guest kernel $GUEST_KVER"

LIST=${GUEST_TESTS:-tests/guest/tests}
names=$(grep -v '^#' "$LIST" | awk 'NF { print $1 }')
bins=""
for n in $names; do bins="$bins $SBUILD/tests/$n"; done
[ -n "${GUEST_BENCH:-}" ] && bins="$bins $SBUILD/xcall-bench"
# shellcheck disable=SC2086
$MAKE --no-print-directory BUILD="$SBUILD" LDLIBS="-pthread -static" $bins >"$OUT/build.log" 2>&1 ||
	{ tail -n 20 "$OUT/build.log"; die "the static test programs did not build"; }
ROOT="$OUT/initramfs"
rm -rf "$ROOT"
mkdir -p "$ROOT"/{bin,dev,proc,sys,tmp,t}
cp "$GUEST_BUSYBOX" "$ROOT/bin/busybox"
cp tests/guest/init "$ROOT/init"
cp "$LIST" "$ROOT/tests"
echo "${GUEST_TEST_TIMEOUT:-240}" >"$ROOT/timeout"
[ -n "${GUEST_ONLINE:-}" ] && echo "$GUEST_ONLINE" >"$ROOT/online"
if [ -n "${GUEST_BENCH:-}" ]; then
	cp "$GUEST_BENCH" "$ROOT/bench"
	guest_is_static "$SBUILD/xcall-bench" || die "$SBUILD/xcall-bench is not statically linked"
	cp "$SBUILD/xcall-bench" "$ROOT/t/"
fi
chmod 755 "$ROOT/init"
for n in $names; do
	guest_is_static "$SBUILD/tests/$n" || die "$SBUILD/tests/$n is not statically linked"
	cp "$SBUILD/tests/$n" "$ROOT/t/"
done
guest_pack "$ROOT" "$OUT/initramfs.cpio.gz" || die "could not build the initramfs"

# shellcheck disable=SC2086
guest_run "$NAME" "${GUEST_ACCEL:-auto}" "${GUEST_SMP:-4}" "${GUEST_APPEND:-}" "${GUEST_APPEND:-}" \
	"$OUT/initramfs.cpio.gz" "${GUEST_TIMEOUT:-600}" -m "${GUEST_MEM:-512}" ${GUEST_QEMU:-} ||
	{ tail -n 40 "$GUEST_CONSOLE" | sed 's/^/  | /'; die "the $GUEST_ACCEL guest did not finish"; }

# One line a program, as tests/run.sh prints them; each bench run's plan and time, its
# results file written to RESDIR.
rm -rf "$RESDIR"
mkdir -p "$RESDIR"
awk -v accel="$GUEST_ACCEL" -v resdir="$RESDIR" '
	infile { if ($0 ~ /^@@END-FILE/) { close(infile); infile = "" } else print > infile; next }
	/^@@XCALL-GUEST/ { sub(/^@@/, ""); print "  " $0 " (" accel ")"; next }
	/^@@(TEST|BENCH)-BEGIN / { name = $2; out = ""; next }
	/^@@TEST-END / || /^@@BENCH-END / {
		rc = $3; secs = sprintf("%.1f", $5 - $4); what = /^@@BENCH/ ? "bench " : ""
		if (rc == 0) { pass++; printf "  PASS  %-28s %6ss\n", what name, secs }
		else if (rc == 77) { skip++; n = split(out, l, "\n"); printf "  SKIP  %-28s %s\n", what name, l[n - 1] }
		else { fail++; printf "  FAIL  %-28s %6ss (exit %d)\n", what name, secs, rc; printf "%s", out }
		if (rc == 0) {
			n = split(out, l, "\n")
			for (i = 1; i <= n; i++)
				if (l[i] ~ /\| (stress|follow-hotplug|topology|attach):/ || l[i] ~ /\| xcall-bench[^:]*: (warning|[0-9]+ cases|took)/ ||
				    l[i] ~ /\| xcall-bench .*stopped at --case-limit/)
					print l[i]
		}
		next
	}
	/^@@FILE / { infile = resdir "/" $2; printf "" > infile; next }
	/^@@XCALL-DONE/ { done = 1; next }
	{ out = out "        | " $0 "\n" }
	END {
		printf "guest: %d passed, %d failed, %d skipped\n", pass, fail, skip
		exit (fail > 0 || !done || pass + skip == 0) ? 1 : 0
	}' "$GUEST_RESULTS" | tr -d '\r'
