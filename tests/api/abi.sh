#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/api/abi.sh - `make check-abi`: the ABI grows without breaking a program (xcall.h, the
# ABI note). tests/api/abi-reader.c is built against this xcall.h and linked against
# libxcall.so.0; it then runs against that library and against one built from a copy of
# this tree with one counter more at the end of XC_STATS_COUNTERS and one field more at the
# end of struct xc_opts (the same soname): it must load both, and read correct counts
# without a byte written past its structs. Exit 0 when both runs pass.
# Usage: tests/api/abi.sh BUILD_DIR
set -u
BUILD=${1:-build}
OUT="$BUILD/abi"
MAKE=${MAKE:-make}
CC=${CC:-cc}
rm -rf "$OUT"
mkdir -p "$OUT/older" "$OUT/newer"
fail() { echo "FAIL  abi: $*"; exit 1; }

# the program and the library as built here
cp "$BUILD/libxcall.so" "$OUT/older/$SONAME" && ln -sf "$SONAME" "$OUT/older/libxcall.so" ||
	fail "no $BUILD/libxcall.so (make lib)"
$CC -std=c11 -Wall -Wextra -Werror -Iinclude tests/api/abi-reader.c -o "$OUT/abi-reader" \
	-L"$OUT/older" -lxcall -pthread || fail "abi-reader did not build"

# the newer library: this tree, its struct xc_stats and struct xc_opts each one member longer
tree="$OUT/tree"
mkdir -p "$tree"
git ls-files -z Makefile xcall.pc.in include src tests/tests.mk | xargs -0 cp --parents -t "$tree"
# the list's last line (the one without a continuation) and the struct's closing brace,
# wherever they are: whatever counter or option came last
awk '
	/^#define XC_STATS_COUNTERS\(X\)/ { in_list = 1 }
	in_list && /^\tX\(/ && !/\\$/ {
		print $0 " \\"; print "\tX(abi_test, WORKER, COUNT, \"one counter more, at the end\")"
		in_list = 0; next
	}
	/^struct xc_opts \{/ { in_opts = 1 }
	in_opts && /^\};/ { print "\tunsigned abi_test_option;"; in_opts = 0 }
	{ print }
' "$tree/include/xcall.h" >"$tree/include/xcall.h.new" && mv "$tree/include/xcall.h.new" "$tree/include/xcall.h"
grep -q 'X(abi_test,' "$tree/include/xcall.h" && grep -q 'abi_test_option' "$tree/include/xcall.h" ||
	fail "the copy's xcall.h did not take the counter and the option more"
$MAKE -C "$tree" --no-print-directory BUILD=build lib >"$OUT/newer.log" 2>&1 ||
	{ tail -n 20 "$OUT/newer.log"; fail "the newer library did not build"; }
newsize=$(printf '#include <xcall.h>\n#include <stdio.h>\nint main(void) { printf("%%zu\\n", sizeof(struct xc_stats)); return 0; }\n' |
	$CC -std=c11 -I"$tree/include" -x c - -o "$OUT/size" && "$OUT/size")
oldsize=$(printf '#include <xcall.h>\n#include <stdio.h>\nint main(void) { printf("%%zu\\n", sizeof(struct xc_stats)); return 0; }\n' |
	$CC -std=c11 -Iinclude -x c - -o "$OUT/size" && "$OUT/size")
[ "$newsize" -gt "$oldsize" ] || fail "the newer struct xc_stats is not longer ($newsize, $oldsize)"
cp "$tree/build/libxcall.so" "$OUT/newer/$SONAME"

for lib in older newer; do
	out=$(LD_LIBRARY_PATH="$OUT/$lib" "$OUT/abi-reader" 2>&1) ||
		fail "against the $lib library: $out"
	loaded=$(LD_LIBRARY_PATH="$OUT/$lib" LD_DEBUG=libs "$OUT/abi-reader" 2>&1 |
		sed -n 's/.*calling init: \(.*libxcall.*\)/\1/p' | head -n 1)
	case $loaded in
	*"$OUT/$lib/"*) ;;
	*) fail "against the $lib library: the loader took ${loaded:-nothing}" ;;
	esac
	echo "ok    abi: a program built against this xcall.h runs against the $lib library ($out)"
done
echo "abi: passed (struct xc_stats $oldsize bytes here, $newsize in the newer library)"
