#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/guest/run.sh - `make check-guest`: the tests that take CPUs away from the OS
# (tests/follow-hotplug.c, the stress test under OS hotplug) run in a guest, never on
# the host. Builds the test programs statically, boots Debian's cloud kernel under QEMU
# (scripts/guest.sh: KVM first, else software emulation) with 4 vCPUs and a busybox
# initramfs whose /init (tests/guest/init) runs the programs listed in tests/guest/tests,
# and prints one line per program and `guest: N passed, N failed, N skipped`.
#
# Exit 0 when every program passed or skipped, 1 otherwise; 0 with "skipped" only when
# the kernel packages cannot be installed. GUEST_ACCEL=kvm|tcg|auto (auto),
# GUEST_TIMEOUT=secs (600), GUEST_SMP=qemu -smp value (4), GUEST_TESTS=file listing the programs (tests/guest/tests).
set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build}
MAKE=${MAKE:-make}
OUT="$TOP/$BUILD/guest-test"
SBUILD="$BUILD/guest-static"
GUEST_SAY=check-guest
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
# shellcheck disable=SC2086
$MAKE --no-print-directory BUILD="$SBUILD" LDLIBS="-pthread -static" $bins >"$OUT/build.log" 2>&1 ||
	{ tail -n 20 "$OUT/build.log"; die "the static test programs did not build"; }
ROOT="$OUT/initramfs"
rm -rf "$ROOT"
mkdir -p "$ROOT"/{bin,dev,proc,sys,tmp,t}
cp "$GUEST_BUSYBOX" "$ROOT/bin/busybox"
cp tests/guest/init "$ROOT/init"
cp "$LIST" "$ROOT/tests"
chmod 755 "$ROOT/init"
for n in $names; do
	guest_is_static "$SBUILD/tests/$n" || die "$SBUILD/tests/$n is not statically linked"
	cp "$SBUILD/tests/$n" "$ROOT/t/"
done
guest_pack "$ROOT" "$OUT/initramfs.cpio.gz" || die "could not build the initramfs"

guest_run check-guest "${GUEST_ACCEL:-auto}" "${GUEST_SMP:-4}" "" "" "$OUT/initramfs.cpio.gz" "${GUEST_TIMEOUT:-600}" -m 512 ||
	{ tail -n 40 "$GUEST_CONSOLE" | sed 's/^/  | /'; die "the $GUEST_ACCEL guest did not finish"; }

# One line a program, as tests/run.sh prints them.
awk -v accel="$GUEST_ACCEL" '
	/^@@XCALL-GUEST/ { sub(/^@@/, ""); print "  " $0 " (" accel ")"; next }
	/^@@TEST-BEGIN / { name = $2; out = ""; next }
	/^@@TEST-END / {
		rc = $3; secs = sprintf("%.1f", $5 - $4)
		if (rc == 0) { pass++; printf "  PASS  %-22s %6ss\n", name, secs }
		else if (rc == 77) { skip++; n = split(out, l, "\n"); printf "  SKIP  %-22s %s\n", name, l[n - 1] }
		else { fail++; printf "  FAIL  %-22s %6ss (exit %d)\n", name, secs, rc; printf "%s", out }
		if (rc == 0) { n = split(out, l, "\n"); for (i = 1; i <= n; i++) if (l[i] ~ /\| (stress|follow-hotplug):/) print l[i] }
		next
	}
	/^@@XCALL-DONE/ { done = 1; next }
	{ out = out "        | " $0 "\n" }
	END {
		printf "guest: %d passed, %d failed, %d skipped\n", pass, fail, skip
		exit (fail > 0 || !done || pass + skip == 0) ? 1 : 0
	}' "$GUEST_RESULTS" | tr -d '\r'
