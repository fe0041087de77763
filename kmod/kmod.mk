# kmod/kmod.mk - the in-kernel benchmark module (GPL-2.0-only), included by the top Makefile.
#
#   make kmod                 build kmod/xcall_ipi.ko against the running kernel's headers
#   make kmod KDIR=/path      ... against another kernel build tree or headers package
#   make kmod-test            build, boot Debian's cloud kernel under QEMU, load the module
#                             there with several parameter sets and check the results
#
# The module is built out of the source tree, in $(BUILD)/kmod/<kernel release>/, so the
# sources stay clean and one checkout can hold builds for several kernels.

KDIR       ?= /lib/modules/$(shell uname -r)/build
KMOD_OUT   ?= $(BUILD)/kmod
KMOD_SRCS  := kmod/xcall_ipi.c kmod/Kbuild
kmod_krel   = $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
KMOD_BUILD  = $(KMOD_OUT)/$(kmod_krel)

.PHONY: kmod kmod-test kmod-clean

kmod: $(KMOD_SRCS)
	@if [ ! -e "$(KDIR)/Makefile" ]; then \
	  echo "kmod: no kernel build tree at KDIR=$(KDIR)"; \
	  echo "kmod: install the headers (Debian: apt-get install linux-headers-$$(uname -r)) or pass KDIR=..."; \
	  exit 1; fi
	@mkdir -p $(KMOD_BUILD)
	cp $(KMOD_SRCS) $(KMOD_BUILD)/
	# MAKEFLAGS is cleared so that this project's CC/CFLAGS never reach Kbuild.
	MAKEFLAGS= $(MAKE) -C $(KDIR) M=$(abspath $(KMOD_BUILD)) modules
	@echo "kmod: built $(KMOD_BUILD)/xcall_ipi.ko for $(kmod_krel)"

kmod-test:
	BUILD=$(BUILD) MAKE=$(MAKE) bash kmod/run-guest.sh

kmod-clean:
	rm -rf $(KMOD_OUT)
