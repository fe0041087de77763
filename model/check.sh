#!/usr/bin/env bash
# model/check.sh - model-check the wakeup protocol with spin (model/wakeup.pml), and
# three mechanisms in small models of their own (floor.pml, lockwait.pml, urgentmark.pml).
#
# Usage: model/check.sh [OUTDIR]        (default build/model; run from the repo root)
# Env:   PAN_CC=cc  the C compiler for the verifiers (default gcc)
#        JOBS=n   verifications run at once (default: the number of CPUs, at most 2)
#        QUICK=1  skip the 3-sender run
#        FULL=1   also the long runs: LTL over 2 senders x 2 calls, no cycle with a
#                 work item, the attached thread with 2 senders x 2 calls and
#                 offline/online, two rings x 3 calls, both skipping R1',
#                 and NEST's 2 nowait calls each across an offline/online and
#                 waiting calls across xc_exit (several minutes more)
#
# Each verification gets its own directory under OUTDIR: the model files, pan.c,
# pan, pan.out (the verifier's report) and, when spin found an error, trail.txt
# (the counterexample replayed with spin -t; for a witness, only if spin found
# another error than the one expected). Expectations:
#   - the real model passes, in each configuration: safety (assertions,
#     urgent promptness at each work item, invalid end states), the LTL
#     liveness property, and the absence of any cycle (no livelock); with
#     ATTACHED, the same for an attached thread asleep in its own loop (its
#     eventfd's accounting, and with DETACH the close of the eventfd);
#   - each mutant FAILS with the bug it puts back: the lost wakeup (in the
#     safety run and in the LTL run), the urgent call left behind a work item
#     (nocatchup, relaxedrecheck, and both: the code before the fix), the
#     lost completion kick (noaskwake), the call wiped by a reopen of a CPU
#     the OS gave back without the hotplug lock (noreopenlock, FOLLOW), the
#     attached thread's lost wakeup (fdnorecheck), and its eventfd closed
#     with a write to come, or read never again (fdnocount, ATTACHED);
#   - with RING (the per-sender call rings, the code's default path) the real
#     model passes the same checks, and no published ring call is stranded,
#     a ring is on callq at most once, and calls run in FIFO order per sender;
#     the ring mutants fail: no U3 and a doorbell skipped on a non-empty ring
#     (a stranded call, and an LTL cycle), a re-link by plain store (a ring
#     pushed twice), a slot call without slot_in_order (FIFO broken), a close
#     that leaves the rings dropped at a lost U3 CAS (the code before the fix:
#     a stranded call), and one that stores IDLE in them (a ring pushed twice);
#     the configuration of the finding of docs/model.md (one sender's two nowait
#     calls and a waiting one across an offline, which stranded a call before
#     the close ran the rings dropped at a lost U3 CAS) passes;
#   - the rings' owners without a fence: a call that skips R1' leaves its head
#     store in the owner's store buffer past its R2, and the worker pays with a
#     membarrier at U2' (or, when another worker's is under way, keeps every
#     ring and does not sleep); every call reads xc_ring_asym, and each read
#     may find the flag changed: a fenced call stores F1 only if it reads it
#     true, a marked ring's call that reads it false clears the mark (C',
#     release) and fences; the real model passes every ring check above with
#     the buffer and the flag, also with a C' across an offline close, and
#     no U2' reads a mark from before the worker let the ring go; with the
#     slow verdict as a moment (VERDICT), a ring's mark costs two membarriers
#     at most after it; five mutants strand a call (safety, and LTL for the
#     first): no membarrier at U2' (nomembarrier), an owner that skips R1'
#     without storing F1 (nof1), a worker that sleeps without the membarrier
#     when it is busy (busysleep), a U2' that reads the flag, not the rings'
#     marks (asymflag), a C' by relaxed store (unmarkrelaxed: the close pays
#     none, and runs the ring without a buffered call); and the code before
#     C' (markkept) pays a third membarrier for one mark after the verdict;
#   - NEST (two CPUs with rings of 2 entries, each worker the owner of a ring
#     to the other, each call's fn making one nested call to either CPU, run
#     by the task loop, a close, or a wait's serve): every call whose caller
#     got 0 runs exactly once, a refused one never, no entry written over,
#     no worker waiting for ever, no invalid end state; the mutants of issue
#     36's bugs fail: refusedwait (ring_refused waits for the close: two
#     drains wait for each other), makeroomhead (make_room keeps its head:
#     a nested call overwritten), refusedrewind (LINKED while it waits, then
#     head rewound: a nested call lost);
#   - floor.pml (a worker's waits below its serve floor): every wait ends,
#     a worker nests at most one level past its floor, a refused call never
#     runs and one that ran is never refused, FIFO per ring among the calls
#     that run; with RETRACT, one exchange wins an entry; with rings of one
#     entry, a put into a full ring to the deep worker refused (-ELOOP); the
#     mutants fail: nothing refused below the floor (the code before
#     7160e0c) and only a ring's front refused (both: the two workers'
#     hang), the rings run below the floor (the nest past its bound), a
#     refusal by load and store (an entry refused and retracted), a put
#     that waits for room in a full ring to the deep worker (the hang);
#   - lockwait.pml (the refusal of a wait for the hotplug lock, or of an
#     offline request, by the worker whose call is up the waiter's stack):
#     a refusal only once the call was taken, every refused wait above it
#     (a spin named by its token), every wait ends, also below the floor and
#     with a spin that ends by itself; the one-empty-serve proof fails (a
#     refusal while the call is queued), and so do a refusal of any spin
#     (the code before the tokens), the word read after the call's
#     completion, the token taken from the word and the token never lowered
#     (a wait below the call refused, or the waits hung);
#   - urgentmark.pml (the urgent function's mark and the bracket around the
#     application's code): every urgent function's body runs marked, the
#     mark is clear after the outermost bracket, the urgent handler never
#     lands inside an urgent function; the mutants fail: the code before the
#     bracket (mark before count, cleared: an urgent function runs unmarked),
#     a mark cleared on the way out (the same after an inline urgent call),
#     the mark before the count (the handler inside an urgent function);
#   - each coverage witness is reached (its assertion fails), so no property
#     holds vacuously because a path of the protocol was never taken;
#   - every "// @src FILE: TEXT" line of each model still quotes its FILE.
# Prints one line per check and "N passed, N failed"; exits 1 on any unexpected result.
set -u
cd "$(dirname "$0")/.."
OUT=${1:-build/model}
JOBS=${JOBS:-$(n=$(nproc 2>/dev/null || echo 1); [ "$n" -gt 2 ] && n=2; echo "$n")}
QUICK=${QUICK:-0}
FULL=${FULL:-0}

PAN_CC=${PAN_CC:-gcc}
for tool in spin "$PAN_CC"; do
	command -v "$tool" >/dev/null || { echo "model: $tool not found (make deps installs spin)" >&2; exit 2; }
done
rm -rf "$OUT"
mkdir -p "$OUT"

pass=0 fail=0
say() { printf '%-5s %s\n' "$1" "$2"; }
ok() { say PASS "$1"; pass=$((pass + 1)); }
bad() { say FAIL "$1"; fail=$((fail + 1)); }

