#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/guest.sh - boot Debian's cloud kernel under QEMU with a busybox initramfs, for
# the tests that must not touch the host: kmod/run-guest.sh (the kernel module) and
# tests/guest/run.sh (the library against OS hotplug). Sourced, not run. Needs OUT set
# (a directory for logs) before the calls.
#
#   guest_setup          install what is missing: the cloud kernel image and headers,
#                        qemu-system-x86, busybox-static, cpio. Sets GUEST_KVER,
#                        GUEST_KIMG, GUEST_KDIR, GUEST_BUSYBOX. Returns 1 with GUEST_WHY
#                        set when the kernel cannot be installed (callers skip), 2 on
#                        another failure (GUEST_WHY says which).
#   guest_pack ROOT CPIO pack a root directory into a gzip'd newc initramfs
#   guest_run NAME WANT SMP APPEND_KVM APPEND_TCG INITRD TIMEOUT [QEMU ARGS...]
#                        boot under KVM first (unless WANT is tcg), with a short
#                        boot-hang timeout, then under software emulation (TCG); the
#                        guest's /init prints XCALL-GUEST-UP on the console (ttyS0)
#                        and writes its results, ending with @@XCALL-DONE, to ttyS1.
#                        Sets GUEST_ACCEL, GUEST_CONSOLE and GUEST_RESULTS (the logs);
#                        returns 0 when the guest finished.
# Environment: GUEST_KVM_TIMEOUT (20 s: no sign of life by then is a hang),
# GUEST_KVM_CPU (host).

guest_say() { echo "${GUEST_SAY:-guest}: $*"; }

