#!/usr/bin/env python3
"""The kernel-time model with the cache model's hit rates, on a GPU machine.

Usage: model_hits.py BIN DB UUID OUT_DIR

DB holds the device's latency, memory and model-validation runs (tests/gpu/run.sh
step 6 fills one). For every validation kernel the run timed:
  1. its trace is captured (gpuprobe trace capture) on a prefix of its grid:
     as many blocks as a budget of records allows, at most one wave (the SM
     count x the kernel's occupancy P), rounded up to whole grid rows;
     buffers as the validation run sizes them;
  2. the trace is sorted for all the device's SMs, P blocks each, placed
     round-robin as the GPU places them (trace sort --arch hopper --sms N
     --blocks-per-sm P), so each SM holds the blocks it would hold, and its
     hit rates are modelled with the device's measured cache sizes (trace
     cache --device UUID --db DB);
  3. L1: the share of load sectors the L1 does not send below. L2: the sample
     covers a fraction f of the blocks; when the kernel's data (the sample's
     compulsory L2 misses / f, at most the buffers it reads) fits the L2 the memory
     probe measured, only compulsory misses miss: 1 - footprint / (L1 misses
     / f); otherwise the sample's own L2 hit rate;
  4. the model predicts the full launch with those hit rates (model predict
     --kernel with "cache"), beside the time the validation run measured.
Writes model-hits.json and model-hits.md (kernel by kernel, the geometric-mean
absolute error) under OUT_DIR; exit 1 when a step failed.
"""
import json
import math
import os
import sqlite3
import subprocess
import sys

BIN, DB, UUID, OUT = sys.argv[1:5]
PTX = "tests/fixtures/ptx/capture"
BUDGET = 1 << 24          # thread records a sample may hold
MB = 1 << 20

# name: (ptx file, pointer buffers in parameter order as bytes, the buffers it
# reads: every validation kernel writes its first pointer and reads the others)
F32_ONE = "f32:1"
KERNELS = {
    "copy": ("validation_copy", [512 * MB, 512 * MB]),
    "strided": ("validation_strided", [512 * MB, 2048 * MB]),
    "ffma": ("validation_ffma", [4 * MB]),
    "mixed": ("validation_mixed", [256 * MB, 256 * MB]),
    "reduce": ("validation_reduce", [MB, 256 * MB]),
    "matmul_naive": ("validation_matmul_naive", [16 * MB] * 3),
    "matmul_tiled": ("validation_matmul_tiled", [16 * MB] * 3),
    "matmul_abt": ("validation_matmul_abt", [16 * MB] * 3),
}


def run(args, **kw):
    p = subprocess.run(args, capture_output=True, text=True, **kw)
    if p.returncode:
        raise RuntimeError("%s: %s" % (" ".join(args[:3]), p.stderr.strip()[-400:]))
    return p.stdout


def stored_kernels():
    con = sqlite3.connect(DB)
    job = con.execute("SELECT job_id FROM model_validation_runs WHERE device = ? "
                      "ORDER BY job_id DESC LIMIT 1", (UUID,)).fetchone()[0]
    rows = con.execute("SELECT kernel, launch_json, description_json, measured_s_median "
                       "FROM model_validation WHERE job_id = ? ORDER BY seq", (job,)).fetchall()
    dev = json.loads(con.execute("SELECT info_json FROM devices WHERE uuid = ?",
                                 (UUID,)).fetchone()[0])
    l2 = con.execute("SELECT up_to_bytes FROM memory_levels WHERE device = ? AND load = 'cg' "
                     "AND level = 1 ORDER BY job_id DESC LIMIT 1", (UUID,)).fetchone()
    return job, rows, dev, (l2[0] if l2 and l2[0] else dev["l2_bytes"])


