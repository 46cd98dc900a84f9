#!/usr/bin/env python3
"""Summarises the L1 set search of one memory probe document.

usage: check_l1map.py MEMORY.json OUTDIR

Writes OUTDIR/l1_sets.json (the document's l1_sets member) and
OUTDIR/summary.md (the device, driver and clock; the verdict and the sizes;
the lines that fit per stride; each address bit's role with its two test
fractions; the controls, relations, confirmation and checks), and prints the
summary. Exit status 0 when the search ran (determined or not), 1 when the
document has no l1_sets or it is an error.
"""
import json
import sys


def fig(f):
    if not isinstance(f, dict) or "median" not in f:
        return "-"
    return "%.1f [%.1f-%.1f]" % (f["median"], f["min"], f["max"])


def frac(t):
    return "%.2f" % t["fraction"] if isinstance(t, dict) and "fraction" in t else "-"


def lines(doc, l1):
    dev, clk = doc["device"], doc.get("clock_mhz", {})
    yield "# L1 set search, %s (%s)" % (dev.get("name"), dev.get("uuid"))
    yield ""
    yield "driver %s, SM clock %s / %s MHz before / after, repeats %s, carve-out %s %%, %s chases, %.1f s" % (
        doc.get("driver_version"), clk.get("before"), clk.get("after"), doc.get("repeats"),
        l1.get("carveout_percent"), l1.get("chases"), l1.get("wall_s") or 0)
    yield ""
    yield "**%s**%s" % (l1["status"], ": " + l1["reason"] if l1.get("reason") else "")
    yield ""
    for k in ("line_bytes", "fill_bytes", "sets", "ways", "capacity_bytes", "collision_stride_bytes"):
        yield "- %s: %s" % (k, l1.get(k))
    si = l1.get("set_index")
    if si:
        yield "- set index: %s; masks %s; `--set-index %s`" % (si["text"], [hex(m) for m in si["masks"]], si["option"])
    ref = l1.get("reference", {})
    yield "- reference: L1 hit %s, L2 (cg) %s cycles" % (fig(ref.get("hit_cycles")), fig(ref.get("miss_cycles")))
    yield "- fill: " + ", ".join("%d B %.2f" % (f["stride_bytes"], f["miss_fraction"]) for f in l1.get("fill", []))
    c = l1.get("controls")
    if c:
        yield "- controls: %d lines %d B apart %s, %d lines %s cycles" % (
            c["lines"], c["stride_bytes"], fig(c["hit_cycles"]), c["lines"] + 1, fig(c["miss_cycles"]))
    yield ""
    yield "| stride | lines that fit | probes |"
    yield "|---:|---:|---:|"
    for s in l1.get("strides", []):
        yield "| %d | %s%d | %d |" % (s["stride_bytes"], ">= " if s["censored"] else "", s["lines_fit"], s["probes"])
    yield ""
    yield "| bit | role | same set | same line |"
    yield "|---:|---|---:|---:|"
    for b in l1.get("bits", []):
        yield "| %d | %s | %s | %s |" % (b["bit"], b["role"], frac(b.get("same_set")), frac(b.get("same_line")))
    for r in l1.get("relations", []):
        yield "- bit %d equals the XOR of bits %s" % (r["bit"], r["equals"])
    conf = l1.get("confirmation")
    if conf:
        yield "- confirmation: %s of %s random addresses agree, %s ambiguous" % (
            conf.get("agree"), conf.get("tested"), conf.get("ambiguous"))
    for ch in l1.get("checks", []):
        yield "- check %s: %s (%s)" % (ch["name"], "ok" if ch["ok"] else "FAILED", ch["detail"])


def main():
    doc = json.load(open(sys.argv[1]))
    out = sys.argv[2]
    l1 = doc.get("l1_sets")
    json.dump(l1, open(out + "/l1_sets.json", "w"), indent=1)
    if not isinstance(l1, dict) or "error" in l1:
        print("FAIL the L1 set search: %s" % (l1.get("error") if isinstance(l1, dict) else "no l1_sets member"))
        return 1
    text = "\n".join(lines(doc, l1)) + "\n"
    open(out + "/summary.md", "w").write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
