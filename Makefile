# xcall top-level build. `make` builds the library, examples and tools;
# `make check` runs every validation; `make run` runs the main job.

CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
XC_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter \
	-fPIC -pthread -Iinclude -Isrc
LDLIBS  := -pthread

comma := ,
# SAN=thread or SAN=address,undefined builds everything instrumented into build-<san>/.
ifdef SAN
BUILD   := build-$(subst $(comma),-,$(SAN))
XC_CFLAGS += -fsanitize=$(SAN) -fno-omit-frame-pointer -DXC_SANITIZED=1
LDLIBS  += -fsanitize=$(SAN)
# TSan does not model atomic_thread_fence, and gcc says so at every fence (-Wtsan). The
# fence-based orders (the rings' R1'/U2 in ring.c, the wakeup protocol's in wake.c) are
# checked by the model (model/wakeup.pml), not by TSan; TSan checks the rest.
ifneq ($(filter thread,$(subst $(comma), ,$(SAN))),)
XC_CFLAGS += -Wno-tsan
endif
endif

# The version is xcall.h's. The soname carries its major number alone, with symbol versions
# (src/libxcall.map): a program built against libxcall 0.3 keeps loading any later 0.x, whose
# structs only grow and whose functions take their size (xcall.h, the ABI note). Up to 0.2
# the soname carried both numbers, since each minor version could change the ABI.
XC_MAJOR   := $(shell sed -n 's/^\#define XCALL_VERSION_MAJOR //p' include/xcall.h)
XC_VERSION := $(XC_MAJOR).$(shell sed -n 's/^\#define XCALL_VERSION_MINOR //p' include/xcall.h)
SONAME   := libxcall.so.$(XC_MAJOR)
LIB_MAP  := src/libxcall.map
export SONAME

LIB_SRCS := $(wildcard src/*/*.c)
LIB_OBJS := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
LIB_A    := $(BUILD)/libxcall.a
LIB_SO   := $(BUILD)/libxcall.so
PC_FILE  := $(BUILD)/xcall.pc

EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))

.PHONY: all lib examples check run install uninstall clean deps deps-run deps-check deps-rust deps-kv
all: lib examples

# Debian packages, per command; each fragment adds its own. APT_RUN_PACKAGES: what `make run`
# uses (its deps-run installs only those); APT_PACKAGES: what `make check` uses besides.
# `make deps` installs all three; each installs only what is missing. APT_RUST_PACKAGES: what
# `make check-rust` uses (redis-benchmark and redis-cli, which load examples/kv_shards in its
# tests).
APT_RUN_PACKAGES := liburing-dev
APT_PACKAGES := pkgconf liburing-dev
APT_RUST_PACKAGES := redis-tools
# APT_KV_PACKAGES: what `make bench-kv` uses (deps-kv, not in `make deps`): Debian's
# redis-server, the one-thread server it compares with, and redis-benchmark
APT_KV_PACKAGES := redis-tools redis-server
# APT_KV_PROFILE_PACKAGES: what `make profile-kv` adds: perf (system calls by tracepoint, on-CPU
# time by kernel path) and valgrind (callgrind's instruction counts)
APT_KV_PROFILE_PACKAGES := linux-perf valgrind

lib: $(LIB_A) $(LIB_SO) $(PC_FILE)

$(BUILD)/obj/%.o: src/%.c $(wildcard src/*/*.h) include/xcall.h
	@mkdir -p $(dir $@)
	$(CC) $(XC_CFLAGS) -fvisibility=hidden $(CFLAGS) -c $< -o $@

$(LIB_A): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(LIB_SO): $(LIB_OBJS) $(LIB_MAP)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script,$(LIB_MAP) $(CFLAGS) $(LIB_OBJS) -o $@ $(LDLIBS)

$(PC_FILE): xcall.pc.in include/xcall.h
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(XC_VERSION)|g' -e 's|@SONAME@|$(SONAME)|g' $< > $@

examples: $(EXAMPLES)
$(BUILD)/examples/%: examples/%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(XC_CFLAGS) $(CFLAGS) $< -o $@ $(LIB_A) $(LDLIBS)

# A program built with `pkg-config --libs xcall` finds the installed $(SONAME) by the rpath in
# xcall.pc (xcall.pc.in says why an rpath and not ldconfig); tests/api/install.sh checks it.
install: lib
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/xcall.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIB_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SO) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libxcall.so
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(XC_VERSION)|g' -e 's|@SONAME@|$(SONAME)|g' xcall.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/xcall.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/xcall.h $(DESTDIR)$(PREFIX)/lib/libxcall.a \
	      $(DESTDIR)$(PREFIX)/lib/libxcall.so $(DESTDIR)$(PREFIX)/lib/$(SONAME) \
	      $(DESTDIR)$(PREFIX)/lib/pkgconfig/xcall.pc

