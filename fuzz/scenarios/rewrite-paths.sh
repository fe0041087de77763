#!/usr/bin/env bash
# rewrite-paths.sh MAP [PATCH...] - move the reverse patches with the files they change.
#
# MAP holds one move a line, "OLD NEW" (paths from the repository root, # starts a comment),
# as a change that moves files (src/ring.c -> src/proto/ring.c) writes it. Every patch
# (default: fuzz/scenarios/bugs/*.patch) gets the paths of its "diff --git a/X b/X",
# "--- a/X" and "+++ b/X" lines rewritten by MAP, in place; nothing else in it changes.
# Then each must still apply to the tree (git apply --check): one that does not is named,
# and the script exits 1 (its text changed too: the move changed more than paths).
#   fuzz/scenarios/rewrite-paths.sh moves.txt
#   fuzz/scenarios/rewrite-paths.sh -n moves.txt     # say what would change, change nothing
set -euo pipefail
cd "$(dirname "$0")/../.."
dry=0
if [ "${1:-}" = -n ]; then
	dry=1
	shift
fi
map=${1:?usage: rewrite-paths.sh [-n] MAP [PATCH...]}
shift
[ -r "$map" ] || { echo "rewrite-paths.sh: cannot read $map" >&2; exit 2; }
if [ $# = 0 ]; then
	set -- fuzz/scenarios/bugs/*.patch
fi
# the map as an awk program's table; a path named twice is a mistake in the map
awk '{ sub(/#.*/, "") } NF == 0 { next }
	NF != 2 { printf "rewrite-paths.sh: %s:%d: want \"OLD NEW\"\n", FILENAME, FNR > "/dev/stderr"; bad = 1 }
	seen[$1]++ { printf "rewrite-paths.sh: %s:%d: %s moved twice\n", FILENAME, FNR, $1 > "/dev/stderr"; bad = 1 }
	END { exit bad }' "$map"
rc=0
for p in "$@"; do
	out=$(mktemp)
	awk -v mapfile="$map" '
		BEGIN {
			while ((getline line < mapfile) > 0) {
				sub(/#.*/, "", line)
				if (split(line, f) == 2)
					to[f[1]] = f[2]
			}
		}
		function moved(path) { return (path in to) ? to[path] : path }
		/^diff --git a\// {
			split($0, w, " ")
			a = substr(w[3], 3); b = substr(w[4], 3)
			print "diff --git a/" moved(a) " b/" moved(b)
			next
		}
		/^--- a\// { print "--- a/" moved(substr($0, 7)); next }
		/^\+\+\+ b\// { print "+++ b/" moved(substr($0, 7)); next }
		{ print }
	' "$p" > "$out"
	if cmp -s "$p" "$out"; then
		rm -f "$out"
	elif [ $dry = 1 ]; then
		echo "rewrite-paths.sh: $p:"
		diff "$p" "$out" | sed -n 's/^> /    /p' | grep -E '^    (diff|---|\+\+\+) ' || true
		rm -f "$out"
		continue
	else
		cat "$out" > "$p"
		rm -f "$out"
		echo "rewrite-paths.sh: $p rewritten"
	fi
	if ! git apply --check "$p" 2>/dev/null && ! git apply --check -R "$p" 2>/dev/null; then
		echo "rewrite-paths.sh: $p does not apply to the tree: write it again against the moved code" >&2
		rc=1
	fi
done
exit $rc