GUEST_APT_UPDATED=0
guest_apt_install() {
	if [ "$(id -u)" != 0 ]; then
		guest_say "not root: cannot apt-get install $*"
		return 1
	fi
	if [ $GUEST_APT_UPDATED = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get update -q >"$OUT/apt-update.log" 2>&1 ||
			guest_say "apt-get update failed (see $OUT/apt-update.log); trying the cached lists"
		GUEST_APT_UPDATED=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" \
		>>"$OUT/apt-install.log" 2>&1
}

# The newest installed Debian cloud kernel that has its headers beside it.
guest_find_kernel() {
	local v best="" img
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

# A static executable has no program interpreter.
guest_is_static() { [ -x "$1" ] && ! readelf -l "$1" 2>/dev/null | grep -q 'program interpreter'; }

guest_setup() {
	local need=() ver
	GUEST_KVER=$(guest_find_kernel)
	if [ -z "$GUEST_KVER" ]; then
		guest_say "installing Debian's cloud kernel image and headers (apt)"
		if ! guest_apt_install linux-image-cloud-amd64 linux-headers-cloud-amd64; then
			# The metapackages can lag the archive: try the versioned names apt knows of.
			ver=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
				sed -n 's/.*Depends: linux-image-\(.*-cloud-amd64\)$/\1/p' | head -n 1)
			[ -n "$ver" ] && guest_apt_install "linux-image-$ver" "linux-headers-$ver"
		fi
		GUEST_KVER=$(guest_find_kernel)
		if [ -z "$GUEST_KVER" ]; then
			GUEST_WHY="Debian's cloud kernel image and headers cannot be installed here (see $OUT/apt-install.log)"
			return 1
		fi
	fi
	command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
	[ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -qx insmod || need+=(busybox-static)
	command -v cpio >/dev/null || need+=(cpio)
	if [ ${#need[@]} -gt 0 ]; then
		guest_say "installing ${need[*]} (apt)"
		guest_apt_install "${need[@]}" || { GUEST_WHY="could not install ${need[*]} (see $OUT/apt-install.log)"; return 2; }
	fi
	GUEST_BUSYBOX=/bin/busybox
	guest_is_static "$GUEST_BUSYBOX" || { GUEST_WHY="$GUEST_BUSYBOX is not statically linked (install busybox-static)"; return 2; }
	GUEST_KIMG=/boot/vmlinuz-$GUEST_KVER
	GUEST_KDIR=/usr/src/linux-headers-$GUEST_KVER
	[ -r "$GUEST_KIMG" ] || { GUEST_WHY="$GUEST_KIMG is not readable"; return 2; }
	return 0
}

guest_pack() {
	(cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) >"$2"
}

guest_kvm_usable() {
	# /dev/kvm can open here and still hang a nested guest: the boot itself decides.
	[ -e /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]
}

# guest_boot NAME ACCEL TIMEOUT SMP APPEND INITRD [QEMU ARGS...]: qemu in the background (GUEST_QPID).
guest_boot() {
	local name=$1 accel=$2 tmo=$3 smp=$4 append=$5 initrd=$6 cpuopt
	shift 6
	GUEST_CONSOLE="$OUT/console-$name-$accel.log"
	GUEST_RESULTS="$OUT/results-$name-$accel.log"
	if [ "$accel" = kvm ]; then cpuopt="-cpu ${GUEST_KVM_CPU:-host}"; else cpuopt="-cpu max"; fi
	rm -f "$GUEST_CONSOLE" "$GUEST_RESULTS" "$OUT/qemu-$name-$accel.pid"
	guest_say "booting $GUEST_KVER under $accel, -smp $smp (timeout ${tmo}s)"
	# In a subshell that outlives qemu, so that a crash of qemu is a status, not a job
	# notice from bash; the pid file lets the hang detector stop qemu itself.
	# shellcheck disable=SC2086
	( timeout -k 5 "$tmo" qemu-system-x86_64 -pidfile "$OUT/qemu-$name-$accel.pid" \
		-accel "$accel" $cpuopt -smp "$smp" "$@" \
		-nodefaults -display none -no-reboot \
		-kernel "$GUEST_KIMG" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 loglevel=4 $append" \
		-serial "file:$GUEST_CONSOLE" -serial "file:$GUEST_RESULTS"; exit $? ) \
		2>"$OUT/qemu-$name-$accel.err" &
	GUEST_QPID=$!
}

# guest_wait NAME ACCEL UP_TIMEOUT: 0 done, 2 hung before userspace, 1 other failure
guest_wait() {
	local name=$1 accel=$2 up_tmo=$3 t=0 up=0 rc
	while kill -0 "$GUEST_QPID" 2>/dev/null; do
		if [ $up = 0 ]; then
			if grep -q XCALL-GUEST-UP "$GUEST_CONSOLE" 2>/dev/null; then
				up=1
				guest_say "$accel guest reached userspace after ${t}s"
			elif [ "$up_tmo" -gt 0 ] && [ $t -ge "$up_tmo" ]; then
				guest_say "$accel guest printed no sign of life in ${up_tmo}s: treating it as hung"
				[ -s "$OUT/qemu-$name-$accel.pid" ] && kill "$(cat "$OUT/qemu-$name-$accel.pid")" 2>/dev/null
				wait "$GUEST_QPID" 2>/dev/null
				return 2
			fi
		fi
		sleep 1
		t=$((t + 1))
	done
	wait "$GUEST_QPID"
	rc=$?
	if grep -q '@@XCALL-DONE' "$GUEST_RESULTS" 2>/dev/null; then
		guest_say "$accel guest finished in ${t}s"
		return 0
	fi
	[ $up = 0 ] && return 2
	guest_say "$accel guest stopped (rc $rc) before it finished; last console lines:"
	tail -n 30 "$GUEST_CONSOLE" | sed 's/^/  | /'
	return 1
}

guest_run() {
	local name=$1 want=$2 smp=$3 app_kvm=$4 app_tcg=$5 initrd=$6 tmo=$7
	shift 7
	GUEST_ACCEL=""
	if [ "$want" != tcg ] && guest_kvm_usable; then
		guest_boot "$name" kvm "$tmo" "$smp" "$app_kvm" "$initrd" "$@"
		guest_wait "$name" kvm "${GUEST_KVM_TIMEOUT:-20}"
		case $? in
		0) GUEST_ACCEL=kvm; return 0 ;;
		2) guest_say "KVM did not boot the guest (last qemu message: $(grep -v -e warning -e "scripts/guest.sh" "$OUT/qemu-$name-kvm.err" | tail -n 1)); falling back to TCG" ;;
		*) [ "$want" = kvm ] && return 1 ;;
		esac
	elif [ "$want" = kvm ]; then
		guest_say "KVM wanted but /dev/kvm is not usable"
		return 1
	fi
	[ "$want" = kvm ] && return 1
	GUEST_ACCEL=tcg
	guest_boot "$name" tcg "$tmo" "$smp" "$app_tcg" "$initrd" "$@"
	guest_wait "$name" tcg 180
}
