#!/usr/bin/env python3
"""Checks the latency probe's tensor-core entries (mma.sync, fp8 mma.sync,
wgmma.mma_async) on a GPU machine.

Usage: check_tensor.py BASE_URL TOKEN UUID OUT_DIR   (through a daemon)
       check_tensor.py --doc LATENCY.json OUT_DIR     (a `probe latency --json` document)
       check_tensor.py --list                         (the entries it checks, comma-separated)

Through a daemon it submits one "latency" job for the tensor entries, waits
for it and reads the latency endpoint back (the figures are stored and
served, the one-warpgroup throughput included). Then it checks:
- every wgmma entry's machine code was verified (its HGMMA, IGMMA or QGMMA
  seen in every timed region) and it has a latency, a throughput with
  several warpgroups and with one, and TFLOP/s; or, on a device that is not
  compute capability 9.0, an error naming sm_90a;
- no entry's rate is above its type's dense peak per SM and clock (f16/bf16
  4096 operations, tf32 2048, fp8/s8 8192: NVIDIA's H100 SXM figures
  divided by 132 SMs and 1830 MHz); a figure above it means the count or the
  clock is wrong;
- wgmma f16 (A and B from shared memory, N=128) gives more TFLOP/s than
  mma.sync f16 (hmma_f16_f32): what wgmma is for;
- the fp8 mma.sync entries are verified (two HMMAs a step) or say why not.
Writes tensor.json (the document), tensor-api.json (the endpoint's
entries) and tensor-summary.md (a table) under OUT_DIR; prints problems.
"""
import json
import sys

PEAK = {"f16": 4096, "bf16": 4096, "tf32": 2048, "e4m3": 8192, "e5m2": 8192, "s8": 8192}
MMA = ["hmma_f16_f32", "hmma_bf16", "hmma_tf32", "imma_s8", "mma_e4m3", "mma_e5m2"]
WGMMA = ["wgmma_f16_ss_n64", "wgmma_f16_ss_n128", "wgmma_f16_ss_n256", "wgmma_f16_rs_n64",
         "wgmma_f16_rs_n128", "wgmma_f16_rs_n256", "wgmma_f16_f16_ss_n128", "wgmma_bf16_ss_n128",
         "wgmma_tf32_ss_n128", "wgmma_e4m3_ss_n128", "wgmma_e5m2_ss_n128", "wgmma_s8_ss_n128"]
OPCODE = {"s8": "IGMMA", "e4m3": "QGMMA", "e5m2": "QGMMA"}
problems = []


def med(e, key):
    v = e.get(key)
    return v.get("median") if isinstance(v, dict) else None


def type_of(name):
    for t in ("bf16", "tf32", "e4m3", "e5m2", "s8", "f16"):
        if t in name:
            return t
    return None


def run_daemon(base, token, uuid, out):
    from api import client, job_runner
    call = client(base, token)
    submit, wait = job_runner(call, uuid)
    job = wait(submit("latency", {"instructions": ",".join(MMA + WGMMA)}))
    if job["state"] != "succeeded":
        print(f"  latency job {job['id']} {job['state']}: {job['error']}")
        sys.exit(1)
    _, api = call("GET", f"/api/v1/devices/{uuid}/latency")
    json.dump(api, open(f"{out}/tensor-api.json", "w"), indent=1)
    if api.get("job_id") != job["id"]:
        problems.append(f"the latency endpoint serves job {api.get('job_id')}, not {job['id']}")
    stored = {e["name"]: e for e in api.get("entries", [])}
    for e in job["result"]["entries"]:
        s = stored.get(e["name"], {})
        for key in ("throughput_per_clock_per_sm", "tflops",
                    "throughput_one_warpgroup_per_clock_per_sm"):
            if med(e, key) is not None and med(s, key) != med(e, key):
                problems.append(f"{e['name']}: {key} stored as {med(s, key)}, measured {med(e, key)}")
    return job["result"]