clean:
	rm -rf build build-* results/*.tmp bindings/rust/target

# Each part adds its own targets and hooks itself into check/run.
include tests/tests.mk
-include bench/bench.mk
-include examples/examples.mk
-include report/report.mk
-include model/model.mk
-include kmod/kmod.mk
-include fuzz/fuzz.mk

# check-docs: every relative link and anchor of README.md, docs/ and the parts' READMEs
# resolves, and the README stays a guide of at most 400 lines (scripts/check-links.py); its
# self-test must catch a broken link in a scratch tree
.PHONY: check-docs
check-docs:
	scripts/check-links.py
	scripts/check-links.py --self-test
CHECK_TARGETS += check-docs

deps: deps-check deps-rust
deps-rust:
	@scripts/install-deps.sh $(APT_RUST_PACKAGES)
# Debian starts redis-server's own service on install: said, not left unsaid
deps-kv:
	@scripts/install-deps.sh $(APT_KV_PACKAGES)
	@if command -v systemctl >/dev/null && systemctl is-active --quiet redis-server 2>/dev/null; then \
		echo "deps-kv: Debian's redis-server service runs (port 6379); 'systemctl disable --now redis-server' stops it"; fi
deps-run:
	@scripts/install-deps.sh $(APT_RUN_PACKAGES)
deps-check:
	@scripts/install-deps.sh $(sort $(APT_RUN_PACKAGES) $(APT_PACKAGES))

check: deps-check $(CHECK_TARGETS)
	@echo "make check: all suites passed"

run: deps-run $(RUN_TARGETS)

# check-rust: the Rust crates of bindings/rust with rustup's stable toolchain (Debian's cargo is
# too old for current cc and lock files): cargo builds libxcall from src/ itself, then its tests,
# the examples' checks (kv_shards under redis-benchmark: redis-tools, deps-rust), the doc-tests
# and clippy; then the crate's pure parts (Sharded's borrow flag, the future's waker) under loom
# (its own target dir: --cfg loom rebuilds every crate, about 1.5 minutes once on 2 CPUs, then
# the models run in under a second), and the library's unit tests, which call no C, under Miri
# where `cargo miri` is installed (a nightly component: the default toolchain's, else
# `+nightly`'s), else skipped with the reason. Run by .ci/run after make check.
CARGO ?= $(firstword $(wildcard $(HOME)/.cargo/bin/cargo) $(shell command -v cargo 2>/dev/null) cargo)
RUST_PATH = PATH="$(dir $(CARGO)):$$PATH"
.PHONY: check-rust
check-rust: deps-rust
	@test -x "$(CARGO)" || { echo "check-rust: cargo not found (rustup's stable toolchain, ~/.cargo/bin)" >&2; exit 2; }
	cd bindings/rust && $(RUST_PATH) $(CARGO) test -j2 && \
		$(RUST_PATH) $(CARGO) clippy -j2 --workspace --all-targets -- -D warnings && \
		$(RUST_PATH) RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom $(CARGO) test -j2 -p xcall --lib
	@cd bindings/rust && if $(RUST_PATH) $(CARGO) miri --version >/dev/null 2>&1; then \
		$(RUST_PATH) $(CARGO) miri test -p xcall --lib; \
	elif $(RUST_PATH) $(CARGO) +nightly miri --version >/dev/null 2>&1; then \
		$(RUST_PATH) $(CARGO) +nightly miri test -p xcall --lib; \
	else echo "check-rust: Miri skipped: cargo miri is not installed (rustup +nightly component add miri)"; fi

# rust-package: the crates as a registry takes them: libxcall's C sources copied into
# xcall-sys/csrc/ (its build script reads them where the repository's are absent), then
# `cargo package --workspace`, which builds each packaged crate alone (scripts/rust-package.sh;
# CARGO_PACKAGE_FLAGS=--allow-dirty on a tree with uncommitted changes)
CARGO_PACKAGE_FLAGS ?=
.PHONY: rust-package
rust-package:
	@test -x "$(CARGO)" || { echo "rust-package: cargo not found (rustup's stable toolchain, ~/.cargo/bin)" >&2; exit 2; }
	$(RUST_PATH) scripts/rust-package.sh $(CARGO) $(CARGO_PACKAGE_FLAGS)

# bench-kv: examples/kv_shards under redis-benchmark, beside a mutex per shard, crossbeam
# channels and Debian's redis-server (bindings/rust/README.md), the configurations alternated
# round by round; SET, GET and INCR at -c 50, -P 16 and unpipelined; the client pinned to the
# last CPU. Writes results/kv.json and the tables in results/kv.md. KV_ARGS adds to the
# bench's (e.g. KV_ARGS="--rounds 1 --requests 20000"; kv_shards --help lists them).
# bench-kv-scale: the same at 1, 2, 4, ... shards on a machine of 8-64 CPUs, redis-benchmark
# (one thread per client CPU) on the last quarter of the CPUs, none a shard's
# (results/kv-scale.json, .md). profile-kv: each configuration as a process under perf stat,
# perf record and callgrind, a fixed request stream, per request (results/kv-profile.json, .md).
KV_ARGS ?=
KV_BIN = target/release/examples/kv_shards
.PHONY: bench-kv bench-kv-scale profile-kv kv-build
kv-build:
	@test -x "$(CARGO)" || { echo "kv: cargo not found (rustup's stable toolchain, ~/.cargo/bin)" >&2; exit 2; }
	@mkdir -p results
	cd bindings/rust && $(RUST_PATH) $(CARGO) build -j2 --release --example kv_shards
bench-kv: deps-kv kv-build
	cd bindings/rust && $(KV_BIN) bench --json ../../results/kv.json --markdown ../../results/kv.md $(KV_ARGS)
bench-kv-scale: deps-kv kv-build
	cd bindings/rust && $(KV_BIN) scale --json ../../results/kv-scale.json --markdown ../../results/kv-scale.md $(KV_ARGS)
profile-kv: deps-kv kv-build
	@scripts/install-deps.sh $(APT_KV_PROFILE_PACKAGES)
	cd bindings/rust && $(KV_BIN) profile --json ../../results/kv-profile.json --markdown ../../results/kv-profile.md $(KV_ARGS)