# --- anchors: the models' quotes of the code must still be in the code ------------
for model in wakeup.pml floor.pml lockwait.pml urgentmark.pml; do
	anchors=0 stale=0
	while IFS= read -r line; do
		file=${line%%: *}
		text=${line#*: }
		anchors=$((anchors + 1))
		if ! grep -qF -- "$text" "$file" 2>/dev/null; then
			bad "anchor: '$text' is no longer in $file: re-read the code, update model/$model"
			stale=$((stale + 1))
		fi
	done < <(sed -n 's|^[[:space:]]*// @src \([^:]*\): \(.*\)$|\1: \2|p' "model/$model")
	if [ "$anchors" = 0 ]; then
		bad "anchors: no '// @src' lines found in model/$model"
	elif [ "$stale" = 0 ]; then
		ok "anchors: all $anchors '// @src' quotes of src/ in model/$model found in the code"
	fi
done

# --- verifications ------------------------------------------------------------------
# verify NAME MODEL "SPIN -D FLAGS" "CC FLAGS" "PAN OPTIONS" EXPECT
#   EXPECT is "pass", or an extended regexp pan's report must match (and errors > 0).
# Writes OUT/NAME/result: "PASS|FAIL<tab>text".
verify() {
	local name=$1 model=$2 defs=$3 ccflags=$4 panopts=$5 expect=$6
	local d="$OUT/$name" st res
	mkdir -p "$d"
	cp model/*.pml "$d/"
	(
		cd "$d" || exit 1
		# shellcheck disable=SC2086
		spin $defs -a "$model" > spin.out 2>&1 || { echo -e "FAIL\tspin -a failed: $(head -3 spin.out)"; exit; }
		# shellcheck disable=SC2086
		"$PAN_CC" -w $ccflags -DMEMLIM=4096 -o pan pan.c > cc.out 2>&1 || { echo -e "FAIL\tgcc failed: $(head -3 cc.out)"; exit; }
		# shellcheck disable=SC2086
		timeout 600 ./pan $panopts > pan.out 2>&1
		st=$?
		local errors states trans secs mem
		errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out | tail -1)
		states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.out | tail -1)
		trans=$(sed -n 's/^ *\([0-9.e+]*\) transitions.*/\1/p' pan.out | tail -1)
		secs=$(sed -n 's/^pan: elapsed time \([0-9.e+]*\) seconds.*/\1/p' pan.out | tail -1)
		mem=$(sed -n 's/^ *\([0-9.]*\)[[:space:]]*total actual memory usage.*/\1/p' pan.out | tail -1)
		local fig="${states:-?} states, ${trans:-?} transitions, ${mem:-?} MB, ${secs:-?} s"
		if grep -qE 'out of memory|max search depth too small|error: ' pan.out || [ -z "$errors" ]; then
			echo -e "FAIL\tverifier did not complete (exit $st): $(grep -m1 -E 'out of memory|depth too small|error' pan.out)"
			exit
		fi
		if [ "$expect" = pass ]; then
			if [ "$errors" = 0 ] && [ "$st" = 0 ]; then
				echo -e "PASS\t$fig"
			else
				spin $defs -t -p -g -l "$model" > trail.txt 2>&1
				echo -e "FAIL\t$errors error(s): $(grep -m1 -E '^pan:[0-9]' pan.out); trail: $d/trail.txt"
			fi
		else
			local steps=
			# a witness's trail is replayed only if it is not the one expected
			if [ "${name#witness-}" = "$name" ] || ! grep -qE -- "$expect" pan.out; then
				spin $defs -t -p -g -l "$model" > trail.txt 2>&1
				steps=", trail of $(sed -n 's/.*trail ends after \([0-9]*\) steps.*/\1/p' trail.txt | tail -1) steps"
			fi
			if [ "$errors" -gt 0 ] && grep -qE -- "$expect" pan.out; then
				echo -e "PASS\tfound after ${states:-?} states$steps: $(grep -E '^pan:[0-9]' pan.out | tail -1 | sed 's/^pan:[0-9]*: *//')"
			elif [ "$errors" -gt 0 ]; then
				echo -e "FAIL\twrong error: $(grep -m1 -E '^pan:[0-9]' pan.out) (wanted /$expect/)"
			else
				echo -e "FAIL\tspin found no error (wanted /$expect/); $fig"
			fi
		fi
	) > "$d/result" 2>&1
}

NAMES=() LABELS=()
add() { NAMES+=("$1"); LABELS+=("$2"); shift 2; CMDS+=("$(printf '%q ' "$@")"); }
CMDS=()

SAFE_BIG="-O2 -DSAFETY"
SMALL="-O0 -DSAFETY"

# The configurations. Sender 0 queues XC_URGENT calls, the others plain ones
# (slot or queue); one worker unless PAIR. Each extension of the model has a
# configuration of its own, small enough to explore exhaustively.
M2="-DNSENDERS=2 -DNCALLS=2 -DNURGENT=1"			# urgent + slot + queue + offline/online
M1="-DNSENDERS=2 -DNCALLS=1 -DNURGENT=1"			# the same, one call each
M3="-DNSENDERS=3 -DNCALLS=1 -DNURGENT=1"			# three senders
MW="-DNSENDERS=2 -DNCALLS=2 -DNURGENT=1 -DNWORK=1 -DHOTPLUG=0"	# a work item behind urgent calls
MWH="-DNSENDERS=1 -DNCALLS=2 -DNURGENT=0 -DNWORK=2"		# work items + offline/online
MP="-DPAIR=1 -DNSENDERS=1 -DNCALLS=1 -DNURGENT=0 -DHOTPLUG=0"	# two workers waiting on each other
MF="-DFOLLOW=1 -DNSENDERS=2 -DNCALLS=1 -DNURGENT=1 -DSPURIOUS=0"	# the OS takes the CPU (once) + offline/online
MF2="-DFOLLOW=1 -DNSENDERS=1 -DNCALLS=2 -DNURGENT=0 -DNTAKE=2"	# ... twice, 1 plain sender x 2 calls
# An attached thread as CPU 0's worker, asleep in its own loop on an eventfd
MA="-DATTACHED=1 -DNSENDERS=2 -DNCALLS=1 -DNURGENT=1"		# urgent + slot + queue + offline/online (witnesses)
MA2="-DATTACHED=1 -DNSENDERS=2 -DNCALLS=2 -DNURGENT=1 -DSPURIOUS=0 -DONLINE=0"	# 2 x 2 + offline, no spurious return
MA2F="-DATTACHED=1 -DNSENDERS=2 -DNCALLS=2 -DNURGENT=1 -DSPURIOUS=0"	# ... + online (FULL)
MAL="-DATTACHED=1 -DNSENDERS=1 -DNCALLS=2 -DNURGENT=0"		# liveness: 1 plain x 2 + offline/online
MAL2="-DATTACHED=1 -DNSENDERS=2 -DNCALLS=1 -DNURGENT=1 -DHOTPLUG=0"	# liveness: 2 x 1 (1 urgent)
MAW="-DATTACHED=1 -DNSENDERS=2 -DNCALLS=1 -DNURGENT=1 -DNWORK=1 -DHOTPLUG=0"	# a work item behind urgent calls
MAWH="-DATTACHED=1 -DNSENDERS=1 -DNCALLS=2 -DNURGENT=0 -DNWORK=1"	# a work item + offline/online
MAD="-DATTACHED=1 -DDETACH=1 -DNSENDERS=2 -DNCALLS=1 -DNURGENT=1"	# the thread may detach + offline/online
# Per-sender call rings (RING, the code's default path): each plain sender calls
# through its own ring, its last call XC_WAIT (the slot, or the ring)
MR2="-DRING=1 -DNSENDERS=2 -DNCALLS=2 -DNURGENT=0 -DHOTPLUG=0"	# two rings on callq, the slot
MRB="-DRING=1 -DNSENDERS=1 -DNCALLS=4 -DNURGENT=0 -DHOTPLUG=0"	# a burst of 3 nowait calls, then a waiting one
MRU="-DRING=1 -DNSENDERS=2 -DNCALLS=2 -DNURGENT=1 -DHOTPLUG=0"	# urgent calls beside a ring
MRH="-DRING=1 -DNSENDERS=2 -DNCALLS=1 -DNURGENT=0"		# two waiting calls + offline/online
MRH2="-DRING=1 -DNSENDERS=1 -DNCALLS=2 -DNURGENT=0"		# a nowait then a waiting call + offline/online
MRH3="-DRING=1 -DNSENDERS=1 -DNCALLS=3 -DNURGENT=0"		# 2 nowait + a waiting call + offline/online
MRH4="-DRING=1 -DNSENDERS=1 -DNCALLS=4 -DNURGENT=0"		# 3 nowait + a waiting call + offline/online: a C' across a close
MRL="-DRING=1 -DNSENDERS=1 -DNCALLS=3 -DNURGENT=0 -DHOTPLUG=0"	# 2 nowait + a waiting call
MRA="-DRING=1 -DATTACHED=1 -DDETACH=1 -DNSENDERS=1 -DNCALLS=2 -DNURGENT=0"	# attached thread, detach + offline/online
MRA3="-DRING=1 -DATTACHED=1 -DNSENDERS=1 -DNCALLS=3 -DNURGENT=0 -DHOTPLUG=0"	# attached thread, 2 nowait + a waiting call
MR23="-DRING=1 -DNSENDERS=2 -DNCALLS=3 -DNURGENT=0 -DHOTPLUG=0"	# two rings, 2 nowait + a waiting call each (FULL)
# NEST (rings with PAIR): two CPUs, each worker owns a ring of 2 entries to the
# other; each call's fn makes one nested nowait call to either CPU
NB="-DRING=1 -DPAIR=1 -DNSENDERS=0 -DNURGENT=0"
MN="$NB -DNCALLS=2 -DHOTPLUG=0"			# a nowait + a waiting call each: full rings, make_room, the completion wait
MNX="$NB -DNCALLS=1 -DHOTPLUG=2 -DRWAIT=0"	# xc_exit: both drain at once, 1 nowait call each
MNH="$NB -DNCALLS=1 -DHOTPLUG=1 -DRWAIT=0"	# CPU 1 offline/online, 1 nowait call each: refusals, tombstones
MNHW="$NB -DNCALLS=1 -DHOTPLUG=1"		# ... a waiting call each
MNH2="$NB -DNCALLS=2 -DHOTPLUG=1 -DRWAIT=0"	# ... 2 nowait calls each: a full ring to a closed CPU (FULL)
MNXW="$NB -DNCALLS=1 -DHOTPLUG=2"		# xc_exit, a waiting call each (FULL)
# (a ring's third call is the first that may skip R1': the 3- and 4-call runs
# have the owner's store buffer and the membarrier in them)

