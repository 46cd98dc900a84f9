#!/usr/bin/env python3
"""The cache model's predictions beside ncu's measurements (tests/gpu/cache_check.sh).

For every CASE with CASE.cache.json (gpuprobe trace cache --json) and
CASE.ncu.csv (ncu --csv of the same launch) in DIR, prints one table row:
the L1 and L2 sector hit rates each engine predicts, the measured ones, and
the differences in percentage points; then the mean absolute differences.
Predicted L1: the global loads' sector lookup hit rate as ncu counts it
(the sector present or its fetch in flight: the model's hits plus the
sectors it found on their way), and their data hit rate (present only):
the "loads" member of the model's L1, which leaves out the stores (they are
written through and never allocate in the model's L1). Measured L1:
l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit over ..._op_ld (the
same figure: loads only), and the L1's hit rate over all its traffic for
reference. Predicted L2: the loads' sector hit rate, compared with ncu's
over reads; and over all its traffic, stores included, beside ncu's. With
the L2 in two partitions (trace cache --l2-partitions), the L2's figures
count every lookup, the SM's own partition's and the home partition's over
the fabric, as ncu's lts counters do; the own-partition share is compared
with ncu's reads from the SMs (srcunit_tex) alone, and CASE.cache1.json
(the same trace on one L2) gives the one-L2 column.
A cache.json written before stores were told apart has no "loads": its
all-requests figures are used, as they were.
    check_cache.py DIR
"""
import csv
import glob
import json
import os
import sys


def ncu_metrics(path):
    """Metric name -> value (float) from ncu's CSV log."""
    values = {}
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    for row in csv.DictReader(lines):
        try:
            values[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            pass
    return values


def pct(x):
    return "%.1f" % x if x is not None else "n/a"


def main():
    d = sys.argv[1]
    rows, diffs = [], {"l1_exact": [], "l1_reuse": [], "l2_exact": [], "l2_reuse": [],
                       "l2one_exact": [], "l2near_exact": []}
    for cache_path in sorted(glob.glob(os.path.join(d, "*.cache.json"))):
        case = os.path.basename(cache_path)[: -len(".cache.json")]
        ncu_path = os.path.join(d, case + ".ncu.csv")
        if not os.path.exists(ncu_path):
            continue
        c = json.load(open(cache_path))
        m = ncu_metrics(ncu_path)
        eng = c["engines"]
        # L1: what ncu's tag lookup counts as a hit for global loads: the
        # sector present, or its fetch in flight (those requests merge into
        # that fetch and send nothing to L2). L2: the loads' sector hit rate,
        # against reads; all traffic beside ncu's all traffic.
        pred = {}
        for e in eng:
            l1 = eng[e].get("l1")
            if l1 and "loads" in l1:
                pred[("l1", e)] = 100.0 * l1["loads"]["sector_lookup_hit_rate"]
                pred[("l1data", e)] = 100.0 * l1["loads"]["sector_hit_rate"]
            elif l1:  # older output: loads and stores together
                pred[("l1", e)] = 100.0 * l1["lookup_hit_rate"]
                pred[("l1data", e)] = 100.0 * l1["sector_hit_rate"]
            l2 = eng[e].get("l2")
            if l2:
                pred[("l2", e)] = 100.0 * (l2["loads"] if "loads" in l2 else l2)["sector_hit_rate"]
                pred[("l2all", e)] = 100.0 * l2["sector_hit_rate"]
                fab = l2.get("partitions", {}).get("fabric", {}).get("loads")
                if fab and "loads" in l2:  # the SMs' own partitions alone
                    ld2 = l2["loads"]
                    pred[("l2near", e)] = 100.0 * (ld2["sector_hits"] - fab["sector_hits"]) / max(
                        ld2["sectors"] - fab["sectors"], 1)
        one_path = os.path.join(d, case + ".cache1.json")
        if os.path.exists(one_path):  # the same trace on one L2, for comparison
            one = json.load(open(one_path))["engines"]
            if "exact" in one and "l2" in one["exact"]:
                pred[("l2one", "exact")] = 100.0 * one["exact"]["l2"]["loads"]["sector_hit_rate"]
        ld = m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
        hit = m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum")
        l1_meas = 100.0 * hit / ld if ld else None
        l2_meas = m.get("lts__t_sector_op_read_hit_rate.pct")
        tex = m.get("lts__t_sectors_srcunit_tex_op_read.sum")
        tex_hit = m.get("lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum")
        near_meas = 100.0 * tex_hit / tex if tex else None
        for key, meas in (("l1", l1_meas), ("l2", l2_meas), ("l2one", l2_meas), ("l2near", near_meas)):
            for e in ("exact", "reuse"):
                if meas is not None and (key, e) in pred:
                    diffs.setdefault("%s_%s" % (key, e), []).append(abs(pred[(key, e)] - meas))
        rows.append(
            "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |"
            % (
                case,
                c["records"],
                pct(pred.get(("l1", "exact"))),
                pct(pred.get(("l1", "reuse"))),
                pct(pred.get(("l1data", "exact"))),
                pct(l1_meas),
                pct(m.get("l1tex__t_sector_hit_rate.pct")),
                pct(pred.get(("l2", "exact"))),
                pct(pred.get(("l2", "reuse"))),
                pct(l2_meas),
                pct(pred.get(("l2all", "exact"))),
                pct(m.get("lts__t_sector_hit_rate.pct")),
                pct(pred.get(("l2one", "exact"))),
                pct(pred.get(("l2near", "exact"))),
                pct(near_meas),
            )
        )
    placements = set()
    for sort_path in glob.glob(os.path.join(d, "*.sort.json")):
        placements.add(json.load(open(sort_path)).get("params", {}).get("placement", "?"))
    print("Blocks placed on SMs by: %s (trace sort's placement)\n" % ", ".join(sorted(placements)))
    print("| kernel | sorted requests | L1 ld lookup hit, exact | L1 ld lookup hit, reuse "
          "| L1 ld data hit, exact | L1 ncu (global ld lookup hit) | L1 ncu (all traffic) "
          "| L2 ld exact | L2 ld reuse | L2 ncu (reads) | L2 all, exact | L2 ncu (all traffic) "
          "| L2 ld exact, one L2 | L2 ld exact, own partition | L2 ncu (SM reads, own partition) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    print()
    for k, v in diffs.items():
        if v:
            print("mean |predicted - measured| %s: %.1f percentage points over %d kernels"
                  % (k.replace("_", " "), sum(v) / len(v), len(v)))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
