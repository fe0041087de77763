#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/api/install.sh - `make check-install`: libxcall as a user installs and links it.
#   - `make install PREFIX=<stage>` lays out xcall.h, libxcall.a, $SONAME with its
#     libxcall.so link, and lib/pkgconfig/xcall.pc;
#   - the README's example (its text from README.md), built as the README says, with
#     `pkg-config --cflags --libs xcall`, as C and as C++, runs with LD_LIBRARY_PATH unset
#     and loads the staged $SONAME (xcall.pc's rpath), printing what the README says;
#   - `make uninstall PREFIX=<stage>` removes every file install wrote.
# Usage: tests/api/install.sh BUILD_DIR   (MAKE, CC, CXX and SONAME from the environment:
# the Makefile exports SONAME, the library's soname, libxcall.so.MAJOR)
set -u
SONAME=${SONAME:?the Makefile exports SONAME}
BUILD=${1:-build}
MAKE=${MAKE:-make}
CC=${CC:-cc}
CXX=${CXX:-c++}
STAGE="$(cd "$BUILD" && pwd)/stage"
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok    $*"; }
bad() { fail=$((fail + 1)); echo "FAIL  $*"; }
finish() { echo "install: $pass passed, $fail failed"; [ $fail -eq 0 ]; exit; }

rm -rf "$STAGE"
mkdir -p "$STAGE"
if $MAKE --no-print-directory install PREFIX="$STAGE" BUILD="$BUILD" >"$STAGE/install.log" 2>&1; then
	ok "make install PREFIX=$STAGE"
else bad "make install PREFIX=$STAGE (see $STAGE/install.log)"; finish; fi
installed="include/xcall.h lib/libxcall.a lib/$SONAME lib/libxcall.so lib/pkgconfig/xcall.pc"
missing=""
for f in $installed; do [ -e "$STAGE/$f" ] || missing="$missing $f"; done
if [ -z "$missing" ] && [ "$(readlink "$STAGE/lib/libxcall.so")" = "$SONAME" ]; then
	ok "installed: $installed"
else bad "installed: missing${missing:- nothing, but lib/libxcall.so is not a link to $SONAME}"; fi

tests/api/readme-example.sh README.md "$STAGE/app.c" || { bad "README.md: no example"; finish; }
export PKG_CONFIG_PATH="$STAGE/lib/pkgconfig"
if ! flags=$(pkg-config --cflags --libs xcall 2>"$STAGE/pkg-config.log"); then
	bad "pkg-config --cflags --libs xcall (see $STAGE/pkg-config.log)"; finish
fi

# What the README promises: a line from CPU 1 for the waiting call (where CPU 1 is ours),
# and one from every CPU for the nowait call.
cpu_allowed() { # CPU: in this process's affinity (Cpus_allowed_list: 0-3,8,10-15)
	awk -v cpu="$1" '/^Cpus_allowed_list:/ {
		n = split($2, part, ",")
		for (i = 1; i <= n; i++) {
			split(part[i], r, "-")
			if (cpu >= r[1] + 0 && cpu <= (r[2] == "" ? r[1] : r[2]) + 0) found = 1
		}
	} END { exit !found }' /proc/self/status
}
want_wait=$(cpu_allowed 1 && echo 1)

for lang in c c++; do
	if [ $lang = c ]; then cc=$CC; src="$STAGE/app.c"; else cc=$CXX; src="-x c++ $STAGE/app.c"; fi
	bin="$STAGE/app-$lang"
	# shellcheck disable=SC2086  # the flags are words, as in the README's $(pkg-config ...)
	if ! $cc $src $flags -o "$bin" >"$bin.log" 2>&1; then
		bad "$lang: $cc app.c \$(pkg-config --cflags --libs xcall) (see $bin.log)"; continue
	fi
	if env -u LD_LIBRARY_PATH "$bin" >"$bin.out" 2>&1; then
		ok "$lang: the README example, built with pkg-config, runs without LD_LIBRARY_PATH"
	else bad "$lang: the README example exits $? without LD_LIBRARY_PATH: $(head -c 300 "$bin.out")"; continue; fi
	lib=$(env -u LD_LIBRARY_PATH ldd "$bin" | awk -v so="$SONAME" '$1 == so { print $3 }')
	if [ "$lib" = "$STAGE/lib/$SONAME" ]; then ok "$lang: it loads $lib"
	else bad "$lang: it loads $SONAME from '${lib:-nowhere}', not $STAGE/lib"; fi
	if grep -q '^nowait from CPU [0-9]*$' "$bin.out" && { [ -z "$want_wait" ] || grep -qx 'wait from CPU 1' "$bin.out"; }; then
		ok "$lang: it prints $(grep -c 'from CPU' "$bin.out") lines, as the README says"
	else bad "$lang: output not as the README says: $(tr '\n' '|' <"$bin.out")"; fi
done

if $MAKE --no-print-directory uninstall PREFIX="$STAGE" BUILD="$BUILD" >"$STAGE/uninstall.log" 2>&1; then
	left=$(cd "$STAGE" && find include lib ! -type d 2>/dev/null | tr '\n' ' ')
	if [ -z "$left" ]; then ok "make uninstall removes every file install wrote"
	else bad "make uninstall left: $left"; fi
else bad "make uninstall PREFIX=$STAGE (see $STAGE/uninstall.log)"; fi
finish