# The real model: must pass. Longest first, so that two at a time finish together.
if [ "$FULL" = 1 ]; then
	add ltl-2x2 "model, 2 senders x 2 calls (1 urgent) + offline/online: LTL no_lost_wakeup" \
		wakeup.pml "$M2 -DLIVENESS" "-O2 -DCOLLAPSE" "-a -m10000 -w24" pass
	add nocycle-work "model + work item, 2 senders x 2 calls (1 urgent): no cycle at all (-DNP)" \
		wakeup.pml "$MW" "-O2 -DNP -DCOLLAPSE" "-l -m10000 -w24" pass
	add attached-2x2-online "model, attached thread, 2 senders x 2 calls (1 urgent) + offline/online, no spurious return: assertions, end states, eventfd counts" \
		wakeup.pml "$MA2F" "$SAFE_BIG -DCOLLAPSE" "-m10000 -w24" pass
	add ring-2x3 "model, rings, 2 senders x (2 nowait, waiting), both skipping R1' into their store buffers: stranded calls, FIFO, a ring on callq once, end states" \
		wakeup.pml "$MR23" "$SAFE_BIG -DCOLLAPSE" "-m10000 -w24" pass
	add nest-offline-2 "nested calls, two CPUs with rings of 2, 2 nowait calls each + CPU 1 offline/online: a full ring to a closed CPU, exactly once, no hang" \
		wakeup.pml "$MNH2" "$SAFE_BIG -DCOLLAPSE" "-m10000 -w24" pass
	add nest-exit-wait "nested calls, two CPUs with rings of 2, a waiting call each + xc_exit: exactly once, no hang" \
		wakeup.pml "$MNXW" "$SAFE_BIG -DCOLLAPSE" "-m10000 -w24" pass
fi
add nest-2 "nested calls, two CPUs with rings of 2, (nowait, waiting) each, serving in make_room and the completion wait: every call run once, none lost, no hang" \
	wakeup.pml "$MN" "$SAFE_BIG -DCOLLAPSE" "-m10000 -w24" pass
add nest-exit "nested calls, two CPUs with rings of 2, 1 nowait call each + xc_exit (both drains at once): exactly once, refused never run, no hang" \
	wakeup.pml "$MNX" "$SAFE_BIG" "-m10000 -w24" pass
add nest-offline "nested calls, two CPUs with rings of 2, 1 nowait call each + CPU 1 offline/online: refused doorbells settled at once, tombstones, no hang" \
	wakeup.pml "$MNH" "$SAFE_BIG" "-m10000 -w24" pass
add nest-offline-wait "nested calls, two CPUs with rings of 2, a waiting call each + CPU 1 offline/online: exactly once, no hang" \
	wakeup.pml "$MNHW" "$SAFE_BIG" "-m10000 -w24" pass
if [ "$QUICK" != 1 ]; then
	add safety-3x1 "model, 3 senders x 1 call (1 urgent) + offline/online: assertions, end states" \
		wakeup.pml "$M3" "$SAFE_BIG -DCOLLAPSE" "-m10000 -w24" pass
fi
add attached-2x2 "model, attached thread, 2 senders x 2 calls (1 urgent) + offline, no spurious return: assertions, end states, eventfd counts" \
	wakeup.pml "$MA2" "$SAFE_BIG" "-m10000 -w24" pass
add follow-2x1 "model + the OS taking the CPU once, 2 senders x 1 call (1 urgent) + offline/online: assertions, end states, coming back" \
	wakeup.pml "$MF" "$SAFE_BIG" "-m10000 -w24" pass
add work-2x2 "model + work item, 2 senders x 2 calls (1 urgent): urgent promptness, assertions, end states" \
	wakeup.pml "$MW" "$SAFE_BIG" "-m10000 -w24" pass
add safety-2x2 "model, 2 senders x 2 calls (1 urgent) + offline/online: assertions, end states" \
	wakeup.pml "$M2" "$SAFE_BIG" "-m10000 -w24" pass
add pair "two workers waiting on each other's calls + 1 sender: completion kicks, assertions, end states" \
	wakeup.pml "$MP" "$SAFE_BIG" "-m10000 -w24" pass
add nocycle-2x1 "model, 2 senders x 1 call (1 urgent) + offline/online: no cycle at all (-DNP)" \
	wakeup.pml "$M1" "-O2 -DNP" "-l -m10000 -w22" pass
add ltl-2x1 "model, 2 senders x 1 call (1 urgent) + offline/online: LTL no_lost_wakeup" \
	wakeup.pml "$M1 -DLIVENESS" "-O2" "-a -m10000 -w22" pass
add work-hotplug "model + 2 work items, 1 sender x 2 calls + offline/online: assertions, end states" \
	wakeup.pml "$MWH" "$SAFE_BIG" "-m10000 -w22" pass
add follow-1x2 "model + the OS taking the CPU twice, 1 sender x 2 calls + offline/online: assertions, end states, coming back" \
	wakeup.pml "$MF2" "$SAFE_BIG" "-m10000 -w23" pass
add attached-work-hotplug "model, attached thread + work item, 1 sender x 2 calls + offline/online: assertions, end states, eventfd counts" \
	wakeup.pml "$MAWH" "$SAFE_BIG" "-m10000 -w24" pass
add attached-detach "model, attached thread that may detach, 2 senders x 1 call (1 urgent) + offline/online: assertions, end states, no write to a closed eventfd" \
	wakeup.pml "$MAD" "$SAFE_BIG" "-m10000 -w24" pass
add attached-work "model, attached thread + work item, 2 senders x 1 call (1 urgent): urgent promptness, assertions, end states" \
	wakeup.pml "$MAW" "$SAFE_BIG" "-m10000 -w23" pass
# the rings: no call stranded, exactly once, FIFO per sender
add ring-hotplug-2x1 "model, rings, 2 senders x 1 waiting call + offline/online: stranded calls, FIFO, assertions, end states" \
	wakeup.pml "$MRH" "$SAFE_BIG" "-m10000 -w24" pass
add ring-attached-detach "model, rings, attached thread that may detach, 1 sender x (nowait, waiting) + offline/online: stranded calls, FIFO, assertions, end states" \
	wakeup.pml "$MRA" "$SAFE_BIG" "-m10000 -w24" pass
add ring-2x2 "model, rings, 2 senders x (nowait, waiting): stranded calls, FIFO, a ring on callq once, assertions, end states" \
	wakeup.pml "$MR2" "$SAFE_BIG" "-m10000 -w22" pass
