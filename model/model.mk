# model/model.mk - the spin models of libxcall (included by the top Makefile).
#
#   make check-model   verify model/wakeup.pml with spin (safety, urgent promptness, LTL
#                      liveness, no cycles; with and without the per-sender call rings,
#                      FIFO per sender with them, and their senders' head stores left in a
#                      store buffer when they skip the fence; two CPUs with rings of 2 entries
#                      and nested calls, NEST), and the three small models of mechanisms of
#                      their own: waits below the serve floor (floor.pml), the refusal of a
#                      wait for the hotplug lock or of an offline request (lockwait.pml), the
#                      urgent function's mark and the bracket around the application's code
#                      (urgentmark.pml); require each mutant to fail with its bug, each
#                      coverage witness to be reached and each model's quotes of src/ to be
#                      in the code; part of `make check`. Verifiers are built in
#                      build/model/<check>/; a counterexample is replayed into its trail.txt.
#                      About 4.5 to 7 minutes on 2 idle cores (the three small
#                      models: about 36 s of CPU of it).
#   make check-model MODEL_ONLY='*lockwait*'  only the verifications so named (a glob: here
#                                    lockwait's models, mutants and witnesses)
#   make check-model MODEL_QUICK=1   skip the 3-sender run (about 4 minutes)
#   make check-model MODEL_FULL=1    add the long runs (LTL 2 x 2, no cycle with work,
#                                    the attached thread 2 x 2 with offline/online,
#                                    two rings x 3 calls skipping the fence,
#                                    NEST's larger closes)
#
# See docs/model.md.

APT_PACKAGES += spin

MODEL_OUT ?= build/model

.PHONY: check-model
check-model:
	QUICK=$(MODEL_QUICK) FULL=$(MODEL_FULL) ONLY='$(MODEL_ONLY)' model/check.sh $(MODEL_OUT)

CHECK_TARGETS += check-model
