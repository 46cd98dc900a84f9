#!/usr/bin/env python3
"""Runs the latency and memory probes through a real daemon on a GPU machine
and checks the stored results are complete and sane.

Usage: check_probes.py BASE_URL TOKEN UUID OUT_DIR

Submits "latency" three times and "memory" once (jobs on one GPU run one
after the other, FIFO), waits for them, then checks:
- every job succeeded, and the endpoints serve what the jobs measured;
- every catalog entry either carries a verified machine-code check and
  figures, or an error saying why it has none;
- fixed-latency entries (by the machine code) give identical latencies in
  all three runs; variable-latency spreads are reported;
- the clock achieved is recorded and plausible; the memory curve has levels;
- latency + memory together took at most 60 s of wall time.
Writes raw documents and a summary under OUT_DIR; prints problems.
"""
import json
import sys
from api import client, job_runner

base, token, uuid, out = sys.argv[1:5]
problems = []


call = client(base, token)


submit, wait = job_runner(call, uuid)


def seconds(job):
    return job["duration_s"] or 0.0


lat_ids = [submit("latency") for _ in range(3)]
mem_id = submit("memory")
lat_jobs = [wait(i) for i in lat_ids]
mem_job = wait(mem_id)
for j in lat_jobs + [mem_job]:
    if j["state"] != "succeeded":
        problems.append(f"job {j['id']} ({j['kind']}) {j['state']}: {j['error']}")
if problems:
    print("\n".join("  " + p for p in problems))
    sys.exit(1)

_, lat_api = call("GET", f"/api/v1/devices/{uuid}/latency")
_, mem_api = call("GET", f"/api/v1/devices/{uuid}/memory")
json.dump([j["result"] for j in lat_jobs], open(f"{out}/latency-runs.json", "w"), indent=1)
json.dump(mem_job["result"], open(f"{out}/memory.json", "w"), indent=1)
json.dump({"latency": lat_api, "memory": mem_api}, open(f"{out}/api-results.json", "w"), indent=1)

# --- latency ------------------------------------------------------------------
if lat_api.get("job_id") != lat_jobs[-1]["id"]:
    problems.append(f"latency endpoint serves job {lat_api.get('job_id')}, newest is {lat_jobs[-1]['id']}")
runs = [j["result"]["entries"] for j in lat_jobs]
names = [e["name"] for e in runs[0]]
if len(names) < 24:
    problems.append(f"only {len(names)} catalog entries")
if [e["name"] for e in lat_api.get("entries", [])] != names:
    problems.append("the endpoint's entries differ from the job's")
table = []
for i, name in enumerate(names):
    per_run = [r[i] for r in runs]
    e = per_run[-1]
    sass = e.get("sass") or {}
    if not sass.get("verified"):
        if not e.get("error"):
            problems.append(f"{name}: unverified machine code but no error text")
        table.append((name, e["sass_opcode"], "unverified", "", "", ""))
        continue
    med = [r["latency_cycles"]["median"] for r in per_run]
    spread = [(r["latency_cycles"]["min"], r["latency_cycles"]["max"]) for r in per_run]
    if not all(0 < m < 20000 for m in med):
        problems.append(f"{name}: implausible latency {med}")
    fixed = sass.get("fixed_latency")
    if fixed and len(set(med)) != 1:
        problems.append(f"{name}: fixed-latency but runs differ: {med}")
    if fixed and any(lo != hi for lo, hi in spread):
        problems.append(f"{name}: fixed-latency but repeats differ: {spread}")
    tput = e.get("throughput_per_clock_per_sm") or {}
    if "median" not in tput and not e.get("throughput_error"):
        problems.append(f"{name}: no throughput and no reason")
    table.append((name, e["sass_opcode"], "fixed" if fixed else "variable",
                  "/".join(f"{m:g}" for m in med),
                  f"{min(s[0] for s in spread):g}-{max(s[1] for s in spread):g}",
                  f"{tput['median']:.2f}" if "median" in tput else "-"))
for j in lat_jobs:
    c = j["result"]["clock_mhz"]
    if not (500 < c["before"] < 3000 and 500 < c["after"] < 3000):
        problems.append(f"job {j['id']}: implausible clock {c}")

# --- memory ---------------------------------------------------------------------
mem = mem_job["result"]
for load in ("ca", "cg"):
    levels = mem_api.get("levels", {}).get(load)
    if not isinstance(levels, list) or not levels:
        problems.append(f"memory: no levels for {load}: {levels}")
if "median" not in (mem_api.get("shared_cycles") or {}):
    problems.append(f"memory: no shared-memory latency: {mem_api.get('shared_cycles')}")

# --- time -------------------------------------------------------------------------
wall = seconds(lat_jobs[-1]) + seconds(mem_job)
if wall > 60:
    problems.append(f"latency + memory took {wall:.1f} s, over 60 s")

clocks = ", ".join("%.0f/%.0f" % (j["result"]["clock_mhz"]["before"], j["result"]["clock_mhz"]["after"])
                   for j in lat_jobs)
with open(f"{out}/probes-summary.md", "w") as f:
    d = lat_jobs[-1]["result"]
    f.write(f"## Probes through the daemon\n\n- device: {d['device']['name']} {uuid}\n"
            f"- driver: {d['driver_version']}\n"
            f"- clock achieved (MHz, before/after, 3 latency runs): {clocks}\n"
            f"- wall: latency {seconds(lat_jobs[-1]):.2f} s + memory {seconds(mem_job):.2f} s = {wall:.2f} s\n\n"
            "| instr | SASS | class | latency medians (3 runs) | min-max | results/clk/SM |\n|---|---|---|---|---|---|\n")
    for row in table:
        f.write("| " + " | ".join(row) + " |\n")
    f.write("\n| load | levels (cycles up to bytes) |\n|---|---|\n")
    for load in ("ca", "cg"):
        lv = mem_api.get("levels", {}).get(load) or []
        f.write(f"| {load} | " + "; ".join(f"L{l['level']}: {l['cycles']:.1f} to {l['up_to_bytes']}" for l in lv) + " |\n")
    f.write(f"\n- shared memory: {mem_api['shared_cycles']}\n- departure: {mem_api.get('departure')}\n")
    if problems:
        f.write("\nProblems:\n" + "".join(f"- {p}\n" for p in problems))
print(open(f"{out}/probes-summary.md").read())
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