add ring-urgent "model, rings, 1 urgent sender + 1 ring sender x (nowait, waiting): urgent promptness, stranded calls, FIFO, end states" \
	wakeup.pml "$MRU" "$SAFE_BIG" "-m10000 -w22" pass
# (the detach run covers $MA too: its thread may never detach; witnesses run in $MA)
# small runs: -O0, whose compile takes seconds less than the run gains
add attached-nocycle-1x2 "model, attached thread, 1 plain sender x 2 calls + offline/online: no cycle at all (-DNP): the loop never spins" \
	wakeup.pml "$MAL" "-O0 -DNP" "-l -m10000 -w22" pass
add attached-ltl-1x2 "model, attached thread, 1 plain sender x 2 calls + offline/online: LTL no_lost_wakeup" \
	wakeup.pml "$MAL -DLIVENESS" "-O0" "-a -m10000 -w22" pass
add attached-nocycle-2x1 "model, attached thread, 2 senders x 1 call (1 urgent): no cycle at all (-DNP)" \
	wakeup.pml "$MAL2" "-O0 -DNP" "-l -m10000 -w20" pass
add attached-ltl-2x1 "model, attached thread, 2 senders x 1 call (1 urgent): LTL no_lost_wakeup" \
	wakeup.pml "$MAL2 -DLIVENESS" "-O0" "-a -m10000 -w20" pass
add ring-ltl-1x2-hotplug "model, rings, 1 sender x (nowait, waiting) + offline/online: LTL no_lost_wakeup (a published ring call is taken)" \
	wakeup.pml "$MRH2 -DLIVENESS" "-O0" "-a -m10000 -w22" pass
add ring-nocycle-1x2-hotplug "model, rings, 1 sender x (nowait, waiting) + offline/online: no cycle at all (-DNP)" \
	wakeup.pml "$MRH2" "-O0 -DNP" "-l -m10000 -w22" pass
add ring-hotplug-1x2 "model, rings, 1 sender x (nowait, waiting) + offline/online: a refused doorbell, stranded calls, FIFO, end states" \
	wakeup.pml "$MRH2" "$SMALL" "-m10000 -w22" pass
add ring-attached-1x3 "model, rings, attached thread, 1 sender x (2 nowait, waiting): stranded calls, FIFO, end states" \
	wakeup.pml "$MRA3" "$SMALL" "-m10000 -w20" pass
# the finding's configuration (docs/model.md, Findings): a call was stranded
# there before the close ran the rings dropped at a lost U3 CAS
add ring-hotplug-1x3 "model, rings, 1 sender x (2 nowait, waiting) + offline/online: no call stranded by a refused doorbell (the finding), FIFO, end states" \
	wakeup.pml "$MRH3" "$SMALL" "-m10000 -w20" pass
add ring-ltl-1x3-hotplug "model, rings, 1 sender x (2 nowait, waiting) + offline/online: LTL no_lost_wakeup (the finding's configuration)" \
	wakeup.pml "$MRH3 -DLIVENESS" "-O0" "-a -m10000 -w22" pass
add ring-burst "model, rings, 1 sender x (3 nowait, waiting): one doorbell per burst, stranded calls, FIFO, end states" \
	wakeup.pml "$MRB" "$SMALL" "-m10000 -w20" pass
add ring-hotplug-1x4 "model, rings, 1 sender x (3 nowait, waiting) + offline/online: a call that cleared its mark (C') across a close, stranded calls, FIFO, end states" \
	wakeup.pml "$MRH4" "$SAFE_BIG" "-m10000 -w22" pass
# the slow verdict as a moment: a ring's mark costs two membarriers at most after it
add ring-verdict-1x3 "model, rings, the slow verdict at any load of the flag or membarrier, 1 sender x (2 nowait, waiting): a mark costs two membarriers at most after it, stranded calls, FIFO, end states" \
	wakeup.pml "$MRL -DVERDICT=1" "$SMALL" "-m10000 -w20" pass
add ring-verdict-burst "model, rings, the slow verdict, 1 sender x (3 nowait, waiting): a mark costs two membarriers at most after it, stranded calls, FIFO, end states" \
	wakeup.pml "$MRB -DVERDICT=1" "$SMALL" "-m10000 -w20" pass
add ring-verdict-hotplug-1x3 "model, rings, the slow verdict, 1 sender x (2 nowait, waiting) + offline/online: a mark costs two membarriers at most after it (the close's too), stranded calls, FIFO, end states" \
	wakeup.pml "$MRH3 -DVERDICT=1" "$SAFE_BIG" "-m10000 -w22" pass
add ring-ltl-1x3 "model, rings, 1 sender x (2 nowait, waiting): LTL no_lost_wakeup" \
	wakeup.pml "$MRL -DLIVENESS" "-O0" "-a -m10000 -w20" pass
add ring-nocycle-1x3 "model, rings, 1 sender x (2 nowait, waiting): no cycle at all (-DNP)" \
	wakeup.pml "$MRL" "-O0 -DNP" "-l -m10000 -w20" pass

# The mutants: spin must find the bug each one puts back.
LOST_CALL='assertion violated +!\(\(waiter\[0\]&&\(+callq\[0\]\.nodes!=0\)'
LOST_CTL='assertion violated +!\(\(waiter\[0\]&&\(ctl\[0\]!=0\)\)\)'
LOST_DONE='assertion violated +!\(\(\(waiter\[0\]&&waiting\[0\]\)&&sync_done\[0\]\)\)|assertion violated +!\(\(\(waiter\[1\]&&waiting\[1\]\)&&sync_done\[1\]\)\)'
DEFERRED='assertion violated +!\(\(?(1&&)?deferred\[me\]\)'
UNSIGNALLED='assertion violated \(\( !\(\(urgentq\[me\]\.nodes!=0\)\)\|\|\(sig_pending\[me\]>0\)\)\|\|\(s2_due\[me\]>0\)\)'
ACCEPT='acceptance cycle'
WIPED='assertion violated \(callq\[(0|me)\]\.nodes==0\)'
FDCLOSED='assertion violated \(fd_writes==fd_claims\)'
NONPROGRESS='non-progress cycle'
STRANDED='assertion violated +!\(\(waiter\[0\]&&\(+rtail\[0\]<=0\)'
TWICE='assertion violated \(\(callq\[0\]\.nodes&\(1<<\(id-0\)\)\)==0\)'
OVERTAKEN='assertion violated \( !\(1\)\|\|\(\(\(accepted& ~\(ran\)\)&'
NESTSTUCK='assertion violated \( !\(stuck\[0\]\)&& !\(stuck\[1\]\)\)'
NESTLOST='assertion violated \(ran==accepted\)'
NESTOVER='assertion violated \(rent\[e\]==0\)|assertion violated \(\(\(\(h\+4\)-t\)%4\)<=2\)'
add mutant-norecheck "mutant norecheck (no W2): lost call wakeup found" \
	wakeup-mutant-norecheck.pml "-DNSENDERS=2 -DNCALLS=1 -DHOTPLUG=0" "$SMALL -DREACH" "-i -w18" "$LOST_CALL"
add mutant-norecheck-ltl "mutant norecheck (no W2): LTL violation found" \
	wakeup-mutant-norecheck.pml "-DNSENDERS=2 -DNCALLS=1 -DLIVENESS" "-O0" "-a -w18" "$ACCEPT"
add mutant-loadfirst "mutant loadfirst (S2 before S1): lost call wakeup found" \
	wakeup-mutant-loadfirst.pml "-DNSENDERS=2 -DNCALLS=1 -DHOTPLUG=0" "$SMALL -DREACH" "-i -w18" "$LOST_CALL"
add mutant-loadfirst-ltl "mutant loadfirst (S2 before S1): LTL violation found" \
	wakeup-mutant-loadfirst.pml "-DNSENDERS=2 -DNCALLS=1 -DLIVENESS" "-O0" "-a -w18" "$ACCEPT"
add mutant-noctlcheck "mutant noctlcheck (W2 skips ctl): lost offline wakeup found" \
	wakeup-mutant-noctlcheck.pml "-DNSENDERS=1 -DNCALLS=1" "$SMALL -DREACH" "-i -w18" "$LOST_CTL"
