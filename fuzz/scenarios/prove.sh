#!/usr/bin/env bash
# prove.sh BUG [MINUTES] [MODE] - put one audited bug back (fuzz/scenarios/bugs/BUG*.patch)
# in a scratch copy of the tree, build the scenario fuzzer there, and time how long fresh
# seeds take to find it (nice). Prints the time, the seed and the shrunk program.
#   fuzz/scenarios/prove.sh bug3 10        # at most 10 minutes of search, plain build
#   fuzz/scenarios/prove.sh audit3 10 tsan # the TSan build (asan: ASan + UBSan)
# FZS_SEED=N starts the seeds there (default: the time); FZS_SHRINK_SECONDS (default 180);
# FZS_GEN=1 makes generator 1's programs (docs/fuzz.md; default the latest).
set -euo pipefail
cd "$(dirname "$0")/../.."
bug=${1:?usage: prove.sh BUG [MINUTES] [MODE]}
minutes=${2:-10}
mode=${3:-plain}
case $mode in
plain) build=build; san=() ;;
asan) build=build-address-undefined; san=(SAN=address,undefined OPT=-O1) ;;
tsan) build=build-thread; san=(SAN=thread OPT=-O1) ;;
*) echo "prove.sh: mode $mode: plain, asan or tsan" >&2; exit 2 ;;
esac
patch=$(ls fuzz/scenarios/bugs/"$bug"*.patch 2>/dev/null | head -n1)
[ -n "$patch" ] || { echo "prove.sh: no patch fuzz/scenarios/bugs/$bug*.patch" >&2; exit 2; }
scratch=$(mktemp -d /tmp/xcfz-prove-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
# the tree as it is now (committed or not), without build outputs
tar --exclude=./build --exclude='./build-*' --exclude=./.git --exclude=./bindings/rust/target \
	-cf - . | tar -C "$scratch" -xf -
(cd "$scratch" && patch -p1 -s < "$OLDPWD/$patch")
echo "prove.sh: $patch applied in $scratch"
make -C "$scratch" -j1 --no-print-directory "${san[@]}" "$build/fuzz-scenarios/xcfuzz" >/dev/null
seed=${FZS_SEED:-$(date +%s)}
start=$(date +%s)
set +e
ASAN_OPTIONS=abort_on_error=1:detect_leaks=0 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0 \
FZS_OUT="$scratch/$build/fuzz-scenarios" nice "$scratch/$build/fuzz-scenarios/xcfuzz" fuzz \
	-t $((minutes * 60)) -s "$seed" ${FZS_GEN:+-g "$FZS_GEN"} \
	--shrink-seconds "${FZS_SHRINK_SECONDS:-180}" | tee "$scratch/prove.out"
rc=${PIPESTATUS[0]}
set -e
mkdir -p build/fuzz-scenarios
cp "$scratch/prove.out" "build/fuzz-scenarios/prove-$bug-$mode.out"
cp "$scratch/$build"/fuzz-scenarios/fail-* build/fuzz-scenarios/ 2>/dev/null || true
if [ "$rc" = 1 ]; then
	echo "prove.sh: $bug FOUND (mode $mode, $(grep -m1 'found after' "$scratch/prove.out"))," \
		"$(grep -m1 'shrunk program' "$scratch/prove.out" | sed 's/, replay.*//')," \
		"$(($(date +%s) - start)) s with the shrink"
else
	echo "prove.sh: $bug NOT found in $minutes minutes (mode $mode)"
fi
