#!/usr/bin/env python3
"""Fills a daemon's database with every measurement gpuprobe makes of one GPU:
the reference data the project ships (docs/reference-data.md).

Usage: reference.py BASE_URL TOKEN UUID

Submits "suite" (latency, memory, banks, control codes, dual issue, with their
default repeats) and then "model-validation" (which predicts from the suite's
latency and memory results) on the device, waits for both, and exits non-zero
unless both succeeded and every probe of the suite produced its result.
"""
import sys
from api import client, job_runner

base, token, uuid = sys.argv[1:4]
call = client(base, token)
submit, wait = job_runner(call, uuid)

suite = wait(submit("suite"), 900)
validation = wait(submit("model-validation"), 900)
problems = [f"{j['kind']} job {j['id']} {j['state']}: {j['error']}"
            for j in (suite, validation) if j["state"] != "succeeded"]
for probe, doc in (suite.get("result") or {}).items():
    if isinstance(doc, dict) and "error" in doc and len(doc) == 1:
        problems.append(f"suite member {probe} failed: {doc['error']}")
for p in problems:
    print("  " + p)
print(f"suite job {suite['id']} {suite['state']}, model-validation job {validation['id']} "
      f"{validation['state']}")
sys.exit(1 if problems else 0)
