#!/bin/bash
# check_uring_stamp.sh - a build made without liburing is rebuilt when liburing appears.
#
# bench/bench.mk keeps the liburing probe's answer in $(BUILD)/bench/uring-libs, rewritten
# only when the answer changes, and every bench object and xcall-bench depend on it. Here a
# scratch build directory holds objects and a binary that are up to date, built "without
# liburing" (URING_PROBE=true answers nothing); then the probe answers -luring, as it does
# once `make deps` installed liburing-dev. The compiler is `true` (CC=true): make prints the
# commands it runs and nothing is compiled, so the check takes a second:
#   - with the answer unchanged, xcall-bench is up to date and the stamp is not rewritten;
#   - once the answer changes, make would recompile the objects and relink with -luring;
#   - and back (liburing removed): rebuilt without it.
# Usage: bash bench/tests/check_uring_stamp.sh (from the repository root). Exit 0 pass, 1 fail.
set -u
fail() { echo "check_uring_stamp: FAIL: $*" >&2; exit 1; }
b=$(mktemp -d /tmp/xcall-uring.XXXXXX)
trap 'rm -rf "$b"' EXIT
M=(make --no-print-directory -j1 BUILD="$b" CC=true -o "$b/libxcall.a")
# the commands make runs to bring xcall-bench up to date, with a probe answering $1
plan() { "${M[@]}" URING_PROBE="$1" "$b/xcall-bench" | grep -v "is up to date\.$"; }
mkdir -p "$b/bench"
: > "$b/libxcall.a"
for c in bench/*.c; do o="$b/bench/$(basename "${c%.c}").o"; : > "$o"; done
: > "$b/xcall-bench"

# 1. the answer "absent" written once; everything built after it
"${M[@]}" URING_PROBE=true "$b/bench/uring-libs" >/dev/null || fail "the probe target failed"
[ -f "$b/bench/uring-libs" ] || fail "no stamp written"
[ -z "$(tr -d '[:space:]' < "$b/bench/uring-libs")" ] || fail "stamp not empty for an absent liburing"
sleep 1.1                                   # mtimes a second apart, whatever the filesystem
touch "$b"/bench/*.o; touch "$b/xcall-bench"
[ -z "$(plan true)" ] || fail "not up to date right after a build: $(plan true)"
before=$(stat -c %Y "$b/bench/uring-libs")

# 2. the same answer again: the stamp keeps its time, nothing to rebuild
sleep 1.1
"${M[@]}" URING_PROBE=true "$b/bench/uring-libs" >/dev/null || fail "the probe target failed"
[ "$(stat -c %Y "$b/bench/uring-libs")" = "$before" ] || fail "stamp rewritten with the same answer"
out=$(plan true)
[ -z "$out" ] || fail "rebuilt with the same answer: $out"

# 3. liburing appears: the stamp changes, every object recompiles with -DXB_HAVE_LIBURING
#    and the binary links -luring
plan=$(plan 'echo -luring')
grep -qx -- '-luring' "$b/bench/uring-libs" || fail "stamp does not say -luring"
grep -q -- '-DXB_HAVE_LIBURING .*-c bench/wake_mech.c' <<<"$plan" ||
	fail "wake_mech.c would not be recompiled with liburing: $plan"
grep -q -- '-o '"$b"'/xcall-bench .*-luring' <<<"$plan" ||
	fail "xcall-bench would not be relinked with -luring: $plan"

# 4. and gone again: rebuilt without it
sleep 1.1
touch "$b"/bench/*.o; touch "$b/xcall-bench"
plan=$(plan true)
grep -q -- '-c bench/wake_mech.c' <<<"$plan" || fail "no rebuild once liburing went away"
grep -q -- '-DXB_HAVE_LIBURING' <<<"$plan" && fail "still built with liburing after it went away"
echo "check_uring_stamp: ok: a build is redone when the liburing probe's answer changes, and only then"
