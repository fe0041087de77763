#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/api/check.sh - `make check-api`: the public header as a user meets it.
#   - xcall.h compiles as C11 (gcc, clang) and as C++11, 14, 17, 20 and the newest
#     standard each C++ compiler knows (g++, clang++), warning-free under
#     -Wall -Wextra -Wpedantic -Werror, without _GNU_SOURCE from us;
#   - the README's example, its text taken from README.md (the ```c block under
#     "libxcall in brief"), builds warning-free and runs in each, linked against
#     libxcall.so; so does tests/api/cxx.cpp in each C++ standard;
#   - the README's static recipe (its `cc ... build/libxcall.a` line) builds the example
#     from the repository's root and it runs;
#   - every public struct has the same size and field offsets in every build
#     (tests/api/layout.c);
#   - libxcall.so exports exactly the functions xcall.h declares with XC_API.
# A compiler that is not installed is skipped with a line saying so (make deps installs clang).
# Usage: tests/api/check.sh BUILD_DIR
set -u
BUILD=${1:-build}
OUT="$BUILD/api"
SO="$BUILD/libxcall.so"
mkdir -p "$OUT"
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); echo "ok    $*"; }
bad() { fail=$((fail + 1)); echo "FAIL  $*"; }
skipped() { skip=$((skip + 1)); echo "skip  $*"; }
WARN="-Wall -Wextra -Wpedantic -Werror"
# the shared library under both its names, as `make install` lays it out: its soname is the
# Makefile's SONAME (exported by make), and the library built says the same
SONAME=${SONAME:?the Makefile exports SONAME}
mkdir -p "$OUT/lib"
built=$(readelf -d "$SO" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [ "$built" = "$SONAME" ]; then ok "libxcall.so: soname $SONAME"
else bad "libxcall.so: soname '${built}', the Makefile's is $SONAME"; fi
cp "$SO" "$OUT/lib/$SONAME"
ln -sf "$SONAME" "$OUT/lib/libxcall.so"
LINK="-L$OUT/lib -Wl,-rpath,$(cd "$OUT/lib" && pwd) -lxcall -pthread"

# The README's example as a reader copies it (tests/api/readme-example.sh).
EXAMPLE="$OUT/readme-example.c"
if tests/api/readme-example.sh README.md "$EXAMPLE"; then
	ok "README.md: the example's text found ($(wc -l <"$EXAMPLE") lines)"
else bad "README.md: the example's text not found"; fi

# The README's own static recipe, the `cc ... build/libxcall.a` line of its first ```sh block
# under "libxcall in brief", run as a reader runs it from the repository's root: the example
# as app.c, the build directory as BUILD names it (a missing -Iinclude fails here).
recipe=$(awk '/^## / { in_brief = ($0 == "## libxcall in brief") }
	in_brief && /^```sh$/ { sh = 1; next }
	sh && /^```$/ { exit }
	sh && /^cc .*build\/libxcall\.a/ { sub(/[ \t]*#.*/, ""); print; exit }' README.md)
if [ -z "$recipe" ]; then
	bad "README.md: no \`cc ... build/libxcall.a\` line in a \`\`\`sh block under \"libxcall in brief\""
else
	mkdir -p "$OUT/recipe"
	cp "$EXAMPLE" "$OUT/recipe/app.c"
	# the recipe's words: app.c and -o app in a scratch directory, build/ as $BUILD
	cmd=$(printf '%s\n' "$recipe" | sed -e "s|build/libxcall\.a|$BUILD/libxcall.a|" \
		-e "s| app\.c | $OUT/recipe/app.c |" -e "s|-o app\$|-o $OUT/recipe/app|")
	case "$cmd" in *"-o $OUT/recipe/app"*) ;; *) cmd="$cmd -o $OUT/recipe/app" ;; esac
	if sh -c "$cmd" >"$OUT/recipe/log" 2>&1 && "$OUT/recipe/app" >/dev/null; then
		ok "README.md's static recipe builds and runs: $recipe"
	else bad "README.md's static recipe: $recipe (see $OUT/recipe/log)"; fi
fi

# build NAME COMPILER STDFLAG SOURCE [more flags]: compile and link quietly, the log kept
build() {
	local name=$1 cc=$2 std=$3 src=$4
	shift 4
	# shellcheck disable=SC2086
	$cc $std $WARN -Iinclude "$@" "$src" -o "$OUT/$name" $LINK >"$OUT/$name.log" 2>&1
}

ref=""
layout_ok() { # NAME: its layout equals the first one's
	"$OUT/$1" >"$OUT/$1.out" 2>&1 || return 1
	[ -n "$ref" ] || ref="$OUT/$1.out"
	cmp -s "$ref" "$OUT/$1.out"
}

for cc in gcc clang; do
	if ! command -v $cc >/dev/null; then skipped "$cc: not installed"; continue; fi
	if build "hello-$cc-c11" $cc -std=c11 "$EXAMPLE" && "$OUT/hello-$cc-c11" >/dev/null; then
		ok "$cc -std=c11: README example builds warning-free and runs"
	else bad "$cc -std=c11: README example (see $OUT/hello-$cc-c11.log)"; fi
	if build "layout-$cc-c11" $cc -std=c11 tests/api/layout.c && layout_ok "layout-$cc-c11"; then
		ok "$cc -std=c11: layout"
	else bad "$cc -std=c11: layout differs or did not build (see $OUT/layout-$cc-c11.*)"; fi
done

for cxx in g++ clang++; do
	if ! command -v $cxx >/dev/null; then skipped "$cxx: not installed"; continue; fi
	stds="c++11 c++14 c++17 c++20"
	for newest in c++26 c++2c c++23 c++2b; do
		if echo 'int main(){}' | $cxx -std=$newest -x c++ - -o /dev/null 2>/dev/null; then
			stds="$stds $newest"
			break
		fi
	done
	for std in $stds; do
		tag="$cxx-$std"
		if build "hello-$tag" $cxx "-std=$std -x c++" "$EXAMPLE" && "$OUT/hello-$tag" >/dev/null; then
			ok "$cxx -std=$std: README example builds warning-free and runs"
		else bad "$cxx -std=$std: README example (see $OUT/hello-$tag.log)"; fi
		if build "cxx-$tag" $cxx "-std=$std" tests/api/cxx.cpp && "$OUT/cxx-$tag" >"$OUT/cxx-$tag.out" 2>&1; then
			ok "$cxx -std=$std: tests/api/cxx.cpp"
		else bad "$cxx -std=$std: tests/api/cxx.cpp (see $OUT/cxx-$tag.log, .out)"; fi
		if build "layout-$tag" $cxx "-std=$std -x c++" tests/api/layout.c && layout_ok "layout-$tag"; then
			ok "$cxx -std=$std: layout as in C"
		else bad "$cxx -std=$std: layout differs from C or did not build (see $OUT/layout-$tag.*)"; fi
	done
done

# Exports, both ways: the header's XC_API functions against the dynamic symbol table, each
# with a symbol version of src/libxcall.map (the version nodes themselves are absolute symbols)
sed -n 's/^XC_API .*[ *]\(xc_[a-z0-9_]*\)(.*/\1/p' include/xcall.h | sort -u >"$OUT/api.declared"
nm -D --defined-only "$SO" | awk '$2 != "A" { print $3 }' | sort -u >"$OUT/api.exported.versioned"
sed 's/@.*//' "$OUT/api.exported.versioned" | sort -u >"$OUT/api.exported"
unversioned=$(grep -v '@@XCALL_' "$OUT/api.exported.versioned" | tr '\n' ' ')
missing=$(comm -23 "$OUT/api.declared" "$OUT/api.exported" | tr '\n' ' ')
extra=$(comm -13 "$OUT/api.declared" "$OUT/api.exported" | tr '\n' ' ')
n=$(wc -l <"$OUT/api.declared")
if [ "$n" -gt 0 ] && [ -z "$missing" ]; then ok "exports: all $n declared functions exported"
else bad "exports: declared but not exported: ${missing:-(no declarations found)}"; fi
if [ -z "$extra" ]; then ok "exports: nothing exported beyond xcall.h ($(wc -l <"$OUT/api.exported") symbols)"
else bad "exports: exported but not in xcall.h: $extra"; fi
if [ -z "$unversioned" ]; then ok "exports: every symbol has a version (src/libxcall.map)"
else bad "exports: without a version: $unversioned"; fi

echo "api: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
