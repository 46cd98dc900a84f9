#!/usr/bin/env python3
"""Runs the machine-code editing probes (banks, control-codes, dual-issue)
and the suite through a real daemon on a GPU machine and checks what they
stored and serve.

Usage: check_edit_probes.py BASE_URL TOKEN UUID OUT_DIR

Expects the daemon's database to hold a latency result already (the probes
check runs first), so the latency endpoint can show each instruction's
smallest safe stall beside its chain-timed latency.
Checks:
- banks, twice: every register up to the highest tested is in exactly one
  class, both runs give the same map, the random confirmation agrees, far
  fewer runs than all pairs, every edited cubin verified, at most 10 s;
  the reuse_cache member present, its 8 questions well formed (conflicts
  per period, every design's prediction), its flags-cleared controls
  conflicting (below 0.8 of the conflict-free rate: the patterns leave no
  spare bank cycle to absorb a conflict), its first ("next") a hit
  wherever the probe's own reuse_two_same_bank_a_only cost runs
  conflict-free, the two runs' outcomes and fitting designs alike,
  /banks?job= serving it;
- control-codes: every swept instruction has a smallest safe stall (or an
  error), the chain fit is one cycle per stall count, every run verified,
  and /latency shows the same smallest safe stall beside the chain figure;
- dual-issue: all six orderings x two operand choices x 1..4 warps per
  scheduler measured, efficiencies plausible, a verdict;
- the endpoints /banks, /control-codes, /issue serve each job (?job=) and,
  unqualified, the newest (the suite's);
- suite: every member produced a result and it was stored.
Writes raw documents and edit-probes-summary.md under OUT_DIR.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import banks_reuse  # noqa: E402
from api import client, job_runner  # noqa: E402

base, token, uuid, out = sys.argv[1:5]
call = client(base, token)
problems = []
PATTERNS = ["1-1-2-2", "1-2-1-2", "1-2-2-1", "2-1-1-2", "2-1-2-1", "2-2-1-1"]


submit, wait = job_runner(call, uuid)


ids = {"banks": [submit("banks"), submit("banks")], "control-codes": [submit("control-codes")],
       "dual-issue": [submit("dual-issue")], "suite": [submit("suite")]}
jobs = {k: [wait(i) for i in v] for k, v in ids.items()}
for kind, js in jobs.items():
    for j in js:
        if j["state"] != "succeeded":
            problems.append(f"job {j['id']} ({kind}) {j['state']}: {j['error']}")
if problems:
    print("\n".join("  " + p for p in problems))
    sys.exit(1)

api = {}
for path in ("banks", "control-codes", "issue", "latency"):
    status, api[path] = call("GET", f"/api/v1/devices/{uuid}/{path}")
    if status != 200:
        problems.append(f"GET /devices/{{uuid}}/{path}: {status} {api[path]}")
json.dump({k: [j["result"] for j in v] for k, v in jobs.items() if k != "suite"},
          open(f"{out}/edit-probes.json", "w"), indent=1)
json.dump(api, open(f"{out}/api-edit-probes.json", "w"), indent=1)

# --- banks --------------------------------------------------------------------
b = [j["result"] for j in jobs["banks"]]
top = b[0]["kernel"]["highest_tested_register"]
for d in b:
    seen = sorted(r for c in d["classes"] for r in c)
    if seen != list(range(top + 1)):
        problems.append(f"banks: classes do not cover R0..R{top} once each")
    conf = d["confirmation"]
    if conf["agree"] != conf["pairs"] or conf["pairs"] < 32:
        problems.append(f"banks: confirmation {conf['agree']}/{conf['pairs']}")
    if d["runs"]["total"] * 10 > d["runs"]["all_pairs_would_be"]:
        problems.append(f"banks: {d['runs']['total']} runs, not far fewer than all pairs")
    if not d["sass_check"]["verified"]:
        problems.append("banks: an edited cubin was not verified")
    if d["seconds"]["total"] > 10:
        problems.append(f"banks: took {d['seconds']['total']:.2f} s, over 10 s")
if b[0]["map"] != b[1]["map"]:
    problems.append("banks: two runs gave different maps")

# --- the reuse cache (probes/banks_reuse.h, checks in banks_reuse.py) -------------
for i, d in enumerate(b):
    problems += banks_reuse.problems(d, f"banks run {i}")
rcs = [d.get("reuse_cache") or {} for d in b]
if all("questions" in r for r in rcs):
    a0 = [q["outcome"] for q in rcs[0]["questions"]]
    a1 = [q["outcome"] for q in rcs[1]["questions"]]
    if a0 != a1:
        problems.append(f"banks: the two runs' reuse-cache outcomes differ: {a0} / {a1}")
    if rcs[0].get("consistent_designs") != rcs[1].get("consistent_designs"):
        problems.append(f"banks: the two runs' fitting cache designs differ: "
                        f"{rcs[0].get('consistent_designs')} / {rcs[1].get('consistent_designs')}")

def served(path, job_id):
    """The endpoint's answer for ?job=job_id (a probe's own run, not the newest)."""
    status, doc = call("GET", f"/api/v1/devices/{uuid}/{path}?job={job_id}")
    if status != 200 or doc.get("job_id") != job_id:
        problems.append(f"/{path}?job={job_id}: {status} {doc.get('job_id', doc)}")
    return doc


stored_banks = served("banks", jobs["banks"][-1]["id"])
if stored_banks.get("map") != b[-1]["map"]:
    problems.append("/banks?job= serves a map other than the job's")
if stored_banks.get("reuse_cache") != b[-1].get("reuse_cache"):
    problems.append("/banks?job= serves a reuse_cache other than the job's")

# --- control codes --------------------------------------------------------------
cc = jobs["control-codes"][0]["result"]
safe = {}
for e in cc["instructions"]:
    if e.get("error"):
        problems.append(f"control-codes: {e['name']}: {e['error']}")
        continue
    safe[e["name"]] = e["min_safe_stall"]
    fit = (e.get("fit") or {}).get("chain")
    # one form of a two-form instruction (hfma2:HFMA2) has its own stalls
    # edited alone: the chain's cycles grow by the share of its instructions
    whole = next((x for x in cc["instructions"] if x["name"] == e.get("form_of")), None)
    slope = 1.0
    if whole and whole.get("edited_instructions") and e.get("edited_instructions"):
        slope = e["edited_instructions"]["chain"] / whole["edited_instructions"]["chain"]
    if e["min_safe_stall"] is None or not fit or abs(fit["slope"] - slope) > 0.05 * slope:
        problems.append(f"control-codes: {e['name']}: safe stall {e['min_safe_stall']}, fit {fit}")
if cc["runs"]["verified"] != cc["runs"]["total"]:
    problems.append(f"control-codes: {cc['runs']} runs verified")
for e in api.get("latency", {}).get("entries", []):
    if e["name"] in safe:
        got = (e.get("min_safe_stall") or {}).get("stall")
        if got != safe[e["name"]]:
            problems.append(f"/latency {e['name']}: min_safe_stall {got}, probe said {safe[e['name']]}")
served("control-codes", jobs["control-codes"][0]["id"])

# --- dual issue -----------------------------------------------------------------
di = jobs["dual-issue"][0]["result"]
got = {(r["pattern"], r["operands"], r["warps_per_scheduler"]) for r in di["results"]}
for p in PATTERNS:
    for o in ("conflict_free", "naive"):
        for w in (1, 2, 3, 4):
            if (p, o, w) not in got:
                problems.append(f"dual-issue: no result for {p} {o} {w} warps")
for r in di["results"]:
    eff = r.get("efficiency_vs_peak")
    if eff is not None and not 0 < eff < 1.6:
        problems.append(f"dual-issue: implausible efficiency {eff} for {r['pattern']}")
if not di.get("verdict"):
    problems.append("dual-issue: no verdict")
served("issue", jobs["dual-issue"][0]["id"])

# --- suite ----------------------------------------------------------------------
suite = jobs["suite"][0]["result"]
for member in ("latency", "memory", "banks", "control-codes", "dual-issue"):
    if not isinstance(suite.get(member), dict) or suite[member].get("error"):
        problems.append(f"suite: {member}: {suite.get(member, {}).get('error', 'missing')}")
for path in ("banks", "control-codes", "issue"):
    _, doc = call("GET", f"/api/v1/devices/{uuid}/{path}")
    if doc.get("job_id") != jobs["suite"][0]["id"]:
        problems.append(f"/{path} does not serve the suite's result after the suite")


def spread(f):
    return f"{f['median']:.3f} [{f['min']:.3f}-{f['max']:.3f}]" if isinstance(f, dict) else str(f)


with open(f"{out}/edit-probes-summary.md", "w") as f:
    d = b[-1]
    f.write(f"## Machine-code editing probes through the daemon\n\n"
            f"- device: {d['device']['name']} {uuid}, driver {d['driver_version']}\n"
            f"- clock (MHz, before/after): banks {d['clock_mhz']['before']:.0f}/{d['clock_mhz']['after']:.0f}, "
            f"control-codes {cc['clock_mhz']['before']:.0f}/{cc['clock_mhz']['after']:.0f}, "
            f"dual-issue {di['clock_mhz']['before']:.0f}/{di['clock_mhz']['after']:.0f}\n\n"
            f"### banks (2 runs, same map: {b[0]['map'] == b[1]['map']})\n\n"
            f"- bank count {d['bank_count']}; classes: "
            + "; ".join(f"R{c[0]}, R{c[1]}, R{c[2]} ... R{c[-1]} ({len(c)} registers)" for c in d["classes"])
            + f"\n- registers tested R0-R{top}; not tested: "
            + ", ".join(f"R{u['register']}" for u in d.get("untested_registers", []))
            + f"\n- runs {d['runs']['total']} (all pairs would be {d['runs']['all_pairs_would_be']}), "
            f"confirmation {d['confirmation']['agree']}/{d['confirmation']['pairs']}, "
            f"{d['seconds']['total']:.2f} s (first run {b[0]['seconds']['total']:.2f} s)\n"
            f"- reference (one source) {spread(d['reference']['ffma_per_sm_clock'])} warp-FFMA/SM clock\n\n"
            "| cost test | sources | reuse | ratio to conflict-free |\n|---|---|---|---|\n")
    for name, t in d["costs"].items():
        f.write(f"| {name} | {t['sources']} | {t['reuse']} | {spread(t['ratio'])} |\n")
    f.write(banks_reuse.summary(d.get("reuse_cache") or {}))
    f.write("\n### control-codes\n\n| instr | compiler stall | chain latency | smallest safe stall | "
            "chain fit (slope, residual) | stream fit from stall |\n|---|---|---|---|---|---|\n")
    for e in cc["instructions"]:
        if e.get("error"):
            f.write(f"| {e['name']} | error: {e['error']} |||||\n")
            continue
        ch, st = e["fit"]["chain"], e["fit"]["stream"]
        f.write(f"| {e['name']} | {e['compiler_stall']} | {spread(e['chain_latency_cycles'])} | "
                f"{e['min_safe_stall']} | {ch['slope']:.3f}, {ch['max_residual']:.3f} | "
                f"{st['from_stall'] if st else '-'} |\n")
    f.write("\n")
    for k, m in cc["meanings"].items():
        f.write(f"- {k}: {m['text']}\n")
    f.write(f"\n### dual-issue\n\n- verdict: {di['verdict']}\n- peak {di['peak_ffma_per_sm_clock']} "
            f"FFMA/SM/clock ({di['peak_source']})\n\n"
            "| pattern | operands | warps/scheduler | FFMA/SM/clock | vs peak | vs nominal |\n|---|---|---|---|---|---|\n")
    for r in di["results"]:
        ev, en = r.get("efficiency_vs_peak"), r.get("efficiency_vs_nominal")
        f.write(f"| {r['pattern']} | {r['operands']} | {r['warps_per_scheduler']} | "
                f"{spread(r['ffma_per_sm_clock'])} | {ev if ev is None else f'{ev:.3f}'} | "
                f"{en if en is None else f'{en:.3f}'} |\n")
    f.write(f"\n- wall: banks {jobs['banks'][-1]['duration_s']:.2f} s, control-codes "
            f"{jobs['control-codes'][0]['duration_s']:.2f} s, dual-issue "
            f"{jobs['dual-issue'][0]['duration_s']:.2f} s, suite {jobs['suite'][0]['duration_s']:.2f} s\n")
    if problems:
        f.write("\nProblems:\n" + "".join(f"- {p}\n" for p in problems))
print(open(f"{out}/edit-probes-summary.md").read())
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
