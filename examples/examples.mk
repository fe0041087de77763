# examples/examples.mk - what the examples need beyond the top Makefile's rule, which
# builds each examples/*.c against libxcall alone (included by the top Makefile).
#
# check-examples   every example once, at a small size

# the two shard examples are one application (shards.h) on two event loops
$(BUILD)/examples/epoll-shards: examples/shards.h

# uring-shards links liburing, where bench/bench.mk's probe finds it (URING_LIBS;
# make deps installs liburing-dev); without it, it is left out with a line saying so.
$(BUILD)/examples/uring-shards: examples/uring-shards.c examples/shards.h $(LIB_A) $(URING_STAMP)
	@mkdir -p $(dir $@)
	$(if $(URING_LIBS),,@echo "examples: uring-shards left out: no liburing (make deps installs liburing-dev)")
	$(if $(URING_LIBS),$(CC) $(XC_CFLAGS) $(CFLAGS) $< -o $@ $(LIB_A) $(URING_LIBS) $(LDLIBS))

# Each example runs through a three-line script, so that tests/run.sh runs it with its
# arguments, under its timeout, and counts an example that was not built as skipped.
EXAMPLE_ARGS_epoll-shards := -n 2000
EXAMPLE_ARGS_uring-shards := -n 2000
EXAMPLE_ARGS_roundtrip    := 200
EXAMPLE_RUNS := $(patsubst $(BUILD)/examples/%,$(BUILD)/examples/run/%,$(EXAMPLES))

$(BUILD)/examples/run/%: examples/examples.mk
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\nbin=$$(dirname "$$0")/../%s\n[ -x "$$bin" ] || { echo "%s was not built (make examples says why)"; exit 77; }\nexec "$$bin" %s\n' \
		'$*' '$*' '$(EXAMPLE_ARGS_$*)' > $@
	@chmod +x $@

.PHONY: check-examples
check-examples: examples $(EXAMPLE_RUNS)
	XCALL_TEST_TIMEOUT=60 tests/run.sh --label examples $(EXAMPLE_RUNS)

CHECK_TARGETS += check-examples