add mutant-noctlcheck-ltl "mutant noctlcheck (W2 skips ctl): LTL violation found" \
	wakeup-mutant-noctlcheck.pml "-DNSENDERS=1 -DNCALLS=1 -DLIVENESS" "-O0" "-a -w18" "$ACCEPT"
add mutant-nocatchup-slot "mutant nocatchup (before the fix), urgent call deferred behind a slot call: found before a work item" \
	wakeup-mutant-nocatchup.pml "-DNSENDERS=2 -DNCALLS=1 -DNURGENT=1 -DNWORK=1 -DHOTPLUG=0" "$SMALL -DREACH" "-i -w20" "$DEFERRED"
add mutant-nocatchup-urgent "mutant nocatchup (before the fix), urgent call deferred behind an urgent call: found before a work item" \
	wakeup-mutant-nocatchup.pml "-DNSENDERS=1 -DNCALLS=2 -DNURGENT=1 -DNWORK=1 -DHOTPLUG=0" "$SMALL -DREACH" "-i -w20" "$DEFERRED"
add mutant-nocatchup-calls "mutant nocatchup (before the fix), no work items: deferred urgent call overtaken by a plain call found" \
	wakeup-mutant-nocatchup.pml "-DNSENDERS=2 -DNCALLS=2 -DNURGENT=1 -DHOTPLUG=0" "$SMALL -DREACH" "-i -w20" "$DEFERRED"
add mutant-relaxedrecheck "mutant relaxedrecheck (store buffering on RUNNING): unsignalled urgent call found before a work item" \
	wakeup-mutant-relaxedrecheck.pml "-DNSENDERS=1 -DNCALLS=1 -DNURGENT=1 -DNWORK=1 -DHOTPLUG=0" "$SMALL -DREACH" "-i -w20" "$UNSIGNALLED"
add mutant-prefix "the code before the fix (nocatchup + relaxedrecheck): urgent call left behind a work item found" \
	wakeup-mutant-nocatchup.pml "$MW -DMUTANT_RELAXEDRECHECK" "$SMALL -DREACH" "-i -w20" "$DEFERRED|$UNSIGNALLED"
add mutant-noreopenlock "mutant noreopenlock (the worker reopens a CPU the OS gave back without the hotplug lock): call wiped by the second open found" \
	wakeup-mutant-noreopenlock.pml "-DFOLLOW=1 -DNSENDERS=1 -DNCALLS=1 -DNURGENT=0" "$SMALL -DREACH" "-i -w20" "$WIPED"
add mutant-noaskwake "mutant noaskwake (no XC_SYNC_SLEEPING): lost completion kick found" \
	wakeup-mutant-noaskwake.pml "-DPAIR=1 -DNSENDERS=0 -DHOTPLUG=0" "$SMALL -DREACH" "-i -w20" "$LOST_DONE"
add mutant-fdnorecheck "mutant fdnorecheck (attached thread, no W2): lost call wakeup found" \
	wakeup-mutant-fdnorecheck.pml "-DATTACHED=1 -DNSENDERS=2 -DNCALLS=1 -DHOTPLUG=0" "$SMALL -DREACH" "-i -w18" "$LOST_CALL"
add mutant-fdnorecheck-ltl "mutant fdnorecheck (attached thread, no W2): LTL violation found" \
	wakeup-mutant-fdnorecheck.pml "-DATTACHED=1 -DNSENDERS=2 -DNCALLS=1 -DLIVENESS" "-O0" "-a -w18" "$ACCEPT"
add mutant-fdnocount "mutant fdnocount (a claimed eventfd kick not counted), detach: eventfd closed with a write to come found" \
	wakeup-mutant-fdnocount.pml "-DATTACHED=1 -DDETACH=1 -DNSENDERS=1 -DNCALLS=1 -DHOTPLUG=0" "$SMALL -DREACH" "-i -w18" "$FDCLOSED"
add mutant-fdnocount-spin "mutant fdnocount (a claimed eventfd kick not counted): the eventfd stays readable, the loop spins (-DNP)" \
	wakeup-mutant-fdnocount.pml "-DATTACHED=1 -DNSENDERS=1 -DNCALLS=1 -DHOTPLUG=0" "-O0 -DNP" "-l -w18" "$NONPROGRESS"
add mutant-unlinknorecheck "mutant unlinknorecheck (rings, no U3): a ring call stranded, the worker asleep" \
	wakeup-mutant-unlinknorecheck.pml "-DRING=1 -DNSENDERS=1 -DNCALLS=2 -DNURGENT=0 -DHOTPLUG=0" "$SMALL -DREACH" "-i -w18" "$STRANDED"
add mutant-unlinknorecheck-ltl "mutant unlinknorecheck (rings, no U3): LTL violation found" \
	wakeup-mutant-unlinknorecheck.pml "-DRING=1 -DNSENDERS=1 -DNCALLS=2 -DNURGENT=0 -DHOTPLUG=0 -DLIVENESS" "-O0" "-a -w18" "$ACCEPT"
add mutant-nonemptyskip "mutant nonemptyskip (rings, no doorbell on a non-empty ring): a ring call stranded, the worker asleep" \
	wakeup-mutant-nonemptyskip.pml "-DRING=1 -DNSENDERS=1 -DNCALLS=2 -DNURGENT=0 -DHOTPLUG=0" "$SMALL -DREACH" "-i -w18" "$STRANDED"
add mutant-nonemptyskip-ltl "mutant nonemptyskip (rings, no doorbell on a non-empty ring): LTL violation found" \
	wakeup-mutant-nonemptyskip.pml "-DRING=1 -DNSENDERS=1 -DNCALLS=2 -DNURGENT=0 -DHOTPLUG=0 -DLIVENESS" "-O0" "-a -w18" "$ACCEPT"
add mutant-relinkstore "mutant relinkstore (rings, U3 re-links by a plain store): a ring pushed on callq twice found" \
	wakeup-mutant-relinkstore.pml "-DRING=1 -DNSENDERS=1 -DNCALLS=3 -DNURGENT=0 -DHOTPLUG=0" "$SMALL -DREACH" "-i -w18" "$TWICE"
add mutant-noslotorder "mutant noslotorder (rings, a waiting call takes the slot without slot_in_order): a call run before its sender's earlier call found" \
	wakeup-mutant-noslotorder.pml "-DRING=1 -DNSENDERS=1 -DNCALLS=2 -DNURGENT=0 -DHOTPLUG=0" "$SMALL -DREACH" "-i -w18" "$OVERTAKEN"

add mutant-closenodropped "mutant closenodropped (rings, the close leaves the rings dropped at a lost U3 CAS: the code before the fix), 1 sender x (2 nowait, waiting) + offline/online: a ring call stranded by a refused doorbell found" \
	wakeup-mutant-closenodropped.pml "$MRH3" "$SMALL -DREACH" "-i -m10000 -w20" "$STRANDED"
add mutant-droppedidle "mutant droppedidle (rings, the close stores IDLE in a dropped ring), 1 sender x (2 nowait, waiting) + offline/online: a ring pushed on callq twice found" \
	wakeup-mutant-droppedidle.pml "$MRH3" "$SMALL -DREACH" "-i -m10000 -w20" "$TWICE"
# NEST: the bugs of issue 36 put back
add mutant-refusedwait "mutant refusedwait (NEST, ring_refused waits for the target's close to end: bug 1), xc_exit with nested calls: two drains wait for each other for ever" \
	wakeup-mutant-refusedwait.pml "$MNX" "$SAFE_BIG" "-m10000 -w22" "$NESTSTUCK"
add mutant-makeroomhead "mutant makeroomhead (NEST, make_room keeps the head read on entry while it serves: bug 3): a nested call through the same ring overwritten, or head behind tail" \
	wakeup-mutant-makeroomhead.pml "$MN" "$SAFE_BIG" "-m10000 -w22" "$NESTOVER"
