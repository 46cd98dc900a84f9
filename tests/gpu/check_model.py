#!/usr/bin/env python3
"""The kernel-time model end to end through a real daemon on a GPU machine.

Usage: check_model.py BASE_URL TOKEN UUID OUT_DIR

Submits "latency" and "memory" (the model's parameters) and then
"model-validation" on the device (one GPU: they run in that order), waits,
and checks:
- every job succeeded;
- GET /devices/{uuid}/model-validation serves every kernel with a measured
  time and a prediction, the probe jobs the parameters came from, and the
  geometric-mean absolute error; the kernels are the 16 of
  probes/validation.h, each of whose answers the run checked on the GPU
  before timing it (a wrong answer is a measured_s error, reported here);
- the run measured the L2's read bandwidth, above the device memory's, and
  the predictions list it as the parameter l2_bandwidth with the run's job;
- POST /model/predict answers for a kernel described by hand and for one
  given as PTX (the validation's copy kernel) on this device, and
  POST /model/occupancy answers by --device;
Writes the raw documents and model-summary.md (kernel by kernel: measured,
predicted, error, the model's case and what bounds it) under OUT_DIR.
"""
import json
import math
import sys
from api import client, job_runner

base, token, uuid, out = sys.argv[1:5]
problems = []
# probes/validation.h's table, in its order
KERNELS = ["copy", "strided", "ffma", "mixed", "reduce", "matmul_naive", "matmul_tiled",
           "matmul_abt", "transpose_naive", "transpose_tiled", "stencil7", "gather", "histogram",
           "matmul_tiled32", "saxpy_sfu", "sgemv"]


call = client(base, token)


submit, wait = job_runner(call, uuid)


# before any measurement, a prediction must be refused naming the probe to run
status, body = call("POST", "/api/v1/model/predict",
                    {"device": uuid, "kernel": {"grid": 1024, "block": 256, "regs": 32,
                                                "per_warp": {"fp32": 100, "coalesced": 2}}})
if status != 409 or "probe" not in body.get("detail", ""):
    problems.append(f"predict before measurements: {status} {body}")

ids = {"latency": submit("latency"), "memory": submit("memory"),
       "model-validation": submit("model-validation", {"repeats": 5})}
jobs = {k: wait(v) for k, v in ids.items()}
for k, j in jobs.items():
    if j["state"] != "succeeded":
        problems.append(f"job {j['id']} ({k}) {j['state']}: {j['error']}")
if problems:
    print("\n".join("  " + p for p in problems))
    sys.exit(1)

json.dump(jobs["model-validation"]["result"], open(f"{out}/model-validation-job.json", "w"),
          indent=1)
json.dump(jobs["latency"]["result"], open(f"{out}/model-latency.json", "w"), indent=1)
json.dump(jobs["memory"]["result"], open(f"{out}/model-memory.json", "w"), indent=1)
status, val = call("GET", f"/api/v1/devices/{uuid}/model-validation")
json.dump(val, open(f"{out}/model-validation.json", "w"), indent=1)
if status != 200:
    problems.append(f"GET model-validation: {status} {val}")
    val = {"kernels": []}

# --- validation --------------------------------------------------------------------------
if val.get("job_id") != ids["model-validation"]:
    problems.append(f"validation endpoint serves job {val.get('job_id')}")
pf = val.get("parameters_from", {})
if pf.get("latency_job") != ids["latency"] or pf.get("memory_job") != ids["memory"]:
    problems.append(f"parameters came from {pf}, not the jobs just run")
names = [k["name"] for k in val["kernels"]]
if names != KERNELS:
    problems.append(f"kernels {names}, expected {KERNELS}")
rows, logs = [], []
for k in val["kernels"]:
    m, p = k.get("measured_s") or {}, k.get("predicted_s")
    if "median" not in m:
        problems.append(f"{k['name']}: not measured: {m}")
        continue
    if p is None:
        problems.append(f"{k['name']}: not predicted: {k.get('prediction_failure')}")
        continue
    pr = k["prediction"]["prediction"]
    occ = k["prediction"]["occupancy"]
    rel = k["rel_error"]
    logs.append(math.log(max(abs(rel), 1e-6)))
    desc = k.get("description") or {}
    hits = desc.get("cache") or {}
    if "l1_hit" not in hits:
        problems.append(f"{k['name']}: no hit rates from the worker: {hits.get('error')}")
    if "sass_counts" not in desc:
        problems.append(f"{k['name']}: no SASS counts: {desc.get('sass_error')}")
    rows.append((k["name"], m["median"] * 1e3, m["min"] * 1e3, m["max"] * 1e3, p * 1e3, rel * 100,
                 pr["case"], pr["bound"], pr["mwp"], pr["cwp"], pr["n_active_warps"],
                 occ["blocks_per_sm"], occ["limiter"], pr["sync_cycles"] / pr["cycles"],
                 hits.get("l1_hit"), hits.get("l2_hit"),
                 "sass" if "sass_counts" in desc else "ptx"))
