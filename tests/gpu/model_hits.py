#!/usr/bin/env python3
"""The kernel-time model with the cache model's hit rates, on a GPU machine.

Usage: model_hits.py BIN DB UUID OUT_DIR

DB holds the device's latency, memory and model-validation runs (tests/gpu/run.sh
step 6 fills one). For every validation kernel the run timed, `gpuprobe model
predict --hits` captures the trace of a sample of its blocks on the GPU, models
its L1 and L2 hit rates (server/jobs/kernel_hits.h says how the sample is
taken and read) and predicts the full launch with them; the prediction is
set beside the time the validation run measured. Buffers are sized as the
validation run sizes them (every validation kernel writes its first pointer).
Writes model-hits.json and model-hits.md (kernel by kernel, the geometric-mean
absolute error) under OUT_DIR; exit 1 when a kernel could not be predicted.
"""
import json
import math
import os
import sqlite3
import subprocess
import sys

BIN, DB, UUID, OUT = sys.argv[1:5]
PTX = "tests/fixtures/ptx/capture"
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
    return job, rows, dev


def predict(name, launch):
    ptx_name, bufs = KERNELS[name]
    args = [BIN, "model", "predict", "--db", DB, "--device", UUID, "--hits", "--compact",
            "--ptx", os.path.join(PTX, ptx_name + ".ptx"), "--entry", launch["entry"],
            "--grid", ",".join(map(str, launch["grid"])),
            "--block", ",".join(map(str, launch["block"])), "--regs", str(launch["regs"]),
            "--static-smem", str(launch.get("static_smem", 0)),
            "--smem", str(launch.get("smem", 0))]
    for i, b in enumerate(bufs):
        args += ["--param", "%d=buf:%d:%s" % (i, b, F32_ONE)]
    for k, v in launch.get("params", {}).items():
        args += ["--param", "%s=%d" % (k, v)]
    return json.loads(run(args))


def main():
    os.makedirs(OUT, exist_ok=True)
    job, rows, dev = stored_kernels()
    table, errors, failed = [], [], 0
    for name, launch_json, desc_json, measured in rows:
        launch = json.loads(launch_json)
        if name not in KERNELS:
            print("skip %s: no buffer sizes for it here" % name)
            continue
        try:
            ans = predict(name, launch)
            cache = {k: ans["hits"][k] for k in ("l1_hit", "l2_hit")}
            sample = ans["hits"]["sample"]
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