add mutant-refusedrewind "mutant refusedrewind (NEST, ring_refused keeps the ring LINKED while it waits, then rewinds head: bug 4), CPU 1 offline: a nested call that rode the doorbell is lost" \
	wakeup-mutant-refusedrewind.pml "$NB -DNCALLS=1 -DHOTPLUG=1 -DONLINE=0 -DRWAIT=0" "$SAFE_BIG" "-m10000 -w22" "$NESTLOST"
# owners without a fence: a call that skipped R1', its head store still buffered
add mutant-nomembarrier "mutant nomembarrier (rings, no membarrier at U2'), 1 sender x (2 nowait, waiting): a ring call stranded in its owner's store buffer, the worker asleep" \
	wakeup-mutant-nomembarrier.pml "$MRL" "$SMALL -DREACH" "-i -w18" "$STRANDED"
add mutant-nomembarrier-ltl "mutant nomembarrier (rings, no membarrier at U2'): LTL violation found" \
	wakeup-mutant-nomembarrier.pml "$MRL -DLIVENESS" "-O0" "-a -w18" "$ACCEPT"
add mutant-nof1 "mutant nof1 (rings, the owner skips R1' without storing F1: unfenced stays 0), 1 sender x (2 nowait, waiting): a ring call stranded, the worker asleep" \
	wakeup-mutant-nof1.pml "$MRL" "$SMALL -DREACH" "-i -w18" "$STRANDED"
add mutant-busysleep "mutant busysleep (rings, the worker sleeps without the membarrier when another's is under way), 1 sender x (2 nowait, waiting): a ring call stranded, the worker asleep" \
	wakeup-mutant-busysleep.pml "$MRL" "$SMALL -DREACH" "-i -w18" "$STRANDED"
add mutant-asymflag "mutant asymflag (rings, U2' decides by xc_ring_asym, not by each ring's unfenced mark), 1 sender x (2 nowait, waiting), the flag true, then false: a ring call stranded, the worker asleep" \
	wakeup-mutant-asymflag.pml "$MRL" "$SMALL -DREACH" "-i -w18" "$STRANDED"
add mutant-unmarkrelaxed "mutant unmarkrelaxed (rings, an owner that reads the flag false clears its mark with a relaxed store, then fences), 1 sender x (3 nowait, waiting) + offline/online: the close pays no membarrier, a ring call stranded, the worker asleep" \
	wakeup-mutant-unmarkrelaxed.pml "$MRH4" "$SMALL -DREACH" "-i -m10000 -w20" "$STRANDED"
add mutant-markkept "mutant markkept (rings, the code before C': a marked ring's calls skip R1' whatever the flag), the slow verdict, 1 sender x (2 nowait, waiting): a third membarrier for one mark after the verdict" \
	wakeup-mutant-markkept.pml "$MRL -DVERDICT=1" "$SMALL -DREACH" "-i -m10000 -w20" 'assertion violated \(latepaid\[0\]<=2\)'

# The serve floor (model/floor.pml): A's waits below its floor, B's call
# sending A a nowait and a waiting call through one ring, T's waiting call
# behind a burst. Must pass; each mutant fails with its bug.
FSAFE="-O2 -DSAFETY -DCOLLAPSE"
add floor "serve floor: the recursion A -> B -> A below A's floor (B's nowait then waiting call in one ring) + T's waiting call behind a nowait one: every wait ends, one level past the floor at most, refused never run, FIFO per ring" \
	floor.pml "" "$FSAFE" "-m10000 -w22" pass
add floor-retract "serve floor + T retracting its entry as a refused doorbell's owner: exactly one exchange wins, a retracted record untouched" \
	floor.pml "-DRETRACT=1" "$FSAFE" "-m10000 -w22" pass
add floor-full "serve floor, rings of one entry: a put into a full ring to the deep worker refused (-ELOOP), every wait ends, one level past the floor at most, refused never run, FIFO per ring" \
	floor.pml "-DRSIZE=1" "$FSAFE" "-m10000 -w22" pass
add floor-full-retract "serve floor, rings of one entry + T retracting its entry: as above, and exactly one exchange wins" \
	floor.pml "-DRSIZE=1 -DRETRACT=1" "$FSAFE" "-m10000 -w22" pass
FHANG='assertion violated \(waits==0\)'
add mutant-floor-norefuse "mutant floor norefuse (below the floor nothing refused: the code before 7160e0c): A and B wait for each other for ever" \
	floor-mutant-norefuse.pml "" "$SMALL" "-m10000 -w18" "$FHANG"
add mutant-floor-frontonly "mutant floor frontonly (only a waiting entry at a ring's front refused): the hang behind a nowait entry" \
	floor-mutant-frontonly.pml "" "$SMALL" "-m10000 -w18" "$FHANG"
add mutant-floor-runfront "mutant floor runfront (below the floor the rings run): the nest grows past the floor's one level" \
	floor-mutant-runfront.pml "" "$SMALL" "-m10000 -w18" 'assertion violated \(\(cpu!=0\)\|\|\(lvl<=\(1\+1\)\)\)'
add mutant-floor-plainrefuse "mutant floor plainrefuse (the refusal a store after a load, no exchange), RETRACT: an entry both refused and retracted" \
	floor-mutant-plainrefuse.pml "-DRETRACT=1" "$SMALL" "-m10000 -w20" 'assertion violated +!\(refused\[id\]\)|assertion violated +!\(dead\[i\]\)|assertion violated \(\(!\(ran\[i\]\)&& !\(retracted\[i\]\)\)\)'
add mutant-floor-roomwaits "mutant floor roomwaits (rings of one entry; a put into a full ring to the deep worker waits for room): A and B wait for each other for ever" \
	floor-mutant-roomwaits.pml "-DRSIZE=1" "$SMALL" "-m10000 -w18" "$FHANG"

# The lock-wait refusal (model/lockwait.pml): X waits for its call C to Y;
# Y waits for the hotplug lock (held by H, which takes X offline) or for an
# offline of X it requested, serving its queue. Must pass; the one-serve
# proof fails, and so does each way of refusing a wait that is not above C.
add lockwait "lock-wait refusal: X waits for C on Y, Y waits for the lock (work item, N's and C's functions) while H takes X offline: refusals only with C taken, each refused spin above C, every wait ends" \
	lockwait.pml "" "$SMALL" "-m10000 -w20" pass
add lockwait-offline "lock-wait refusal: Y requests X's offline and waits for it (work item or C's function): the request refused only with C up Y's stack" \
	lockwait.pml "-DOFFLINE=1" "$SMALL" "-m10000 -w20" pass
add lockwait-floor "lock-wait refusal below Y's floor: C refused there with -ELOOP (a serve that did something), no wait refused" \
	lockwait.pml "-DFLOOR=1" "$SMALL" "-m10000 -w20" pass
add lockwait-floor-up "lock-wait refusal: C's own wait below Y's floor, a nowait call left queued (empty serves with entries): the proof holds" \
	lockwait.pml "-DFLOOR=2" "$SMALL" "-m10000 -w20" pass
add lockwait-giveup "lock-wait refusal, one of Y's spins ending by itself at any pass (-ENXIO, -EDEADLK for its own CPU): each refused spin above C, every wait ends" \
	lockwait.pml "-DGIVEUP=1" "$SMALL" "-m10000 -w22" pass
LQUEUED='assertion violated \(c_up&&above\[etok\]\)'
LBELOW='assertion violated \(c_up&&above\[\((lock_wait|word)/4\)\]\)'
LHANG='assertion violated \(\(\(done\[0\]'
add mutant-lockwait-oneempty "mutant lockwait oneempty (the proof with one empty serve): Y's wait for the lock refused while C is still queued" \
	lockwait-mutant-oneempty.pml "" "$SMALL" "-m10000 -w20" "$LQUEUED"
add mutant-lockwait-oneempty-offline "mutant lockwait oneempty (the proof with one empty serve), Y requesting X's offline: the request refused while C is still queued" \
	lockwait-mutant-oneempty.pml "-DOFFLINE=1" "$SMALL" "-m10000 -w20" "$LQUEUED"
add mutant-lockwait-notoken "mutant lockwait notoken (refuse_lock a CAS of any SPIN: the code before the tokens): the wait below C, put back by C's refused wait, refused" \
	lockwait-mutant-notoken.pml "" "$SMALL" "-m10000 -w20" "$LBELOW"