def main():
    if sys.argv[1] == "--list":
        print(",".join(MMA + WGMMA))
        return
    if sys.argv[1] == "--doc":
        doc, out = json.load(open(sys.argv[2])), sys.argv[3]
    else:
        out = sys.argv[4]
        doc = run_daemon(*sys.argv[1:5])
    json.dump(doc, open(f"{out}/tensor.json", "w"), indent=1)
    dev = doc["device"]
    cc = dev.get("compute_capability")
    cc90 = cc == "9.0"
    entries = {e["name"]: e for e in doc["entries"]}
    rows = []
    for name in MMA + WGMMA:
        e = entries.get(name)
        if e is None:
            problems.append(f"{name}: not in the document")
            continue
        t = type_of(name)
        verified = bool((e.get("sass") or {}).get("verified"))
        tput_ok = bool((e.get("throughput_sass") or {}).get("verified"))
        if name.startswith("wgmma"):
            if not cc90:
                if "sm_90a" not in (e.get("error") or ""):
                    problems.append(f"{name}: no sm_90a error on a cc {cc} device")
                continue
            want = OPCODE.get(t, "HGMMA")
            if e["sass_opcode"] != want:
                problems.append(f"{name}: expects {e['sass_opcode']}, the type's opcode is {want}")
            if not (verified and tput_ok):
                problems.append(f"{name}: machine code not verified: {e.get('error')} / {e.get('throughput_error')}")
            for key in ("latency_cycles", "throughput_per_clock_per_sm",
                        "throughput_one_warpgroup_per_clock_per_sm", "tflops"):
                if med(e, key) is None:
                    problems.append(f"{name}: no {key} ({e.get('error')} / {e.get('throughput_error')})")
        elif not verified and not e.get("error"):
            problems.append(f"{name}: unverified and no error text")
        per = med(e, "throughput_per_clock_per_sm")
        flops = e.get("flops_per_step") or 0
        if per is not None and flops and t in PEAK and per * flops > 1.05 * PEAK[t]:
            problems.append(f"{name}: {per * flops:.0f} operations a clock an SM, above the {t} peak {PEAK[t]}")
        one = med(e, "throughput_one_warpgroup_per_clock_per_sm")
        lat = med(e, "latency_cycles")
        rows.append((name, e["sass_opcode"], "yes" if verified and tput_ok else "no",
                     f"{lat:.1f}" if lat is not None else "-",
                     f"{per * flops:.0f}" if per is not None and flops else "-",
                     f"{one * flops:.0f}" if one is not None and flops else "-",
                     f"{100 * per * flops / PEAK[t]:.0f}%" if per is not None and flops and t in PEAK else "-",
                     f"{med(e, 'tflops'):.0f}" if med(e, "tflops") is not None else "-",
                     f"{med(e, 'throughput_clock_mhz'):.0f}" if med(e, "throughput_clock_mhz") else "-"))
    mma_tf = med(entries.get("hmma_f16_f32", {}), "tflops")
    wg_tf = med(entries.get("wgmma_f16_ss_n128", {}), "tflops")
    if cc90 and (mma_tf is None or wg_tf is None or wg_tf <= mma_tf):
        problems.append(f"wgmma f16 N=128 {wg_tf} TFLOP/s is not above mma.sync f16's {mma_tf}")
    with open(f"{out}/tensor-summary.md", "w") as f:
        f.write(f"## Tensor cores: mma.sync and wgmma\n\n- device: {dev.get('name')} (cc {cc})\n"
                f"- clock (MHz, before/after): {doc['clock_mhz']['before']:.0f}/{doc['clock_mhz']['after']:.0f}\n"
                f"- wall: {doc.get('wall_s', 0):.2f} s\n\n"
                "| entry | SASS | verified | latency (cycles) | ops/clk/SM | ops/clk/SM, 1 warpgroup | of dense peak | TFLOP/s | MHz |\n"
                "|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write("| " + " | ".join(r) + " |\n")
        if problems:
            f.write("\nProblems:\n" + "".join(f"- {p}\n" for p in problems))
    print(open(f"{out}/tensor-summary.md").read())
    for p in problems:
        print("  " + p)
    sys.exit(1 if problems else 0)


main()
