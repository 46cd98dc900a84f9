#!/usr/bin/env python3
"""Checks and summarises the asynchronous copies of one memory probe document.

usage: check_async_copy.py MEMORY.json API.json|- OUTDIR

MEMORY.json is the memory job's result (or `gpuprobe probe memory --json`);
API.json what the daemon served for it (check_probes.py's api-results.json,
its "memory" member), or - when there is no daemon. Writes
OUTDIR/async_copy.json (the document's async_copy member) and
OUTDIR/async-copy-summary.md (latency and bandwidth tables, the machine-code
checks), and prints the summary. Exit status 1 with the problems listed when:
the member is missing or an error; a point failed (a bulk or tensor point
may fail on a device below 9.0 or, tensor, without cuTensorMapEncodeTiled,
as the document says); a kernel's machine code was not verified; a latency
median is outside 20..20000 cycles or a copy of 16 KiB is not slower than
one of 16 B; a bandwidth is not positive or over 10 TB/s from device memory;
the probe took over 20 s; the served member differs from the stored one.
"""
import json
import sys


def fig(c):
    return "%.0f [%.0f-%.0f]" % (c["median"], c["min"], c["max"]) if isinstance(c, dict) else "-"


def main():
    doc = json.load(open(sys.argv[1]))
    api = None if sys.argv[2] == "-" else json.load(open(sys.argv[2])).get("memory")
    out = sys.argv[3]
    ac = doc.get("async_copy")
    problems = []
    if not isinstance(ac, dict) or "error" in ac:
        print("FAIL async_copy: %s" % (ac.get("error") if isinstance(ac, dict) else "missing"))
        return 1
    json.dump(ac, open(f"{out}/async_copy.json", "w"), indent=1)
    cc = doc.get("device", {}).get("compute_capability", "9.0")
    bulk_ok = float(cc) >= 9.0
    tensor_ok = bulk_ok and ac.get("tensor_map") == "ok"

    def may_fail(p):
        return (p["method"] in ("bulk", "tensor") and not bulk_ok) or (p["method"] == "tensor" and not tensor_ok)

    lat = {}
    for p in ac["latency"]:
        if "error" in p:
            if not may_fail(p):
                problems.append("latency %s %d B: %s" % (p["method"], p["bytes"], p["error"]))
            continue
        m = p["cycles"]["median"]
        lat[(p["method"], p["bytes"])] = m
        if not 20 <= m <= 20000:
            problems.append("latency %s %d B: median %.0f cycles" % (p["method"], p["bytes"], m))
    if ("bulk", 16) in lat and ("bulk", 16384) in lat and not lat[("bulk", 16384)] > lat[("bulk", 16)]:
        problems.append("a 16 KiB bulk copy (%.0f) is not slower than a 16 B one (%.0f)"
                        % (lat[("bulk", 16384)], lat[("bulk", 16)]))
    for p in ac["bandwidth"]:
        if "error" in p:
            if not may_fail(p):
                problems.append("bandwidth %s %d B %s: %s" % (p["method"], p["bytes"], p["level"], p["error"]))
            continue
        if not p["bytes_per_clk_per_sm"] > 0:
            problems.append("bandwidth %s %d B %s: %s B/clk/SM" % (p["method"], p["bytes"], p["level"],
                                                                  p["bytes_per_clk_per_sm"]))
        if p["level"] == "dram" and (p.get("gb_s") or 0) > 10000:
            problems.append("bandwidth %s %d B from memory: %.0f GB/s" % (p["method"], p["bytes"], p["gb_s"]))
    for name, chk in sorted((ac.get("sass") or {}).items()):
        if not chk.get("verified"):
            problems.append("machine code of %s not verified: %s" % (name, {k: v for k, v in chk.items()
                                                                          if k != "listing"}))
    if (ac.get("wall_s") or 0) > 20:
        problems.append("the probe took %.1f s" % ac["wall_s"])
    if api is not None and api.get("async_copy") is not None:
        got = api["async_copy"]
        for key in ("latency", "bandwidth"):
            if len(got.get(key, [])) != len(ac[key]):
                problems.append("served %s: %d points, stored %d" % (key, len(got.get(key, [])), len(ac[key])))
    elif api is not None:
        problems.append("the daemon serves no async_copy")

    dev, clk = doc.get("device", {}), doc.get("clock_mhz", {})
    lines = ["# Asynchronous copies, %s (%s)" % (dev.get("name"), dev.get("uuid")), "",
             "driver %s, SM clock %s / %s MHz before / after, tensor map: %s, %.2f s" % (
                 doc.get("driver_version"), clk.get("before"), clk.get("after"), ac.get("tensor_map"),
                 ac.get("wall_s") or 0), "",
             "| method | bytes | per copy | cycles (median [min-max]) |", "|---|---:|---:|---:|"]
    for p in ac["latency"]:
        lines.append("| %s | %d | %s | %s |" % (p["method"], p["bytes"], p.get("bytes_per_copy", "-"),
                                               p.get("error") or fig(p.get("cycles"))))
    lines += ["", "| method | bytes | level | B/clk/SM | GB/s |", "|---|---:|---|---:|---:|"]
    for p in ac["bandwidth"]:
        if "error" in p:
            lines.append("| %s | %d | %s | %s | |" % (p["method"], p["bytes"], p["level"], p["error"]))
        else:
            lines.append("| %s | %d | %s | %.2f | %s |" % (p["method"], p["bytes"], p["level"],
                                                          p["bytes_per_clk_per_sm"],
                                                          "%.0f" % p["gb_s"] if p.get("gb_s") else "-"))
    lines += ["", "summary: `%s`" % json.dumps(ac.get("summary")), ""]
    lines += ["- %s" % p for p in problems] or ["all checks passed"]
    text = "\n".join(lines) + "\n"
    open(f"{out}/async-copy-summary.md", "w").write(text)
    print(text)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
