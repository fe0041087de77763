#!/usr/bin/env bash
# prove.sh BUG [TIME] [MODE] - put one bug back (fuzz/scenarios/bugs/BUG*.patch) in a scratch
# copy of the tree, build the scenario fuzzer there, and time how long fresh seeds take to
# find it (nice). Prints the load average, the time, the seed and the shrunk program.
#   fuzz/scenarios/prove.sh bug3 10           # at most 10 minutes of search, plain build
#   fuzz/scenarios/prove.sh 48f9942 120s      # at most 120 seconds
#   fuzz/scenarios/prove.sh audit3 10 tsan    # the TSan build (asan: ASan + UBSan)
# TIME: minutes, or seconds with an s (default 10 minutes). MODE: plain (default), asan or
# tsan; a patch may name its own with a line "prove: mode M" before its diff, and lines
# "prove: say TEXT" there are printed (what the patch changes beyond the bug, such as a
# window it widens). FZS_SEED=N starts the seeds there (default: the time);
# FZS_SHRINK_SECONDS (default 180; 0: no shrink); FZS_GEN=G searches generator G's programs
# (docs/fuzz.md; default the latest); FZS_BOUND_MS passes through.
set -euo pipefail
cd "$(dirname "$0")/../.."
usage="usage: prove.sh BUG [MINUTES|SECONDSs] [plain|asan|tsan]"
bug=${1:?$usage}
time=${2:-10}
patch=$(ls fuzz/scenarios/bugs/"$bug"*.patch 2>/dev/null | head -n1)
[ -n "$patch" ] || { echo "prove.sh: no patch fuzz/scenarios/bugs/$bug*.patch" >&2; exit 2; }
mode=${3:-$(sed -n '/^diff /q; s/^prove: mode \([a-z]*\).*/\1/p' "$patch" | head -n1)}
mode=${mode:-plain}
case $time in
*s) seconds=${time%s} ;;
*) seconds=$((time * 60)) ;;
esac
[[ $seconds =~ ^[0-9]+$ ]] || { echo "$usage" >&2; exit 2; }
case $mode in
plain) build=build; san=() ;;
asan) build=build-address-undefined; san=(SAN=address,undefined OPT=-O1) ;;
tsan) build=build-thread; san=(SAN=thread OPT=-O1) ;;
*) echo "prove.sh: mode $mode: plain, asan or tsan" >&2; exit 2 ;;
esac
scratch=$(mktemp -d /tmp/xcfz-prove-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
# the tree as it is now (committed or not), without build outputs
tar --exclude=./build --exclude='./build-*' --exclude=./.git --exclude=./bindings/rust/target \
	-cf - . | tar -C "$scratch" -xf -
(cd "$scratch" && patch -p1 -s < "$OLDPWD/$patch")
echo "prove.sh: $patch applied in $scratch (mode $mode, $seconds s)"
sed -n '/^diff /q; s/^prove: say /prove.sh: note: /p' "$patch"
make -C "$scratch" -j2 --no-print-directory "${san[@]}" "$build/fuzz-scenarios/xcfuzz" >/dev/null
seed=${FZS_SEED:-$(date +%s)}
shrink=${FZS_SHRINK_SECONDS:-180}
echo "prove.sh: load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs at the start"
start=$(date +%s)
set +e
ASAN_OPTIONS=abort_on_error=1:detect_leaks=0 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0 \
FZS_OUT="$scratch/$build/fuzz-scenarios" nice "$scratch/$build/fuzz-scenarios/xcfuzz" fuzz \
	-t "$seconds" -s "$seed" ${FZS_GEN:+-g "$FZS_GEN"} \
	$([ "$shrink" = 0 ] && echo --no-shrink || echo --shrink-seconds "$shrink") |
	tee "$scratch/prove.out"
rc=${PIPESTATUS[0]}
set -e
load="load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
mkdir -p build/fuzz-scenarios
cp "$scratch/prove.out" "build/fuzz-scenarios/prove-$bug-$mode.out"
cp "$scratch/$build"/fuzz-scenarios/fail-* build/fuzz-scenarios/ 2>/dev/null || true
if [ "$rc" = 1 ]; then
	echo "prove.sh: $bug FOUND (mode $mode, seeds from $seed, $(grep -m1 'found after' "$scratch/prove.out" |
		sed 's/^xcfuzz: //'), $(grep -m1 'FAILED' "$scratch/prove.out" | sed 's/^xcfuzz: //')," \
		"$(grep -m1 'shrunk program' "$scratch/prove.out" | sed 's/, replay.*//; s/^xcfuzz: //')," \
		"$(($(date +%s) - start)) s with the shrink; $load)"
else
	echo "prove.sh: $bug NOT found in $seconds s (mode $mode, seeds from $seed; $load)"
fi
