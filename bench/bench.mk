# bench/bench.mk - xcall-bench, included by the top Makefile.
#   make                 builds $(BUILD)/xcall-bench
#   make bench-run       the quick suite: results/latest.json and the tables
#   make check-bench     every subcommand with tiny sizes, JSON checked for shape; beside a CPU
#                        hog, disturbed runs marked (check_disturbed.py); results of a run
#                        stalled past its plan, skipped and capped records, still pass
#                        check_bench.py --results (check_slow.sh); the suite's command
#                        line and results file, a stalled case given up (check_tools.sh);
#                        libxcall's XCALL_* variables and --trace checked before anything
#                        runs (check_env.sh);
#                        a build redone when the liburing probe's answer changes
#                        (check_uring_stamp.sh); count-lines' test on known patterns
#                        (check-count-lines: skipped, with the reason, without valgrind)
#   make count-roundtrip instructions per waiting call, per function (callgrind)
#   make count-lines     cache-line transfers and instructions per call: the waiting call, nowait
#                        bursts, the bare handoff and the SPSC ring (lackey; ARGS=-v: the general
#                        path's functions and files)

BENCH_SRCS := $(wildcard bench/*.c)
BENCH_OBJS := $(patsubst bench/%.c,$(BUILD)/bench/%.o,$(BENCH_SRCS))
BENCH_BIN  := $(BUILD)/xcall-bench
BENCH_RUN_TARGET := bench-run

.PHONY: bench bench-run check-bench
all: $(BENCH_BIN)
bench: $(BENCH_BIN)

# liburing for wake's io_uring rows, where its headers and library link (make deps installs
# liburing-dev); without it those rows say why they are absent. The probe's answer ("-luring"
# or nothing) is kept in $(URING_STAMP), which is probed at every make but rewritten only when
# the answer changes: a build made before liburing was installed is rebuilt once it appears
# (make, make deps, make check), and nothing is rebuilt while it stays as it was.
URING_PROBE = printf '\043include <liburing.h>\nint main(void){struct io_uring r; return io_uring_queue_init(1, &r, 0);}\n' | \
	$(CC) -x c - -o /dev/null -luring 2>/dev/null && echo -luring
URING_STAMP := $(BUILD)/bench/uring-libs
# read when a recipe runs, after the stamp is brought up to date
URING_LIBS = $(strip $(file <$(URING_STAMP)))
URING_CFLAGS = $(if $(URING_LIBS),-DXB_HAVE_LIBURING)

.PHONY: uring-probe
uring-probe:
$(URING_STAMP): uring-probe
	@mkdir -p $(dir $@)
	@new="$$($(URING_PROBE))"; \
	if [ ! -f $@ ] || [ "$$new" != "$$(cat $@)" ]; then \
		echo "  PROBE   liburing: $${new:-absent} ($@)"; echo "$$new" > $@; fi

$(BUILD)/bench/%.o: bench/%.c $(wildcard bench/*.h) include/xcall.h $(URING_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(XC_CFLAGS) -Ibench $(URING_CFLAGS) $(CFLAGS) -c $< -o $@

# -rdynamic: stuck reports and --trace name the benchmark's own functions
$(BENCH_BIN): $(BENCH_OBJS) $(LIB_A) bench/bench.mk $(URING_STAMP)
	$(CC) $(CFLAGS) -rdynamic $(BENCH_OBJS) -o $@ $(LIB_A) $(URING_LIBS) $(LDLIBS) -lm

bench-run: $(BENCH_BIN)
	@mkdir -p results
	$(BENCH_BIN) --json results/latest.json

check-bench: $(BENCH_BIN)
	bash bench/tests/check_uring_stamp.sh
	python3 bench/tests/check_bench.py $(BENCH_BIN)
	python3 bench/tests/check_disturbed.py $(BENCH_BIN)
	bash bench/tests/check_tools.sh $(BENCH_BIN)
	bash bench/tests/check_env.sh $(BENCH_BIN)
	bash bench/tests/check_slow.sh $(BENCH_BIN)
	@$(MAKE) --no-print-directory check-count-lines

# the last of them alone: a minute at most
.PHONY: check-bench-slow
check-bench-slow: $(BENCH_BIN)
	bash bench/tests/check_slow.sh $(BENCH_BIN)

# make count-roundtrip: instructions per waiting call, per function, under callgrind
# (needs valgrind; not part of check: it counts, it does not pass or fail)
.PHONY: count-roundtrip
count-roundtrip: $(LIB_A)
	python3 bench/tools/count_roundtrip.py $(BUILD)

# make count-lines: cache-line transfers (64- and 128-byte lines) and instructions per call,
# counted in valgrind lackey's trace of a counting build of its own: libxcall and the baselines
# compiled with count_hook.h forced in (every spin pass yields), the driver linked statically
# so that every address in the trace is the binary's own, and a link map that names each
# address's .c file. Normal builds are not touched. Not part of check: it counts; its own test
# on known patterns is (check-bench).
COUNT_DIR    := $(BUILD)/count
COUNT_HOOK   := bench/tools/count_hook.h
COUNT_FLAGS  := -include $(COUNT_HOOK)
COUNT_OBJS   := $(patsubst src/%.c,$(COUNT_DIR)/obj/%.o,$(LIB_SRCS))
COUNT_DRIVER := $(COUNT_DIR)/roundtrip_driver

$(COUNT_DIR)/obj/%.o: src/%.c $(wildcard src/*/*.h) include/xcall.h $(COUNT_HOOK)
	@mkdir -p $(dir $@)
	$(CC) $(XC_CFLAGS) -fvisibility=hidden $(COUNT_FLAGS) $(CFLAGS) -c $< -o $@

$(COUNT_DIR)/libxcall.a: $(COUNT_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# baselines.c for pp_ring_serve alone: --gc-sections drops the rest and what it needs
$(COUNT_DRIVER): bench/tools/roundtrip_driver.c bench/baselines.c $(wildcard bench/*.h) $(COUNT_HOOK) \
		$(COUNT_DIR)/libxcall.a
	$(CC) $(XC_CFLAGS) -Ibench $(COUNT_FLAGS) -ffunction-sections $(CFLAGS) -static \
		bench/tools/roundtrip_driver.c bench/baselines.c $(COUNT_DIR)/libxcall.a \
		-Wl,--gc-sections -Wl,-Map,$@.map -o $@ $(LDLIBS)

.PHONY: count-lines
count-lines: $(COUNT_DRIVER)
	@command -v valgrind >/dev/null || { echo "count-lines: valgrind is not installed (make deps installs it)" >&2; exit 2; }
	python3 bench/tools/count_lines.py $(ARGS) $(BUILD)

# its test on known patterns, in check-bench; skipped, with the reason, without valgrind
.PHONY: check-count-lines
check-count-lines:
	@if command -v valgrind >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory $(COUNT_DRIVER) && python3 bench/tools/count_lines.py --test $(BUILD); \
	else echo "check-count-lines: skipped: valgrind is not installed (make deps installs it)"; fi

APT_PACKAGES += valgrind
CHECK_TARGETS += check-bench
RUN_TARGETS += bench-run
