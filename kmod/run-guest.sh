#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kmod/run-guest.sh - `make kmod-test`: run xcall_ipi.ko for real, in a guest, never on the host.
#
#  1. installs (apt) Debian's cloud kernel image and headers, qemu-system-x86, busybox-static
#     and cpio when they are missing;
#  2. builds the module against those headers (make kmod KDIR=...);
#  3. stages xcall-bench (statically linked) when build/xcall-bench exists;
#  4. builds a busybox initramfs whose /init loads the module with every set of kmod/guest/cases;
#  5. boots the cloud kernel under QEMU with 4 vCPUs (6 possible, so two are offline): KVM
#     first with a short boot-hang timeout, then software emulation (TCG);
#  6. checks the results with kmod/check_results.py, which prints `N passed, N failed`.
#
# Exit 0 when every check passed, 1 when one failed. Exit 0 with "skipped" only when the
# kernel packages cannot be installed. Environment knobs:
#   KMOD_ACCEL=kvm|tcg|auto (auto)   KMOD_KVM_TIMEOUT=secs (20)   KMOD_GUEST_TIMEOUT=secs (540)
#   KMOD_KVM_CPU=model (host)
#   KMOD_ITER / KMOD_NUMIPI / KMOD_SMALL / KMOD_BENCH_ITER   counts (defaults depend on accel)
set -u

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build}
MAKE=${MAKE:-make}
OUT="$TOP/$BUILD/kmod-test"
ACCEL_WANT=${KMOD_ACCEL:-auto}
export GUEST_KVM_TIMEOUT=${KMOD_KVM_TIMEOUT:-20}
export GUEST_KVM_CPU=${KMOD_KVM_CPU:-host}
GUEST_TIMEOUT=${KMOD_GUEST_TIMEOUT:-540}
T_START=$(date +%s)

say() { echo "kmod-test: $*"; }
skip() { say "skipped: $*"; echo "0 passed, 0 failed, 1 skipped"; exit 0; }
die() { say "FAILED: $*"; echo "0 passed, 1 failed"; exit 1; }

mkdir -p "$OUT"
rm -f "$OUT"/console-*.log "$OUT"/results-*.log

# ---------------------------------------------------------------- 1. packages
GUEST_SAY=kmod-test
# shellcheck source=../scripts/guest.sh
. scripts/guest.sh
guest_setup
case $? in
0) ;;
1) skip "$GUEST_WHY" ;;
*) die "$GUEST_WHY" ;;
esac
KVER=$GUEST_KVER
KIMG=$GUEST_KIMG
KDIR=$GUEST_KDIR
BUSYBOX=$GUEST_BUSYBOX
is_static() { guest_is_static "$1"; }
say "guest kernel $KVER ($KIMG), headers $KDIR"

# ---------------------------------------------------------------- 2. module
say "building the module: $MAKE kmod KDIR=$KDIR"
$MAKE --no-print-directory -C "$TOP" kmod KDIR="$KDIR" BUILD="$BUILD" >"$OUT/kmod-build.log" 2>&1 ||
	{ cat "$OUT/kmod-build.log"; die "the module did not build against $KVER"; }
KO="$TOP/$BUILD/kmod/$KVER/xcall_ipi.ko"
[ -e "$KO" ] || die "no $KO after the build"
if grep -E 'warning:|error:' "$OUT/kmod-build.log"; then
	die "the module build printed warnings"
fi

