# xcall-report: a Python package installed into a project-local venv (build/venv).
#
#   make venv          create build/venv and install report/ (editable) with matplotlib, pytest
#                      (uv where it is or can be installed, pip otherwise: scripts/venv.sh)
#   make check-report  run report/tests with pytest        (part of `make check`); the page is
#                      rendered in headless Chromium (Debian's chromium, from `make deps`)
#   make report-html   results/latest.json -> results/report.html (part of `make run`)
#   make machines-doc  docs/machines.md from the shipped reference machines' files
#
# report-html depends on $(BENCH_RUN_TARGET): the bench fragment (bench/bench.mk, included
# before this file) sets it to the target that writes results/latest.json, so the page is
# drawn after the run it reports. Left empty, report-html only reads whatever file is there.

REPORT_VENV   := build/venv
REPORT_PY     := $(REPORT_VENV)/bin/python
REPORT_STAMP  := $(REPORT_VENV)/.xcall-report-stamp
REPORT_ENV    := MPLBACKEND=Agg PYTHONDONTWRITEBYTECODE=1
REPORT_PYTHON ?= python3
BENCH_RUN_TARGET ?=

.PHONY: venv check-report report-html machines-doc

venv: $(REPORT_STAMP)

# Re-install only when the package's metadata changes; the editable install picks up code
# edits by itself. scripts/venv.sh installs with uv (seconds) where it can, pip otherwise, and
# says what it does at least every 15 s; its errors show and fail the target.
$(REPORT_STAMP): report/pyproject.toml scripts/venv.sh
	@rm -f $@
	@echo "  VENV    $(REPORT_VENV) (xcall-report, matplotlib, pytest; from PyPI)"
	@scripts/venv.sh $(REPORT_VENV) $(REPORT_PYTHON) -e 'report[test]'
	@touch $@

# a line per test (-v), and one every 15 s while a test runs on (report/tests/conftest.py):
# its tests take minutes on a loaded machine, and make check prints progress at least every 20 s
check-report: $(REPORT_STAMP)
	$(REPORT_ENV) XCALL_BENCH=$(abspath $(BENCH_BIN)) $(REPORT_PY) -m pytest -p no:cacheprovider -v \
		report/tests

report-html: $(BENCH_RUN_TARGET) $(REPORT_STAMP)
	@test -f results/latest.json || { echo "report-html: results/latest.json not found;" \
		"run the benchmark first" >&2; exit 2; }
	$(REPORT_ENV) $(REPORT_VENV)/bin/xcall-report html results/latest.json \
		-o results/report.html

machines-doc: $(REPORT_STAMP)
	$(REPORT_ENV) $(REPORT_VENV)/bin/xcall-report machines markdown -o docs/machines.md

# report-html needs the venv; chromium only check-report (test_browser.py renders the page,
# skipped with the reason without it)
APT_RUN_PACKAGES += python3 python3-venv
APT_PACKAGES  += python3 python3-venv chromium
CHECK_TARGETS += check-report
RUN_TARGETS   += report-html
