# fuzz/scenarios/scenarios.mk - the scenario fuzzer (docs/fuzz.md, "Scenario fuzzer"),
# included from fuzz/fuzz.mk.
#
#   make fuzz-scenarios [FZS_SECONDS=60] [FZS_SEED=N] [FZS_MODES="plain asan tsan"]
#                         fresh seeds in each mode for FZS_SECONDS; a failure prints its
#                         seed, replay command, stacks and stuck reports, then shrinks
#   make check-fuzz-scenarios [FZS_R=2]
#                         the corpus (fuzz/corpus/scenarios/) FZS_R (10) times each, plain build,
#                         and every reverse patch of fuzz/scenarios/bugs/ still applies (CI)
#   fuzz/scenarios/prove.sh BUG [MINUTES] [MODE]
#                         put one audited bug back in a scratch copy and time the search
#                         (MODE plain, asan or tsan)

APT_PACKAGES += gdb

FZS_SECONDS ?= 60
FZS_MODES   ?= plain asan tsan
FZS_R       ?= 10
FZS_SEED    ?=
FZS_BIN     := $(BUILD)/fuzz-scenarios/xcfuzz

$(BUILD)/fuzz-scenarios/xcfuzz: fuzz/scenarios/xcfuzz.c fuzz/scenarios/progress.c fuzz/scenarios/progress.h include/xcall.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(XC_CFLAGS) $(CFLAGS) fuzz/scenarios/xcfuzz.c fuzz/scenarios/progress.c -o $@ $(LIB_A) $(LDLIBS) -lrt

.PHONY: fuzz-scenarios check-fuzz-scenarios fuzz-scenarios-bins
fuzz-scenarios-bins:
	$(MAKE) --no-print-directory build/fuzz-scenarios/xcfuzz
	$(if $(filter asan,$(FZS_MODES)),$(MAKE) --no-print-directory SAN=address$(comma)undefined OPT=-O1 \
		build-address-undefined/fuzz-scenarios/xcfuzz)
	$(if $(filter tsan,$(FZS_MODES)),$(MAKE) --no-print-directory SAN=thread OPT=-O1 \
		build-thread/fuzz-scenarios/xcfuzz)

fuzz-scenarios: fuzz-scenarios-bins
	@rc=0; for m in $(FZS_MODES); do \
		case $$m in plain) b=build;; asan) b=build-address-undefined;; tsan) b=build-thread;; esac; \
		ASAN_OPTIONS=abort_on_error=1:detect_leaks=0 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0 \
		FZS_OUT=$$b/fuzz-scenarios \
		$$b/fuzz-scenarios/xcfuzz fuzz -t $(FZS_SECONDS) $(if $(FZS_SEED),-s $(FZS_SEED)) || rc=1; \
	done; exit $$rc

check-fuzz-scenarios: $(FZS_BIN)
	@for p in fuzz/scenarios/bugs/*.patch; do \
		git apply --check $$p 2>/dev/null || git apply --check -R $$p 2>/dev/null || \
		{ echo "check-fuzz-scenarios: $$p no longer applies to the tree"; exit 1; }; \
	done; echo "  FZS     $$(ls fuzz/scenarios/bugs/*.patch | wc -l) reverse patches apply"
	FZS_OUT=$(BUILD)/fuzz-scenarios $(FZS_BIN) corpus fuzz/corpus/scenarios -r $(FZS_R)
