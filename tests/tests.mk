# tests/tests.mk - build the test programs and run them (included by the top Makefile).
#
# check-lib           every test, plain build
# check-asan          every test under AddressSanitizer + UndefinedBehaviorSanitizer
# check-tsan          the concurrency tests under ThreadSanitizer
# check-flaky K=N     every test (or TESTS="a b"), plain build, N runs each beside a busy
#                     process on every CPU; per test how many runs failed (not in check)
# Stress sizes scale by XCALL_STRESS_OPS / XCALL_STRESS_THREADS / XCALL_STRESS_CHURN.

TEST_SRCS := $(wildcard tests/*.c)
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
# symbol-static: tests/symbol.c linked -static, where dladdr() names nothing and the
# executable's own symbol table must (src/base/symbol.c); sanitizers do not link statically.
ifndef SAN
TEST_BINS += $(BUILD)/tests/symbol-static
endif
TSAN_TESTS := stress fifo nest-limit urgent-mark hotplug-exit call-async-chain report-stderr own-cpu-wait nowait-straight nowait-stream compose exit-inflight nest-depth hotplug-nested hotplug-held-lock hotplug-outer-spin call-async-done attach-offline-nested ring-sleep ring-slow-barrier ring-slow-marked deep-full-ring bringup ring-probe-busy stuck-in-barrier attach deadlock hotplug call-many call-async work protocol urgent urgent-deferred stuck trace slot thread-exit follow-affinity follow-cpuset topology stats-race signals exit-attached offline-deadlock attach-contract
SAN_STRESS_OPS ?= 100000

$(BUILD)/tests/%: tests/%.c $(wildcard tests/*.h) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(XC_CFLAGS) $(CFLAGS) -rdynamic $< -o $@ $(LIB_A) $(LDLIBS)

$(BUILD)/tests/symbol-static: tests/symbol.c $(wildcard tests/*.h) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(XC_CFLAGS) $(CFLAGS) $< -o $@ $(LIB_A) $(LDLIBS) -static

.PHONY: tests check-lib check-asan check-tsan
tests: $(TEST_BINS)

check-lib: $(TEST_BINS)
	tests/run.sh --label libxcall $(TEST_BINS)

check-asan:
	$(MAKE) --no-print-directory SAN=address,undefined OPT=-O1 tests
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	XCALL_STRESS_OPS=$(SAN_STRESS_OPS) \
	tests/run.sh --label asan+ubsan $(patsubst tests/%.c,build-address-undefined/tests/%,$(TEST_SRCS))

check-tsan:
	$(MAKE) --no-print-directory SAN=thread OPT=-O1 tests
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 XCALL_STRESS_OPS=$(SAN_STRESS_OPS) \
	tests/run.sh --label tsan $(addprefix build-thread/tests/,$(TSAN_TESTS))

CHECK_TARGETS += check-lib check-asan check-tsan

# make check-flaky [K=10] [TESTS="attach symbol"]: a test that fails 1 run in 20 on a
# loaded machine fails here, where one run of check-lib would most often pass. Many
# runs rather than big ones: the stress sizes are the sanitizers' (check-lib runs the full).
K ?= 10
FLAKY_BINS = $(if $(TESTS),$(addprefix $(BUILD)/tests/,$(TESTS)),$(TEST_BINS))
.PHONY: check-flaky
check-flaky: $(TEST_BINS)
	XCALL_STRESS_OPS=$${XCALL_STRESS_OPS:-$(SAN_STRESS_OPS)} \
	tests/run.sh --label flaky --flaky $(K) $(FLAKY_BINS)

# make soak [SOAK_SECONDS=300] [SAN=thread OPT=-O1]: the stress test in rounds for minutes,
# with init/exit cycles, varied options, slow callbacks and a closing report. Not in check.
SOAK_SECONDS ?= 300
.PHONY: soak
soak: $(BUILD)/tests/stress
	XCALL_SOAK_SECONDS=$(SOAK_SECONDS) TSAN_OPTIONS=halt_on_error=1 $(BUILD)/tests/stress

# check-install: install into a staging prefix ($(BUILD)/stage), then build the README's
# example through pkg-config as a user would, and run it without LD_LIBRARY_PATH; uninstall.
.PHONY: check-install
check-install: lib
	MAKE="$(MAKE)" CC="$(CC)" CXX="$(CXX)" tests/api/install.sh $(BUILD)

CHECK_TARGETS += check-install

# check-guest: the tests that take CPUs offline through the OS, in a QEMU guest (never on
# the host); run by .ci/run after kmod-test, which installs the same kernel and QEMU.
.PHONY: check-guest
check-guest:
	BUILD=$(BUILD) MAKE=$(MAKE) bash tests/guest/run.sh

# check-scale: every test program and every xcall-bench subcommand in two guests, 16 vCPUs
# in two NUMA nodes and 80 possible vCPUs with sparse ids online (tests/scale/run.sh); run
# by .ci/run after check-guest. SCALE_GUESTS="a" or "b" runs one.
.PHONY: check-scale
check-scale:
	$(MAKE) --no-print-directory venv
	BUILD=$(BUILD) MAKE=$(MAKE) bash tests/scale/run.sh

# check-api: xcall.h as C and C++ (each compiler and standard), the structs' layout in both,
# and exactly the API exported from libxcall.so.
APT_PACKAGES += clang
.PHONY: check-api
check-api: lib
	tests/api/check.sh $(BUILD)

CHECK_TARGETS += check-api

# check-abi: a program built against this xcall.h loads and runs against a libxcall.so.0 built
# with one counter and one option more (tests/api/abi.sh): the ABI grows without a new soname.
.PHONY: check-abi
check-abi: lib
	MAKE="$(MAKE)" CC="$(CC)" tests/api/abi.sh $(BUILD)

CHECK_TARGETS += check-abi

# check-layers: src/ is a house by layer (base, proto, run, cpu, api): every include and every
# name a file uses points to its own folder or one below (scripts/check-layers.py, docs/layout.md);
# the check must catch a planted upward include and a call to a name defined above.
.PHONY: check-layers
check-layers:
	scripts/check-layers.py
	scripts/check-layers.py --self-test
CHECK_TARGETS += check-layers

# check-serving: every wait that serves calls does it through xc_wait_step/xc_wait_serve and is
# listed with the state it reads again (scripts/check-serving.py); the check must catch a rogue one.
.PHONY: check-serving
check-serving:
	scripts/check-serving.py
	scripts/check-serving.py --self-test
CHECK_TARGETS += check-serving

# check-fresh: every field of struct xc_cpu and struct xc_ring is set by xc_cpu_fresh (the one
# definition of a fresh runtime, for xc_init and a fork child) or kept with its reason beside it
# (scripts/check-fresh.py); the check must catch a member added without a reset.
.PHONY: check-fresh
check-fresh:
	scripts/check-fresh.py
	scripts/check-fresh.py --self-test
CHECK_TARGETS += check-fresh