gmae = math.exp(sum(logs) / len(logs)) if logs else None
if gmae is None or val.get("gmae") is None or abs(val["gmae"] - gmae) > 1e-9 * max(1, gmae):
    problems.append(f"stored gmae {val.get('gmae')} is not the kernels' {gmae}")

# --- the calculations on this device ---------------------------------------------------------
status, pred = call("POST", "/api/v1/model/predict",
                    {"device": uuid, "kernel": {"grid": [1024], "block": 256, "regs": 32,
                                                "per_warp": {"fp32": 100, "int": 20,
                                                             "coalesced": 2}}})
if status != 200 or pred.get("prediction", {}).get("kernel_s", 0) <= 0:
    problems.append(f"predict by hand: {status} {pred}")
copy = next((k for k in jobs["model-validation"]["result"]["kernels"] if k["name"] == "copy"), None)
if copy:
    status, pred = call("POST", "/api/v1/model/predict",
                        {"device": uuid, "kernel": {"grid": copy["grid"], "block": copy["block"],
                                                    "regs": copy.get("regs", 16), "ptx": copy["ptx"],
                                                    "params": copy["params"]}})
    json.dump(pred, open(f"{out}/model-predict-copy.json", "w"), indent=1)
    if status != 200:
        problems.append(f"predict from PTX: {status} {pred}")
status, occ = call("POST", "/api/v1/model/occupancy", {"device": 0, "regs": 40, "block": 96})
if status != 200 or occ.get("blocks_per_sm") != 16:
    problems.append(f"occupancy by device index: {status} {occ}")

bw = val.get("bandwidth", {})
dram_bw = (bw.get("dram_bytes_per_s") or {}).get("median", 0)
l2_bw = (bw.get("l2_bytes_per_s") or {}).get("median", 0)
if not l2_bw > dram_bw > 0:
    problems.append(f"L2 bandwidth {bw.get('l2_bytes_per_s')} is not above the device "
                    f"memory's {bw.get('dram_bytes_per_s')}")
for k in val["kernels"]:
    l2p = ((k.get("prediction") or {}).get("parameters") or {}).get("l2_bandwidth", {})
    if k.get("prediction") and (l2p.get("value") != l2_bw or
                                l2p.get("job_id") != ids["model-validation"]):
        problems.append(f"{k['name']}: prediction's l2_bandwidth {l2p} is not this run's")
        break
with open(f"{out}/model-summary.md", "w") as f:
    d = jobs["model-validation"]["result"]
    f.write("## Kernel-time model on the GPU\n\n"
            f"- device: {d['device']['name']} {uuid}, driver {d['driver_version']}\n"
            f"- parameters from latency job {pf.get('latency_job')}, memory job "
            f"{pf.get('memory_job')}; bandwidth measured by the validation job: "
            f"device memory {dram_bw / 1e9:.0f} GB/s, L2 {l2_bw / 1e9:.0f} GB/s "
            f"({(d['bandwidth'].get('l2_bytes_per_s') or {}).get('method', 'not measured')}), "
            f"host link {(bw.get('link_bytes_per_s') or {}).get('median', 0) / 1e9:.1f} GB/s\n"
            f"- timing: {d['timing']}; repeats {d['repeats']}\n"
            f"- clock (MHz) before/after: {d['clock_mhz']['before']:.0f}/{d['clock_mhz']['after']:.0f}\n"
            f"- geometric-mean absolute error over {len(logs)} kernels: "
            f"{gmae * 100 if gmae is not None else float('nan'):.1f}%\n\n"
            "| kernel | measured ms (min-max) | predicted ms | error | L1 hit | L2 hit | counts | case | bound | MWP | CWP | N | P | limiter | sync share |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    def rate(x):
        return f"{x:.3f}" if isinstance(x, (int, float)) else "-"
    for r in rows:
        f.write(f"| {r[0]} | {r[1]:.4f} ({r[2]:.4f}-{r[3]:.4f}) | {r[4]:.4f} | {r[5]:+.1f}% | "
                f"{rate(r[14])} | {rate(r[15])} | {r[16]} | {r[6]} | "
                f"{r[7]} | {r[8]:.1f} | {r[9]:.2f} | {r[10]:.0f} | {r[11]} | {r[12]} | {r[13]:.2f} |\n")
    if problems:
        f.write("\nProblems:\n" + "".join(f"- {p}\n" for p in problems))
print(open(f"{out}/model-summary.md").read())
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
