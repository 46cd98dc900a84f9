#!/usr/bin/env python3
"""Checks the patch-and-run harness through a daemon on a GPU machine.

Usage: check_bad_edit.py BASE_URL TOKEN OUT_JSON
Submits, one after the other on device 0:
  1. test-bad-edit with edit "none": the harness builds, patches (no edit),
     loads and runs the kernel; it must succeed and the value the kernel
     stored must come back;
  2. test-bad-edit (default: the STG's opcode set to an invalid value): the
     launch must fault, and the job must fail with the CUDA error's name
     (CUDA_ERROR_...) in its error text;
  3. test-gpu: must succeed, i.e. the next job is unaffected.
/healthz must answer 200 before, between and after the jobs.
"""
import json
import sys
import time
from api import client

base, token, out = sys.argv[1:4]


call = client(base, token, timeout=10)


def health():
    try:
        return call("GET", "/healthz")[0]
    except OSError:
        return 0


def run_job(body):
    status, job = call("POST", "/api/v1/jobs", body)
    if status != 202:
        return {"submit_status": status, "answer": job}
    for _ in range(600):
        _, job = call("GET", f"/api/v1/jobs/{job['id']}")
        if job["state"] in ("succeeded", "failed", "cancelled"):
            break
        time.sleep(0.1)
    return job


problems, record = [], {"healthz": []}
record["healthz"].append(health())
steps = [("harness", {"kind": "test-bad-edit", "device": 0, "params": {"edit": "none"}}),
         ("bad_edit", {"kind": "test-bad-edit", "device": 0}),
         ("next_job", {"kind": "test-gpu", "device": 0})]
for name, body in steps:
    job = run_job(body)
    record[name] = job
    record["healthz"].append(health())
    state = job.get("state")
    if name == "harness":
        res = job.get("result") or {}
        if state != "succeeded" or res.get("stored") != res.get("expected"):
            problems.append(f"unedited patch run: {state} {job.get('error')} {res}")
    elif name == "bad_edit":
        if state != "failed" or "CUDA_ERROR_" not in (job.get("error") or ""):
            problems.append(f"bad edit: expected a failed job with a CUDA error, got {state} "
                            f"{job.get('error')} {job.get('result')}")
    elif state != "succeeded":
        problems.append(f"the job after the bad edit: {state} {job.get('error')}")
if any(h != 200 for h in record["healthz"]):
    problems.append(f"/healthz answered {record['healthz']}")
json.dump(record, open(out, "w"), indent=2)
print("  bad edit: " + str(record.get("bad_edit", {}).get("error")))
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
