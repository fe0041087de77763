# fuzz/fuzz.mk - libFuzzer harnesses for every input parser, included by the top Makefile.
#
#   make fuzz                 build the harnesses with clang and run each for FUZZ_SECONDS
#                             (default 60) on its corpus, fuzz/corpus/<name>/ (not in check)
#   make fuzz-merge           fold what `make fuzz` found into fuzz/corpus/ (-merge=1: minimal)
#   make check-fuzz-regress   replay fuzz/regressions/<name>/* and the corpus through each
#                             harness built with $(CC) + ASan/UBSan and a small driver instead
#                             of libFuzzer (part of `make check`; needs no clang)
#
# Harnesses (docs/fuzz.md): cpulist (xc_cpulist_parse/format), options (xc_config_resolve:
# XCALL_* and xc_opts), roundtrip (xc_opts_get -> xc_opts_set, every option), bench_args
# (xcall-bench's main and every subcommand's parser).
# The report tool's reader is fuzzed by hypothesis in report/tests/test_fuzz_reader.py.

FUZZ_HARNESSES := cpulist options roundtrip bench_args
FUZZ_SECONDS   ?= 60
FUZZ_CC        ?= clang
FUZZ_FLAGS     ?=
FUZZ_READER_EXAMPLES ?= 5000
FUZZ_REPORT_PY ?= $(if $(REPORT_PY),$(REPORT_PY),build/venv/bin/python)
FUZZ_DIR       := $(BUILD)/fuzz
FUZZ_REG_DIR   := $(BUILD)/fuzz-regress
FUZZ_SAN       := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		  -fno-omit-frame-pointer
FUZZ_CFLAGS    := $(XC_CFLAGS) -Ibench -O1 -g $(FUZZ_SAN)
FUZZ_ENV       := ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 \
		  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# bench_args: exit and the first call past argument parsing come back to the harness.
FUZZ_BENCH_WRAP := -Wl,--wrap=exit,--wrap=clock_setup,--wrap=hist_init,--wrap=rec_last \
	-Wl,--wrap=progress,--wrap=xh_up,--wrap=xh_up_opts,--wrap=m08_start \
	-Wl,--wrap=journal_restore,--wrap=irq_read,--wrap=syscall,--wrap=pthread_create \
	-Wl,--wrap=malloc,--wrap=calloc,--wrap=aligned_alloc,--wrap=free
