# model/model.mk - the spin model of the wakeup protocol (included by the top Makefile).
#
#   make check-model   verify model/wakeup.pml with spin (safety, LTL liveness, no cycles)
#                      and require each mutant to fail with the lost wakeup; part of
#                      `make check`. Verifiers are built in build/model/<check>/; a
#                      counterexample is replayed into its trail.txt. About a minute on 2 cores.
#   make check-model MODEL_QUICK=1   skip the 3-sender run
#
# See docs/model.md.

APT_PACKAGES += spin

MODEL_OUT ?= build/model

.PHONY: check-model
check-model:
	QUICK=$(MODEL_QUICK) model/check.sh $(MODEL_OUT)

CHECK_TARGETS += check-model
