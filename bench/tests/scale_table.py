#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scale_table.py - the storm counters of check-scale's guest A as a Markdown table:
1, 2, 4, 8 and 15 senders, to one target (CPU 15) and to all, waiting and not; per call
made: kicks sent, elided, coalesced and free rides. To one target the counters are the
target's own; to all they are every CPU's, senders included (a waiting sender that slept
is kicked when its call completes, so those rows count completion kicks as well).

usage: scale_table.py RESULTS_DIR      (the files storm-s<N>-<one|all>-<wait|nowait>.json)
Exit 1 when a file is missing or holds no storm record.
"""
import json
import os
import sys

SENDERS = (1, 2, 4, 8, 15)


def row(path, to):
    with open(path) as f:
        doc = json.load(f)
    r = next(x for x in doc["results"] if x["bench"] == "storm")
    c, p = r.get("counters", {}), r.get("params", {})
    calls = p.get("calls", 0)
    pre = "targets_" if to == "one" else ""
    per = [c.get(pre + k, 0) / calls if calls else 0
           for k in ("kicks_sent", "kicks_elided", "kicks_coalesced", "free_rides")]
    return calls, per, c.get("enomem_retries", 0), doc["host"]


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    d = argv[1]
    lines = ["| senders | to | wait | calls | kicks sent | elided | coalesced | free rides |",
             "|--:|:--|:--|--:|--:|--:|--:|--:|"]
    host = None
    for to in ("one", "all"):
        for w in ("wait", "nowait"):
            for n in SENDERS:
                path = os.path.join(d, f"storm-s{n}-{to}-{w}.json")
                try:
                    calls, per, _, host = row(path, to)
                except (OSError, ValueError, KeyError, StopIteration) as e:
                    print(f"scale_table: {path}: {e}", file=sys.stderr)
                    return 1
                lines.append(f"| {n} | {'CPU 15' if to == 'one' else 'all'} | {w} | {calls} | " +
                             " | ".join(f"{v:.3f}" for v in per) + " |")
    print(f"storm counters per call made, {host['cpus_online']} CPUs ({host['cpu_model']}, "
          f"{host['hypervisor'] or 'bare metal'}), 100 calls per sender, poll adaptive:")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
