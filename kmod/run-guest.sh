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
KVM_TIMEOUT=${KMOD_KVM_TIMEOUT:-20}
GUEST_TIMEOUT=${KMOD_GUEST_TIMEOUT:-540}
T_START=$(date +%s)

say() { echo "kmod-test: $*"; }
skip() { say "skipped: $*"; echo "0 passed, 0 failed, 1 skipped"; exit 0; }
die() { say "FAILED: $*"; echo "0 passed, 1 failed"; exit 1; }

mkdir -p "$OUT"
rm -f "$OUT"/console-*.log "$OUT"/results-*.log

# ---------------------------------------------------------------- 1. packages
APT_UPDATED=0
apt_install() {
	if [ "$(id -u)" != 0 ]; then
		say "not root: cannot apt-get install $*"
		return 1
	fi
	if [ $APT_UPDATED = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get update -q >"$OUT/apt-update.log" 2>&1 ||
			say "apt-get update failed (see $OUT/apt-update.log); trying the cached lists"
		APT_UPDATED=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" \
		>>"$OUT/apt-install.log" 2>&1
}

# The newest installed Debian cloud kernel that has its headers beside it.
find_kernel() {
	local v best=""
	for img in /boot/vmlinuz-*-cloud-amd64; do
		[ -e "$img" ] || continue
		v=${img#/boot/vmlinuz-}
		if [ -e "/usr/src/linux-headers-$v/Makefile" ]; then
			if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
				best=$v
			fi
		fi
	done
	echo "$best"
}

KVER=$(find_kernel)
if [ -z "$KVER" ]; then
	say "installing Debian's cloud kernel image and headers (apt)"
	if ! apt_install linux-image-cloud-amd64 linux-headers-cloud-amd64; then
		# The metapackages can lag the archive: try the versioned names apt knows of.
		ver=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
			sed -n 's/.*Depends: linux-image-\(.*-cloud-amd64\)$/\1/p' | head -n 1)
		[ -n "$ver" ] && apt_install "linux-image-$ver" "linux-headers-$ver"
	fi
	KVER=$(find_kernel)
	[ -n "$KVER" ] || skip "Debian's cloud kernel image and headers cannot be installed here (see $OUT/apt-install.log)"
fi
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
[ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -qx insmod || need+=(busybox-static)
command -v cpio >/dev/null || need+=(cpio)
if [ ${#need[@]} -gt 0 ]; then
	say "installing ${need[*]} (apt)"
	apt_install "${need[@]}" || die "could not install ${need[*]} (see $OUT/apt-install.log)"
fi
# A static executable has no program interpreter.
is_static() { [ -x "$1" ] && ! readelf -l "$1" 2>/dev/null | grep -q 'program interpreter'; }
BUSYBOX=/bin/busybox
is_static "$BUSYBOX" || die "$BUSYBOX is not statically linked (install busybox-static)"
KIMG=/boot/vmlinuz-$KVER
KDIR=/usr/src/linux-headers-$KVER
[ -r "$KIMG" ] || die "$KIMG is not readable"
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
(cd "$ROOT" && find . | cpio -o -H newc --quiet | gzip -1) >"$OUT/initramfs.cpio.gz" ||
	die "could not build the initramfs"

# ---------------------------------------------------------------- 5. boot
kvm_usable() {
	[ -e /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
	# /dev/kvm can open here and still hang a nested guest: the boot itself decides.
	return 0
}

# run_guest ACCEL TIMEOUT ITER NUMIPI SMALL BENCH_ITER: boots, 0 when the guest finished.
run_guest() {
	local accel=$1 tmo=$2 cpuopt con="$OUT/console-$1.log" res="$OUT/results-$1.log"
	if [ "$accel" = kvm ]; then cpuopt="-cpu ${KMOD_KVM_CPU:-host}"; else cpuopt="-cpu max"; fi
	rm -f "$con" "$res" "$OUT/qemu-$accel.pid"
	say "booting $KVER under $accel, 4 vCPUs (timeout ${tmo}s)"
	# In a subshell that outlives qemu, so that a crash of qemu is a status, not a
	# job notice from bash; the pid file lets the hang detector stop qemu itself.
	# shellcheck disable=SC2086
	( timeout -k 5 "$tmo" qemu-system-x86_64 -pidfile "$OUT/qemu-$accel.pid" \
		-accel "$accel" $cpuopt -smp 4,maxcpus=6 -m 512 \
		-nodefaults -display none -no-reboot \
		-kernel "$KIMG" -initrd "$OUT/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 loglevel=4 xcall_iter=$3 xcall_numipi=$4 xcall_small=$5 xcall_bench_iter=$6" \
		-serial "file:$con" -serial "file:$res"; exit $? ) 2>"$OUT/qemu-$accel.err" &
	QPID=$!
	return 0
}

# wait_guest ACCEL UP_TIMEOUT: 0 done, 2 hung before userspace, 1 other failure
wait_guest() {
	local accel=$1 up_tmo=$2 con="$OUT/console-$1.log" res="$OUT/results-$1.log" t=0 up=0
	while kill -0 "$QPID" 2>/dev/null; do
		if [ $up = 0 ]; then
			if grep -q XCALL-GUEST-UP "$con" 2>/dev/null; then
				up=1
				say "$accel guest reached userspace after ${t}s"
			elif [ "$up_tmo" -gt 0 ] && [ $t -ge "$up_tmo" ]; then
				say "$accel guest printed no sign of life in ${up_tmo}s: treating it as hung"
				[ -s "$OUT/qemu-$accel.pid" ] && kill "$(cat "$OUT/qemu-$accel.pid")" 2>/dev/null
				wait "$QPID" 2>/dev/null
				return 2
			fi
		fi
		sleep 1
		t=$((t + 1))
	done
	wait "$QPID"
	local rc=$?
	if grep -q '@@XCALL-DONE' "$res" 2>/dev/null; then
		say "$accel guest finished in ${t}s"
		return 0
	fi
	[ $up = 0 ] && return 2
	say "$accel guest stopped (rc $rc) before it finished; last console lines:"
	tail -n 30 "$con" | sed 's/^/  | /'
	return 1
}

ACCEL=""
if [ "$ACCEL_WANT" != tcg ] && kvm_usable; then
	run_guest kvm $GUEST_TIMEOUT "${KMOD_ITER:-100000}" "${KMOD_NUMIPI:-100000}" \
		"${KMOD_SMALL:-10000}" "${KMOD_BENCH_ITER:-100000}"
	wait_guest kvm "$KVM_TIMEOUT"
	case $? in
	0) ACCEL=kvm ;;
	2) say "KVM did not boot the guest (last qemu message: $(grep -v -e warning -e run-guest.sh "$OUT/qemu-kvm.err" | tail -n 1)); falling back to TCG" ;;
	*) [ "$ACCEL_WANT" = kvm ] && die "the KVM guest failed" ;;
	esac
elif [ "$ACCEL_WANT" = kvm ]; then
	die "KMOD_ACCEL=kvm but /dev/kvm is not usable"
fi
if [ -z "$ACCEL" ]; then
	[ "$ACCEL_WANT" = kvm ] && die "KMOD_ACCEL=kvm but the KVM guest did not finish"
	run_guest tcg $GUEST_TIMEOUT "${KMOD_ITER:-20000}" "${KMOD_NUMIPI:-10000}" \
		"${KMOD_SMALL:-2000}" "${KMOD_BENCH_ITER:-5000}"
	wait_guest tcg 180 || { tail -n 40 "$OUT/console-tcg.log" | sed 's/^/  | /'; }
	ACCEL=tcg
fi

# ---------------------------------------------------------------- 6. check
T_END=$(date +%s)
say "guest run under $ACCEL done; $((T_END - T_START))s since start"
python3 kmod/check_results.py --accel "$ACCEL" --results "$OUT/results-$ACCEL.log" \
	--console "$OUT/console-$ACCEL.log" --cases kmod/guest/cases --json-dir "$OUT" \
	${BENCH_NOTE:+--bench-note "$BENCH_NOTE"}
rc=$?
say "total time $(($(date +%s) - T_START))s"
exit $rc
