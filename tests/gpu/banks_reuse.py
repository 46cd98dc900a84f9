#!/usr/bin/env python3
"""The bank probe's reuse-cache member (probes/banks_reuse.h) checked and
summarised: imported by check_edit_probes.py (through the daemon), and run
alone on a `gpuprobe probe banks --json` document by tests/gpu/banks.sh.

usage: banks_reuse.py --file BANKS.json OUTDIR

Checks of one document (problems()):
- the reuse_cache member is there; "not_run" only with fewer than 2 banks;
- 8 questions, each with an outcome, conflicts per period (a number, or
  null without contrast) and every design's prediction; the rules match
  the determined outcomes; the fitting designs and the answer are there;
- the flags-cleared controls run below 0.8 of the conflict-free rate: the
  patterns make every FFMA conflict when nothing is cached (the first
  round's lone conflicts were absorbed: ratios within 1e-5 of 1);
- "next" is a hit wherever the probe's own reuse_two_same_bank_a_only cost
  runs conflict-free (>= 0.99);
- every edited cubin was verified.
Alone: writes OUTDIR/reuse-summary.md, prints it, exit status 0 when every
check passed, else 1.
"""
import json
import sys

OUTCOMES = ("hit", "miss", "not determined")
CLEARED_BELOW = 0.8


def problems(d, name="banks"):
    """The problems of one banks document's reuse_cache member."""
    p = []
    rc = d.get("reuse_cache")
    if not isinstance(rc, dict):
        return [f"{name}: no reuse_cache member"]
    if "not_run" in rc:
        if d.get("bank_count", 0) >= 2:
            p.append(f"{name}: reuse_cache not run with {d['bank_count']} banks: {rc['not_run']}")
        return p
    qs = rc.get("questions", [])
    if len(qs) != 8 or any(q.get("outcome") not in OUTCOMES for q in qs):
        return [f"{name}: reuse_cache questions malformed"]
    if len(rc.get("rules", [])) != sum(q["outcome"] != "not determined" for q in qs):
        p.append(f"{name}: reuse_cache rules do not match the outcomes")
    if any("conflicts" not in q or not isinstance(q.get("predicted"), dict) for q in qs) \
            or not isinstance(rc.get("consistent_designs"), list) or not rc.get("answer"):
        p.append(f"{name}: reuse_cache lacks conflicts, predictions or the answer")
    soft = [q["question"] for q in qs if q["ratios"]["cleared"] >= CLEARED_BELOW]
    if soft:
        p.append(f"{name}: flags-cleared controls at or above {CLEARED_BELOW} of the "
                 f"conflict-free rate (no contrast): {soft}")
    own = d.get("costs", {}).get("reuse_two_same_bank_a_only", {}).get("ratio", {})
    if isinstance(own, dict) and own.get("median", 0) >= 0.99 and qs[0]["outcome"] != "hit":
        p.append(f"{name}: reuse_two_same_bank_a_only runs conflict-free ({own['median']:.3f}) "
                 f"but the reuse question 'next' is {qs[0]['outcome']}")
    sc = d.get("sass_check", {})
    if not sc.get("verified"):
        p.append(f"{name}: an edited cubin was not verified")
    return p


def summary(rc):
    """Markdown lines for one reuse_cache member."""
    if not rc:
        return ""
    if "questions" not in rc:
        return f"\n- reuse cache not run: {rc.get('not_run')}\n"
    s = (f"\n#### reuse cache (registers {rc.get('registers')}, {rc.get('runs')} runs)\n\n"
         "| question | test | free | cleared | conflicts per period | predicted (design: n) | outcome |\n"
         "|---|---|---|---|---|---|---|\n")
    for q in rc["questions"]:
        r = q["ratios"]
        c = q.get("conflicts")
        pred = ", ".join(f"{k}: {v}" for k, v in q.get("predicted", {}).items())
        conf = "-" if c is None else f"{c:.2f}"
        s += (f"| {q['question']} | {r['test']:.3f} | {r['free']:.3f} | {r['cleared']:.3f} | "
              f"{conf} | {pred} | {q['outcome']} |\n")
    s += "\n" + "".join(f"- rule: {x}\n" for x in rc["rules"])
    s += (f"- cache design: {rc.get('answer')} (tolerance {rc.get('tolerance_conflicts')} "
          f"conflicts per period)\n")
    s += (f"- loop instructions inside a pattern's period: "
          f"{rc.get('other_instructions_inside_periods')}\n")
    return s


def main():
    if len(sys.argv) != 4 or sys.argv[1] != "--file":
        sys.exit(__doc__)
    with open(sys.argv[2]) as f:
        d = json.load(f)
    found = problems(d)
    text = (f"## banks: the reuse cache\n\n- device: {d['device']['name']}, driver "
            f"{d['driver_version']}\n- probe {d['seconds']['total']:.2f} s, "
            f"{d['runs'].get('reuse_cache', '?')} reuse runs of {d['runs'].get('total', '?')}\n"
            + summary(d.get("reuse_cache"))
            + "\n" + ("".join(f"- PROBLEM: {x}\n" for x in found) or "- all checks passed\n"))
    with open(f"{sys.argv[3]}/reuse-summary.md", "w") as f:
        f.write(text)
    print(text)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
