#!/bin/sh
# SPDX-License-Identifier: MIT
#
# scripts/venv.sh VENV PYTHON SPEC... - make the Python environment VENV (PYTHON -m venv) and
# install SPEC into it (pip's syntax: -e 'report[test]'). With uv, which resolves and installs
# in seconds where pip takes most of a minute: the one on PATH, else one installed into VENV
# by pip (a single wheel); pip itself where uv cannot be had (no network for it, no wheel for
# the machine). Both read from PyPI, so the time depends on the network. pip's own settings
# (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS, PIP_CERT) are handed to uv.
#
# A line at least every 15 s says what is being done and for how long, as every step of
# `make run` and `make check` does.
set -eu
venv=$1 py=$2
shift 2

# run LABEL CMD...: CMD with a line every 15 s while it runs; its status
run() {
	label=$1
	shift
	start=$(date +%s)
	(
		while sleep 15; do
			echo "  VENV    $label: $(($(date +%s) - start)) s"
		done
	) &
	ticker=$!
	status=0
	"$@" || status=$?
	kill "$ticker" 2>/dev/null || :
	wait "$ticker" 2>/dev/null || :
	return "$status"
}

# uv: on PATH, else kept in VENV/uv: installed by PYTHON's own pip where it has one (the venv
# is then made without pip, in a second rather than ten), else by the venv's pip
uv=$(command -v uv 2>/dev/null || :)
[ -z "$uv" ] && [ -x "$venv/uv/bin/uv" ] && uv=$venv/uv/bin/uv
pip_uv() { # PYTHON: install uv into VENV/uv with that python's pip
	PIP_ROOT_USER_ACTION=ignore run "installing uv" "$1" -m pip install --quiet \
		--disable-pip-version-check --no-input --target "$venv/uv" uv && uv=$venv/uv/bin/uv
}
if ! "$venv/bin/python" -c '' 2>/dev/null; then
	if [ -n "$uv" ] || "$py" -m pip --version >/dev/null 2>&1; then
		echo "  VENV    $venv: $py -m venv --without-pip"
		run "making $venv" "$py" -m venv --clear --without-pip "$venv"
	else
		echo "  VENV    $venv: $py -m venv"
		run "making $venv" "$py" -m venv --clear "$venv"
	fi
fi
if [ -z "$uv" ]; then
	echo "  VENV    uv into $venv/uv (pip, one wheel)"
	if "$py" -m pip --version >/dev/null 2>&1; then
		pip_uv "$py" || :
	elif "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
		pip_uv "$venv/bin/python" || :
	fi
	[ -n "$uv" ] || echo "  VENV    uv could not be installed: pip installs instead"
fi

if [ -n "$uv" ]; then
	[ -n "${PIP_INDEX_URL:-}" ] && export UV_INDEX_URL="$PIP_INDEX_URL"
	[ -n "${PIP_EXTRA_INDEX_URL:-}" ] && export UV_EXTRA_INDEX_URL="$PIP_EXTRA_INDEX_URL"
	[ -n "${PIP_FIND_LINKS:-}" ] && export UV_FIND_LINKS="$PIP_FIND_LINKS"
	[ -n "${PIP_CERT:-}" ] && [ -z "${SSL_CERT_FILE:-}" ] && export SSL_CERT_FILE="$PIP_CERT"
	echo "  VENV    $* ($uv)"
	if run "uv pip install" "$uv" pip install --python "$venv/bin/python" "$@"; then
		exit 0
	fi
	echo "  VENV    uv failed: pip installs instead"
fi
# pip: into a venv made with it
if ! "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
	run "adding pip to $venv" "$venv/bin/python" -m ensurepip --upgrade --default-pip
fi
echo "  VENV    $* (pip)"
run "pip install" "$venv/bin/python" -m pip install --progress-bar off --disable-pip-version-check \
	--no-input "$@"
