#!/usr/bin/env python3
"""`gpuprobe model predict --hits` against the model-validation job, on a GPU machine.

Usage: model_hits.py BIN DB UUID OUT_DIR

DB holds the device's latency, memory and model-validation runs (run.sh step 6,
model_check.sh). The job's worker samples every kernel and stores its hit
rates in the kernel's description ("cache"); the command line does the same
for one kernel given by hand (server/jobs/kernel_hits.h is the one way both
take). For the kernels below the command is run as a user would run it,
buffers given as trace capture takes them, and checked:
- it answers with hit rates, the sample it took and the SASS's counts;
- its hit rates equal the job's for the same kernel (the same sample);
- its prediction lies within 1 % of the job's (the parameters are the same
  jobs'; only the rounding of the stored description differs).
Writes model-hits.json under OUT_DIR; exit 1 on a failed check.
"""
import json
import os
import sqlite3
import subprocess
import sys

BIN, DB, UUID, OUT = sys.argv[1:5]
PTX = "tests/fixtures/ptx/capture"
MB = 1 << 20
# kernel: buffers in parameter order, as the validation run binds them (probes/validation_data.c)
KERNELS = {
    "matmul_naive": ["buf:%d:f32:1" % (16 * MB)] * 3,
    "gather": ["buf:%d:f32:1" % (512 * MB), "buf:%d:f32:1" % (64 * MB),
               "buf:%d:perm:1" % (64 * MB)],
}


def stored():
    con = sqlite3.connect(DB)
    job = con.execute("SELECT job_id FROM model_validation_runs WHERE device = ? "
                      "ORDER BY job_id DESC LIMIT 1", (UUID,)).fetchone()[0]
    rows = con.execute("SELECT kernel, launch_json, description_json, predicted_s "
                       "FROM model_validation WHERE job_id = ?", (job,)).fetchall()
    return {r[0]: (json.loads(r[1]), json.loads(r[2] or "{}"), r[3]) for r in rows}


def command(name, launch, bufs):
    args = [BIN, "model", "predict", "--db", DB, "--device", UUID, "--hits", "--compact",
            "--ptx", os.path.join(PTX, "validation_%s.ptx" % name), "--entry", launch["entry"],
            "--grid", ",".join(map(str, launch["grid"])),
            "--block", ",".join(map(str, launch["block"])), "--regs", str(launch["regs"]),
            "--static-smem", str(launch.get("static_smem", 0)),
            "--smem", str(launch.get("smem", 0))]
    for i, b in enumerate(bufs):
        args += ["--param", "%d=%s" % (i, b)]
    for k, v in launch.get("params", {}).items():
        args += ["--param", "%s=%d" % (k, v)]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(p.stderr.strip()[-400:])
    return json.loads(p.stdout)


def main():
    os.makedirs(OUT, exist_ok=True)
    runs, problems, report = stored(), [], {}
    for name, bufs in KERNELS.items():
        if name not in runs:
            problems.append("%s: not in the validation run" % name)
            continue
        launch, desc, job_pred = runs[name]
        try:
            ans = command(name, launch, bufs)
        except (RuntimeError, ValueError) as e:
            problems.append("%s: %s" % (name, e))
            continue
        hits, job_hits = ans.get("hits", {}), desc.get("cache", {})
        pred = ans["prediction"]["kernel_s"]
        report[name] = {"cli_hits": hits, "job_hits": job_hits, "cli_s": pred, "job_s": job_pred,
                        "sass_counts": ans.get("sass_counts") is not None}
        print("%-13s l1 %.4f/%.4f l2 %.4f/%.4f predicted %.4f/%.4f ms (command/job)" % (
            name, hits.get("l1_hit", -1), job_hits.get("l1_hit", -1), hits.get("l2_hit", -1),
            job_hits.get("l2_hit", -1), pred * 1e3, (job_pred or 0) * 1e3))
        if not ans.get("sass_counts"):
            problems.append("%s: no SASS counts (%s)" % (name, ans.get("sass_error")))
        for key in ("l1_hit", "l2_hit"):
            if abs(hits.get(key, -1) - job_hits.get(key, -2)) > 1e-9:
                problems.append("%s: %s %s here, %s in the job" % (
                    name, key, hits.get(key), job_hits.get(key)))
        if not job_pred or abs(pred / job_pred - 1) > 0.01:
            problems.append("%s: predicted %s s here, %s s by the job" % (name, pred, job_pred))
    json.dump(report, open(os.path.join(OUT, "model-hits.json"), "w"), indent=1)
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
