#!/usr/bin/env python3
"""Checks and summarises the block placement of one memory probe document.

usage: check_placement.py MEMORY.json API.json|- OUTDIR

MEMORY.json is the memory job's result (or `gpuprobe probe memory --json`);
API.json what the daemon served for it (check_probes.py's api-results.json,
its "memory" member), or - when there is no daemon. Writes
OUTDIR/block_placement.json (the document's member) and
OUTDIR/placement-summary.md (the order's first SMs, how often repeats gave
the same order, the gaps between the blocks of one SM, the check launch),
and prints the summary. Exit status 1 with the problems listed when: the
member is missing, an error or not determined; the order does not give
every SM its share; the check launch (1024-thread blocks, which the probe
predicts from the order by dealing it with full SMs skipped, trace/deal.h)
was not one wave or had a block on another SM than predicted; the served
member differs from the stored one.
"""
import collections
import json
import sys


def gaps(order):
    last, out = {}, collections.Counter()
    for b, sm in enumerate(order):
        if sm in last:
            out[b - last[sm]] += 1
        last[sm] = b
    return out


def main():
    doc = json.load(open(sys.argv[1]))
    api = None if sys.argv[2] == "-" else json.load(open(sys.argv[2])).get("memory")
    out = sys.argv[3]
    bp = doc.get("block_placement")
    if not isinstance(bp, dict) or "error" in bp:
        print("FAIL block_placement: %s" % (bp.get("error") if isinstance(bp, dict) else "missing"))
        return 1
    json.dump(bp, open(f"{out}/block_placement.json", "w"), indent=1)
    problems = []
    if bp.get("status") != "determined":
        print("FAIL block_placement: not determined: %s" % bp.get("reason"))
        return 1
    order, sms, per = bp["order"], bp["sms"], bp["blocks_per_sm"]
    held = collections.Counter(order)
    if len(order) != sms * per or any(held[s] != per for s in range(sms)):
        problems.append("the order does not give each of %d SMs %d blocks" % (sms, per))
    c = bp.get("check") or {}
    if "error" in c or not c.get("one_wave") or c.get("predicted") != c.get("blocks"):
        problems.append("check launch: %s" % {k: c.get(k) for k in ("error", "one_wave", "predicted", "blocks")})
    if api is not None:
        served = api.get("block_placement") or {}
        if served.get("order") != order or served.get("status") != bp["status"]:
            problems.append("the served block_placement differs from the stored one")
    g = gaps(order)
    lines = [
        "# Block placement (memory probe, block_placement)\n",
        "- %s: %d launches of %d blocks of %d threads (%d per SM on %d SMs), spin %d ns; "
        "%d of %d gave the first's order; the first's blocks all began within %d ns"
        % (bp["status"], bp["launches"], bp["blocks"], bp["threads_per_block"], per, sms, bp["spin_ns"],
           bp["same_as_first"], bp["launches"], bp["deal_ns"]),
        "- first %d blocks' SMs: %s" % (sms, " ".join(str(s) for s in order[:sms])),
        "- gaps between the ids of one SM's blocks (gap x times, the six most frequent): %s"
        % ", ".join("%d x %d" % kv for kv in g.most_common(6)),
        "- check: %s blocks of %s threads (%s per SM), one wave %s: %s of %s on the SM the order's "
        "dealing predicts" % (c.get("blocks"), c.get("threads_per_block"), c.get("blocks_per_sm"),
                              c.get("one_wave"), c.get("predicted"), c.get("blocks")),
        "- wall %.3f s" % bp.get("wall_s", 0),
    ]
    text = "\n".join(lines) + "\n"
    open(f"{out}/placement-summary.md", "w").write(text)
    print(text)
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
