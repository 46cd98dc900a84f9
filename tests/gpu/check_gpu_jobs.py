#!/usr/bin/env python3
"""Submits "test-gpu" jobs to a daemon on a GPU machine and checks they ran.

Usage: check_gpu_jobs.py BASE_URL TOKEN UUID OUT_JSON
One job names the device by index 0, one by UUID, one by a UUID that is not
attached (must be refused with 422). Both accepted jobs must succeed with the
device's UUID in their result, one after the other (never overlapping, since
a GPU runs one job at a time).
"""
import json
import sys
import time
from api import client

base, token, uuid, out = sys.argv[1:5]


call = client(base, token)


ids, problems = [], []
for dev in (0, uuid):
    status, job = call("POST", "/api/v1/jobs", {"kind": "test-gpu", "device": dev})
    if status != 202:
        problems.append(f"device {dev!r}: submit answered {status} {job}")
    else:
        ids.append(job["id"])
status, prob = call("POST", "/api/v1/jobs",
                    {"kind": "test-gpu", "device": "GPU-00000000-0000-0000-0000-000000000000"})
if status != 422:
    problems.append(f"unknown device answered {status}, expected 422")
jobs = []
for i in ids:
    for _ in range(100):
        _, job = call("GET", f"/api/v1/jobs/{i}")
        if job["state"] in ("succeeded", "failed", "cancelled"):
            break
        time.sleep(0.1)
    jobs.append(job)
    if job["state"] != "succeeded" or job["result"].get("device") != uuid:
        problems.append(f"job {i}: {job['state']} {job.get('error')} {job.get('result')}")
if len(jobs) == 2 and jobs[0]["finished_at"] > jobs[1]["started_at"]:
    problems.append("the two GPU jobs overlapped")
json.dump({"jobs": jobs, "unknown_device": prob}, open(out, "w"), indent=2)
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