add mutant-lockwait-lateword "mutant lockwait lateword (lock_wait read after the call was found not done): a wait begun after C completed refused" \
	lockwait-mutant-lateword.pml "" "$SMALL" "-m10000 -w20" "$LBELOW"
add mutant-lockwait-nocarry "mutant lockwait nocarry (the proof's token from the word read, not from served_empty): the wait below C refused" \
	lockwait-mutant-nocarry.pml "" "$SMALL" "-m10000 -w20" "$LBELOW"
add mutant-lockwait-nolower "mutant lockwait nolower (the first proof's token kept): C's own wait, below a served call's refused one, never refused: the waits hang" \
	lockwait-mutant-nolower.pml "" "$SMALL" "-m10000 -w20" "$LHANG"

# The urgent mark and the bracket (model/urgentmark.pml): must pass; each
# mutant fails with its bug.
UNMARKED='assertion violated \(\(live==0\)\|\|mark\)'
add urgentmark "urgent mark: brackets nested 3 deep (calls, urgent calls, work items, the flat slot run, inline calls) + 2 urgent signals: every urgent body marked, clear after the outermost, the handler never inside an urgent function" \
	urgentmark.pml "" "$SMALL" "-m10000 -w20" pass
add mutant-urgentmark-markclear "mutant urgentmark markclear (the code before the bracket: mark before count, cleared on the way out), no inline calls: the handler lands between the two, the interrupted urgent function runs unmarked" \
	urgentmark-mutant-markclear.pml "-DINLINE=0 -DP3=0" "$SMALL" "-m10000 -w18" "$UNMARKED"
add mutant-urgentmark-clearexit "mutant urgentmark clearexit (count, then mark, but cleared on the way out): an urgent function goes on unmarked after an inline urgent call" \
	urgentmark-mutant-clearexit.pml "" "$SMALL" "-m10000 -w18" "$UNMARKED"
add mutant-urgentmark-markfirst "mutant urgentmark markfirst (the mark before the count, put back on the way out): the handler lands inside an urgent function" \
	urgentmark-mutant-markfirst.pml "" "$SMALL" "-m10000 -w18" 'assertion violated \( !\(1\)\|\|\(mark==0\)\)'

# Coverage witnesses: every interesting step of the protocol is reachable,
# each in the configuration that has it.
WIT=(
	""
	"sender rides free (reads WAKING/WOKENUP)"
	"sender elides the wake (reads RUNNING/POLLING)"
	"futex_wake dequeues a worker blocked in futex_wait"
	"S3 CAS fails and the sender decides again"
	"spurious futex wakeup"
	"futex_wait returns at once (word no longer SLEEPING)"
	"push refused by a closed queue (-ENXIO)"
	"W2 re-check sees a hotplug request"
	"W2 re-check sees a queued call"
	"offline drain runs queued calls"
	"CAS WAKING->WOKENUP fails (worker moved on)"
	"push coalesced (queue already non-empty)"
	"urgent handler finds the urgent queue closed (worker offline)"
	"W2 re-check sees a queued urgent call"
	"urgent sender reads RUNNING and signals"
	"the worker runs a slot call"
	"slot publication refused by a closed slot (the call goes to the queue)"
	"W2 re-check sees a slot call"
	"offline drain runs a published slot call"
	"urgent handler defers: it came inside a call's fn, urgent calls queued"
	"xc_call_returned after a slot call runs a deferred urgent call"
	"xc_call_returned after a queued call runs a deferred urgent call"
	"xc_run_urgent's loop runs an urgent call deferred during an urgent call in task context"
	"a work item starts"
	"urgent handler runs urgent calls in the middle of a work item"
	"the idle loop leaves idle for a queued work item"
	"a completer kicks a waiting worker (xc_sync_wake -> xc_kick)"
	"a completion kick's futex_wake dequeues a worker asleep in its wait"
	"a waiting worker runs an incoming call while it waits"
	"W2 re-check inside a wait sees the completion done"
	"sync_ask_wake finds the call done: the waiter never sleeps"
	"W2 re-check sees a queued work item"
	"the OS took the CPU: cpu_taken's drain runs queued calls (displaced)"
	"the worker reopens its CPU itself (taken_cpu_reopen: xc_cpu_open)"
	"xc_cpu_offline while the OS has the CPU (user_offline, no request)"
	"a worker parked by cpu_taken completes an offline request"
	"the sleep limit ends a sleep on a taken CPU"
	"xc_cpu_online refused (-ENXIO) while the OS has the CPU"
	"taken_cpu_reopen finds user_offline: the worker stays parked"
	"taken_cpu_reopen's trylock fails (a requester holds the lock)"
	"W2 re-check sees the thread moved (os_suspect)"
	"the OS takes the CPU of a worker parked by the user"
	"the worker runs with c->taken stale (xc_cpu_online released it, the OS gave the CPU back)"
	"a sender writes the eventfd of the attached thread asleep (kick_fd)"
	"W2 of the attached thread finds something after a sender claimed the kick (its exchange reads WAKING/WOKENUP)"
	"fd_settle reads the eventfd before the claimed kick's write is counted (fd_kicks_done < fd_kicks_seen)"
	"the attached thread's wait returns at once: the counter > 0 before any kick of this sleep (a leftover write)"
	"detach's xc_fd_quiesce waits for a write in flight"
	"a kick to the attached thread after xc_cpu_offline and xc_cpu_online (it slept on offline, no park)"
	"detach's trylock loop serves an offline request (the requester holds the hotplug lock)"
	"the loop's own read (io_uring) takes the eventfd's counter in its wait"
	"a ring doorbell finds the ring LINKED: the call rides, no CAS, no push (R2)"
	"a ring doorbell's CAS IDLE->LINKED loses to the worker's re-link (U3)"
	"U3 keeps a ring: calls left, its CAS IDLE->LINKED won"
	"U3 finds calls left but loses its CAS: the owner linked the ring and pushes it"
	"U3 finds a held ring empty: the ring is let go (unlinked)"
	"W2 sees a held ring with calls (xc_rings_pending): a ring U3 kept"
	"the idle poll sees a held ring's new call, with no doorbell"
	"the offline close runs a ring's calls (xc_rings_close)"
	"a doorbell's push is refused by the closed callq, and the close had taken the entry: 0, it ran"
	"a doorbell's push is refused by the closed callq, and the entry is taken back: -ENXIO"
	"a waiting call takes the slot after its sender's ring calls (slot_in_order: all taken)"
	"a waiting call goes through the ring: its sender's earlier calls are not all taken"
	"a ring call published behind an untaken one (a burst)"
	"a refused doorbell's exchange reads TAKEN: the close runs the entry (0)"
	"a ring doorbell's kick finds the worker SLEEPING"
	"a ring doorbell's push finds another ring on callq (coalesced)"
	"the offline close runs the calls of a ring dropped at a lost U3 CAS (its owner's push to come)"
	"the worker takes from callq a ring it dropped at a lost U3 CAS (the owner's push landed)"
	"U2' finds an unfenced ring and the membarrier makes an owner's buffered head store visible"
	"U2' finds another worker's membarrier under way: every held ring re-linked, the worker does not sleep"
	"a call that skipped R1' rides on LINKED with its head store still in the owner's store buffer"
	"the offline close's membarrier (U2', waiting its turn) makes an owner's buffered head store visible"
	"a reopened CPU's ring_run steps over a tombstone a refused owner left"
	"the close's exchange reads RETRACTED: the tombstone is skipped"
	"(NEST) the completion wait's serve runs a call"
	"(NEST) an ordinary run steps over a tombstone"
	"(NEST) a function run by a close makes a nested call"
	"(NEST) a ring call finds its ring full"
	"(NEST) make_room finds the target's callq closed: -ENXIO"
	"(NEST) make_room finds its full ring IDLE and rings its doorbell"
	"(NEST) make_room serves while a served function's nested call is in progress below it"
	"(NEST) a ring call rides on LINKED"
	"(NEST) a refused owner reads tail past its entry: it ran (0)"
	"(NEST) a refused owner's exchange reads TAKEN: the close runs it (0)"
	"(NEST) the close runs the ring dropped at a lost U3 CAS"
	"(NEST) the close's exchange reads RETRACTED: the tombstone is skipped"
	"a fenced call reads xc_ring_asym false and rides on LINKED: no F1, the next call fences too"
	"U2' pays a second membarrier for one mark of unfenced (U3 kept the ring in between)"
	"a doorbell's C clears a mark the worker let its ring go with (before the worker holds the ring again)"
	"a marked ring's call reads xc_ring_asym false: it clears its mark (C') and fences"
	"(VERDICT) after the slow verdict, U2' pays a membarrier for a ring's mark"
	"(VERDICT) ... a second one for the same ring's mark (the bound of two is reached)"
)
NWIT=$(( ${#WIT[@]} - 1 ))
for n in $(seq 1 "$NWIT"); do
	case $n in
	2[0-6]|32) cfg=$MW ;;
	2[7-9]|3[01]) cfg=$MP ;;
	3[3-9]|4[0-3]) cfg="-DFOLLOW=1 -DNSENDERS=1 -DNCALLS=2 -DNURGENT=0" ;;
	48|50) cfg=$MAD ;;
	4[4-9]|5[01]) cfg=$MA ;;
	59|6[01]) cfg=$MRH2 ;;
	65|68|73|74|75) cfg=$MRH3 ;;
	76|79|8[12]) cfg=$MN ;;
	80) cfg=$MNH2 ;;
	7[78]|8[3-7]) cfg=$MNH ;;
	67) cfg=$MR2 ;;
	5[2-8]|6[2346]|69|7[0-2]|8[89]|9[01]) cfg=$MRL ;;
	9[23]) cfg="$MRL -DVERDICT=1" ;;
	*) cfg=$M2 ;;
	esac
	add "witness-$n" "witness $n reached: ${WIT[$n]}" \
		wakeup.pml "$cfg -DCOVER=$n" "$SMALL" "-w20" "assertion violated \\($n!=$n\\)"
