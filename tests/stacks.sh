#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/stacks.sh LOG BINARY - name the frames of the stacks a hung test dumped
# without gdb (tests/dump.h: "stack of thread TID ...: 0xADDR ..."), from the
# executable that ran: for a program run in a guest, the static build in
# build/guest-static/tests/NAME. Each frame but the innermost is a return
# address, looked up one byte back so that it names the call, not the line
# after it. Frames outside the executable (a dynamic build's libc) read "??".
set -u -o pipefail
[ $# = 2 ] || { echo "usage: $0 LOG BINARY" >&2; exit 2; }
log=$1 bin=$2
[ -r "$log" ] && [ -x "$bin" ] || { echo "$0: cannot read $log or $bin" >&2; exit 2; }
grep -o 'stack of thread [0-9]*[^:]*:[ 0-9a-fx]*' "$log" | while IFS=: read -r who frames; do
	echo "$who:"
	i=0
	for a in $frames; do
		[ $i -gt 0 ] && a=$(printf '%#x' $((a - 1)))
		printf '  #%-2d %s\n' "$i" "$(addr2line -f -i -p -C -e "$bin" "$a" | sed 's/^ (inlined by)/        inlined by/')"
		i=$((i + 1))
	done
done
