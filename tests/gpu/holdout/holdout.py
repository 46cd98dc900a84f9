#!/usr/bin/env python3
"""Hold-out check of the kernel-time model, on a GPU machine.

Usage: holdout.py BIN DB UUID PTX TIMER OUT_DIR

For each kernel of tests/gpu/holdout/kernels.cu (PTX built by nvcc -ptx):
TIMER (time_ptx.c) times it through the Driver API as the model-validation
job times its kernels, and `gpuprobe model predict --hits` predicts it as a
user would ask, from the device's latency, memory and validation runs in DB.
Writes holdout.json and holdout.md (measured, predicted, error, geometric
mean of the absolute errors) under OUT_DIR. Exit 1 when a kernel could not
be timed or predicted; an error of any size is a figure, not a failure.
"""
import json
import math
import os
import subprocess
import sys

BIN, DB, UUID, PTX, TIMER, OUT = sys.argv[1:7]
MB = 1 << 20

# entry: grid, block, arguments in order (i32:V, f32:V, buf:BYTES:FILL)
KERNELS = [
    ("vec_add4", "65536", "256", ["buf:%d:randf" % (256 * MB)] * 2 + ["buf:%d:zero" % (256 * MB)]),
    ("saxpy_gs", "1056", "256", ["i32:%d" % (1 << 26), "f32:2", "buf:%d:randf" % (256 * MB),
                                 "buf:%d:randf" % (256 * MB)]),
    ("stencil2d", "256,256", "16,16", ["buf:%d:randf" % (64 * MB), "buf:%d:zero" % (64 * MB),
                                       "i32:4096", "i32:4096"]),
    ("conv1d9", "65536", "256", ["buf:%d:randf" % (64 * MB + 64), "buf:64:randf",
                                 "buf:%d:zero" % (64 * MB)]),
    ("sum_atomic", "32768", "256", ["buf:%d:randf" % (256 * MB), "buf:4:zero"]),
    ("matmul_tile8", "128,128", "8,8", ["buf:%d:randf" % (4 * MB)] * 2 +
     ["buf:%d:zero" % (4 * MB), "i32:1024"]),
    ("spmv_ell", "4096", "256", ["buf:%d:rand" % (64 * MB), "buf:%d:randf" % (64 * MB),
                                 "buf:%d:randf" % (4 * MB), "buf:%d:zero" % (4 * MB),
                                 "i32:%d" % (1 << 20), "i32:16"]),
    ("poly_fp64", "65536", "256", ["buf:%d:randf" % (128 * MB), "buf:%d:zero" % (128 * MB)]),
    ("hash_int", "65536", "256", ["buf:%d:rand" % (64 * MB), "buf:%d:zero" % (64 * MB)]),
    ("stride2_scale", "65536", "256", ["buf:%d:randf" % (128 * MB), "buf:%d:zero" % (128 * MB)]),
    ("rownorm", "16384", "256", ["buf:%d:randf" % (256 * MB), "buf:%d:zero" % (256 * MB)]),
]


def model_arg(a):
    """time_ptx's argument as `trace capture` and `model predict` take it."""
    kind, rest = a.split(":", 1)
    if kind != "buf":
        return rest
    size, fill = rest.split(":")
    return "buf:%s:%s" % (size, fill if fill == "zero" else fill + ":1")


def run(args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(p.stderr.strip()[-600:])
    return json.loads(p.stdout)


def main():
    os.makedirs(OUT, exist_ok=True)
    rows, problems = [], []
    for entry, grid, block, targs in KERNELS:
        try:
            t = run([TIMER, PTX, entry, grid, block] + targs)
            cmd = [BIN, "model", "predict", "--db", DB, "--device", UUID, "--hits", "--compact",
                   "--ptx", PTX, "--entry", entry, "--grid", grid, "--block", block,
                   "--regs", str(t["regs"]), "--static-smem", str(t["static_smem"])]
            for i, a in enumerate(targs):
                cmd += ["--param", "%d=%s" % (i, model_arg(a))]
            ans = run(cmd)
        except (RuntimeError, ValueError) as e:
            problems.append("%s: %s" % (entry, e))
            print("FAIL %s: %s" % (entry, e))
            continue
        pred = ans["prediction"]["kernel_s"]
        err = pred / t["median_s"] - 1
        hits = ans.get("hits", {})
        rows.append({"entry": entry, "grid": grid, "block": block, "timed": t,
                     "predicted_s": pred, "error": err, "bound": ans["prediction"].get("bound"),
                     "l1_hit": hits.get("l1_hit"), "l2_hit": hits.get("l2_hit"),
                     "sass_counts": ans.get("sass_counts") is not None,
                     "sass_error": ans.get("sass_error"), "answer": ans})
        print("%-14s measured %.4f ms (%.4f-%.4f) predicted %.4f ms %+6.1f %% %s l1 %s l2 %s%s" % (
            entry, t["median_s"] * 1e3, t["min_s"] * 1e3, t["max_s"] * 1e3, pred * 1e3, 100 * err,
            rows[-1]["bound"], hits.get("l1_hit"), hits.get("l2_hit"),
            "" if rows[-1]["sass_counts"] else " (no SASS counts: %s)" % ans.get("sass_error")))
    gm = math.exp(sum(math.log(abs(r["error"])) for r in rows) / len(rows)) if rows else None
    json.dump({"kernels": rows, "geomean_abs_error": gm, "problems": problems},
              open(os.path.join(OUT, "holdout.json"), "w"), indent=1)
    with open(os.path.join(OUT, "holdout.md"), "w") as f:
        f.write("| kernel | grid x block | measured ms (min-max) | predicted ms | error | bound |"
                " L1 / L2 hit |\n|---|---|---:|---:|---:|---|---|\n")
        for r in rows:
            t = r["timed"]
            f.write("| %s | %s x %s | %.4f (%.4f-%.4f) | %.4f | %+.1f %% | %s | %s / %s |\n" % (
                r["entry"], r["grid"], r["block"], t["median_s"] * 1e3, t["min_s"] * 1e3,
                t["max_s"] * 1e3, r["predicted_s"] * 1e3, 100 * r["error"], r["bound"],
                "%.3f" % r["l1_hit"] if r["l1_hit"] is not None else "-",
                "%.3f" % r["l2_hit"] if r["l2_hit"] is not None else "-"))
        if gm is not None:
            f.write("\ngeometric-mean absolute error over %d kernels: %.1f %%\n" % (len(rows), 100 * gm))
        for p in problems:
            f.write("\nnot predicted: %s\n" % p)
    if gm is not None:
        print("geometric-mean absolute error over %d kernels: %.1f %%" % (len(rows), 100 * gm))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