FUZZ_BENCH_SRCS := $(wildcard bench/*.c)
FUZZ_HDRS := $(wildcard src/*/*.h bench/*.h) include/xcall.h

.PHONY: fuzz fuzz-build fuzz-merge check-fuzz-regress

# ---- libFuzzer builds (clang) ----
FUZZ_LIB_OBJS   := $(patsubst src/%.c,$(FUZZ_DIR)/obj/src/%.o,$(LIB_SRCS))
FUZZ_BENCH_OBJS := $(patsubst bench/%.c,$(FUZZ_DIR)/obj/bench/%.o,$(FUZZ_BENCH_SRCS))
FUZZ_BINS       := $(addprefix $(FUZZ_DIR)/,$(FUZZ_HARNESSES))

$(FUZZ_DIR)/obj/%.o: %.c $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(FUZZ_DEFS) -c $< -o $@
$(FUZZ_DIR)/obj/bench/main.o: FUZZ_DEFS := -Dmain=xcall_bench_main
$(FUZZ_DIR)/libxcall.a: $(FUZZ_LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
$(FUZZ_DIR)/cpulist $(FUZZ_DIR)/options $(FUZZ_DIR)/roundtrip: $(FUZZ_DIR)/%: $(FUZZ_DIR)/obj/fuzz/%.o $(FUZZ_DIR)/libxcall.a
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer $^ -o $@ -pthread
$(FUZZ_DIR)/bench_args: $(FUZZ_DIR)/obj/fuzz/bench_args.o $(FUZZ_BENCH_OBJS) $(FUZZ_DIR)/libxcall.a
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer $(FUZZ_BENCH_WRAP) $^ -o $@ -pthread -lm

fuzz-build: $(FUZZ_BINS)

# New inputs go to $(FUZZ_DIR)/new/<name> (the first directory); the corpus in the repo is
# only read. Crashes land in $(FUZZ_DIR)/crashes/<name>/: copy each to fuzz/regressions/<name>/.
fuzz: $(FUZZ_BINS)
	@rc=0; for h in $(FUZZ_HARNESSES); do \
		mkdir -p $(FUZZ_DIR)/new/$$h $(FUZZ_DIR)/crashes/$$h; \
		echo "  FUZZ    $$h for $(FUZZ_SECONDS) s (corpus fuzz/corpus/$$h)"; \
		$(FUZZ_ENV) $(FUZZ_DIR)/$$h -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
			-max_len=1024 -rss_limit_mb=2048 -print_final_stats=1 \
			-dict=fuzz/dict/$$h.dict -artifact_prefix=$(FUZZ_DIR)/crashes/$$h/ \
			$(FUZZ_FLAGS) $(FUZZ_DIR)/new/$$h fuzz/corpus/$$h \
			> $(FUZZ_DIR)/$$h.log 2>&1 \
		|| { rc=1; echo "  FUZZ    $$h FOUND A CRASH: $(FUZZ_DIR)/$$h.log," \
			"inputs in $(FUZZ_DIR)/crashes/$$h/"; tail -n 40 $(FUZZ_DIR)/$$h.log; }; \
		grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' \
			$(FUZZ_DIR)/$$h.log | sed 's/^/          /'; \
	done; \
	if $(FUZZ_REPORT_PY) -c 'import hypothesis' 2>/dev/null; then \
		echo "  FUZZ    reader: hypothesis, $(FUZZ_READER_EXAMPLES) random examples per property"; \
		XCALL_FUZZ_EXAMPLES=$(FUZZ_READER_EXAMPLES) XCALL_FUZZ_RANDOM=1 MPLBACKEND=Agg \
		PYTHONDONTWRITEBYTECODE=1 $(FUZZ_REPORT_PY) -m pytest -p no:cacheprovider -q \
			report/tests/test_fuzz_reader.py > $(FUZZ_DIR)/reader.log 2>&1 || rc=1; \
		grep -v '^xcall-report: ' $(FUZZ_DIR)/reader.log | tail -n 15; \
	else \
		echo "  FUZZ    reader skipped: no hypothesis in $(FUZZ_REPORT_PY)" \
			"(make venv, then $(dir $(FUZZ_REPORT_PY))pip install hypothesis)"; \
	fi; exit $$rc

fuzz-merge: $(FUZZ_BINS)
	@for h in $(FUZZ_HARNESSES); do \
		rm -rf fuzz/corpus/$$h.merged; mkdir -p fuzz/corpus/$$h.merged $(FUZZ_DIR)/new/$$h; \
		$(FUZZ_ENV) $(FUZZ_DIR)/$$h -merge=1 -max_len=1024 fuzz/corpus/$$h.merged \
			fuzz/corpus/$$h $(FUZZ_DIR)/new/$$h > $(FUZZ_DIR)/$$h.merge.log 2>&1 \
		|| { cat $(FUZZ_DIR)/$$h.merge.log; exit 1; }; \
		rm -rf fuzz/corpus/$$h; mv fuzz/corpus/$$h.merged fuzz/corpus/$$h; \
		echo "  MERGE   $$h: $$(ls fuzz/corpus/$$h | wc -l) inputs"; \
	done

# ---- standalone replay builds ($(CC), no libFuzzer) ----
FUZZ_REG_LIB_OBJS   := $(patsubst src/%.c,$(FUZZ_REG_DIR)/obj/src/%.o,$(LIB_SRCS))
FUZZ_REG_BENCH_OBJS := $(patsubst bench/%.c,$(FUZZ_REG_DIR)/obj/bench/%.o,$(FUZZ_BENCH_SRCS))
FUZZ_REG_BINS       := $(addprefix $(FUZZ_REG_DIR)/,$(FUZZ_HARNESSES))

$(FUZZ_REG_DIR)/obj/%.o: %.c $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(FUZZ_CFLAGS) $(FUZZ_DEFS) -c $< -o $@
$(FUZZ_REG_DIR)/obj/bench/main.o: FUZZ_DEFS := -Dmain=xcall_bench_main
$(FUZZ_REG_DIR)/libxcall.a: $(FUZZ_REG_LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
$(FUZZ_REG_DIR)/cpulist $(FUZZ_REG_DIR)/options $(FUZZ_REG_DIR)/roundtrip: $(FUZZ_REG_DIR)/%: $(FUZZ_REG_DIR)/obj/fuzz/%.o \
		$(FUZZ_REG_DIR)/obj/fuzz/standalone.o $(FUZZ_REG_DIR)/libxcall.a
	$(CC) $(FUZZ_SAN) $^ -o $@ -pthread
$(FUZZ_REG_DIR)/bench_args: $(FUZZ_REG_DIR)/obj/fuzz/bench_args.o $(FUZZ_REG_DIR)/obj/fuzz/standalone.o \
		$(FUZZ_REG_BENCH_OBJS) $(FUZZ_REG_DIR)/libxcall.a
	$(CC) $(FUZZ_SAN) $(FUZZ_BENCH_WRAP) $^ -o $@ -pthread -lm

check-fuzz-regress: $(FUZZ_REG_BINS)
	@$(FUZZ_ENV) sh fuzz/replay.sh $(FUZZ_REG_DIR) $(FUZZ_HARNESSES)

CHECK_TARGETS += check-fuzz-regress

# the scenario fuzzer: random programs over the whole API (fuzz/scenarios/scenarios.mk)
include fuzz/scenarios/scenarios.mk
