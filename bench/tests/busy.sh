# SPDX-License-Identifier: MIT
#
# busy.sh - sourced by the bench's shell tests: one busy loop pinned to each CPU this
# process may use, as other work on a user's machine would be. busy_start starts them
# (their pids in busy[]), busy_stop ends them; call it from the script's EXIT trap. Should
# the script be killed by SIGKILL, each loop dies with it (the parent death signal).

busy=()

# The CPUs this process may use, one line, in order.
busy_cpus() { python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))'; }

busy_start()
{
	local loop='import ctypes, os, signal, sys
ctypes.CDLL(None).prctl(1, signal.SIGKILL)      # PR_SET_PDEATHSIG: die with the script
os.sched_setaffinity(0, {int(sys.argv[1])})
if os.getppid() != int(sys.argv[2]):
    sys.exit(0)                                 # the script is gone already
while True:
    pass'
	for c in $(busy_cpus); do
		python3 -c "$loop" "$c" $$ &
		busy+=($!)
	done
}

busy_stop()
{
	for p in ${busy[@]+"${busy[@]}"}; do kill -KILL "$p" 2>/dev/null; done
	for p in ${busy[@]+"${busy[@]}"}; do wait "$p" 2>/dev/null; done
	busy=()
}
