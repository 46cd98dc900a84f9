#!/usr/bin/env python3
"""Checks the memory probe's distributed shared memory (probes/dsmem.h) on a GPU.

usage: check_dsmem.py BASE TOKEN UUID OUTDIR   (through a running daemon)
       check_dsmem.py --file MEMORY.json OUTDIR (a `gpuprobe probe memory --json` document)

Through the daemon: submits one "memory" job on UUID, waits for it, reads
the served memory result (GET /api/v1/devices/UUID/memory) and checks the
job's "distributed_shared" member and the served one. Checks:
- the member is there and is not an error;
- cluster sizes 2, 4 and 8 launched, and for each the driver's width, the
  ranks the blocks saw and the size asked are equal;
- 16 either launched (and agrees) or did not, with a reason;
- for every size that launched: remote latency (neighbour, farthest) above
  local, both bandwidths above 0;
- the member took at most 20 s (the whole suite's budget is 120 s a GPU);
- served: the same sizes, launch flags and latency medians as the job's.
Blocks that shared an SM (distinct_sms below the size) are reported, not
failed. Writes OUTDIR/dsmem.json (the member) and OUTDIR/dsmem-summary.md
and prints the summary. Exit status 0 when every check passed, else 1.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

MUST_LAUNCH = (2, 4, 8)
MEMBER_BUDGET_S = 20.0


def med(entry, group, key):
    v = (entry.get(group) or {}).get(key)
    return v.get("median") if isinstance(v, dict) else None


def check_member(d):
    """The problems and the notes of one distributed_shared member."""
    problems, notes = [], []
    if not isinstance(d, dict):
        return [f"no distributed_shared member: {d!r}"], notes
    if "error" in d and "sizes" not in d:
        return [f"distributed_shared failed: {d['error']}"], notes
    by_size = {e.get("asked"): e for e in d.get("sizes", [])}
    for n in MUST_LAUNCH:
        e = by_size.get(n)
        if not e:
            problems.append(f"cluster size {n}: no entry")
        elif not e.get("launched"):
            problems.append(f"cluster size {n} did not launch: {e.get('error')}")
        elif not (e.get("driver_width") == n == e.get("ranks_seen")):
            problems.append(f"cluster size {n}: driver width {e.get('driver_width')}, ranks seen "
                            f"{e.get('ranks_seen')}")
    e16 = by_size.get(16)
    if not e16:
        problems.append("cluster size 16: no entry")
    elif e16.get("launched") and not e16.get("agrees"):
        problems.append(f"cluster size 16 launched but width {e16.get('driver_width')}, ranks {e16.get('ranks_seen')}")
    elif not e16.get("launched") and not e16.get("error"):
        problems.append("cluster size 16 did not launch and says no reason")
    for n, e in sorted(by_size.items()):
        if not e.get("launched"):
            continue
        local = med(e, "latency_cycles", "local")
        for far in ("neighbour", "farthest"):
            v = med(e, "latency_cycles", far)
            if local is None or v is None or not v > local:
                problems.append(f"cluster size {n}: {far} latency {v} not above local {local}")
        for k in ("local", "remote"):
            v = med(e, "bytes_per_clk_sm", k)
            if v is None or not v > 0:
                problems.append(f"cluster size {n}: {k} bandwidth {v}")
        if e.get("distinct_sms") is not None and e["distinct_sms"] < n:
            notes.append(f"cluster size {n}: its blocks ran on {e['distinct_sms']} SMs, not {n}")
        if e.get("error"):
            notes.append(f"cluster size {n}: {e['error']}")
    if (d.get("wall_s") or 0) > MEMBER_BUDGET_S:
        problems.append(f"distributed_shared took {d['wall_s']:.1f} s, over {MEMBER_BUDGET_S} s")
    return problems, notes


def same_as_served(d, served):
    if not isinstance(served, dict) or "sizes" not in served:
        return [f"the served memory result has no distributed_shared sizes: {served!r}"[:300]]
    got = {e["asked"]: e for e in served["sizes"]}
    problems = []
    for e in d.get("sizes", []):
        s = got.get(e["asked"])
        if not s or bool(s.get("launched")) != bool(e.get("launched")):
            problems.append(f"served size {e['asked']}: {s}"[:300])
            continue
        for k in ("local", "neighbour", "farthest"):
            a, b = med(e, "latency_cycles", k), med(s, "latency_cycles", k)
            if (a is None) != (b is None) or (a is not None and abs(a - b) > 1e-6 * max(1.0, abs(a))):
                problems.append(f"served size {e['asked']} {k} latency {b}, the job's {a}")
    return problems


def fmt(v):
    return "-" if v is None else "%.1f" % v


def summary(d, device, problems, notes):
    yield f"## Distributed shared memory, {device}"
    yield ""
    if isinstance(d, dict) and "sizes" in d:
        yield (f"clock {d.get('clock_mhz')} MHz, {d.get('chase_loads')} chase loads a pass, "
               f"{d.get('block_pad_bytes')} B of padding a block, {d.get('wall_s') or 0:.2f} s")
        yield ""
        yield "| cluster | width / ranks | launched | local | neighbour | farthest | B/clk/SM local | remote | GB/s/SM remote | max clusters | SMs |"
        yield "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
        for e in d["sizes"]:
            yield "| %s | %s / %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                e.get("asked"), e.get("driver_width"), e.get("ranks_seen"),
                "yes" if e.get("launched") else "no: %s" % e.get("error"),
                fmt(med(e, "latency_cycles", "local")), fmt(med(e, "latency_cycles", "neighbour")),
                fmt(med(e, "latency_cycles", "farthest")), fmt(med(e, "bytes_per_clk_sm", "local")),
                fmt(med(e, "bytes_per_clk_sm", "remote")), fmt((e.get("gb_s_sm") or {}).get("remote")),
                e.get("max_active_clusters"), e.get("distinct_sms"))
    yield ""
    for n in notes:
        yield f"- note: {n}"
    for p in problems:
        yield f"- FAIL: {p}"
    if not problems:
        yield "- all checks passed"


def finish(d, device, problems, notes, out):
    os.makedirs(out, exist_ok=True)
    json.dump(d, open(os.path.join(out, "dsmem.json"), "w"), indent=1)
    text = "\n".join(summary(d, device, problems, notes)) + "\n"
    open(os.path.join(out, "dsmem-summary.md"), "w").write(text)
    print(text)
    return 1 if problems else 0


def main(argv):
    if len(argv) == 3 and argv[0] == "--file":
        doc = json.load(open(argv[1]))
        d = doc.get("distributed_shared")
        problems, notes = check_member(d)
        return finish(d, (doc.get("device") or {}).get("name"), problems, notes, argv[2])
    if len(argv) != 4:
        sys.exit(__doc__)
    from api import client, job_runner
    base, token, uuid, out = argv
    call = client(base, token)
    submit, wait = job_runner(call, uuid)
    job = wait(submit("memory"))
    if job["state"] != "succeeded":
        return finish(None, uuid, [f"memory job {job['id']} {job['state']}: {job.get('error')}"], [], out)
    d = job["result"].get("distributed_shared")
    problems, notes = check_member(d)
    _, served = call("GET", f"/api/v1/devices/{uuid}/memory")
    if isinstance(d, dict) and "sizes" in d:
        problems += same_as_served(d, served.get("distributed_shared"))
    return finish(d, (job["result"].get("device") or {}).get("name"), problems, notes, out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
