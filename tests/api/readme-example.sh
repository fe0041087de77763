#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/api/readme-example.sh README OUT - write the README's example, as a reader copies it,
# to OUT: the first ```c block under "## libxcall in brief". Fails, with a line saying so,
# if there is none (check-api and check-install build what this writes).
set -u
awk '/^## / { in_brief = ($0 == "## libxcall in brief") }
     in_brief && /^```c$/ { code = 1; next }
     code && /^```$/ { exit }
     code { print }' "$1" >"$2"
if ! grep -q 'main' "$2"; then
	echo "$1: no \`\`\`c block with main() under \"## libxcall in brief\"" >&2
	exit 1
fi