def prefix_grid(grid, n):
    gx, gy, gz = grid
    if n <= gx:
        return [n, 1, 1]
    if n <= gx * gy:
        return [gx, -(-n // gx), 1]
    return [gx, gy, min(gz, -(-n // (gx * gy)))]


def hits(name, launch, desc, dev, l2_bytes, work):
    ptx_name, bufs = KERNELS[name]
    ptx = os.path.join(PTX, ptx_name + ".ptx")
    grid, block = launch["grid"], launch["block"]
    threads = block[0] * block[1] * block[2]
    occ = json.loads(run([BIN, "model", "occupancy", "--cc", "9.0", "--regs",
                          str(launch["regs"]), "--block", str(threads), "--static-smem",
                          str(launch.get("static_smem", 0)), "--json"]))
    p = occ["blocks_per_sm"]
    pw = desc["per_warp"]
    per_block = max(1.0, (pw["coalesced"] + pw["uncoalesced"]) * (threads / 32) * 32)
    # the sample is placed as the GPU places blocks (round-robin over all its SMs),
    # so an SM holds the blocks it would hold, never neighbours the prefix made
    sms = dev["sm_count"]
    total = grid[0] * grid[1] * grid[2]
    g = prefix_grid(grid, int(min(total, sms * p, max(1, BUDGET // per_block))))
    sampled = g[0] * g[1] * g[2]
    params = [x for i, b in enumerate(bufs) for x in ("--param", "%d=buf:%d:%s" % (i, b, F32_ONE))]
    for k, v in launch.get("params", {}).items():
        params += ["--param", "%s=%d" % (k, v)]
    trace = os.path.join(work, name + ".trace")
    cap = json.loads(run([BIN, "trace", "capture", "--ptx", ptx, "--entry", launch["entry"],
                          "--grid", ",".join(map(str, g)), "--block", ",".join(map(str, block)),
                          "--device", UUID, "-o", trace, "--max-records", str(4 * BUDGET)]
                         + params))
    run([BIN, "trace", "sort", trace, "--arch", "hopper", "--sms", str(sms), "--blocks-per-sm",
         str(p), "--out-format", "bin", "-o", trace + ".sorted"])
    os.unlink(trace)
    c = json.loads(run([BIN, "trace", "cache", trace + ".sorted", "--device", UUID, "--db", DB,
                        "--engine", "exact", "--json"]))
    os.unlink(trace + ".sorted")
    l1 = c["engines"]["exact"]["l1"]
    l2 = c["engines"]["exact"].get("l2") or {}
    below = l1["to_next_level"]["sectors"]
    l1_hit = 1 - below / l1["sectors"] if l1["sectors"] else 0.0
    f = sampled / total
    footprint = min(l2.get("misses", {}).get("compulsory", below) / f, sum(bufs[1:]) / 32.0)
    if footprint * 32 <= l2_bytes and below > 0:
        l2_hit, how = max(0.0, 1 - footprint / (below / f)), "compulsory misses only"
    else:
        l2_hit, how = l2.get("sector_hit_rate", 0.0), "the sample's own"
    return {"l1_hit": round(l1_hit, 4), "l2_hit": round(l2_hit, 4)}, {
        "sms": sms, "blocks_per_sm": p, "grid": g, "sampled_blocks": sampled,
        "fraction": f, "records": cap.get("records"), "l1_sectors": l1["sectors"],
        "l1_to_l2_sectors": below, "footprint_sectors": footprint, "l2_rule": how,
        "l2_sample_hit_rate": l2.get("sector_hit_rate")}


def predict(name, launch, cache):
    kernel = {"grid": launch["grid"], "block": launch["block"], "regs": launch["regs"],
              "smem": launch.get("smem", 0), "static_smem": launch.get("static_smem", 0),
              "entry": launch["entry"], "params": launch.get("params", {}),
              "ptx": open(os.path.join(PTX, KERNELS[name][0] + ".ptx")).read(), "cache": cache}
    path = os.path.join(OUT, "kernel-%s.json" % name)
    json.dump(kernel, open(path, "w"))
    return json.loads(run([BIN, "model", "predict", "--db", DB, "--device", UUID, "--kernel",
                           "@" + path, "--compact"]))


def main():
    os.makedirs(OUT, exist_ok=True)
    work = os.environ.get("TMPDIR", "/tmp")
    job, rows, dev, l2_bytes = stored_kernels()
    table, errors, failed = [], [], 0
    for name, launch_json, desc_json, measured in rows:
        launch, desc = json.loads(launch_json), json.loads(desc_json or "{}")
        if name not in KERNELS:
            print("skip %s: no capture spec" % name)
            continue
        try:
            cache, sample = hits(name, launch, desc, dev, l2_bytes, work)
            ans = predict(name, launch, cache)
        except (RuntimeError, ValueError, KeyError) as e:
            print("FAIL %s: %s" % (name, e))
            failed += 1
            continue
        pr = ans["prediction"]
        err = pr["kernel_s"] / measured - 1
        errors.append(abs(err))
        table.append({"kernel": name, "measured_s": measured, "predicted_s": pr["kernel_s"],
                      "error": err, "cache": cache, "sample": sample, "prediction": pr})
        print("%-14s l1 %.3f l2 %.3f measured %.4f ms predicted %.4f ms %+.1f %% (%s)" % (
            name, cache["l1_hit"], cache["l2_hit"], measured * 1e3, pr["kernel_s"] * 1e3,
            err * 100, pr["bound"]))
    gm = math.exp(sum(math.log(max(e, 1e-3)) for e in errors) / len(errors)) if errors else None
    json.dump({"device": dev, "validation_job": job, "kernels": table, "gmae": gm},
              open(os.path.join(OUT, "model-hits.json"), "w"), indent=1)
    with open(os.path.join(OUT, "model-hits.md"), "w") as md:
        md.write("| kernel | L1 hit | L2 hit | measured ms | predicted ms | error | bound |\n"
                 "|---|---:|---:|---:|---:|---:|---|\n")
        for t in table:
            md.write("| %s | %.3f | %.3f | %.4f | %.4f | %+.1f %% | %s |\n" % (
                t["kernel"], t["cache"]["l1_hit"], t["cache"]["l2_hit"], t["measured_s"] * 1e3,
                t["predicted_s"] * 1e3, t["error"] * 100, t["prediction"]["bound"]))
        if gm is not None:
            md.write("\ngeometric-mean absolute error: %.1f %% over %d kernels (%s, %s)\n" % (
                gm * 100, len(errors), dev.get("name"), UUID))
    print("geometric-mean |error|: %s over %d kernels" % (
        "%.1f %%" % (gm * 100) if gm is not None else "-", len(errors)))
    return 1 if failed or not errors else 0


if __name__ == "__main__":
    sys.exit(main())