done

# ... and the small models'
FWIT=(
	""
	"below the floor a waiting entry behind another entry is refused (-ELOOP)"
	"below the floor another thread's waiting call behind its burst is refused (eager)"
	"B's wait ends with its call refused (-ELOOP): the nest unwinds"
	"once the nest unwinds, A runs the nowait call that stood before the refused one"
	"an ordinary run steps over a refused entry (tombstone)"
	"T's waiting call runs (A above its floor then)"
	"(RETRACT) the refusal's exchange reads RETRACTED: the owner took it back first"
	"(RETRACT) the owner's exchange reads REFUSED: it waits for the completion (-ELOOP)"
	"(RETRACT) an ordinary run steps over a retracted entry"
	"(RSIZE 1) B's put into its full ring to the deep worker refused (-ELOOP): no call made"
	"(RSIZE 1) T's put into its full ring to the deep worker refused (-ELOOP)"
)
for n in $(seq 1 $(( ${#FWIT[@]} - 1 ))); do
	case $n in
	[789]) cfg="-DRETRACT=1" ;;
	1[01]) cfg="-DRSIZE=1" ;;
	*) cfg= ;;
	esac
	add "witness-floor-$n" "floor witness $n reached: ${FWIT[$n]}" \
		floor.pml "$cfg -DCOVER=$n" "$SMALL" "-m10000 -w20" "assertion violated \\($n!=$n\\)"
done
LWIT=(
	""
	"two empty serves since the look began: the lock's waiter refused (proven)"
	"a proven look refuses a later wait for the lock at once"
	"two empty serves: the offline request refused (-EDEADLK)"
	"X's call refused below Y's floor (-ELOOP): X's wait done, nothing refused"
	"X's task loop serves the offline request once its wait is done"
	"C runs inside a serve of a wait (for the lock, or an offline)"
	"a serve below the floor refuses C"
	"a serve below the floor that refused nothing, entries left: counted empty"
	"Y's wait for the lock takes it (the holder let it go)"
	"a look finds no worker waiting for the lock: it ends, and begins again"
	"a proven look leaves alone the wait below C that a refused wait put back"
	"(GIVEUP) a refusal's CAS finds another word: its spin ended since the look read it"
	"a proof's word names a spin before its token: nothing refused, proven all the same"
	"(GIVEUP) a wait for the lock ends by itself"
	"a proven look lowers its token: an empty serve names an earlier spin above C"
)
for n in $(seq 1 $(( ${#LWIT[@]} - 1 ))); do
	case $n in
	3) cfg="-DOFFLINE=1" ;;
	4|7|8) cfg="-DFLOOR=1" ;;
	12|14) cfg="-DGIVEUP=1" ;;
	*) cfg= ;;
	esac
	add "witness-lockwait-$n" "lockwait witness $n reached: ${LWIT[$n]}" \
		lockwait.pml "$cfg -DCOVER=$n" "$SMALL" "-m10000 -w20" "assertion violated \\($n!=$n\\)"
done
UWIT=(
	""
	"the urgent handler runs an urgent function (in_call 0)"
	"the urgent handler defers: in_call is not 0 (a call's or an urgent function)"
	"an inner urgent bracket puts back a set mark"
	"the handler's urgent function runs an urgent call inline"
	"the handler's urgent function runs a plain call inline"
	"an urgent function on the thread runs an urgent call inline"
	"a work item runs an urgent call inline (not counted below it)"
	"the idle poll's flat slot run runs an urgent call inline"
	"the urgent handler lands in the middle of a work item"
)
for n in $(seq 1 $(( ${#UWIT[@]} - 1 ))); do
	add "witness-urgentmark-$n" "urgentmark witness $n reached: ${UWIT[$n]}" \
		urgentmark.pml "-DCOVER=$n" "$SMALL" "-w18" "assertion violated \\($n!=$n\\)"
done

# ONLY=GLOB (make check-model MODEL_ONLY=...): the verifications whose names match, e.g.
# 'lockwait*' or '*urgentmark*' (a name is the folder of its results under the output)
if [ -n "${ONLY:-}" ]; then
	keep_n=() keep_l=() keep_c=()
	for i in "${!NAMES[@]}"; do
		# shellcheck disable=SC2053
		[[ ${NAMES[$i]} == $ONLY ]] || continue
		keep_n+=("${NAMES[$i]}"); keep_l+=("${LABELS[$i]}"); keep_c+=("${CMDS[$i]}")
	done
	[ ${#keep_n[@]} -gt 0 ] || { echo "model: no verification is named like '$ONLY'" >&2; exit 2; }
	NAMES=("${keep_n[@]}") LABELS=("${keep_l[@]}") CMDS=("${keep_c[@]}")
fi

echo "model: ${#NAMES[@]} verifications with spin ($(spin -V | head -1)), $JOBS at a time, in $OUT"
start=$(date +%s)
running=0
done_=0
# a progress line every 15 s, counted from the results written, so a long run never looks
# stuck, even while one verification takes minutes (a loaded machine)
(while sleep 15; do
	echo "model: $(find "$OUT" -name result -size +0 | wc -l) of ${#NAMES[@]} done, $(( $(date +%s) - start )) s"
done) &
ticker=$!
trap 'kill "$ticker" 2>/dev/null' EXIT
one_done() {
	wait -n
	running=$((running - 1))
	done_=$((done_ + 1))
}
for i in "${!NAMES[@]}"; do
	eval "verify ${NAMES[$i]} ${CMDS[$i]}" &
	running=$((running + 1))
	if [ "$running" -ge "$JOBS" ]; then
		one_done
	fi
done
while [ "$running" -gt 0 ]; do
	one_done
done

for i in "${!NAMES[@]}"; do
	r="$OUT/${NAMES[$i]}/result"
	if [ -s "$r" ] && [ "$(cut -f1 "$r" | head -1)" = PASS ]; then
		ok "${LABELS[$i]}: $(cut -f2- "$r" | head -1)"
	else
		bad "${LABELS[$i]}: $(cut -f2- "$r" 2>/dev/null | head -1) [$OUT/${NAMES[$i]}]"
	fi
done
echo "model: $(( $(date +%s) - start )) s"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
