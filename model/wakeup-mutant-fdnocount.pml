/*
 * wakeup-mutant-fdnocount.pml - a mutant of wakeup.pml that must FAIL: spin
 * has to find the eventfd closed with a sender's write still to come, or the
 * detach waiting for good (model/check.sh requires that).
 *
 * Mutation: fd_settle (src/proto/wake.c) does not count a claimed kick: an
 * exchange of the attached thread (W2's "do not sleep", W4) that reads
 * WAKING or WOKENUP leaves fd_kicks_seen as it was. xc_fd_quiesce then
 * compares fd_kicks_done with a count that misses claims: it lets the close
 * pass a sender between its S3 and its write, or never ends once that write
 * is counted. Run with -DATTACHED=1 -DDETACH=1.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_FDNOCOUNT
#include "wakeup.pml"