# ---------------------------------------------------------------- 3. xcall-bench
BENCH=""
BENCH_LIBS=""      # shared libraries to copy beside a dynamically linked xcall-bench
BENCH_NOTE=""
stage_bench() {
	local host_bench="$TOP/build/xcall-bench" sbuild="$BUILD/kmod-static"
	if [ ! -x "$host_bench" ]; then
		BENCH_NOTE="build/xcall-bench does not exist (run 'make' first): the user-space side is skipped"
		return
	fi
	if is_static "$host_bench"; then
		BENCH=$host_bench
		return
	fi
	# A static copy, built by the project's own Makefile into a separate build directory.
	if $MAKE --no-print-directory -C "$TOP" BUILD="$sbuild" LDLIBS="-pthread -static -lm" \
		"$sbuild/xcall-bench" >"$OUT/bench-static.log" 2>&1 &&
		is_static "$TOP/$sbuild/xcall-bench"; then
		BENCH="$TOP/$sbuild/xcall-bench"
		return
	fi
	# Else the dynamic binary with the libraries it loads, at the same paths in the guest.
	if BENCH_LIBS=$(ldd "$host_bench" 2>/dev/null | grep -o '/[^ ]*' | sort -u) && [ -n "$BENCH_LIBS" ]; then
		say "no static xcall-bench (see $OUT/bench-static.log): staging the dynamic one with its libraries"
		BENCH=$host_bench
		return
	fi
	BENCH_LIBS=""
	BENCH_NOTE="could not build a statically linked xcall-bench nor stage the dynamic one (see $OUT/bench-static.log): the user-space side is skipped"
}
stage_bench
if [ -n "$BENCH" ]; then say "xcall-bench for the guest: $BENCH"; else say "$BENCH_NOTE"; fi

# ---------------------------------------------------------------- 4. initramfs
ROOT="$OUT/initramfs"
rm -rf "$ROOT"
mkdir -p "$ROOT"/{bin,dev,proc,sys,tmp}
cp "$BUSYBOX" "$ROOT/bin/busybox"
cp kmod/guest/init "$ROOT/init"
cp kmod/guest/cases "$ROOT/cases"
cp "$KO" "$ROOT/xcall_ipi.ko"
chmod 755 "$ROOT/init"
[ -n "$BENCH" ] && cp "$BENCH" "$ROOT/xcall-bench"
for lib in $BENCH_LIBS; do
	mkdir -p "$ROOT$(dirname "$lib")" && cp -L "$lib" "$ROOT$lib"
done
guest_pack "$ROOT" "$OUT/initramfs.cpio.gz" || die "could not build the initramfs"

# ---------------------------------------------------------------- 5. boot
# 4 vCPUs, 6 possible (two offline); the counts depend on how fast the guest runs.
guest_run kmod "$ACCEL_WANT" 4,maxcpus=6 \
	"xcall_iter=${KMOD_ITER:-100000} xcall_numipi=${KMOD_NUMIPI:-100000} xcall_small=${KMOD_SMALL:-10000} xcall_bench_iter=${KMOD_BENCH_ITER:-100000}" \
	"xcall_iter=${KMOD_ITER:-20000} xcall_numipi=${KMOD_NUMIPI:-10000} xcall_small=${KMOD_SMALL:-2000} xcall_bench_iter=${KMOD_BENCH_ITER:-5000}" \
	"$OUT/initramfs.cpio.gz" "$GUEST_TIMEOUT" -m 512
rc=$?
ACCEL=$GUEST_ACCEL
[ -n "$ACCEL" ] || die "KMOD_ACCEL=kvm but the KVM guest did not finish"
[ $rc = 0 ] || [ "$ACCEL" = tcg ] || die "the $ACCEL guest failed"
[ $rc = 0 ] || tail -n 40 "$GUEST_CONSOLE" | sed 's/^/  | /'

# ---------------------------------------------------------------- 6. check
T_END=$(date +%s)
say "guest run under $ACCEL done; $((T_END - T_START))s since start"
python3 kmod/check_results.py --accel "$ACCEL" --results "$GUEST_RESULTS" \
	--console "$GUEST_CONSOLE" --cases kmod/guest/cases --json-dir "$OUT" \
	${BENCH_NOTE:+--bench-note "$BENCH_NOTE"}
rc=$?
say "total time $(($(date +%s) - T_START))s"
exit $rc
